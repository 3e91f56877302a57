"""``ani run`` goes the campaign's way (issue 24 §1: one coordinator for ``ani campaign run`` and
``ani run``): its one run is planned into ``plan.jsonl``, executed by the serial executor, and
stored by the sink in ``runs.jsonl``, so ``ani campaign rerun`` takes its folder; a folder that
already holds a run is refused before anything starts (before, its record was replaced).
Runner fakes of test_campaign_runner.py (no lab)."""

from __future__ import annotations

import pytest
from test_campaign_runner import Setup, World, spec  # noqa: F401 - spec: fixture

from ani.campaign.plan import read_plans
from ani.campaign.results import read_runs
from ani.campaign.single import run_single
from ani.errors import CampaignSpecError


def test_the_run_is_planned_then_stored_by_the_sink(spec, tmp_path):  # noqa: F811
    one = spec.model_copy(update={"cells": spec.cells[1:2], "variants": 1})
    seen: list = []
    rec = run_single(one, tmp_path / "out", deps=Setup(World(), {("a1", 1): "solve"}).deps(), on_event=seen.append)
    plans = read_plans(tmp_path / "out")
    assert [p.run_id for p in plans] == [rec.run_id] == [f"{one.cells[0].name}-onboard-site-s1"]
    assert plans[0].level == rec.level == one.cells[0].level
    assert [r.run_id for r in read_runs(tmp_path / "out")] == [rec.run_id]
    assert rec.label == "clean_success"
    assert any(ev.get("event") == "tool_call" for ev in seen)  # the events reach the display


def test_a_folder_holding_a_run_is_refused_and_kept(spec, tmp_path):  # noqa: F811
    one = spec.model_copy(update={"cells": spec.cells[1:2], "variants": 1})
    out = tmp_path / "out"
    run_single(one, out, deps=Setup(World(), {("a1", 1): "solve"}).deps())
    before = (out / "runs.jsonl").read_text()
    with pytest.raises(CampaignSpecError, match="already holds a run"):
        run_single(one, out, deps=Setup(World(), {("a1", 1): "solve"}).deps())
    assert (out / "runs.jsonl").read_text() == before
