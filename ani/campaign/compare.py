"""``ani campaign compare DIR_A DIR_B``: two campaigns over the same plans, paired run by run
(issue 27 §4).

Pairing: a run of A and a run of B are a pair when their plans (``plan.jsonl``,
:class:`ani.campaign.plan.RunPlan`) have the same **key**: cell, task variant (the task class, or
with NetConfBench task files the seed's task file's stem), form, seed and stress point. Every other field of the two plans must then agree, except **the factor**
being compared:

- ``--factor FIELD`` names it (one of :data:`FACTORS`);
- else it is the one plan field in which the two campaigns differ, if there is one and it is
  ``agent`` (the agent block: model, mode, mistakes: two models run over the same plans);
- else, the plans agreeing in everything, it is ``provenance``: what produced the runs (ani
  version and commit, FRR, kernel, Python; the same plans run on another day or another ani).

Compared fields (:data:`COMPARED`): level, blocklist, adapter_options, form, density,
``scenario_hash`` (the plan's scenario hash, else the record's: the brownfield the run met),
fault_rate, faults (the schedule), fault_hold, agent, budget, observer_bound_s,
reasoning_summary. Not compared: run_id, campaign, lab_prefix, the plan's version, and where the
scenario file lies (paths differ between folders; the hash says whether it is the same one).
A field other than the factor that differs in any pair refuses the comparison
(:class:`~ani.errors.CampaignSpecError`, exit 2), naming the field, how many runs and the first
run with both values: ``plans differ in scenario_hash for 21 runs (a1-onboard-site-s1:
f161abbb3a6a vs 0c1d2e3f4a5b)``.

Statistics per row (cell at a stress point), over the pairs where both runs are valid (not
``infra_error`` / ``environment_invalid``): both rates with their 95% Wilson intervals, the
discordant pairs (b: A yes and B no; c: the reverse), the exact McNemar p, the paired difference
``A - B`` with Newcombe's (1998) method 10 interval, and Holm's adjustment across the rows, per
outcome (:mod:`ani.stats`). Runs planned in one campaign only, planned in both but
recorded in one only, or without a verdict in one, are counted and listed (never dropped
silently). The provenance of each side is shown, and the keys in which they differ.

    cmp = compare_dirs("results/sweep-qwen", "results/sweep-llama")
    print(render_markdown(cmp))
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ani.campaign.plan import RunPlan, read_plans
from ani.campaign.report import (
    PAIRED_OUTCOMES,
    agent_text,
    environment_text,
    difference_text,
    stress_label,
)
from ani.campaign.results import INVALID_LABELS, RunRecord, read_runs
from ani.stats import (
    PAIRED_METHOD,
    PAIRED_SOURCE,
    Interval,
    McNemarResult,
    PairedDifference,
    holm,
    mcnemar_exact,
    newcombe_paired,
    wilson,
)
from ani.errors import CampaignSpecError

#: the plan fields that must agree between the two runs of a pair (unless one is the factor)
COMPARED: tuple[str, ...] = (
    "level", "blocklist", "adapter_options", "form", "density", "scenario_hash", "fault_rate", "faults",
    "fault_hold", "agent", "budget", "observer_bound_s", "reasoning_summary",
)
#: what ``--factor`` accepts: a compared field, or ``provenance`` (the plans all agree)
FACTORS: tuple[str, ...] = (*COMPARED, "provenance")
#: the provenance keys shown side by side (RunRecord.provenance)
PROVENANCE_KEYS: tuple[str, ...] = ("ani_sdk", "git_commit", "git_dirty", "frr", "kernel", "python", "agent")
#: how many runs a refusal or an unpaired list names before "..."
SHOWN = 5


def task_variant(plan: RunPlan) -> str:
    """The run's task variant: with NetConfBench task files (``scenario.tasks``) the stem of the
    seed's task file (:func:`ani.netconfbench.variant.task_variant_id`), else the task class."""
    tasks = plan.scenario.tasks
    if tasks and 0 <= plan.seed < len(tasks):
        from ani.netconfbench.variant import task_variant_id

        return task_variant_id(tasks[plan.seed])
    return plan.task


def pair_key(plan: RunPlan) -> tuple[str, str, str, int | None, str]:
    """What pairs two runs: ``(cell, task variant, form, seed, stress label)``; with NetConfBench
    task files the seed is None (there it is the task file's index in the campaign's list, and
    two campaigns may list the files in another order: the task variant pairs them)."""
    seed = None if plan.scenario.tasks else plan.seed
    return (plan.cell, task_variant(plan), plan.form, seed, stress_label(plan.stress))


