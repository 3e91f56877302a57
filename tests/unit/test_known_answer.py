"""The known answer's record keys and measures (ani.campaign.known_answer, issue 25 §3): the
extension on the generated default brownfield (scenario seed 7) with a test kind registered for
the test, the measures on hand-built RunRecords (the real model)."""

from __future__ import annotations

from datetime import UTC, datetime
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pytest

from ani.agents.mistakes import Made, MistakeKind, footprint, register_mistake, unregister_mistake
from ani.campaign.execute import RunContext
from ani.campaign.extensions import KnownAnswer, extensions_for
from ani.campaign.known_answer import (
    ADDED_KEYS,
    annotate,
    explain_pair,
    flagged,
    known_answer,
    mistake_of,
)
from ani.campaign.observe_run import RunObservation
from ani.campaign.results import CheckOutcome, RunRecord, label_for
from ani.campaign.stats import clopper_pearson
from ani.device.model import PrefixListEntry
from ani.trajectory import Trajectory

T0 = datetime(2026, 1, 1, tzinfo=UTC)


# --- the record, on the default brownfield -----------------------------------------------------


class _Leak(MistakeKind):
    """A test kind: a tenant's prefix-list entry leaks into PL-TENANTS on one edge; expected to
    break the invariants tagged with that tenant (from the invariants' own service tags)."""

    name = "test-leak"
    layer = "device"
    levels = frozenset({"a0", "a1"})
    summary = "a leaked entry"

    def expected_breaks(self, made, invariants, before):
        return [c.name for c in invariants if getattr(c, "service", None) == f"tenant:{made.target['tenant']}"]


@pytest.fixture(scope="module")
def brownfield():
    from ani.intents.inventory import network_configs
    from ani.scenario.generate import generate_scenario

    s = generate_scenario("scenarios/default.yaml", seed=7)
    return s, network_configs(s)


@pytest.fixture
def leak_kind():
    register_mistake(_Leak)
    yield
    unregister_mistake(_Leak.name)


def _leaked(before):
    """(made dump, the mistaken configs): an extra entry on e1."""
    cfg = before["e1"].model_copy(deep=True)
    cfg.prefix_lists["PL-TENANTS"].entries.append(
        PrefixListEntry(seq=9999, action="permit", prefix=IPv4Network("203.0.113.0/24")))
    mistaken = {"e1": cfg.canonical()}
    fp = footprint(before, {}, mistaken)
    made = Made(kind="test-leak", expressed=True, note="leaked", target={"router": "e1", "tenant": "red"},
                footprint=fp)
    return made.model_dump(), mistaken


def _ctx(tmp_path: Path, scenario, made: dict | None, initial, final, invariants: list[CheckOutcome],
         fault_damage: list[str] | None = None) -> RunContext:
    traj = Trajectory("r1", "a1")
    obs = RunObservation(None, traj, "a1", None)
    obs.initial, obs.final = initial, final
    if fault_damage is not None:
        obs._fields["fault_damage"] = fault_damage
    ctx = RunContext(plan=None, workdir=tmp_path, deps=None)
    ctx.invariants, ctx.trajectory = list(scenario.invariants), traj
    ctx.state.update(observation=obs, mistake=made, invariants=invariants)
    return ctx


def _outcomes(scenario, failed: set[str]) -> list[CheckOutcome]:
    return [CheckOutcome(name=c.name, passed=c.name not in failed, service=getattr(c, "service", None))
            for c in scenario.invariants]


def test_extension_adds_the_known_answer_to_the_agents_mistake(tmp_path, brownfield, leak_kind):
    s, before = brownfield
    made, mistaken = _leaked(before)
    assert made["footprint"] == {"e1": ["+ ip prefix-list PL-TENANTS seq 9999 permit 203.0.113.0/24"]}
    red = [c.name for c in s.invariants if getattr(c, "service", None) == "tenant:red"]
    assert red  # the brownfield has red's invariants: the expected breaks are not empty by chance
    ctx = _ctx(tmp_path, s, dict(made), before, {**before, **mistaken}, _outcomes(s, set(red)))
    KnownAnswer().graded(ctx)
    m = ctx.state["mistake"]
    assert {k: m[k] for k in made} == made  # the agent's keys untouched
    assert m["expected_breaks"] == red and m["flagged"] == red
    assert m["reached"] is True and m["prevented"] is False


