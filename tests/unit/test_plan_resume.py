"""A results folder's plans on --resume (issue 24, outside check): a hand-edited plan, a run
planned twice, a scenario path leaving the folder or a scenario copy changed since planning is
refused with one line before anything runs; the lab prefix is the one given, else the folder's.
And the executor options that make no sense together are refused before the folder is made.
Real planning (scenario file, task class) of campaigns/level-sweep.yaml; no lab."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ani.campaign.loop import planned
from ani.campaign.plan import read_plans
from ani.campaign.runner import RunnerDeps
from ani.campaign.spec import load_spec
from ani.cli import app
from ani.errors import CampaignSpecError

CAMPAIGN = "campaigns/level-sweep.yaml"


@pytest.fixture
def folder(tmp_path) -> tuple[object, Path]:
    spec = load_spec(CAMPAIGN, variants=1)
    out = tmp_path / "out"
    out.mkdir()
    plans = planned(spec, RunnerDeps(), out)
    assert [p.run_id for p in read_plans(out)] == [p.run_id for p in plans] and len(plans) == 7
    assert {p.lab_prefix for p in plans} == {"level-sweep"}  # the campaign's name by default
    assert plans[0].scenario.file == "scenarios/brownfield-small.yaml" and (out / plans[0].scenario.file).is_file()
    return spec, out


def _edit(out: Path, i: int, **fields) -> None:
    lines = (out / "plan.jsonl").read_text().splitlines()
    data = json.loads(lines[i])
    for k, v in fields.items():
        data[k] = v
    lines[i] = json.dumps(data)
    (out / "plan.jsonl").write_text("\n".join(lines) + "\n")


def test_a_plan_edited_by_hand_is_refused_naming_the_run_and_fields(folder):
    spec, out = folder
    _edit(out, 6, level="a0", seed=99)
    with pytest.raises(CampaignSpecError, match=r"the plan of run a4-onboard-site-s1 differs .*\(level, seed\)"):
        planned(spec, RunnerDeps(), out)


def test_a_run_planned_twice_is_refused(folder):
    spec, out = folder
    _edit(out, 6, run_id="a3r-onboard-site-s1")
    with pytest.raises(CampaignSpecError, match="run a3r-onboard-site-s1 is planned twice"):
        planned(spec, RunnerDeps(), out)


def test_a_scenario_path_leaving_the_folder_is_not_a_plan(folder):
    spec, out = folder
    _edit(out, 2, scenario={"file": "../../../../etc/passwd"})
    with pytest.raises(CampaignSpecError, match=r"plan.jsonl:3: not a run plan \(scenario.file: .*no '\.\.'"):
        planned(spec, RunnerDeps(), out)


def test_a_scenario_copy_changed_since_planning_is_refused(folder):
    spec, out = folder
    copy = out / "scenarios" / "brownfield-small.yaml"
    copy.write_text(copy.read_text().replace("hostname c1", "hostname c1x", 1))
    with pytest.raises(CampaignSpecError, match="the scenario changed since the campaign was planned"):
        planned(spec, RunnerDeps(), out)


def test_the_lab_prefix_is_the_one_given_else_the_folders(folder):
    spec, out = folder
    assert {p.lab_prefix for p in planned(spec, RunnerDeps(), out, "mine")} == {"mine"}
    assert {p.lab_prefix for p in read_plans(out)} == {"mine"}  # written: the next --resume keeps it
    assert {p.lab_prefix for p in planned(spec, RunnerDeps(), out)} == {"mine"}


@pytest.mark.parametrize("args, says", [
    (["--scheduler", "local:2"], "--scheduler local:2: give --executor dask with it"),
    (["--executor", "dask", "--scheduler", "local:2", "--jobs", "2"], "--jobs is the local executor's"),
    (["--executor", "dask", "--scheduler", "local:9999"], "--scheduler local:9999: this machine holds about"),
    (["--lab-prefix", "bad prefix!"], "lab prefix 'bad prefix!'"),
])
def test_executor_options_that_cannot_work_exit_2_before_the_folder(tmp_path, args, says):
    out = tmp_path / "o"
    res = CliRunner().invoke(app, ["campaign", "run", CAMPAIGN, "--out", str(out), *args], env={"COLUMNS": "300"})
    assert res.exit_code == 2, res.output
    assert says in " ".join(res.output.split())
    assert not out.exists()