def _value(plan: RunPlan, rec: RunRecord | None, name: str) -> Any:
    """A compared field of a run (JSON data): the plan's, ``scenario_hash`` from the plan's
    scenario reference, else the record's."""
    if name == "scenario_hash":
        return plan.scenario.hash or (rec.scenario_hash if rec is not None else None)
    return json.loads(json.dumps(getattr(plan, name), default=str))


def _short(v: Any) -> str:
    """A value as the refusal shows it: hashes cut to 12 characters, JSON compact, at most 60."""
    if isinstance(v, str) and len(v) == 64 and all(ch in "0123456789abcdef" for ch in v):
        return v[:12]
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass
class Side:
    """One campaign: its folder, name, label in the lines (``name@factor value``), plans by
    key and records by run id."""

    path: Path
    name: str
    plans: dict[tuple, RunPlan]
    records: dict[str, RunRecord]
    label: str = ""

    def record(self, plan: RunPlan) -> RunRecord | None:
        return self.records.get(plan.run_id)


@dataclass
class Row:
    """The paired statistics of one cell (at one stress point): A's rate first.

    ``pairs``: pairs with both runs valid. ``rates[attr]``: (A's k, B's k) over the pairs.
    ``mcnemar[attr]``: b = A yes and B no, c = the reverse. ``diff[attr]``: A - B with Newcombe's
    method 10 interval. ``holm[attr]``: the McNemar p Holm-adjusted across the rows with pairs.
    """

    name: str
    pairs: int
    rates: dict[str, tuple[int, int]] = field(default_factory=dict)
    mcnemar: dict[str, McNemarResult] = field(default_factory=dict)
    diff: dict[str, PairedDifference] = field(default_factory=dict)
    holm: dict[str, float | None] = field(default_factory=dict)

    def interval(self, attr: str, side: int) -> Interval:
        """The 95% Wilson interval of side 0 (A) or 1 (B) over the pairs."""
        return wilson(self.rates[attr][side], self.pairs)


@dataclass
class Comparison:
    """Two campaigns compared: the factor, the rows, what was not paired, the provenance."""

    a: Side
    b: Side
    factor: str
    factor_values: tuple[str, str]
    rows: list[Row]
    #: runs that are in no pair, with why: ``(run id, "planned in A only")``
    unpaired: list[tuple[str, str]]
    #: per side, the distinct environments and agents of its records (report.provenance wording)
    provenance: tuple[list[str], list[str]]
    #: the provenance keys whose values differ between the sides
    provenance_differs: list[str]


def _load(path: str | Path) -> Side:
    """A results folder as a :class:`Side`. Raises CampaignSpecError: not a folder, no plan."""
    p = Path(path)
    if not p.is_dir():
        raise CampaignSpecError(f"{p}: no such folder")
    plans = read_plans(p)
    by_key: dict[tuple, RunPlan] = {}
    for plan in plans:
        by_key[pair_key(plan)] = plan
    name = plans[0].campaign if plans else p.name
    return Side(p, name, by_key, {r.run_id: r for r in read_runs(p)})


def _differences(a: Side, b: Side, keys: list[tuple]) -> dict[str, list[tuple[str, Any, Any]]]:
    """Per compared field, the pairs whose two runs disagree: ``(A's run id, A's value, B's)``."""
    out: dict[str, list[tuple[str, Any, Any]]] = {}
    for k in keys:
        pa, pb = a.plans[k], b.plans[k]
        for name in COMPARED:
            va, vb = _value(pa, a.record(pa), name), _value(pb, b.record(pb), name)
            if va != vb:
                out.setdefault(name, []).append((pa.run_id, va, vb))
    return out


def _refusal(diffs: dict[str, list[tuple[str, Any, Any]]], factor: str | None) -> str:
    """``plans differ in scenario_hash for 21 runs (a1-onboard-site-s1: f161abbb3a6a vs ...)``;
    ``; ...`` per field, then what to do."""
    parts = []
    for name, items in diffs.items():
        rid, va, vb = items[0]
        parts.append(f"plans differ in {name} for {len(items)} run{'' if len(items) == 1 else 's'} "
                     f"({rid}: {_short(va)} vs {_short(vb)})")
    what = (f"the factor compared is {factor}; every other field must agree" if factor else
            "only the agent block may differ (else name the factor with --factor FIELD)")
    return "; ".join(parts) + f": {what}, so these campaigns are not compared"


