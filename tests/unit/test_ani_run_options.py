"""``ani run``'s agent options (--agent-config, --agent, --agent-option, --max-tokens) through
the real command line (typer's runner on ``ani.cli.app``): the agent block that reaches the run,
and bad input refused with exit 2 and one line naming it, before anything is validated or started.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ani.campaign.agent_block import agent_block, parse_agent_option
from ani.cli import app
from ani.errors import ConfigError

LLM = "kind: llm\nbase_url: http://127.0.0.1:9/v1\nmodel: m\napi_key_env: null\n"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["run", *args])


def test_agent_block_from_a_file_kind_and_options(tmp_path, stop_before_lab):
    f = tmp_path / "agent.yaml"
    f.write_text(LLM + "mode: react\nseed: 1\n")
    res = run("--agent-config", str(f), "--agent-option", "mode=planner-executor",
              "--agent-option", "recovery=true", "--agent-option", "seed=3", "--agent-option",
              "seed=4", "--agent-option", 'model="7"', "--max-tokens", "5000", "--max-steps", "9")
    assert res.exit_code == 2 and "stopped before the lab (test)" in res.stderr
    spec = stop_before_lab[0]
    assert spec.agent == {"kind": "llm", "base_url": "http://127.0.0.1:9/v1", "model": "7",
                          "api_key_env": None, "mode": "planner-executor", "seed": 4,
                          "recovery": True}
    assert (spec.budget.max_tokens, spec.budget.max_steps) == (5000, 9)


def test_a_campaign_file_gives_its_agent_block_and_json_works(tmp_path, stop_before_lab):
    camp = tmp_path / "camp.yaml"
    camp.write_text("name: x\nscenario: s.yaml\ntask: t\nagent:\n" + "".join(f"  {ln}\n" for ln in LLM.splitlines()))
    run("--agent-config", str(camp))
    assert stop_before_lab[-1].agent["kind"] == "llm" and stop_before_lab[-1].agent["model"] == "m" and "name" not in stop_before_lab[-1].agent
    j = tmp_path / "agent.json"
    j.write_text(json.dumps({"kind": "llm", "base_url": "http://h/v1", "model": "j", "api_key_env": None}))
    run("--agent-config", str(j))
    assert stop_before_lab[-1].agent["model"] == "j" and stop_before_lab[-1].budget.max_tokens is None


def test_agent_alone_still_works(stop_before_lab):
    run("--agent", "scripted")
    run()
    assert [s.agent for s in stop_before_lab] == [{"kind": "scripted"}, {"kind": "scripted"}]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent-config", "{missing}"], "--agent-config {missing}: no such file"),
        (["--agent-config", "{bad_yaml}"], "--agent-config {bad_yaml}: not valid YAML/JSON at line 2: mapping values are not allowed here"),
        (["--agent-config", "{no_kind}"], "--agent-config {no_kind}: neither an agent block ({{kind: llm, ...}}) nor a campaign file with an agent: block"),
        (["--agent-config", "{llm}", "--agent-option", "mode"], "--agent-option 'mode': expected KEY=VALUE"),
        (["--agent-config", "{llm}", "--agent-option", "=x"], "--agent-option '=x': expected KEY=VALUE"),
        (["--agent-config", "{llm}", "--agent-option", "a.b=1"], "--agent-option 'a.b=1': 'a.b' is not an option name"),
        (["--agent-config", "{llm}", "--agent-option", "seed="], "--agent-option 'seed=': no value after '='"),
        (["--agent-config", "{llm}", "--agent-option", "seed=[1, 2]"], "agent.seed: Input should be a valid integer"),
        (["--agent-option", "mistakes={{rate: 2}}"], "agent.mistakes.rate: a number from 0 to 1 is required, got 2"),
        (["--agent-option", "mistakes={{rate: 1, kinds: [nope]}}"], "agent.mistakes.kinds: unknown mistake kind 'nope'"),
        (["--agent-option", "mistakes={{rate: 1"], "--agent-option 'mistakes={{rate: 1': the value is not YAML"),
        (["--agent-config", "{llm}", "--agent-option", "temprature=0.2"], "agent (--agent-config {llm}, --agent-option temprature=0.2): agent (kind llm): agent.temprature: unknown option"),
        (["--agent-config", "{llm}", "--agent-option", "seed=abc"], "agent.seed: Input should be a valid integer"),
        (["--agent-config", "{llm}", "--agent-option", "mode=tree"], "agent.mode: Input should be 'react', 'single-turn' or 'planner-executor'"),
        (["--agent-config", "{llm}", "--agent-option", "api_key_env=ANI_TEST_UNSET_H1"], "environment variable ANI_TEST_UNSET_H1 is not set"),
        (["--agent", "bogus"], "agent (--agent bogus): agent.kind: unknown agent kind 'bogus'; known: "),
        (["--agent-config", "{llm}", "--agent", "scripted"], "agent.api_key_env, agent.base_url, agent.model: unknown options for kind scripted; known: mistakes, validate_pause_s, validate_tries"),
    ],
)
def test_bad_agent_input_exits_2_with_one_line_before_anything_starts(tmp_path, stop_before_lab, monkeypatch, args, message):
    monkeypatch.delenv("ANI_TEST_UNSET_H1", raising=False)
    files = {"missing": tmp_path / "missing.yaml", "bad_yaml": tmp_path / "bad.yaml",
             "no_kind": tmp_path / "nokind.yaml", "llm": tmp_path / "llm.yaml"}
    files["bad_yaml"].write_text("kind: llm\nmodel: m: x\nseed: 1\n")
    files["no_kind"].write_text("base_url: http://h/v1\nmodel: m\n")
    files["llm"].write_text(LLM)
    names = {k: str(v) for k, v in files.items()}
    res = run(*[a.format(**names) for a in args])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert message.format(**names) in lines[0]
    assert stop_before_lab == []  # refused before the run was validated, so before any lab


def test_max_tokens_must_be_positive(stop_before_lab):
    res = run("--max-tokens", "0")
    assert res.exit_code == 2 and stop_before_lab == []


def test_parse_agent_option_values():
    assert parse_agent_option("mode=planner-executor") == ("mode", "planner-executor")
    assert parse_agent_option("temperature=0.7") == ("temperature", 0.7)
    assert parse_agent_option("api_key_env=null") == ("api_key_env", None)
    assert parse_agent_option("base_url=http://h:8000/v1") == ("base_url", "http://h:8000/v1")
    assert parse_agent_option("x=a=b") == ("x", "a=b")
    # a mapping or list, as the key takes in a file (the scripted agent's mistakes: issue 25)
    assert parse_agent_option("mistakes={rate: 1.0, kinds: [delete-recreate]}") == (
        "mistakes", {"rate": 1.0, "kinds": ["delete-recreate"]})
    assert parse_agent_option("x=[a, b]") == ("x", ["a", "b"])


def test_the_mistakes_of_the_scripted_agent_from_the_command_line(stop_before_lab):
    """``--agent-option 'mistakes={...}'`` gives the scripted agent its known error profile as
    a file does (before: refused, 'the value must be a scalar', so only a file could)."""
    res = run("--agent", "scripted", "--agent-option", "mistakes={rate: 1.0, kinds: [delete-recreate]}")
    assert "stopped before the lab (test)" in res.stderr  # it got past the agent's checks
    assert stop_before_lab[-1].agent == {"kind": "scripted", "mistakes": {"rate": 1.0, "kinds": ["delete-recreate"]}}


def test_agent_block_precedence(tmp_path):
    f = tmp_path / "a.yaml"
    f.write_text(LLM)
    assert agent_block(None, None, []) == {"kind": "scripted"}
    assert agent_block(f, None, ["kind=other"])["kind"] == "other"
    assert agent_block(f, "scripted", [])["kind"] == "scripted"
    assert agent_block(Path(f), None, ["model=x", "model=y"])["model"] == "y"


def test_a_missing_scenario_names_the_option(tmp_path, monkeypatch, stop_before_lab):
    # the option the user typed, not the field of the internal one-cell campaign
    monkeypatch.chdir(tmp_path)
    res = run("--scenario", "nope.yaml")
    assert res.exit_code == 2 and not stop_before_lab
    assert res.stderr.strip() == (
        f"error: --scenario: file 'nope.yaml' not found (looked in the current folder "
        f"{tmp_path.resolve()} and in the shipped data)"
    )


def test_reasoning_summary_option_reaches_the_spec(stop_before_lab):
    """--reasoning-summary: a YAML value (``off``, or a mapping) as the run's ``reasoning_summary``."""
    task = str(Path(__file__).parents[2] / "intents" / "netconfbench" / "static-backup.json")
    run("--task-file", task, "--reasoning-summary", "off")
    run("--task-file", task, "--reasoning-summary", "{model: small, max_tokens: 64}")
    run("--task-file", task)
    off, other, default = (s.reasoning_summary for s in stop_before_lab)
    assert off.enabled is False and (other.enabled, other.model, other.max_tokens) == (True, "small", 64)
    assert default is None
    bad = run("--task-file", task, "--reasoning-summary", "{modle: x}")
    assert bad.exit_code == 2 and "reasoning_summary.modle" in bad.stderr and len(stop_before_lab) == 3
    assert "--reasoning-summary: not YAML" in run("--reasoning-summary", "{x").stderr


