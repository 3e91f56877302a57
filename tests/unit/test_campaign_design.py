"""Campaign designs beyond the level sweep, on fakes (no lab): a generated scenario (manifest,
scenario seed, density), the task class as the factor, a swept stress parameter (density or
task) run paired over seeds x stress values x cells, and the checks that name the bad field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_campaign_runner import FakeAdapter, FakeLab, FakeObserver, FCheck, World

from ani.campaign.loop import plan, run_campaign
from ani.campaign.report import load_summary
from ani.campaign.results import read_runs
from ani.campaign.runner import RunnerDeps, run_one, validate
from ani.campaign.spec import load_spec, parse_spec
from ani.errors import CampaignSpecError, ConfigError, GeneratorError, TaskError

TASKS = ["onboard-site", "change-set", "decommission", "troubleshoot"]


# --- fakes ---------------------------------------------------------------------------------------


class GenScenario:
    """A generated scenario: its hash depends on (manifest, seed, density) like the real one's."""

    def __init__(self, manifest: str, seed: int, density: int | None) -> None:
        self.manifest, self.seed = manifest, seed
        self.generated = {"manifest": manifest, "seed": seed, "density": 3 if density is None else density}
        self.hash = f"h-{Path(manifest).stem}-{seed}-{self.generated['density']}"
        self.name = f"{Path(manifest).stem}-s{seed}-d{self.generated['density']}"  # as the generator names it
        self.invariants = [FCheck("tenant-isolation", "damage", False)]


class GenVariant:
    def __init__(self, task: str, scenario: GenScenario, seed: int) -> None:
        self.task, self.scenario, self.seed = task, scenario, seed
        self.variant_id = f"{task}-s{seed}"
        self.hidden_tests = [FCheck("site-reach", "site", True)]

    def lab_topology(self, scenario):
        assert scenario is self.scenario  # the runner labs the scenario the variant was drawn on
        return {"seed": self.seed, "density": scenario.generated["density"], "task": self.task}

    def agent_view(self):
        return {"seed": self.seed, "density": self.scenario.generated["density"], "task": self.task}


class GenTask:
    def __init__(self, name: str) -> None:
        self.name = name

    def variant(self, scenario, seed):
        return GenVariant(self.name, scenario, seed)


class DensityAgent:
    """Solves every task; from density ``damage_from`` on it also damages (collateral)."""

    name = "fake"

    def __init__(self, damage_from: int = 8) -> None:
        self.damage_from = damage_from

    def run(self, task, adapter, budget):
        adapter.call("set", {"flag": "site"})
        if task["density"] >= self.damage_from or task["task"] == "decommission":
            adapter.call("set", {"flag": "damage"})
        return type("R", (), {"stop_reason": "submitted", "steps": 2, "submitted": True})()


class Gen:
    """A fake world with a generator: counts the generations, the labs and what they held."""

    def __init__(self, damage_from: int = 8) -> None:
        self.world = World()
        self.generated: list[tuple[str, int, int | None]] = []
        self.rendered: list[int | None] = []
        self.damage_from = damage_from
        self.version = ""

    def deps(self) -> RunnerDeps:
        def generate(manifest, *, seed, density=None):
            self.generated.append((Path(manifest).name, seed, density))
            scen = GenScenario(manifest, seed, density)
            scen.hash += self.version
            return scen

        def render(manifest, *, seed, density=None):
            self.rendered.append(density)
            return f"name: generated\ngenerated: {{seed: {seed}, density: {density}}}\n"

        def load_scenario(path):
            raise AssertionError("a campaign with a manifest reads no scenario file")

        return RunnerDeps(
            make_lab=lambda topo: FakeLab(topo, self.world),
            load_scenario=load_scenario,
            generate_scenario=generate,
            render_scenario=render,
            get_task_class=lambda name: GenTask(name) if name in TASKS else _unknown(name),
            make_observer=FakeObserver,
            create_adapter=lambda level, lab, blocklist=False, trajectory=None: FakeAdapter(
                level, lab, blocklist, trajectory
            ),
            create_agent=lambda cfg: DensityAgent(self.damage_from),
        )


