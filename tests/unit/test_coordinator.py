"""The coordinator (issue 24 §1): the only writer of runs.jsonl; one display line per run in
flight, fed by the run's events and gone when it finishes; planning writes plan.jsonl and a
resumed folder keeps its plans."""

from __future__ import annotations

import io

from rich.console import Console

from ani.campaign.coordinator import Coordinator, make_executor
from ani.campaign.executors import lost_record
from ani.campaign.plan import RunPlan, ScenarioRef, plan_by_id, read_plans, write_plans
from ani.campaign.results import RunStore, read_runs
from ani.errors import CampaignSpecError, ConfigError


def _plan(rid: str, **over) -> RunPlan:
    fields = dict(run_id=rid, campaign="c", cell="a1", level="a1", task="onboard-site", seed=1,
                  scenario=ScenarioRef(file="scenarios/s.yaml", hash="ab" * 32))
    return RunPlan(**{**fields, **over})


def _coordinator(tmp_path, progress=True):
    out = io.StringIO()
    con = Console(file=out, width=160, force_terminal=True)
    co = Coordinator(RunStore(tmp_path), con, name="c", total=3, done=0, progress=progress,
                     line=lambda r: f"line {r.run_id}", last=lambda r: r.label)
    return co, out


def test_runs_in_flight_have_a_line_each_fed_by_their_events_and_the_record_is_stored_once(tmp_path):
    co, out = _coordinator(tmp_path)
    a, b = _plan("a1-onboard-site-s1"), _plan("a1-onboard-site-s2", seed=2)
    with co:
        co.started(a)
        co.started(b)
        assert set(co.flight) == {a.run_id, b.run_id}
        co.event(b.run_id, {"event": "run_phase", "phase": "grading", "hidden_tests": 2, "invariants": 5})
        task = co.bar.tasks[co.flight[b.run_id]]
        assert task.fields["last"].startswith("grading (2 hidden tests, 5 baseline invariants)")
        assert co.bar.tasks[co.flight[a.run_id]].fields["last"] == "lab up"
        co.event("no-such-run", {"event": "tool_call"})  # an event of no run in flight: ignored
        co.finished(b, lost_record(b, "worker died: killed by SIGKILL"))
        assert set(co.flight) == {a.run_id}
    assert [r.run_id for r in read_runs(tmp_path)] == [b.run_id]
    assert [r.run_id for r in co.finished_records] == [b.run_id]
    assert co.bar.tasks[co.main].completed == 1
    assert "line a1-onboard-site-s2" in out.getvalue()


def test_without_progress_nothing_is_shown_but_records_are_stored(tmp_path):
    co, out = _coordinator(tmp_path, progress=False)
    p = _plan("a1-onboard-site-s1")
    with co:
        co.started(p)
        assert co.flight == {}
        co.finished(p, lost_record(p, "x"))
    assert out.getvalue().strip() == "" and len(read_runs(tmp_path)) == 1


def test_plans_round_trip_through_plan_jsonl_and_a_bad_line_names_its_line(tmp_path):
    plans = [_plan("a1-onboard-site-s1", faults=({"kind": "link_down", "at_step": 2, "duration_s": 5.0,
                                                  "target": {"link": ["e1", "c1"]}, "params": {}},)),
             _plan("a1-onboard-site-s2", seed=2, stress={"density": 4})]
    write_plans(tmp_path, plans)
    back = read_plans(tmp_path)
    assert back == plans
    assert back[0].fault_schedule()[0].target == {"link": ["e1", "c1"]}
    assert plan_by_id(back, "a1-onboard-site-s2").stress == {"density": 4}
    try:
        plan_by_id(back, "zz")
    except CampaignSpecError as exc:
        assert "no run 'zz'" in str(exc) and "a1-onboard-site-s1" in str(exc)
    else:
        raise AssertionError("no error for an unknown run id")
    (tmp_path / "plan.jsonl").write_text(plans[0].to_line() + "\n" + '{"run_id": 3}\n')
    try:
        read_plans(tmp_path)
    except CampaignSpecError as exc:
        assert "plan.jsonl:2: not a run plan" in str(exc)
    else:
        raise AssertionError("no error for a broken plan line")


def test_executor_choice(tmp_path):
    assert make_executor().name == "serial"
    for bad in (dict(kind="serial", jobs=2), dict(kind="local", scheduler="local:2"), dict(kind="dask"),
                dict(kind="local", jobs=2, deps=object()), dict(kind="nope")):
        kind = bad.pop("kind")
        try:
            make_executor(kind, **bad)
        except ConfigError:
            continue
        raise AssertionError(f"no error for {kind} {bad}")
