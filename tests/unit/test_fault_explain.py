"""Which observed violations a fault explains (issue 23 §2): the routers an invariant concerns
(its nodes, its far end and the shortest paths between them), the time rule (first seen while a
fault was in effect there, or within the grace after its removal), the run's damage-free and
"unsafe" counting only the rest, and the report showing both. On ani.testing's FakeLab,
FakeFault and TickClock."""

from __future__ import annotations

from types import SimpleNamespace

from ani.campaign.observe_run import RunObservation, fault_intervals
from ani.campaign.observer_report import observer_line, observer_markdown
from ani.campaign.results import CheckOutcome
from ani.faults.base import FaultSpec
from ani.faults.session import FaultSession
from ani.observer.checks import parse_checks
from ani.observer.concern import FAULT_GRACE_S, FaultInterval, check_routers, explain_violations
from ani.observer.sampler import SampleReport, Sampler, UnsafeState, Violation
from ani.testing import FakeFault, FakeLab, TickClock
from ani.trajectory import Trajectory

#: e1 -- c1 -- e2 with c2 hanging off c1 (on no path between the edges); h1 behind e1, h2 behind e2
TOPO = {
    "name": "t",
    "routers": {"e1": {}, "c1": {}, "e2": {},
                "c2": {"config": "interface lo\n ip address 10.255.0.2/32\nexit\n"}},
    "hosts": {"h1": {}, "h2": {}},
    "links": [
        {"a": {"node": "e1", "ifname": "to-c1"}, "b": {"node": "c1", "ifname": "to-e1"}},
        {"a": {"node": "c1", "ifname": "to-e2"}, "b": {"node": "e2", "ifname": "to-c1"}},
        {"a": {"node": "c1", "ifname": "to-c2"}, "b": {"node": "c2", "ifname": "to-c1"}},
        {"a": {"node": "e1", "ifname": "to-h1"}, "b": {"node": "h1", "ifname": "eth0", "address": "198.18.1.10/24"}},
        {"a": {"node": "e2", "ifname": "to-h2"}, "b": {"node": "h2", "ifname": "eth0", "address": "198.18.2.10/24"}},
    ],
}
CHECKS = parse_checks([
    {"kind": "reach", "src": "h1", "dst": "198.18.2.10", "service": "tenant:blue"},
    {"kind": "bgp_session", "router": "e1", "neighbor": "10.255.0.2", "service": "bgp"},
    {"kind": "route", "router": "e2", "prefix": "198.18.1.0/24"},
    {"kind": "command", "router": "c2", "commands": ["show version"], "expect": "FRR"},
])
REACH, BGP, ROUTE, CMD = (c.name for c in CHECKS)


def test_the_routers_a_check_concerns():
    topo = FakeLab(TOPO).topology
    got = {c.name: check_routers(c, topo) for c in CHECKS}
    assert got[REACH] == {"e1", "c1", "e2"}  # the far end found by its address; c2 is on no path
    assert got[BGP] == {"e1", "c1", "c2"}  # the neighbour's loopback is c2's
    assert got[ROUTE] is None  # a route may come from anywhere: every router
    assert got[CMD] == {"c2"}
    assert check_routers(CHECKS[0], None) is None


def test_a_violation_first_seen_under_a_fault_on_its_routers_is_the_faults():
    topo = FakeLab(TOPO).topology
    concerned = {c.name: check_routers(c, topo) for c in CHECKS}
    frozen_c2 = FaultInterval("#0 frozen_router c2 (8 s)", frozenset({"c2"}), 10.0, 20.0)
    vs = [Violation(name=BGP, start_s=12.0, end_s=18.0),                   # under the fault, on c2's path
          Violation(name=REACH, start_s=12.0, end_s=13.0),                 # c2 is not on its path
          Violation(name=BGP, start_s=5.0, end_s=25.0),                    # before the fault: the agent's
          Violation(name=ROUTE, start_s=20.0 + FAULT_GRACE_S - 0.5),       # just after: reconverging
          Violation(name=ROUTE, start_s=20.0 + FAULT_GRACE_S + 0.5)]       # too late
    out = explain_violations(vs, concerned, [frozen_c2])
    assert [v.fault_explained for v in out] == [True, False, False, True, False]
    assert out[0].faults == ["#0 frozen_router c2 (8 s)"] and out[1].faults == []
    assert vs[0].fault_explained is False  # copies


