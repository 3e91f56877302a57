"""One point of the must-show campaign ``campaigns/faults-density-levels.yaml`` on real labs
(the whole grid is 60 runs, about an hour): density 2, fault rate 0, one seed, every level of
the file, run by ``python -m ani.cli campaign run`` in a subprocess. Every cell at the point gets
the same generated brownfield (scenario hash) and the same target (variant), and the run ids
name every stress value."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from procs import ani_cli, lab_gone
from test_campaign_llm import _env

from ani.campaign.results import read_runs

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "campaigns" / "faults-density-levels.yaml"


@pytest.mark.timeout(1500)
def test_one_point_of_faults_density_levels_runs_every_level_paired(lab_host, tmp_path):
    data = yaml.safe_load(SHIPPED.read_text())
    assert data["stress"] == {"density": [2, 4], "fault_rate": [0, 0.3]}
    data["name"] = "it-fdl-point"
    data["manifest"] = str((SHIPPED.parent / data["manifest"]).resolve())
    data["variants"] = 1
    data["stress"] = {"density": [2], "fault_rate": [0]}
    camp = tmp_path / "point.yaml"
    camp.write_text(yaml.safe_dump(data, sort_keys=False))
    out = tmp_path / "res"
    res, labs = ani_cli(["campaign", "run", str(camp), "--out", str(out), "--no-progress"], _env(), 1200)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(labs) == 5 and all(lab_gone(lab) for lab in labs), labs

    recs = {r.cell: r for r in read_runs(out)}
    assert sorted(recs) == ["a0", "a1", "a2", "a3t", "a4"]
    for cell, r in recs.items():
        failed = [x for x in r.tests + r.invariants if not x.passed]
        assert r.label == "clean_success", (cell, r.infra_error_reason, r.agent_error, failed)
        assert r.run_id == f"{cell}-onboard-site-density2-fault_rate0.0-s1"
        assert r.stress == {"density": 2, "fault_rate": 0.0} and r.density == 2
        assert r.cost["steps"] == r.steps and r.cost["tool_calls"] == r.tool_calls and r.cost["wall_s"] == r.wall_s
    # paired: one brownfield and one target for every level at the point
    assert len({r.scenario_hash for r in recs.values()}) == 1
    assert len({r.variant_id for r in recs.values()}) == 1
    md = (out / "summary.md").read_text()
    assert "| a4 @ density=2,fault_rate=0.0 | 1 | 0 | 0 |" in md  # one pair, b = c = 0
    assert "## By stress value: `fault_rate` (all cells and every `density` pooled; 95% Wilson)" in md
