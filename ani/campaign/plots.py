# size: the HTML report's plot catalogue: one short function per plot over one CampaignSummary
"""The plots of the HTML campaign report, as deterministic inline SVG (matplotlib).

Each function takes a :class:`ani.campaign.report.CampaignSummary` (and reads the run records
it holds) and returns a :class:`Plot` (its SVG text, ready to inline in HTML: no XML header,
no DOCTYPE) or None when the campaign has nothing to show for it (no stress parameter swept,
no paired comparison, no damage, no fault, no run invalidated, no mistake made on purpose).

Determinism: every figure is drawn with matplotlib's default parameters (a user's
``matplotlibrc`` does not leak in), the bundled DejaVu Sans font drawn as paths (no font on the
reader's machine is needed), ``svg.hashsalt`` fixed per plot (the ids of clip paths and glyphs
are hashes of their content and that salt, so two plots of one page never share an id with
different content) and no ``Date`` metadata: the same records give byte-identical SVG.
pyplot is never imported (no GUI backend, no global figure state): figures are
:class:`matplotlib.figure.Figure` objects saved by the SVG backend.

Fields that other parts of issue 14 add to :class:`ani.campaign.results.RunRecord` (faults,
damaged service instances by class, cost, ``environment_invalid``) are read with
``getattr(record, name, None)``, so the plots work with records written before and after them.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from ani.campaign.metrics import ACTION_KINDS
from ani.campaign.results import INFRA, RunRecord
from ani.stats import rule_of_three, wilson

#: the label of a run whose fault did not take or vanished (faults-core); read by name so the
#: report works before that label exists
ENV_INVALID = "environment_invalid"

#: matplotlib parameters of every plot (on top of matplotlib's defaults)
RC: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "svg.fonttype": "path",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "figure.dpi": 100,
}

#: the colours of the two rates and of the series (matplotlib's tab10 without its grey, fixed
#: order: greys are kept for what must not read as a series, below)
SUCCESS_COLOR = "#1f77b4"
DAMAGE_FREE_COLOR = "#2ca02c"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#bcbd22", "#17becf")
#: the colours of what shares a plot with a PALETTE series and must never read as one of them:
#: the runs without a verdict (faults plot, beside the fault kinds) and the two action rates
#: (process plot, beside the action kinds): greys and black, none of them in PALETTE
INVALID_COLORS: dict[str, str] = {"infra_error": "#262626", "environment_invalid": "#a6a6a6"}
RATE_COLORS: dict[str, str] = {"error-action rate": "#262626", "repeat-action rate": "#a6a6a6"}
#: the extra colours for a third label without a verdict, should one be added
SPARE_GREYS = ("#595959", "#d9d9d9")


@dataclass(frozen=True)
class Plot:
    """One figure of the report: ``id`` (an HTML id, also the SVG hash salt), ``title``,
    ``svg`` (inline SVG text) and ``caption`` (what it shows, one or two sentences)."""

    id: str
    title: str
    svg: str
    caption: str


def field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj[name]`` of a mapping, else ``getattr(obj, name)``; ``default`` when absent or None
    (the records of other helpers' fields may hold pydantic models or plain dicts)."""
    value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return default if value is None else value


def invalid_labels() -> tuple[str, ...]:
    """The labels of runs without a verdict: ``INVALID_LABELS`` of results.py when it exists."""
    from ani.campaign import results

    return tuple(getattr(results, "INVALID_LABELS", (INFRA, ENV_INVALID)))


def to_svg(fig: Figure, salt: str) -> str:
    """The SVG of ``fig`` without XML header and DOCTYPE (to inline in HTML), deterministic."""
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg"):].strip()


def _figure(width: float, height: float, ncols: int = 1, **kw: Any) -> tuple[Figure, list[Any]]:
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False, **kw)[0]
    return fig, list(axes)


