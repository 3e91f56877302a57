"""Campaigns over every factor, on fakes (no lab): the factors ``model`` and ``agent_mode``
(cell agent settings merged onto the campaign's agent), the HAI form, the matched-budget check
(one test per kind of agent setting), the stress grid (plan, run ids, pairing only at the same
seed and stress point), ``--bound`` (rule of three) and cost as a recorded dependent variable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_campaign_design import GenScenario, GenVariant
from test_campaign_runner import FakeAdapter, FakeLab, FakeObserver, World
from typer.testing import CliRunner

from ani.campaign.cli import app
from ani.campaign.loop import check_resume, plan, run_campaign
from ani.campaign.report import load_summary, render_markdown, summarize
from ani.campaign.results import RunRecord, read_runs
from ani.campaign.runner import RunnerDeps, run_one, validate
from ani.campaign.spec import AGENT_MODES, load_spec, parse_spec
from ani.campaign.stats import runs_for_bound
from ani.errors import CampaignSpecError, ConfigError

LLM = {"kind": "llm", "base_url": "http://127.0.0.1:9/v1", "model": "m1", "api_key_env": None}


def data(tmp_path: Path, **over) -> dict:
    (tmp_path / "default.yaml").write_text("manifest: fake\n")
    d = {
        "name": "fac",
        "manifest": "default.yaml",
        "scenario_seed": 7,
        "task": "onboard-site",
        "level": "a3t",
        "variants": 2,
        "seed": 1,
        "factor": "agent_mode",
        "agent": dict(LLM),
        "cells": [{"name": "react", "agent_mode": "react"}, {"name": "pe", "agent_mode": "planner-executor+recovery"}],
    }
    d.update(over)
    return {k: v for k, v in d.items() if v is not None}


def spec_of(tmp_path: Path, **over):
    return parse_spec(data(tmp_path, **over), "c.yaml", tmp_path)


def refused(tmp_path: Path, **over) -> str:
    with pytest.raises(CampaignSpecError) as ei:
        spec_of(tmp_path, **over)
    msg = str(ei.value)
    assert msg.startswith("c.yaml: invalid campaign: "), msg
    return msg


# --- cell agent settings -------------------------------------------------------------------------


def test_a_cells_agent_is_the_campaigns_with_its_override_model_and_mode(tmp_path):
    spec = spec_of(
        tmp_path, factor="model",
        cells=[
            {"name": "m1", "model": "m1"},
            {"name": "m2", "model": "big/m2", "agent": {"base_url": "http://10.0.0.2:8000/v1", "api_key_env": "K2"}},
        ],
    )
    assert spec.agent_of("m1") == {**LLM, "model": "m1"}
    assert spec.agent_of("m2") == {**LLM, "model": "big/m2", "base_url": "http://10.0.0.2:8000/v1", "api_key_env": "K2"}
    assert spec.agent == LLM  # the campaign's block is not changed by a cell
    modes = spec_of(tmp_path, cells=[{"name": m.replace("+", "_"), "agent_mode": m} for m in AGENT_MODES])
    got = [(modes.agent_of(c)["mode"], modes.agent_of(c)["recovery"]) for c in modes.cells]
    assert got == [(m, r) for m in ("single-turn", "react", "planner-executor") for r in (False, True)]


def test_an_unknown_agent_mode_lists_the_known_ones(tmp_path):
    with pytest.raises(CampaignSpecError) as ei:
        spec_of(tmp_path, cells=[{"name": "x", "agent_mode": "reflexion"}])
    assert "cells[0](x).agent_mode: unknown agent mode 'reflexion'; known: single-turn, " \
           "single-turn+recovery, react, react+recovery, planner-executor, planner-executor+recovery" in str(ei.value)


def test_the_llm_agents_defaults_count_as_written(tmp_path):
    # mode react / recovery false written in one cell and left out in the other: the same agent
    spec = spec_of(tmp_path, factor="model", cells=[
        {"name": "a", "model": "m1", "agent": {"max_retries": 4}},  # 4 is LLMConfig's default
        {"name": "b", "model": "m2"},
    ])
    assert [c.name for c in spec.cells] == ["a", "b"]


def test_a_model_given_twice_in_a_cell_is_refused(tmp_path):
    msg = refused(tmp_path, factor="model", cells=[{"name": "a", "model": "m1", "agent": {"model": "m2"}}, {"name": "b"}])
    assert "cells[0](a).model: also given as agent.model; give one" in msg


def test_cells_with_the_same_agent_vary_nothing(tmp_path):
    msg = refused(tmp_path, cells=[{"name": "a", "agent_mode": "react"}, {"name": "b", "agent": {"mode": "react"}}])
    assert "cells: two cells have the same agent_mode (nothing varies between them)" in msg


# --- the matched budget: one kind of setting each --------------------------------------------------

MATCHED = [
    # (factor, cell b's settings, the field named, its kind)
    ("agent_mode", {"agent_mode": "single-turn", "model": "m9"}, "agent.model", "model"),
    ("agent_mode", {"agent_mode": "single-turn", "agent": {"base_url": "http://h:1/v1"}}, "agent.base_url", "model endpoint"),
    ("model", {"model": "m2", "agent_mode": "planner-executor"}, "agent.mode", "agent mode"),
    ("model", {"model": "m2", "agent": {"recovery": True}}, "agent.recovery", "agent mode"),
    ("model", {"model": "m2", "agent": {"system_prompt": "You are terse."}}, "agent.system_prompt", "system prompt"),
    ("model", {"model": "m2", "agent": {"max_completion_tokens": 256}}, "agent.max_completion_tokens", "caps"),
    ("agent_mode", {"agent_mode": "react+recovery", "agent": {"max_recoveries": 9}}, "agent.max_recoveries", "caps"),
    ("model", {"model": "m2", "agent": {"max_retries": 0}}, "agent.max_retries", "retry policy"),
    ("model", {"model": "m2", "agent": {"request_timeout_s": 5}}, "agent.request_timeout_s", "retry policy"),
    ("agent_mode", {"agent_mode": "single-turn", "agent": {"max_observation_chars": 500}}, "agent.max_observation_chars",
     "observation interface"),
    ("model", {"model": "m2", "agent": {"temperature": 0.7}}, "agent.temperature", "sampling"),
    ("model", {"model": "m2", "agent": {"kind": "scripted"}}, "agent.kind", "agent kind"),
    ("agent_mode", {"agent_mode": "single-turn", "agent": {"tool_choice": "required"}}, "agent.tool_choice",
     "model endpoint"),
]


@pytest.mark.parametrize("factor,other,field,kind", MATCHED, ids=[f"{m[0]}-{m[2]}" for m in MATCHED])
def test_the_matched_budget_refuses_a_second_agent_field_and_names_it(tmp_path, factor, other, field, kind):
    first = {"name": "a", "model": "m1"} if factor == "model" else {"name": "a", "agent_mode": "react"}
    msg = refused(tmp_path, factor=factor, cells=[first, {"name": "b", **other}])
    assert f"cells[1](b).{field}: differs from cell 'a' (" in msg, msg
    assert f"but the factor is '{factor}': a matched budget holds the {kind} fixed" in msg, msg
    # the factor itself is never named
    assert ("agent.model:" not in msg) if factor == "model" else ("agent.mode:" not in msg)


@pytest.mark.parametrize("factor,cells,field", [
    ("model", [{"name": "a", "model": "m1"}, {"name": "b", "model": "m2", "level": "a1"}], "level"),
    ("agent_mode", [{"name": "a", "agent_mode": "react"}, {"name": "b", "agent_mode": "single-turn", "task": "change-set"}], "task"),
    ("model", [{"name": "a", "model": "m1"}, {"name": "b", "model": "m2", "form": "ticket"}], "form"),
    ("model", [{"name": "a", "model": "m1"}, {"name": "b", "model": "m2", "density": 9}], "density"),
    ("level", [{"name": "a", "level": "a1"}, {"name": "b", "level": "a2", "model": "m2"}], "agent.model"),
    ("level", [{"name": "a", "level": "a1"}, {"name": "b", "level": "a2", "agent_mode": "single-turn"}], "agent.mode"),
    ("task", [{"name": "a", "task": "onboard-site"}, {"name": "b", "task": "change-set", "agent": {"seed": 2}}], "agent.seed"),
])
def test_the_matched_budget_holds_every_cell_setting_too(tmp_path, factor, cells, field):
    msg = refused(tmp_path, factor=factor, cells=cells)
    assert f"cells[1](b).{field}: differs from cell 'a'" in msg and f"the factor is '{factor}'" in msg, msg


def test_what_the_factor_may_vary_is_accepted(tmp_path):
    spec = spec_of(tmp_path, factor="model", cells=[
        {"name": "a", "model": "m1"},
        {"name": "b", "model": "m2", "agent": {"base_url": "http://10.0.0.2:8000/v1", "api_key_env": "K2",
                                               "tool_choice": "omit"}},
    ])
    assert len(spec.cells) == 2  # the endpoint's tool_choice goes with the endpoint
    # the task factor covers the task class and its HAI form
    tasks = spec_of(tmp_path, factor="task", agent={"kind": "scripted"}, cells=[
        {"name": "intent", "task": "onboard-site"}, {"name": "ticket", "task": "onboard-site", "form": "ticket"},
    ])
    assert [tasks.form_of(c) for c in tasks.cells] == ["intent", "ticket"]


# --- the stress grid --------------------------------------------------------------------------------


def grid(tmp_path: Path, **over):
    base = dict(factor="level", agent={"kind": "scripted"}, level=None,
                cells=[{"name": "a0", "level": "a0"}, {"name": "a1", "level": "a1"}],
                stress={"density": [2, 4], "fault_rate": [0, 0.3]})
    base.update(over)
    return spec_of(tmp_path, **base)


def test_the_grid_plan_is_seeds_x_points_x_cells_seed_major(tmp_path):
    spec = grid(tmp_path)
    points = [{"density": 2, "fault_rate": 0.0}, {"density": 2, "fault_rate": 0.3},
              {"density": 4, "fault_rate": 0.0}, {"density": 4, "fault_rate": 0.3}]
    assert spec.stress_points == points
    assert [type(p["fault_rate"]) for p in spec.stress_points] == [float] * 4  # 0 and 0.0 are one value
    runs = plan(spec)
    assert len(runs) == 2 * 4 * 2
    assert [(r.seed, r.stress, r.cell) for r in runs[:5]] == [
        (1, points[0], "a0"), (1, points[0], "a1"), (1, points[1], "a0"), (1, points[1], "a1"), (1, points[2], "a0")]
    assert {r.seed for r in runs[:8]} == {1}  # seed-major: seed 1 complete before seed 2
    ids = [spec.run_id(r.cell, r.seed, r.stress) for r in runs]
    assert len(set(ids)) == len(ids)
    assert ids[3] == "a1-onboard-site-density2-fault_rate0.3-s1"
    assert spec.fault_rate_of("a0", points[1]) == 0.3 and spec.fault_rate_of("a0", {}) == 0.0


def test_a_swept_task_is_named_once_in_the_run_id(tmp_path):
    spec = grid(tmp_path, task=None, stress={"task": ["onboard-site", "change-set"], "fault_rate": [0.5]})
    assert [spec.run_id(r.cell, r.seed, r.stress) for r in plan(spec)][:4] == [
        "a0-onboard-site-fault_rate0.5-s1", "a1-onboard-site-fault_rate0.5-s1",
        "a0-change-set-fault_rate0.5-s1", "a1-change-set-fault_rate0.5-s1"]


class GridTask:
    """A task class whose variant remembers the form it was asked in."""

    def __init__(self, name: str, forms: list[str]) -> None:
        self.name, self.forms = name, forms

    def variant(self, scenario, seed, form="intent"):
        self.forms.append(form)
        return GenVariant(self.name, scenario, seed)


class GridAgent:
    """Solves every task; level ``damage_level`` damages at density 4 for odd seeds, and at
    density 2 for every seed."""

    name = "fake"

    def __init__(self, config: dict, damage_level: str = "a1") -> None:
        self.config, self.damage_level = config, damage_level

    def run(self, task, adapter, budget):
        adapter.call("set", {"flag": "site"})
        d = task["density"]
        if adapter.level == self.damage_level and (d == 2 or (d == 4 and task["seed"] % 2)):
            adapter.call("set", {"flag": "damage"})
        return type("R", (), {"stop_reason": "submitted", "steps": 3, "submitted": True})()


def grid_deps(world: World, forms: list[str], configs: list[dict]) -> RunnerDeps:
    def agent(cfg):
        configs.append(cfg)
        return GridAgent(cfg)

    return RunnerDeps(
        make_lab=lambda topo: FakeLab(topo, world),
        load_scenario=lambda path: None,
        generate_scenario=lambda manifest, *, seed, density=None: GenScenario(manifest, seed, density),
        render_scenario=lambda manifest, *, seed, density=None: None,
        get_task_class=lambda name: GridTask(name, forms),
        make_observer=FakeObserver,
        create_adapter=lambda level, lab, blocklist=False, trajectory=None: FakeAdapter(level, lab, blocklist, trajectory),
        create_agent=agent,
    )


def test_a_grid_campaign_pairs_only_runs_at_the_same_seed_and_stress_point(tmp_path):
    spec = grid(tmp_path, variants=3)
    out = tmp_path / "out"
    world = World()
    run_campaign(spec, out, progress=False, deps=grid_deps(world, [], []))
    recs = read_runs(out)
    assert len(recs) == 3 * 4 * 2 and world.up_labs == []
    assert {(r.seed, r.stress["density"], r.stress["fault_rate"]) for r in recs if r.cell == "a0"} == {
        (s, d, f) for s in (1, 2, 3) for d in (2, 4) for f in (0.0, 0.3)}
    summ = load_summary(out)
    assert len(summ.cells) == 8 and summ.planned == 24
    pairs = {p.cell: p for p in summ.paired}
    # every a1 row against a0 at its own point; a0 is never compared with itself elsewhere
    assert sorted(pairs) == sorted(f"a1 @ density={d},fault_rate={f}" for d in (2, 4) for f in (0.0, 0.3))
    assert {p.reference for p in pairs.values()} == {n.replace("a1 @", "a0 @") for n in pairs}
    for name, p in pairs.items():
        assert p.pairs == 3, name
        want_b = 3 if "density=2" in name else 2  # seeds 1 and 3 damage at density 4
        assert (p.damage_free.b, p.damage_free.c) == (want_b, 0), name
    md = (out / "summary.md").read_text()
    assert "## By stress value: `density` (all cells and every `fault_rate` pooled; 95% Wilson)" in md
    assert "## By stress value: `fault_rate` (all cells and every `density` pooled; 95% Wilson)" in md
    # each cell along density, fault rates pooled: damage-free k/n, success k/n
    assert "| a1 | 0/6, 6/6 | 2/6, 6/6 |" in md and "| a0 | 6/6, 6/6 | 6/6, 6/6 |" in md


def test_the_form_reaches_the_task_class_and_the_record(tmp_path):
    spec = spec_of(tmp_path, factor="task", agent={"kind": "scripted"}, variants=1, cells=[
        {"name": "intent", "task": "onboard-site"}, {"name": "ticket", "task": "onboard-site", "form": "ticket"}])
    forms: list[str] = []
    deps = grid_deps(World(), forms, [])
    validate(spec, deps)
    assert forms == ["intent", "ticket"]
    rec = run_one(spec, "ticket", 1, tmp_path / "o", deps=deps)
    assert forms[-1] == "ticket" and rec.form == "ticket" and rec.label == "clean_success"


def test_each_cell_runs_its_own_agent_and_the_record_says_which(tmp_path):
    spec = spec_of(tmp_path, variants=1, level="a0", cells=[
        {"name": "st", "agent_mode": "single-turn"}, {"name": "pe", "agent_mode": "planner-executor+recovery"}])
    configs: list[dict] = []
    deps = grid_deps(World(), [], configs)
    run_campaign(spec, tmp_path / "out", progress=False, deps=deps)
    assert {(c["mode"], c["recovery"]) for c in configs} == {("single-turn", False), ("planner-executor", True)}
    recs = {r.cell: r for r in read_runs(tmp_path / "out")}
    assert (recs["st"].agent_mode, recs["st"].model) == ("single-turn", "m1")
    assert recs["pe"].agent_mode == "planner-executor+recovery"
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "| pe | a0 | - | onboard-site | intent | m1 | planner-executor+recovery |" in md


def test_a_bad_option_of_one_cells_agent_names_the_cell(tmp_path):
    spec = spec_of(tmp_path, factor="model", agent={"kind": "scripted"}, cells=[
        {"name": "a", "model": "m1"}, {"name": "b", "model": "m2"}])

    def create(cfg):
        raise ConfigError("agent.model: unknown option for kind 'scripted'")

    deps = grid_deps(World(), [], [])
    deps.create_agent = create
    with pytest.raises(ConfigError, match=r"^c.yaml: cells\[0\]\(a\): agent.model: unknown option"):
        validate(spec, deps)


# --- cost, a recorded dependent variable -------------------------------------------------------------


def test_cost_is_recorded_and_reported_per_cell(tmp_path):
    spec = spec_of(tmp_path, variants=2, level="a0", cells=[{"name": "st", "agent_mode": "single-turn"},
                                                           {"name": "re", "agent_mode": "react"}])
    run_campaign(spec, tmp_path / "out", progress=False, deps=grid_deps(World(), [], []))
    recs = read_runs(tmp_path / "out")
    for r in recs:
        assert r.cost["steps"] == 3 and r.cost["tool_calls"] == 1 and r.cost["turns"] == 2  # set + inferred submit
        assert r.cost["tokens"] is None and r.cost["prompt_tokens"] is None  # no model: unknown, not 0
        assert r.cost["wall_s"] == r.wall_s and r.cost["agent_s"] == r.agent_s
    md = (tmp_path / "out" / "summary.md").read_text()
    section = md.split("## Cost per cell", 1)[1].split("\n## ", 1)[0]
    assert "| st | 2 | - | 2.0 | 3.0 | 1.0 |" in section and "| - |\n" in section


def record(cell: str, seed: int, *, damage_free: bool = True, tokens: int | None = None, infra: bool = False) -> RunRecord:
    base = dict(run_id=f"{cell}-t-s{seed}", campaign="c", cell=cell, level="a1", task="t", seed=seed,
                started="2026-01-01T00:00:00Z", ended="2026-01-01T00:01:00Z")
    if infra:
        return RunRecord(**base, label="infra_error", infra_error_reason="lab up: x")
    return RunRecord(**base, label="clean_success" if damage_free else "dangerous_success", success=True,
                     damage_free=damage_free, cost={"tokens": tokens, "turns": 2, "steps": 4, "tool_calls": 3,
                                                    "agent_s": 1.0, "wall_s": 10.0})


def test_the_report_gives_the_cost_means_and_token_totals():
    recs = [record("a", 1, tokens=1000), record("a", 2, tokens=3000), record("b", 1)]
    md = render_markdown(summarize(recs, {"name": "c", "cells": [{"name": "a"}, {"name": "b"}]}))
    section = md.split("## Cost per cell", 1)[1].split("\n## ", 1)[0]
    assert "| a | 2 | 2000 | 2.0 | 4.0 | 3.0 | 1.0 | 10.0 | 4000 |" in section
    assert "| b | 1 | - | 2.0 | 4.0 | 3.0 | 1.0 | 10.0 | - |" in section


# --- --bound: the rule of three ---------------------------------------------------------------------


@pytest.mark.parametrize("bound,runs", [(0.05, 60), (0.1, 30), (0.01, 300), (0.3, 10), (0.5, 6), (0.07, 43)])
def test_runs_for_bound_is_ceil_3_over_b(bound, runs):
    assert runs_for_bound(bound) == runs


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, True])
def test_runs_for_bound_refuses_what_is_no_bound(bad):
    with pytest.raises(ValueError, match="bound must be a number in"):
        runs_for_bound(bad)


def test_bound_sets_the_variants_from_the_file_or_the_command_line(tmp_path):
    import yaml

    d = data(tmp_path)
    del d["variants"]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({**d, "bound": 0.1}))
    assert load_spec(path).variants == 30
    assert load_spec(path, bound=0.05).variants == 60 and load_spec(path, bound=0.05).bound == 0.05
    assert load_spec(path, variants=4).variants == 4 and load_spec(path, variants=4).bound is None
    path.write_text(yaml.safe_dump({**d, "variants": 3}))
    assert load_spec(path, bound=0.05).variants == 60  # --bound replaces the file's S
    path.write_text(yaml.safe_dump({**d, "variants": 3, "bound": 0.1}))
    with pytest.raises(CampaignSpecError, match="variants: give variants .S. or bound .S = ceil.3/bound.., not both"):
        load_spec(path)
    with pytest.raises(CampaignSpecError, match="bound: 0.0001 needs 30000 runs per cell; at most 10000"):
        load_spec(path, bound=0.0001)


def test_resume_may_raise_the_bound(tmp_path):
    spec = spec_of(tmp_path, variants=1, level="a0", agent={"kind": "scripted"}, factor="level",
                   cells=[{"name": "a0", "level": "a0"}])
    out = tmp_path / "out"
    run_campaign(spec, out, progress=False, deps=grid_deps(World(), [], []))
    del_variants = {k: v for k, v in data(tmp_path, level="a0", agent={"kind": "scripted"}, factor="level",
                                          cells=[{"name": "a0", "level": "a0"}]).items() if k != "variants"}
    check_resume(parse_spec({**del_variants, "bound": 0.5}, "c.yaml", tmp_path), out)  # no error


def test_the_report_states_whether_the_bound_was_reached():
    spec = {"name": "c", "bound": 0.5, "variants": 6, "cells": [{"name": "ok"}, {"name": "few"}, {"name": "hurt"}]}
    recs = [record("ok", s) for s in range(1, 7)]
    recs += [record("few", s) for s in range(1, 5)] + [record("few", 5, infra=True)]
    recs += [record("hurt", s, damage_free=s != 2) for s in range(1, 7)]
    md = render_markdown(summarize(recs, spec))
    section = md.split("## The asserted bound", 1)[1].split("\n## ", 1)[0]
    assert ": damage probability below 0.5 (rule of three: 6 damage-free runs per cell)" in section
    assert "- `ok`: **reached**: 0 damaged runs of 6; damage probability below 3/6 = 0.500" in section
    assert ("- `few`: **not reached**: 0 damaged runs of 4, 6 needed (bound reached so far: 3/4 = 0.750); "
            "1 infrastructure error(s): --resume reruns them") in section
    assert "- `hurt`: **not reached**: 1 damaged run(s) of 6" in section
    assert "## The asserted bound" not in render_markdown(summarize(recs, {**spec, "bound": None}))


@pytest.mark.parametrize("args,needle", [
    (["--bound", "1.5"], "error: --bound 1.5: a damage probability bound in (0, 1)"),
    (["--bound", "0"], "error: --bound 0: a damage probability bound in (0, 1)"),
    (["--bound", "0.05", "--variants", "3"], "error: give --variants (S) or --bound (S = ceil(3/B)), not both"),
])
def test_the_cli_refuses_a_bad_bound(tmp_path, args, needle):
    res = CliRunner().invoke(app, ["run", "campaigns/level-sweep.yaml", *args, "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and needle in " ".join(res.output.split()), res.output
    assert not (tmp_path / "o").exists()


def test_spec_json_keeps_the_bound(tmp_path):
    spec = spec_of(tmp_path, variants=None, bound=0.5, level="a0", agent={"kind": "scripted"}, factor="level",
                   cells=[{"name": "a0", "level": "a0"}])
    assert spec.variants == 6
    out = tmp_path / "out"
    run_campaign(spec, out, progress=False, deps=grid_deps(World(), [], []))
    saved = json.loads((out / "spec.json").read_text())
    assert saved["bound"] == 0.5 and saved["variants"] == 6
    assert "## The asserted bound: damage probability below 0.5" in (out / "summary.md").read_text()


# --- the shipped campaign files ----------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def test_faults_density_levels_loads_with_the_must_show_grid():
    spec = load_spec(ROOT / "campaigns" / "faults-density-levels.yaml")
    assert spec.factor == "level" and spec.agent == {"kind": "scripted"} and spec.manifest_path
    assert [c.level for c in spec.cells] == ["a0", "a1", "a2", "a3t", "a4"]
    assert spec.stress_points == [{"density": d, "fault_rate": f} for d in (2, 4) for f in (0.0, 0.3)]
    runs = plan(spec)
    assert len(runs) == spec.variants * 4 * 5
    assert {spec.run_id(r.cell, r.seed, r.stress) for r in runs if r.seed == 1 and r.cell == "a2"} == {
        f"a2-onboard-site-density{d}-fault_rate{f}-s1" for d in (2, 4) for f in ("0.0", "0.3")}
    assert load_spec(ROOT / "campaigns" / "faults-density-levels.yaml", bound=0.05).variants == 60


@pytest.mark.parametrize("name,factor,cells", [
    ("agent-modes", "agent_mode", [f"{m}{r}" for m in ("react", "single-turn", "planner-executor")
                                   for r in ("", "+recovery")]),
    ("models", "model", ["Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"]),
])
def test_the_llm_factor_files_load_and_vary_only_their_factor(name, factor, cells):
    spec = load_spec(ROOT / "campaigns" / f"{name}.yaml")
    assert spec.factor == factor and spec.agent["kind"] == "llm"
    configs = [spec.agent_of(c) for c in spec.cells]
    key = {"model": "model", "agent_mode": "mode"}[factor]
    got = [c[key] + ("+recovery" if factor == "agent_mode" and c["recovery"] else "") for c in configs]
    assert got == cells
    others = [{k: v for k, v in c.items() if k not in ("model", "mode", "recovery")} for c in configs]
    assert all(o == others[0] for o in others)


def test_preflight_checks_each_distinct_agent_once_with_its_own_options(tmp_path):
    from ani.campaign.runner import preflight

    spec = spec_of(tmp_path, factor="model", cells=[
        {"name": "a", "model": "m1", "agent": {"stop": ["x", "y"]}},
        {"name": "b", "model": "m2", "agent": {"stop": ["x", "y"], "base_url": "http://10.0.0.2:8000/v1"}},
    ])
    seen: list[dict] = []

    class Agent:
        def __init__(self, cfg):
            self.cfg = cfg

        def preflight(self):
            seen.append(self.cfg)
            return [f"{self.cfg['base_url']}: no /models (HTTP 404)"]

    deps = grid_deps(World(), [], [])
    deps.create_agent = Agent
    assert preflight(spec, deps) == ["http://127.0.0.1:9/v1: no /models (HTTP 404)",
                                     "http://10.0.0.2:8000/v1: no /models (HTTP 404)"]
    assert [c["model"] for c in seen] == ["m1", "m2"] and all(c["stop"] == ["x", "y"] for c in seen)


def _docs_section(title: str) -> str:
    text = (ROOT / "docs" / "campaigns.md").read_text()
    return text.split(title, 1)[1].split("\n### ", 1)[0]


@pytest.mark.parametrize("title,cells", [
    ("### The model and the agent mode as the factor", ["qwen2.5-7b", "llama3.1-8b", "hosted"]),
    ("### Stress parameters: a grid", ["a0", "a1", "a2", "a3t", "a4"]),
])
def test_the_docs_examples_are_valid_campaigns(title, cells):
    import yaml

    block = _docs_section(title).split("```yaml\n", 1)[1].split("```", 1)[0]
    spec = parse_spec(yaml.safe_load(block), "docs", ROOT / "campaigns")
    assert [c.name for c in spec.cells] == cells


def test_the_docs_show_the_matched_budget_message_as_it_is_given():
    import yaml

    data = yaml.safe_load((ROOT / "campaigns" / "agent-modes.yaml").read_text())
    data["cells"] = [{"name": "react", "agent_mode": "react"},
                     {"name": "single-turn", "agent_mode": "single-turn", "agent": {"max_retries": 0}}]
    with pytest.raises(CampaignSpecError) as ei:
        parse_spec(data, "campaigns/x.yaml", ROOT / "campaigns")
    assert f"error: {ei.value}\n" in _docs_section("### The model and the agent mode as the factor")