def _unknown(name: str):
    raise TaskError(f"unknown task class {name!r}; known: {', '.join(TASKS)}")


def campaign(tmp_path: Path, **over) -> dict:
    (tmp_path / "default.yaml").write_text("manifest: fake\n")
    data = {
        "name": "dens",
        "manifest": "default.yaml",
        "scenario_seed": 7,
        "task": "onboard-site",
        "variants": 2,
        "seed": 1,
        "factor": "level",
        "cells": [{"name": "a0", "level": "a0"}, {"name": "a1", "level": "a1"}],
        "stress": {"density": [2, 4, 8]},
    }
    data.update(over)
    return data


def spec_of(tmp_path: Path, **over):
    return parse_spec(campaign(tmp_path, **over), "c.yaml", tmp_path)


# --- the plan ------------------------------------------------------------------------------------


def test_plan_is_seeds_x_stress_values_x_cells_seed_major_and_ids_are_unique(tmp_path):
    spec = spec_of(tmp_path)
    points = plan(spec)
    assert len(points) == 2 * 3 * 2
    assert [(p.seed, p.stress["density"], p.cell) for p in points[:6]] == [
        (1, 2, "a0"), (1, 2, "a1"), (1, 4, "a0"), (1, 4, "a1"), (1, 8, "a0"), (1, 8, "a1"),
    ]
    # every (cell, density) meets the same variant seeds: the design is paired
    seeds = {}
    for p in points:
        seeds.setdefault((p.cell, p.stress["density"]), []).append(p.seed)
    assert set(map(tuple, seeds.values())) == {(1, 2)}
    ids = [spec.run_id(p.cell, p.seed, p.stress) for p in points]
    assert len(set(ids)) == len(ids)
    assert ids[2] == "a0-onboard-site-density4-s1"


def test_a_task_stress_sweeps_the_task_class_and_keeps_plain_run_ids(tmp_path):
    spec = spec_of(tmp_path, task=None, stress={"task": ["onboard-site", "decommission"]})
    points = plan(spec)
    assert [spec.task_of(p.cell, p.stress) for p in points[:4]] == [
        "onboard-site", "onboard-site", "decommission", "decommission",
    ]
    assert spec.run_id("a1", 1, {"task": "decommission"}) == "a1-decommission-s1"


def test_without_stress_the_plan_and_run_ids_are_as_before(tmp_path):
    scen = tmp_path / "scen.yaml"
    scen.write_text("x: 1\n")
    spec = parse_spec(
        {"name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": 2,
         "cells": [{"name": "a0", "level": "a0"}, {"name": "a1+blocklist", "level": "a1", "blocklist": True}]},
        "t", tmp_path,
    )
    assert [(p.seed, p.cell, p.stress) for p in plan(spec)] == [
        (1, "a0", {}), (1, "a1+blocklist", {}), (2, "a0", {}), (2, "a1+blocklist", {}),
    ]
    assert spec.run_id("a1+blocklist", 2) == "a1_blocklist-onboard-site-s2"
    assert spec.density_of("a0") is None and spec.manifest_path is None


def test_the_settings_of_a_cell_come_from_stress_then_cell_then_campaign(tmp_path):
    spec = spec_of(
        tmp_path, factor="task", level="a3t", density=5, stress={},
        cells=[{"name": "on", "task": "onboard-site"}, {"name": "cs", "task": "change-set"}],
    )
    assert [c.level for c in spec.cells] == ["a3t", "a3t"]
    assert spec.task_of("cs") == "change-set" and spec.density_of("cs") == 5
    assert spec.density_of("cs", {"density": 9}) == 9
    assert spec.manifest_path == str((tmp_path / "default.yaml").resolve()) and spec.scenario_seed == 7
    assert parse_spec({**campaign(tmp_path), "scenario_seed": None}, "c", tmp_path).scenario_seed == 1


# --- bad designs name the field ------------------------------------------------------------------