def _factor_line(c: Comparison) -> str:
    """What the comparison varies; the same plans run twice by the same ani, FRR and agent
    (``provenance`` with equal values) are said to be a repetition, not "X vs X"."""
    a, b = c.factor_values
    if c.factor == "provenance" and a == b:
        return ("factor compared: none (the same plans, run twice by the same ani-sdk, FRR, kernel, Python "
                "and agent: a repetition); every plan field agrees in every pair")
    return f"factor compared: {c.factor} ({a} vs {b}); every other plan field agrees in every pair"


def choose_factor(diffs: dict[str, list], wanted: str | None) -> str:
    """The factor (see the module's docstring).

    Raises:
        CampaignSpecError: ``wanted`` is not one of :data:`FACTORS`; a field other than the
            factor differs (:func:`_refusal`).
    """
    if wanted is not None and wanted not in FACTORS:
        raise CampaignSpecError(f"--factor {wanted!r}: not a field that can be compared; one of: {', '.join(FACTORS)}")
    if wanted is not None:
        other = {k: v for k, v in diffs.items() if k != wanted}
        if other:
            raise CampaignSpecError(_refusal(other, wanted))
        return wanted
    if not diffs:
        return "provenance"
    if set(diffs) == {"agent"}:
        return "agent"
    raise CampaignSpecError(_refusal({k: v for k, v in diffs.items() if k != "agent"}, None))


def _agent_value(plans: list[RunPlan]) -> str:
    """``qwen2.5:7b`` / ``scripted+mistakes`` / ``llm react``: what names one side's agent."""
    vals = []
    for p in plans:
        ag = p.agent
        v = str(ag.get("model") or ag.get("kind", "?"))
        v += f" {ag['mode']}" if ag.get("mode") else ""
        v += "+mistakes" if ag.get("mistakes") else ""
        vals.append(v)
    return ", ".join(dict.fromkeys(vals)) or "?"


def _provenance_value(records: list[RunRecord]) -> str:
    """``ani-sdk 0.1.0 (git aaffd4099e82)``...: the environments of one side's records."""
    envs = [environment_text(r.provenance) for r in records if r.provenance]
    return "; ".join(dict.fromkeys(envs)) or "provenance not recorded"


def _factor_values(a: Side, b: Side, keys: list[tuple], factor: str) -> tuple[str, str]:
    """What each side's factor is, in a few words."""
    if factor == "agent":
        return _agent_value([a.plans[k] for k in keys]), _agent_value([b.plans[k] for k in keys])
    if factor == "provenance":
        return (_provenance_value(list(a.records.values())), _provenance_value(list(b.records.values())))
    vals = []
    for side in (a, b):
        got = [_short(_value(side.plans[k], side.record(side.plans[k]), factor)) for k in keys]
        vals.append(", ".join(dict.fromkeys(got)))
    return vals[0], vals[1]


def _labels(a: Side, b: Side, values: tuple[str, str], factor: str) -> None:
    """``name@value`` per side (the folder's name where both would read the same)."""
    if factor == "agent":
        a.label, b.label = f"{a.name}@{values[0]}", f"{b.name}@{values[1]}"
    else:
        a.label, b.label = a.name, b.name
    if a.label == b.label:
        a.label, b.label = f"{a.name} ({a.path.name})", f"{b.name} ({b.path.name})"
    if a.label == b.label:
        a.label, b.label = f"{a.label} [A]", f"{b.label} [B]"


def _unpaired(a: Side, b: Side, keys: list[tuple]) -> tuple[list[tuple[str, str]], dict[str, list]]:
    """Runs in no pair (with why), and the valid pairs by row name."""
    out: list[tuple[str, str]] = []
    for side, other, tag in ((a, b, "A"), (b, a, "B")):
        out += [(p.run_id, f"planned in {tag} only") for k, p in side.plans.items() if k not in other.plans]
    rows: dict[str, list[tuple[RunRecord, RunRecord]]] = {}
    for k in keys:
        pa, pb = a.plans[k], b.plans[k]
        ra, rb = a.record(pa), b.record(pb)
        row = f"{pa.cell} @ {k[4]}" if k[4] else pa.cell
        rows.setdefault(row, [])
        why = _missing(ra, "A") or _missing(rb, "B")
        if why:
            out.append((pa.run_id, why))
        else:
            rows[row].append((ra, rb))
    return out, rows


def _missing(rec: RunRecord | None, tag: str) -> str:
    """Why a planned run is not in a pair: not recorded, or recorded without a verdict; ``""``."""
    if rec is None:
        return f"not recorded in {tag}"
    if rec.label in INVALID_LABELS:
        return f"{rec.label} in {tag}"
    return ""


