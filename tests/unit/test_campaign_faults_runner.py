"""The runner with faults (issue 14, §1), on the fakes of test_campaign_runner: the schedule is
drawn per variant and is the same in every cell, the session injects at the step points and
removes before grading, a crashed or interrupted run still removes its faults before the lab
goes down, a vanished fault makes the run environment_invalid (no verdict, excluded, listed,
rerun by --resume), and the spec's fault fields."""

from __future__ import annotations

import json

import pytest

from ani.campaign.loop import run_campaign
from ani.campaign.report import load_summary
from ani.campaign.results import ENV_INVALID, INVALID_LABELS, RunRecord, read_runs
from ani.campaign.runner import run_one
from ani.campaign.spec import parse_spec
from ani.errors import CampaignSpecError
from ani.faults import base
from ani.faults.base import FaultKind, register
from ani.faults.campaign import unavailable_kinds
from tests.unit.test_campaign_runner import Setup, World


class Flag(FaultKind):
    """Marks its target router in ``lab.faulted``; ``Flag.vanish`` makes present() report it
    gone."""

    name = "t_flag"
    vanish = False
    log: list = []

    def draw(self, rng, scenario, variant):
        return {"router": rng.choice(["e1", "e2", "c1"])}, {"n": rng.randint(1, 9)}

    def inject(self, lab, spec):
        faulted(lab).add(spec.target["router"])
        Flag.log.append(("inject", spec.at_step, lab.running))
        return spec.target["router"]

    def verify(self, lab, spec, handle):
        return handle in faulted(lab), f"{handle} marked"

    def present(self, lab, spec, handle):
        ok = not Flag.vanish and handle in faulted(lab)
        return ok, f"{handle} {'marked' if ok else 'unmarked'}"

    def remove(self, lab, spec, handle):
        faulted(lab).discard(handle)
        Flag.log.append(("remove", spec.at_step, lab.running))

    def removed(self, lab, spec, handle):
        return handle not in faulted(lab), f"{handle} unmarked"


def faulted(lab) -> set:
    if not hasattr(lab, "faulted"):
        lab.faulted = set()
    return lab.faulted


@pytest.fixture(autouse=True)
def kind():
    with base.FAULT_KINDS.isolated():
        register(Flag)
        Flag.vanish = False
        Flag.log = []
        yield


def make_spec(tmp_path, **extra):
    scen = tmp_path / "scen.yaml"
    scen.write_text("fake: true\n")
    data = {
        "name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": 2, "seed": 1,
        "cells": [{"name": "a0", "level": "a0"}, {"name": "a1", "level": "a1"}],
        "fault_rate": 3.0, "faults": {"kinds": ["t_flag"], "horizon_steps": 2, "duration_s": [60, 60]},
        **extra,
    }
    return parse_spec(data, "test", tmp_path)


def test_faults_are_injected_at_their_steps_and_removed_before_grading(tmp_path):
    spec = make_spec(tmp_path)
    s = Setup(World())
    rec = run_one(spec, "a1", 1, tmp_path / "out", deps=s.deps())
    assert rec.label == "clean_success" and rec.fault_rate == 3.0
    assert rec.faults and all((f.injected and f.verified and f.removed) or f.merged_into is not None
                              for f in rec.faults)
    assert all(f.at_step < 2 and f.kind == "t_flag" for f in rec.faults)
    assert faulted(s.world.labs[0]) == set()
    events = [json.loads(x) for x in open(rec.trajectory)]
    for f in [f for f in rec.faults if f.injected]:  # after the at_step-th tool call, before the next
        ev = next(e for e in events if e["event"] == "fault_injected" and e["at_step"] == f.at_step)
        assert sum(1 for e in events[: events.index(ev)] if e["event"] == "tool_call") == f.at_step
    # every removal before the lab went down (and before grading: the fault flag is clear)
    assert all(up for what, _, up in Flag.log if what == "remove")


def test_every_cell_meets_the_same_schedule(tmp_path):
    spec = make_spec(tmp_path)
    recs = {c: run_one(spec, c, 2, tmp_path / c, deps=Setup(World()).deps()) for c in ("a0", "a1")}
    key = lambda r: [(f.kind, f.target, f.params, f.at_step, f.duration_s) for f in r.faults]
    assert key(recs["a0"]) == key(recs["a1"]) and key(recs["a0"])
    other = run_one(spec, "a1", 1, tmp_path / "s1", deps=Setup(World()).deps())
    assert key(other) != key(recs["a1"])  # another seed, another schedule


