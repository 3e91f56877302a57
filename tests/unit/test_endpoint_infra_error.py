"""A dead or misconfigured model endpoint is the infrastructure's fault, not the model's (issue 5,
new-user pass): the LLM agent's run that ends on an endpoint error before any model turn is an
``infra_error`` naming the cause (left out of the rates, rerun by --resume); after a turn it
stays a graded run with the cause in ``agent_error``; and one preflight check (GET /models) stops
a campaign or ``ani run`` on a refused connection or a rejected key before any lab starts.
Real ``openai`` client against tests/chat_server.py or a closed port on 127.0.0.1; the lab,
observer and adapter of the runner are the small fakes of test_campaign_runner.py."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from chat_server import call, reply, status
from test_campaign_runner import FakeAdapter, FakeObserver, FakeScenario, FakeVariant, World
from typer.testing import CliRunner

from ani.agents import AgentTask, Budget, create_agent
from ani.campaign.loop import run_campaign
from ani.campaign.results import INFRA
from ani.campaign.runner import RunnerDeps, preflight, run_one
from ani.campaign.spec import parse_spec
from ani.cli import app
from ani.errors import ConfigError

KEY_ENV = "ANI_TEST_INFRA_KEY"
KEY = "sk-infra-secret-5e1d"


@pytest.fixture(autouse=True)
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture
def dead_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def block(url: str, **extra) -> dict:
    return {"kind": "llm", "base_url": url, "model": "test-model", "api_key_env": KEY_ENV,
            "retry_backoff_s": 0, "max_retries": 1, **extra}


class Variant(FakeVariant):
    def agent_view(self):
        return AgentTask(task_class="onboard-site", variant_id=self.variant_id, request="onboard a site")


class Task:
    @staticmethod
    def variant(scenario, seed):
        return Variant(seed)


def spec_for(url: str, tmp_path: Path, **extra):
    (tmp_path / "x.yaml").write_text("fake: true\n")
    data = {"name": "c", "scenario": "x.yaml", "task": "onboard-site", "variants": 1, "seed": 1,
            "agent": block(url, **extra), "budget": {"max_steps": 5, "wall_clock_s": 60},
            "cells": [{"name": "a1", "level": "a1"}]}
    return parse_spec(data, "test", tmp_path)


def deps_for(world: World) -> RunnerDeps:
    from test_campaign_runner import FakeLab

    return RunnerDeps(
        make_lab=lambda topo: FakeLab(topo, world),
        load_scenario=lambda p: FakeScenario(),
        get_task_class=lambda n: Task,
        make_observer=FakeObserver,
        create_adapter=lambda level, lab, blocklist, trajectory: FakeAdapter(level, lab, blocklist, trajectory),
        create_agent=create_agent,
    )


def test_refused_before_any_turn_is_an_infra_error_naming_the_endpoint(tmp_path, dead_url):
    world = World()
    rec = run_one(spec_for(dead_url, tmp_path), "a1", 1, tmp_path, deps=deps_for(world))
    assert rec.label == INFRA and rec.success is None and not rec.valid
    assert rec.infra_error_reason == (f"agent: chat-completions endpoint: POST {dead_url}/chat/completions: "
                                      "connection refused (after 2 attempts)")
    assert rec.tests == []  # not graded: the agent never acted
    assert all(lab.downs == 1 and not lab.running for lab in world.labs)


def test_a_404_before_any_turn_is_an_infra_error_too(tmp_path, server):
    root = server.url[: -len("/v1")]
    rec = run_one(spec_for(root, tmp_path), "a1", 1, tmp_path, deps=deps_for(World()))
    assert rec.label == INFRA and "HTTP 404 (is base_url up to /v1?" in rec.infra_error_reason


def test_an_endpoint_error_after_a_turn_stays_a_graded_failure_with_the_cause(tmp_path, server):
    server.script = [reply(call("set", {"flag": "site"})), status(503), status(503)]
    rec = run_one(spec_for(server.url, tmp_path), "a1", 1, tmp_path, deps=deps_for(World()))
    assert rec.label == "clean_success" or rec.label == "clean_failure"
    assert rec.infra_error_reason is None and rec.tests  # graded
    assert rec.agent_error == (f"chat-completions endpoint: POST {server.url}/chat/completions: "
                               "HTTP 503: scripted 503 (after 2 attempts)")


def test_the_agent_reports_infra_error_only_before_a_turn(server, dead_url):
    class Adapter:
        level = "a1"
        trajectory = None

        def tools(self):
            return []

    task = AgentTask(task_class="t", variant_id="t-s1", request="r")
    run = create_agent(block(dead_url)).run(task, Adapter(), Budget())
    assert run.stop_reason == "error" and run.infra_error == run.error
    server.script = [reply(content="thinking"), status(503), status(503)]
    run = create_agent(block(server.url)).run(task, Adapter(), Budget())
    assert run.stop_reason == "error" and run.infra_error is None and "HTTP 503" in run.error


def test_preflight_refused_401_and_404(server, dead_url):
    with pytest.raises(ConfigError) as exc:
        create_agent(block(dead_url)).preflight()
    assert str(exc.value) == (f"agent.base_url {dead_url}: connection refused (GET {dead_url}/models); "
                              "no lab was started")
    server.models_entry = (401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})
    with pytest.raises(ConfigError) as exc:
        create_agent(block(server.url)).preflight()
    assert str(exc.value).startswith(f"agent.base_url {server.url}: HTTP 401 (check the API key in ${KEY_ENV})")
    assert KEY not in str(exc.value)
    assert server.gets[-1][1]["authorization"] == f"Bearer {KEY}"  # the key was sent
    server.models_entry = status(404)
    warnings = create_agent(block(server.url)).preflight()
    assert len(warnings) == 1 and "HTTP 404" in warnings[0] and "/v1" in warnings[0]
    server.models_entry = None
    assert create_agent(block(server.url)).preflight() == []


def test_a_campaign_on_a_dead_endpoint_stops_before_any_lab(tmp_path, dead_url):
    world = World()
    spec = spec_for(dead_url, tmp_path)
    with pytest.raises(ConfigError, match="connection refused"):
        run_campaign(spec, tmp_path / "out", deps=deps_for(world), progress=False)
    assert world.labs == [] and not (tmp_path / "out").exists()
    # agents without preflight skip it
    assert preflight(spec.model_copy(update={"agent": {"kind": "scripted"}}), RunnerDeps()) == []


def test_cli_campaign_and_run_exit_2_with_one_line(tmp_path, dead_url, monkeypatch):
    import ani.campaign.execute as execute_mod
    import ani.campaign.runner as runner

    started: list = []
    monkeypatch.setattr(execute_mod, "execute", lambda *a, **k: started.append(a))
    monkeypatch.setattr("ani.campaign.single.run_single", lambda *a, **k: started.append(a))
    camp = Path("campaigns/level-sweep-llm.yaml").read_text()
    import yaml

    data = yaml.safe_load(camp)
    data["agent"].update(base_url=dead_url, api_key_env=KEY_ENV)
    data["scenario"] = str(Path("scenarios/brownfield-small.yaml").resolve())
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(app, ["campaign", "run", str(f), "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and dead_url in lines[0] and "connection refused" in lines[0]
    res = CliRunner().invoke(app, ["run", "--agent-config", str(f), "--out", str(tmp_path / "r")])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and dead_url in lines[0] and "connection refused" in lines[0]
    assert started == []
    # refused before any run: neither command leaves a results folder behind (ani run made
    # its --out folder to check it is writable, and removes it again while it is empty)
    assert not (tmp_path / "o").exists() and not (tmp_path / "r").exists()
    (tmp_path / "kept").mkdir()
    res = CliRunner().invoke(app, ["run", "--agent-config", str(f), "--out", str(tmp_path / "kept")])
    assert res.exit_code == 2 and (tmp_path / "kept").is_dir()  # a folder the user made stays