def _render(plot_id: str, title: str, caption: str, draw: Any) -> Plot:
    """Draw with the report's parameters on top of matplotlib's defaults; SVG with salt ``plot_id``."""
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(RC)
        fig = draw()
        svg = to_svg(fig, f"ani-report-{plot_id}")
    return Plot(plot_id, title, svg, caption)


def rows(s: Any) -> list[Any]:
    """The summary's rows (:class:`ani.campaign.report.CellSummary`) the report shows: every row
    with runs, and every row without runs whose stress value names each swept parameter (a
    planned point not run yet). With a stress grid (several parameters), a row of one parameter
    alone (``a1 @ density=4``, no fault_rate) that no run has is not a point of the plan: left
    out."""
    params = {p for p, _ in stress_params(s)}
    return [c for c in s.cells if c.runs or set(c.stress or {}) == params]


def paired_rows(s: Any) -> list[Any]:
    """The paired comparisons between rows the report shows (:func:`rows`)."""
    names = {c.name for c in rows(s)}
    return [p for p in s.paired if p.cell in names and p.reference in names]


#: figure height (inches) of a plot with one row per cell: the titles and axis labels, plus
#: ROW_IN per row, never less than MIN_AXES_IN for the axes (2 cells drew a 90 px rate plot)
FRAME_IN, ROW_IN, MIN_AXES_IN = 1.1, 0.32, 1.3
#: the height of one row of a legend below the axes, inches
LEGEND_ROW_IN = 0.25


def rows_height(n: int, legend_rows: int = 0) -> float:
    """The height (inches) of a figure with ``n`` rows of bars and ``legend_rows`` rows of
    legend below its axes: the axes get ``ROW_IN`` per row and at least ``MIN_AXES_IN``."""
    return FRAME_IN + max(MIN_AXES_IN, ROW_IN * n) + LEGEND_ROW_IN * legend_rows


def legend_below(fig: Figure, axes: Sequence[Any], ncols: int) -> None:
    """One legend for the whole figure (the labelled artists of ``axes``, in order), below
    every axis label: constrained layout makes room for it, where a legend anchored to an axis
    in axes fractions lands on the x label when the axes are short. Nothing without labels."""
    handles, labels = [], []
    for ax in axes:
        h, lab = ax.get_legend_handles_labels()
        handles += h
        labels += lab
    if handles:
        fig.legend(handles, labels, loc="outside lower center",
                   ncols=max(1, min(ncols, len(handles))), fontsize=8, frameon=False)