@pytest.mark.parametrize(
    "over,needle",
    [
        ({"scenario": "x.yaml"}, "manifest: give scenario: (a scenario file) or manifest: (generated), not both"),
        ({"manifest": None}, "scenario: Field required (a scenario file; or manifest: to generate one)"),
        ({"stress": {"density": [2, 2]}}, "stress: density: a value is given twice"),
        ({"stress": {"density": [2, -1]}}, "stress: density.1: a density is an int >= 0, got -1"),
        ({"stress": {"temperature": [0.1]}}, "'temperature' cannot be swept; stress parameters: density, task, fault_rate"),
        ({"stress": {"density": [2], "fault_rate": [0, -0.1]}}, "stress: fault_rate.1: a fault rate is a number >= 0"),
        ({"stress": {"fault_rate": [0, 0.0]}}, "stress: fault_rate: a value is given twice"),
        ({"stress": {"fault_rate": [True]}}, "stress: fault_rate.0: a fault rate is a number >= 0"),
        ({"stress": {"density": []}}, "density: give at least one value"),
        ({"factor": "density"}, "stress.density: density is the factor; sweep another parameter"),
        ({"factor": "seedling"}, "factor: factor 'seedling' is not supported; supported: level, blocklist, task, density"),
        (
            {"cells": [{"name": "a0", "level": "a0"}, {"name": "a1", "level": "a1", "density": 4}]},
            "cells[1](a1).density: density is swept by stress:; a cell cannot fix it",
        ),
        (
            {"factor": "task", "cells": [{"name": "on", "level": "a1", "task": "onboard-site"},
                                         {"name": "cs", "level": "a2", "task": "change-set"}]},
            "cells[1](cs).level: differs from cell 'on' but the factor is 'task'",
        ),
        (
            {"factor": "task", "cells": [{"name": "on", "level": "a1", "task": "onboard-site"},
                                         {"name": "on2", "level": "a1", "task": "onboard-site"}]},
            "cells: two cells have the same task and form (nothing varies between them)",
        ),
        (
            {"factor": "level", "cells": [{"name": "a0", "level": "a0"},
                                          {"name": "a1", "level": "a1", "task": "change-set"}]},
            "cells[1](a1).task: differs from cell 'a0' but the factor is 'level'",
        ),
        ({"task": None, "cells": [{"name": "a0", "level": "a0"}]}, "cells[0](a0).task: Field required"),
        ({"cells": [{"name": "a0"}]}, "cells[0](a0).level: Field required (or give the campaign a level:)"),
    ],
)
def test_bad_designs_name_the_file_and_field(tmp_path, over, needle):
    data = {k: v for k, v in campaign(tmp_path, **over).items() if v is not None}
    with pytest.raises(CampaignSpecError) as ei:
        parse_spec(data, "camp.yaml", tmp_path)
    assert str(ei.value).startswith("camp.yaml: ") and needle in str(ei.value), str(ei.value)


def test_a_density_needs_a_manifest(tmp_path):
    (tmp_path / "scen.yaml").write_text("x: 1\n")
    data = {"name": "t", "scenario": "scen.yaml", "task": "onboard-site", "density": 4,
            "cells": [{"name": "a0", "level": "a0"}], "stress": {"density": [1, 2]}}
    with pytest.raises(CampaignSpecError) as ei:
        parse_spec(data, "camp.yaml", tmp_path)
    msg = str(ei.value)
    assert "density: only with manifest: (a scenario file's density is fixed)" in msg
    assert "stress.density: only with manifest:" in msg


def test_a_missing_manifest_names_the_field(tmp_path):
    with pytest.raises(CampaignSpecError, match=r"camp.yaml: manifest: file 'nope.yaml' not found"):
        parse_spec(campaign(tmp_path, manifest="nope.yaml"), "camp.yaml", tmp_path)


def test_an_unknown_task_class_names_the_cell_before_any_lab(tmp_path):
    spec = spec_of(
        tmp_path, factor="task", stress={},
        cells=[{"name": t, "level": "a1", "task": t} for t in ("onboard-site", "change-set", "decomission")],
    )
    g = Gen()
    with pytest.raises(TaskError) as ei:
        validate(spec, g.deps())
    assert str(ei.value).startswith("c.yaml: cells[2](decomission).task: unknown task class 'decomission'; known:")
    stressed = spec_of(tmp_path, task=None, stress={"task": ["onboard-site", "nope"]})
    with pytest.raises(TaskError, match=r"c.yaml: stress.task\[1\]: unknown task class 'nope'"):
        validate(stressed, g.deps())
    assert g.world.labs == []


