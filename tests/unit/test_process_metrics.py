"""Process metrics (NetConfArena) from real Trajectory objects of fake runs, into RunRecord and the report.

The tool calls go through a real :class:`BaseAdapter` subclass (argument validation, unknown
device and unknown tool handling, trajectory logging are the real ones) on a fake lab; the
agent-loop actions are logged with the helpers of :mod:`ani.campaign.metrics`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from rich.console import Console

from ani.adapters.base import Args, BaseAdapter, DeviceArgs, tool
from ani.campaign.metrics import (
    ACTION_KINDS,
    ProcessMetrics,
    compute_metrics,
    is_inverse,
    tool_kind,
)
from ani.campaign.report import render_markdown, summarize, summary_tables
from ani.campaign.results import RunRecord, RunStore, label_for, read_runs
from ani.campaign.runner import RunnerDeps, run_one
from ani.campaign.spec import parse_spec
from ani.errors import AgentError, ErrorCode
from ani.protocol import Level, ToolResult, ToolSpec
from ani.testing import FakeLab
from ani.testing.fake_campaign import flag, set_flag
from ani.trajectory import Trajectory, log_agent_action, log_agent_turn

# --- a small real adapter on a fake lab ----------------------------------------------------------


class UpdateArgs(Args):
    device: str
    commands: list[str]


class ValidationArgs(Args):
    device: str
    command: str


class MiniA1(BaseAdapter):
    """A1's tool names on a fake lab: a line containing 'bogus' is rejected like a router would."""

    level = Level.A1

    @tool(args=DeviceArgs, read_only=True, description="running config")
    def get_running_config(self, args: DeviceArgs) -> ToolResult:
        return ToolResult.success("Error: this text says error but the call succeeded")

    @tool(args=UpdateArgs, destructive=True, description="apply lines")
    def update_config(self, args: UpdateArgs) -> ToolResult:
        if any("bogus" in c for c in args.commands):
            # a rejection whose text does not contain the word "error"
            return ToolResult.failure(
                ErrorCode.COMMAND_FAILED, "% Unknown command", text="router said: % Unknown command"
            )
        return ToolResult.success("applied", changed=True)

    @tool(args=ValidationArgs, read_only=True, description="show commands")
    def execute_validation(self, args: ValidationArgs) -> ToolResult:
        return ToolResult.success("BGP neighbor is Established")


def fake_lab() -> SimpleNamespace:
    topo = SimpleNamespace(
        routers={"r1": None, "r2": None}, nodes=["r1", "r2"], links=[], is_router=lambda n: True
    )
    return SimpleNamespace(topology=topo)


BGP = ["router bgp 65001", "neighbor 10.0.0.2 remote-as 65002"]
NO_BGP = ["router bgp 65001", "no neighbor 10.0.0.2 remote-as 65002"]


def a1_trajectory(path=None) -> Trajectory:
    """A fake A1 run: 2 retrievals, 5 updates (1 rejected, 1 to an unknown device), 2
    validations, 1 unknown tool, a wait and a submit."""
    traj = Trajectory("a1-t-s1", "a1", path)
    a = MiniA1(fake_lab(), trajectory=traj)
    a.call("get_topology", {})
    a.call("get_running_config", {"device": "r1"})
    a.call("update_config", {"device": "r1", "commands": BGP})
    a.call("update_config", {"device": "r1", "commands": BGP})  # identical repeat
    a.call("update_config", {"device": "r1", "commands": NO_BGP})  # exact inverse of the one before
    a.call("execute_validation", {"device": "r1", "command": "show bgp summary"})
    a.call("execute_validation", {"device": "r1", "command": "show bgp summary"})  # identical repeat
    a.call("update_config", {"device": "r1", "commands": ["bogus line"]})  # rejected
    a.call("update_config", {"device": "r9", "commands": BGP})  # unknown device: rejected
    a.call("show_everything", {})  # not a tool of the level: a null action
    log_agent_action(traj, "wait", seconds=5)
    log_agent_action(traj, "submit")
    return traj


# --- one run's metrics ---------------------------------------------------------------------------