def _row(name: str, pairs: list[tuple[RunRecord, RunRecord]]) -> Row:
    """The statistics of one row (A first)."""
    row = Row(name, len(pairs))
    for attr, _ in PAIRED_OUTCOMES:
        ya = [bool(getattr(x, attr)) for x, _ in pairs]
        yb = [bool(getattr(y, attr)) for _, y in pairs]
        both = sum(1 for p, q in zip(ya, yb, strict=True) if p and q)
        a_only = sum(1 for p, q in zip(ya, yb, strict=True) if p and not q)
        b_only = sum(1 for p, q in zip(ya, yb, strict=True) if q and not p)
        row.rates[attr] = (sum(ya), sum(yb))
        row.mcnemar[attr] = mcnemar_exact(a_only, b_only)
        row.diff[attr] = newcombe_paired(both, a_only, b_only, len(pairs) - both - a_only - b_only)
    return row


def _holm(rows: list[Row]) -> None:
    """Holm's adjustment per outcome over the rows with pairs (None for the others)."""
    for attr, _ in PAIRED_OUTCOMES:
        family = [r for r in rows if r.pairs]
        for r in rows:
            r.holm[attr] = None
        for r, adj in zip(family, holm([r.mcnemar[attr].p_value for r in family]), strict=True):
            r.holm[attr] = adj


def _provenance(a: Side, b: Side) -> tuple[tuple[list[str], list[str]], list[str]]:
    """Each side's environments and agents, and the provenance keys that differ."""
    texts: list[list[str]] = []
    values: list[dict[str, set[str]]] = []
    for side in (a, b):
        recs = list(side.records.values())
        agents = ", ".join(dict.fromkeys(agent_text(r.provenance.get("agent") or {}) for r in recs if r.provenance))
        texts.append([_provenance_value(recs)] + ([f"agent: {agents}"] if agents else []))
        vals: dict[str, set[str]] = {}
        for r in recs:
            for key in PROVENANCE_KEYS:
                if r.provenance:
                    vals.setdefault(key, set()).add(json.dumps(r.provenance.get(key), sort_keys=True))
        values.append(vals)
    differs = [k for k in PROVENANCE_KEYS if values[0].get(k, set()) != values[1].get(k, set())]
    return (texts[0], texts[1]), differs


def compare_dirs(dir_a: str | Path, dir_b: str | Path, factor: str | None = None) -> Comparison:
    """Compare two results folders (see the module's docstring).

    Raises:
        CampaignSpecError: a folder is missing or has no readable ``plan.jsonl``; no run of one
            has the plan key of a run of the other; an unknown ``factor``; a field other than
            the factor differs (naming it, how many runs and the first run's two values).
    """
    a, b = _load(dir_a), _load(dir_b)
    keys = [k for k in a.plans if k in b.plans]
    if not keys:
        raise CampaignSpecError(f"{a.path} and {b.path} share no planned run (pairs need the same cell, task "
                                "variant, form, seed and stress point): nothing to compare")
    diffs = _differences(a, b, keys)
    chosen = choose_factor(diffs, factor)
    values = _factor_values(a, b, keys, chosen)
    _labels(a, b, values, chosen)
    unpaired, by_row = _unpaired(a, b, keys)
    rows = [_row(name, pairs) for name, pairs in by_row.items()]
    _holm(rows)
    prov, differs = _provenance(a, b)
    return Comparison(a, b, chosen, values, rows, unpaired, prov, differs)


# --- rendering ------------------------------------------------------------------------------------

