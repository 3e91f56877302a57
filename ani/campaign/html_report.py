"""``report.html``: the campaign report as one self-contained HTML page, plots next to tables.

Built from :func:`ani.campaign.report.summarize` (the numbers of ``summary.md``, which stays)
and the plots of :mod:`ani.campaign.plots` (inline SVG), rendered by the jinja2 template
``ani/campaign/templates/report.html.j2`` (package data; autoescaped). The page needs no
network and no other file: CSS and SVG are inline, no script, no image file, no web font (the
plots draw their text as paths).

Sections: rates per cell with their 95% intervals and, where no run was damaged, the damage
bound (Clopper-Pearson and rule of three); the rates along each stress parameter, one line per
cell (the "does the difference persist" plot); labels and cost (tokens, steps, wall time);
process metrics; paired comparisons (the question each answers in a line; discordant pairs, the
paired difference with Newcombe's method 10 interval, exact McNemar p and Holm's); with an agent that makes mistakes on
purpose, the known answer (prevention by level and mistake kind, the observer's sensitivity and
specificity, the comparisons explained by mistake kind, issue 25 §3); damage magnitude by service class; faults
injected and runs invalidated (``infra_error``, ``environment_invalid``), fault exposure per cell
and the comparisons whose cells met different exposure (issue 23 §2); agent errors and
unattributed failures; every run.

Deterministic: the page holds no time of its own making (only the records' values), the plots
are deterministic SVG, so the same ``runs.jsonl`` and ``spec.json`` give a byte-identical file.

    write_html_report("results/level-sweep-default-20260101-120000")  # -> .../report.html
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from ani.campaign.metrics import ACTION_KINDS, COMPLETION_MODES
from ani.campaign.plots import rows as shown_rows
from ani.campaign.plots import (
    Plot,
    all_plots,
    damage_classes,
    damaged_by_class,
    fault_kinds_seen,
    field,
    invalid_labels,
    paired_rows,
    run_faults,
    run_tokens,
    stress_params,
    stress_series,
)
from ani.campaign.known_answer_report import known_answer_context  # issue 25 §3
from ani.campaign.observer_report import fault_explained
from ani.campaign.report import (
    BLOCKLIST_SCOPE,
    EXPOSURE_COLUMNS,
    EXPOSURE_NOTE,
    MODE_SHORT,
    CampaignSummary,
    Rate,
    _blk,
    _ci,
    _f,
    _pct,
    _rate,
    difference_text,
    exposure_rows,
    exposure_warning,
    load_summary,
    paired_note,
    provenance_lines,
    question_lines,
)
from ani.campaign.results import LABELS, RunRecord
from ani.stats import rule_of_three, wilson
from ani.netconfbench.report import ncb_rows  # ncb-scores (issue 15 §3)
from ani.observer.sampler import unexplained_unsafe

HTML_FILE = "report.html"


class _Plots(dict):
    """Plots by id; a plot the summary has no data for is None (the template leaves it out)."""

    def __missing__(self, key: str) -> None:
        return None


TEMPLATE = "report.html.j2"


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("ani.campaign", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,  # a misspelt field in the template fails, not blanks
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def _bound(r: Rate) -> str:
    """The damage bound of a row with no damaged run: ``< 0.142 (CP), 3/n = 0.150``; else ``-``."""
    if not r.n or r.k != r.n:
        return "-"
    return f"damage < {1 - r.cp[0]:.3f} (Clopper-Pearson 95%), rule of three 3/n = {rule_of_three(r.n):.3f}"


def _reason(r: RunRecord) -> str:
    """Why a run has no verdict: its infra_error reason, or the fault session's reason."""
    for name in ("infra_error_reason", "environment_invalid_reason", "invalid_reason"):
        v = getattr(r, name, None)
        if v:
            return str(v)
    return "-"


def _spec_lines(s: CampaignSummary) -> list[str]:
    sp = s.spec or {}
    if not sp:
        return []
    tasks = sorted({r.task for r in s.records}) or [sp.get("task")]
    where = (
        f"manifest {sp.get('manifest')} (scenario seed {sp.get('scenario_seed')}, density "
        f"{sp.get('density') if sp.get('density') is not None else 'of the manifest'})"
        if sp.get("manifest") else f"scenario {sp.get('scenario')}"
    )
    seed = int(sp.get("seed", 0) or 0)
    variants = int(sp.get("variants", 0) or 0)
    lines = [
        f"task: {', '.join(str(t) for t in tasks)}; {where}",
        f"variants S = {variants} (seeds {seed}..{seed + variants - 1}); factor: {sp.get('factor')}",
    ]
    for p, values in stress_params(s):
        lines.append(f"stress: {p} over {', '.join(map(str, values))}")
    unit = fault_rate_unit(sp.get("faults") or {})
    if sp.get("fault_rate"):
        lines.append(f"fault rate: {sp.get('fault_rate')} faults {unit}")
    elif any(p == "fault_rate" for p, _ in stress_params(s)):
        lines.append(f"fault rates: faults {unit}")
    lines += [f"agent: {json.dumps(sp.get('agent'), sort_keys=True)}",
              f"budget: {json.dumps(sp.get('budget'), sort_keys=True)}"]
    return lines


