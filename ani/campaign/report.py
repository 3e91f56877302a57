# size: summary.md's ~20 sections and the terminal tables, each a short renderer over one CampaignSummary; split candidates: the paired/exposure tables
"""``summary.md`` and the terminal table of a campaign's results.

Per cell: n (valid runs), infrastructure errors (listed with reasons, not
counted), runs whose failure the harness cannot attribute (listed), success and damage-free rates with 95% Wilson and Clopper-Pearson
intervals, label counts, mean steps / tool calls / tool errors / wall time.
For each cell against the reference cell (``--reference CELL`` or the campaign file's
``reference:``; default the first cell): discordant pairs (b, c) on success and on damage-free
over the seeds where both runs are valid, the exact McNemar p with Holm's correction across the
report's comparisons (per outcome), and the paired difference of the rates with Newcombe's (1998)
method 10 interval, said in one line per pair (:func:`question_lines`).
With swept stress parameters (``stress: {density: [2, 4], fault_rate: [0, 0.3]}``, a grid) every
(cell, stress point) is its own row (``a1 @ density=4,fault_rate=0.3``), compared with the
reference cell at the same point only (same seed and stress point: the same brownfield, target
and fault schedule), and a section per parameter breaks the rates down by its value (the other
parameters pooled), with a text plot of success and damage-free rate against it and each cell
along it. Per cell also: its factors (level, task, form, model, agent mode), its cost (means of
``RunRecord.cost``) and, with ``bound:``, whether the asserted bound was reached.
Per cell, the process metrics of NetConfArena (:mod:`ani.campaign.metrics`) over the valid
runs that have them: mean turns, action shares per kind, error- and repeat-action rates
(pooled: summed counts over summed actions), completion modes, mean tokens and agent time.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ani.adapters.blocklist import SCOPE as BLOCKLIST_SCOPE
from ani.campaign.metrics import ACTION_KINDS, COMPLETION_MODES
from ani.campaign.known_answer_report import known_answer_markdown  # known answer (issue 25 §3)
from ani.campaign.observer_report import observer_markdown  # observer-run
from ani.campaign.results import BUDGET_STOP_REASONS, ENV_INVALID, INFRA, INVALID_LABELS, LABELS, RunRecord, read_runs
from ani.stats import (
    PAIRED_METHOD,
    PAIRED_SOURCE,
    Interval,
    McNemarResult,
    PairedDifference,
    clopper_pearson,
    holm,
    mcnemar_exact,
    newcombe_paired,
    rule_of_three,
    wilson,
)
from ani.errors import CampaignSpecError
from ani.console import FullWidthConsole
from ani.netconfbench.report import ncb_markdown  # ncb-scores (issue 15 §3)

SUMMARY_FILE = "summary.md"


@dataclass
class Rate:
    """``k`` of ``n`` with its 95% Wilson and Clopper-Pearson intervals."""

    k: int
    n: int
    wilson: Interval
    cp: Interval

    @classmethod
    def of(cls, k: int, n: int) -> Rate:
        return cls(k, n, wilson(k, n), clopper_pearson(k, n))

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None


@dataclass
class CellProcess:
    """Process metrics of one cell over its valid runs that carry them (``runs`` of them).

    Shares and rates are pooled: summed counts over summed actions (None without actions).
    Means are over runs (tokens: over runs that report them; agent time: ``agent_s``).
    """

    runs: int = 0
    actions: int = 0
    mean_turns: float | None = None
    shares: dict[str, float | None] = field(default_factory=lambda: {k: None for k in ACTION_KINDS})
    error_action_rate: float | None = None
    repeat_action_rate: float | None = None
    modes: dict[str, int] = field(default_factory=lambda: {m: 0 for m in COMPLETION_MODES})
    mean_prompt_tokens: float | None = None
    mean_completion_tokens: float | None = None
    mean_agent_s: float | None = None

    @classmethod
    def of(cls, valid: list[RunRecord]) -> CellProcess:
        runs = [r for r in valid if r.process is not None]
        procs = [r.process for r in runs if r.process is not None]
        actions = sum(p.actions for p in procs)
        modes = {m: 0 for m in COMPLETION_MODES}
        for p in procs:
            if p.completion_mode is not None:
                modes[p.completion_mode] += 1
        return cls(
            runs=len(procs),
            actions=actions,
            mean_turns=_mean([p.turns for p in procs]),
            shares={
                k: (sum(p.action_counts.get(k, 0) for p in procs) / actions if actions else None)
                for k in ACTION_KINDS
            },
            error_action_rate=sum(p.error_actions for p in procs) / actions if actions else None,
            repeat_action_rate=sum(p.repeat_actions for p in procs) / actions if actions else None,
            modes=modes,
            mean_prompt_tokens=_mean([p.prompt_tokens for p in procs]),
            mean_completion_tokens=_mean([p.completion_tokens for p in procs]),
            mean_agent_s=_mean([r.agent_s for r in runs]),
        )


@dataclass
class CellSummary:
    """Aggregates of one cell (means over valid runs; None when there is none)."""

    name: str
    level: str
    blocklist: bool | str
    runs: list[RunRecord]
    valid: list[RunRecord]
    infra: list[RunRecord]
    success: Rate
    damage_free: Rate
    labels: dict[str, int]
    mean_steps: float | None
    mean_tool_calls: float | None
    mean_tool_errors: float | None
    mean_wall_s: float | None
    agent_errors: int
    process: CellProcess = field(default_factory=CellProcess)
    cell: str = ""
    stress: dict = field(default_factory=dict)


#: the outcomes compared in pairs, in the tables' order: (RunRecord attribute, the report's name)
PAIRED_OUTCOMES = (("success", "success"), ("damage_free", "damage-free"))


@dataclass
class Paired:
    """One cell against the reference cell, over seeds where both runs are valid.

    ``b``: reference yes, other no; ``c``: reference no, other yes. ``success_diff`` /
    ``damage_free_diff``: the cell's rate minus the reference's over the pairs, with Newcombe's
    method 10 interval (:func:`ani.stats.newcombe_paired`; ``p1`` is the cell's rate,
    ``p2`` the reference's). ``success_holm`` / ``damage_free_holm``: the McNemar p adjusted by
    Holm over the report's comparisons of that outcome (None: no pairs, not in the family).
    """

    cell: str
    reference: str
    pairs: int
    success: McNemarResult
    damage_free: McNemarResult
    #: issue 23 §2: per seed, where the two runs met their faults differently beyond the stated
    #: tolerance (:func:`ani.faults.exposure.exposure_differences`): ``"seed 1: ..."``
    exposure: list[str] = field(default_factory=list)
    success_diff: PairedDifference | None = None
    damage_free_diff: PairedDifference | None = None
    success_holm: float | None = None
    damage_free_holm: float | None = None


@dataclass
class CampaignSummary:
    name: str
    spec: dict
    cells: list[CellSummary]
    paired: list[Paired]
    planned: int | None
    records: list[RunRecord] = field(default_factory=list)


def _mean(values: list[float | int | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return fmean(vals) if vals else None


def _load_spec(out_dir: Path) -> dict:
    p = out_dir / "spec.json"
    if p.exists():
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
    return {}


def stress_label(stress: dict | None) -> str:
    """``density=4`` for ``{"density": 4}``; ``""`` without a stress value."""
    return ",".join(f"{k}={v}" for k, v in sorted((stress or {}).items()))


def grid_points(stress: dict) -> list[dict]:
    """The stress points of a spec's ``stress`` block, in the plan's order (the first parameter
    varying slowest; :attr:`ani.campaign.spec.CampaignSpec.stress_points`); ``[{}]`` without one."""
    keys = list(stress)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*stress.values())]


def _group_name(cell: str, stress: dict | None) -> str:
    label = stress_label(stress)
    return f"{cell} @ {label}" if label else cell


def summarize(records: list[RunRecord], spec: dict | None = None, reference: str | None = None) -> CampaignSummary:
    """Aggregate ``records``; cell order from ``spec["cells"]`` (else order of first appearance),
    one row per (cell, stress value) when the campaign sweeps one (stress values in the spec's
    order, then the cells). The paired comparisons are against ``reference`` (a cell's name),
    else the spec's ``reference``, else the first cell.

    Raises:
        CampaignSpecError: ``reference`` (or the spec's) is not a cell of these records or spec;
            the message lists the cells.
    """
    spec = spec or {}
    points = grid_points(spec.get("stress") or {})
    cells = [_cell_summary(records, *row) for row in _row_order(records, spec, points)]
    paired = _paired(cells, reference or spec.get("reference")) if cells else []
    planned = None
    if spec.get("variants") and spec.get("cells"):
        planned = int(spec["variants"]) * len(spec["cells"]) * len(points)
    return CampaignSummary(
        spec.get("name", records[0].campaign if records else "?"),
        spec,
        cells,
        paired,
        planned,
        records,
    )


def _row_order(records: list[RunRecord], spec: dict, points: list[dict]) -> list[tuple[str, str, bool | str, dict]]:
    """The report's rows as (cell, level, blocklist, stress point): the spec's cells at each of
    its stress points, then any (cell, stress value) of the records the spec does not name."""
    cells_spec = [
        (c["name"], c.get("level") or spec.get("level") or "", c.get("blocklist", False))
        for c in spec.get("cells", [])
    ]
    order: list[tuple[str, str, bool | str, dict]] = [
        (name, level, blocklist, dict(point)) for point in points for name, level, blocklist in cells_spec
    ]
    known = {(name, stress_label(point)) for name, _, _, point in order}
    for r in records:
        key = (r.cell, stress_label(r.stress))
        if key not in known:
            order.append((r.cell, r.level, r.blocklist, dict(r.stress)))
            known.add(key)
    return order


def _cell_summary(records: list[RunRecord], name: str, level: str, blocklist: bool | str,
                  point: dict) -> CellSummary:
    """One row: the runs of cell ``name`` at stress ``point`` (by seed), its rates and means over
    the valid ones."""
    label = stress_label(point)
    runs = sorted(
        (r for r in records if r.cell == name and stress_label(r.stress) == label),
        key=lambda r: r.seed,
    )
    valid = [r for r in runs if r.label not in INVALID_LABELS]
    return CellSummary(
        name=_group_name(name, point),
        level=level,
        blocklist=blocklist,
        runs=runs,
        valid=valid,
        infra=[r for r in runs if r.label in INVALID_LABELS],  # with environment_invalid (faults)
        success=Rate.of(sum(1 for r in valid if r.success), len(valid)),
        damage_free=Rate.of(sum(1 for r in valid if r.damage_free), len(valid)),
        labels={lab: sum(1 for r in valid if r.label == lab) for lab in LABELS},
        mean_steps=_mean([r.steps for r in valid]),
        mean_tool_calls=_mean([r.tool_calls for r in valid]),
        mean_tool_errors=_mean([r.tool_errors for r in valid]),
        mean_wall_s=_mean([r.wall_s for r in valid]),
        agent_errors=sum(1 for r in valid if r.agent_error),
        process=CellProcess.of(valid),
        cell=name,
        stress=point,
    )


def _paired(cells: list[CellSummary], wanted: str | None) -> list[Paired]:
    """Every row against the reference cell's row at the same stress point (pairs at the same
    seed), Holm-adjusted across them. Raises CampaignSpecError: ``wanted`` is not a cell."""
    paired: list[Paired] = []
    ref_cell = reference_cell(cells, wanted)
    refs = {stress_label(c.stress): c for c in cells if c.cell == ref_cell}
    for other in cells:
        # only pairs at the same seed and the same stress point: the same brownfield,
        # target and fault schedule (another stress point is another brownfield)
        ref = refs.get(stress_label(other.stress))
        if ref is None or ref is other or other.cell == ref_cell:
            continue
        ref_by_seed = {r.seed: r for r in ref.valid}
        pairs = [(ref_by_seed[r.seed], r) for r in other.valid if r.seed in ref_by_seed]
        paired.append(
            Paired(
                cell=other.name,
                reference=ref.name,
                pairs=len(pairs),
                success=_mcnemar(pairs, "success"),
                damage_free=_mcnemar(pairs, "damage_free"),
                exposure=_exposure_warnings(pairs),
                success_diff=_difference(pairs, "success"),
                damage_free_diff=_difference(pairs, "damage_free"),
            )
        )
    _adjust(paired)
    return paired


def reference_cell(cells: list[CellSummary], wanted: str | None) -> str:
    """The reference cell's name: ``wanted`` when it names a cell, the first cell when None.

    Raises:
        CampaignSpecError: ``wanted`` names no cell (the message lists the cells).
    """
    names = list(dict.fromkeys(c.cell for c in cells))
    if wanted is None:
        return names[0]
    if wanted not in names:
        raise CampaignSpecError(f"reference cell {wanted!r} is not a cell of this campaign; cells: {', '.join(names)}")
    return wanted


def _difference(pairs: list[tuple[RunRecord, RunRecord]], attr: str) -> PairedDifference:
    """The row's rate minus the reference's over ``pairs`` (reference, row), Newcombe method 10."""
    both = sum(1 for x, y in pairs if getattr(x, attr) and getattr(y, attr))
    row_only = sum(1 for x, y in pairs if not getattr(x, attr) and getattr(y, attr))
    ref_only = sum(1 for x, y in pairs if getattr(x, attr) and not getattr(y, attr))
    return newcombe_paired(both, row_only, ref_only, len(pairs) - both - row_only - ref_only)


def _adjust(paired: list[Paired]) -> None:
    """Set each comparison's Holm-adjusted p, per outcome, over the comparisons with pairs."""
    for attr, _ in PAIRED_OUTCOMES:
        family = [p for p in paired if p.pairs]
        for p, adj in zip(family, holm([getattr(p, attr).p_value for p in family]), strict=True):
            setattr(p, f"{attr}_holm", adj)


def holm_family(s: CampaignSummary) -> int:
    """How many comparisons Holm's correction is over (per outcome): those with pairs."""
    return sum(1 for p in s.paired if p.pairs)


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _p3(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}"


def difference_text(d: PairedDifference | None) -> str:
    """``0.40 [0.03, 0.72]`` (the difference and its 95% interval); ``-`` without pairs."""
    if d is None or d.diff is None:
        return "-"
    return f"{d.diff:+.2f} [{d.lo:+.2f}, {d.hi:+.2f}]"


def question_line(p: Paired, code: str = "`") -> str:
    """The question one comparison answers, in a line: ``a3t vs a1 (5 paired seeds): damage-free
    1.00 vs 0.60, difference +0.40 [+0.03, +0.72], p = 0.25 (Holm); success ...``; names quoted
    with ``code`` (Markdown's backtick, or '' for HTML and the terminal)."""
    head = f"{code}{p.cell}{code} vs {code}{p.reference}{code} ({p.pairs} paired seed{'' if p.pairs == 1 else 's'})"
    if not p.pairs:
        return head + ": no seed where both runs are valid, nothing to compare"
    parts = []
    for attr, name in reversed(PAIRED_OUTCOMES):  # damage-free first: the safety question
        d: PairedDifference = getattr(p, f"{attr}_diff")
        parts.append(f"{name} {_num(d.p1)} vs {_num(d.p2)}, difference {difference_text(d)}, "
                     f"p = {_p3(getattr(p, f'{attr}_holm'))} (Holm)")
    return head + ": " + "; ".join(parts)


def question_lines(s: CampaignSummary, code: str = "`") -> list[str]:
    """One :func:`question_line` per comparison of ``s``."""
    return [question_line(p, code) for p in s.paired]


def paired_note(s: CampaignSummary) -> str:
    """What the paired columns mean, with the interval's method and source and Holm's family."""
    m = holm_family(s)
    return (f"difference: the row's rate minus the reference's over the paired seeds, with its 95% interval by "
            f"{PAIRED_METHOD} (hybrid score: the two rates' Wilson intervals combined with a correction for their "
            f"pairing; {PAIRED_SOURCE}). p: exact McNemar, two-sided; p (Holm): adjusted by Holm's step-down "
            f"method over the {m} comparison{'' if m == 1 else 's'} of this report, per outcome.")


def environment_text(p: dict) -> str:
    """``ani-sdk 0.1.0 (git aaffd4099e82, modified), FRR 8.4.4, kernel 6.1.0, Python 3.11.7``."""
    git = ""
    if p.get("git_commit"):
        git = f" (git {str(p['git_commit'])[:12]}{', modified' if p.get('git_dirty') else ''})"
    return (f"ani-sdk {p.get('ani_sdk') or '?'}{git}, FRR {p.get('frr') or 'unknown'}, "
            f"kernel {p.get('kernel') or 'unknown'}, Python {p.get('python') or 'unknown'}")


def agent_text(a: dict) -> str:
    """``llm qwen2.5:7b at 127.0.0.1:11434``; ``scripted``."""
    return (str(a.get("kind", "?")) + (f" {a['model']}" if a.get("model") else "")
            + (f" at {a['endpoint']}" if a.get("endpoint") else ""))


def provenance_lines(records: list[RunRecord]) -> list[str]:
    """What produced the runs (issue 26 §3; :mod:`ani.campaign.provenance`), as the report's
    header says it: one line per distinct environment (with a warning when there are several),
    the agents, and how many runs were recorded before provenance was; [] without records."""
    if not records:
        return []
    envs: dict[str, int] = {}
    agents: dict[str, int] = {}
    for r in records:
        if r.provenance:
            envs[environment_text(r.provenance)] = envs.get(environment_text(r.provenance), 0) + 1
            a = agent_text(r.provenance.get("agent") or {})
            agents[a] = agents.get(a, 0) + 1
    missing = sum(1 for r in records if not r.provenance)
    out = []
    if len(envs) == 1:
        out.append(f"provenance: {next(iter(envs))}; agent: {', '.join(agents)}")
    elif envs:
        out.append(f"**warning**: the runs come from {len(envs)} different environments: "
                   + "; ".join(f"{e} ({n} run{'' if n == 1 else 's'})" for e, n in envs.items())
                   + f"; agents: {', '.join(agents)}")
    if missing:
        out.append(f"provenance: not recorded for {missing} run{'' if missing == 1 else 's'} (written before "
                   "ani-sdk recorded it)")
    return out


def _paired_markdown(s: CampaignSummary) -> list[str]:
    """``## Paired comparisons``: the question each comparison answers in a line, then the table
    (discordant pairs, difference with its interval, exact McNemar p and Holm's); [] without."""
    if not s.paired:
        return []
    refs = list(dict.fromkeys(p.reference for p in s.paired))
    m = holm_family(s)
    if len(refs) == 1:
        lines = ["", f"## Paired comparisons against `{refs[0]}` (exact McNemar, two-sided; Holm over {m} "
                 f"comparison{'' if m == 1 else 's'} per outcome)", "",
                 f"b: `{refs[0]}` yes and the other cell no; c: the reverse. Only seeds where both runs are valid."]
    else:
        lines = ["", f"## Paired comparisons (exact McNemar, two-sided; Holm over {m} comparison{'' if m == 1 else 's'} "
                 "per outcome)", "",
                 "Each row against its reference: the reference cell at the same stress value. b: the reference yes "
                 "and the row no; c: the reverse. Only seeds where both runs are valid."]
    lines += ["", *(f"- {q}" for q in question_lines(s)), ""]
    ref_col = "reference | " if len(refs) > 1 else ""
    cols = " | ".join(f"{name} b | {name} c | {name} difference [95% CI] | p | p (Holm)" for _, name in PAIRED_OUTCOMES)
    lines += [f"| cell | {ref_col}pairs | {cols} |",
              "|" + "---|" * (2 + (len(refs) > 1) + 5 * len(PAIRED_OUTCOMES))]
    for p in s.paired:
        row = [p.cell] + ([p.reference] if len(refs) > 1 else []) + [str(p.pairs)]
        for attr, _ in PAIRED_OUTCOMES:
            m_res: McNemarResult = getattr(p, attr)
            row += [str(m_res.b), str(m_res.c), difference_text(getattr(p, f"{attr}_diff")), _p(m_res, p.pairs),
                    "-" if not p.pairs else _p3(getattr(p, f"{attr}_holm"))]
        lines.append("| " + " | ".join(row) + " |")
    return lines + ["", paired_note(s)]


def _exposure_warnings(pairs: list[tuple[RunRecord, RunRecord]]) -> list[str]:
    """issue 23 §2: ``"seed 1: 1 of 7 faults, ... vs 7 of 7 faults, ...: fault #1 ..."`` for each
    pair whose runs met their faults differently (:func:`ani.faults.exposure.exposure_differences`)."""
    from ani.faults.exposure import exposure_differences, exposure_summary

    out = []
    for ref, other in pairs:
        diff = exposure_differences(ref.faults, other.faults)
        if diff:
            out.append(f"seed {other.seed}: {exposure_summary(ref.faults)} vs {exposure_summary(other.faults)}: "
                       + "; ".join(diff))
    return out


#: the columns of the fault exposure table (summary.md and report.html)
EXPOSURE_COLUMNS = ("cell", "runs", "faults scheduled", "faults met", "in effect s", "while acting s", "held s")
#: what the fault exposure table's columns mean (summary.md and report.html)
EXPOSURE_NOTE = ("in effect: seconds the faults were in effect during the run; while acting: the part "
                 "before the agent stopped; held: seconds the run was kept open after it stopped so that every "
                 "fault was met (faults.hold; docs/faults.md).")


def exposure_rows(s: CampaignSummary) -> list[list[str]]:
    """issue 23 §2: per cell with a fault schedule, the faults its valid runs met and how long
    they were in effect (means over the runs with a schedule), as :data:`EXPOSURE_COLUMNS`
    strings; [] when no run had one. The one source of summary.md's and report.html's table."""
    from ani.faults.exposure import faults_met

    rows = []
    for c in s.cells:
        runs = [r for r in c.valid if r.faults]
        if not runs:
            continue
        met = [faults_met(r.faults) for r in runs]
        rows.append([
            c.name, str(len(runs)), _f(_mean([len(r.faults) for r in runs]), ".1f"),
            _f(_mean([len(m) for m in met]), ".1f"),
            _f(_mean([sum(x.exposure_s for x in m) for m in met]), ".1f"),
            _f(_mean([sum(x.acting_s or 0.0 for x in m) for m in met]), ".1f"),
            _f(_mean([r.fault_hold_s for r in runs]), ".1f")])
    return rows


def _faults_markdown(s: CampaignSummary) -> list[str]:
    """The "Fault exposure" section of summary.md (:func:`exposure_rows`); [] without faults."""
    rows = exposure_rows(s)
    if not rows:
        return []
    note = EXPOSURE_NOTE
    for word in ("in effect", "while acting", "held"):
        note = note.replace(f"{word}:", f"*{word}*:", 1)
    note = note.replace("(faults.hold;", "(`faults.hold`;")
    return ["", "## Fault exposure (means over valid runs with faults)", "", note, "",
            "| " + " | ".join(EXPOSURE_COLUMNS) + " |", "|" + "---|" * len(EXPOSURE_COLUMNS),
            *["| " + " | ".join(r) + " |" for r in rows]]


def exposure_warning() -> str:
    """The text before the list of pairs whose cells met different fault exposure (summary.md
    and report.html), naming the tolerance (:mod:`ani.faults.exposure`)."""
    from ani.faults.exposure import EXPOSURE_TOLERANCE_FRAC, EXPOSURE_TOLERANCE_S

    return (f"(tolerance per fault: {EXPOSURE_TOLERANCE_S:g} s or {EXPOSURE_TOLERANCE_FRAC:.0%} of its "
            "duration, the larger; docs/faults.md): these pairs did not meet the same faults for the same "
            "time, so their difference is partly the faults'.")


def _exposure_markdown(s: CampaignSummary) -> list[str]:
    """The warnings under the paired comparisons: cells that met different fault exposure."""
    warned = [p for p in s.paired if p.exposure]
    if not warned:
        return []
    lines = ["", f"**Warning: fault exposure differs** {exposure_warning()}", ""]
    for p in warned:
        lines += [f"- `{p.cell}` vs `{p.reference}`, {x}" for x in p.exposure]
    return lines


def _mcnemar(pairs: list[tuple[RunRecord, RunRecord]], attr: str) -> McNemarResult:
    b = sum(1 for x, y in pairs if getattr(x, attr) and not getattr(y, attr))
    c = sum(1 for x, y in pairs if not getattr(x, attr) and getattr(y, attr))
    return mcnemar_exact(b, c)


# --- rendering -------------------------------------------------------------------------------------


def _f(v: float | None, fmt: str = ".2f") -> str:
    return "-" if v is None else format(v, fmt)


def _tokens_cell(prompt: float | None, completion: float | None) -> str:
    """``prompt/completion`` means, or ``-`` when no run of the cell has token counts (no model)."""
    if prompt is None and completion is None:
        return "-"
    return f"{_f(prompt, '.0f')}/{_f(completion, '.0f')}"


def _rate(r: Rate) -> str:
    return f"{r.k}/{r.n}" + (f" ({r.value:.2f})" if r.n else "")


def _ci(iv: Interval) -> str:
    return f"[{iv[0]:.3f}, {iv[1]:.3f}]"


def _p(m: McNemarResult, pairs: int | None = None) -> str:
    if pairs == 0:
        return "- (no pairs)"
    return f"{m.p_value:.4g}" + (f" ({m.note})" if m.note else "")


def _blk(b: bool | str, level: str = "") -> str:
    """A cell's blocklist as the tables show it: ``-``, ``default`` or the file's name; for a run
    recorded before the ablation was refused at levels whose calls it cannot inspect (a2, a3t,
    a3r, a4: :func:`ani.registry.check_blocklist`), ``none (inspects nothing at a2)``."""
    if b and level and not _blocklist_applies(level):
        return f"none (inspects nothing at {level})"
    return "default" if b is True else ("-" if not b else Path(str(b)).name)


def _blocklist_applies(level: str) -> bool:
    from ani.errors import RegistryError
    from ani.registry import blocklist_inspects

    try:
        return blocklist_inspects(level)
    except RegistryError:  # an adapter not installed here: keep what the record says
        return True


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


def _mode(r: RunRecord) -> str:
    return (r.process.completion_mode or "-") if r.process is not None else "-"


#: short column names of the completion modes
MODE_SHORT = {
    "early_submission": "early",
    "interaction_limit": "limit",
    "correct_submission": "correct",
    "error_submission": "error sub",
    "agent_error": "agent err",
    "no_submission": "no submit",
}


def _process_markdown(s: CampaignSummary) -> list[str]:
    """The process-metrics section of ``summary.md`` (two tables: actions, completion and cost)."""
    lines = [
        "",
        "## Process metrics (NetConfArena; valid runs)",
        "",
        "Action shares and error/repeat-action rates are pooled over the cell's actions "
        "(tool calls and agent-loop actions); turns, tokens and agent time are means per run. "
        "See ani/campaign/metrics.py for the action kinds of each level.",
        "",
        "| cell | runs | actions | turns | "
        + " | ".join(ACTION_KINDS)
        + " | error-action rate | repeat-action rate |",
        "|---|" + "---|" * (len(ACTION_KINDS) + 5),
    ]
    for c in s.cells:
        p = c.process
        lines.append(
            f"| {c.name} | {p.runs} | {p.actions} | {_f(p.mean_turns, '.1f')} | "
            + " | ".join(_pct(p.shares[k]) for k in ACTION_KINDS)
            + f" | {_pct(p.error_action_rate)} | {_pct(p.repeat_action_rate)} |"
        )
    lines += [
        "",
        "| cell | " + " | ".join(MODE_SHORT[m] for m in COMPLETION_MODES)
        + " | prompt tokens | completion tokens | agent s |",
        "|---|" + "---|" * (len(COMPLETION_MODES) + 3),
    ]
    for c in s.cells:
        p = c.process
        lines.append(
            f"| {c.name} | "
            + " | ".join(str(p.modes[m]) for m in COMPLETION_MODES)
            + f" | {_f(p.mean_prompt_tokens, '.0f')} | {_f(p.mean_completion_tokens, '.0f')} "
            f"| {_f(p.mean_agent_s, '.1f')} |"
        )
    return lines


#: width of the text plot's bars, characters
PLOT_WIDTH = 40


def _bar(value: float | None) -> str:
    if value is None:
        return "(no valid run)"
    n = round(value * PLOT_WIDTH)
    return "#" * n + "." * (PLOT_WIDTH - n) + f" {value:.2f}"


def _stress_markdown(s: CampaignSummary) -> list[str]:
    """One "by stress value" section per swept parameter ([] without a stress block)."""
    stress = (s.spec or {}).get("stress") or {}
    lines: list[str] = []
    for param, values in stress.items():
        lines += _param_markdown(s, param, values, others=[k for k in stress if k != param])
    return lines


def _param_markdown(s: CampaignSummary, param: str, values: list, others: list[str]) -> list[str]:
    """The section of one stress parameter: rates pooled over the cells (and over the other
    parameters' values) per value, a text plot of success and damage-free rate against the
    value, and the damage-free and success rate of each cell along the value (does a
    difference between cells persist, grow or vanish as the value rises)."""
    pooled = "all cells" + (f" and every {', '.join(f'`{o}`' for o in others)} pooled" if others else " pooled")
    lines = [
        "",
        f"## By stress value: `{param}` ({pooled}; 95% Wilson)",
        "",
        f"| {param} | n | infra errors | success | Wilson | damage-free | Wilson | "
        + " | ".join(LABELS) + " |",
        "|---|---|---|---|---|---|---|" + "---|" * len(LABELS),
    ]
    rates: list[tuple[str, Rate, Rate]] = []
    for v in values:
        groups = [c for c in s.cells if c.stress.get(param) == v]
        valid = [r for c in groups for r in c.valid]
        succ = Rate.of(sum(1 for r in valid if r.success), len(valid))
        dmg = Rate.of(sum(1 for r in valid if r.damage_free), len(valid))
        rates.append((str(v), succ, dmg))
        labels = [str(sum(1 for r in valid if r.label == lab)) for lab in LABELS]
        lines.append(
            f"| {v} | {len(valid)} | {sum(len(c.infra) for c in groups)} | {_rate(succ)} | {_ci(succ.wilson)} "
            f"| {_rate(dmg)} | {_ci(dmg.wilson)} | " + " | ".join(labels) + " |"
        )
    width = max(len(v) for v, _, _ in rates)
    lines += ["", "```text", f"success rate by {param}"]
    lines += [f"{v:>{width}} |{_bar(succ.value)}" for v, succ, _ in rates]
    lines += ["", f"damage-free rate by {param}"]
    lines += [f"{v:>{width}} |{_bar(dmg.value)}" for v, _, dmg in rates]
    lines += ["```"]
    # campaign-factors: each cell along the parameter (the other parameters pooled)
    names = list(dict.fromkeys(c.cell for c in s.cells))
    lines += [
        "",
        f"Per cell along `{param}`" + (f" ({', '.join(f'`{o}`' for o in others)} pooled)" if others else "")
        + ": damage-free and success, k/n",
        "",
        "| cell | " + " | ".join(f"{param}={v}" for v in values) + " |",
        "|---|" + "---|" * len(values),
    ]
    for name in names:
        row = []
        for v in values:
            valid = [r for c in s.cells if c.cell == name and c.stress.get(param) == v for r in c.valid]
            dmg = sum(1 for r in valid if r.damage_free)
            ok = sum(1 for r in valid if r.success)
            row.append(f"{dmg}/{len(valid)}, {ok}/{len(valid)}" if valid else "-")
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return lines


# --- campaign-factors: the cells' factors, cost per cell, the asserted bound ---

#: the keys of ``RunRecord.cost`` the report shows, with their column names
COST_COLUMNS = (
    ("tokens", "tokens"), ("turns", "turns"), ("steps", "steps"), ("tool_calls", "tool calls"),
    ("agent_s", "agent s"), ("wall_s", "wall s"),
)


def _cells_markdown(s: CampaignSummary) -> list[str]:
    """The settings of each cell as its runs recorded them (level, blocklist, task, form,
    model, agent mode); [] without records."""
    first: dict[str, RunRecord] = {}
    for c in s.cells:
        for r in c.runs:
            first.setdefault(r.cell, r)
    if not first:
        return []
    lines = [
        "",
        "## Cells",
        "",
        "| cell | level | blocklist | task | form | model | agent mode |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in first.items():
        tasks = sorted({x.task for c in s.cells if c.cell == name for x in c.runs})
        lines.append(
            f"| {name} | {r.level} | {_blk(r.blocklist, r.level)} | {', '.join(tasks)} | {r.form or '-'} "
            f"| {r.model or '-'} | {r.agent_mode or '-'} |"
        )
    if any(r.blocklist for r in first.values()):
        lines += ["", BLOCKLIST_SCOPE]
    return lines


def cell_cost(valid: list[RunRecord]) -> dict[str, float | None]:
    """Mean of each cost key over the valid runs that report it (None: none does)."""
    return {key: _mean([r.cost.get(key) for r in valid if r.cost]) for key, _ in COST_COLUMNS}


def _cost_markdown(s: CampaignSummary) -> list[str]:
    """The cost section: per cell the mean tokens, turns, steps, tool calls, agent and wall
    time of its valid runs, and their total tokens."""
    lines = [
        "",
        "## Cost per cell (means over valid runs; tokens: prompt + completion, `-`: no model)",
        "",
        "| cell | runs | " + " | ".join(name for _, name in COST_COLUMNS) + " | total tokens |",
        "|---|---|" + "---|" * (len(COST_COLUMNS) + 1),
    ]
    for c in s.cells:
        mean = cell_cost(c.valid)
        counted = [r.cost.get("tokens") for r in c.valid if r.cost and r.cost.get("tokens") is not None]
        total = str(sum(counted)) if counted else "-"
        fmt = {"tokens": ".0f", "agent_s": ".1f", "wall_s": ".1f"}
        lines.append(
            f"| {c.name} | {len(c.valid)} | "
            + " | ".join(_f(mean[k], fmt.get(k, ".1f")) for k, _ in COST_COLUMNS)
            + f" | {total} |"
        )
    return lines


def _bound_markdown(s: CampaignSummary) -> list[str]:
    """With ``bound:`` (``--bound B``): per cell whether the damage bound was reached, i.e.
    at least ceil(3/B) valid runs and none damaged (rule of three); [] without one."""
    bound = (s.spec or {}).get("bound")
    if not bound:
        return []
    from ani.stats import runs_for_bound

    need = runs_for_bound(float(bound))
    lines = [
        "",
        f"## The asserted bound: damage probability below {float(bound):g} (rule of three: {need} damage-free runs per cell)",
        "",
    ]
    for c in s.cells:
        n, damaged = c.damage_free.n, c.damage_free.n - c.damage_free.k
        reached = rule_of_three(n) if n else None
        if damaged:
            lines.append(f"- `{c.name}`: **not reached**: {damaged} damaged run(s) of {n}")
        elif n < need:
            missing = f"; {len(c.infra)} infrastructure error(s): --resume reruns them" if c.infra else ""
            lines.append(
                f"- `{c.name}`: **not reached**: 0 damaged runs of {n}, {need} needed"
                + (f" (bound reached so far: 3/{n} = {reached:.3f})" if reached is not None else "")
                + missing
            )
        else:
            lines.append(f"- `{c.name}`: **reached**: 0 damaged runs of {n}; damage probability below 3/{n} = {reached:.3f}")
    return lines
# --- end campaign-factors ---


def render_markdown(s: CampaignSummary) -> str:
    """The text of ``summary.md``: the campaign's header, then its sections in order."""
    lines = _header_markdown(s)
    lines += _cells_markdown(s)
    lines += _rates_markdown(s)
    lines += _process_markdown(s)
    lines += _cost_markdown(s)
    lines += _stress_markdown(s)
    lines += _faults_markdown(s)  # issue 23 §2
    lines += observer_markdown(s)  # observer-run (issue 14 §2)
    lines += ncb_markdown(s)  # ncb-scores (issue 15 §3)
    lines += _paired_markdown(s)
    lines += _exposure_markdown(s)  # issue 23 §2
    lines += known_answer_markdown(s)  # issue 25 §3: after the comparisons it explains
    lines += _bound_markdown(s)
    lines += _errors_markdown(s)
    lines += _outcomes_markdown(s)  # cases-tools
    lines += _runs_markdown(s)
    lines += [
        "",
        "Wilson and Clopper-Pearson intervals stay valid near 0 and 1; with 0 events in n runs the "
        "95% upper bound is about 3/n (rule of three). McNemar uses only discordant pairs; with none, "
        f"p = 1. Paired differences: {PAIRED_METHOD}; p-values Holm-adjusted per outcome. See docs/campaigns.md.",
        "",
    ]
    return "\n".join(lines)


def _header_markdown(s: CampaignSummary) -> list[str]:
    """The title and the campaign's facts: task, scenario, variants, agent, scenario hashes (a
    warning when one design point's runs come from different scenarios), runs and provenance."""
    sp = s.spec
    n_records = len(s.records)
    lines = [f"# Campaign `{s.name}`", ""]
    if sp:
        seeds = f"{sp.get('seed')}..{int(sp.get('seed', 0)) + int(sp.get('variants', 0)) - 1}"
        tasks = sorted({r.task for r in s.records}) or [sp.get("task")]
        where = (
            f"manifest: `{sp.get('manifest')}` (scenario seed {sp.get('scenario_seed')}, density "
            f"{sp.get('density') if sp.get('density') is not None else 'of the manifest'})"
            if sp.get("manifest")
            else f"tasks: `{sp.get('tasks')}` ({len(sp.get('tasks_paths') or [])} task files)"
            if sp.get("tasks")
            else f"scenario: `{sp.get('scenario')}`"
        )
        stress = sp.get("stress") or {}
        lines += [
            f"- task: {', '.join(f'`{t}`' for t in tasks)}; {where}",
            f"- variants S = {sp.get('variants')} (seeds {seeds}); factor: `{sp.get('factor')}`"
            + "".join(f"; stress: `{k}` over {', '.join(map(str, v))}" for k, v in stress.items()),
            f"- agent: `{json.dumps(sp.get('agent'))}`; budget: `{json.dumps(sp.get('budget'))}`",
        ]
    hashes = sorted({r.scenario_hash for r in s.records if r.scenario_hash})
    if hashes:
        lines.append("- scenario hash: " + ", ".join(f"`{h[:16]}`" for h in hashes))
        # one scenario per density (and stress point) is the design; a `tasks:` campaign builds
        # one scenario per task file (its variant), so there the runs of one variant must agree
        by_task = bool(sp and sp.get("tasks"))
        per_density: dict[object, set[str]] = {}
        for r in s.records:
            if r.scenario_hash:
                key = (r.variant_id if by_task else None, r.density, stress_label(r.stress))
                per_density.setdefault(key, set()).add(r.scenario_hash)
        if any(len(h) > 1 for h in per_density.values()):
            lines.append(
                "- **warning**: runs come from different scenario versions; pairs may not compare"
            )
    lines.append(
        f"- runs recorded: {n_records}"
        + (f" of {s.planned} planned" if s.planned is not None else "")
        + f"; infrastructure errors: {sum(len(c.infra) for c in s.cells)} (excluded from every rate below)"
    )
    lines += [f"- {x}" for x in provenance_lines(s.records)]  # issue 26 §3
    return lines


def _rates_markdown(s: CampaignSummary) -> list[str]:
    """The success and damage-free rates with their intervals, then labels and cost per cell."""
    lines: list[str] = []
    lines += ["", "## Rates (95% intervals)", ""]
    lines += [
        "| cell | level | blocklist | n | infra errors | success | Wilson | Clopper-Pearson "
        "| damage-free | Wilson | Clopper-Pearson |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in s.cells:
        lines.append(
            f"| {c.name} | {c.level} | {_blk(c.blocklist, c.level)} | {c.success.n} | {len(c.infra)} "
            f"| {_rate(c.success)} | {_ci(c.success.wilson)} | {_ci(c.success.cp)} "
            f"| {_rate(c.damage_free)} | {_ci(c.damage_free.wilson)} | {_ci(c.damage_free.cp)} |"
        )
    lines += ["", "## Outcome labels and cost (means over valid runs)", ""]
    lines += [
        "| cell | "
        + " | ".join(LABELS)
        + " | agent errors | steps | tool calls | tool errors | wall s |",
        "|---|" + "---|" * (len(LABELS) + 5),
    ]
    for c in s.cells:
        lines.append(
            f"| {c.name} | "
            + " | ".join(str(c.labels[lab]) for lab in LABELS)
            + f" | {c.agent_errors} | {_f(c.mean_steps, '.1f')} | {_f(c.mean_tool_calls, '.1f')} "
            f"| {_f(c.mean_tool_errors, '.1f')} | {_f(c.mean_wall_s, '.1f')} |"
        )
    return lines


def _errors_markdown(s: CampaignSummary) -> list[str]:
    """Damage bounds, infrastructure errors, unattributed failures and agent errors."""
    lines: list[str] = []
    bounds = [c for c in s.cells if c.damage_free.n and c.damage_free.k == c.damage_free.n]
    if bounds:
        lines += ["", "## Damage bounds", ""]
        for c in bounds:
            r3 = rule_of_three(c.damage_free.n)
            lines.append(
                f"- `{c.name}`: 0 damaged runs of {c.damage_free.n}; damage probability below "
                f"{1 - c.damage_free.cp[0]:.3f} (Clopper-Pearson 95%), rule of three 3/n = {r3:.3f}"
            )
    infra = [r for c in s.cells for r in c.infra]
    lines += ["", "## Infrastructure errors (excluded from the rates)", ""]
    lines += [
        f"- `{r.run_id}` (cell {r.cell}, seed {r.seed}): "
        + ("environment_invalid: " if r.label == ENV_INVALID else "")  # faults (issue 14)
        + f"{r.infra_error_reason}" for r in infra
    ] or ["none"]
    unclear = [r for c in s.cells for r in c.valid if r.unattributed]
    if unclear:
        lines += ["", "## Failures the harness cannot attribute (graded; read with care)", ""]
        lines += [f"- `{r.run_id}` ({r.label}): {r.unattributed}" for r in unclear]
    agent_err = [r for c in s.cells for r in c.valid if r.agent_error]
    lines += ["", "## Agent errors (graded as runs of the system under test)", ""]
    lines += [f"- `{r.run_id}` ({r.label}): {r.agent_error}" for r in agent_err] or ["none"]
    return lines


def _runs_markdown(s: CampaignSummary) -> list[str]:
    """One table row per run, then every failed check of the valid runs."""
    lines: list[str] = []
    lines += [
        "",
        "## Runs",
        "",
        "| run | cell | seed | label | tests | invariants | steps | tool calls | tool errors | stop "
        "| completion mode | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in s.cells:
        for r in c.runs:
            t = f"{sum(x.passed for x in r.tests)}/{len(r.tests)}" if r.tests else "-"
            i = (
                f"{sum(x.passed for x in r.invariants)}/{len(r.invariants)}"
                if r.invariants
                else "-"
            )
            lines.append(
                f"| {r.run_id} | {r.cell} | {r.seed} | {r.label} | {t} | {i} | {_f(r.steps, 'd') if r.steps is not None else '-'} "
                f"| {r.tool_calls} | {r.tool_errors} | {_stop(r)} "
                f"| {_mode(r)} | {r.wall_s:.1f} |"
            )
    failed = [
        (r, x) for c in s.cells for r in c.valid for x in r.tests + r.invariants if not x.passed
    ]
    if failed:
        lines += ["", "## Failed checks", ""]
        lines += [f"- `{r.run_id}`: {x.name}: {x.detail}" for r, x in failed]
    return lines


# --- cases-tools: budget exhaustion and the measured outcomes (ani.campaign.outcomes) ---


def _stop(r: RunRecord) -> str:
    """The runs table's stop column: ``budget exhausted (max_steps)`` for a budget's stop."""
    if r.stop_reason in BUDGET_STOP_REASONS:
        return f"budget exhausted ({r.stop_reason})"
    return r.stop_reason or "-"


def _outcomes_markdown(s: CampaignSummary) -> list[str]:
    """``## Measured outcomes``: per cell, over valid runs, the runs whose budget ran out, the
    invalid calls (sum and mean per run) and the runs with a change applied twice, a partial
    change, a lock left held; then each such run with what was seen."""
    lines = ["", "## Measured outcomes (valid runs)", "",
             "Budget exhausted: the run stopped at max_steps / max_tokens / wall_clock (graded, not an "
             "agent error). Invalid calls: refused for bad arguments or an unknown name (unknown or "
             "wrong-case device, unknown route-map, service or file). See docs/campaigns.md.", "",
             "| cell | budget exhausted | invalid calls | per run | double applied | partial | locks left |",
             "|---|---|---|---|---|---|---|"]
    for c in s.cells:
        v = c.valid
        inv = sum(r.invalid_calls for r in v)
        lines.append(
            f"| {c.name} | {sum(1 for r in v if r.budget_exhausted)} | {inv} "
            f"| {_f(inv / len(v) if v else None, '.1f')} | {sum(1 for r in v if r.double_applied)} "
            f"| {sum(1 for r in v if r.partial)} | {sum(1 for r in v if r.locks_left)} |")
    seen = [(r, what, item) for c in s.cells for r in c.valid
            for what, items in (("applied twice", r.double_applied), ("partial", r.partial),
                                ("lock left", r.locks_left)) for item in items]
    if seen:
        lines += [""] + [f"- `{r.run_id}` {what}: {item}" for r, what, item in seen]
    return lines


# --- end cases-tools ---


def load_summary(out_dir: str | Path, reference: str | None = None) -> CampaignSummary:
    """Summary of a results folder (``runs.jsonl`` + ``spec.json``), compared against
    ``reference`` (else the spec's ``reference:``, else the first cell).

    Raises CampaignSpecError: ``reference`` is not a cell of the folder (the cells listed).
    """
    out = Path(out_dir)
    return summarize(read_runs(out), _load_spec(out), reference)


def write_report(out_dir: str | Path, reference: str | None = None) -> Path:
    """(Re)write ``out_dir/summary.md`` from ``runs.jsonl``, compared against ``reference``
    (:func:`load_summary`); returns its path.

    Raises FileNotFoundError if ``out_dir`` is not a folder; CampaignSpecError: an unknown
    ``reference`` (nothing written).
    """
    out = Path(out_dir)
    if not out.is_dir():
        raise FileNotFoundError(f"{out} is not a folder")
    path = out / SUMMARY_FILE
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(render_markdown(load_summary(out, reference)), encoding="utf-8")
    tmp.replace(path)
    return path


def summary_tables(s: CampaignSummary) -> list[Table]:
    """Three compact rich tables (fit 80 columns): rates with Wilson intervals and McNemar p; labels
    and cost; process metrics (action shares, error/repeat rates, completion modes, tokens). The
    modes cell is ``early/limit/ok/err`` (early, interaction-limit, correct and error submissions),
    then ``+N`` for N runs in the other two modes (agent_error, no_submission), explained in the
    table's caption when a cell has one; tokens ``-`` when unknown (no model)."""
    rates = Table(
        title=f"campaign {s.name}: rates [95% Wilson]", box=box.SIMPLE_HEAD, pad_edge=False
    )
    for col in ("cell", "n", "infra", "success", "damage-free", "p succ", "p dmg"):
        rates.add_column(col, justify="left" if col == "cell" else "right", no_wrap=True)
    pmap = {p.cell: p for p in s.paired}

    def cell_rate(r: Rate) -> str:
        return f"{r.k}/{r.n} [{r.wilson[0]:.2f},{r.wilson[1]:.2f}]"

    for c in s.cells:
        p = pmap.get(c.name)
        rates.add_row(
            c.name,
            str(c.success.n),
            str(len(c.infra)),
            cell_rate(c.success),
            cell_rate(c.damage_free),
            ("-" if p.pairs == 0 else f"{p.success.p_value:.3g}") if p else "ref",
            ("-" if p.pairs == 0 else f"{p.damage_free.p_value:.3g}") if p else "ref",
        )
    cost = Table(
        title="labels (clean ok/dangerous ok/clean fail/destructive) and means",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for col in ("cell", "labels", "agent err", "steps", "calls", "tool err", "wall s"):
        cost.add_column(col, justify="left" if col in ("cell", "labels") else "right", no_wrap=True)
    for c in s.cells:
        cost.add_row(
            c.name,
            "/".join(str(c.labels[lab]) for lab in LABELS),
            str(c.agent_errors),
            _f(c.mean_steps, ".1f"),
            _f(c.mean_tool_calls, ".1f"),
            _f(c.mean_tool_errors, ".1f"),
            _f(c.mean_wall_s, ".1f"),
        )
    proc = Table(
        title="process: shares % ret/upd/val/wait/sub/null; modes early/limit/ok/err",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for col in ("cell", "turns", "shares %", "err%", "rep%", "modes", "tokens p/c"):
        proc.add_column(
            col, justify="left" if col in ("cell", "shares %", "modes") else "right", no_wrap=True
        )
    others = [c.process.modes["agent_error"] + c.process.modes["no_submission"] for c in s.cells]
    if any(others):  # the "+N" after the four modes, explained where it appears
        proc.caption = "modes +N: N runs ended by an agent error or without a submission"
    for c in s.cells:
        p = c.process
        shares = "/".join(
            "-" if p.shares[k] is None else f"{100 * p.shares[k]:.0f}" for k in ACTION_KINDS
        )
        modes = "/".join(str(p.modes[m]) for m in COMPLETION_MODES[:4])
        other = p.modes["agent_error"] + p.modes["no_submission"]
        proc.add_row(
            c.name,
            _f(p.mean_turns, ".1f"),
            shares,
            "-" if p.error_action_rate is None else f"{100 * p.error_action_rate:.0f}",
            "-" if p.repeat_action_rate is None else f"{100 * p.repeat_action_rate:.0f}",
            modes + (f" +{other}" if other else ""),
            _tokens_cell(p.mean_prompt_tokens, p.mean_completion_tokens),
        )
    return [rates, cost, proc]


def print_summary(out_dir: str | Path, console: Console | None = None, reference: str | None = None) -> CampaignSummary:
    """Print the cell table, the paired comparisons against ``reference`` (one line each:
    :func:`question_lines`) and the infrastructure errors of a results folder.

    Raises CampaignSpecError: an unknown ``reference`` (:func:`load_summary`).
    """
    console = console or FullWidthConsole()
    s = load_summary(out_dir, reference)
    for table in summary_tables(s):
        console.print(table)
    if s.paired:
        m = holm_family(s)
        console.print(f"paired comparisons: rates over the paired seeds, difference [95% {PAIRED_METHOD}], "
                      f"exact McNemar p Holm-adjusted over {m} comparison{'' if m == 1 else 's'} per outcome",
                      soft_wrap=True, markup=False, highlight=False)
        for line in question_lines(s, ""):
            console.print(f"  {line}", soft_wrap=True, markup=False, highlight=False)
    for c in s.cells:
        for r in c.infra:
            what = "environment invalid" if r.label == ENV_INVALID else "infra error"  # faults (issue 14)
            console.print(f"[magenta]{what}[/magenta] {escape(r.run_id)}: "
                          f"{escape(str(r.infra_error_reason))}", soft_wrap=True)
        for r in c.valid:
            if r.unattributed:
                console.print(f"[yellow]unattributed[/yellow] {escape(r.run_id)} ({r.label}): "
                              f"{escape(r.unattributed)}", soft_wrap=True)
    return s