def test_extension_prevented_when_the_footprint_is_not_in_the_network(tmp_path, brownfield, leak_kind):
    s, before = brownfield
    made, _ = _leaked(before)
    ctx = _ctx(tmp_path, s, dict(made), before, dict(before), _outcomes(s, set()))
    KnownAnswer().graded(ctx)
    m = ctx.state["mistake"]
    assert m["reached"] is False and m["prevented"] is True and m["flagged"] == []


def test_extension_without_final_read_or_mistake(tmp_path, brownfield, leak_kind):
    s, before = brownfield
    made, _ = _leaked(before)
    ctx = _ctx(tmp_path, s, dict(made), None, None, _outcomes(s, set()))
    KnownAnswer().graded(ctx)
    assert ctx.state["mistake"]["reached"] is None and ctx.state["mistake"]["prevented"] is False
    none = _ctx(tmp_path, s, None, before, before, _outcomes(s, set()))
    KnownAnswer().graded(none)
    assert none.state["mistake"] is None


def test_extension_unknown_kind_is_said_and_never_fails_the_run(tmp_path, brownfield):
    s, before = brownfield
    made, mistaken = _leaked(before)  # test-leak is not registered here
    ctx = _ctx(tmp_path, s, dict(made), before, {**before, **mistaken}, _outcomes(s, set()))
    KnownAnswer().graded(ctx)
    assert ctx.state["mistake"]["expected_breaks"] is None and ctx.state["mistake"]["reached"] is True
    notes = [e for e in ctx.trajectory.events if e.get("event") == "known_answer_failed"]
    assert notes and "unknown mistake kind 'test-leak'" in notes[0]["reason"]


def test_extension_not_expressed_has_no_expected_breaks(tmp_path, brownfield, leak_kind):
    s, before = brownfield
    made = Made(kind="test-leak", expressed=False, note="a3t cannot", target={"tenant": "red"}).model_dump()
    ctx = _ctx(tmp_path, s, made, before, before, _outcomes(s, set()))
    KnownAnswer().graded(ctx)
    m = ctx.state["mistake"]
    assert m["expected_breaks"] == [] and m["reached"] is None and m["prevented"] is False


def test_flagged_leaves_out_what_a_fault_explains(tmp_path, brownfield, leak_kind):
    s, before = brownfield
    made, mistaken = _leaked(before)
    names = [c.name for c in s.invariants][:2]
    ctx = _ctx(tmp_path, s, dict(made), before, {**before, **mistaken}, _outcomes(s, set(names)),
               fault_damage=names[:1])
    KnownAnswer().graded(ctx)
    assert ctx.state["mistake"]["flagged"] == names[1:]


def test_a_partial_application_refused_whole_is_prevented_not_reached(tmp_path, brownfield, leak_kind):
    """A footprint of left-out lines only (the correct change's lines on every router but the
    first) holds in an unchanged network too: the rest of the change (the variant's reference
    end state) decides."""
    from ani.agents.mistakes import reached as footprint_holds
    from ani.agents.scripted_tasks import changes_for
    from ani.intents import compile_changes
    from ani.scenario import get_task_class

    s, before = brownfield
    variant = get_task_class("onboard-site").variant(s, 1)
    after = compile_changes(changes_for(variant.agent_view(), before), before).configs
    first = sorted(after)[0]
    assert len(after) > 1
    fp = footprint(before, after, {first: after[first]})
    assert fp and all(ln.startswith("- ") for lines in fp.values() for ln in lines)
    made = Made(kind="test-leak", expressed=True, note="first router only", target={"tenant": "red"},
                footprint=fp).model_dump()
    assert footprint_holds(fp, before) is True  # the footprint alone cannot tell "refused" from "reached"
    refused = _ctx(tmp_path, s, dict(made), before, dict(before), _outcomes(s, set()))
    refused.variant = variant
    KnownAnswer().graded(refused)
    assert refused.state["mistake"]["reached"] is False and refused.state["mistake"]["prevented"] is True
    went = _ctx(tmp_path, s, dict(made), before, {**before, first: after[first]}, _outcomes(s, set()))
    went.variant = variant
    KnownAnswer().graded(went)
    assert went.state["mistake"]["reached"] is True and went.state["mistake"]["prevented"] is False
    whole = _ctx(tmp_path, s, dict(made), before, {**before, **after}, _outcomes(s, set()))
    whole.variant = variant
    KnownAnswer().graded(whole)
    assert whole.state["mistake"]["reached"] is False  # the correct change, not the mistake


