"""summary.md from hand-built records: rates, intervals, paired McNemar, infra listing; CLI errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from typer.testing import CliRunner

from ani.campaign.report import load_summary, render_markdown, summarize, write_report
from ani.campaign.results import RunRecord, RunStore, label_for
from ani.campaign.stats import clopper_pearson, wilson
from ani.cli import app

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def rec(
    cell: str,
    seed: int,
    success: bool | None,
    damage_free: bool | None = True,
    infra: str | None = None,
    **kw,
) -> RunRecord:
    label = "infra_error" if infra else label_for(success, damage_free)
    return RunRecord(
        run_id=f"{cell}-t-s{seed}",
        campaign="c",
        cell=cell,
        level=cell[:2],
        task="t",
        seed=seed,
        label=label,
        success=None if infra else success,
        damage_free=None if infra else damage_free,
        infra_error_reason=infra,
        started=T0,
        ended=T0,
        **kw,
    )


SPEC = {
    "name": "c",
    "task": "t",
    "scenario": "s.yaml",
    "variants": 6,
    "seed": 1,
    "factor": "level",
    "agent": {"kind": "x"},
    "budget": {"max_steps": 5},
    "cells": [
        {"name": "a0", "level": "a0", "blocklist": False},
        {"name": "a1", "level": "a1", "blocklist": False},
    ],
}


def test_paired_counts_and_mcnemar_only_on_valid_pairs():
    records = [rec("a0", s, False) for s in range(1, 7)]
    records += [rec("a1", s, True) for s in range(1, 6)]
    records.append(rec("a1", 6, None, infra="lab up: LabError: boom"))
    s = summarize(records, SPEC)
    a0, a1 = s.cells
    assert (a0.success.k, a0.success.n) == (0, 6)
    assert (a1.success.k, a1.success.n) == (5, 5)  # the infra run is not in the denominator
    assert [r.run_id for r in a1.infra] == ["a1-t-s6"]
    (p,) = s.paired
    assert p.pairs == 5 and (p.success.b, p.success.c) == (0, 5)
    assert p.success.p_value == 0.0625
    assert (p.damage_free.b, p.damage_free.c) == (0, 0) and p.damage_free.p_value == 1.0
    assert p.damage_free.note == "no discordant pairs"
    assert a1.success.wilson == wilson(5, 5) and a0.success.cp == clopper_pearson(0, 6)

    md = render_markdown(s)
    # b, c, the paired difference [Newcombe method 10], p, p (Holm: one comparison, unchanged)
    assert ("| a1 | 5 | 0 | 5 | +1.00 [+0.39, +1.00] | 0.0625 | 0.0625 | 0 | 0 | +0.00 [-0.43, +0.43] "
            "| 1 (no discordant pairs) | 1 |") in md
    assert "- `a1-t-s6` (cell a1, seed 6): lab up: LabError: boom" in md
    lo, hi = wilson(5, 5)
    assert f"5/5 (1.00) | [{lo:.3f}, {hi:.3f}]" in md
    assert "runs recorded: 12 of 12 planned; infrastructure errors: 1" in md


def test_labels_and_means():
    records = [
        rec("a0", 1, True, True, steps=4, tool_calls=6, tool_errors=1, wall_s=10.0),
        rec("a0", 2, True, False, steps=8, tool_calls=10, tool_errors=3, wall_s=20.0),
        rec(
            "a0",
            3,
            False,
            False,
            steps=None,
            tool_calls=2,
            tool_errors=0,
            wall_s=30.0,
            agent_error="RuntimeError: x",
        ),
        rec("a0", 4, None, infra="baseline", tool_calls=99, wall_s=99.0),
    ]
    (c,) = summarize(records, {"cells": [{"name": "a0", "level": "a0"}]}).cells
    assert c.labels == {
        "clean_success": 1,
        "dangerous_success": 1,
        "clean_failure": 0,
        "destructive_failure": 1,
    }
    assert c.mean_steps == 6.0  # None (crashed agent) is not averaged as 0
    assert c.mean_tool_calls == 6.0 and c.mean_tool_errors == 4 / 3 and c.mean_wall_s == 20.0
    assert (c.damage_free.k, c.damage_free.n) == (1, 3) and c.agent_errors == 1


def test_b_and_c_directions():
    records = [
        rec("a0", 1, True),
        rec("a1", 1, False),
        rec("a0", 2, True),
        rec("a1", 2, False),
        rec("a0", 3, False),
        rec("a1", 3, True),
        rec("a0", 4, True),
        rec("a1", 4, True),
    ]
    (p,) = summarize(records, SPEC).paired
    assert (p.success.b, p.success.c, p.pairs) == (2, 1, 4)


def test_damage_bound_section_uses_cp_and_rule_of_three():
    records = [rec("a0", s, True) for s in range(1, 31)]
    md = render_markdown(summarize(records, {"cells": [{"name": "a0", "level": "a0"}]}))
    assert "0 damaged runs of 30" in md
    assert f"below {1 - clopper_pearson(30, 30)[0]:.3f}" in md and "3/n = 0.100" in md


def test_write_report_and_cli_report(tmp_path):
    store = RunStore(tmp_path)
    for r in [rec("a0", 1, True), rec("a1", 1, False)]:
        store.append(r)
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    path = write_report(tmp_path)
    assert path == tmp_path / "summary.md" and "Campaign `c`" in path.read_text()
    path.unlink()
    res = CliRunner().invoke(app, ["campaign", "report", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "summary.md").exists() and "report:" in res.output
    assert load_summary(tmp_path).paired[0].success.b == 1


def test_cli_errors_are_one_line_and_nonzero(tmp_path):
    r = CliRunner()
    res = r.invoke(app, ["campaign", "report", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no such folder" in res.output
    res = r.invoke(app, ["campaign", "report", str(tmp_path)])
    assert res.exit_code == 2 and "no runs.jsonl" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntask: t\n")
    res = r.invoke(app, ["campaign", "run", str(bad)])
    assert res.exit_code == 2
    assert "error:" in res.output and "scenario: Field required" in res.output
    assert "Traceback" not in res.output
    res = r.invoke(app, ["run", "--level", "a7"])
    assert res.exit_code == 2 and "unknown level 'a7'" in res.output


def test_unreadable_lines_are_one_line_warnings_on_the_cli(tmp_path):
    store = RunStore(tmp_path)
    store.append(rec("a0", 1, True))
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    with (tmp_path / "runs.jsonl").open("a") as fh:
        fh.write('{"run_id": "broken\n')
    res = CliRunner().invoke(app, ["campaign", "report", str(tmp_path)])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if "unreadable line" in ln]
    assert lines and lines[0].startswith(f"warning: {tmp_path / 'runs.jsonl'}:2: ignoring an unreadable line: Invalid JSON")
    assert "UserWarning" not in res.output and "return " not in res.output


def test_a_cell_without_any_pair_shows_no_p_value():
    # a campaign interrupted before cell a1 ran a seed that a0 also ran: nothing to compare
    records = [rec("a0", 1, True), rec("a0", 2, False), rec("a1", 3, True)]
    s = summarize(records, SPEC)
    (p,) = s.paired
    assert p.pairs == 0
    md = render_markdown(s)
    assert "| a1 | 0 | 0 | 0 | - | - (no pairs) | - | 0 | 0 | - | - (no pairs) | - |" in md
    assert "- `a1` vs `a0` (0 paired seeds): no seed where both runs are valid, nothing to compare" in md
    assert "1 (no discordant pairs)" not in md


def test_a_record_whose_label_contradicts_its_verdict_is_refused():
    import pytest
    from pydantic import ValidationError

    ok = rec("a0", 1, True, False)
    assert ok.label == "dangerous_success"
    with pytest.raises(ValidationError, match="disagrees with success=True"):
        RunRecord.model_validate({**ok.model_dump(), "label": "clean_success"})
    with pytest.raises(ValidationError, match="infra_error run has no success"):
        RunRecord.model_validate({**ok.model_dump(), "label": "infra_error"})


def test_a_tasks_campaign_warns_only_when_one_task_has_two_scenario_versions():
    # a `tasks:` campaign builds one scenario per task file: different hashes across tasks are
    # the design; two hashes for the runs of ONE task mean the task changed between runs
    spec = {**SPEC, "scenario": None, "tasks": "../intents/netconfbench/",
            "tasks_paths": ["/x/a.json", "/x/b.json"]}
    per_task = [rec(c, s, True, variant_id=v, scenario_hash=h)
                for c in ("a0", "a1") for s, v, h in ((0, "a", "aaaa"), (1, "b", "bbbb"))]
    md = render_markdown(summarize(per_task, spec))
    assert "scenario versions" not in md
    assert "tasks: `../intents/netconfbench/` (2 task files)" in md and "scenario: `None`" not in md
    changed = per_task + [rec("a1", 2, True, variant_id="a", scenario_hash="cccc")]
    assert "scenario versions" in render_markdown(summarize(changed, spec))
    # a scenario campaign keeps the old rule: one version per density, whatever the seed
    assert "scenario versions" in render_markdown(summarize(per_task, SPEC))