def test_rate_zero_means_no_faults(tmp_path):
    spec = make_spec(tmp_path, fault_rate=0)
    rec = run_one(spec, "a1", 1, tmp_path / "out", deps=Setup(World()).deps())
    assert rec.faults == [] and rec.fault_rate == 0.0 and rec.fault_wait_s is None and Flag.log == []


@pytest.mark.parametrize("action", ["crash", "interrupt"])
def test_a_crashed_run_still_removes_its_faults_before_lab_down(tmp_path, action):
    spec = make_spec(tmp_path)
    s = Setup(World(), {("a1", 1): action})
    if action == "interrupt":
        with pytest.raises(KeyboardInterrupt):
            run_one(spec, "a1", 1, tmp_path / "out", deps=s.deps())
    else:
        rec = run_one(spec, "a1", 1, tmp_path / "out", deps=s.deps())
        assert rec.agent_error and all(f.removed for f in rec.faults if f.injected)
    lab = s.world.labs[0]
    assert faulted(lab) == set() and lab.downs == 1
    assert [w for w, *_ in Flag.log].count("remove") == [w for w, *_ in Flag.log].count("inject") >= 1
    assert all(up for what, _, up in Flag.log if what == "remove")  # before lab.down()


def test_a_vanished_fault_makes_the_run_environment_invalid_and_resume_reruns_it(tmp_path):
    spec = make_spec(tmp_path, variants=1)
    Flag.vanish = True
    out = tmp_path / "res"
    res = run_campaign(spec, out, progress=False, deps=Setup(World()).deps())
    recs = {r.run_id: r for r in res.records}
    assert {r.label for r in recs.values()} == {ENV_INVALID}
    r = recs["a1-onboard-site-s1"]
    assert (r.success, r.damage_free, r.tests, r.valid) == (None, None, [], False)
    assert "environment invalid: fault t_flag" in r.infra_error_reason and "vanished" in r.infra_error_reason
    assert r.faults[0].invalid.startswith("vanished") and r.faults[0].removed
    summary = load_summary(out)
    assert all(c.success.n == 0 for c in summary.cells)  # excluded from the rates
    md = (out / "summary.md").read_text()
    assert "- `a1-onboard-site-s1` (cell a1, seed 1): environment_invalid: environment invalid" in md
    assert len(res.infra) == 2
    Flag.vanish = False
    res2 = run_campaign(spec, out, resume=True, progress=False, deps=Setup(World()).deps())
    assert sorted(x.run_id for x in res2.ran) == sorted(recs)
    assert {x.label for x in read_runs(out)} == {"clean_success"}


def test_the_label_has_no_verdict():
    base_rec = dict(run_id="x", campaign="c", cell="a1", level="a1", task="t", seed=1,
                    started="2026-01-01T00:00:00Z", ended="2026-01-01T00:00:01Z")
    r = RunRecord(label=ENV_INVALID, infra_error_reason="environment invalid: ...", **base_rec)
    assert not r.valid and ENV_INVALID in INVALID_LABELS
    with pytest.raises(ValueError, match="environment_invalid run has no success"):
        RunRecord(label=ENV_INVALID, success=True, damage_free=True, **base_rec)


def test_spec_fault_fields(tmp_path):
    spec = make_spec(tmp_path)
    assert spec.fault_rate_of("a0") == 3.0 and spec.fault_rate_of("a0", {"fault_rate": 0.3}) == 0.3
    with pytest.raises(CampaignSpecError, match="faults.kinds: unknown fault kind 'nope'; known: .*t_flag"):
        make_spec(tmp_path, faults={"kinds": ["nope"]})
    with pytest.raises(CampaignSpecError, match="faults.duration_s"):
        make_spec(tmp_path, faults={"duration_s": [5, 1]})
    with pytest.raises(CampaignSpecError, match="fault_rate"):
        make_spec(tmp_path, fault_rate=-1)
    with pytest.raises(CampaignSpecError, match="faults.bogus: Extra inputs"):
        make_spec(tmp_path, faults={"bogus": 1})  # extra key refused