# -- ani run --option KEY=VALUE: the adapter's options (a campaign cell's options:) ------------------


def test_adapter_options_reach_the_cell(stop_before_lab):
    res = run("--level", "a1", "--option", "apply_config_shape=netconfarena",
              "--option", "extra_tools=[check_device_status]", "--option", "command_timeout_s=5",
              "--option", "max_output_bytes=1000")
    assert res.exit_code == 2 and "stopped before the lab (test)" in res.stderr, res.output
    assert stop_before_lab[-1].cells[0].options == {"apply_config_shape": "netconfarena", "extra_tools": ["check_device_status"],
                                                    "command_timeout_s": 5, "max_output_bytes": 1000}
    res = run("--level", "a1", "--option", 'extra_tools=["batch_configure_devices"]', "--option",
              "extra_tools=[]")  # JSON values; a later option of one key wins
    assert stop_before_lab[-1].cells[0].options == {"extra_tools": []}
    run("--level", "a1")
    assert stop_before_lab[-1].cells[0].options == {}


@pytest.mark.parametrize("transport", ["auto", "local", "ssh"])
def test_every_a1_transport_passes_the_options_check_before_a_lab(stop_before_lab, transport):
    """The options are checked on no target (ani.campaign.runner.check_adapter_options): a
    transport is checked against the lab only once there is one (a new user's `ani run
    --option transport=ssh` was refused with "the target NoneType has no SSH endpoints")."""
    res = run("--level", "a1", "--option", f"transport={transport}")
    assert res.exit_code == 2 and "stopped before the lab (test)" in res.stderr, res.output
    assert stop_before_lab[-1].cells[0].options == {"transport": transport}
    bad = run("--level", "a1", "--option", "transport=telnet")
    assert bad.exit_code == 2 and "transport: Input should be 'auto', 'local' or 'ssh'" in " ".join(bad.stderr.split())


