"""report.html with 1, 2 and 20 cells (issue 23 §6): figures sized by their rows, legends clear of
the axis labels, no empty panel, one colour for one meaning in a plot, no rule-of-three tick where
the bound says nothing (n <= 3). Checked on the figures matplotlib laid out (every figure the
report draws passes through ``plots.to_svg``) and in headless Chromium (what a reader sees).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from chromium import DevTools, chromium, open_page
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from test_html_report import fault, rec

from ani.campaign import plots
from ani.campaign.html_report import render_html
from ani.campaign.metrics import ACTION_KINDS, ProcessMetrics
from ani.campaign.report import summarize

KINDS = ["link_down", "packet_loss", "frozen_node", "daemon_restart", "held_lock",
         "concurrent_writer", "pool_exhaustion", "latency"]


def process(i: int) -> ProcessMetrics:
    counts = {k: (j + i) % 3 + 1 for j, k in enumerate(ACTION_KINDS)}
    return ProcessMetrics(turns=5, actions=sum(counts.values()), action_counts=counts,
                          error_actions=1, repeat_identical=1)


def campaign(n: int, seeds: int = 2, *, with_process: bool = False) -> tuple[list, dict]:
    """``n`` cells of a scripted agent (no tokens), ``seeds`` damage-free runs each plus one
    environment_invalid and one infra_error run; cell i meets the first i+1 fault kinds (all of
    them with one cell)."""
    names = [f"cell{i:02d}" for i in range(n)]
    out = []
    for i, c in enumerate(names):
        kinds = KINDS[: (i % len(KINDS)) + 1] if n > 1 else KINDS
        extra = {"process": process(i)} if with_process else {}
        for seed in range(1, seeds + 1):
            out.append(rec(c, seed, seed == 1 or i % 2 == 0, True,
                           faults=[fault(k) for k in kinds], **extra))
        out.append(rec(c, seeds + 1, None, None, label="environment_invalid",
                       faults=[fault("link_down", injected=False)]))
        out.append(rec(c, seeds + 2, None, None, label="infra_error",
                       infra_error_reason="lab did not start"))
    spec = {"name": f"n{n}", "task": "t", "scenario": "s.yaml", "variants": seeds + 2, "seed": 1,
            "factor": "level", "agent": {"kind": "scripted"}, "budget": {"max_steps": 40},
            "cells": [{"name": c, "level": "a0", "blocklist": False} for c in names]}
    return out, spec


@pytest.fixture
def figures(monkeypatch):
    """Every matplotlib figure the report draws, by plot id, laid out as it was saved."""
    got: dict[str, object] = {}
    real = plots.to_svg

    def capture(fig, salt):
        svg = real(fig, salt)
        got[salt.removeprefix("ani-report-")] = fig
        return svg

    monkeypatch.setattr(plots, "to_svg", capture)
    return got


def draw(figures, n: int, **kw) -> dict:
    records, spec = campaign(n, **kw)
    figures.clear()
    plots.all_plots(summarize(records, spec))
    return dict(figures)


def _extent(artist, renderer):
    return artist.get_window_extent(renderer)


@pytest.mark.parametrize("n", [1, 2, 20])
def test_legends_are_clear_of_every_axis_label(figures, n):
    figs = draw(figures, n, with_process=True)
    assert {"faults", "process"} <= set(figs)
    for pid, fig in figs.items():
        canvas = FigureCanvasAgg(fig)  # the layout again, at the figure's dpi, as saved
        canvas.draw()
        renderer = canvas.get_renderer()
        legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
        labels = [a for ax in fig.axes for a in [ax.xaxis.label, *ax.get_xticklabels()] if a.get_text()]
        for leg, lab in itertools.product(legends, labels):
            assert not _extent(leg, renderer).overlaps(_extent(lab, renderer)), (pid, n, lab.get_text())


@pytest.mark.parametrize("n", [1, 20])
def test_every_panel_draws_something(figures, n):
    """A scripted agent has no tokens: no tokens panel (it was an empty 'not recorded' axis)."""
    figs = draw(figures, n)
    for pid, fig in figs.items():
        for ax in fig.axes:
            assert ax.patches or ax.lines or ax.collections, (pid, ax.get_xlabel())
    cost_labels = [ax.get_xlabel() for ax in figs["cost"].axes]
    assert cost_labels == ["agent steps per run", "wall time per run, s"]


def test_no_rates_panel_where_every_rate_is_zero(figures):
    records, spec = campaign(2, with_process=True)
    for r in records:
        if r.process is not None:
            r.process = r.process.model_copy(update={"error_actions": 0, "repeat_identical": 0})
    figures.clear()
    plots.all_plots(summarize(records, spec))
    assert [ax.get_xlabel() for ax in figures["process"].axes] == ["share of actions"]


def _min_distance(colors: list) -> float:
    rgb = [to_rgb(c) for c in colors]
    return min(sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5 for a, b in itertools.combinations(rgb, 2))


def test_one_colour_per_meaning_in_a_plot(figures):
    """Eight fault kinds beside both labels without a verdict; six action kinds beside the two
    action rates (pool_exhaustion and environment_invalid, submit and the repeat rate were the
    same colour)."""
    figs = draw(figures, 1, with_process=True)
    for pid in ("faults", "process"):
        (leg,) = figs[pid].legends
        names = [t.get_text() for t in leg.get_texts()]
        colors = [h.get_facecolor() for h in leg.legend_handles]
        assert len(names) == {"faults": 10, "process": 8}[pid]
        assert _min_distance(colors) > 0.15, (pid, names)


def test_greys_of_labels_without_a_verdict_are_not_a_series_colour():
    for c in [*plots.INVALID_COLORS.values(), *plots.RATE_COLORS.values(), *plots.SPARE_GREYS]:
        assert min(_min_distance([c, p]) for p in plots.PALETTE) > 0.15, c


@pytest.mark.parametrize("seeds,tick", [(2, False), (3, False), (4, True)])
def test_rule_of_three_tick_only_where_it_bounds_something(figures, seeds, tick):
    figs = draw(figures, 2, seeds=seeds)
    ticks = [ln for ax in figs["rates"].axes for ln in ax.lines if ln.get_marker() == "|"]
    assert bool(ticks) is tick
    if tick:
        assert all(0 < ln.get_xdata()[0] < 1 for ln in ticks)


def test_figures_are_sized_by_their_rows(figures):
    h = {n: draw(figures, n)["rates"].get_size_inches()[1] for n in (1, 2, 20)}
    assert h[1] == h[2] >= plots.FRAME_IN + plots.MIN_AXES_IN
    assert h[20] == pytest.approx(plots.FRAME_IN + 20 * plots.ROW_IN)


needs_chromium = pytest.mark.skipif(
    chromium() is None,
    reason="chromium is not installed (apt-get install chromium; make setup installs it from ani/host/packages.txt)",
)


@needs_chromium
def test_pages_of_1_2_and_20_cells_in_the_browser(tmp_path):
    heights = {}
    with DevTools(chromium()) as browser:  # one browser, a context of its own per page
        pages = {}
        for n in (1, 2, 20):
            records, spec = campaign(n, with_process=True)
            html = tmp_path / f"report-{n}.html"
            html.write_text(render_html(summarize(records, spec)), encoding="utf-8")
            pages[n] = open_page(html, browser=browser)
    for n, page in pages.items():
        assert page.problems() == [], (n, page.problems())
        got = {p.id: p for p in page.plots}
        assert set(got) >= {"plot-rates", "plot-cost", "plot-process", "plot-faults"}
        heights[n] = got["plot-rates"].height
        for p in got.values():  # never squashed: the 2-cell rate plot was 90 px of axes in 162
            assert p.height >= 200, (n, p)
    assert heights[1] == heights[2] and heights[20] > 2.5 * heights[2]


def test_paired_panels_only_where_a_pair_is_discordant(figures):
    """cell01 fails where cell00 succeeds (success: b = 1) and both are always damage-free: one
    panel, success; with no discordant pair at all, no paired plot (two empty McNemar panels
    were drawn, found by an outside check)."""
    figs = draw(figures, 2)
    (ax,) = figs["paired"].axes
    assert ax.get_title().startswith("success:")
    assert all(float(t.get_position()[0]).is_integer() for t in ax.get_xticklabels())
    records, spec = campaign(2)
    for r in records:
        if r.success is not None:
            r.success = True
    assert plots.paired_plot(summarize(records, spec)) is None


def test_long_row_labels_widen_the_figure_not_squeeze_the_axes(figures):
    """Cells at stress values label comparisons 'a2 @ density=2,fault_rate=0.3 vs a1 @ ...': the
    paired plot's axes collapsed to ~15 px (outside check). The figure is widened by its labels."""
    records, spec = campaign(2)
    for r in records:
        r.cell = r.cell + " @ density=2,fault_rate=0.3,extra=long-label"
    spec["cells"] = [{**c, "name": c["name"] + " @ density=2,fault_rate=0.3,extra=long-label"} for c in spec["cells"]]
    figures.clear()
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        plots.all_plots(summarize(records, spec))
    assert not [w for w in seen if "collapsed" in str(w.message)], [str(w.message) for w in seen]
    fig = figures["paired"]
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    (ax,) = fig.axes
    width_in = ax.get_window_extent(canvas.get_renderer()).width / fig.dpi
    assert width_in > 3.0, width_in
