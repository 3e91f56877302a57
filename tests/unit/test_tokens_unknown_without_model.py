"""Tokens of a run whose agent used no model are unknown (None), never 0/0 (issue 5 pass:
``make demo`` recorded ``tokens 0/0`` for the scripted agent while docs/campaigns.md says none).
Rendered ``-`` in summary.md and the terminal table; old records holding 0/0 read as unknown."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from types import SimpleNamespace

from rich.console import Console

from ani.adapters.base import Args, BaseAdapter, DeviceArgs, tool
from ani.agents.base import AgentRun, AgentTask
from ani.agents.scripted import ScriptedAgent
from ani.campaign.metrics import ProcessMetrics, compute_metrics
from ani.campaign.report import render_markdown, summarize, summary_tables
from ani.campaign.results import RunRecord, RunStore, label_for, read_runs
from ani.campaign.runner import RunnerDeps, run_one
from ani.campaign.spec import parse_spec
from ani.protocol import Level, ToolResult
from ani.testing import FakeLab
from ani.trajectory import Trajectory, log_agent_action, log_agent_turn

T0 = datetime(2026, 11, 30, tzinfo=UTC)


class Lines(Args):
    device: str
    commands: list[str]


class OneRouterA1(BaseAdapter):
    level = Level.A1

    @tool(args=DeviceArgs, read_only=True, description="running config")
    def get_running_config(self, args: DeviceArgs) -> ToolResult:
        return ToolResult.success("hostname " + args.device)

    @tool(args=Lines, destructive=True, description="apply lines")
    def update_config(self, args: Lines) -> ToolResult:
        return ToolResult.success("applied", changed=True)


def Lab(topology=None) -> FakeLab:  # noqa: N802 - the run's lab (ani.testing), made down as the runner wants it
    return FakeLab(running=False)


class Observer:
    def __init__(self, lab):
        self.lab = lab

    def evaluate(self, checks, bound_s=None):
        return [SimpleNamespace(name=c, passed=c == "inv") for c in checks]


class Variant:
    variant_id = "v1"
    hidden_tests = ["done"]

    def lab_topology(self, scenario):
        return {}

    def agent_view(self):
        site = "tenant: blue\nedge: r1\nsite: h1\nprefix: 10.9.0.0/24\ngateway: 10.9.0.1\n"
        return AgentTask(task_class="onboard-site", variant_id="v1", request="onboard", files={"site.yaml": site})


def _record(process: ProcessMetrics | dict | None, seed: int = 1) -> RunRecord:
    return RunRecord(run_id=f"a1-t-s{seed}", campaign="c", cell="a1", level="a1", task="t", seed=seed,
                     label=label_for(False, True), success=False, damage_free=True, started=T0, ended=T0,
                     process=process)


def test_agent_run_defaults_without_turns_give_unknown_tokens():
    run = AgentRun(stop_reason="submitted", submitted=True)  # what a scripted agent returns
    assert (run.prompt_tokens, run.completion_tokens) == (0, 0)
    traj = Trajectory("x", "a1")
    log_agent_action(traj, "submit")
    m = compute_metrics(traj.events, "a1", stop_reason="submitted", success=True,
                        prompt_tokens=run.prompt_tokens, completion_tokens=run.completion_tokens)
    assert (m.prompt_tokens, m.completion_tokens) == (None, None)
    assert "tokens" not in m.describe()


def test_an_agent_reporting_its_own_tokens_is_still_believed():
    m = compute_metrics([], "a1", stop_reason="submitted", prompt_tokens=900, completion_tokens=0)
    assert (m.prompt_tokens, m.completion_tokens) == (900, 0)
    traj = Trajectory("x", "a1")
    log_agent_turn(traj, 1, prompt_tokens=300, completion_tokens=12)
    m = compute_metrics(traj.events, "a1", prompt_tokens=0, completion_tokens=0)
    assert (m.prompt_tokens, m.completion_tokens) == (300, 12)


def test_the_real_scripted_agent_through_the_runner_records_unknown_tokens(tmp_path):
    (tmp_path / "s.yaml").write_text("x: 1\n")
    spec = parse_spec({"name": "tok", "scenario": "s.yaml", "task": "t", "variants": 1, "seed": 1,
                       "cells": [{"name": "a1", "level": "a1"}]}, "test", tmp_path)
    deps = RunnerDeps(
        make_lab=Lab,
        load_scenario=lambda path: SimpleNamespace(hash="h", invariants=["inv"]),
        get_task_class=lambda name: SimpleNamespace(variant=lambda scenario, seed: Variant()),
        make_observer=Observer,
        create_adapter=lambda level, lab, blocklist=False, trajectory=None: OneRouterA1(lab, trajectory=trajectory),
        create_agent=lambda cfg: ScriptedAgent(),
    )
    r = run_one(spec, "a1", 1, tmp_path, deps=deps)
    assert r.process is not None and r.process.actions >= 1, r.agent_error  # the script did act
    assert (r.process.prompt_tokens, r.process.completion_tokens) == (None, None)
    RunStore(tmp_path / "out").append(r)
    line = json.loads((tmp_path / "out" / "runs.jsonl").read_text().splitlines()[0])
    assert line["process"]["prompt_tokens"] is None and line["process"]["completion_tokens"] is None


def test_old_records_with_zero_tokens_read_and_render_as_unknown(tmp_path):
    old = _record(None).model_dump(mode="json")
    old["process"] = {"turns": 3, "actions": 3, "completion_mode": "error_submission",
                      "prompt_tokens": 0, "completion_tokens": 0}  # written by an older version
    (tmp_path / "runs.jsonl").write_text(json.dumps(old) + "\n")
    (r,) = read_runs(tmp_path)
    assert r.process is not None and r.process.turns == 3
    assert (r.process.prompt_tokens, r.process.completion_tokens) == (None, None)
    s = summarize([r], {"cells": [{"name": "a1", "level": "a1"}]})
    assert "| a1 | 0 | 0 | 0 | 1 | 0 | 0 | - | - | - |" in render_markdown(s)
    console = Console(record=True, width=80)
    for t in summary_tables(s):
        console.print(t)
    out = console.export_text()
    row = [ln for ln in out.splitlines() if ln.strip().startswith("a1 ") and "0/0/0/1" in ln]
    assert len(row) == 1 and row[0].split()[-1] == "-"  # tokens p/c


def test_a_model_cell_still_shows_its_tokens():
    m = ProcessMetrics(turns=2, actions=2, completion_mode="correct_submission", prompt_tokens=1000, completion_tokens=40)
    s = summarize([_record(m)], {"cells": [{"name": "a1", "level": "a1"}]})
    console = Console(record=True, width=80)
    for t in summary_tables(s):
        console.print(t)
    assert "1000/40" in console.export_text()