def test_a1_run_counts_kinds_errors_repeats_and_mode():
    traj = a1_trajectory()
    m = compute_metrics(traj.events, "a1", stop_reason="submitted", submitted=True, success=False)
    assert m.action_counts == {
        "retrieval": 2,
        "update": 5,
        "validation": 2,
        "wait": 1,
        "submit": 1,
        "null": 1,
    }
    assert m.actions == 12 and m.turns == 12  # no agent_turn events: one action per turn
    # the bogus line and the unknown device; the unknown tool is null, not an error; the
    # successful read whose text says "Error" is not an error
    assert m.error_actions == 2 and m.error_action_rate == pytest.approx(2 / 12)
    assert (m.repeat_identical, m.repeat_inverse) == (2, 1)
    assert m.repeat_action_rate == pytest.approx(3 / 12)
    assert m.share("update") == pytest.approx(5 / 12)
    assert m.completion_mode == "error_submission" and not m.submit_inferred
    assert (m.prompt_tokens, m.completion_tokens) == (None, None)
    assert sum(m.action_counts.values()) == m.actions


def test_the_same_file_read_back_gives_the_same_metrics(tmp_path):
    path = tmp_path / "t.jsonl"
    traj = a1_trajectory(path)
    traj.close()
    kw = {"stop_reason": "submitted", "success": True}
    assert compute_metrics(Trajectory.read(path), "a1", **kw) == compute_metrics(
        traj.events, "a1", **kw
    )
    assert compute_metrics(Trajectory.read(path), "a1", **kw).completion_mode == "correct_submission"


def test_case2_three_invalid_tool_call_turns_then_submit_is_an_error_submission():
    traj = Trajectory("llm", "a1")
    for turn in (1, 2, 3):
        log_agent_turn(traj, turn, prompt_tokens=100 * turn, completion_tokens=7)
        log_agent_action(traj, "null", reason="invalid tool-call JSON")
    log_agent_turn(traj, 4, prompt_tokens=450, completion_tokens=5)
    log_agent_action(traj, "submit")
    m = compute_metrics(traj.events, "a1", stop_reason="submitted", submitted=True, success=False)
    assert m.action_counts["null"] == 3 and m.action_counts["submit"] == 1 and m.actions == 4
    assert m.turns == 4 and m.error_actions == 0
    assert m.completion_mode == "error_submission"
    assert (m.prompt_tokens, m.completion_tokens) == (100 + 200 + 300 + 450, 7 * 3 + 5)
    assert m.describe() == (
        "4 turns; 4 actions (submit 1, null 3); 0 errors, 0 repeats; error_submission; tokens 1050/26"
    )


@pytest.mark.parametrize(
    "stop,submitted,success,calls,mode",
    [
        ("submitted", True, False, ["read"], "early_submission"),  # looked, never tried
        ("submitted", True, False, ["read", "update"], "error_submission"),
        ("submitted", True, True, ["read", "update"], "correct_submission"),
        ("max_steps", False, True, ["update"], "interaction_limit"),  # limit first, even if it passes
        ("wall_clock", False, False, [], "interaction_limit"),
        ("error", False, True, ["update"], "agent_error"),
        ("submitted", True, None, ["update"], None),  # never graded (infrastructure error)
    ],
)
def test_completion_modes(stop, submitted, success, calls, mode):
    traj = Trajectory("x", "a1")
    a = MiniA1(fake_lab(), trajectory=traj)
    for c in calls:
        if c == "read":
            a.call("get_running_config", {"device": "r2"})
        else:
            a.call("update_config", {"device": "r2", "commands": ["bogus"]})  # a rejected attempt
    m = compute_metrics(traj.events, "a1", stop_reason=stop, submitted=submitted, success=success)
    assert m.completion_mode == mode


def test_a_reported_submit_without_a_logged_one_is_counted_once():
    traj = Trajectory("x", "a1")
    MiniA1(fake_lab(), trajectory=traj).call("get_running_config", {"device": "r1"})
    m = compute_metrics(traj.events, "a1", stop_reason="submitted", submitted=True, success=True)
    assert m.submit_inferred and m.action_counts["submit"] == 1 and m.actions == 2
    log_agent_action(traj, "submit")
    m2 = compute_metrics(traj.events, "a1", stop_reason="submitted", submitted=True, success=True)
    assert not m2.submit_inferred and m2.action_counts["submit"] == 1 and m2.actions == 2


