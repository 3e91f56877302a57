"""The NetConfBench scores in the campaign reports (``summary.md`` and ``report.html``).

- :func:`ncb_rows`: per cell (valid runs) the mean testcase score, the task pass rate with its
  95% Wilson interval, the mean command F1 and reasoning score (with how many runs have one),
  and the efficiency means (wall s, tokens, tool calls, from the runs' ``cost``); per task
  (NetConfBench runs: the task file's stem) the same without efficiency.
- :func:`ncb_line`: one line for ``ani run`` of a NetConfBench task.
- :func:`ncb_markdown`: the section ``## NetConfBench scores`` of ``summary.md`` built from
  them, with the reasoning model and weight hash the reasoning scores were computed with.

A cell none of whose runs has a testcase score (records written before it existed) shows
``-``; a campaign without any shows no section.
"""

from __future__ import annotations

from typing import Any

from ani.netconfbench.scoring import CellScores, cell_scores

__all__ = ["ncb_line", "ncb_markdown", "ncb_rows"]


def _f(v: float | None, fmt: str = ".2f") -> str:
    return "-" if v is None else format(v, fmt)


def _row(name: str, c: CellScores) -> dict[str, str]:
    return {
        "name": name, "runs": str(c.runs), "testcase_score": _f(c.testcase_score),
        "pass": "-" if not c.runs else f"{c.passed}/{c.runs}",
        "pass_wilson": "-" if c.pass_wilson is None else f"[{c.pass_wilson[0]:.2f}, {c.pass_wilson[1]:.2f}]",
        "command_f1": "-" if c.command_f1 is None else f"{c.command_f1:.2f} ({c.command_runs})",
        "reasoning": "-" if c.reasoning is None else f"{c.reasoning:.2f} ({c.reasoning_runs})",
    }


def _cost_mean(valid: list[Any], key: str) -> float | None:
    vals = [r.cost.get(key) for r in valid if r.cost and r.cost.get(key) is not None]
    return sum(vals) / len(vals) if vals else None


def ncb_rows(s: Any) -> dict[str, Any]:
    """``{"cells": [row], "tasks": [row with "cell" and "task"], "models": [str]}`` for a
    :class:`ani.campaign.report.CampaignSummary`; ``cells`` is [] when no valid run has a
    testcase score."""
    cells, tasks, models = [], [], set()
    for c in s.cells:
        sc = cell_scores(c.valid)
        models.update(sc.reasoning_models)
        row = _row(c.name, sc)
        row.update(wall_s=_f(_cost_mean(c.valid, "wall_s"), ".1f"), tokens=_f(_cost_mean(c.valid, "tokens"), ".0f"),
                   tool_calls=_f(_cost_mean(c.valid, "tool_calls"), ".1f"))
        cells.append(row)
        if any(getattr(r, "ncb", None) is not None for r in c.valid):
            tasks += [{"cell": c.name, "task": t, **_row(t, ts)} for t, ts in sc.tasks.items()]
    if not any(row["runs"] != "0" for row in cells):
        cells = []
    return {"cells": cells, "tasks": tasks, "models": sorted(models)}


def ncb_markdown(s: Any) -> list[str]:
    """The ``summary.md`` section (module doc); [] when no valid run has a testcase score."""
    rows = ncb_rows(s)
    if not rows["cells"]:
        return []
    lines = [
        "", "## NetConfBench scores (valid runs)", "",
        "Testcase score: passed / all hidden tests (testcases), mean over runs; task pass: runs that "
        "passed all (95% Wilson interval); command F1 and reasoning score: diagnostic, means over "
        "the runs that have one (their count in parentheses); efficiency: means of the runs' cost.",
        "",
        "| cell | runs | testcase score | task pass | Wilson | command F1 | reasoning | wall s | tokens | tool calls |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows["cells"]:
        lines.append(f"| {r['name']} | {r['runs']} | {r['testcase_score']} | {r['pass']} | {r['pass_wilson']} "
                     f"| {r['command_f1']} | {r['reasoning']} | {r['wall_s']} | {r['tokens']} | {r['tool_calls']} |")
    if rows["tasks"]:
        lines += ["", "| cell | task | runs | testcase score | task pass | Wilson | command F1 | reasoning |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in rows["tasks"]:
            lines.append(f"| {r['cell']} | {r['task']} | {r['runs']} | {r['testcase_score']} | {r['pass']} "
                         f"| {r['pass_wilson']} | {r['command_f1']} | {r['reasoning']} |")
    if rows["models"]:
        lines += ["", "Reasoning scores computed with: " + "; ".join(f"`{m}`" for m in rows["models"])
                  + (" (**different models: the scores do not compare**)" if len(rows["models"]) > 1 else "")]
    return lines


def ncb_line(rec: Any) -> str | None:
    """``testcase score 0.75 (task failed); command F1 0.80 (P 1.00 R 0.67) against expert-0001;
    reasoning 0.66 (wordllama ...)`` for a run with NetConfBench scores, else None."""
    ncb = getattr(rec, "ncb", None)
    if ncb is None:
        return None
    parts = [f"testcase score {_f(rec.testcase_score)} ({'task passed' if rec.task_pass else 'task failed'})"]
    c = ncb.command
    parts.append("command F1 -" if c is None else
                 f"command F1 {c.f1:.2f} (P {c.precision:.2f} R {c.recall:.2f}) against {c.solution_id}")
    r = ncb.reasoning
    parts.append("reasoning -" if r is None or r.score is None else f"reasoning {r.score:.2f} ({r.model})")
    return "; ".join(parts) + (f" [{'; '.join(ncb.notes)}]" if ncb.notes else "")