def fault_rate_unit(faults: dict[str, Any]) -> str:
    """What a fault rate counts under the spec's ``faults:`` block: ``per agent step`` (points
    are tool calls), or ``per 2.0 s of agent time (placement: time)``; ``, held to their end``
    added with ``hold`` (docs/faults.md, "Exposure")."""
    if faults.get("placement") == "time":
        unit = f"per {faults.get('step_s', 2.0)} s of agent time (placement: time)"
    else:
        unit = "per agent step"
    return unit + (", every fault held to its end after the agent stops" if faults.get("hold") else "")


#: per-run outcomes other parts of issue 14 record (observer-run, cases-tools): (column, what
#: counts a run); a column is shown when some record has the field
OUTCOME_COLUMNS: tuple[tuple[str, str, Any], ...] = (
    ("unsafe", "passed through an unsafe state no fault explains",  # issue 23 §2
     lambda r: unexplained_unsafe(getattr(r, "unsafe", None))),
    ("unsafe", "had violations or grading failures a fault explains (fault-explained)", fault_explained),
    ("recovered", "did not recover", lambda r: getattr(r, "recovered", None) is False),
    ("unrequested_changes", "left changes nobody asked for", lambda r: bool(getattr(r, "unrequested_changes", None))),
    ("oscillating", "oscillated", lambda r: bool(getattr(r, "oscillating", None))),
    ("invalid_calls", "made invalid calls", lambda r: bool(getattr(r, "invalid_calls", None))),
    ("double_applied", "applied a change twice", lambda r: bool(getattr(r, "double_applied", None))),
    ("partial", "left a change half applied", lambda r: bool(getattr(r, "partial", None))),
    ("locks_left", "left a lock held", lambda r: bool(getattr(r, "locks_left", None))),
)


def _outcomes(s: CampaignSummary, shown: list[Any], bad: tuple[str, ...]) -> dict[str, Any]:
    """The "observer and measured outcomes" table: per row, how many valid runs had each outcome
    (columns only for fields the records have), and the mean recovery time."""
    fields = [(f, text, test) for f, text, test in OUTCOME_COLUMNS
              if any(f in type(r).model_fields for r in s.records)]
    has_recovery = any("recovery_s" in type(r).model_fields for r in s.records)
    rows = []
    for c in shown:
        valid = [r for r in c.runs if r.label not in bad]
        rec_s = _mean(getattr(r, "recovery_s", None) for r in valid)
        rows.append({"name": c.name, "runs": len(valid),
                     "counts": [sum(1 for r in valid if test(r)) for _, _, test in fields],
                     "recovery_s": _f(rec_s, ".1f")})
    return {"columns": [text for _, text, _ in fields], "recovery": has_recovery, "rows": rows}


def _cell_row(c: Any, bad: tuple[str, ...]) -> dict[str, Any]:
    """One row of the cells table: rates with their intervals, labels, means and process metrics."""
    tokens = _mean(run_tokens(r) for r in c.valid)
    return {
        "name": c.name, "level": c.level, "blocklist": _blk(c.blocklist, c.level), "n": c.success.n,
        "invalid": sum(1 for r in c.runs if r.label in bad),
        "success": _rate(c.success), "success_wilson": _ci(c.success.wilson),
        "success_cp": _ci(c.success.cp),
        "damage_free": _rate(c.damage_free), "damage_free_wilson": _ci(c.damage_free.wilson),
        "damage_free_cp": _ci(c.damage_free.cp), "bound": _bound(c.damage_free),
        "labels": [c.labels[lab] for lab in LABELS], "agent_errors": c.agent_errors,
        "steps": _f(c.mean_steps, ".1f"), "tool_calls": _f(c.mean_tool_calls, ".1f"),
        "tool_errors": _f(c.mean_tool_errors, ".1f"), "wall_s": _f(c.mean_wall_s, ".1f"),
        "tokens": _f(tokens, ".0f"),
        "process": {
            "runs": c.process.runs, "actions": c.process.actions,
            "turns": _f(c.process.mean_turns, ".1f"),
            "shares": [_pct(c.process.shares[k]) for k in ACTION_KINDS],
            "error_rate": _pct(c.process.error_action_rate),
            "repeat_rate": _pct(c.process.repeat_action_rate),
            "modes": [c.process.modes[m] for m in COMPLETION_MODES],
            "prompt_tokens": _f(c.process.mean_prompt_tokens, ".0f"),
            "completion_tokens": _f(c.process.mean_completion_tokens, ".0f"),
            "agent_s": _f(c.process.mean_agent_s, ".1f"),
        },
    }


