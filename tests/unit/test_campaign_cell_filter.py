"""``ani campaign run --cell NAME`` (repeatable): a campaign run in some of its cells only, with
the full campaign's plans for them (so its runs pair with a full run's), recorded in the
folder's ``spec.json`` so that ``--resume`` runs the same cells and refuses others."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ani.campaign.loop import load_for_run, planned, run_campaign
from ani.campaign.results import read_runs
from ani.campaign.spec import load_spec, parse_spec, select_cells
from ani.cli import app
from ani.errors import CampaignSpecError
from ani.testing.fake_campaign import FakeWorld

LLM = "campaigns/level-sweep-llm.yaml"
CELLS = [{"name": "a0", "level": "a0"}, {"name": "a1", "level": "a1"}, {"name": "a1+blocklist", "level": "a1",
                                                                         "blocklist": True}]


def _campaign(tmp_path: Path, **more) -> Path:
    """A campaign file of three cells, 2 seeds, on the fake world's scenario."""
    (tmp_path / "scen.yaml").write_text("fake: true\n", encoding="utf-8")
    f = tmp_path / "c.yaml"
    data = {"name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": 2, "cells": CELLS, **more}
    f.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return f


def _plans(out: Path) -> dict[str, dict]:
    return {p["run_id"]: p for p in map(json.loads, (out / "plan.jsonl").read_text().splitlines())}


def test_the_cells_named_are_kept_in_the_files_order_with_their_run_ids():
    full = load_spec(LLM)
    spec = load_spec(LLM, cells=["a3t", "a0", "a3t"])
    assert [c.name for c in spec.cells] == ["a0", "a3t"] and spec.cell_filter == ["a0", "a3t"]
    ids = {spec.run_id(p.cell, p.seed, p.stress) for p in spec.points()}
    assert ids == {full.run_id(p.cell, p.seed, p.stress) for p in full.points() if p.cell in ("a0", "a3t")}
    assert len(ids) == 2 * full.variants
    assert load_spec(LLM, cells=[]).cell_filter is None and len(load_spec(LLM, cells=[]).cells) == 7


@pytest.mark.parametrize(("name", "said"), [
    ("A3T", "--cell 'A3T': not a cell of campaign level-sweep-llm; did you mean a3t? "
            "(cells: a0, a1, a1+blocklist, a2, a3t, a3r, a4)"),
    ("zzz", "--cell 'zzz': not a cell of campaign level-sweep-llm (cells: a0, a1, a1+blocklist, a2, a3t, a3r, a4)"),
])
def test_an_unknown_cell_is_refused_naming_the_cells(name, said):
    with pytest.raises(CampaignSpecError) as exc:
        load_spec(LLM, cells=["a0", name])
    assert str(exc.value) == said


def test_the_files_reference_cell_must_be_kept(tmp_path):
    spec = parse_spec(yaml.safe_load(_campaign(tmp_path, reference="a1").read_text()), "c.yaml", tmp_path)
    with pytest.raises(CampaignSpecError) as exc:
        select_cells(spec, ["a0"])
    assert str(exc.value) == ("--cell: the campaign's reference cell a1 (reference:) is not among the cells given; "
                              "add --cell a1")
    assert select_cells(spec, ["a1", "a0"]).reference == "a1"


def test_a_campaign_file_cannot_write_the_filter_itself(tmp_path):
    with pytest.raises(CampaignSpecError, match=r"cell_filter: not a key of a campaign file"):
        load_spec(_campaign(tmp_path, cell_filter=["a0"]))


def test_a_filtered_run_plans_the_full_campaigns_runs_and_resumes_with_its_cells(tmp_path):
    f = _campaign(tmp_path)
    full = tmp_path / "full"
    full.mkdir()
    planned(load_for_run(f), FakeWorld().deps({}), full)  # the full campaign's plan.jsonl
    assert len(_plans(full)) == 6
    out = tmp_path / "some"
    res = run_campaign(load_for_run(f, cells=["a1+blocklist", "a0"]), out, progress=False,
                       deps=FakeWorld().deps({("a1+bl", 2): "interrupt"}))  # the cell key
    assert res.interrupted
    plans = _plans(out)
    assert sorted(plans) == ["a0-onboard-site-s1", "a0-onboard-site-s2", "a1_blocklist-onboard-site-s1",
                             "a1_blocklist-onboard-site-s2"]
    assert all(plans[rid] == _plans(full)[rid] for rid in plans)  # the same plans: the runs pair
    assert json.loads((out / "spec.json").read_text())["cell_filter"] == ["a0", "a1+blocklist"]

    again = load_for_run(f, resume=out)  # no --cell: the folder's cells
    assert [c.name for c in again.cells] == ["a0", "a1+blocklist"]
    res = run_campaign(again, out, resume=True, progress=False, deps=FakeWorld().deps({}))
    assert not res.interrupted and [r.run_id for r in res.ran] == ["a1_blocklist-onboard-site-s2"]
    assert sorted(r.run_id for r in read_runs(out)) == sorted(plans) and _plans(out) == plans
    assert load_for_run(f, resume=out, cells=["a0", "a1+blocklist"]).cell_filter == ["a0", "a1+blocklist"]


@pytest.mark.parametrize(("started", "given", "was"), [
    (["a0"], ["a0", "a1"], "--cell 'a0'"),
    (None, ["a0"], "every cell (no --cell)"),
])
def test_resume_with_other_cells_is_refused_naming_both(tmp_path, started, given, was):
    f = _campaign(tmp_path)
    out = tmp_path / "res"
    out.mkdir()
    (out / "spec.json").write_text(json.dumps({"name": "t", "cell_filter": started}), encoding="utf-8")
    with pytest.raises(CampaignSpecError) as exc:
        load_for_run(f, resume=out, cells=given)
    now = " ".join(f"--cell {n!r}" for n in given)
    assert str(exc.value) == (
        f"--resume {out}: this folder's campaign was started with {was}, not {now}; --resume runs the "
        "folder's cells (give the same --cell options, or none), or start a new results folder for other cells")


def test_a_hand_edited_filter_in_the_folder_is_said_in_one_line(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "spec.json").write_text(json.dumps({"name": "t", "cell_filter": "a0"}), encoding="utf-8")
    with pytest.raises(CampaignSpecError, match=r"spec.json: cell_filter is not a list of cell names"):
        load_for_run(LLM, out)


def test_the_cli_refuses_an_unknown_cell_before_any_lab_exit_2(tmp_path):
    res = CliRunner().invoke(app, ["campaign", "run", LLM, "--out", str(tmp_path / "o"), "--cell", "a3",
                                   "--no-progress", "--jobs", "1"])
    assert res.exit_code == 2
    assert "--cell 'a3': not a cell of campaign level-sweep-llm; did you mean" in " ".join(res.output.split())
    assert not (tmp_path / "o").exists()
    shown = CliRunner().invoke(app, ["campaign", "run", "--help"], env={"COLUMNS": "200"}).output
    assert "--cell" in shown and "run only this cell of FILE (repeatable" in " ".join(shown.split())
