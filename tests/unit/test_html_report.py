"""report.html from hand-built records (issue 14 §4): the numbers next to the plots, the plots
the campaign has data for, fields of the other issue-14 parts read when present (faults,
damaged service instances, cost, environment_invalid), byte-identical output, no network.

The records are a subclass of RunRecord with the fields plan14.md gives the other parts, built
with ``model_construct`` (the environment_invalid label does not validate before faults-core
lands), and plain RunRecords (the fields absent): the report must work with both.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ani.campaign import plots
from ani.campaign.html_report import HTML_FILE, context, render_html, write_html_report
from ani.campaign.report import summarize
from ani.campaign.results import CheckOutcome, RunRecord, RunStore, label_for, read_runs
from ani.campaign.stats import clopper_pearson, wilson
from ani.cli import app

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ROOT = Path(__file__).resolve().parents[2]


class NewRecord(RunRecord):
    """A run record with the fields the other parts of issue 14 add (plan14.md, "Run record")."""

    faults: list[dict[str, Any]] = []
    fault_rate: float | None = None
    damaged: dict[str, list[str]] = {}
    cost: dict[str, Any] = {}
    environment_invalid_reason: str | None = None
    unsafe: dict[str, Any] | None = None
    recovered: bool | None = None
    recovery_s: float | None = None
    invalid_calls: int = 0
    locks_left: list[str] = []

    @property
    def valid(self) -> bool:  # faults-core: False for infra_error and environment_invalid
        return self.label not in ("infra_error", "environment_invalid")


def rec(cell: str, seed: int, success: bool | None, damage_free: bool | None = True, *,
        stress: dict | None = None, label: str | None = None, new: bool = True, **kw: Any) -> RunRecord:
    stress = stress or {}
    at = "".join(f"-{k}{v}" for k, v in sorted(stress.items()))
    label = label or label_for(success, damage_free)
    data = dict(run_id=f"{cell}-t{at}-s{seed}", campaign="c", cell=cell, level=cell[:2], task="t",
                seed=seed, stress=stress, label=label, success=success, damage_free=damage_free,
                started=T0, ended=T0, wall_s=10.0 + seed, steps=seed + 2, **kw)
    if not new:
        return RunRecord(**data)
    defaults = {k: f.get_default(call_default_factory=True) for k, f in NewRecord.model_fields.items()
                if not f.is_required()}
    return NewRecord.model_construct(**{**defaults, **data})


def fault(kind: str, injected: bool = True, at_step: int = 1) -> dict[str, Any]:
    return {"kind": kind, "target": {"router": "e1"}, "params": {}, "at_step": at_step,
            "duration_s": 4.0, "injected": injected, "injected_s": 1.0, "removed_s": 5.0,
            "verified": injected, "detail": "ok" if injected else "did not take"}


#: a grid campaign: cells a0, a1, a2 over density {2, 4} x fault_rate {0, 0.3}, 2 seeds
SPEC = {"name": "grid", "task": "t", "scenario": "s.yaml", "variants": 2, "seed": 1, "factor": "level",
        "agent": {"kind": "scripted"}, "budget": {"max_steps": 40},
        "stress": {"density": [2, 4], "fault_rate": [0, 0.3]},
        "cells": [{"name": n, "level": n, "blocklist": False} for n in ("a0", "a1", "a2")]}


def grid_records() -> list[RunRecord]:
    """a0 always succeeds and damages a tenant at density 4; a1 fails every run with faults
    (fault_rate 0.3), damage-free; a2 succeeds, damage-free, but its density-4 fault runs are
    invalid (one infra_error, one environment_invalid)."""
    out: list[RunRecord] = []
    for density in (2, 4):
        for rate in (0, 0.3):
            st = {"density": density, "fault_rate": rate}
            faults = [fault("link_down"), fault("packet_loss", at_step=3)] if rate else []
            for seed in (1, 2):
                broken = density == 4
                inv = [CheckOutcome(name="reach red", passed=not broken, service="tenant:red"),
                       CheckOutcome(name="bgp e1", passed=True, service="bgp")]
                out.append(rec("a0", seed, True, not broken, stress=st, invariants=inv, faults=faults,
                               damaged={"tenant": ["tenant:red"]} if broken else {},
                               cost={"tokens": 1000 * seed}))
                out.append(rec("a1", seed, rate == 0, True, stress=st, faults=faults))
                if density == 4 and rate:
                    lab = "infra_error" if seed == 1 else "environment_invalid"
                    out.append(rec("a2", seed, None, None, stress=st, label=lab,
                                   faults=[fault("link_down", injected=seed == 1)],
                                   infra_error_reason="lab did not start" if seed == 1 else None,
                                   environment_invalid_reason=None if seed == 1 else
                                   "link_down on e1 did not take"))
                else:
                    out.append(rec("a2", seed, True, True, stress=st, faults=faults))
    return out


@pytest.fixture(scope="module")
def grid():
    """(summary, page, plots by id) of the grid campaign, drawn once for the module."""
    s = summarize(grid_records(), SPEC)
    return s, render_html(s), {p.id: p for p in plots.all_plots(s)}


def section(html: str, sid: str) -> str:
    """The part of the page from ``<h2 id="sid">`` to the next ``<h2``."""
    start = html.index(f'<h2 id="{sid}">')
    end = html.find("<h2", start + 1)
    return html[start:end if end > 0 else None]


def _row(html: str, first: str) -> list[str]:
    """The cells of the first table row whose first cell is ``first``."""
    m = re.search(r"<tr><td>" + re.escape(first) + r"</td>(.*?)</tr>", html)
    assert m, f"no row {first!r}"
    return [first] + re.findall(r"<td[^>]*>(.*?)</td>", m.group(1))


def _comments(svg: str) -> list[str]:
    """The texts of a plot (matplotlib writes each text drawn as paths as a comment)."""
    return [t.strip() for t in re.findall(r"<!-- (.*?) -->", svg)]


def test_every_plot_with_data_is_there_and_its_numbers_are_the_tables(grid):
    s, html, P = grid
    ids = list(P)
    assert ids == ["rates", "stress-density", "stress-fault_rate", "cost", "paired", "damage", "faults"]
    for pid in ids:
        assert f'<figure class="plot" id="plot-{pid}"><svg' in html
    # the rates row of a0 at density 4, fault rate 0: 2 of 2 succeed, 0 of 2 damage-free
    row = _row(html, "a0 @ density=4,fault_rate=0")
    assert row[5] == "2/2 (1.00)" and row[7] == "0/2 (0.00)"
    (lo, hi), (clo, chi) = wilson(0, 2), clopper_pearson(0, 2)
    assert row[8] == f"[{lo:.3f}, {hi:.3f}]<br>[{clo:.3f}, {chi:.3f}]"
    # 3 cells x 2 x 2 grid points; summarize()'s rows of one parameter alone have no run and
    # are no point of the plan: not shown
    assert len(plots.rows(s)) == 12 and all(len(c.stress) == 2 for c in plots.rows(s))
    assert "<td>a0 @ density=2</td>" not in html and "a1 @ density=2 vs" not in html
    # a planned cell without runs yet is shown (n = 0)
    two = {"cells": [{"name": "a0", "level": "a0"}, {"name": "a1", "level": "a1"}]}
    assert [c.name for c in plots.rows(summarize([rec("a0", 1, True, new=False)], two))] == ["a0", "a1"]
    # the invalid runs of a2 are counted as such, and out of n once summarize() knows the
    # environment_invalid label (faults-core: INVALID_LABELS); before, only infra_error is out
    row = _row(html, "a2 @ density=4,fault_rate=0.3")
    from ani.campaign import results

    if hasattr(results, "INVALID_LABELS"):
        assert row[3:5] == ["0", "2"] and row[5] == "0/0"
    else:
        assert row[3:5] == ["1", "2"] and row[5] == "0/1 (0.00)"


def test_no_damage_shows_the_rule_of_three_bound(grid):
    s, html, P = grid
    # a1 at density=2,fault_rate=0: 2 valid runs, none damaged: bound 3/2 capped at 1.000
    assert re.search(r"<td>a1 @ density=2,fault_rate=0</td><td class=\"text\">damage &lt; 0\.842 "
                     r"\(Clopper-Pearson 95%\), rule of three 3/n = 1\.000</td>", html)
    # in the plot only where 1 - 3/n bounds something (n >= 4): 2 runs draw no tick at 0
    assert "rule of three: 1 - 3/n" not in _comments(P["rates"].svg)
    clean = summarize([rec("a0", i, True, True) for i in (1, 2, 3, 4)], {})
    assert "rule of three: 1 - 3/n" in _comments(plots.rates_plot(clean).svg)
    # a campaign where every run was damaged has no bound, in the plot or the table
    damaged = summarize([rec("a0", i, True, False) for i in (1, 2, 3)], {})
    assert "rule of three: 1 - 3/n" not in _comments(plots.rates_plot(damaged).svg)
    assert "every row has a damaged run" in render_html(damaged)


def test_stress_lines_pool_the_other_parameter_per_cell(grid):
    s, html, P = grid
    series = plots.stress_series(s, "fault_rate", [0, 0.3])
    # a1: succeeds at fault_rate 0 (2 densities x 2 seeds), never at 0.3
    assert series["success"]["a1"] == [(4, 4), (0, 4)]
    # a2: at 0.3 only density 2 is valid (density 4's two runs have no verdict)
    assert series["success"]["a2"] == [(4, 4), (2, 2)]
    # a0: damage-free at density 2 only
    assert plots.stress_series(s, "density", [2, 4])["damage_free"]["a0"] == [(4, 4), (0, 4)]
    svg = P["stress-fault_rate"].svg
    texts = _comments(svg)
    assert {"a0", "a1", "a2", "success rate by fault_rate", "damage-free rate by fault_rate"} <= set(texts)
    assert "Pooled over density." in html
    assert "<td>a1</td><td>success</td><td>4/4" in html


def test_damage_by_class_from_the_damaged_field_and_from_invariant_tags(grid):
    s, html, P = grid
    assert plots.damage_classes(s) == ["tenant"]
    # a0 at density 4: both valid runs damaged one instance of class tenant; at density 2 none
    assert _row(section(html, "damage"), "a0 @ density=4,fault_rate=0")[1:] == ["2", "2 (2 runs)"]
    assert _row(section(html, "damage"), "a0 @ density=2,fault_rate=0")[1:] == ["2", "0 (0 runs)"]
    # an old record without ``damaged``: the service tags of its broken invariants
    old = rec("a1", 1, True, False, new=False, invariants=[
        CheckOutcome(name="x", passed=False, service="tenant:blue"),
        CheckOutcome(name="y", passed=False, service="tenant:green"),
        CheckOutcome(name="z", passed=False, service="isolation"),
        CheckOutcome(name="w", passed=True, service="bgp")])
    assert plots.damaged_by_class(old) == {"isolation": ["isolation"],
                                           "tenant": ["tenant:blue", "tenant:green"]}
    assert plots.damage_plot(summarize([rec("a1", 1, True, True, new=False)], {})) is None


def test_faults_and_invalidated_runs(grid):
    s, html, P = grid
    assert plots.fault_kinds_seen(s) == ["link_down", "packet_loss"]
    # injected/scheduled per kind, then infra_error and environment_invalid runs
    faults = section(html, "faults")
    assert _row(faults, "a2 @ density=4,fault_rate=0.3")[1:] == ["1/2", "0/0", "1", "1"]
    assert _row(faults, "a2 @ density=2,fault_rate=0.3")[1:] == ["2/2", "2/2", "0", "0"]
    assert _row(faults, "a2 @ density=2,fault_rate=0")[1:] == ["0/0", "0/0", "0", "0"]
    assert "link_down on e1 did not take" in html and "lab did not start" in html
    texts = _comments(P["faults"].svg)
    assert {"link_down", "packet_loss", "infra_error", "environment_invalid"} <= set(texts)
    quiet = summarize([rec("a0", 1, True, new=False)], {})
    assert plots.faults_plot(quiet) is None
    assert "No fault injected; no run invalidated." in render_html(quiet)


def test_cost_reads_tokens_from_the_cost_block_else_the_process_metrics(grid):
    s, html, P = grid
    assert [plots.run_tokens(r) for r in s.records if r.cell == "a0"][:2] == [1000.0, 2000.0]
    assert plots.run_tokens(rec("a1", 1, True, new=False)) is None
    assert _row(section(html, "cost"), "a0 @ density=2,fault_rate=0")[-5] == "1500"  # mean tokens column


def test_paired_comparisons_per_stress_point(grid):
    s, html, P = grid
    ctx = context(s)
    p = next(x for x in ctx["paired"] if x["cell"] == "a1 @ density=2,fault_rate=0.3")
    assert p["reference"] == "a0 @ density=2,fault_rate=0.3"
    assert p["pairs"] == 2 and p["success"] == (2, 0, "0.5")
    assert p["damage_free"][:2] == (0, 0)
    texts = _comments(P["paired"].svg)
    assert "a1 @ density=2,fault_rate=0.3 vs a0 @ density=2,fault_rate=0.3" in texts


def test_the_page_is_self_contained_and_escaped(grid):
    s, html, P = grid
    assert "<script" not in html and "<link" not in html and "<img" not in html
    assert not re.search(r"""(src|href)=["'](https?:|//)""", html)
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", html))
    # only XML namespace names and the SVG's creator credit, never fetched
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink",
                    "http://purl.org/dc/elements/1.1/", "http://creativecommons.org/ns#",
                    "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "http://purl.org/dc/dcmitype/StillImage",
                    "https://matplotlib.org/"}, urls
    assert "<dc:date>" not in html
    evil = summarize([rec("<b>x</b>", 1, True, new=False, agent_error="<script>alert(1)</script>")], {})
    page = render_html(evil)
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>x</b>" not in page