def test_agent_totals_are_used_only_without_turn_usage():
    traj = Trajectory("x", "a1")
    log_agent_action(traj, "submit")
    m = compute_metrics(traj.events, "a1", prompt_tokens=900, completion_tokens=40)
    assert (m.prompt_tokens, m.completion_tokens) == (900, 40)
    log_agent_turn(traj, 1, prompt_tokens=10, completion_tokens=2)
    m = compute_metrics(traj.events, "a1", prompt_tokens=900, completion_tokens=40)
    assert (m.prompt_tokens, m.completion_tokens) == (10, 2)


def test_a_refused_wait_is_an_error_action_and_a_null_never_is():
    traj = Trajectory("x", "a1")
    log_agent_action(traj, "wait", seconds=-1, ok=False)
    log_agent_action(traj, "wait", seconds=2, ok=True)
    log_agent_action(traj, "null", reason="unknown_tool", ok=False)
    m = compute_metrics(traj.events, "a1")
    assert m.action_counts["wait"] == 2 and m.action_counts["null"] == 1
    assert m.error_actions == 1


def test_an_unknown_agent_action_is_null_and_other_events_are_ignored():
    traj = Trajectory("x", "a1")
    traj.log("agent_message", text="thinking")
    traj.log("agent_action", action="dance")
    with pytest.raises(AgentError, match="wait, submit or null"):
        log_agent_action(traj, "update")
    m = compute_metrics(traj.events, "a1")
    assert m.actions == 1 and m.action_counts["null"] == 1


# --- kinds and inverses per level ----------------------------------------------------------------


@pytest.mark.parametrize(
    "level,tool,args,changed,kind",
    [
        ("a0", "shell", {"command": "vtysh -c 'show ip route' 2>&1"}, False, "validation"),
        ("a0", "shell", {"command": "ping -c 1 10.0.0.1"}, False, "validation"),
        ("a0", "shell", {"command": "vtysh -c 'show running-config'"}, False, "retrieval"),
        ("a0", "shell", {"command": "vtysh -c 'conf t' -c 'router bgp 1'"}, False, "update"),
        ("a0", "shell", {"command": "nft add element inet f s { 10.1.0.0/24 }"}, False, "update"),
        ("a0", "shell", {"command": "ip route add 10.9.0.0/24 via 10.0.0.2"}, False, "update"),
        ("a0", "shell", {"command": "ip -j addr"}, True, "retrieval"),
        ("a0", "shell", {"command": "vtysh -c 'show ip bgp' | grep '>'"}, False, "validation"),
        ("a0", "shell", {"command": "echo 1 >/proc/sys/net/ipv4/ip_forward"}, False, "update"),
        ("a0", "shell", {"command": "echo 'ip route 10.0.0.0/8 e1' >> /etc/frr/frr.conf"}, False, "update"),
        ("a0", "shell", {"command": "uname -a"}, False, "retrieval"),
        ("a0", "shell", {"command": "uname -a"}, True, "update"),  # measured change decides
        ("a1", "execute_validation", {}, None, "validation"),
        ("a1", "snapshot", {}, None, "update"),
        ("a2", "get_config", {}, None, "retrieval"),
        ("a2", "get_state", {}, None, "validation"),
        ("a2", "compare", {}, None, "validation"),
        ("a2", "lock", {}, None, "update"),
        ("a3t", "plan", {}, None, "validation"),
        ("a3t", "get_state", {"what": "bgp"}, None, "validation"),
        ("a3t", "get_state", {"what": "config"}, None, "retrieval"),
        ("a3r", "drift", {}, None, "validation"),
        ("a3r", "sot_read", {}, None, "retrieval"),
        ("a4", "sot_delete", {}, None, "update"),
        ("a4", "plan", {}, None, "validation"),
        ("a4", "apply", {}, None, "null"),  # A4 has no apply tool
        ("a1", "shell", {"command": "ls"}, None, "null"),  # an A0 tool named at A1
        ("a2", "wait", {}, None, "wait"),
    ],
)
def test_tool_kinds(level, tool, args, changed, kind):
    assert tool_kind(level, tool, args, changed=changed) == kind