def legend_rows(count: int, ncols: int) -> int:
    """Rows of a legend of ``count`` entries in ``ncols`` columns."""
    return -(-count // max(1, ncols)) if count else 0


#: inches a character of a row label takes at the report's font size (9 pt DejaVu Sans, about)
LABEL_CHAR_IN = 0.075


def label_width(labels: Sequence[str]) -> float:
    """Inches the longest of ``labels`` takes left of the axes: a figure is widened by it, so long
    row labels (``a2 @ density=2,fault_rate=0.3 vs a1 @ ...``) never squeeze the axes to nothing."""
    return LABEL_CHAR_IN * max((len(s) for s in labels), default=0)


def informative_rule_of_three(n: int) -> float | None:
    """The rule-of-three bound ``3/n`` where it says something (below 1: n > 3), else None: at
    n <= 3 the bound 1 - 3/n is 0 or less, a tick at 0 that reads as a measured rate."""
    r3 = rule_of_three(n)
    return r3 if r3 is not None and r3 < 1.0 else None


# --- rates per cell ---------------------------------------------------------------------------------


def rates_plot(s: Any) -> Plot | None:
    """Success and damage-free rate of every row (cell, or cell @ stress value), each a point
    with its 95% Wilson interval (thick) and Clopper-Pearson interval (thin); where no valid run
    of a row was damaged, the rule-of-three bound (damage-free rate above 1 - 3/n) as a marker."""
    cells = rows(s)
    if not cells:
        return None

    bound = any(c.damage_free.n and c.damage_free.k == c.damage_free.n
                and informative_rule_of_three(c.damage_free.n) for c in cells)

    def draw() -> Figure:
        fig, (ax_s, ax_d) = _figure(9.0, rows_height(len(cells), int(bound)), 2, sharey=True)
        ys = list(range(len(cells)))
        for ax, attr, color, title in ((ax_s, "success", SUCCESS_COLOR, "success rate"),
                                       (ax_d, "damage_free", DAMAGE_FREE_COLOR, "damage-free rate")):
            bound_drawn = False
            for y, c in zip(ys, cells):
                rate = getattr(c, attr)
                if not rate.n:
                    ax.text(0.5, y, "no valid run", ha="center", va="center", color="#7f7f7f")
                    continue
                ax.plot([rate.cp[0], rate.cp[1]], [y, y], color=color, lw=1, alpha=0.6)
                ax.plot([rate.wilson[0], rate.wilson[1]], [y, y], color=color, lw=3.5,
                        solid_capstyle="butt", alpha=0.8)
                ax.plot([rate.value], [y], "o", color="black", ms=4, zorder=3)
                if attr == "damage_free" and rate.k == rate.n:
                    r3 = informative_rule_of_three(rate.n)
                    if r3 is not None:
                        ax.plot([1 - r3], [y], marker="|", color="#d62728", ms=12, mew=2,
                                zorder=4, label=None if bound_drawn else "rule of three: 1 - 3/n")
                        bound_drawn = True
            ax.set_xlim(-0.02, 1.02)
            ax.set_title(title)
            ax.set_xlabel("rate (point), 95% Wilson (thick), Clopper-Pearson (thin)")
        legend_below(fig, [ax_d], 1)
        ax_s.set_yticks(ys, [c.name for c in cells])
        ax_s.invert_yaxis()
        return fig

    return _render("rates", "Success and damage-free rate per cell",
                   "Each row is a cell (at a stress value, when the campaign sweeps one); points are "
                   "rates over the valid runs, bars their 95% intervals. A red tick marks the "
                   "rule-of-three bound where no valid run was damaged (drawn from n = 4 on: "
                   "below that, 1 - 3/n is 0 or less and bounds nothing).", draw)


# --- along each stress parameter ---------------------------------------------------------------------


def stress_params(s: Any) -> list[tuple[str, list[Any]]]:
    """``[(parameter, values)]`` swept by the campaign: the spec's ``stress:`` block (its order),
    then any parameter or value seen only in the records (in order of appearance)."""
    out: dict[str, list[Any]] = {k: list(v) for k, v in ((s.spec or {}).get("stress") or {}).items()}
    for r in s.records:
        for k, v in (r.stress or {}).items():
            vals = out.setdefault(k, [])
            if v not in vals:
                vals.append(v)
    return list(out.items())


def _cell_order(s: Any) -> list[str]:
    return list(dict.fromkeys([c.cell or c.name for c in s.cells] + [r.cell for r in s.records]))


def _valid(records: Iterable[RunRecord]) -> list[RunRecord]:
    bad = invalid_labels()
    return [r for r in records if r.label not in bad]


def stress_series(s: Any, param: str, values: Sequence[Any]) -> dict[str, dict[str, list[tuple[int, int]]]]:
    """``{"success": {cell: [(k, n) per value]}, "damage_free": {...}}``: per cell and value of
    ``param``, ``k`` of the ``n`` valid runs succeeded (were damage-free), pooled over the other
    stress parameters. Cells in the summary's order."""
    out: dict[str, dict[str, list[tuple[int, int]]]] = {"success": {}, "damage_free": {}}
    valid = _valid(s.records)
    for cell in _cell_order(s):
        runs = [r for r in valid if r.cell == cell]
        for attr, series in out.items():
            series[cell] = [
                (sum(1 for r in at if getattr(r, attr)), len(at))
                for at in ([r for r in runs if (r.stress or {}).get(param) == v] for v in values)
            ]
    return out


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def stress_plot(s: Any, param: str, values: Sequence[Any]) -> Plot | None:
    """Success and damage-free rate along ``param``, one line per cell (the level, the model,
    ...) with 95% Wilson intervals: does the difference between cells persist, grow or vanish
    as the stress rises? None with fewer than two values."""
    if len(values) < 2:
        return None
    series = stress_series(s, param, values)
    cells = _cell_order(s)
    others = [p for p, _ in stress_params(s) if p != param]
    numeric = _numeric(values)
    xs = [float(v) for v in values] if numeric else list(range(len(values)))
    span = (max(xs) - min(xs)) or 1.0
    jitter = 0.02 * span

    def draw() -> Figure:
        fig, axes = _figure(9.0, 3.4, 2, sharey=True)
        for ax, attr, title in ((axes[0], "success", "success rate"),
                                (axes[1], "damage_free", "damage-free rate")):
            for i, cell in enumerate(cells):
                pts = series[attr][cell]
                if not any(n for _, n in pts):
                    continue
                color = PALETTE[i % len(PALETTE)]
                off = (i - (len(cells) - 1) / 2) * jitter
                px, py, lo, hi = [], [], [], []
                for x, (k, n) in zip(xs, pts):
                    if not n:
                        continue
                    iv = wilson(k, n)
                    px.append(x + off)
                    py.append(k / n)
                    lo.append(k / n - iv[0])
                    hi.append(iv[1] - k / n)
                ax.errorbar(px, py, yerr=[lo, hi], color=color, marker="o", ms=4, capsize=3,
                            lw=1.5, label=cell)
            ax.set_ylim(-0.03, 1.03)
            ax.set_xticks(xs, [str(v) for v in values])
            ax.set_xlabel(param)
            ax.set_title(f"{title} by {param}")
        axes[0].set_ylabel("rate, 95% Wilson interval")
        axes[1].legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
        return fig

    pooled = f" Pooled over {', '.join(others)}." if others else ""
    return _render(f"stress-{param}", f"Rates along {param}, one line per cell",
                   f"Each line is a cell; points are rates over its valid runs at each value of "
                   f"{param}, bars their 95% Wilson intervals.{pooled}", draw)


# --- cost ----------------------------------------------------------------------------------------------


def run_tokens(r: RunRecord) -> float | None:
    """Tokens of a run (prompt + completion): the record's ``cost`` block when it has one, else
    the process metrics; None when unknown (a scripted agent uses no model)."""
    cost = getattr(r, "cost", None)
    if cost:
        t = field(cost, "tokens")
        if t is None and (field(cost, "prompt_tokens") is not None or field(cost, "completion_tokens") is not None):
            t = (field(cost, "prompt_tokens") or 0) + (field(cost, "completion_tokens") or 0)
        if t is not None:
            return float(t)
    p = r.process
    if p is None or (p.prompt_tokens is None and p.completion_tokens is None):
        return None
    return float((p.prompt_tokens or 0) + (p.completion_tokens or 0))


#: the cost panels: (key, axis label, value of a run)
COST_PANELS: tuple[tuple[str, str, Any], ...] = (
    ("tokens", "tokens per run (prompt + completion)", run_tokens),
    ("steps", "agent steps per run", lambda r: None if r.steps is None else float(r.steps)),
    ("wall_s", "wall time per run, s", lambda r: float(r.wall_s)),
)


def cost_panels(cells: Sequence[Any]) -> list[tuple[str, str, Any]]:
    """The :data:`COST_PANELS` some valid run of ``cells`` has a value for (a scripted agent
    has no tokens: no empty tokens panel)."""
    return [p for p in COST_PANELS
            if any(p[2](r) is not None for c in cells for r in c.valid)]


def cost_plot(s: Any) -> Plot | None:
    """Cost per row: tokens, agent steps and wall time, each panel only where some valid run
    has a value; bars are means over the valid runs, dots the runs. None without any."""
    cells = rows(s)
    panels = cost_panels(cells)
    if not cells or not panels:
        return None

    def draw() -> Figure:
        fig, axes = _figure(3.2 * len(panels) + 0.5, rows_height(len(cells)), len(panels),
                            sharey=True)
        ys = list(range(len(cells)))
        for ax, (_, label, value) in zip(axes, panels):
            for y, c in zip(ys, cells):
                vals = [v for v in (value(r) for r in c.valid) if v is not None]
                if not vals:
                    continue
                ax.barh([y], [sum(vals) / len(vals)], color="#aec7e8", height=0.6)
                ax.plot(vals, [y] * len(vals), "o", color="#1f77b4", ms=3, alpha=0.7)
            ax.set_xlabel(label)
            ax.set_xlim(left=0)
        axes[0].set_yticks(ys, [c.name for c in cells])
        axes[0].invert_yaxis()
        return fig

    shown = ", ".join({"tokens": "tokens", "steps": "agent steps",
                       "wall_s": "wall time (lab up to lab down)"}[k] for k, _, _ in panels)
    missing = "" if panels[0][0] == "tokens" else " No run recorded tokens (an agent without a model)."
    return _render("cost", "Cost per cell",
                   f"Bars are means over the valid runs of each cell, dots the runs: {shown}."
                   f"{missing}", draw)


# --- process metrics ----------------------------------------------------------------------------------


def process_plot(s: Any) -> Plot | None:
    """Action shares per row (stacked, pooled over the cell's actions; only the kinds some cell
    took) and, when some cell has one above zero, the error- and repeat-action rates. None when
    no run carries process metrics."""
    cells = rows(s)
    if not any(c.process.runs for c in cells):
        return None
    kinds = [(i, k) for i, k in enumerate(ACTION_KINDS)
             if any(c.process.shares.get(k) for c in cells)]
    rates = [(label, [getattr(c.process, attr) or 0.0 for c in cells])
             for label, attr in (("error-action rate", "error_action_rate"),
                                 ("repeat-action rate", "repeat_action_rate"))]
    show_rates = any(v for _, vals in rates for v in vals)
    ncols = 4
    height = rows_height(len(cells), legend_rows(len(kinds) + 2 * show_rates, ncols))

    def draw() -> Figure:
        if show_rates:
            fig, (ax_a, ax_r) = _figure(9.5, height, 2, sharey=True, width_ratios=[3, 2])
        else:
            fig, (ax_a,) = _figure(6.5, height)
        ys = list(range(len(cells)))
        left = [0.0] * len(cells)
        for i, kind in kinds:
            widths = [(c.process.shares.get(kind) or 0.0) for c in cells]
            ax_a.barh(ys, widths, left=left, color=PALETTE[i], height=0.6, label=kind)
            left = [a + b for a, b in zip(left, widths)]
        ax_a.set_xlim(0, 1)
        ax_a.set_xlabel("share of actions")
        if show_rates:
            h = 0.35
            for (label, vals), dy in zip(rates, (-h / 2, h / 2)):
                ax_r.barh([y + dy for y in ys], vals, height=h, color=RATE_COLORS[label],
                          label=label)
            ax_r.set_xlim(0, 1)
            ax_r.set_xlabel("rate (over actions)")
        legend_below(fig, fig.axes, ncols)
        ax_a.set_yticks(ys, [c.name for c in cells])
        ax_a.invert_yaxis()
        return fig

    right = ("Right: error-action rate (tool calls with ok=False) and repeat-action rate "
             "(see docs/campaigns.md, Process metrics)." if show_rates else
             "No cell had an error action or a repeated action (both rates 0).")
    left_text = ("Left: the kinds" if show_rates else "The kinds")
    return _render("process", "Process metrics per cell",
                   f"{left_text} of the agent's actions (pooled over the cell's actions). "
                   + right, draw)


# --- paired comparisons -------------------------------------------------------------------------------


def paired_plot(s: Any) -> Plot | None:
    """Discordant pairs of each comparison: ``b`` (the reference yes, the cell no) to the left,
    ``c`` (the reverse) to the right, with the exact McNemar p; a panel for success and one for
    damage-free, each only where some comparison has a discordant pair (the table says the
    rest). None when no comparison has one."""
    paired = paired_rows(s)
    panels = [(attr, title) for attr, title in (("success", "success"), ("damage_free", "damage-free"))
              if any(getattr(p, attr).b or getattr(p, attr).c for p in paired)]
    if not paired or not panels:
        return None

    def draw() -> Figure:
        fig, axes = _figure(4.5 * len(panels) + label_width([f"{p.cell} vs {p.reference}" for p in paired]),
                            rows_height(len(paired)), len(panels), sharey=True)
        ys = list(range(len(paired)))
        for ax, (attr, title) in zip(axes, panels):
            top = max([1] + [max(getattr(p, attr).b, getattr(p, attr).c) for p in paired])
            for y, p in zip(ys, paired):
                m = getattr(p, attr)
                ax.barh([y], [-m.b], color="#ff7f0e", height=0.6)
                ax.barh([y], [m.c], color="#1f77b4", height=0.6)
                note = "no pairs" if p.pairs == 0 else f"p = {m.p_value:.3g}"
                ax.text(top * 1.05, y, note, va="center", fontsize=8)
            ax.axvline(0, color="black", lw=0.8)
            ax.set_xlim(-top * 1.1, top * 1.6)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts of pairs
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{abs(v):.0f}"))
            ax.set_title(f"{title}: b (reference better) | c (cell better)")
            ax.set_xlabel("discordant pairs")
        axes[0].set_yticks(ys, [f"{p.cell} vs {p.reference}" for p in paired])
        axes[0].invert_yaxis()
        return fig

    shown = " and ".join(t for _, t in panels)
    left_out = "" if len(panels) == 2 else (
        f" No comparison has a discordant pair in {'damage-free' if panels[0][0] == 'success' else 'success'} "
        "(the table below says so).")
    return _render("paired", "Paired comparisons (exact McNemar)",
                   f"{shown.capitalize()}: for each cell against its reference, over seeds where both "
                   "runs are valid: orange bars count pairs where only the reference did (b), blue "
                   f"bars pairs where only the cell did (c); p is the two-sided exact McNemar p.{left_out}",
                   draw)


# --- damage by service class --------------------------------------------------------------------------


def service_class(tag: str) -> str:
    """The service class of a service tag: ``tenant:red`` -> ``tenant``, ``bgp`` -> ``bgp``."""
    return tag.split(":", 1)[0]


def damaged_by_class(r: RunRecord) -> dict[str, list[str]]:
    """``{service class: [damaged service instances]}`` of a run: the observer's ``damaged``
    field when it names any (observer-run), else the service tags of its broken baseline
    invariants (records written before ``damaged`` existed read it as empty)."""
    damaged = {k: sorted(set(v)) for k, v in dict(getattr(r, "damaged", None) or {}).items() if v}
    if damaged:
        return damaged
    out: dict[str, set[str]] = {}
    for x in r.invariants:
        if not x.passed and x.service:
            out.setdefault(service_class(x.service), set()).add(x.service)
    return {k: sorted(v) for k, v in out.items()}


def damage_classes(s: Any) -> list[str]:
    """Every service class damaged in some valid run, sorted."""
    return sorted({k for r in _valid(s.records) for k in damaged_by_class(r)})


def damage_plot(s: Any) -> Plot | None:
    """Damage magnitude: mean number of damaged service instances per valid run, by service
    class, stacked per row. None when no valid run damaged a service."""
    classes = damage_classes(s)
    cells = rows(s)
    if not classes:
        return None

    def draw() -> Figure:
        fig, (ax,) = _figure(7.5, rows_height(len(cells)))
        ys = list(range(len(cells)))
        left = [0.0] * len(cells)
        for i, cls in enumerate(classes):
            widths = []
            for c in cells:
                valid = _valid(c.runs)
                total = sum(len(damaged_by_class(r).get(cls, [])) for r in valid)
                widths.append(total / len(valid) if valid else 0.0)
            ax.barh(ys, widths, left=left, color=PALETTE[i % len(PALETTE)], height=0.6, label=cls)
            left = [a + b for a, b in zip(left, widths)]
        ax.set_xlabel("damaged service instances per valid run (mean)")
        ax.set_xlim(left=0)
        ax.set_yticks(ys, [c.name for c in cells])
        ax.invert_yaxis()
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False,
                  title="service class")
        return fig

    return _render("damage", "Damage magnitude by service class",
                   "How many pre-existing service instances a run broke, by service class, as a "
                   "mean over the cell's valid runs.", draw)