def test_a_bad_manifest_fails_before_any_lab(tmp_path):
    spec = spec_of(tmp_path)
    g = Gen()
    deps = g.deps()

    def generate(manifest, *, seed, density=None):
        raise GeneratorError(f"{manifest}: layers.1.density: {density} sites do not fit on 4 edges")

    deps.generate_scenario = generate
    with pytest.raises(ConfigError, match="layers.1.density: 2 sites do not fit"):
        run_campaign(spec, tmp_path / "out", progress=False, deps=deps)
    assert g.world.labs == [] and not (tmp_path / "out" / "runs.jsonl").exists()


def test_the_shipped_campaign_files_load():
    root = Path(__file__).parents[2] / "campaigns"
    for path in sorted(root.glob("*.yaml")):
        spec = load_spec(path)
        assert spec.points(), path


# --- running a design ----------------------------------------------------------------------------


def test_a_density_sweep_runs_paired_records_density_and_hash_and_breaks_the_report_down(tmp_path):
    spec = spec_of(tmp_path)
    g = Gen(damage_from=8)
    out = tmp_path / "out"
    res = run_campaign(spec, out, progress=False, deps=g.deps())
    recs = read_runs(out)
    assert len(recs) == 12 and not res.infra
    # one generation per density, always with the scenario seed, never another
    assert sorted(set(g.generated)) == [("default.yaml", 7, 2), ("default.yaml", 7, 4), ("default.yaml", 7, 8)]
    for r in recs:
        d = r.stress["density"]
        assert r.density == d and r.scenario_hash == f"h-default-7-{d}"
        assert r.label == ("dangerous_success" if d >= 8 else "clean_success")
    # each lab held the scenario of its run's density
    assert sorted((topo["density"], topo["seed"]) for topo in g.world.topologies) == sorted(
        (r.density, r.seed) for r in recs
    )
    assert g.world.up_labs == []
    # the generated scenarios are kept in the results folder, one per density
    kept = sorted(p.name for p in (out / "scenarios").iterdir())
    assert kept == ["default-s7-d2.yaml", "default-s7-d4.yaml", "default-s7-d8.yaml"]
    assert yaml.safe_load((out / "scenarios" / kept[0]).read_text())["generated"]["density"] == 2

    summ = load_summary(out)
    assert [c.name for c in summ.cells] == [
        "a0 @ density=2", "a1 @ density=2", "a0 @ density=4", "a1 @ density=4", "a0 @ density=8", "a1 @ density=8",
    ]
    assert all(c.success.n == 2 for c in summ.cells)
    pairs = {(p.cell, p.reference): p for p in summ.paired}
    # a cell against the reference cell at the same density only: another density is another
    # brownfield, so its runs are no pairs (the reference is never compared with itself)
    assert set(pairs) == {
        ("a1 @ density=2", "a0 @ density=2"), ("a1 @ density=4", "a0 @ density=4"),
        ("a1 @ density=8", "a0 @ density=8"),
    }
    p8 = pairs[("a1 @ density=8", "a0 @ density=8")]
    assert p8.pairs == 2 and (p8.damage_free.b, p8.damage_free.c) == (0, 0)
    assert summ.planned == 12
    md = (out / "summary.md").read_text()
    assert "## By stress value: `density`" in md
    assert "| 2 | 4 | 0 | 4/4 (1.00) |" in md and "| 8 | 4 | 0 | 4/4 (1.00) |" in md
    assert "| 8 | 4 | 0 | 4/4 (1.00) | [0.510, 1.000] | 0/4 (0.00) |" in md
    assert "damage-free rate by density" in md and f"\n8 |{'.' * 40} 0.00" in md and "warning" not in md
    assert "stress: `density` over 2, 4, 8" in md


