"""Issue 26 §3: comparisons against any reference cell, the paired difference with Newcombe's
method 10 interval (reproduced against the paper's Table III), Holm's correction, the question
in one line per pair (summary.md, report.html, the terminal) and the CLI's --reference."""

from __future__ import annotations

import copy
import json
import math

import pytest
import yaml
from typer.testing import CliRunner

from ani.campaign.html_report import render_html
from ani.campaign.report import load_summary, question_lines, render_markdown, summarize
from ani.campaign.results import RunStore
from ani.campaign.spec import load_spec
from ani.campaign.stats import holm, newcombe_paired
from ani.cli import app
from ani.errors import CampaignSpecError
from test_campaign_report import SPEC, rec

# Newcombe (1998) Stat Med 17:2635-2650, Table III, method 10, 95 per cent: cells (e, f, g, h)
# -> limits for (f - g) / n, printed to four decimals. Edge cases among them: no discordant pairs
# (54, 0, 0, 0), an empty margin (0, 30, 0, 0), rates near 1 (2, 98, 0, 0).
NEWCOMBE_TABLE_III = [
    ((36, 12, 2, 0), (0.0569, 0.3404)),
    ((20, 12, 2, 16), (0.0562, 0.3292)),
    ((18, 12, 2, 18), (0.0562, 0.3290)),
    ((36, 14, 0, 0), (0.1528, 0.4167)),
    ((35, 14, 0, 1), (0.1461, 0.4175)),
    ((18, 14, 0, 18), (0.1441, 0.3963)),
    ((2, 97, 1, 0), (0.8721, 0.9854)),
    ((1, 97, 1, 1), (0.8736, 0.9850)),
    ((0, 29, 1, 0), (0.6666, 0.9882)),
    ((2, 98, 0, 0), (0.9178, 0.9945)),
    ((1, 98, 0, 1), (0.9171, 0.9916)),
    ((0, 30, 0, 0), (0.8395, 1.0)),
    ((54, 0, 0, 0), (-0.0664, 0.0664)),
]


@pytest.mark.parametrize(("cells", "limits"), NEWCOMBE_TABLE_III)
def test_newcombe_method_10_reproduces_the_papers_table(cells, limits):
    e, f, g, h = cells
    d = newcombe_paired(e, f, g, h)
    assert d.n == e + f + g + h and math.isclose(d.diff, (f - g) / d.n)
    assert d.lo == pytest.approx(limits[0], abs=1.1e-4)  # the paper prints four decimals
    assert d.hi == pytest.approx(limits[1], abs=1.1e-4)


def test_newcombe_mirrors_when_the_members_swap_and_stays_in_range():
    for e, f, g, h in [(5, 3, 1, 4), (0, 0, 10, 0), (10, 0, 0, 0), (2, 7, 7, 2), (0, 1, 0, 0)]:
        d, back = newcombe_paired(e, f, g, h), newcombe_paired(e, g, f, h)
        assert -1 <= d.lo <= d.diff <= d.hi <= 1
        assert back.diff == pytest.approx(-d.diff) and back.lo == pytest.approx(-d.hi) and back.hi == pytest.approx(-d.lo)


def test_newcombe_without_pairs_and_bad_counts():
    d = newcombe_paired(0, 0, 0, 0)
    assert (d.diff, d.lo, d.hi, d.note) == (None, -1.0, 1.0, "no pairs")
    with pytest.raises(ValueError, match="non-negative integer"):
        newcombe_paired(1, -1, 0, 0)
    with pytest.raises(ValueError, match="conf"):
        newcombe_paired(1, 1, 0, 0, conf=1.0)


def test_holm_adjusts_step_down_in_the_given_order():
    assert holm([]) == []
    assert holm([0.04]) == [0.04]
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == [1.0, 1.0]  # capped at 1
    with pytest.raises(ValueError, match="p-values"):
        holm([1.5])


SPEC3 = {**SPEC, "cells": SPEC["cells"] + [{"name": "a3t", "level": "a3t", "blocklist": False}]}


def _records():
    """a0: 0/6 success, damage-free on seeds 1-2; a1: all clean; a3t: all succeed, seed 2 damaged."""
    out = [rec("a0", s, False, s < 3) for s in range(1, 7)]
    out += [rec("a1", s, True) for s in range(1, 7)]
    return out + [rec("a3t", s, True, s != 2) for s in range(1, 7)]


def test_reference_cell_compares_every_other_cell_with_it():
    s = summarize(_records(), SPEC3, reference="a3t")
    assert [(p.cell, p.reference) for p in s.paired] == [("a0", "a3t"), ("a1", "a3t")]
    a0 = s.paired[0]
    # damage-free: a3t yes / a0 no on seeds 3..6 -> b = 4, a0 yes / a3t no on seed 2 -> c = 1
    assert (a0.damage_free.b, a0.damage_free.c) == (4, 1)
    d = a0.damage_free_diff
    assert (d.p1, d.p2) == pytest.approx((2 / 6, 5 / 6)) and d.diff == pytest.approx(-0.5)
    # the interval is Newcombe's on (both, a0 only, a3t only, neither) = (1, 1, 4, 0)
    ref = newcombe_paired(1, 1, 4, 0)
    assert (d.lo, d.hi) == (ref.lo, ref.hi)
    # Holm over the 2 comparisons, per outcome: success p 0.03125 (b = 6) and 1 (no discordant)
    assert a0.success.p_value == pytest.approx(0.03125)
    assert a0.success_holm == pytest.approx(0.0625) and s.paired[1].success_holm == 1.0
    assert a0.damage_free_holm == pytest.approx(min(1.0, 2 * a0.damage_free.p_value))