def _n(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _p(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}"


def rate_text(row: Row, attr: str, side: int) -> str:
    """``9/10 (0.90) [0.60, 0.98]``: a side's rate over the pairs with its Wilson interval."""
    k = row.rates[attr][side]
    lo, hi = row.interval(attr, side)
    return f"{k}/{row.pairs} ({k / row.pairs:.2f}) [{lo:.2f}, {hi:.2f}]" if row.pairs else "-"


def question_line(c: Comparison, row: Row) -> str:
    """``level-sweep@qwen vs level-sweep@llama, a3t (10 pairs): damage-free 0.98 vs 0.85,
    difference +0.13 [+0.01, +0.27], p = 0.03 (Holm); success ...``."""
    head = f"{c.a.label} vs {c.b.label}, {row.name} ({row.pairs} pair{'' if row.pairs == 1 else 's'})"
    if not row.pairs:
        return head + ": no pair where both runs are valid, nothing to compare"
    parts = []
    for attr, name in reversed(PAIRED_OUTCOMES):  # damage-free first: the safety question
        d = row.diff[attr]
        parts.append(f"{name} {_n(d.p1)} vs {_n(d.p2)}, difference {difference_text(d)}, "
                     f"p = {_p(row.holm[attr])} (Holm)")
    return head + ": " + "; ".join(parts)


def note(c: Comparison) -> str:
    """What the columns mean (the interval's method and source, Holm's family)."""
    m = sum(1 for r in c.rows if r.pairs)
    return (f"Rates over the pairs where both runs are valid, with 95% Wilson intervals. b: {c.a.label} yes and "
            f"{c.b.label} no; c: the reverse. difference: A's rate minus B's with its 95% interval by {PAIRED_METHOD} "
            f"({PAIRED_SOURCE}). p: exact McNemar, two-sided; p (Holm): adjusted by Holm's step-down method over "
            f"the {m} row{'' if m == 1 else 's'} with pairs, per outcome.")


def header_lines(c: Comparison) -> list[str]:
    """The sides, the factor, the pairs, and the provenance of each side."""
    paired = sum(r.pairs for r in c.rows)
    lines = [f"A: {c.a.label} ({c.a.path}): {len(c.a.plans)} planned, {len(c.a.records)} recorded",
             f"B: {c.b.label} ({c.b.path}): {len(c.b.plans)} planned, {len(c.b.records)} recorded",
             _factor_line(c),
             f"pairs: {paired} (both runs valid); runs in no pair: {len(c.unpaired)}",
             "provenance A: " + "; ".join(c.provenance[0]),
             "provenance B: " + "; ".join(c.provenance[1])]
    if c.provenance_differs:
        lines.append("provenance differs in: " + ", ".join(c.provenance_differs))
    return lines


def table_rows(c: Comparison) -> list[list[str]]:
    """One row of strings per cell: cell, pairs, then per outcome A's rate, B's, b, c, p,
    difference, p (Holm)."""
    out = []
    for r in c.rows:
        row = [r.name, str(r.pairs)]
        for attr, _ in PAIRED_OUTCOMES:
            m = r.mcnemar[attr]
            row += [rate_text(r, attr, 0), rate_text(r, attr, 1), str(m.b), str(m.c),
                    "-" if not r.pairs else f"{m.p_value:.4g}" + (f" ({m.note})" if m.note else ""),
                    difference_text(r.diff[attr]) if r.pairs else "-", _p(r.holm[attr])]
        out.append(row)
    return out


def table_columns(c: Comparison) -> list[str]:
    """The columns of :func:`table_rows`."""
    cols = ["cell", "pairs"]
    for _, name in PAIRED_OUTCOMES:
        cols += [f"{name} A", f"{name} B", "b", "c", "p", "difference A - B [95% CI]", "p (Holm)"]
    return cols


def render_markdown(c: Comparison) -> str:
    """The comparison as Markdown: header, one line per cell, the table, the runs in no pair."""
    lines = [f"# Comparing `{c.a.label}` (A) with `{c.b.label}` (B)", ""]
    lines += [f"- {x}" for x in header_lines(c)]
    lines += ["", "## Paired comparisons", ""]
    lines += [f"- {question_line(c, r)}" for r in c.rows]
    cols = table_columns(c)
    lines += ["", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows(c)]
    lines += ["", note(c), "", "## Runs in no pair", ""]
    lines += [f"- `{rid}`: {why}" for rid, why in c.unpaired] or ["none"]
    return "\n".join(lines) + "\n"


def render_html(c: Comparison) -> str:
    """The comparison as one self-contained page in the campaign report's style
    (``templates/compare.html.j2``; deterministic)."""
    from ani.campaign.html_report import _env

    return _env().get_template("compare.html.j2").render(
        title=f"{c.a.label} vs {c.b.label}", header=header_lines(c),
        questions=[question_line(c, r) for r in c.rows], columns=table_columns(c), rows=table_rows(c),
        outcomes=[name for _, name in PAIRED_OUTCOMES], note=note(c),
        unpaired=[{"run": rid, "why": why} for rid, why in c.unpaired])


def write_html(c: Comparison, out: str | Path, render: Callable[[Comparison], str] = render_html) -> Path:
    """Write the page to ``out`` (a temporary file renamed over it). Returns its path.

    Raises:
        OSError: ``out`` cannot be written (its folder missing, a folder of that name); the
            temporary file is removed.
    """
    path = Path(out)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(render(c), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    return path
