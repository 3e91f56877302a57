"""A plug-in agent named by ``module:factory`` in a campaign file (issue 26 §1), on real FRR
labs: the module (examples/agents/survey_agent.py, copied beside the campaign file, off the
import path) is built in a campaign worker process from the plan, again by ``ani campaign
rerun`` and by ``--resume``; its budget is the campaign's (a call past max_steps is refused:
stop reason max_steps)."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from procs import ani_cli, lab_gone

from ani.campaign.results import read_runs

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KIND = "survey_agent:make_agent"

CAMPAIGN = f"""\
name: it-plugin
scenario: ../scenarios/brownfield-small.yaml   # as in a shipped campaign: found in the shipped data
task: onboard-site
variants: 1
factor: level
agent: {{kind: "{KIND}", looks: 3}}
budget: {{max_steps: 2, wall_clock_s: 120}}
cells:
  - {{name: a1, level: a1}}
"""


def _records(out: Path) -> dict[str, object]:
    return {r.cell: r for r in read_runs(out)}


@pytest.mark.timeout(900)
def test_a_plugin_agent_runs_in_a_worker_and_again_in_rerun_and_resume(lab_host, tmp_path):
    camp_dir = tmp_path / "my-campaign"
    camp_dir.mkdir()
    shutil.copyfile(ROOT / "examples" / "agents" / "survey_agent.py", camp_dir / "survey_agent.py")
    camp = camp_dir / "plugin.yaml"
    camp.write_text(CAMPAIGN, encoding="utf-8")
    out = tmp_path / "res"
    # --executor local --jobs 1: the run happens in a worker process, which has only the plan
    res, labs = ani_cli(["campaign", "run", str(camp), "--out", str(out), "--no-progress",
                         "--executor", "local", "--jobs", "1"], {"COLUMNS": "200", **_path_env()}, 600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(labs) == 1 and all(lab_gone(lab) for lab in labs), labs
    (plan,) = [json.loads(x) for x in (out / "plan.jsonl").read_text().splitlines()]
    assert plan["agent"] == {"kind": KIND, "looks": 3} and str(camp_dir) in plan["agent_folders"]
    r = _records(out)["a1"]  # the third look is past the budget: refused, the run stops there
    assert (r.steps, r.stop_reason, r.tool_calls, r.label) == (2, "max_steps", 2, "clean_failure"), (
        r.label, r.infra_error_reason, r.agent_error)

    # the rerun reads the folder, the resume rewrites it: the resume gets a copy, and the two
    # run side by side (issue 28 §4: each is a lab's run, one after the other they took twice)
    lost = tmp_path / "lost"
    shutil.copytree(out, lost)
    (lost / "runs.jsonl").write_text("")  # the run lost: --resume runs it again, from the file
    with ThreadPoolExecutor(2) as pool:
        rerun = pool.submit(ani_cli, ["campaign", "rerun", str(out), "a1-onboard-site-s1", "--out",
                                      str(tmp_path / "again")], {"COLUMNS": "200", **_path_env()}, 300)
        resume = pool.submit(ani_cli, ["campaign", "run", str(camp), "--resume", str(lost), "--no-progress",
                                       "--jobs", "1"], {"COLUMNS": "200", **_path_env()}, 300)
    res, labs = rerun.result()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "recorded: clean_failure: matches" in res.stdout
    assert _records(tmp_path / "again")["a1"].stop_reason == "max_steps"

    res, labs = resume.result()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(labs) == 1
    r = _records(lost)["a1"]
    assert (r.steps, r.stop_reason) == (2, "max_steps")


def _path_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
