"""The known-answer section of summary.md and report.html (issue 25 §3), on hand-built records:
its figures appear and are right, the comparisons are explained by mistake kind, and the
section (and its plot) is absent from a campaign without mistakes."""

from __future__ import annotations

import re

from ani.campaign import plots
from ani.campaign.html_report import render_html
from ani.campaign.known_answer_report import pair_explanations, pair_line
from ani.campaign.report import render_markdown, summarize
from tests.unit.test_known_answer import campaign, rec

SPEC = {"name": "ka", "task": "t", "scenario": "s.yaml", "variants": 6, "seed": 1, "factor": "level",
        "agent": {"kind": "scripted", "mistakes": {"rate": 0.8}}, "budget": {"max_steps": 40},
        "cells": [{"name": n, "level": n, "blocklist": False} for n in ("a0", "a3t")]}
HEADING = "## Known answer"


def _section(md: str) -> str:
    start = md.index(HEADING)
    end = md.find("\n## ", start + 1)
    return md[start:end if end != -1 else None]


def test_markdown_section_figures():
    md = render_markdown(summarize(campaign(), SPEC))
    sec = _section(md)
    assert "| a0 | a0 | near-miss | 3 | 3 | 0 | 3 | 0 | 0/3 [0.00, 0.71] | 3/3 [0.29, 1.00] | 3/3 [0.29, 1.00] " in sec
    assert "| a3t | a3t | near-miss | 3 | 3 | 3 | 0 | 0 | 3/3 [0.29, 1.00] | 0/3 [0.00, 0.71] | - | - |" in sec
    assert "| a3t | a3t | dev-slip | 2 | 0 | 0 | 0 | 0 | - (not expressible) | - (not expressible) | - | - |" in sec
    assert "| a0 | a0 | dev-slip | 2 | 2 | 0 | 2 | 0 | 0/2 [0.00, 0.84] | 2/2 [0.16, 1.00] | 1/2 [0.01, 0.99] " in sec
    assert "observer sensitivity (reached runs expected to break an invariant, every expected one flagged): " \
           "4/5 [0.28, 0.99]" in sec
    assert "observer specificity (runs without an expressed mistake, damage-free and nothing flagged): " \
           "3/4 [0.19, 0.99]" in sec
    assert "| a0 | a0 | 1 | 0 | 0/1 [0.00, 0.97] |" in sec and "| a3t | a3t | 3 | 3 | 3/3 [0.29, 1.00] |" in sec


def test_markdown_explains_the_comparison_by_kind():
    s = summarize(campaign(), SPEC)
    (p,) = s.paired
    assert (p.damage_free.b, p.damage_free.c) == (0, 6)  # the report's McNemar comparison
    sec = _section(render_markdown(s))
    assert ("- `a3t` vs `a0` (6 paired variants; damage-free b = 0, c = 6, exact McNemar p = 0.0312): `a3t` "
            "damage-free where `a0` was not on 6: dev-slip 2 (not expressible 2); near-miss 3 (prevented 3); "
            "no mistake 1\n") in sec + "\n"


def test_no_line_for_comparisons_without_discordant_damage_free_pairs():
    runs = [r for r in campaign() if r.seed in (1, 2, 3)]
    same = [r.model_copy(update={"cell": "a3t-b", "run_id": r.run_id + "b"}) for r in runs if r.cell == "a3t"]
    spec = {**SPEC, "cells": [*SPEC["cells"], {"name": "a3t-b", "level": "a3t", "blocklist": True}]}
    s = summarize(runs + same, spec)
    assert [pk.cell for pk in pair_explanations(s)] == ["a3t", "a3t-b"]  # both against a0
    s2 = summarize([r for r in runs + same if r.cell != "a0"], {**spec, "cells": spec["cells"][1:]})
    assert s2.paired and pair_explanations(s2) == []  # a3t-b vs a3t: the same verdicts
    assert "Why the damage-free rates differ" not in render_markdown(s2)


def test_section_absent_without_mistakes():
    runs = [rec("a0", 1), rec("a0", 2, damage_free=False, failed=("inv-x",)), rec("a3t", 1), rec("a3t", 2)]
    s = summarize(runs, SPEC)
    assert HEADING not in render_markdown(s)
    html = render_html(s)
    assert 'id="known-answer"' not in html and "plot-known-answer" not in html
    assert plots.known_answer_plot(s) is None


def test_html_section_and_plot():
    s = summarize(campaign(), SPEC)
    html = render_html(s)
    assert '<h2 id="known-answer">' in html and '<figure class="plot" id="plot-known-answer"><svg' in html
    sec = html[html.index('<h2 id="known-answer">'):html.index('<h2 id="damage">')]
    assert "<td>a3t</td><td>a3t</td><td>near-miss</td><td>3</td><td>3</td><td>3</td><td>0</td>" in sec
    assert "- (not expressible)" in sec and "4/5 [0.28, 0.99]" in sec and "3/4 [0.19, 0.99]" in sec
    assert pair_line(pair_explanations(s)[0], "") in sec
    assert "a3t vs a0 (6 paired variants" in sec and "`" not in sec


