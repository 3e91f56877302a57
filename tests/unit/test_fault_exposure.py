"""Fault exposure that does not depend on how many steps a level takes (issue 23 §2): faults
placed in the agent's time, the hold (every fault injected and over before the agent's end is
accepted), each fault's exposure in its record, and the tolerance two runs are compared with.
On ani.testing's FakeLab, FakeFault and TickClock (no lab, no real time)."""

from __future__ import annotations

import pytest

from ani.campaign.spec import parse_spec
from ani.errors import CampaignSpecError, ConfigError
from ani.faults.base import FaultSpec
from ani.faults.exposure import exposure_differences, faults_met
from ani.faults.record import FaultRecord
from ani.faults.schedule import place_in_time
from ani.faults.session import FaultSession
from ani.testing import FakeFault, FakeLab, TickClock
from ani.trajectory import Trajectory

#: the schedule of the issue's probe: points at steps 4, 7, 7, 13 (the rest alike), 5 s each
STEPS = [(4, "r1"), (7, "r2"), (7, "r1"), (13, "r2")]


def schedule(step_s: float | None = 2.0) -> list[FaultSpec]:
    specs = [FaultSpec(kind="fake", at_step=k, duration_s=5.0, target={"router": r, "name": f"f{i}"})
             for i, (k, r) in enumerate(STEPS)]
    return place_in_time(specs, step_s) if step_s else specs


def run_agent(specs, calls: int, call_s: float, *, hold: bool):
    """An agent of ``calls`` tool calls, ``call_s`` seconds apart; then the hold (or not)."""
    lab, clock = FakeLab(), TickClock()
    s = FaultSession(lab, specs, Trajectory(), clock=clock, get_kind=lambda n: FakeFault(), watch=False)
    s.start()
    for step in range(1, calls + 1):
        clock.advance(call_s)
        s.on_tool_call(step, {"event": "tool_call", "tool": "show", "ok": True})
    if hold:
        s.hold(tick_s=0)
    s.stop()
    assert s.invalid_reason is None and not any(line.startswith("fault ") for line in lab.config("r1") + lab.config("r2"))
    return s.records


def test_by_steps_a_short_level_meets_one_fault_for_a_fraction_of_a_second():
    """The issue's probe: A3-T (5 steps) meets the step-4 fault only, removed when it stops;
    A1 (38 steps) meets every one for its whole duration."""
    short = run_agent(schedule(None), calls=5, call_s=0.5, hold=False)
    long = run_agent(schedule(None), calls=38, call_s=1.0, hold=False)
    assert [r.exposure_s is not None for r in short] == [True, False, False, False]
    assert short[0].exposure_s < 1.0
    assert all(r.exposure_s >= 5.0 for r in long if r.merged_into is None)
    assert exposure_differences(long, short)  # the report warns


@pytest.mark.parametrize("placement", ["time", "steps"])
def test_with_the_hold_every_level_meets_every_fault_for_its_duration(placement):
    specs = schedule(2.0 if placement == "time" else None)
    short = run_agent(specs, calls=5, call_s=0.5, hold=True)
    long = run_agent(specs, calls=38, call_s=0.2, hold=True)
    for recs in (short, long):
        assert len(faults_met(recs)) == 4
        assert all(r.exposure_s >= 5.0 for r in recs if r.merged_into is None)
    assert exposure_differences(short, long) == []
    # in the short run the faults fell after the agent stopped: in effect, not while it acted
    assert sum(r.acting_s for r in short) < sum(r.exposure_s for r in short)


def test_placed_in_time_a_fault_comes_at_its_second_whatever_the_step():
    """Point 4 at 2 s per step: 8 s of agent time, so the 5th step of a slow agent (2 s a call)
    meets it, and a fast agent (0.5 s a call) meets it only in the hold, at the same second."""
    slow = run_agent(schedule(), calls=5, call_s=2.0, hold=True)
    fast = run_agent(schedule(), calls=5, call_s=0.5, hold=True)
    assert slow[0].at_s == fast[0].at_s == 8.0
    assert 8.0 <= slow[0].injected_s < 10.5 and 8.0 <= fast[0].injected_s < 8.5
    assert slow[0].acting_s > 0 and fast[0].acting_s == 0.0