def test_same_records_give_a_byte_identical_page_in_another_process(tmp_path):
    store = RunStore(tmp_path)
    for r in grid_records():
        if r.label in ("clean_success", "dangerous_success", "clean_failure", "destructive_failure"):
            store.append(RunRecord(**{k: getattr(r, k) for k in RunRecord.model_fields}))
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    pages = []
    for seed in ("1", "2"):  # another hash seed: no set or dict order may leak into the page
        code = ("import sys; from ani.campaign.html_report import write_html_report; "
                "print(write_html_report(sys.argv[1]).read_text(), end='')")
        res = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}, check=True, timeout=120)
        pages.append(res.stdout)
    assert pages[0] == pages[1] == (tmp_path / HTML_FILE).read_text()
    # and the same as this process renders (the faults plot only where RunRecord keeps faults)
    assert pages[0] == render_html(summarize(read_runs(tmp_path), SPEC))
    assert pages[0].count('<figure class="plot"') == (7 if "faults" in RunRecord.model_fields else 6)


def test_old_records_without_the_new_fields_still_render():
    recs = [rec(c, i, i % 2 == 0, i != 3, new=False) for c in ("a0", "a1") for i in (1, 2, 3)]
    s = summarize(recs, {"cells": [{"name": "a0", "level": "a0"}, {"name": "a1", "level": "a1"}]})
    html = render_html(s)
    # no service tags: no damage plot; a0 and a1 agree on every seed: no discordant pair to draw
    assert [p.id for p in plots.all_plots(s)] == ["rates", "cost"]
    assert "no discordant pairs" in html
    assert _row(html, "a0")[5] == "1/3 (0.33)"