def test_known_answer_is_an_extension_of_every_run_after_the_observation():
    class Plan:
        def fault_schedule(self):
            return []

    names = [type(e).__name__ for e in extensions_for(RunContext(plan=Plan(), workdir=Path("."), deps=None))]
    assert names.index("KnownAnswer") > names.index("Observation") and names[-1] == "KnownAnswer"


def test_annotate_is_pure():
    made = {"kind": "k", "expressed": True, "note": "n", "footprint": {}}
    out = annotate(made, expected=["x"], final=None, invariants=[CheckOutcome(name="x", passed=False)])
    assert set(ADDED_KEYS) <= set(out) and "reached" not in made
    assert out["flagged"] == ["x"] and out["reached"] is None and out["prevented"] is False


def test_flagged_order_and_faults():
    inv = [CheckOutcome(name=n, passed=p) for n, p in (("a", False), ("b", True), ("c", False))]
    assert flagged(inv) == ["a", "c"] and flagged(inv, ["a"]) == ["c"]


# --- the measures, on hand-built records ---------------------------------------------------------


def mistake(kind: str, *, expressed: bool = True, reached: bool | None = True, expected: list[str] | None = None,
            flagged_: list[str] | None = None) -> dict[str, Any]:
    return {"kind": kind, "expressed": expressed, "note": "", "target": {}, "footprint": {}, "changes": [],
            "expected_breaks": ([] if not expressed else expected), "reached": reached if expressed else None,
            "flagged": list(flagged_ or []), "prevented": expressed and reached is False}


def rec(cell: str, seed: int, *, damage_free: bool = True, m: dict | None = None, failed: tuple[str, ...] = (),
        label: str | None = None, fault_damage: tuple[str, ...] = ()) -> RunRecord:
    invalid = label in ("infra_error", "environment_invalid")
    return RunRecord(run_id=f"{cell}-t-s{seed}", campaign="c", cell=cell, level=cell[:3].rstrip("-"), task="t",
                     seed=seed, label=label or label_for(True, damage_free), success=None if invalid else True,
                     damage_free=None if invalid else damage_free, started=T0, ended=T0, mistake=m,
                     invariants=[CheckOutcome(name=n, passed=n not in failed) for n in ("inv-1", "inv-2", *failed)],
                     fault_damage=list(fault_damage))


def campaign() -> list[RunRecord]:
    """Cells a0 and a3t over 6 seeds: seeds 1-3 carry near-miss (a0: reached, damage; a3t:
    prevented), seeds 4-5 a device kind a3t cannot express (a0: reached; seed 5's observer
    missed one invariant), seed 6 no mistake (a0's run flagged anyway: a false alarm)."""
    runs = []
    for seed in (1, 2, 3):
        runs.append(rec("a0", seed, damage_free=False, failed=("inv-x",),
                        m=mistake("near-miss", expected=["inv-x"], flagged_=["inv-x"])))
        runs.append(rec("a3t", seed, m=mistake("near-miss", reached=False, expected=["inv-x"])))
    runs.append(rec("a0", 4, damage_free=False, failed=("inv-y",),
                    m=mistake("dev-slip", expected=["inv-y"], flagged_=["inv-y"])))
    runs.append(rec("a0", 5, damage_free=False, failed=("inv-y",),
                    m=mistake("dev-slip", expected=["inv-y", "inv-z"], flagged_=["inv-y"])))
    for seed in (4, 5):
        runs.append(rec("a3t", seed, m=mistake("dev-slip", expressed=False)))
    runs.append(rec("a0", 6, damage_free=False, failed=("inv-1",)))
    runs.append(rec("a3t", 6))
    runs.append(rec("a3t", 7, label="infra_error", m=mistake("near-miss")))  # no verdict: left out
    return runs