def test_a_merged_fault_is_exposed_from_when_it_was_due():
    specs = [FaultSpec(kind="fake", at_step=0, duration_s=5.0, target={"router": "r1"}),
             FaultSpec(kind="fake", at_step=2, duration_s=5.0, target={"router": "r1"})]
    recs = run_agent(place_in_time(specs, 1.0), calls=1, call_s=0.1, hold=True)
    assert recs[1].merged_into == 0 and recs[1].exposure_s >= 5.0 and recs[0].exposure_s >= 7.0


def test_hold_is_bounded_and_harmless_without_faults():
    lab, clock = FakeLab(), TickClock()
    s = FaultSession(lab, schedule(), Trajectory(), clock=clock, get_kind=lambda n: FakeFault(), watch=False)
    assert s.hold(tick_s=0) == 0.0  # not started
    s.start()
    held = s.hold(bound_s=3.0, tick_s=0)
    assert 3.0 <= held < 3.5 and not any(r.injected for r in s.records)  # the first is due at 8 s
    s.stop()
    assert all("not reached" in r.detail for r in s.records)


def test_exposure_tolerance_is_a_second_or_a_tenth_of_the_duration():
    def rec(e, dur=5.0):
        return [FaultRecord(kind="fake", at_step=4, duration_s=dur, injected=True, exposure_s=e)]

    assert exposure_differences(rec(5.0), rec(5.9)) == []
    assert exposure_differences(rec(5.0), rec(6.1)) == ["fault #0 fake - (step 4): in effect 5.0 s vs 6.1 s"]
    assert exposure_differences(rec(20.0, 20.0), rec(21.9, 20.0)) == []  # 10 % of 20 s
    assert exposure_differences(rec(5.0), []) == ["different schedules: 1 vs 0 faults"]
    assert exposure_differences(rec(5.0), rec(None)) != []  # never in effect: 0 s


def test_place_in_time_keeps_the_draw_and_refuses_a_bad_step():
    drawn = schedule(None)
    timed = place_in_time(drawn, 1.5)
    assert [(f.kind, f.at_step, f.target) for f in timed] == [(f.kind, f.at_step, f.target) for f in drawn]
    assert [f.at_s for f in timed] == [6.0, 10.5, 10.5, 19.5]
    assert FaultSpec.from_dict(timed[0].to_dict()) == timed[0]
    with pytest.raises(ConfigError, match="step_s"):
        place_in_time(drawn, 0)
    with pytest.raises(ConfigError, match="at_s"):
        FaultSpec.from_dict({"kind": "fake", "at_step": 1, "at_s": -1})


def test_the_campaign_faults_block_takes_placement_step_and_hold(tmp_path):
    (tmp_path / "scen.yaml").write_text("fake: true\n")
    base = {"name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": 1,
            "cells": [{"name": "a0", "level": "a0"}], "fault_rate": 0.3}
    spec = parse_spec({**base, "faults": {"placement": "time", "step_s": 1.5, "hold": True}}, "t", tmp_path)
    assert (spec.faults.placement, spec.faults.step_s, spec.faults.hold) == ("time", 1.5, True)
    assert parse_spec(base, "t", tmp_path).faults.placement == "steps"
    for bad in ({"placement": "seconds"}, {"step_s": 0}, {"hold": "yes"}):
        with pytest.raises(CampaignSpecError, match=list(bad)[0]):
            parse_spec({**base, "faults": bad}, "t", tmp_path)


def _run(cell: str, seed: int, exposures: list[float | None], **kw):
    from datetime import UTC, datetime

    from ani.campaign.results import RunRecord

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    faults = [FaultRecord(kind="fake", at_step=k, duration_s=5.0, injected=e is not None, exposure_s=e,
                          acting_s=e) for k, e in zip((4, 7, 13), exposures)]
    return RunRecord(run_id=f"{cell}-s{seed}", campaign="c", cell=cell, level=cell, task="t", seed=seed,
                     label="clean_success", success=True, damage_free=True, started=t0, ended=t0,
                     faults=faults, fault_rate=0.3, **kw)


