"""report.html in a real browser (issue 14 §4): headless Chromium (Debian's ``chromium``, listed
in ani/host/packages.txt so scripts/setup.sh installs it) opens the page built from fake records,
every plot renders (an <svg> with drawn content, visible in the screenshot), no image is broken,
the console stays clean; and the check fails on a page with a broken plot.

Skips only where chromium is not installed (the reason names the package); the list must name
it everywhere.
"""

from __future__ import annotations

import re

import pytest
from chromium import DevTools, chromium, open_page
from test_html_report import SPEC, grid_records

from ani.campaign import plots
from ani.campaign.html_report import render_html
from ani.campaign.report import summarize
from ani.host import programs

needs_chromium = pytest.mark.skipif(
    chromium() is None,
    reason="chromium is not installed (apt-get install chromium; make setup installs it from ani/host/packages.txt)",
)


def test_the_package_list_names_chromium_for_the_tests():
    prog = programs.registry()["chromium"]
    assert prog.package == "chromium" and prog.needed_by == ("test",)
    assert prog.levels == ()  # no level needs it: a machine without it runs every campaign
    assert "chromium" in programs.packages()


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    s = summarize(grid_records(), SPEC)
    folder = tmp_path_factory.mktemp("report")
    html = folder / "report.html"
    html.write_text(render_html(s), encoding="utf-8")
    return s, html


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module; each page gets a browser context of its own."""
    with DevTools(chromium()) as dt:
        yield dt


@needs_chromium
def test_every_plot_renders_without_console_error(page, browser, tmp_path):
    s, html = page
    shot = tmp_path / "report.png"
    got = open_page(html, shot, browser=browser)
    assert got.problems() == [], got.problems()
    want = [f"plot-{p.id}" for p in plots.all_plots(s)]
    assert [p.id for p in got.plots] == want and len(want) == 7
    for p in got.plots:  # drawn and visible: the numbers are what the check measured
        assert p.width > 300 and p.height > 100 and p.shapes > 20, p
        assert p.ink is not None and p.ink > 0.02, p
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size == (got.width, min(got.height, 16000)) and im.size[1] > 2000


def _replace_plot(html: str, plot_id: str, inner: str) -> str:
    """The page with the content of figure ``plot-ID`` (its SVG) replaced by ``inner``."""
    pat = re.compile(r'(<figure class="plot" id="plot-' + plot_id + r'">).*?(<figcaption>)', re.S)
    out, n = pat.subn(lambda m: m.group(1) + inner + m.group(2), html, count=1)
    assert n == 1
    return out


@needs_chromium
@pytest.mark.parametrize("plot_id,inner,expect", [
    ("rates", '<img src="rates.svg" alt="rates">', r"broken image|ERR_FILE_NOT_FOUND|Failed to load"),
    ("cost", "<svg xmlns='http://www.w3.org/2000/svg' width='600' height='300'></svg>", r"plot-cost: nothing drawn"),
    ("damage", "", r"plot-damage: no <svg>"),
    ("faults", "<svg xmlns='http://www.w3.org/2000/svg' width='600' height='300'>"
               "<rect width='600' height='300' fill='white'/></svg>", r"plot-faults: blank in the screenshot"),
    ("paired", "<svg xmlns='http://www.w3.org/2000/svg' width='600' height='300'><path d='M0 0L600 300'/>"
               "</svg><script>console.error('plot failed')</script>", r"console\.error: plot failed"),
    ("process", "<svg width='600' height='300'><path d='M0 0L600 300' stroke='black'/></svg>"
                "<script>undefinedFunction()</script>", r"exception: ReferenceError"),
])
def test_a_broken_plot_fails_the_check(page, browser, tmp_path, plot_id, inner, expect):
    s, html = page
    text = html.read_text(encoding="utf-8")
    if f'id="plot-{plot_id}"' not in text:  # the grid has no process metrics: use the rates plot
        plot_id = "rates"
    bad = tmp_path / "report.html"
    bad.write_text(_replace_plot(text, plot_id, inner), encoding="utf-8")
    problems = open_page(bad, browser=browser).problems()
    assert problems, "the check passed a broken page"
    assert any(re.search(expect, p) for p in problems), problems
