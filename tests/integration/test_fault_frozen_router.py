"""Fault kind ``frozen_router`` on real routers (issue 14 must-show: effect, verification,
removal). Lab: tests/data/tri-ospf-ibgp.yaml (r1 route reflector, r2, r3) with its NETCONF
server. r2 is frozen: its daemons are stopped (state T in /proc), vtysh on it does not answer,
its NETCONF part sends no hello while r3's keeps answering (the one server process freezes
r2's part alone); after removal all of it answers again. A lab downed while a router is frozen
comes down and leaves none of its processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ani.errors import FaultError
from ani.faults import FaultSpec, get_fault_kind
from ani.faults.kinds.frozen_router import proc_state
from ani.lab import proc

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
TRI = ROOT / "tests" / "data" / "tri-ospf-ibgp.yaml"


def get_config_ok(lab, router: str, timeout_s: float) -> bool:
    """A fresh NETCONF session to ``router`` gets a <get-config> reply within ``timeout_s`` s."""
    from ani.netconf.client import ncclient_connect

    try:
        m = ncclient_connect(lab.netconf_endpoint(router), connect_timeout_s=timeout_s, rpc_timeout_s=timeout_s)
    except Exception:  # noqa: BLE001 - no hello in time: the frozen case
        return False
    try:
        reply = m.get_config(source="running")
        return "<frr" in reply.xml
    except Exception:  # noqa: BLE001
        return False
    finally:
        try:
            m.close_session()
        except Exception:  # noqa: BLE001
            pass


def test_frozen_router_effect_verification_removal(make_lab):
    lab = make_lab(TRI, lab_id=None)
    kind = get_fault_kind("frozen_router")
    spec = FaultSpec("frozen_router", at_step=0, duration_s=5.0, target={"router": "r2"}, params={"management": True})
    assert get_config_ok(lab, "r2", 10.0)
    pids = lab.daemon_pids("r2")
    assert set(pids) >= {"zebra", "ospfd", "bgpd"}

    handle = kind.inject(lab, spec)
    try:
        ok, detail = kind.verify(lab, spec, handle)
        assert ok, detail
        assert "NETCONF part frozen" in detail
        assert {d: proc_state(p) for d, p in pids.items()} == {d: "T" for d in pids}
        assert lab.netconf_frozen().keys() == {"r2"}
        frozen_vtysh = lab.vtysh("r2", "show version", timeout=2.0)
        assert frozen_vtysh.timed_out
        assert not get_config_ok(lab, "r2", 3.0)   # no hello from r2's part ...
        assert get_config_ok(lab, "r3", 10.0)      # ... while r3's part of the same server answers
        assert lab.vtysh("r3", "show version").ok
        ok, detail = kind.present(lab, spec, handle)
        assert ok, detail
    finally:
        kind.remove(lab, spec, handle)
    kind.remove(lab, spec, handle)  # idempotent
    ok, detail = kind.removed(lab, spec, handle)
    assert ok, detail
    assert all(proc_state(p) in ("S", "R") for p in pids.values()), {d: proc_state(p) for d, p in pids.items()}
    assert lab.netconf_frozen() == {}
    assert get_config_ok(lab, "r2", 10.0)
    assert lab.vtysh("r2", "show version").ok
    # a verify after removal says the fault is no longer there (the check can fail)
    ok, detail = kind.verify(lab, spec, handle)
    assert not ok and "not stopped" in detail


def test_lab_down_while_frozen_leaves_nothing(make_lab):
    lab = make_lab(TRI)
    kind = get_fault_kind("frozen_router")
    spec = FaultSpec("frozen_router", at_step=0, duration_s=None, target={"router": "r3"}, params={})
    pids = lab.daemon_pids("r3")
    server = lab._state.netconf_pid
    kind.inject(lab, spec)
    assert all(proc_state(p) == "T" for p in pids.values())
    lab.down()
    assert not any(proc.is_alive(p) for p in [*pids.values(), server])
    assert not lab.dir.exists()


def test_unknown_router_is_a_fault_error(make_lab):
    lab = make_lab(TRI, netconf=False)
    kind = get_fault_kind("frozen_router")
    with pytest.raises(FaultError, match="frozen_router r9"):
        kind.inject(lab, FaultSpec("frozen_router", 0, 1.0, {"router": "r9"}, {}))


def test_a_server_restart_while_frozen_does_not_wait_and_the_freeze_is_seen_gone(make_lab):
    """SIGTERM to the NETCONF server while a router's part is frozen: the server thaws it before
    it shuts down (a held Device would block its shutdown until the stop bound kills it); the new
    server has nothing frozen, so the fault's present check says it vanished (the run would be
    environment_invalid), and removal still resumes the daemons and withdraws the request."""
    lab = make_lab(TRI)
    kind = get_fault_kind("frozen_router")
    spec = FaultSpec("frozen_router", at_step=0, duration_s=None, target={"router": "r2"}, params={})
    handle = kind.inject(lab, spec)
    old = lab._state.netconf_pid
    lab.restart_netconf(timeout_s=20.0)
    log = (lab.dir / "netconf.log").read_text()
    assert "r2: management plane resumed" in log  # thawed by the stopping server itself
    assert lab._state.netconf_pid != old and not proc.is_alive(old)
    assert lab.netconf_frozen() == {}
    ok, detail = kind.present(lab, spec, handle)
    assert not ok and "its NETCONF part NOT frozen" in detail
    kind.remove(lab, spec, handle)
    ok, detail = kind.removed(lab, spec, handle)
    assert ok, detail
    from ani.lab.netconf import read_frozen_request

    assert read_frozen_request(lab.dir / "netconf") == set()
    assert get_config_ok(lab, "r2", 10.0)