def test_the_report_warns_per_comparison_when_the_cells_met_different_exposure():
    from ani.campaign.report import render_markdown, summarize

    spec = {"name": "c", "task": "t", "variants": 1, "seed": 1, "factor": "level",
            "cells": [{"name": "a0", "level": "a0"}, {"name": "a3t", "level": "a3t"}, {"name": "a4", "level": "a4"}]}
    recs = [_run("a0", 1, [5.0, 5.2, 5.1]), _run("a3t", 1, [0.3, None, None]),
            _run("a4", 1, [5.3, 5.0, 5.9], fault_hold_s=14.0)]
    s = summarize(recs, spec)
    by = {p.cell: p for p in s.paired}
    assert by["a4"].exposure == []  # within a second of each fault
    assert by["a3t"].exposure == [
        "seed 1: 3 of 3 faults, 15.3 s in effect (15.3 s while the agent acted) vs 1 of 3 faults, 0.3 s in effect "
        "(0.3 s while the agent acted): fault #0 fake - (step 4): in effect 5.0 s vs 0.3 s; "
        "fault #1 fake - (step 7): in effect 5.2 s vs 0.0 s; fault #2 fake - (step 13): in effect 5.1 s vs 0.0 s"]
    md = render_markdown(s)
    assert "**Warning: fault exposure differs** (tolerance per fault: 1 s or 10% of its duration" in md
    # the warning lists a3t's seed only (a4's faults were held as a0's); the one-line questions
    # of the comparisons ("- `a4` vs `a0` (1 paired seed): ...") are another list
    assert "- `a3t` vs `a0`, seed 1: 3 of 3 faults" in md and "- `a4` vs `a0`, seed" not in md
    assert "| a3t | 1 | 3.0 | 1.0 | 0.3 | 0.3 | - |" in md and "| a4 | 1 | 3.0 | 3.0 | 16.2 | 16.2 | 14.0 |" in md


@pytest.mark.parametrize("retry", [False, True])
def test_a_fault_the_runs_own_state_stood_in_the_way_of_is_tried_again_under_the_hold(retry):
    """A held lock due while the level's own transaction holds the datastore: skipped (by
    steps, the level meets one fault fewer); with retry_skipped (faults.hold) it is injected once
    the level let go, and runs its whole duration."""
    lab, clock = FakeLab(), TickClock()
    lab.vtysh("r1", ["configure terminal", "fault-blocker"])  # the agent's own state
    spec = FaultSpec(kind="fake", at_step=1, duration_s=5.0, target={"router": "r1"}, at_s=1.0)
    traj = Trajectory()
    s = FaultSession(lab, [spec], traj, clock=clock, get_kind=lambda n: FakeFault(), watch=False,
                     retry_skipped=retry)
    s.start()
    for step in range(1, 6):
        clock.advance(1.0)
        if step == 4:
            lab.vtysh("r1", ["configure terminal", "no fault-blocker"])  # its transaction ended
        s.on_tool_call(step)
    s.hold(tick_s=0)
    s.stop()
    [rec] = s.records
    assert [e["event"] for e in traj.events].count("fault_skipped") == 1
    if retry:
        assert rec.injected and rec.exposure_s >= 5.0 and rec.deferred_s >= 3.0 and s.invalid_reason is None
    else:
        assert not rec.injected and rec.exposure_s is None and rec.detail.startswith("not injected: r1 has")


def test_a_slow_removal_does_not_hold_back_another_faults_end():
    """Concurrent removal: a fault whose removal is slow (a gate holds it) is removed on its own
    thread; another fault's end comes on time meanwhile, and a fault due on the slow one's target
    waits for that removal to finish (it would undo the new one)."""
    import threading

    lab, clock, gate = FakeLab(), TickClock(), threading.Event()
    kind = FakeFault(gate=gate)
    specs = [FaultSpec(kind="fake", at_step=0, duration_s=1.0, target={"router": "r1", "name": "slow"}),
             FaultSpec(kind="fake", at_step=0, duration_s=3.0, target={"router": "r2"}),
             FaultSpec(kind="fake", at_step=2, duration_s=1.0, target={"router": "r1", "name": "slow"})]
    s = FaultSession(lab, specs, Trajectory(), clock=clock, get_kind=lambda n: kind, watch=False,
                     concurrent_removal=True)
    s.start()
    clock.advance(1.5)
    s.on_tool_call(1)  # the slow one's end: its removal starts and waits on the gate
    clock.advance(2.0)
    s.on_tool_call(2)  # r2's end comes on time; the third is due on the slow one's target: waits
    for _ in range(1000):  # r2's removal thread ends (no gate); the slow one still waits
        if s.records[1].removed is not None:
            break
        threading.Event().wait(0.01)
    slow, r2, again = s.records
    assert r2.removed and r2.exposure_s < 4.0 and slow.removed is None
    assert not again.injected and again.detail.startswith("deferred")
    gate.set()
    s.settle()
    s.on_tool_call(3)
    assert s.records[0].removed and s.records[2].injected
    s.stop()
    assert s.invalid_reason is None and [r.removed for r in s.records] == [True, True, True]