def test_every_tool_of_the_builtin_adapters_has_a_kind_in_its_level_table():
    from ani.campaign.metrics import TOOL_KINDS
    from ani.registry import get_adapter_class

    for level in ("a0", "a1", "a2", "a3t", "a3r", "a4"):
        cls = get_adapter_class(level)
        names = {
            getattr(cls, a).__ani_tool__["name"]
            for a in dir(cls)
            if hasattr(getattr(cls, a, None), "__ani_tool__")
        }
        assert names == set(TOOL_KINDS[level]), level


def test_third_party_tools_use_the_toolspec_hints():
    tools = [ToolSpec(name="peek", description="", read_only=True), ToolSpec(name="poke", description="")]
    assert tool_kind("x9", "peek", tools=tools) == "retrieval"
    assert tool_kind("x9", "poke", tools=tools) == "update"
    assert tool_kind("x9", "prod", tools=tools) == "null"


def call(tool, ok=True, **arguments):
    return {"event": "tool_call", "tool": tool, "arguments": arguments, "ok": ok}


def test_inverses_the_levels_can_tell():
    assert is_inverse(call("update_config", device="r1", commands=BGP), call("update_config", device="r1", commands=NO_BGP))
    assert is_inverse(call("update_config", device="r1", commands=NO_BGP), call("update_config", device="r1", commands=BGP))
    assert not is_inverse(call("update_config", device="r1", commands=BGP), call("update_config", device="r2", commands=NO_BGP))
    assert not is_inverse(call("update_config", device="r1", commands=BGP), call("update_config", device="r1", commands=BGP))
    add = ["nft add element inet f tenant_blue { 10.1.0.0/24 }"]
    dele = ["nft delete element inet f tenant_blue { 10.1.0.0/24 }"]
    assert is_inverse(call("update_config", device="r1", commands=add), call("update_config", device="r1", commands=dele))
    # a refused first call undoes nothing
    assert not is_inverse(call("update_config", False, device="r1", commands=BGP), call("update_config", device="r1", commands=NO_BGP))
    # A2
    assert is_inverse(call("edit_config", device="r1", config="<frr/>"), call("discard_changes", device="r1"))
    assert not is_inverse(call("edit_config", device="r1", config="<frr/>"), call("discard_changes", device="r2"))
    assert is_inverse(call("commit", devices=["r1", "r2"]), call("cancel_commit", devices=["r2", "r1"]))
    assert not is_inverse(call("commit", devices=["r1", "r2"]), call("cancel_commit", devices=["r1"]))
    # A3-R / A4
    p = [{"op": "add", "path": "/a/1", "value": 1}, {"op": "move", "from": "/b", "path": "/c"}]
    inv = [{"op": "move", "from": "/c", "path": "/b"}, {"op": "remove", "path": "/a/1"}]
    assert is_inverse(call("sot_patch", path="devices/e1.json", patch=p), call("sot_patch", path="devices/e1.json", patch=inv))
    assert not is_inverse(call("sot_patch", path="devices/e1.json", patch=p), call("sot_patch", path="devices/e2.json", patch=inv))
    assert not is_inverse(call("sot_patch", path="d.json", patch=p), call("sot_patch", path="d.json", patch=list(reversed(inv))))
    rm_add = [{"op": "remove", "path": "/x"}]
    assert not is_inverse(call("sot_patch", path="d.json", patch=rm_add), call("sot_patch", path="d.json", patch=[{"op": "add", "path": "/x", "value": 0}]))
    assert is_inverse(call("sot_patch", path="d.json", patch=p), call("sot_discard"))
    # A3-T: the service ids come from the real intent models
    onboard = {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2"}
    remove = {"type": "tenant-site", "action": "remove", "tenant": "blue", "site": "nsite"}
    other = {"type": "tenant-site", "action": "remove", "tenant": "blue", "site": "other"}
    assert is_inverse(call("apply", changes=[onboard]), call("apply", changes=[remove]))
    assert not is_inverse(call("apply", changes=[onboard]), call("apply", changes=[other]))
    assert not is_inverse(call("apply", changes=[remove]), call("apply", changes=[onboard]))


# --- records and the report ----------------------------------------------------------------------

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def rec(cell: str, seed: int, success: bool, process: ProcessMetrics | None, agent_s=None) -> RunRecord:
    return RunRecord(
        run_id=f"{cell}-t-s{seed}",
        campaign="c",
        cell=cell,
        level=cell,
        task="t",
        seed=seed,
        label=label_for(success, True),
        success=success,
        damage_free=True,
        started=T0,
        ended=T0,
        process=process,
        agent_s=agent_s,
    )


def test_record_round_trips_and_old_lines_still_read(tmp_path):
    m = compute_metrics(a1_trajectory().events, "a1", stop_reason="submitted", success=False)
    store = RunStore(tmp_path)
    store.append(rec("a1", 1, False, m))
    old = rec("a1", 2, True, None).model_dump(mode="json")
    del old["process"]  # a line written before the metrics existed
    with (tmp_path / "runs.jsonl").open("a") as fh:
        fh.write(json.dumps(old) + "\n")
    r1, r2 = read_runs(tmp_path)
    assert r1.process == m and r1.process.repeat_actions == 3
    assert r2.process is None


def test_cell_process_is_pooled_and_rendered():
    m1 = compute_metrics(a1_trajectory().events, "a1", stop_reason="submitted", success=False)
    t2 = Trajectory("b", "a1")
    for turn in (1, 2):
        log_agent_turn(t2, turn, prompt_tokens=1000, completion_tokens=50)
    MiniA1(fake_lab(), trajectory=t2).call("get_running_config", {"device": "r1"})
    log_agent_action(t2, "submit")
    m2 = compute_metrics(t2.events, "a1", stop_reason="submitted", success=False)
    assert m2.completion_mode == "early_submission" and m2.turns == 2 and m2.actions == 2
    records = [
        rec("a1", 1, False, m1, agent_s=10.0),
        rec("a1", 2, False, m2, agent_s=20.0),
        rec("a1", 3, True, None, agent_s=99.0),  # no metrics: not in the process means
    ]
    (c,) = summarize(records, {"cells": [{"name": "a1", "level": "a1"}]}).cells
    p = c.process
    assert p.runs == 2 and p.actions == 14
    assert p.shares["retrieval"] == pytest.approx(3 / 14)  # pooled, not a mean of shares
    assert p.shares["submit"] == pytest.approx(2 / 14)
    assert sum(v for v in p.shares.values()) == pytest.approx(1.0)
    assert p.error_action_rate == pytest.approx(2 / 14)
    assert p.repeat_action_rate == pytest.approx(3 / 14)
    assert p.mean_turns == (12 + 2) / 2
    assert p.modes["error_submission"] == 1 and p.modes["early_submission"] == 1
    assert p.mean_prompt_tokens == 2000 and p.mean_completion_tokens == 100
    assert p.mean_agent_s == 15.0

    md = render_markdown(summarize(records, {"cells": [{"name": "a1", "level": "a1"}]}))
    assert "## Process metrics (NetConfArena; valid runs)" in md
    assert "| a1 | 2 | 14 | 7.0 | 21% | 36% | 14% | 7% | 14% | 7% | 14% | 21% |" in md
    assert "| a1 | 1 | 0 | 0 | 1 | 0 | 0 | 2000 | 100 | 15.0 |" in md
    assert "| a1-t-s1 | a1 | 1 | clean_failure | - | - | - | 0 | 0 | - | error_submission | 0.0 |" in md
    assert "| a1-t-s3 | a1 | 3 | clean_success | - | - | - | 0 | 0 | - | - | 0.0 |" in md

    console = Console(record=True, width=80)
    for t in summary_tables(summarize(records, {"cells": [{"name": "a1", "level": "a1"}]})):
        console.print(t)
    out = console.export_text()
    assert "21/36/14/7/14/7" in out and "1/0/0/1" in out and "2000/100" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_a_cell_without_metrics_renders_dashes():
    (c,) = summarize([rec("a0", 1, True, None)], {"cells": [{"name": "a0", "level": "a0"}]}).cells
    assert c.process.runs == 0 and c.process.shares == {k: None for k in ACTION_KINDS}
    md = render_markdown(summarize([rec("a0", 1, True, None)], {}))
    assert "| a0 | 0 | 0 | - | - | - | - | - | - | - | - | - |" in md


# --- through the runner ----------------------------------------------------------------------------


def _Lab(topology) -> FakeLab:  # noqa: N802 - the run's lab (ani.testing), made down as the runner wants it
    return FakeLab(running=False)


class _Observer:
    def __init__(self, lab):
        self.lab = lab

    def evaluate(self, checks, bound_s=None):
        return [SimpleNamespace(name=c, passed=flag(self.lab, "done") or c == "inv") for c in checks]


class _Variant:
    variant_id = "v1"
    hidden_tests = ["done"]

    def lab_topology(self, scenario):
        return {}

    def agent_view(self):
        return {}


class _Agent:
    name = "fake-llm"

    def run(self, task, adapter, budget):
        traj = adapter.trajectory
        log_agent_turn(traj, 1, prompt_tokens=300, completion_tokens=20)
        log_agent_action(traj, "null", reason="unknown tool name")
        log_agent_turn(traj, 2, prompt_tokens=400, completion_tokens=30)
        adapter.call("update_config", {"device": "r1", "commands": BGP})
        set_flag(adapter.lab, "done")
        log_agent_turn(traj, 3, prompt_tokens=500, completion_tokens=10)
        log_agent_action(traj, "submit")
        return SimpleNamespace(stop_reason="submitted", steps=1, submitted=True, error=None)


def test_run_one_records_the_process_metrics(tmp_path):
    (tmp_path / "s.yaml").write_text("x: 1\n")
    spec = parse_spec(
        {"name": "p", "scenario": "s.yaml", "task": "t", "variants": 1, "seed": 1,
         "cells": [{"name": "a1", "level": "a1"}]},
        "test",
        tmp_path,
    )
    deps = RunnerDeps(
        make_lab=_Lab,
        load_scenario=lambda path: SimpleNamespace(hash="h", invariants=["inv"]),
        get_task_class=lambda name: SimpleNamespace(variant=lambda scenario, seed: _Variant()),
        make_observer=_Observer,
        create_adapter=lambda level, lab, blocklist=False, trajectory=None: MiniA1(lab, trajectory=trajectory),
        create_agent=lambda cfg: _Agent(),
    )
    r = run_one(spec, "a1", 1, tmp_path / "out", deps=deps)
    assert r.label == "clean_success" and r.tool_calls == 1
    p = r.process
    assert p is not None and p.turns == 3 and p.actions == 3
    assert (p.action_counts["null"], p.action_counts["update"], p.action_counts["submit"]) == (1, 1, 1)
    assert p.completion_mode == "correct_submission" and not p.submit_inferred
    assert (p.prompt_tokens, p.completion_tokens) == (1200, 60)
    # the same metrics from the trajectory file the run left
    again = compute_metrics(
        Trajectory.read(r.trajectory), "a1", stop_reason="submitted", submitted=True, success=True
    )
    assert again == p


def test_ani_run_prints_the_process_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import ani.campaign.runner as runner_mod
    from ani.cli import app

    deps = RunnerDeps(
        make_lab=_Lab,
        load_scenario=lambda path: SimpleNamespace(hash="h", invariants=["inv"]),
        get_task_class=lambda name: SimpleNamespace(variant=lambda scenario, seed: _Variant()),
        make_observer=_Observer,
        create_adapter=lambda level, lab, blocklist=False, trajectory=None: MiniA1(lab, trajectory=trajectory),
        create_agent=lambda cfg: _Agent(),
    )
    monkeypatch.setattr(runner_mod, "RunnerDeps", lambda: deps)
    scen = tmp_path / "s.yaml"
    scen.write_text("x: 1\n")
    args = ["run", "--scenario", str(scen), "--seed", "1", "--level", "a1", "--out", str(tmp_path / "o")]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert (
        "process: 3 turns; 3 actions (update 1, submit 1, null 1); 0 errors, 0 repeats; "
        "correct_submission; tokens 1200/60"
    ) in res.output
    rec = json.loads((tmp_path / "o" / "run.json").read_text())
    assert rec["process"]["action_counts"]["null"] == 1


def test_describe_counts_errors_and_repeats_in_singular_and_plural():
    from ani.campaign.metrics import ProcessMetrics

    one = ProcessMetrics.model_validate({**compute_metrics([], "a1").model_dump(), "error_actions": 1, "repeat_identical": 1, "repeat_inverse": 1})
    assert "; 1 error, 2 repeats; " in one.describe()
    two = ProcessMetrics.model_validate({**compute_metrics([], "a1").model_dump(), "error_actions": 2, "repeat_identical": 1})
    assert "; 2 errors, 1 repeat; " in two.describe()
