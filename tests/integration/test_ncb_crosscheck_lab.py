"""The command score's frr-reload cross-check (ani.netconfbench.reload_check) with FRR's own
``frr-reload.py --test``: on every shipped task's expert solution (no lab: frr-reload reads
both configurations from files), and in the record of scripted runs on real FRR labs: one
whose diff both sides agree on, and one whose solution adds a ``no`` line inside an existing
``router bgp`` block, which hier-config's difference skips and frr-reload lists."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ani.campaign.runner import run_one
from ani.campaign.spec import parse_spec
from ani.device.parse import parse
from ani.netconfbench.command_score import applied_changes, solution_end_state
from ani.netconfbench.lab import task_scenario
from ani.netconfbench.reload_check import crosscheck
from ani.netconfbench.task import load_tasks

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
SHIPPED = ROOT / "intents" / "netconfbench"
FILTER = SHIPPED / "bgp-prefix-list-filter.json"


@pytest.mark.parametrize("path", sorted(SHIPPED.glob("*.json")), ids=lambda p: p.stem)
def test_frr_reload_agrees_on_every_shipped_solution(path):
    """The start -> the first solution's end state of each shipped task (in the lab's names),
    router by router: frr-reload's lines to add and delete are hier-config's changes."""
    [(_, task)] = load_tasks(path)
    mapped = task_scenario(task, source=path).task
    initial = {d: parse(text) for d, text in mapped.startup_configs.items()}
    final = {**initial, **solution_end_state(initial, mapped.ground_truth_configs[0].configs)}
    applied = applied_changes(initial, final)
    checked, note = crosscheck(initial, final, applied)
    assert note == "", {r: (c.only_hier, c.only_frr, c.error) for r, c in (checked or {}).items()}
    assert set(checked) == set(initial) and all(c.agree for c in checked.values())
    assert any(c.frr for c in checked.values())  # the solution changes something: frr-reload saw it


def _run(path: Path, out: Path):
    spec = parse_spec({"name": "ncb-xc", "tasks": str(path), "cells": [{"name": "a1", "level": "a1"}]}, "test", ROOT)
    rec = run_one(spec, "a1", 0, out)
    assert rec.label == "clean_success", (rec.infra_error_reason, rec.agent_error, rec.tests)
    return rec


def test_a_run_both_diffs_agree_on(lab_host, tmp_path):
    rec = _run(FILTER, tmp_path / "r")
    cmd = rec.ncb.command
    assert cmd.f1 == 1.0 and cmd.crosscheck_note == "" and not any(n.startswith("command crosscheck") for n in rec.ncb.notes)
    assert set(cmd.crosscheck) == {"r1", "r2"}
    r1, r2 = cmd.crosscheck["r1"], cmd.crosscheck["r2"]
    assert (r1.agree, r1.only_hier, r1.only_frr, r2.agree, r2.frr) == (True, [], [], True, [])
    assert "+ router bgp 65001 / address-family ipv4 unicast / neighbor 10.0.12.2 prefix-list FROM-R2 in" in r1.frr
    assert sorted(r1.frr) == sorted(c.split(": ", 1)[1] for c in cmd.applied)
    assert r1.elapsed_s > 0


def test_a_no_line_in_an_existing_block_is_seen_by_frr_reload_only(lab_host, tmp_path):
    """The filter task with one more line in its solution, under the existing ``router bgp
    65001``: ``no bgp network import-check``. FRR runs it and prints it; hier-config's
    difference skips it on both sides of the command score (F1 stays 1.0); the cross-check
    names it."""
    data = json.loads(FILTER.read_text())
    lines = data["ground_truth_configs"][0]["configs"]["r1"]
    at = lines.index("router bgp 65001") + 1
    data["ground_truth_configs"][0]["configs"]["r1"] = [*lines[:at], "no bgp network import-check", *lines[at:]]
    task = tmp_path / "filter-no-line.json"
    task.write_text(json.dumps(data, indent=2) + "\n")
    rec = _run(task, tmp_path / "r")
    assert "import-check" not in rec.ncb.initial_configs["r1"]  # the start has none
    assert "no bgp network import-check" in rec.ncb.applied_commands["r1"]  # FRR runs it
    cmd = rec.ncb.command
    assert cmd.f1 == 1.0
    assert not any("import-check" in c for c in cmd.applied)  # hier-config's diff: skipped
    r1 = cmd.crosscheck["r1"]
    assert r1.agree is False and r1.only_hier == []
    assert r1.only_frr == ["+ router bgp 65001 / no bgp network import-check"]
    assert cmd.crosscheck["r2"].agree is True
    assert cmd.crosscheck_note == "frr-reload disagrees with hier-config on r1"
    assert "command crosscheck: frr-reload disagrees with hier-config on r1" in rec.ncb.notes
