"""report.html of a real campaign (issue 14 §4): two cells (a1, a2), one seed, the scripted
agent on FRR labs; the campaign writes the page at its end, its numbers are summary.md's, and
headless Chromium renders every plot without a console error."""

from __future__ import annotations

import json
import re

import pytest
from chromium import chromium, open_page

from ani.campaign.html_report import HTML_FILE
from ani.campaign.loop import run_campaign
from ani.campaign.results import read_runs
from ani.campaign.spec import load_spec

pytestmark = pytest.mark.integration


def test_a_real_campaign_ends_with_a_report_that_renders(lab_host, tmp_path):
    camp = tmp_path / "c.yaml"
    camp.write_text(
        "name: it-html\n"
        "scenario: scenarios/brownfield-small.yaml\n"
        "task: onboard-site\n"
        "variants: 1\n"
        "seed: 1\n"
        "agent: {kind: scripted}\n"
        "budget: {max_steps: 40, wall_clock_s: 300}\n"
        "cells:\n"
        "  - {name: a1, level: a1}\n"
        "  - {name: a2, level: a2}\n"
    )
    out = tmp_path / "res"
    res = run_campaign(load_spec(camp), out, progress=False, source=camp)
    assert not res.interrupted and res.html_report == out / HTML_FILE
    recs = read_runs(out)
    assert len(recs) == 2 and all(r.label != "infra_error" for r in recs), [r.infra_error_reason for r in recs]
    html = res.html_report.read_text(encoding="utf-8")
    summary = (out / "summary.md").read_text(encoding="utf-8")
    # each cell's success and damage-free rate, as summary.md states them
    for cell in ("a1", "a2"):
        md = re.search(rf"^\| {re.escape(cell)} \| {cell} \| - \| 1 \| 0 \| (\S+ \(\S+\)) \| [^|]+\| [^|]+"
                       rf"\| (\S+ \(\S+\)) \|", summary, re.M)
        assert md, summary
        row = re.search(rf"<tr><td>{cell}</td><td>{cell}</td><td>-</td><td>1</td><td>0</td><td>([^<]+)</td>"
                        rf"<td>[^<]+<br>[^<]+</td><td>([^<]+)</td>", html)
        assert row and row.groups() == md.groups(), (row and row.groups(), md.groups())
    page = open_page(res.html_report, tmp_path / "report.png") if chromium() else None
    if page is None:
        pytest.skip("chromium is not installed (apt-get install chromium; listed in ani/host/packages.txt)")
    assert page.problems() == []
    ids = [p.id for p in page.plots]
    assert ids[:2] == ["plot-rates", "plot-cost"] and "plot-process" in ids
    # the paired plot only where a comparison has a discordant pair (the table says the rest)
    recs = [json.loads(ln) for ln in (out / "runs.jsonl").read_text().splitlines()]
    by_cell = {r["cell"]: (r["success"], r["damage_free"]) for r in recs}
    assert ("plot-paired" in ids) == (by_cell["a1"] != by_cell["a2"]), (ids, by_cell)
    assert all(p.ink and p.ink > 0.02 for p in page.plots), page.plots
