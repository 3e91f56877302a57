"""``ani campaign run --agent-option / --agent-config`` (issue 26 §1): the agent of every cell
changed from the command line, parsed as ``ani run`` parses them, seen by the campaign's checks
(the matched budget among them) and recorded in the folder, so ``--resume`` runs the folder's
agent and refuses another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ani.campaign.agent_block import agent_override
from ani.campaign.loop import load_for_run, resumed_agent_override
from ani.campaign.spec import load_spec
from ani.cli import app
from ani.errors import CampaignSpecError, ConfigError
from ani.resources import data_path

LLM = "campaigns/level-sweep-llm.yaml"


def test_options_are_parsed_as_ani_run_parses_them():
    assert agent_override(None, ["base_url=http://127.0.0.1:9/v1", "seed=3", "seed=4", "api_key_env=null"]) == {
        "agent": None, "options": {"base_url": "http://127.0.0.1:9/v1", "seed": 4, "api_key_env": None}}
    assert agent_override(None, []) is None
    with pytest.raises(ConfigError, match=r"^--agent-option 'model': expected KEY=VALUE"):
        agent_override(None, ["model"])


def test_the_options_reach_every_cell_and_the_file_keeps_its_own_block():
    spec = load_spec(LLM, agent_override=agent_override(None, ["base_url=http://127.0.0.1:9/v1", "model=fake"]))
    assert spec.agent["model"] == "Qwen/Qwen2.5-7B-Instruct"
    for cell in spec.cells:
        agent = spec.agent_of(cell)
        assert (agent["kind"], agent["base_url"], agent["model"], agent["mode"]) == (
            "llm", "http://127.0.0.1:9/v1", "fake", "react")


def test_an_agent_config_replaces_the_block_and_options_go_over_it(tmp_path):
    block = tmp_path / "agent.yaml"
    block.write_text("kind: scripted\nvalidate_tries: 2\n", encoding="utf-8")
    spec = load_spec(LLM, agent_override=agent_override(block, ["validate_tries=5"]))
    assert {spec.agent_of(c)["validate_tries"] for c in spec.cells} == {5}
    assert spec.agent_of(spec.cells[0]) == {"kind": "scripted", "validate_tries": 5}


def test_the_options_go_over_a_cells_own_agent_setting_and_the_design_check_sees_it():
    with pytest.raises(CampaignSpecError) as exc:
        load_spec("campaigns/models.yaml", agent_override={"options": {"model": "one-model"}})
    assert "two cells have the same model (nothing varies between them)" in str(exc.value)


def test_a_campaign_file_cannot_write_the_override_itself(tmp_path):
    data = (data_path("campaigns/level-sweep.yaml").read_text(encoding="utf-8")
            + "agent_override: {options: {validate_tries: 2}}\n")
    f = tmp_path / "c.yaml"
    f.write_text(data.replace("../scenarios/", "scenarios/"), encoding="utf-8")
    with pytest.raises(CampaignSpecError, match=r"agent_override: not a key of a campaign file"):
        load_spec(f)


def _folder(tmp_path: Path, override: dict | None) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    saved = {"name": "x", "variants": 1, **({"agent_override": override} if override else {})}
    (out / "spec.json").write_text(json.dumps(saved), encoding="utf-8")
    return out


def test_resume_without_options_runs_the_folders_agent(tmp_path):
    saved = {"agent": None, "options": {"model": "fake"}}
    out = _folder(tmp_path, saved)
    assert resumed_agent_override(out, None) == saved
    spec = load_for_run(LLM, out)
    assert spec.variants == 1 and {spec.agent_of(c)["model"] for c in spec.cells} == {"fake"}


def test_resume_with_the_same_options_is_taken(tmp_path):
    out = _folder(tmp_path, {"agent": None, "options": {"model": "fake"}})
    assert resumed_agent_override(out, {"options": {"model": "fake"}}) == {"options": {"model": "fake"}}


@pytest.mark.parametrize(("saved", "was"), [
    ({"agent": None, "options": {"model": "fake"}}, "--agent-option model='fake'"),
    (None, "no --agent-config / --agent-option"),
])
def test_resume_with_other_options_is_refused_naming_both(tmp_path, saved, was):
    out = _folder(tmp_path, saved)
    with pytest.raises(CampaignSpecError) as exc:
        load_for_run(LLM, out, agent_override={"agent": None, "options": {"model": "other"}})
    assert str(exc.value) == (
        f"--resume {out}: this folder's campaign was started with {was}, not --agent-option model='other'; "
        "--resume runs the folder's agent (give the same agent options, or none), or start a new results "
        "folder for another agent")


def test_a_bad_option_is_refused_before_any_lab_naming_it(tmp_path):
    res = CliRunner().invoke(app, ["campaign", "run", "campaigns/level-sweep.yaml", "--out", str(tmp_path / "o"),
                                   "--agent-option", "bogus=1", "--no-progress", "--jobs", "1"])
    assert res.exit_code == 2
    assert "agent.bogus: unknown option for kind scripted" in res.output
    assert not (tmp_path / "o" / "runs.jsonl").exists()