@pytest.mark.parametrize(
    "over, needle",
    [
        # pydantic's lax mode read YAML true as 1.0 and ran ~20 faults per run; .nan got "<= 100"
        ({"fault_rate": True}, r"fault_rate: a fault rate is a number >= 0 \(faults per agent step\), got True"),
        ({"fault_rate": float("nan")}, r"fault_rate: a fault rate is a number >= 0 .*got nan"),
        ({"fault_rate": "lots"}, r"fault_rate: a fault rate is a number >= 0 .*got 'lots'"),
        ({"fault_rate": -0.5}, r"fault_rate: a fault rate is a number >= 0 .*got -0.5"),
        ({"stress": {"fault_rate": [0, True]}}, r"stress: fault_rate.1: a fault rate is a number >= 0"),
        # 'Input should be a valid tuple' / 'duration_s[1]: Field required' said nothing of seconds
        ({"faults": {"duration_s": 5}}, r"faults.duration_s: \[lo, hi\] seconds with 0 < lo <= hi, got 5$"),
        ({"faults": {"duration_s": "five"}}, r"faults.duration_s: \[lo, hi\] seconds .*got 'five'"),
        ({"faults": {"duration_s": [3.0]}}, r"faults.duration_s: \[lo, hi\] seconds .*got \[3.0\]"),
        ({"faults": {"duration_s": [True, 3]}}, r"faults.duration_s: \[lo, hi\] seconds .*got \[True, 3\]"),
        ({"faults": {"duration_s": [0, 0]}}, r"faults.duration_s: \[lo, hi\] seconds .*got \[0.0, 0.0\]"),
        ({"bound": True, "variants": None}, r"bound: a damage probability bound in \(0, 1\).*got True"),
    ],
)
def test_bad_fault_fields_name_the_field_and_what_is_wanted(tmp_path, over, needle):
    with pytest.raises(CampaignSpecError, match=needle):
        make_spec(tmp_path, **over)


def test_a_faults_block_without_any_rate_is_refused(tmp_path):
    """A ``faults:`` block draws nothing at rate 0: a file that gives the block but no rate
    would run every run fault-free without a word."""
    scen = tmp_path / "scen.yaml"
    scen.write_text("fake: true\n")
    data = {
        "name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": 1,
        "cells": [{"name": "a0", "level": "a0"}, {"name": "a1", "level": "a1"}],
        "faults": {"kinds": ["t_flag"]},
    }
    with pytest.raises(CampaignSpecError, match=r"faults: no run has faults: .*fault_rate: .*stress: "):
        parse_spec(data, "test", tmp_path)
    # a rate anywhere, or an explicit 0, is a design the file asked for
    assert parse_spec({**data, "fault_rate": 0}, "test", tmp_path).fault_rate_of("a0") == 0.0
    swept = parse_spec({**data, "stress": {"fault_rate": [0, 0.3]}}, "test", tmp_path)
    assert [swept.fault_rate_of("a0", p) for p in swept.stress_points] == [0.0, 0.3]
    assert parse_spec({**data, "fault_rate": 0.3}, "test", tmp_path).fault_rate_of("a1") == 0.3


def test_an_unavailable_kind_named_by_the_campaign_is_reported(tmp_path, monkeypatch):
    from ani.faults import campaign

    class NoHost(Flag):
        name = "t_nohost"

        def unavailable(self, lab):
            return "needs the frobnicator module; this kernel has none"

    register(NoHost)
    monkeypatch.setattr(campaign, "_HOST", {})
    spec = make_spec(tmp_path, faults={"kinds": ["t_flag", "t_nohost"]})
    assert unavailable_kinds(spec) == {"t_nohost": "needs the frobnicator module; this kernel has none"}
    assert campaign.campaign_kinds(make_spec(tmp_path, faults={"kinds": None})).count("t_nohost") == 0
    assert unavailable_kinds(make_spec(tmp_path, fault_rate=0, faults={"kinds": ["t_nohost"]})) == {}


def test_placed_in_time_with_the_hold_every_cell_meets_every_fault_for_its_duration(tmp_path):
    """issue 23 §2: faults.placement time + hold: the run is held open after the agent until
    every scheduled fault has been injected and has run its duration; the record says how long."""
    spec = make_spec(tmp_path, fault_rate=3.0, faults={"kinds": ["t_flag"], "horizon_steps": 3, "duration_s": [0.2, 0.2],
                                                       "placement": "time", "step_s": 0.05, "hold": True})
    for cell in ("a0", "a1"):
        rec = run_one(spec, cell, 1, tmp_path / cell, deps=Setup(World()).deps())
        assert rec.label == "clean_success" and rec.fault_hold_s is not None
        assert rec.faults and all(f.at_s == round(f.at_step * 0.05, 3) for f in rec.faults)
        assert all(f.exposure_s >= 0.2 for f in rec.faults)  # every fault, merged ones too
        assert all((f.injected and f.removed) or f.merged_into is not None for f in rec.faults)