def test_measures_per_level_and_kind():
    ka = known_answer(campaign(), ["a0", "a3t"])
    assert ka.mistake_runs == 10 and ka.kinds == ["dev-slip", "near-miss"]
    rows = {(r.row, r.kind): r for r in ka.rows}
    assert list(rows) == [("a0", "dev-slip"), ("a0", "near-miss"), ("a3t", "dev-slip"), ("a3t", "near-miss")]
    a0 = rows["a0", "near-miss"]
    assert (a0.runs, a0.expressed, a0.prevented, a0.reached, a0.undetermined) == (3, 3, 0, 3, 0)
    assert (a0.sensitivity.k, a0.sensitivity.n, a0.exactness.k, a0.exactness.n) == (3, 3, 3, 3)
    a3 = rows["a3t", "near-miss"]
    assert (a3.runs, a3.expressed, a3.prevented, a3.reached) == (3, 3, 3, 0)  # the infra_error run left out
    assert (a3.prevented_share.k, a3.prevented_share.n) == (3, 3)
    assert (a3.prevented_share.lo, a3.prevented_share.hi) == tuple(clopper_pearson(3, 3))
    assert a3.sensitivity.n == 0 and a3.sensitivity.text() == "-"  # never reached: no sensitivity to speak of
    slip = rows["a0", "dev-slip"]
    assert (slip.sensitivity.k, slip.sensitivity.n) == (1, 2)  # seed 5 missed inv-z
    assert (slip.sensitivity.lo, slip.sensitivity.hi) == pytest.approx(tuple(clopper_pearson(1, 2)))
    cannot = rows["a3t", "dev-slip"]
    assert (cannot.runs, cannot.expressed, cannot.prevented_share.n, cannot.prevented_share.value) == (2, 0, 0, None)


def test_undetermined_runs_are_left_out_of_the_shares():
    """A repeated change leaves the configuration as the correct change does (empty footprint:
    reached None): neither prevented nor reached, and not in the shares' denominator."""
    runs = [rec("a1", 1, m=mistake("double", reached=None)), rec("a1", 2, m=mistake("double", reached=False)),
            rec("a1", 3, m=mistake("double", reached=True, expected=[]))]
    (row,) = known_answer(runs).rows
    assert (row.expressed, row.prevented, row.reached, row.undetermined) == (3, 1, 1, 1)
    assert (row.prevented_share.k, row.prevented_share.n, row.reached_share.n) == (1, 2, 2)
    assert row.sensitivity.n == 0 and (row.exactness.k, row.exactness.n) == (1, 1)  # nothing expected, nothing flagged
    (only,) = known_answer(runs[:1]).rows
    assert only.prevented_share.n == 0 and only.prevented_share.text() == "-"


def test_measures_pooled_and_specificity():
    ka = known_answer(campaign(), ["a0", "a3t"])
    assert (ka.sensitivity.k, ka.sensitivity.n) == (4, 5) and (ka.exactness.k, ka.exactness.n) == (4, 5)
    spec = {x.row: x for x in ka.specificity}
    # a0: seed 6 only (no mistake, flagged: a false alarm); a3t: seeds 4-5 (not expressed) and 6
    assert (spec["a0"].runs, spec["a0"].clean) == (1, 0)
    assert (spec["a3t"].runs, spec["a3t"].clean) == (3, 3)
    assert (ka.overall_specificity.k, ka.overall_specificity.n) == (3, 4)
    assert (ka.overall_specificity.lo, ka.overall_specificity.hi) == pytest.approx(tuple(clopper_pearson(3, 4)))