def test_plot_says_not_expressible_and_not_determined(monkeypatch):
    """The squares' labels: k/n, n/e (not expressible), n/d (no outcome known)."""
    from tests.unit.test_known_answer import mistake

    texts: list[str] = []
    real = plots._render

    def spy(plot_id, title, caption, draw):
        fig = draw()
        texts.extend(t.get_text() for ax in fig.axes for t in ax.texts)
        return real(plot_id, title, caption, lambda: fig)

    monkeypatch.setattr(plots, "_render", spy)
    runs = [*campaign(), rec("a0", 8, m=mistake("double", reached=None)), rec("a3t", 8, m=mistake("double", reached=None))]
    plots.known_answer_plot(summarize(runs, SPEC))
    # per panel: a0 dev-slip 0/2 | 2/2, a0 double n/d, a0 near-miss 0/3 | 3/3, a3t dev-slip n/e, a3t double n/d,
    # a3t near-miss 3/3 | 0/3
    assert texts == ["0/2", "n/d", "0/3", "n/e", "n/d", "3/3", "2/2", "n/d", "3/3", "n/e", "n/d", "0/3"]


def test_plot_labels_every_square():
    p = plots.known_answer_plot(summarize(campaign(), SPEC))
    assert p is not None and p.id == "known-answer"
    assert p in plots.all_plots(summarize(campaign(), SPEC))
    again = plots.known_answer_plot(summarize(campaign(), SPEC))
    assert again.svg == p.svg  # deterministic
    assert len(re.findall(r"<g id=\"text_", p.svg)) >= 8  # squares' labels, ticks and titles drawn


def test_the_docs_example_line_is_what_the_report_writes():
    """docs/campaigns.md, "Known answer", quotes the explanation of this module's campaign."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "campaigns.md").read_text(encoding="utf-8")
    block = doc[doc.index("## Known answer"):]
    block = block[block.index("    - `a3t` vs `a0`"):]
    block = block[:block.index("\n\n")]
    line = pair_line(pair_explanations(summarize(campaign(), SPEC))[0])
    assert " ".join(block.split()) == " ".join(f"- {line}".split())


def test_the_known_answer_plot_renders_in_a_browser(tmp_path):
    """Headless Chromium (tests/chromium.py, as test_html_report_browser.py): the known-answer
    plot is drawn and visible, the page's console stays clean."""
    import pytest
    from chromium import chromium, open_page

    if chromium() is None:
        pytest.skip("chromium is not installed (apt-get install chromium; make setup installs it from "
                    "ani/host/packages.txt)")
    html = tmp_path / "report.html"
    html.write_text(render_html(summarize(campaign(), SPEC)), encoding="utf-8")
    got = open_page(html)
    assert got.problems() == [], got.problems()
    (p,) = [p for p in got.plots if p.id == "plot-known-answer"]
    assert p.width > 300 and p.height > 100 and p.shapes > 20 and p.ink is not None and p.ink > 0.02, p


def test_mistake_line_of_one_run():
    from ani.campaign.known_answer_report import mistake_line
    from tests.unit.test_known_answer import mistake

    assert mistake_line(rec("a0", 1)) is None
    assert mistake_line(rec("a0", 1, m=mistake("near-miss", expected=["inv-x"], flagged_=["inv-x"]))) == \
        "near-miss: reached the network; expected to break: inv-x; flagged: inv-x"
    assert mistake_line(rec("a3t", 1, m=mistake("near-miss", reached=False, expected=["inv-x"]))) == \
        "near-miss: prevented; expected to break: inv-x; flagged: nothing"
    assert mistake_line(rec("a3t", 1, m=mistake("dev-slip", expressed=False))) == \
        "dev-slip: not expressible at this level (the correct change was made)"
    unknown = mistake("near-miss", reached=None)
    unknown["expected_breaks"] = None
    assert mistake_line(rec("a1", 1, m=unknown)) == \
        "near-miss: undetermined; expected to break: unknown; flagged: nothing"


def test_one_paired_variant_is_said_in_the_singular():
    from ani.campaign.known_answer import PairKinds
    from ani.campaign.known_answer_report import pair_line

    one = PairKinds(cell="a3t", reference="a0", pairs=1, b=0, c=1, p=1.0, reference_only={},
                    cell_only={"dev-slip": {"not expressible": 1}})
    assert pair_line(one).startswith("`a3t` vs `a0` (1 paired variant; damage-free b = 0, c = 1,")
    assert "(2 paired variants;" in pair_line(one.model_copy(update={"pairs": 2}))
