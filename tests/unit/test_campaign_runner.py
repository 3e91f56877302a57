"""Runner and campaign loop logic with small fakes (no lab): case 9, resume, Ctrl-C, counts.

The fakes model a world where the agent's tool calls set flags on the lab
(``site`` for the requested service, ``damage`` for collateral damage) and the
fake observer reads those flags, so the verdict depends on what the agent did
through the adapter, as with the real pieces.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ani.campaign.loop import plan, run_campaign
from ani.campaign.report import load_summary
from ani.campaign.results import RunRecord, RunStore, read_runs
from ani.campaign.runner import RunnerDeps, run_one
from ani.campaign.spec import parse_spec
from ani.errors import LabError
from ani.testing import FakeLab as ShippedFakeLab
from ani.testing.fake_campaign import (  # noqa: F401 - FakeRun, ScriptAgent: other tests import them from here
    FakeRun,
    FakeScenario,
    FakeVariant,
    FakeWorld,
    FlagAdapter,
    FlagCheck,
    FlagObserver,
    FlagResult,
    ScriptAgent,
)

# --- fakes: ani.testing's campaign world (its labs are FakeLabs; the agent's calls raise flags) -----

World = FakeWorld
FCheck, FResult, FakeAdapter, FakeObserver = FlagCheck, FlagResult, FlagAdapter, FlagObserver


def FakeLab(topology: Any, world: FakeWorld) -> ShippedFakeLab:  # noqa: N802 - the other tests' name for it
    """A lab of ``world`` (ani.testing.FakeLab, made by the world)."""
    return world.make_lab(topology)


@dataclass
class Setup:
    world: World
    policy: dict = field(default_factory=dict)

    @property
    def adapters(self) -> list[FlagAdapter]:
        return self.world.adapters

    def deps(self) -> RunnerDeps:
        return self.world.deps(self.policy)


@pytest.fixture
def spec(tmp_path):
    scen = tmp_path / "scen.yaml"
    scen.write_text("fake: true\n")
    return parse_spec(
        {
            "name": "t",
            "scenario": "scen.yaml",
            "task": "onboard-site",
            "variants": 3,
            "seed": 1,
            "cells": [
                {"name": "a0", "level": "a0"},
                {"name": "a1", "level": "a1"},
                {"name": "a1+blocklist", "level": "a1", "blocklist": True},
            ],
        },
        "test",
        tmp_path,
    )


def by_id(records):
    return {r.run_id: r for r in records}


# --- single runs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "action,label,success,damage_free",
    [
        ("solve", "clean_success", True, True),
        ("solve_damage", "dangerous_success", True, False),
        ("fail", "clean_failure", False, True),
        ("damage", "destructive_failure", False, False),
    ],
)
def test_labels_follow_what_the_agent_did(spec, tmp_path, action, label, success, damage_free):
    s = Setup(World(), {("a1", 2): action})
    rec = run_one(spec, "a1", 2, tmp_path / "out", deps=s.deps())
    assert (rec.label, rec.success, rec.damage_free) == (label, success, damage_free)
    assert rec.run_id == "a1-onboard-site-s2"
    assert rec.variant_id == "onboard-2" and rec.scenario_hash == "scen-hash-1"
    assert [t.name for t in rec.tests] == ["site-reach"]
    assert [i.name for i in rec.invariants] == ["tenant-isolation", "bgp-up"]
    assert s.world.up_labs == [] and s.world.labs[0].downs == 1
    assert s.adapters[0].opened and s.adapters[0].closed


def test_tool_counts_come_from_the_ok_and_changed_flags(spec, tmp_path):
    s = Setup(World(), {("a0", 1): "fail"})
    rec = run_one(spec, "a0", 1, tmp_path, deps=s.deps())
    # show (ok, text mentions ok=False) + bad + bad
    assert (rec.tool_calls, rec.tool_errors, rec.changed_calls) == (3, 2, 0)
    s2 = Setup(World(), {("a0", 1): "solve_damage"})
    rec2 = run_one(spec, "a0", 1, tmp_path / "b", deps=s2.deps())
    assert (rec2.tool_calls, rec2.tool_errors, rec2.changed_calls) == (3, 0, 2)
    lines = Path(rec2.trajectory).read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["run_id"] == "a0-onboard-site-s1"


def test_agent_crash_is_graded_not_infra(spec, tmp_path):
    s = Setup(World(), {("a1", 1): "crash_after_solve", ("a0", 1): "crash"})
    rec = run_one(spec, "a1", 1, tmp_path, deps=s.deps())
    assert (
        rec.label == "clean_success"
    )  # the change was made before the crash; the network is graded
    assert "RuntimeError: agent exploded" in rec.agent_error
    assert rec.stop_reason == "error" and rec.steps is None
    rec0 = run_one(spec, "a0", 1, tmp_path, deps=s.deps())
    assert rec0.label == "clean_failure" and rec0.infra_error_reason is None
    assert s.world.up_labs == [] and all(a.closed for a in s.adapters)


def test_lab_failure_is_infra_error_with_reason_and_lab_down(spec, tmp_path):
    s = Setup(World(fail_up={2}))
    rec = run_one(spec, "a0", 2, tmp_path, deps=s.deps())
    assert rec.label == "infra_error"
    assert rec.success is None and rec.damage_free is None
    assert rec.infra_error_reason.startswith("lab up: LabError: veth for seed 2")
    assert s.adapters == []  # the agent never saw an interface
    assert s.world.labs[0].downs == 1


def test_broken_baseline_is_infra_error(spec, tmp_path):
    s = Setup(World(broken_baseline={3}))
    rec = run_one(spec, "a1", 3, tmp_path, deps=s.deps())
    assert rec.label == "infra_error"
    assert "baseline invariants failed" in rec.infra_error_reason
    assert "tenant-isolation" in rec.infra_error_reason and "bgp-up" in rec.infra_error_reason
    assert s.adapters == [] and s.world.up_labs == []


def test_observer_fault_during_grading_is_infra_error(spec, tmp_path):
    s = Setup(World(observer_fails={1}))
    rec = run_one(spec, "a1", 1, tmp_path, deps=s.deps())
    assert rec.label == "infra_error" and rec.infra_error_reason.startswith(
        "grading: ObserverError"
    )
    assert s.world.up_labs == []


def test_teardown_failure_keeps_verdict_and_is_recorded(spec, tmp_path):
    s = Setup(World())
    deps = s.deps()

    def bad_down_lab(topo):
        lab = s.world.make_lab(topo)
        lab.fail_down = LabError("netns busy")
        return lab

    deps.make_lab = bad_down_lab
    rec = run_one(spec, "a0", 1, tmp_path, deps=deps)
    assert rec.label == "clean_success"
    assert rec.teardown_error == "LabError: netns busy"


def test_keyboard_interrupt_downs_the_lab_and_propagates(spec, tmp_path):
    s = Setup(World(), {("a0", 1): "interrupt"})
    with pytest.raises(KeyboardInterrupt):
        run_one(spec, "a0", 1, tmp_path, deps=s.deps())
    assert s.world.labs[0].downs == 1 and s.adapters[0].closed


# --- case 9: a campaign with an infra failure and an agent crash --------------------------------------


def test_case9_each_run_one_state_infra_excluded_and_single_runs_agree(spec, tmp_path):
    policy = {("a1", 2): "crash", ("a1+bl", 3): "damage", ("a0", 3): "fail"}
    s = Setup(World(), policy)
    deps = s.deps()

    def FailingLab(topo, world):  # noqa: N802
        lab = world.make_lab(topo)
        lab.fail_up = LabError("bgp session e1 -> 100.64.255.1 Active, expected Established")
        return lab

    # exactly one run's lab fails to start: the 2nd run of the plan, (seed 1, cell a1)
    order = plan(spec)
    assert order[1] == (1, "a1", {})
    counter = {"i": 0}

    def make_lab_by_order(topo):
        counter["i"] += 1
        return FailingLab(topo, s.world) if counter["i"] == 2 else FakeLab(topo, s.world)

    deps.make_lab = make_lab_by_order
    out = tmp_path / "res"
    res = run_campaign(spec, out, progress=False, deps=deps)
    assert not res.interrupted
    recs = by_id(read_runs(out))
    assert len(recs) == 9  # 3 seeds x 3 cells, each exactly one record
    lines = (out / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 9 and len({json.loads(x)["run_id"] for x in lines}) == 9
    states = {rid: r.label for rid, r in recs.items()}
    assert states["a1-onboard-site-s1"] == "infra_error"
    assert states["a1-onboard-site-s2"] == "clean_failure"  # agent crash: graded
    assert recs["a1-onboard-site-s2"].agent_error.startswith("RuntimeError")
    assert states["a1_blocklist-onboard-site-s3"] == "destructive_failure"
    assert states["a0-onboard-site-s3"] == "clean_failure"
    assert sum(1 for v in states.values() if v == "clean_success") == 5
    assert s.world.up_labs == [] and all(lab.downs == 1 for lab in s.world.labs)

    # denominators: a1 has 2 valid runs (seed 1 excluded), 1 success
    summ = load_summary(out)
    a1 = next(c for c in summ.cells if c.name == "a1")
    assert (a1.success.k, a1.success.n) == (1, 2)
    assert [r.run_id for r in a1.infra] == ["a1-onboard-site-s1"]
    # pairs vs a0 exclude seed 1 for a1
    pa1 = next(p for p in summ.paired if p.cell == "a1")
    assert pa1.pairs == 2
    md = (out / "summary.md").read_text()
    assert "a1-onboard-site-s1" in md and "bgp session e1 -> 100.64.255.1 Active" in md
    assert "| a1 | a1 | - | 2 | 1 | 1/2 (0.50) |" in md

    # running any single run alone gives the same label as inside the campaign
    for seed, cell, _stress in order:
        rid = f"{cell.replace('+', '_')}-onboard-site-s{seed}"
        s_alone = Setup(World(), policy)
        d_alone = s_alone.deps()
        if (seed, cell) == (1, "a1"):
            d_alone.make_lab = lambda topo, w=s_alone.world: FailingLab(topo, w)
        alone = run_one(spec, cell, seed, tmp_path / "alone", deps=d_alone)
        assert alone.run_id == rid
        assert alone.label == recs[rid].label, rid
        assert alone.success == recs[rid].success and alone.damage_free == recs[rid].damage_free


# --- resume, truncation, Ctrl-C ---------------------------------------------------------------------


def test_ctrl_c_keeps_finished_runs_and_resume_completes(spec, tmp_path, capsys):
    from rich.console import Console

    s = Setup(World(), {("a1", 2): "interrupt"})
    out = tmp_path / "res"
    con = Console(file=open(tmp_path / "console.txt", "w"), width=200)
    res = run_campaign(
        spec, out, progress=True, deps=s.deps(), source="campaigns/t.yaml", console=con
    )
    con.file.close()
    assert res.interrupted
    kept = read_runs(out)
    assert [r.run_id for r in kept] == [
        "a0-onboard-site-s1",
        "a1-onboard-site-s1",
        "a1_blocklist-onboard-site-s1",
        "a0-onboard-site-s2",
    ]
    assert s.world.up_labs == []
    assert (out / "summary.md").exists()
    text = (tmp_path / "console.txt").read_text()
    assert f"ani campaign run campaigns/t.yaml --resume {out}" in text.replace("\n", "")

    # resume: only the 5 missing runs execute (the interrupted one included)
    s2 = Setup(World())
    res2 = run_campaign(spec, out, resume=True, progress=False, deps=s2.deps())
    assert not res2.interrupted
    assert len(res2.skipped) == 4 and len(res2.ran) == 5
    assert len(s2.world.labs) == 5
    assert sorted(r.run_id for r in read_runs(out)) == sorted(
        f"{p.cell.replace('+', '_')}-onboard-site-s{p.seed}" for p in plan(spec)
    )


def test_resume_ignores_truncated_last_line(spec, tmp_path):
    s = Setup(World())
    out = tmp_path / "res"
    spec1 = spec.model_copy(update={"variants": 1})
    run_campaign(spec1, out, progress=False, deps=s.deps())
    runs = out / "runs.jsonl"
    good = runs.read_text()
    runs.write_text(
        good + '{"run_id": "a0-onboard-site-s2", "campaign": "t", "ce'
    )  # interrupted write
    with pytest.warns(UserWarning, match="truncated last line"):
        assert len(read_runs(out)) == 3
    with pytest.warns(UserWarning, match="truncated") as got:
        res = run_campaign(spec, out, resume=True, progress=False, deps=Setup(World()).deps())
    # one warning for the one line (it is moved aside), not also "ignoring" it first
    assert [str(w.message) for w in got] == [f"{runs}: moving a truncated last line to runs.jsonl.partial"]
    assert len(res.ran) == 6
    lines = runs.read_text().splitlines()
    assert len(lines) == 9 and all(json.loads(x)["run_id"] for x in lines)
    assert (out / "runs.jsonl.partial").read_text().startswith('{"run_id": "a0-onboard-site-s2"')


def test_resume_reruns_only_infra_errors(spec, tmp_path):
    """--resume runs again the runs that ended as infrastructure errors (the host failed: they
    have no verdict) and keeps every graded run."""
    out = tmp_path / "res"
    run_campaign(spec, out, progress=False, deps=Setup(World(fail_up={2})).deps())
    assert sum(r.label == "infra_error" for r in read_runs(out)) == 3
    res = run_campaign(spec, out, resume=True, progress=False, deps=Setup(World()).deps())
    assert sorted(r.run_id for r in res.ran) == [
        "a0-onboard-site-s2",
        "a1-onboard-site-s2",
        "a1_blocklist-onboard-site-s2",
    ]
    assert len(res.skipped) == 6 and res.infra == []
    final = read_runs(out)
    assert len(final) == 9 and all(r.label == "clean_success" for r in final)
    res = run_campaign(spec, out, resume=True, progress=False, deps=Setup(World()).deps())
    assert res.ran == []  # nothing left: every run has a verdict


def test_resume_refuses_a_different_spec_and_new_run_refuses_used_folder(spec, tmp_path):
    from ani.errors import CampaignSpecError

    out = tmp_path / "res"
    run_campaign(spec, out, progress=False, deps=Setup(World()).deps())
    with pytest.raises(CampaignSpecError, match="already holds runs"):
        run_campaign(spec, out, progress=False, deps=Setup(World()).deps())
    other = spec.model_copy(update={"task": "other-task"})
    with pytest.raises(CampaignSpecError, match="differs .* in: task"):
        run_campaign(other, out, resume=True, progress=False, deps=Setup(World()).deps())
    with pytest.raises(CampaignSpecError, match="not a campaign results folder"):
        run_campaign(spec, tmp_path, resume=True, progress=False, deps=Setup(World()).deps())
    # more variants on resume is allowed and runs only the new seed
    more = spec.model_copy(update={"variants": 4})
    res = run_campaign(more, out, resume=True, progress=False, deps=Setup(World()).deps())
    assert sorted(r.seed for r in res.ran) == [4, 4, 4]


def test_store_append_is_line_per_record(spec, tmp_path):
    s = Setup(World())
    rec = run_one(spec, "a0", 1, tmp_path, deps=s.deps())
    store = RunStore(tmp_path / "st")
    store.append(rec)
    store.append(rec.model_copy(update={"run_id": "x"}))
    assert [r.run_id for r in store.records()] == [rec.run_id, "x"]
    assert (tmp_path / "st" / "runs.jsonl").read_text().count("\n") == 2


# --- config errors before any lab; live events ------------------------------------------------------


def test_bad_agent_or_task_fails_before_any_lab(spec, tmp_path):
    from ani.errors import ConfigError, TaskError

    s = Setup(World())
    deps = s.deps()

    def bad_agent(cfg):
        raise ConfigError("agent.kind: unknown agent kind 'gpt'")

    deps.create_agent = bad_agent
    with pytest.raises(ConfigError, match="unknown agent kind"):
        run_campaign(spec, tmp_path / "r1", progress=False, deps=deps)
    assert s.world.labs == []
    assert not (tmp_path / "r1" / "runs.jsonl").exists()

    class BadTask:
        @staticmethod
        def variant(scenario, seed):
            if seed == 3:
                raise TaskError("onboard-site: seed 3 exhausts the prefix pool")
            return FakeVariant(seed)

    deps = s.deps()
    deps.get_task_class = lambda name: BadTask
    with pytest.raises(TaskError, match="seed 3"):
        run_campaign(spec, tmp_path / "r2", progress=False, deps=deps)
    assert s.world.labs == []  # the failing seed 3 was found before seed 1 ran


def test_on_event_sees_each_call_while_the_run_is_live(spec, tmp_path):
    s = Setup(World(), {("a0", 1): "fail"})
    seen = []

    def hook(ev):
        seen.append((ev["tool"], ev["ok"], s.world.labs[-1].running))

    rec = run_one(spec, "a0", 1, tmp_path, deps=s.deps(), on_event=hook)
    assert seen == [("show", True, True), ("bad", False, True), ("bad", False, True)]
    assert rec.tool_calls == 3


def test_rerun_replaces_a_partial_trajectory(spec, tmp_path):
    s = Setup(World())
    traj = tmp_path / "trajectories" / "a0-onboard-site-s1.jsonl"
    traj.parent.mkdir(parents=True)
    traj.write_text('{"event": "tool_call", "ok": false, "tool": "stale"}\n')
    rec = run_one(spec, "a0", 1, tmp_path, deps=s.deps())
    lines = [json.loads(x) for x in traj.read_text().splitlines()]
    assert [e["tool"] for e in lines] == ["show", "set"] and rec.tool_errors == 0
    assert all(e["level"] == "a0" for e in lines)


def test_harness_fault_mid_campaign_keeps_runs_and_report(spec, tmp_path, monkeypatch):
    s = Setup(World())
    deps = s.deps()
    n = {"i": 0}

    def flaky_lab(topo):
        n["i"] += 1
        if n["i"] == 3:
            raise MemoryError("out of memory in the harness")  # not a LabError: a bug-like fault
        return FakeLab(topo, s.world)

    deps.make_lab = flaky_lab
    out = tmp_path / "res"
    res = run_campaign(spec, out, progress=False, deps=deps)
    # a fault while building the lab is an infrastructure error of that run, not a crash
    recs = by_id(read_runs(out))
    assert recs["a1_blocklist-onboard-site-s1"].infra_error_reason.startswith("lab up: MemoryError")
    assert len(res.ran) == 9

    def broken_store_append(self, record):
        raise OSError("disk full")

    out2 = tmp_path / "res2"
    monkeypatch.setattr(RunStore, "append", broken_store_append)
    with pytest.raises(OSError, match="disk full"):
        run_campaign(spec, out2, progress=False, deps=Setup(World()).deps())
    assert (out2 / "summary.md").exists()


# --- ani run (CLI) with the fakes ----------------------------------------------------------------


@pytest.mark.parametrize(
    "world,policy,code,verdict",
    [
        (World(), {}, 0, "verdict: clean_success"),
        (World(), {("a0", 4): "crash"}, 1, "verdict: clean_failure"),
        (World(fail_up={4}), {}, 3, "verdict: infra_error (lab up: LabError: veth for seed 4"),
    ],
)
def test_ani_run_prints_calls_and_verdict(tmp_path, monkeypatch, world, policy, code, verdict):
    from typer.testing import CliRunner

    import ani.campaign.runner as runner_mod
    from ani.cli import app

    s = Setup(world, policy)
    monkeypatch.setattr(runner_mod, "RunnerDeps", lambda: s.deps())
    scen = tmp_path / "scen.yaml"
    scen.write_text("fake: true\n")
    out = tmp_path / "out"
    args = ["run", "--scenario", str(scen), "--seed", "4", "--level", "a0", "--out", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == code, res.output
    assert verdict in res.output
    if code != 3:
        assert 'show({"device": "e1"}) -> ok' in res.output
        assert "hidden tests: " in res.output
    rec = json.loads((out / "run.json").read_text())
    assert rec["run_id"] == "a0-onboard-site-s4" and verdict.split()[1] == rec["label"]
    assert s.world.up_labs == []


def test_resume_refuses_a_changed_scenario(spec, tmp_path):
    from ani.errors import CampaignSpecError

    out = tmp_path / "res"
    run_campaign(
        spec.model_copy(update={"variants": 1}), out, progress=False, deps=Setup(World()).deps()
    )
    s = Setup(World())
    deps = s.deps()

    class Edited(FakeScenario):
        hash = "scen-hash-2"

    deps.load_scenario = lambda path: Edited()
    with pytest.raises(CampaignSpecError, match="scenario file changed"):
        run_campaign(spec, out, resume=True, progress=False, deps=deps)
    assert s.world.labs == [] and len(read_runs(out)) == 3
    assert json.loads((out / "spec.json").read_text())["variants"] == 1  # untouched by the refusal


# --- property: every run ends in exactly one state, the one the rules give ----------------------

ACTIONS = ["solve", "solve_damage", "fail", "damage", "crash", "crash_after_solve"]
EXPECTED = {
    "solve": "clean_success",
    "solve_damage": "dangerous_success",
    "fail": "clean_failure",
    "damage": "destructive_failure",
    "crash": "clean_failure",
    "crash_after_solve": "clean_success",
}


def test_every_run_ends_in_the_state_the_rules_give(spec, monkeypatch):
    import tempfile

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ani.campaign import loop

    # no report.html for these 25 campaigns: its plots were 87 % of this test's time (about 1.3
    # CPU-s a page); the page's own tests are test_html_report*.py, and summary.md is still written
    monkeypatch.setattr(loop, "write_html_or_warn", lambda out, console: None)

    seeds = st.sets(st.integers(1, 3), max_size=2)
    keys = [(k, seed) for k in ("a0", "a1", "a1+bl") for seed in (1, 2, 3)]

    @settings(max_examples=25, deadline=None)
    @given(seeds, seeds, seeds, st.fixed_dictionaries({k: st.sampled_from(ACTIONS) for k in keys}))
    def check(fail_up, broken, obs_fail, policy):
        s = Setup(World(fail_up, broken, obs_fail), policy)
        with tempfile.TemporaryDirectory() as d:
            run_campaign(spec, d, progress=False, deps=s.deps(), console=_quiet())
            recs = read_runs(d)
        assert len(recs) == 9 and len({r.run_id for r in recs}) == 9
        for r in recs:
            key = (r.level + ("+bl" if r.blocklist else ""), r.seed)
            if r.seed in fail_up or r.seed in broken or r.seed in obs_fail:
                assert r.label == "infra_error" and r.infra_error_reason
                assert r.success is None and r.damage_free is None
            else:
                assert r.label == EXPECTED[policy[key]], (key, policy[key])
                assert r.infra_error_reason is None
                assert (r.agent_error is not None) == policy[key].startswith("crash")
        assert s.world.up_labs == []

    check()


def _quiet():
    import io

    from rich.console import Console

    return Console(file=io.StringIO())


# --- superseded invariants (TaskVariant.superseded) ---------------------------------------------


class MovedSiteScenario:
    """A baseline whose 'moved-site' invariant fails until the agent acts (the site flag)."""

    hash = "scen-hash-2"
    invariants = [FCheck("moved-site", "site", True), FCheck("bgp-up", "damage", False)]


class SupersedingVariant(FakeVariant):
    def __init__(self, seed: int, superseded: list[str]) -> None:
        super().__init__(seed)
        self.superseded = superseded


class RecordingObserver(FakeObserver):
    calls: list[list[str]] = []

    def evaluate(self, checks, bound_s=None):
        RecordingObserver.calls.append([c.name for c in checks])
        return super().evaluate(checks, bound_s)


def _superseding_deps(s: Setup, superseded: list[str]) -> RunnerDeps:
    deps = s.deps()
    deps.load_scenario = lambda path: MovedSiteScenario()
    deps.get_task_class = lambda name: type("T", (), {"variant": staticmethod(lambda sc, seed: SupersedingVariant(seed, superseded))})
    deps.make_observer = RecordingObserver
    return deps


def test_superseded_invariants_are_left_out_of_the_baseline_and_the_damage_verdict(spec, tmp_path):
    RecordingObserver.calls = []
    s = Setup(World(), {("a1", 1): "solve"})
    rec = run_one(spec, "a1", 1, tmp_path, deps=_superseding_deps(s, ["moved-site", "not-an-invariant"]))
    assert rec.label == "clean_success", rec.infra_error_reason
    assert RecordingObserver.calls == [["bgp-up"], ["site-reach", "bgp-up"]]
    assert [i.name for i in rec.invariants] == ["bgp-up"]
    assert rec.superseded == ["moved-site"]  # reported as superseded, a name the scenario lacks is not
    assert RunRecord.model_validate_json(rec.model_dump_json()).superseded == ["moved-site"]


def test_without_superseding_the_same_baseline_is_an_infra_error(spec, tmp_path):
    s = Setup(World(), {("a1", 1): "solve"})
    rec = run_one(spec, "a1", 1, tmp_path, deps=_superseding_deps(s, []))
    assert rec.label == "infra_error" and "moved-site" in rec.infra_error_reason
    assert rec.superseded == []


def test_a_superseded_invariant_broken_after_the_run_is_not_damage(spec, tmp_path):
    # the agent fails (the site flag stays off): the superseded invariant fails too, but only
    # the hidden test says so; damage comes from the invariants that stay
    s = Setup(World(), {("a1", 1): "fail"})
    rec = run_one(spec, "a1", 1, tmp_path, deps=_superseding_deps(s, ["moved-site"]))
    assert (rec.label, rec.success, rec.damage_free) == ("clean_failure", False, True)


def test_grading_waits_for_the_longest_route_map_delay_timer_of_the_scenario():
    """A changed prefix-list / route-map reaches existing routes when bgpd's route-map delay
    timer fires: grading earlier would let an invariant pass on routes about to be withdrawn."""
    from ani.campaign.runner import FRR_ROUTE_MAP_DELAY_S, PROPAGATION_S, settle_seconds
    from ani.scenario import load_scenario

    s = load_scenario("scenarios/brownfield-small.yaml")  # every router sets the timer to 1 s
    assert settle_seconds(s) == 1 + PROPAGATION_S
    cfgs = {r: c.model_copy(deep=True) for r, c in s.device_configs.items()}
    cfgs["e2"].bgp_route_map_delay_timer = None  # FRR's own default applies

    class Fake:
        device_configs = cfgs

    assert settle_seconds(Fake()) == FRR_ROUTE_MAP_DELAY_S + PROPAGATION_S
    for c in cfgs.values():
        c.bgp = None
    assert settle_seconds(Fake()) == 0.0  # no BGP: nothing to wait for
    assert settle_seconds(object()) == 0.0  # a scenario without device configs (fakes)


def test_the_campaigns_labs_share_one_vtysh_cache_removed_at_its_end(spec, tmp_path, monkeypatch):
    # ani.host.vtysh_cache.scoped around the loop: every run's lab is made with the variable
    # naming one directory, which goes at the end (the test session's own is unset here)
    from ani.host import vtysh_cache

    monkeypatch.delenv(vtysh_cache.ENV, raising=False)
    s = Setup(World())
    deps = s.deps()
    seen: list[str | None] = []

    def make_lab(topo):
        seen.append(os.environ.get(vtysh_cache.ENV))
        return FakeLab(topo, s.world)

    deps.make_lab = make_lab
    run_campaign(spec, tmp_path / "res", progress=False, deps=deps)
    assert len(seen) == 9 and len(set(seen)) == 1 and seen[0] and seen[0].startswith("/tmp/ani-vtysh-")
    assert vtysh_cache.ENV not in os.environ and not Path(seen[0]).exists()
