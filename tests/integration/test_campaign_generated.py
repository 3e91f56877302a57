"""The shipped campaigns on the generated default brownfield (issue 13, must show): the task
class as the factor (four cells) and density swept over three values, with the scripted agent,
one seed each. Every run is labelled with an outcome (a run the agent cannot solve is graded
too: clean or destructive failure), carries the generated scenario's hash and density, and
nothing of the campaign is left on the host (namespaces, FRR dirs, processes, lab dirs, mounts:
``tests/procs.py`` ``footprint``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from procs import EMPTY, footprint, track_labs

from ani.campaign.loop import run_campaign
from ani.campaign.results import LABELS, read_runs
from ani.campaign.runner import RunnerDeps
from ani.campaign.spec import load_spec

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

ROOT = Path(__file__).parent.parent.parent


def _tracking_deps() -> tuple[RunnerDeps, list]:
    deps = RunnerDeps()
    return deps, track_labs(deps)  # the runner's lab options kept: no server a level does not use


def _needs_issue13() -> None:
    pytest.importorskip("ani.scenario.generate", reason="the scenario generator has not landed")
    from ani.scenario import TASK_CLASSES

    missing = {"change-set", "decommission", "troubleshoot"} - set(TASK_CLASSES)
    if missing:
        pytest.skip(f"task classes not landed: {', '.join(sorted(missing))}")


@pytest.mark.parametrize("name", ["task-classes", "density-sweep"])
def test_shipped_generated_campaign_labels_every_run_and_leaves_nothing(lab_host, tmp_path, name):
    _needs_issue13()
    from ani.scenario.generate import generate_scenario

    path = ROOT / "campaigns" / f"{name}.yaml"
    spec = load_spec(path, variants=1)
    deps, labs = _tracking_deps()
    out = tmp_path / "res"
    res = run_campaign(spec, out, progress=False, deps=deps, source=path)
    assert not res.interrupted
    recs = {r.run_id: r for r in read_runs(out)}
    planned = {spec.run_id(p.cell, p.seed, p.stress) for p in spec.points()}
    assert set(recs) == planned and len(planned) == (4 if name == "task-classes" else 3)
    for r in recs.values():
        assert r.label in LABELS, (r.run_id, r.label, r.infra_error_reason)  # an outcome, not infra
        assert r.tests and r.invariants
        want = generate_scenario(spec.manifest_path, seed=spec.scenario_seed, density=spec.density_of(r.cell, r.stress))
        assert r.scenario_hash == want.hash
        if r.stress:
            assert r.density == r.stress["density"]
    if name == "task-classes":
        assert {r.task for r in recs.values()} == {"onboard-site", "change-set", "decommission", "troubleshoot"}
    else:
        assert sorted(r.density for r in recs.values()) == sorted(spec.stress["density"])
        assert len({r.scenario_hash for r in recs.values()}) == 3
        assert "## By stress value: `density`" in (out / "summary.md").read_text()
    assert len(list((out / "scenarios").glob("*.yaml"))) == len({r.scenario_hash for r in recs.values()})
    # nothing of the campaign is left behind
    assert len(labs) == len(planned)
    left = {lab.id: footprint(lab.id) for lab in labs}
    assert all(f == EMPTY for f in left.values()), {i: f for i, f in left.items() if f != EMPTY}