# --- faults and invalidated runs ----------------------------------------------------------------------


def run_faults(r: RunRecord) -> list[Any]:
    """The fault records of a run (``faults`` of faults-core), [] before they exist."""
    return list(getattr(r, "faults", None) or [])


def fault_kinds_seen(s: Any) -> list[str]:
    return sorted({str(field(f, "kind", "?")) for r in s.records for f in run_faults(r)})


def invalid_color(label: str, i: int) -> str:
    """The colour of runs without a verdict labelled ``label`` (the ``i``-th such label): greys
    that no fault kind of :data:`PALETTE` can share."""
    return INVALID_COLORS.get(label, SPARE_GREYS[i % len(SPARE_GREYS)])


def faults_plot(s: Any) -> Plot | None:
    """Faults injected per row, by kind (summed over its runs), and runs invalidated per row
    (``infra_error``, ``environment_invalid``), each panel only when it has something to show.
    None when neither happened."""
    cells = rows(s)
    kinds = fault_kinds_seen(s)
    labels = [lab for lab in invalid_labels()
              if any(r.label == lab for c in cells for r in c.runs)]
    invalid = {lab: [float(sum(1 for r in c.runs if r.label == lab)) for c in cells]
               for lab in labels}
    if not kinds and not labels:
        return None
    ncols = 4
    height = rows_height(len(cells), legend_rows(len(kinds) + len(labels), ncols))

    def stacked(ax: Any, series: list[tuple[str, list[float], str]]) -> list[float]:
        left = [0.0] * len(cells)
        for name, widths, color in series:
            ax.barh(list(range(len(cells))), widths, left=left, color=color, height=0.6,
                    label=name)
            left = [a + b for a, b in zip(left, widths)]
        return left

    def draw() -> Figure:
        fig, axes = _figure(4.5 * (bool(kinds) + bool(labels)), height,
                            bool(kinds) + bool(labels), sharey=True)
        it = iter(axes)
        if kinds:
            ax_f = next(it)
            stacked(ax_f, [(k, [float(sum(1 for r in c.runs for f in run_faults(r)
                                            if field(f, "kind") == k and field(f, "injected", False)))
                                for c in cells], PALETTE[i % len(PALETTE)])
                           for i, k in enumerate(kinds)])
            ax_f.set_xlabel("faults injected (all runs)")
            ax_f.set_xlim(left=0)
        if labels:
            ax_i = next(it)
            total = stacked(ax_i, [(lab, invalid[lab], invalid_color(lab, i))
                                   for i, lab in enumerate(labels)])
            ax_i.set_xlabel("runs invalidated (no verdict, excluded from the rates)")
            ax_i.set_xlim(0, max([1.0] + total) * 1.1)
        legend_below(fig, axes, ncols)
        axes[0].set_yticks(list(range(len(cells))), [c.name for c in cells])
        axes[0].invert_yaxis()
        return fig

    parts = []
    if kinds:
        parts.append("faults injected into the cell's runs, by kind")
    if labels:
        parts.append("runs without a verdict: infra_error (the host or the harness failed) and "
                     "environment_invalid (a fault did not take or vanished); they are listed "
                     "below and rerun by --resume")
    if len(parts) == 2:
        caption = f"Left: {parts[0]}. Right: {parts[1]}."
    else:
        caption = parts[0][0].upper() + parts[0][1:] + "."
    return _render("faults", "Faults injected and runs invalidated", caption, draw)