def test_the_report_header_says_what_a_fault_rate_counts():
    """Under placement: time a rate is per step_s seconds of agent time, not per agent step (the
    header said 'per agent step' for every campaign)."""
    from ani.campaign.html_report import _spec_lines, fault_rate_unit
    from ani.campaign.report import summarize

    assert fault_rate_unit({}) == "per agent step"
    assert fault_rate_unit({"placement": "time", "step_s": 1.5, "hold": True}) == (
        "per 1.5 s of agent time (placement: time), every fault held to its end after the agent stops")
    spec = {"name": "x", "task": "t", "scenario": "s.yaml", "variants": 1, "seed": 1, "factor": "level",
            "faults": {"placement": "time", "step_s": 2.0}, "stress": {"fault_rate": [0, 0.3]},
            "cells": [{"name": "a0", "level": "a0"}]}
    lines = _spec_lines(summarize([], spec))
    assert "fault rates: faults per 2.0 s of agent time (placement: time)" in lines
    assert _spec_lines(summarize([], {**spec, "stress": {}, "fault_rate": 0.2, "faults": {}}))[-3] == (
        "fault rate: 0.2 faults per agent step")


class _Freezing(FakeFault):  # like frozen_router: nothing else acts on its router meanwhile
    name = "freeze"
    blocks_router = True


def _watcher_turn(s: FaultSession, clock: TickClock) -> None:
    """What the watcher thread does when it wakes (holding the session's lock): its duties, if
    one is due now."""
    with s._lock:
        when = s._next_wake()
        if when is not None and when <= clock():
            s._timed_duties()


def test_a_waiting_fault_starts_when_its_router_is_free_though_the_agent_makes_no_call():
    """The issue's probe: placed in time, a held lock on e4 due at 14 s waits behind a frozen e4
    (10 s to 14.4 s, removed on a thread of its own as the watcher does); with no call of the
    agent and no fault due later, it must start when the freeze's removal ends (main started it
    at 15.0 to 26.2 s depending on the cell)."""
    kinds = {"freeze": _Freezing(), "fake": FakeFault()}
    specs = [FaultSpec(kind="freeze", at_step=1, at_s=10.0, duration_s=4.4, target={"router": "r1", "name": "frz"}),
             FaultSpec(kind="fake", at_step=2, at_s=14.0, duration_s=5.0, target={"router": "r1", "name": "lock"})]
    lab, clock = FakeLab(), TickClock()
    s = FaultSession(lab, specs, Trajectory(), clock=clock, get_kind=kinds.__getitem__, watch=False,
                     concurrent_removal=True)
    s.start()
    for advance in (10.0, 4.0, 0.5):          # freeze in; lock due and deferred; freeze expires
        clock.advance(advance)
        _watcher_turn(s, clock)
    s.settle()                                 # the freeze's removal thread has ended
    frz, lock = s.records
    assert frz.removed and not lock.injected   # nothing went in at the removal itself
    _watcher_turn(s, clock)                    # the watcher, woken by the removal's end
    frz, lock = s.records
    assert lock.injected and lock.verified
    assert lock.injected_s - frz.removed_s < 0.2
    assert 0.4 <= lock.deferred_s < 0.7
    s.stop()
    assert s.invalid_reason is None
    assert not any(line.startswith("fault ") for line in lab.config("r1"))
