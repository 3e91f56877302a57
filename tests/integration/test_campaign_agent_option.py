"""``ani campaign run --agent-option`` against the scripted model of ``tests/fake_model.py``
(issue 26, must-show 2): the shipped ``campaigns/level-sweep-llm.yaml`` pointed at another
endpoint and model from the command line, without editing it (in three of its cells, ``--cell``:
the reference a0, a3t where the model onboards, a4), and a copy of a shipped campaign placed in
another folder runs (its ``../scenarios/...`` found in the shipped data)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from chat_server import ChatServer
from fake_model import onboard_model
from procs import ani_cli, lab_gone

from ani.campaign.results import read_runs

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-agent-option"


def _env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}, "COLUMNS": "200", "OPENAI_API_KEY": KEY}


@pytest.fixture
def server():
    s = ChatServer(responder=onboard_model)
    yield s
    s.close()


@pytest.mark.timeout(1500)
def test_the_shipped_llm_level_sweep_runs_against_the_fake_model_by_options(lab_host, server, tmp_path):
    shipped = (ROOT / "campaigns" / "level-sweep-llm.yaml").read_bytes()
    # three cells in one round of labs (issue 28 §4: the 7 cells at --jobs 4 took 220 s at load):
    # the file's reference, the level the model onboards at, and the last level
    cells = ["--cell", "a3t", "--cell", "a0", "--cell", "a4"]
    out = tmp_path / "res"
    res, labs = ani_cli(["campaign", "run", "campaigns/level-sweep-llm.yaml", "--variants", "1", "--out", str(out),
                         "--no-progress", "--jobs", "3", *cells, "--agent-option", f"base_url={server.url}",
                         "--agent-option", "model=fake-qwen"], _env(), 1200)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert server.responder_errors == []
    assert (ROOT / "campaigns" / "level-sweep-llm.yaml").read_bytes() == shipped  # not edited
    assert len(labs) == 3 and all(lab_gone(lab) for lab in labs), labs
    assert {r["model"] for r in server.requests} == {"fake-qwen"}  # the option's model, at the option's endpoint
    recs = {r.cell: r for r in read_runs(out)}
    assert sorted(recs) == ["a0", "a3t", "a4"]  # the cells given, no other
    assert all(r.model == "fake-qwen" for r in recs.values())
    assert recs["a3t"].label == "clean_success", (recs["a3t"].infra_error_reason, recs["a3t"].agent_error)
    assert {r.label for c, r in recs.items() if c != "a3t"} == {"clean_failure"}  # it gives up there
    plans = [json.loads(x) for x in (out / "plan.jsonl").read_text().splitlines()]
    assert [p["run_id"] for p in plans] == ["a0-onboard-site-s1", "a3t-onboard-site-s1", "a4-onboard-site-s1"]
    plan = plans[0]
    assert (plan["agent"]["base_url"], plan["agent"]["model"], plan["agent"]["mode"]) == (server.url, "fake-qwen", "react")
    saved = json.loads((out / "spec.json").read_text())
    assert saved["agent"]["model"] == "Qwen/Qwen2.5-7B-Instruct"  # the file's block, and the override beside it
    assert saved["agent_override"] == {"agent": None, "options": {"base_url": server.url, "model": "fake-qwen"}}
    assert saved["cell_filter"] == ["a0", "a3t", "a4"]  # in the file's order; --resume runs these
    assert f"agent: --agent-option base_url='{server.url}', --agent-option model='fake-qwen' in every cell" in res.stdout


@pytest.mark.timeout(900)
def test_a_copy_of_a_shipped_campaign_in_another_folder_runs(lab_host, server, tmp_path):
    mine = tmp_path / "my-campaigns"
    mine.mkdir()
    shutil.copyfile(ROOT / "campaigns" / "models.yaml", mine / "models.yaml")  # scenario: ../scenarios/...
    out = tmp_path / "res"  # --jobs 2: its two cells side by side (issue 28 §4: --jobs 1 took 202 s at load)
    res, labs = ani_cli(["campaign", "run", str(mine / "models.yaml"), "--variants", "1", "--out", str(out),
                         "--no-progress", "--jobs", "2", "--agent-option", f"base_url={server.url}"], _env(), 600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert len(labs) == 2 and all(lab_gone(lab) for lab in labs), labs
    recs = {r.cell: r for r in read_runs(out)}
    assert {c: (r.model, r.label) for c, r in recs.items()} == {
        "qwen2.5-7b": ("Qwen/Qwen2.5-7B-Instruct", "clean_success"),
        "llama3.1-8b": ("meta-llama/Llama-3.1-8B-Instruct", "clean_success")}
    assert {r["model"] for r in server.requests} == {"Qwen/Qwen2.5-7B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"}