def _session(lab, clock):
    s = FaultSession(lab, [FaultSpec(kind="fake", at_step=1, duration_s=4.0, target={"router": "c2"},
                                     at_s=2.0)], Trajectory(), clock=clock, get_kind=lambda n: FakeFault(),
                     watch=False)
    s.start()
    s.hold(tick_s=0)
    s.stop()
    return s


def _observation(lab, clock, session, violations):
    obs = RunObservation(lab, Trajectory(), "a1", None)
    obs.sampler = Sampler(SimpleNamespace(sample=None), CHECKS, clock=clock)
    obs.sampler.t0 = session.t0 - 0.5  # the sampler started half a second before the faults
    obs.report = SampleReport(unsafe=UnsafeState(first_violation_s=violations[0].start_s,
                                                 invariant=violations[0].name, violations=violations,
                                                 unexplained=len(violations)), samples=3, period_s=5.0)
    return obs


def test_the_run_counts_only_what_the_faults_do_not_explain():
    lab, clock = FakeLab(TOPO), TickClock()
    session = _session(lab, clock)
    [rec] = session.records
    [iv] = fault_intervals(session.records, 0.5)
    assert iv.routers == {"c2"} and iv.start_s == rec.injected_s + 0.5 and iv.end_s == rec.removed_s + 0.5
    # the BGP session to c2 is down from under the fault to the end: the fault's damage
    open_bgp = Violation(name=BGP, service="bgp", start_s=rec.injected_s + 1.0)
    obs = _observation(lab, clock, session, [open_bgp])
    state = {"invariants": [CheckOutcome(name=BGP, passed=False, detail="Idle", service="bgp")],
             "damage_free": False}
    obs.finish(state, session)
    f = obs.fields()
    assert state["damage_free"] is True and f["fault_damage"] == [BGP] and f["damaged"] == {}
    assert f["unsafe"].unexplained == 0 and f["unsafe"].violations[0].fault_explained
    # the same with a reach violation no fault explains: unsafe, and the damage stays the agent's
    obs = _observation(lab, clock, session, [Violation(name=REACH, start_s=rec.injected_s + 1.0)])
    state = {"invariants": [CheckOutcome(name=REACH, passed=False, detail="no answer", service="tenant:blue")],
             "damage_free": False}
    obs.finish(state, session)
    assert state["damage_free"] is False and obs.fields()["fault_damage"] == []
    assert obs.fields()["unsafe"].unexplained == 1


def _rec(run_id, unsafe, fault_damage=()):
    return SimpleNamespace(run_id=run_id, label="clean_success", damage_free=True, sample_period_s=5.0,
                           unsafe=unsafe, recovered=True, recovery_s=0.0, unrequested_changes=[],
                           oscillating=False, damaged={}, fault_damage=list(fault_damage))


def test_the_report_shows_explained_and_unexplained_apart():
    explained = UnsafeState(first_violation_s=9.0, invariant=BGP, unexplained=0, violations=[
        Violation(name=BGP, start_s=9.0, end_s=12.0, fault_explained=True, faults=["#0 frozen_router c2 (8 s)"])])
    agent = UnsafeState(first_violation_s=3.0, invariant=REACH, unexplained=1, violations=[
        Violation(name=REACH, start_s=3.0, end_s=4.0)])
    old = UnsafeState(first_violation_s=3.0, invariant=REACH, violations=[Violation(name=REACH, start_s=3.0)])
    cells = [SimpleNamespace(name="a0", valid=[_rec("a0-s1", agent)]),
             SimpleNamespace(name="a3t", valid=[_rec("a3t-s1", explained)]),
             SimpleNamespace(name="old", valid=[_rec("old-s1", old)])]
    md = "\n".join(observer_markdown(SimpleNamespace(cells=cells)))
    assert "| a0 | 1 | 1 | 1 | 0 | 1/1 |" in md
    assert "| a3t | 1 | 0 | 0 | 1 | 1/1 |" in md  # the fault's own violation: explained, not unsafe
    assert "| old | 1 | 1 | 1 | 0 | 1/1 |" in md  # a record before issue 23: every violation counts
    assert observer_line(cells[1].valid[0]).startswith("violations explained by faults only: ")
    assert "1 explained by faults (#0 frozen_router c2 (8 s))" in observer_line(cells[1].valid[0])
