"""Issue 14 case 3: a frozen router during an A2 confirmed commit. Lab:
tests/data/tri-ospf-ibgp.yaml with its NETCONF server.

1. Through the A2 level (the fault driven by a FaultSession, as the runner drives it): a
   confirmed commit on r2 (confirm-timeout 10 s), then r2 freezes (daemons and its NETCONF part)
   for 20 s (A2's RPC bound 8 s: a commit on a loaded machine took over 3 s under make test's
   parallel workers, so the bounds leave room and keep their order: RPC < confirm < freeze); the agent's confirm_commit times out at the client; r2 resumes; the confirmed commit
   that was never confirmed is rolled back on the router (RFC 6241 §8.4), not left behind: r2's
   configuration ends as it was before the commit, no pending commit stays in the server's
   journal, and the run's fault record / trajectory say when the fault came and went.
2. Through a plain NETCONF client whose confirming commit is sent while r3 is frozen and waits
   for its reply (no client timeout): it reaches the server only after the confirm-timeout has
   passed, and it does not confirm: the reply is an rpc-error saying the commit was rolled back
   (whichever runs first at resume, the held-up timer or the late commit), and r3 ends as before.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from lxml import etree

from ani.device.apply import read
from ani.faults import FaultSpec, get_fault_kind
from ani.faults.session import FaultSession
from ani.trajectory import Trajectory

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "tests" / "data" / "tri-ospf-ibgp.yaml", "fc3"
NS = "urn:ani:yang:ani-frr"
NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
ROUTE = (f'<frr xmlns="{NS}"><static-route><prefix>192.0.2.0/24</prefix>'
         "<next-hop>blackhole</next-hop></static-route></frr>")


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def wait_for(what, bound_s: float = 40.0, every_s: float = 0.2):
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(every_s)
    return what()


def has_route(lab, router: str) -> bool:
    return any(str(r.prefix) == "192.0.2.0/24" for r in read(lab, router).static_routes)


def test_a2_confirmed_commit_then_frozen_router_is_rolled_back(lab):
    from ani.adapters.a2 import A2Adapter

    before = read(lab, "r2")
    traj = Trajectory("case3", "a2")
    a2 = A2Adapter(lab, trajectory=traj, options={"rpc_timeout_s": 8})
    a2.open()
    spec = FaultSpec("frozen_router", at_step=2, duration_s=20.0, target={"router": "r2"},
                     params={"management": True})
    faults = FaultSession(lab, [spec], traj)
    try:
        faults.start()
        edit = a2.call("edit_config", {"device": "r2", "config": ROUTE})
        assert edit.ok, edit.text
        faults.on_tool_call(1)
        commit = a2.call("commit", {"devices": ["r2"], "confirmed": True, "confirm_timeout_s": 10})
        assert commit.ok, commit.text
        assert has_route(lab, "r2")
        faults.on_tool_call(2)  # r2 freezes now
        assert faults.active == 1 and lab.netconf_frozen().keys() == {"r2"}
        confirm = a2.call("confirm_commit", {"devices": ["r2"]})
        faults.on_tool_call(3)
        # the confirmation never got through: a timeout at the client, outcome unknown
        assert not confirm.ok and "r2: confirming commit: timeout after 8 s" in confirm.error.message, confirm.text
        # the fault ends after its duration (the session's watcher), r2 resumes
        assert wait_for(lambda: faults.records[0].removed, 45.0), faults.records
        assert lab.netconf_frozen() == {}
        # the unconfirmed commit is rolled back on the router, not left behind
        assert wait_for(lambda: not has_route(lab, "r2")), "the unconfirmed commit stayed on r2"
        assert read(lab, "r2") == before
        # the rollback point is cleared only once running is restored (crash-safe order:
        # ani.netconf.datastore), so a moment after the route is gone
        journal = lab.dir / "netconf" / "r2.commit.json"
        assert wait_for(lambda: not journal.exists(), 10.0), "the rollback point stayed in the journal"
        again = a2.call("confirm_commit", {"devices": ["r2"]})
        assert not again.ok and "has passed" in again.error.message, again.text
    finally:
        faults.stop()
        a2.close()
    (rec,) = faults.records
    assert rec.injected and rec.verified and rec.removed and rec.invalid is None, rec
    assert rec.injected_s is not None and rec.removed_s - rec.injected_s >= 20.0
    assert "NETCONF part resumed" in rec.detail and "vtysh answers" in rec.detail
    events = [e["event"] for e in traj.events if e.get("source") == "harness"]
    assert events == ["fault_injected", "fault_verified", "fault_removed"]
    assert faults.invalid_reason is None


def test_a_late_confirming_commit_does_not_confirm(lab):
    from ani.netconf.client import ncclient_connect

    before = read(lab, "r3")
    m = ncclient_connect(lab.netconf_endpoint("r3"), connect_timeout_s=10, rpc_timeout_s=60)
    kind = get_fault_kind("frozen_router")
    spec = FaultSpec("frozen_router", 0, None, {"router": "r3"}, {"management": True})
    replies: list[str] = []
    try:
        assert m.edit_config(target="candidate", config=f'<config xmlns="{NC}">{ROUTE}</config>').ok
        assert m.commit(confirmed=True, timeout="3").ok
        committed_at = time.monotonic()
        assert has_route(lab, "r3")
        handle = kind.inject(lab, spec)
        try:
            assert kind.verify(lab, spec, handle)[0]
            sender = threading.Thread(target=lambda: replies.append(m.commit().xml), daemon=True)
            sender.start()  # sent before the deadline; waits at the frozen r3
            sender.join(0.5)
            assert sender.is_alive() and replies == []
            time.sleep(max(0.0, committed_at + 3.0 + 1.5 - time.monotonic()))  # past the deadline
        finally:
            kind.remove(lab, spec, handle)
        sender.join(60)
        assert replies, "no reply to the confirming commit after r3 resumed"
        root = etree.fromstring(replies[0].encode())
        errors = [e.findtext(f"{{{NC}}}error-message") or "" for e in root.iter(f"{{{NC}}}rpc-error")]
        assert errors, f"the late confirming commit answered <ok/>: {replies[0]}"
        assert "rolled back" in errors[0]
        assert wait_for(lambda: not has_route(lab, "r3")), "the unconfirmed commit stayed on r3"
        assert read(lab, "r3") == before
    finally:
        m.close_session()