def test_default_reference_is_the_first_cell_then_the_spec_then_the_option():
    assert {p.reference for p in summarize(_records(), SPEC3).paired} == {"a0"}
    spec = {**SPEC3, "reference": "a1"}
    assert {p.reference for p in summarize(_records(), spec).paired} == {"a1"}
    assert {p.reference for p in summarize(_records(), spec, reference="a3t").paired} == {"a3t"}


def test_an_unknown_reference_is_refused_listing_the_cells():
    with pytest.raises(CampaignSpecError, match=r"reference cell 'a9' is not a cell of this campaign; cells: a0, a1, a3t"):
        summarize(_records(), SPEC3, reference="a9")


def test_the_question_in_one_line_per_pair_markdown_and_html():
    s = summarize(_records(), SPEC3, reference="a3t")
    lines = question_lines(s, "")
    # damage-free: McNemar b = 4, c = 1: p = 0.375, Holm x 2 = 0.75; success: b = 6, c = 0: 0.03125 x 2
    assert lines == [
        "a0 vs a3t (6 paired seeds): damage-free 0.33 vs 0.83, difference -0.50 [-0.84, +0.19], p = 0.75 (Holm); "
        "success 0.00 vs 1.00, difference -1.00 [-1.00, -0.45], p = 0.0625 (Holm)",
        "a1 vs a3t (6 paired seeds): damage-free 1.00 vs 0.83, difference +0.17 [-0.25, +0.56], p = 1 (Holm); "
        "success 1.00 vs 1.00, difference +0.00 [-0.39, +0.39], p = 1 (Holm)",
    ]
    md = render_markdown(s)
    assert "## Paired comparisons against `a3t` (exact McNemar, two-sided; Holm over 2 comparisons per outcome)" in md
    assert f"- {question_lines(s)[0]}" in md and "`a0` vs `a3t`" in md
    assert "Newcombe (1998) method 10" in md and "Statistics in Medicine 17:2635-2650" in md
    page = render_html(s)
    assert all(line in page for line in lines)
    assert "p (Holm)" in page and "Newcombe (1998) method 10" in page


def _folder(tmp_path, spec=SPEC3):
    store = RunStore(tmp_path)
    for r in _records():
        store.append(r)
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    return tmp_path


def test_cli_report_reference_prints_differences_and_holm(tmp_path):
    out = _folder(tmp_path)
    res = CliRunner().invoke(app, ["campaign", "report", str(out), "--reference", "a3t", "--html"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "Holm-adjusted over 2 comparisons per outcome" in text
    assert "a0 vs a3t (6 paired seeds): damage-free 0.33 vs 0.83, difference -0.50 [" in text
    assert "a1 vs a3t (6 paired seeds): damage-free 1.00 vs 0.83, difference +0.17 [" in text
    assert "against `a3t`" in (out / "summary.md").read_text()
    assert "a0 vs a3t (6 paired seeds)" in (out / "report.html").read_text()
    # without the option: the first cell, as before
    res = CliRunner().invoke(app, ["campaign", "report", str(out)])
    assert res.exit_code == 0 and "a1 vs a0 (6 paired seeds)" in " ".join(res.output.split())
    assert load_summary(out).paired[0].reference == "a0"


def test_cli_report_unknown_reference_is_one_line_and_writes_nothing(tmp_path):
    out = _folder(tmp_path)
    res = CliRunner().invoke(app, ["campaign", "report", str(out), "--reference", "a9"])
    assert res.exit_code == 2
    assert "reference cell 'a9' is not a cell of this campaign; cells: a0, a1, a3t" in " ".join(res.output.split())
    assert "Traceback" not in res.output and not (out / "summary.md").exists()


def test_old_folder_without_reference_in_spec_json_reports_against_the_first_cell(tmp_path):
    spec = copy.deepcopy(SPEC3)
    spec.pop("reference", None)
    out = _folder(tmp_path, spec)
    assert [p.reference for p in load_summary(out).paired] == ["a0", "a0"]


GOOD = {
    "name": "sweep", "scenario": "scen.yaml", "task": "onboard-site", "variants": 2,
    "agent": {"kind": "scripted"}, "cells": [{"name": "a1", "level": "a1"}, {"name": "a3t", "level": "a3t"}],
}


def test_campaign_file_reference(tmp_path):
    (tmp_path / "scen.yaml").write_text("x: 1\n")
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump({**GOOD, "reference": "a3t"}))
    assert load_spec(p).reference == "a3t"
    p.write_text(yaml.safe_dump({**GOOD, "reference": "a4"}))
    with pytest.raises(CampaignSpecError) as ei:
        load_spec(p)
    assert "reference: 'a4' is not a cell of this campaign; cells: a1, a3t" in str(ei.value)
    p.write_text(yaml.safe_dump(GOOD))
    assert load_spec(p).reference is None
