"""Part 5 of issue 15 on real FRR labs: a scripted run of a shipped NetConfBench task carries
its scores in the run record (testcase score, command F1 against the expert solution, no
reasoning score for an agent without text, said); a run that solved the task another way is
harvested into the task file with its provenance, the exported file is accepted by the
importer, and harvesting again adds nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ani.campaign.results import RunStore
from ani.campaign.runner import run_one
from ani.campaign.spec import parse_spec
from ani.campaign.harvest import harvest
from ani.netconfbench.harvest import PROVENANCE
from ani.netconfbench.task import load_task

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
TASK = ROOT / "intents" / "netconfbench" / "bgp-prefix-list-filter.json"
#: another way to the same intents: deny the unwanted prefix, permit the rest
ALTERNATIVE = {"solution_id": "alt-deny", "provenance": "expert-authored",
               "reasoning": "Deny 10.2.1.0/24 and permit everything else inbound from r2.",
               "configs": {"r1": ["ip prefix-list DROP-R2 seq 5 deny 10.2.1.0/24",
                                  "ip prefix-list DROP-R2 seq 10 permit 0.0.0.0/0 le 32",
                                  "router bgp 65001", "address-family ipv4 unicast",
                                  "neighbor 10.0.12.2 prefix-list DROP-R2 in", "exit-address-family", "exit"]}}


def _run(path: Path, out: Path, level: str = "a1"):
    spec = parse_spec({"name": "ncb-scores", "tasks": str(path), "cells": [{"name": level, "level": level}]},
                      "test", ROOT)
    rec = run_one(spec, level, 0, out)
    assert rec.label == "clean_success", (rec.infra_error_reason, rec.agent_error, rec.tests)
    RunStore(out).append(rec)
    return rec


def test_scores_in_the_record_and_harvesting(lab_host, tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    expert_file = tasks / "filter.json"
    shutil.copy(TASK, expert_file)
    results = tmp_path / "results"

    rec = _run(expert_file, results)
    assert (rec.testcase_score, rec.task_pass) == (1.0, True)
    assert rec.ncb is not None and rec.task_file == str(expert_file)
    cmd = rec.ncb.command
    assert (cmd.f1, cmd.solution_id, cmd.unmatched, cmd.missing) == (1.0, "expert-0001", [], [])
    assert any("prefix-list FROM-R2 in" in c for c in cmd.applied)
    assert rec.ncb.reasoning is not None and rec.ncb.reasoning.score is None and len(rec.ncb.reasoning.weights_sha256) == 64
    assert "reasoning: the agent wrote no reasoning text" in rec.ncb.notes
    assert "ip prefix-list FROM-R2 seq 10 permit 10.2.0.0/24" in rec.ncb.applied_commands["r1"]

    # the scripted agent applies a task's first solution: a copy whose first is the alternative
    alt_file = tasks / "filter-alt.json"
    data = json.loads(TASK.read_text())
    alt_file.write_text(json.dumps({**data, "ground_truth_configs": [ALTERNATIVE]}, indent=2) + "\n")
    alt = _run(alt_file, results)
    assert alt.task_pass is True and alt.ncb.command.f1 == 1.0  # against its own task's only solution
    alt_file.write_text(TASK.read_text())  # the task as shipped: only the expert solution

    decisions = {d.run_id: d for d in harvest(results)}
    # run ids name the task file: both runs are in the store, each judged against filter-alt.json
    # as shipped now; the expert's own run is that solution again, the alternative's is new
    assert set(decisions) == {rec.run_id, alt.run_id}, decisions
    assert not decisions[rec.run_id].harvested
    d = decisions[alt.run_id]
    assert d.harvested and d.best_solution == "expert-0001" and d.best_f1 < 0.5, d
    sol = load_task(alt_file).ground_truth_configs[-1]
    assert sol.provenance == PROVENANCE and sol.model_extra["run_id"] == alt.run_id
    assert sol.model_extra["level"] == "a1"
    assert "ip prefix-list DROP-R2 seq 5 deny 10.2.1.0/24" in sol.configs["r1"]

    from ani.cli import app

    out = tmp_path / "exported"
    res = CliRunner().invoke(app, ["tasks", "export", str(alt_file), "--out", str(out)])
    assert res.exit_code == 0, res.output
    exported = out / alt_file.name
    assert exported.read_bytes() == alt_file.read_bytes()  # the importer's form, unchanged
    assert CliRunner().invoke(app, ["tasks", "import", str(exported)]).exit_code == 0
    before = alt_file.read_bytes()
    again = {x.run_id: x for x in harvest(results)}[alt.run_id]
    assert not again.harvested and "already harvested" in again.reason and alt_file.read_bytes() == before


def test_command_score_of_the_expert_solution_pushed_is_one(lab_host, tmp_path):
    """A new BGP instance: FRR prints the solution's 'no bgp ebgp-requires-policy' (a default
    switched off), which the solution's side must count too."""
    rec = _run(ROOT / "intents" / "netconfbench" / "bgp-neighbor-network.json", tmp_path / "r")
    assert rec.ncb.command.f1 == 1.0, (rec.ncb.command.unmatched, rec.ncb.command.missing)


def test_campaign_report_shows_the_scores_per_cell_and_task(lab_host, tmp_path):
    from ani.campaign.html_report import write_html_report
    from ani.campaign.loop import run_campaign

    shipped = ROOT / "intents" / "netconfbench"
    # (bgp-neighbor-network's solution cannot be pushed at A2: the YANG model lacks its BGP timers)
    tasks = [str(shipped / "static-backup.json"), str(shipped / "ospf-area-adjacency.json")]
    spec = parse_spec({"name": "ncb-scores-levels", "tasks": tasks, "factor": "level",
                       "cells": [{"name": "a1", "level": "a1"}, {"name": "a2", "level": "a2"}]}, "test", ROOT)
    out = tmp_path / "out"
    run_campaign(spec, out, progress=False)
    recs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert len(recs) == 4 and all(r["label"] == "clean_success" for r in recs), [(r["run_id"], r["agent_error"]) for r in recs]
    assert all(r["testcase_score"] == 1.0 and r["task_pass"] and r["ncb"]["command"]["f1"] == 1.0 for r in recs)
    md = (out / "summary.md").read_text()
    assert "## NetConfBench scores (valid runs)" in md
    for cell in ("a1", "a2"):
        assert f"| {cell} | 2 | 1.00 | 2/2 |" in md
        for task in ("static-backup", "ospf-area-adjacency"):
            assert f"| {cell} | {task} | 1 | 1.00 | 1/1 |" in md
    html = write_html_report(out).read_text()
    assert 'id="netconfbench"' in html and "1.00 (2)" in html
