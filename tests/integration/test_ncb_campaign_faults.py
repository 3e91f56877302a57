"""Faults in a ``tasks:`` campaign, for real (issue 15, new-user check): ``ani campaign run`` over
one shipped NetConfBench task at a1 with ``fault_rate > 0``. The faults are drawn from the task's
own network and aimed at the routers its solution configures; each is injected, verified and
removed; the run is graded on the testcases after the faults are gone and routing has
converged; and what a fault wrote itself (a concurrent writer's line) is neither the agent's
applied commands, nor counted in its command score, nor harvested as a solution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from procs import ani_cli, lab_gone
from test_campaign_llm import _env

from ani.campaign.results import read_runs
from ani.campaign.runner import RunnerDeps, prepare, run_scenario, variant_of
from ani.campaign.spec import load_spec
from ani.faults.campaign import schedule_for

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "intents" / "netconfbench" / "static-backup.json"
WRITER = "changed out of band by another writer (ani fault concurrent_writer)"


def _campaign(tmp_path: Path) -> Path:
    data = {
        "name": "it-ncb-faults",
        "tasks": str(TASK),
        "agent": {"kind": "scripted"},
        "cells": [{"name": "a1", "level": "a1"}],
        # the schedule of this task at its variant seed 0: a writer before the first call and
        # again after it, and the primary link (r1 eth0 - r2 eth0, one of two parallel links)
        # down after the first call
        "fault_rate": 2.5,
        "faults": {"kinds": ["concurrent_writer", "link_down"], "horizon_steps": 2, "duration_s": [3.0, 4.0]},
    }
    camp = tmp_path / "faults.yaml"
    camp.write_text(yaml.safe_dump(data, sort_keys=False))
    return camp


@pytest.mark.timeout(600)
def test_a_tasks_campaign_with_faults(lab_host, tmp_path):
    camp = _campaign(tmp_path)
    spec = load_spec(camp)

    cat, _ = prepare(spec, RunnerDeps(), spec.cells[0], {})
    variant = variant_of(cat, cat, 0, "intent")
    sched = schedule_for(spec, spec.cells[0], {}, run_scenario(cat, variant), variant, 0)
    assert [(f.at_step, f.kind, f.target) for f in sched] == [
        (0, "concurrent_writer", {"router": "r1"}), (1, "concurrent_writer", {"router": "r1"}),
        (1, "link_down", {"link": ["r1", "r2"], "ifnames": ["eth0", "eth0"]})]

    out = tmp_path / "res"
    res, labs = ani_cli(["campaign", "run", str(camp), "--out", str(out), "--no-progress"], _env(), 540)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(labs) == 1 and all(lab_gone(lab) for lab in labs), labs

    (rec,) = read_runs(out)
    assert rec.run_id == "a1-static-backup-s0" and rec.fault_rate == 2.5
    assert [(f.at_step, f.kind, f.target) for f in rec.faults] == [(f.at_step, f.kind, f.target) for f in sched]
    for f in rec.faults:
        assert f.injected and f.verified and f.invalid is None, f
        assert f.removed or f.kind == "concurrent_writer", f  # a write is an instant: nothing to remove
    assert rec.faults[0].wrote == [f"r1: + interface lo / description {WRITER}"]
    # graded after the faults are removed and routing converged: the solution holds
    failed = [t for t in rec.tests if not t.passed]
    assert rec.label == "clean_success", (rec.infra_error_reason, rec.agent_error, failed)
    assert rec.testcase_score == 1.0 and rec.task_pass is True
    # the writer's line is the fault's: in fault_residue, not unrequested, not the agent's commands
    assert rec.fault_residue == [f"r1: + interface lo / description {WRITER}"]
    assert rec.unrequested_changes == []
    assert rec.ncb.applied_commands == {"r1": ["ip route 203.0.113.1/32 192.0.2.2",
                                               "ip route 203.0.113.1/32 198.51.100.2 100"],
                                        "r2": ["ip route 10.0.0.1/32 192.0.2.1"]}
    assert (rec.ncb.command.precision, rec.ncb.command.recall) == (1.0, 1.0)
    assert "command: 1 change line(s) the faults wrote left out" in rec.ncb.notes
    events = [json.loads(x) for x in open(rec.trajectory)]
    assert [e["event"] for e in events].count("fault_injected") == 3
    html = (out / "report.html").read_text()  # the report's faults table lists them by run
    assert html.count("link_down") >= 1 and html.count("concurrent_writer") >= 2