def test_a_transport_the_target_lacks_is_still_refused_when_there_is_one():
    from ani.adapters.a1 import A1Adapter
    from ani.errors import ConfigError

    class NoSsh:  # a target with vtysh here and no SSH endpoints
        def node_argv(self, node):  # noqa: ANN001, ANN202
            return ["true"]

    with pytest.raises(ConfigError, match="transport: 'ssh': the target NoSsh has no SSH endpoints"):
        A1Adapter(NoSsh(), options={"transport": "ssh"})
    assert A1Adapter(NoSsh(), options={"transport": "auto"}).transport == "local"


@pytest.mark.parametrize(("args", "message"), [
    (["--option", "colour=red"], "--option colour=red: a1 options: colour: unknown option (known: apply_config_shape, "
     "call_timeout_s, command_timeout_s, extra_tools, max_output_bytes, platform, rollback_timeout_s, transport)"),
    (["--option", "command_timeout_s=5", "--option", "extra_tools=[foo]"],
     "--option extra_tools=[foo]: a1 options: extra_tools.0: "),
    (["--option", "command_timeout_s=-1"], "--option command_timeout_s=-1: a1 options: command_timeout_s: "),
    (["--option", "apply_config_shape"], "--option 'apply_config_shape': expected KEY=VALUE, e.g. apply_config_shape=netconfarena"),
    (["--option", "extra_tools=[a"], "--option 'extra_tools=[a': the value is not YAML (or JSON) ("),
    (["--option", "x-y=1"], "--option 'x-y=1': 'x-y' is not an option name"),
    (["--level", "a2", "--option", "apply_config_shape=netconfarena"], "--option apply_config_shape=netconfarena: a2 options: "
     "apply_config_shape: unknown option (known: "),
])
def test_a_bad_adapter_option_exits_2_naming_it_before_anything_starts(stop_before_lab, args, message):
    res = run(*(args if "--level" in args else ["--level", "a1", *args]))
    assert res.exit_code == 2, res.output
    line = " ".join(res.stderr.split())
    assert line.startswith(f"error: {message}"), line
    assert not stop_before_lab  # refused before the spec is even checked