def test_specificity_leaves_out_what_a_fault_explains():
    runs = [rec("a1", 1, failed=("inv-f",), fault_damage=("inv-f",))]  # damage-free: the fault's
    ka = known_answer(runs)
    assert (ka.overall_specificity.k, ka.overall_specificity.n) == (1, 1)


def test_measures_without_mistake_runs():
    ka = known_answer([rec("a0", 1), rec("a1", 1)])
    assert ka.mistake_runs == 0 and ka.rows == [] and ka.sensitivity.n == 0
    assert (ka.overall_specificity.k, ka.overall_specificity.n) == (2, 2)
    empty = known_answer([])
    assert empty.rows == [] and empty.specificity == [] and empty.overall_specificity.text() == "-"


def test_mistake_of_needs_a_kind():
    assert mistake_of(rec("a0", 1)) is None
    assert mistake_of(rec("a0", 1, m={"note": "none applicable"})) is None
    assert mistake_of(rec("a0", 1, m=mistake("k")))["kind"] == "k"


def test_explain_pair_by_kind():
    runs = campaign()
    pk = explain_pair([r for r in runs if r.cell == "a0"], [r for r in runs if r.cell == "a3t"],
                      cell="a3t", reference="a0")
    assert (pk.pairs, pk.b, pk.c) == (6, 0, 6)  # seed 7 is a3t's infra_error: not a pair
    assert pk.p == pytest.approx(0.03125)
    assert pk.cell_only == {"dev-slip": {"not expressible": 2}, "near-miss": {"prevented": 3},
                            "no mistake": {"no mistake": 1}}
    assert pk.reference_only == {}


def test_record_keeps_the_mistake_through_json(tmp_path):
    from ani.campaign.results import RunStore, read_runs

    r = rec("a0", 1, m=mistake("near-miss", expected=["inv-x"], flagged_=["inv-x"]))
    RunStore(tmp_path).append(r)
    back = read_runs(tmp_path)[0]
    assert back.mistake == r.mistake and rec("a0", 2).mistake is None


# --- through a whole run (the runner's fakes: no lab) ------------------------------------------


def test_the_agents_mistake_reaches_the_record_with_the_known_answer(tmp_path):
    """AgentRun.mistake -> the run's state -> KnownAnswer after grading -> RunRecord.mistake."""
    from ani.campaign.runner import run_one
    from ani.campaign.spec import parse_spec
    from tests.unit.test_campaign_runner import FakeRun, ScriptAgent, Setup, World

    made = Made(kind="test-leak", expressed=True, note="leaked", target={"tenant": "red"}).model_dump()

    class Mistaken(ScriptAgent):
        def run(self, task, adapter, budget):
            done = super().run(task, adapter, budget)
            return FakeRun(done.stop_reason, done.steps) if task["seed"] == 2 else _with(done, made)

    def _with(done, m):
        out = FakeRun(done.stop_reason, done.steps)
        out.mistake = m  # AgentRun.mistake (i25-core)
        return out

    (tmp_path / "scen.yaml").write_text("fake: true\n")
    spec = parse_spec({"name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": 2, "seed": 1,
                       "cells": [{"name": "a1", "level": "a1"}]}, "test", tmp_path)
    s = Setup(World(), {("a1", 1): "solve_damage"})
    deps = s.deps()
    deps.create_agent = lambda cfg: Mistaken(s.policy)
    rec = run_one(spec, "a1", 1, tmp_path / "out", deps=deps)
    failed = [i.name for i in rec.invariants if not i.passed]
    assert failed and rec.mistake is not None
    assert {k: rec.mistake[k] for k in made} == made
    assert rec.mistake["flagged"] == failed and rec.mistake["prevented"] is False
    assert rec.mistake["expected_breaks"] is None  # test-leak is not registered in this test: said, not guessed
    assert run_one(spec, "a1", 2, tmp_path / "out", deps=deps).mistake is None