def test_cli_report_html_writes_the_page_and_prints_its_path(tmp_path):
    store = RunStore(tmp_path)
    for i in (1, 2):
        store.append(rec("a1", i, True, new=False))
    runner = CliRunner()
    res = runner.invoke(app, ["campaign", "report", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert not (tmp_path / HTML_FILE).exists() and "html report" not in res.output
    res = runner.invoke(app, ["campaign", "report", str(tmp_path), "--html"])
    assert res.exit_code == 0, res.output
    page = tmp_path / HTML_FILE
    assert page.exists() and "2/2 (1.00)" in page.read_text()
    assert res.output.strip().splitlines()[-1].replace("\n", "") == f"html report: {page}"
    with pytest.raises(FileNotFoundError):
        write_html_report(tmp_path / "nope")


def test_the_template_ships_as_package_data():
    from importlib.resources import files

    assert files("ani.campaign").joinpath("templates", "report.html.j2").is_file()


def test_every_campaign_ends_with_report_html_and_its_path(tmp_path, monkeypatch):
    """run_campaign (fake labs) writes report.html beside summary.md and prints its path last;
    a page that cannot be written is a warning with the retry command, the results stand."""
    import io

    from rich.console import Console
    from test_campaign_runner import Setup, World

    from ani.campaign import html_report
    from ani.campaign.loop import run_campaign
    from ani.campaign.spec import parse_spec

    (tmp_path / "scen.yaml").write_text("fake: true\n")
    spec = parse_spec({"name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": 2,
                       "seed": 1, "cells": [{"name": "a0", "level": "a0"}, {"name": "a1", "level": "a1"}]},
                      "test", tmp_path)
    buf = io.StringIO()
    out = tmp_path / "res"
    res = run_campaign(spec, out, progress=False, deps=Setup(World()).deps(),
                       console=Console(file=buf, width=200))
    page = out / HTML_FILE
    assert res.html_report == page and page.exists() and (out / "summary.md").exists()
    assert buf.getvalue().strip().splitlines()[-1] == f"html report: {page}"
    assert page.read_text() == render_html(summarize(read_runs(out), json.loads((out / "spec.json").read_text())))
    assert "<td>a1</td><td>a1</td><td>-</td><td>2</td>" in page.read_text()

    def broken(_out):
        raise RuntimeError("no space left")

    monkeypatch.setattr(html_report, "write_html_report", broken)
    buf = io.StringIO()
    out2 = tmp_path / "res2"
    res = run_campaign(spec, out2, progress=False, deps=Setup(World()).deps(),
                       console=Console(file=buf, width=300))
    assert res.html_report is None and len(read_runs(out2)) == 4 and (out2 / "summary.md").exists()
    assert f"report.html not written (RuntimeError: no space left); retry with: ani campaign report {out2} --html" \
        in buf.getvalue()


def test_observer_and_measured_outcomes_are_counted_per_row():
    recs = [rec("a1", 1, True, True, unsafe={"invariant": "reach red", "duration_s": 2.0},
                recovered=True, recovery_s=3.0, invalid_calls=2),
            rec("a1", 2, True, True, recovered=False, locks_left=["r1 candidate"]),
            rec("a1", 3, True, True, recovered=True, recovery_s=1.0)]
    html = render_html(summarize(recs, {}))
    part = section(html, "outcomes")
    header = re.findall(r"<th>(.*?)</th>", part)
    got = dict(zip(header, _row(part, "a1")))
    # unsafe 1, not recovered 1, invalid calls 1, lock left 1, mean recovery (3 + 1) / 2; other
    # fields of RunRecord (after the other parts land) count 0 here
    unsafe = "passed through an unsafe state no fault explains"  # issue 23 §2
    assert {k: got[k] for k in ("valid runs", unsafe, "did not recover",
                                "made invalid calls", "left a lock held", "recovery s (mean)")} == {
        "valid runs": "3", unsafe: "1", "did not recover": "1",
        "made invalid calls": "1", "left a lock held": "1", "recovery s (mean)": "2.0"}
    assert all(v == "0" for k, v in got.items() if k in ("oscillated", "applied a change twice"))
    plain = render_html(summarize([rec("a1", 1, True, new=False)], {}))
    has = any(f in RunRecord.model_fields for f in ("unsafe", "recovered", "invalid_calls", "locks_left"))
    assert ('<h2 id="outcomes">' in plain) == has


def test_a_blocklisted_cell_says_what_the_ablation_does_and_does_not_stop(grid):
    # issue 23: the report must not let a reader take "blocklisted" for "protected"
    from ani.adapters.blocklist import SCOPE
    from ani.campaign.report import render_markdown

    _, page, _ = grid
    assert "does not stop" not in page  # no blocklisted cell: no note
    spec = {**{k: v for k, v in SPEC.items() if k != "stress"}, "factor": "blocklist",
            "cells": [{"name": "a1", "level": "a1", "blocklist": False},
                      {"name": "a1+bl", "level": "a1", "blocklist": True}]}
    records = [rec("a1", s, True, True) for s in (1, 2)] + [rec("a1+bl", s, True, True, blocklist=True) for s in (1, 2)]
    s = summarize(records, spec)
    html = section(render_html(s), "rates")
    assert "emptied entry by entry" in html and "It does not stop damage the list does not name" in html
    assert "inspects nothing at a2, a3t, a3r and a4" in html
    assert SCOPE in render_markdown(s)


def test_fault_exposure_table_fault_explained_counts_and_the_exposure_warning_are_on_the_page():
    """issue 23 §2: report.html shows what summary.md shows for fault exposure, from the same
    functions: the per-cell exposure table, the fault-explained count, the per-comparison
    warning when the cells met different exposure."""
    from ani.campaign.report import render_markdown
    from ani.faults.record import FaultRecord

    def run(cell: str, exposures: list[float | None], **kw: Any) -> RunRecord:
        faults = [FaultRecord(kind="fake", at_step=k, duration_s=5.0, injected=e is not None,
                              exposure_s=e, acting_s=e) for k, e in zip((4, 7, 13), exposures)]
        return RunRecord(run_id=f"{cell}-s1", campaign="c", cell=cell, level=cell, task="t", seed=1,
                         label="clean_success", success=True, damage_free=True, started=T0, ended=T0,
                         faults=faults, fault_rate=0.3, **kw)

    explained = {"first_violation_s": 3.0, "invariant": "bgp e4", "unexplained": 0,
                 "violations": [{"name": "bgp e4", "start_s": 3.0, "end_s": 5.0, "fault_explained": True,
                                 "faults": ["frozen_router e4"]}]}
    spec = {"name": "c", "task": "t", "variants": 1, "seed": 1, "factor": "level",
            "cells": [{"name": "a0", "level": "a0"}, {"name": "a3t", "level": "a3t"}]}
    s = summarize([run("a0", [5.0, 5.2, 5.1], unsafe=explained, sample_period_s=0.5),
                   run("a3t", [0.3, None, None], sample_period_s=0.5)], spec)
    html, md = render_html(s), render_markdown(s)
    table = html[html.index('<h3 id="exposure">'):]
    assert _row(table, "a0") == ["a0", "1", "3.0", "3.0", "15.3", "15.3", "-"]
    assert _row(table, "a3t") == ["a3t", "1", "3.0", "1.0", "0.3", "0.3", "-"]
    assert "| a3t | 1 | 3.0 | 1.0 | 0.3 | 0.3 | - |" in md  # the same numbers in summary.md
    paired = section(html, "paired")
    assert "<strong>Warning: fault exposure differs</strong> (tolerance per fault: 1 s" in paired
    assert ("<li><code>a3t</code> vs <code>a0</code>, seed 1: 3 of 3 faults, 15.3 s in effect "
            "(15.3 s while the agent acted) vs 1 of 3 faults, 0.3 s in effect") in paired
    out = section(html, "outcomes")
    header = re.findall(r"<th>(.*?)</th>", out)
    a0, a3t = dict(zip(header, _row(out, "a0"))), dict(zip(header, _row(out, "a3t")))
    col = "had violations or grading failures a fault explains (fault-explained)"
    assert (a0[col], a3t[col]) == ("1", "0")
    assert a0["passed through an unsafe state no fault explains"] == "0"
    same = summarize([run("a0", [5.0, 5.2, 5.1]), run("a3t", [5.1, 5.0, 5.4])], spec)
    assert "fault exposure differs" not in render_html(same)  # within the tolerance: no warning