def _stress_tables(s: CampaignSummary, plots: _Plots) -> list[dict[str, Any]]:
    """Per stress parameter: both rates per cell at each value (k/n with Wilson), and its plot."""
    stress = []
    for param, values in stress_params(s):
        series = stress_series(s, param, values)
        rows = []
        for cell in series["success"]:
            for attr in ("success", "damage_free"):
                pts = series[attr][cell]
                rows.append({"cell": cell, "rate": attr.replace("_", "-"), "values": [
                    "-" if not n else f"{k}/{n} {_ci(wilson(k, n))}" for k, n in pts]})
        stress.append({"param": param, "values": [str(v) for v in values], "rows": rows,
                       "plot": plots.get(f"stress-{param}")})
    return stress


def _paired_row(p: Any) -> dict[str, Any]:
    """One paired comparison: discordant pairs and exact McNemar p per rate, the difference with
    its interval and Holm's p."""
    return {
        "cell": p.cell, "reference": p.reference, "pairs": p.pairs,
        "success": (p.success.b, p.success.c,
                    "- (no pairs)" if p.pairs == 0 else f"{p.success.p_value:.4g}"
                    + (f" ({p.success.note})" if p.success.note else "")),
        "damage_free": (p.damage_free.b, p.damage_free.c,
                        "- (no pairs)" if p.pairs == 0 else f"{p.damage_free.p_value:.4g}"
                        + (f" ({p.damage_free.note})" if p.damage_free.note else "")),
        "exposure": list(p.exposure),  # issue 23 §2: the cells met different fault exposure
        # issue 26 §3: the paired difference with its interval, Holm's p
        "success_diff": difference_text(p.success_diff),
        "success_holm": "-" if not p.pairs else f"{p.success_holm:.3g}",
        "damage_free_diff": difference_text(p.damage_free_diff),
        "damage_free_holm": "-" if not p.pairs else f"{p.damage_free_holm:.3g}",
    }


def _damage_row(c: Any, bad: tuple[str, ...], classes: list[str]) -> dict[str, Any]:
    """One cell's damage by class: objects damaged (runs that damaged any) over its valid runs."""
    valid = [r for r in c.runs if r.label not in bad]
    per = {cls: [len(damaged_by_class(r).get(cls, [])) for r in valid] for cls in classes}
    return {"name": c.name, "runs": len(valid), "classes": [
        "-" if not valid else f"{sum(per[cls])} ({sum(1 for x in per[cls] if x)} runs)"
        for cls in classes]}


def _fault_row(c: Any, bad: tuple[str, ...], kinds: list[str]) -> dict[str, Any]:
    """One cell's faults: injected/planned per kind, and its invalid runs per label."""
    recs = [f for r in c.runs for f in run_faults(r)]
    return {"name": c.name, "kinds": [
        f"{sum(1 for f in recs if field(f, 'kind') == k and field(f, 'injected', False))}"
        f"/{sum(1 for f in recs if field(f, 'kind') == k)}" for k in kinds],
        "invalid": [sum(1 for r in c.runs if r.label == lab) for lab in bad]}


def _fault_event(r: RunRecord, f: Any) -> dict[str, Any]:
    """One fault of one run, as the fault events table shows it."""
    return {
        "run": r.run_id, "kind": field(f, "kind", "?"), "at_step": field(f, "at_step", "-"),
        "target": json.dumps(field(f, "target", {}), sort_keys=True),
        "duration": _f(field(f, "duration_s"), ".1f") if field(f, "duration_s") is not None else "until the end",
        "injected": "yes" if field(f, "injected", False) else "no",
        "verified": {True: "yes", False: "no"}.get(field(f, "verified"), "-"),
        "undone_by": field(f, "undone_by") or "-",
        "detail": str(field(f, "detail", "")),
    }