# --- the known answer (issue 25 §3) -------------------------------------------------------------------


def known_answer_plot(s: Any) -> Plot | None:
    """Per row (cell) and mistake kind, the share of the expressed mistakes the level prevented
    (left) and the share that reached the network (right), each square labelled ``k/n``; ``n/e``
    where the level could not express the kind, ``n/d`` where no outcome is known (undetermined),
    grey and unlabelled where no run drew it. None without
    mistake runs (:func:`ani.campaign.known_answer_report.section`)."""
    from ani.campaign.known_answer_report import section

    ka = section(s)
    if ka is None or not ka.rows:
        return None
    kinds = ka.kinds
    names = list(dict.fromkeys(r.row for r in ka.rows))
    at = {(r.row, r.kind): r for r in ka.rows}

    def grid(attr: str) -> tuple[list[list[float]], list[list[str]]]:
        """Shares (NaN: none, drawn as matplotlib's "bad" colour) and the squares' labels."""
        values = [[float("nan") for _ in kinds] for _ in names]
        text = [["" for _ in kinds] for _ in names]
        for (row, kind), r in at.items():
            i, j = names.index(row), kinds.index(kind)
            share = getattr(r, attr)
            text[i][j] = "n/e" if not r.expressed else "n/d" if not share.n else f"{share.k}/{share.n}"
            if share.value is not None:
                values[i][j] = share.value
        return values, text

    def draw() -> Figure:
        width = 2.0 * max(3.0, 1.0 + 0.6 * len(kinds)) + label_width(names)
        height = rows_height(len(names)) + LABEL_CHAR_IN * 0.7 * max(len(k) for k in kinds)  # rotated kind names
        fig, axes = _figure(width, height, 2, sharey=True)
        for ax, attr, cmap_name, title in ((axes[0], "prevented_share", "Greens", "prevented"),
                                           (axes[1], "reached_share", "Reds", "reached the network")):
            values, text = grid(attr)
            cmap = matplotlib.colormaps[cmap_name].with_extremes(bad="#eeeeee")
            ax.imshow(values, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
            for i in range(len(names)):
                for j in range(len(kinds)):
                    dark = values[i][j] > 0.6  # False for NaN
                    ax.text(j, i, text[i][j], ha="center", va="center", fontsize=7,
                            color="white" if dark else "black")
            ax.set_xticks(range(len(kinds)), kinds, rotation=40, ha="right", fontsize=8)
            ax.set_title(title)
            ax.grid(False)
        axes[0].set_yticks(range(len(names)), names)
        fig.supxlabel("mistake kind; squares: share of the expressed mistakes with a known outcome", fontsize=9)
        return fig

    return _render("known-answer", "Known answer: prevented and reached by level and mistake kind",
                   "Each square is a cell and a mistake kind: of the expressed mistakes whose outcome is known, the "
                   "share the level prevented (left, green) and the share whose footprint was in the routers' "
                   "final configurations (right, red), labelled k/n; n/e: the level cannot express the kind (the "
                   "agent made the correct change); n/d: no outcome known (undetermined); grey without a label: "
                   "no run of the cell drew the kind.",
                   draw)


def all_plots(s: Any) -> list[Plot]:
    """Every plot the summary has data for, in the report's order."""
    plots = [rates_plot(s)]
    plots += [stress_plot(s, p, v) for p, v in stress_params(s)]
    plots += [cost_plot(s), process_plot(s), paired_plot(s), damage_plot(s), faults_plot(s), known_answer_plot(s)]
    return [p for p in plots if p is not None]