def test_the_task_class_as_the_factor_runs_each_class_in_its_cell(tmp_path):
    spec = spec_of(
        tmp_path, factor="task", level="a1", stress={}, density=None,
        cells=[{"name": t, "task": t} for t in TASKS],
    )
    g = Gen()
    out = tmp_path / "out"
    run_campaign(spec, out, progress=False, deps=g.deps())
    recs = {r.run_id: r for r in read_runs(out)}
    assert sorted(recs) == sorted(f"{t}-{t}-s{s}" for t in TASKS for s in (1, 2))
    assert {r.task for r in recs.values()} == set(TASKS)
    assert {topo["task"] for topo in g.world.topologies} == set(TASKS)
    # the manifest's own density (None asked) is the one recorded
    assert g.generated[0] == ("default.yaml", 7, None) and {r.density for r in recs.values()} == {3}
    assert recs["decommission-decommission-s1"].label == "dangerous_success"
    assert (out / "scenarios" / "default-s7-d3.yaml").exists()  # the manifest's own density
    md = (out / "summary.md").read_text()
    assert "- task: `change-set`, `decommission`, `onboard-site`, `troubleshoot`" in md


def test_resume_of_a_sweep_runs_what_is_missing_and_refuses_a_changed_generator(tmp_path):
    spec = spec_of(tmp_path)
    g = Gen()
    out = tmp_path / "out"
    run_campaign(spec, out, progress=False, deps=g.deps())
    lines = (out / "runs.jsonl").read_text().splitlines()
    (out / "runs.jsonl").write_text("\n".join(lines[:5]) + "\n")  # the last 7 runs are lost
    g2 = Gen()
    res = run_campaign(spec, out, resume=True, progress=False, deps=g2.deps())
    assert len(res.skipped) == 5 and len(res.ran) == 7 and len(read_runs(out)) == 12
    g3 = Gen()
    g3.version = "-v2"  # the generator now makes another scenario from the same inputs
    with pytest.raises(CampaignSpecError, match="the generated scenario changed since these runs"):
        run_campaign(spec, out, resume=True, progress=False, deps=g3.deps())


def test_run_one_at_a_stress_value_matches_the_campaign(tmp_path):
    spec = spec_of(tmp_path)
    g = Gen()
    rec = run_one(spec, "a1", 2, tmp_path / "one", deps=g.deps(), stress={"density": 8})
    assert rec.run_id == "a1-onboard-site-density8-s2" and rec.label == "dangerous_success"
    assert rec.density == 8 and rec.stress == {"density": 8}
    assert [(i.name, i.passed) for i in rec.invariants] == [("tenant-isolation", False)]


# --- ani run on a generated scenario ---------------------------------------------------------------


def _ani_run(*args: str):
    from typer.testing import CliRunner

    from ani.cli import app

    return CliRunner().invoke(app, ["run", *args])


def test_ani_run_takes_a_manifest_its_seed_and_density(tmp_path, stop_before_lab):
    m = tmp_path / "m.yaml"
    m.write_text("manifest: fake\n")
    res = _ani_run("--manifest", str(m), "--scenario-seed", "3", "--density", "2", "--level", "a1")
    assert res.exit_code == 2 and "stopped before the lab (test)" in res.stderr
    spec = stop_before_lab[0]
    assert spec.manifest_path == str(m.resolve()) and spec.scenario is None
    assert (spec.scenario_seed, spec.density_of(spec.cells[0])) == (3, 2)
    res = _ani_run("--level", "a1")  # the default stays the hand-built brownfield
    assert stop_before_lab[1].scenario_path.endswith("scenarios/brownfield-small.yaml")
    assert stop_before_lab[1].manifest is None


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--manifest", "m.yaml", "--scenario", "s.yaml"], "give --scenario (a scenario file) or --manifest (generated), not both"),
        (["--density", "4"], "--scenario-seed / --density: only with --manifest"),
        (["--manifest", "nope.yaml"], "--manifest: file 'nope.yaml' not found"),
    ],
)
def test_ani_run_refuses_bad_scenario_options_naming_them(tmp_path, monkeypatch, stop_before_lab, args, needle):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.yaml").write_text("manifest: fake\n")
    (tmp_path / "s.yaml").write_text("x: 1\n")
    res = _ani_run(*args)
    assert res.exit_code == 2 and needle in res.stderr and not stop_before_lab, res.stderr