def _run_row(r: RunRecord) -> dict[str, Any]:
    """One run of the runs table."""
    return {
        "run": r.run_id, "cell": r.cell, "seed": r.seed, "label": r.label,
        "stress": ", ".join(f"{k}={v}" for k, v in sorted((r.stress or {}).items())) or "-",
        "tests": f"{sum(x.passed for x in r.tests)}/{len(r.tests)}" if r.tests else "-",
        "invariants": (f"{sum(x.passed for x in r.invariants)}/{len(r.invariants)}"
                       if r.invariants else "-"),
        "steps": "-" if r.steps is None else str(r.steps), "tool_calls": r.tool_calls,
        "tool_errors": r.tool_errors, "faults": len(run_faults(r)),
        "stop": r.stop_reason or "-", "wall_s": f"{r.wall_s:.1f}",
    }


def context(s: CampaignSummary) -> dict[str, Any]:
    """What the template shows: plots by id, and every table as rows of strings."""
    plots = _Plots({p.id: p for p in all_plots(s)})
    shown = shown_rows(s)
    bad = invalid_labels()
    invalid_runs = [r for r in s.records if r.label in bad]
    paired = [_paired_row(p) for p in paired_rows(s)]
    classes = damage_classes(s)
    damaged_runs = [{"run": r.run_id, "label": r.label, "damaged": "; ".join(
        f"{k}: {', '.join(v)}" for k, v in sorted(damaged_by_class(r).items()))}
        for c in shown for r in c.runs if r.label not in bad and damaged_by_class(r)]
    kinds = fault_kinds_seen(s)
    valid_all = [r for r in s.records if r.label not in bad]
    hashes = sorted({r.scenario_hash for r in s.records if r.scenario_hash})
    return {
        "name": s.name,
        "spec_lines": _spec_lines(s) + [x.replace("**", "") for x in provenance_lines(s.records)],
        "hashes": [h[:16] for h in hashes],
        "recorded": len(s.records),
        "planned": s.planned,
        "invalid_total": len(invalid_runs),
        "labels": LABELS,
        "invalid_labels": bad,
        "action_kinds": ACTION_KINDS,
        "modes": [MODE_SHORT[m] for m in COMPLETION_MODES],
        "cells": [_cell_row(c, bad) for c in shown],
        "blocklist_note": BLOCKLIST_SCOPE if any(c.blocklist for c in shown) else "",
        "plots": plots,
        "stress": _stress_tables(s, plots),
        "paired": paired,
        "paired_refs": list(dict.fromkeys(p.reference for p in paired_rows(s))),
        "questions": question_lines(s, ""),  # issue 26 §3: one line per comparison
        "paired_note": paired_note(s) if s.paired else "",
        "damage_classes": classes,
        "damage": [_damage_row(c, bad, classes) for c in shown],
        "damaged_runs": damaged_runs,
        "fault_kinds": kinds,
        "faults": [_fault_row(c, bad, kinds) for c in shown],
        "fault_events": [_fault_event(r, f) for c in shown for r in c.runs for f in run_faults(r)],
        "exposure": {"columns": EXPOSURE_COLUMNS, "rows": exposure_rows(s), "note": EXPOSURE_NOTE},
        "exposure_warning": exposure_warning(),
        "invalid_runs": [{"run": r.run_id, "cell": r.cell, "seed": r.seed, "label": r.label,
                          "reason": _reason(r)} for r in invalid_runs],
        "unattributed": [{"run": r.run_id, "label": r.label, "why": r.unattributed}
                         for r in valid_all if r.unattributed],
        "agent_errors": [{"run": r.run_id, "label": r.label, "why": r.agent_error}
                         for r in valid_all if r.agent_error],
        "runs": [_run_row(r) for c in shown for r in c.runs],
        "outcomes": _outcomes(s, shown, bad),
        "ncb": ncb_rows(s),  # ncb-scores (issue 15 §3)
        "known": known_answer_context(s),  # issue 25 §3: None without mistake runs
    }


def render_html(s: CampaignSummary) -> str:
    """The text of ``report.html`` for a summary (deterministic)."""
    ctx = context(s)
    ctx["svg"] = lambda p: Markup(p.svg) if isinstance(p, Plot) else ""  # noqa: S704 - our own SVG
    return _env().get_template(TEMPLATE).render(**ctx)


def write_html_report(out_dir: str | Path, reference: str | None = None) -> Path:
    """(Re)write ``out_dir/report.html`` from ``runs.jsonl`` and ``spec.json``, the comparisons
    against ``reference`` (:func:`ani.campaign.report.load_summary`); returns its path.

    Raises FileNotFoundError if ``out_dir`` is not a folder; CampaignSpecError: an unknown
    ``reference``. Written to a temporary file and renamed, so a reader never sees half a page.
    """
    out = Path(out_dir)
    if not out.is_dir():
        raise FileNotFoundError(f"{out} is not a folder")
    path = out / HTML_FILE
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render_html(load_summary(out, reference)), encoding="utf-8")
    tmp.replace(path)
    return path
