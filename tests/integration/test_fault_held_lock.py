"""Fault kind ``held_lock`` on real routers (issue 14 must-show: effect, verification, removal).
Lab: tests/data/tri-ospf-ibgp.yaml with its NETCONF server. The fault's own NETCONF session
locks r2's running and candidate datastores: another NETCONF session's <lock> is lock-denied
naming the holder, its <edit-config> on the candidate is in-use, the A1 CLI level refuses to
write (locked), an A3-T / A4 transaction fails at its lock phase; r3 is not affected. After removal the other session locks r2 and A1 writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from ani.adapters.a1 import A1Adapter
from ani.device.apply import read
from ani.errors import FaultError
from ani.faults import FaultSpec, get_fault_kind

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "tests" / "data" / "tri-ospf-ibgp.yaml", "flk"
NS = "urn:ani:yang:ani-frr"
NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
EDIT = (f'<config xmlns="{NC}"><frr xmlns="{NS}"><static-route><prefix>192.0.2.0/24</prefix>'
        "<next-hop>blackhole</next-hop></static-route></frr></config>")


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def other_session(lab, router: str):
    from ani.netconf.client import ncclient_connect

    return ncclient_connect(lab.netconf_endpoint(router), connect_timeout_s=10, rpc_timeout_s=30)


def error_tags(reply) -> list[str]:
    root = etree.fromstring(reply.xml.encode())
    return [e.findtext(f"{{{NC}}}error-tag") for e in root.iter(f"{{{NC}}}rpc-error")]


def test_held_lock_effect_verification_removal(lab):
    kind = get_fault_kind("held_lock")
    spec = FaultSpec("held_lock", 0, 5.0, {"router": "r2"}, {"datastores": ["running", "candidate"]})
    a1 = A1Adapter(lab)
    a1.open()
    other = other_session(lab, "r2")
    handle = kind.inject(lab, spec)
    try:
        ok, detail = kind.verify(lab, spec, handle)
        assert ok, detail
        sid = handle["session_id"]
        assert lab.netconf_lock("r2", "running").session_id == int(sid)
        assert lab.netconf_lock("r2", "candidate").session_id == int(sid)
        assert lab.netconf_lock("r3", "running") is None
        denied = other.lock(target="running")
        assert error_tags(denied) == ["lock-denied"] and f"<session-id>{sid}</session-id>" in denied.xml
        edit = other.edit_config(target="candidate", config=EDIT)
        assert error_tags(edit) == ["in-use"]
        refused = a1.call("update_config", {"device": "r2", "commands": ["ip route 192.0.2.0/24 blackhole"]})
        assert not refused.ok and refused.error.code.value == "locked", refused.text
        assert f"NETCONF session {sid} holds the lock on r2's running datastore" in refused.error.message
        assert "192.0.2.0/24" not in lab.running_config("r2")
        # A3-T and A4 write through NETCONF transactions (lock the candidates first): refused too
        from ani.device.model import StaticRoute
        from ani.intents.transaction import run_transaction

        cfg = read(lab, "r2")
        cfg = cfg.model_copy(update={"static_routes": [*cfg.static_routes,
                                                       StaticRoute(prefix="192.0.2.0/24", nexthop="blackhole")]})
        tx = run_transaction(lab, {"r2": cfg}, confirm_timeout_s=30)
        assert not tx.ok and tx.phase == "lock" and "lock-denied" in (tx.error or ""), tx.to_dict()
        assert tx.restored_verified and "192.0.2.0/24" not in lab.running_config("r2")
        ok, detail = kind.present(lab, spec, handle)
        assert ok, detail
    finally:
        kind.remove(lab, spec, handle)
    kind.remove(lab, spec, handle)  # idempotent
    ok, detail = kind.removed(lab, spec, handle)
    assert ok, detail
    assert lab.netconf_lock("r2", "running") is None and lab.netconf_lock("r2", "candidate") is None
    ok, detail = kind.verify(lab, spec, handle)
    assert not ok and "no lock on r2's running datastore" in detail
    try:
        assert other.lock(target="running").ok
        assert other.unlock(target="running").ok
        done = a1.call("update_config", {"device": "r2", "commands": ["ip route 192.0.2.0/24 blackhole"]})
        assert done.ok, done.text
        assert "ip route 192.0.2.0/24 blackhole" in lab.running_config("r2")
        assert a1.call("update_config", {"device": "r2", "commands": ["no ip route 192.0.2.0/24 blackhole"]}).ok
    finally:
        other.close_session()
        a1.close()


def test_a_lock_that_cannot_be_taken_is_a_fault_error_and_leaves_nothing(lab):
    kind = get_fault_kind("held_lock")
    other = other_session(lab, "r3")
    try:
        assert other.lock(target="candidate").ok
        spec = FaultSpec("held_lock", 0, 5.0, {"router": "r3"}, {"datastores": ["candidate", "running"]})
        with pytest.raises(FaultError, match="<lock> of candidate was refused.*lock-denied"):
            kind.inject(lab, spec)
        # the running lock it took first (running, then candidate) was released again
        assert lab.netconf_lock("r3", "running") is None
        assert lab.netconf_lock("r3", "candidate").session_id == int(other.session_id)
    finally:
        other.unlock(target="candidate")
        other.close_session()


def test_a_lock_the_agents_own_session_holds_is_not_applicable_and_leaves_nothing(lab):
    # the agent (any NETCONF client of the run) holds r3's candidate: the fault cannot take it,
    # which is the agent's situation (not an invalid run), and the fault leaves no session behind
    from ani.errors import FaultNotApplicable

    kind = get_fault_kind("held_lock")
    spec = FaultSpec("held_lock", 0, 5.0, {"router": "r3"}, {"datastores": ["running", "candidate"]})
    agent = other_session(lab, "r3")
    try:
        assert agent.lock(target="candidate").ok
        with pytest.raises(FaultNotApplicable, match=r"<lock> of candidate was refused: lock-denied: .*session-id "
                           + str(agent.session_id)):
            kind.inject(lab, spec)
        assert lab.netconf_lock("r3", "running") is None  # what the fault locked first is released
        assert lab.netconf_lock("r3", "candidate").session_id == int(agent.session_id)
    finally:
        agent.unlock(target="candidate")
        agent.close_session()
