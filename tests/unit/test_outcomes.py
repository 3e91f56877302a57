"""The measured outcomes (ani.campaign.outcomes) from trajectories, and the runner's record of
them; a budget that runs out is a stop reason, never an agent error (issue 14, case 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ani.agents.base import AgentRun, BudgetExceeded, StepCounter
from ani.campaign.metrics import compute_metrics
from ani.campaign.outcomes import double_applied, invalid_calls, is_invalid, locks_left, measure, partial
from ani.campaign.report import render_markdown, summarize
from ani.campaign.results import RunRecord
from ani.campaign.runner import RunnerDeps, run_one
from ani.campaign.spec import parse_spec
from ani.errors import ErrorCode
from ani.protocol import ToolResult
from ani.testing import FakeLab
from ani.trajectory import Trajectory


def call(tool: str, args: dict | None = None, *, ok: bool = True, changed: bool = False, code: str | None = None,
         **extra: Any) -> dict[str, Any]:
    return {"event": "tool_call", "tool": tool, "arguments": args or {}, "ok": ok, "changed": changed,
            "error_code": code, **extra}


# -- invalid calls ----------------------------------------------------------------------------


def test_invalid_calls_are_the_refusals_for_bad_arguments_and_unknown_names():
    events = [
        call("get_running_config", {"device": "R1"}, ok=False, code="unknown_device"),
        call("update_config", {"device": "r1"}, ok=False, code="invalid_arguments"),
        call("frobnicate", ok=False, code="unknown_tool"),
        call("execute_validation", {"device": "r1", "command": "show route-map X"}, ok=False, code="not_found"),
        call("rollback", {"device": "r1", "snapshot_id": "x"}, ok=False, code="unknown_snapshot"),
        call("plan", ok=False, code="invalid_intent", refusal="unknown-reference"),
        call("plan", ok=False, code="invalid_intent", refusal="schema"),
        # not invalid calls: a conflict with the network, a policy refusal, a device failure, success
        call("plan", ok=False, code="invalid_intent", refusal="seq-conflict"),
        call("update_config", ok=False, code="not_allowed"),
        call("update_config", ok=False, code="blocked"),
        call("update_config", ok=False, code="rolled_back"),
        call("get_running_config", {"device": "r1"}),
        {"event": "agent_action", "action": "null", "ok": False},
    ]
    assert invalid_calls(events) == 7
    assert [is_invalid(e) for e in events[:7]] == [True] * 7
    assert compute_metrics(events, "a1").invalid_calls == 7


def test_the_tool_call_event_keeps_the_intent_refusal_code():
    traj = Trajectory()
    res = ToolResult.failure(ErrorCode.INVALID_INTENT, "refused",
                             data={"errors": [{"code": "unknown-router", "message": "m", "path": "p"}]})
    ev = traj.log_call("plan", {"changes": []}, res)
    assert ev["refusal"] == "unknown-router" and is_invalid(ev)
    ok = traj.log_call("plan", {}, ToolResult.success("fine", {"errors": [{"code": "x"}]}))
    assert "refusal" not in ok  # only a refused call carries one


# -- double application -------------------------------------------------------------------------


def test_the_same_change_applied_twice_is_named_with_its_calls():
    add = {"device": "r1", "command": "nft add rule inet f fwd drop"}
    events = [
        call("shell", add, changed=True),
        call("shell", {"device": "r1", "command": "nft list ruleset"}),  # a read between
        call("shell", add, ok=False, code="timeout"),                    # the timed-out attempt
        call("shell", add, changed=True),
    ]
    got = double_applied(events)
    assert len(got) == 1 and got[0].endswith("applied twice (calls 1 and 4)") and "nft add rule" in got[0]


def test_an_idempotent_repeat_or_a_reapply_after_an_undo_is_not_double():
    cmds = {"device": "r1", "commands": ["ip route 192.0.2.0/24 Null0"]}
    assert double_applied([call("update_config", cmds, changed=True), call("update_config", cmds)]) == []
    undo = [call("update_config", cmds, changed=True),
            call("rollback", {"device": "r1", "snapshot_id": "r1-s1"}, changed=True),
            call("update_config", cmds, changed=True)]
    assert double_applied(undo) == []
    other = [call("update_config", cmds, changed=True), call("update_config", {**cmds, "device": "r2"}, changed=True)]
    assert double_applied(other) == []


# -- partial application ------------------------------------------------------------------------


def test_a_multi_device_call_that_applied_on_some_routers_only_is_partial():
    plain = call("commit", {"devices": ["e1", "e2"], "confirmed": False}, ok=False, code="command_failed", changed=True,
                 devices={"e1": {"ok": True, "changed": True, "cancelled": False},
                          "e2": {"ok": False, "changed": None, "cancelled": False}})
    cancelled = call("commit", {"devices": ["e1", "e2"]}, ok=False, code="command_failed",
                     devices={"e1": {"ok": True, "changed": False, "cancelled": True},
                              "e2": {"ok": False, "changed": None, "cancelled": False}})
    confirm = call("confirm_commit", {"devices": ["e1", "e2"]}, ok=False, code="command_failed",
                   devices={"e1": {"ok": True, "changed": False, "cancelled": False},
                            "e2": {"ok": False, "changed": None, "cancelled": False}})
    all_ok = call("commit", {"devices": ["e1", "e2"]}, changed=True,
                  devices={"e1": {"ok": True, "changed": True, "cancelled": False},
                           "e2": {"ok": True, "changed": True, "cancelled": False}})
    assert partial([plain, cancelled, confirm, all_ok]) == [
        "commit (call 1): applied on e1, failed on e2",
        "confirm_commit (call 3): applied on e1, failed on e2",
    ]


def test_a_rollback_that_failed_is_partial():
    events = [call("apply", ok=False, code="rollback_failed", changed=True, not_restored=["e2"]),
              call("update_config", {"device": "r1"}, ok=False, code="rollback_failed", changed=True),
              call("update_config", {"device": "r1"}, ok=False, code="rolled_back")]
    assert partial(events) == ["apply (call 1): the failed change could not be rolled back on e2",
                               "update_config on r1 (call 2): the failed change could not be rolled back"]


def test_the_tool_call_event_keeps_per_device_results():
    traj = Trajectory()
    res = ToolResult.failure(ErrorCode.COMMAND_FAILED, "e2 failed", changed=True,
                             data={"devices": {"e1": {"ok": True, "changed": True, "warnings": []},
                                               "e2": {"ok": False, "error": "boom"}}, "not_restored": ["e2"]})
    ev = traj.log_call("commit", {"devices": ["e1", "e2"]}, res)
    assert ev["devices"] == {"e1": {"ok": True, "changed": True, "cancelled": False},
                             "e2": {"ok": False, "changed": None, "cancelled": False}}
    assert ev["not_restored"] == ["e2"] and partial([ev]) == ["commit (call 1): applied on e1, failed on e2"]


# -- locks left ---------------------------------------------------------------------------------


def LockLab(held: dict[tuple[str, str], int]) -> FakeLab:  # noqa: N802
    """Routers r1, r2, r3 whose datastores NETCONF sessions lock: ``{(router, target): session}``."""
    lab = FakeLab({"name": "locks", "routers": {"r1": {}, "r2": {}, "r3": {}}})
    for (router, target), sid in held.items():
        lab.hold_lock(router, sid, target)
    return lab


class LockAdapter:
    def __init__(self, sessions: dict[str, str], in_flight: dict[str, str] | None = None) -> None:
        self.sessions, self.flight = sessions, in_flight or {}

    def netconf_session_ids(self) -> dict[str, str]:
        return self.sessions

    def calls_in_flight(self) -> dict[str, str]:
        return self.flight


def test_locks_left_are_the_agents_sessions_locks_only():
    lab = LockLab({("r1", "candidate"): 7, ("r2", "running"): 9, ("r3", "running"): 3})
    # r1: the agent's session 7 holds candidate; r2: session 9 is someone else's (a fault); r3: no session of ours
    adapter = LockAdapter({"r1": "7", "r2": "8"}, in_flight={"r1": "update_config"})
    assert locks_left(lab, adapter) == ["r1 candidate: NETCONF session 7 (the agent's session)",
                                        "call lock r1: update_config (still running)"]
    assert locks_left(lab, object()) == []  # an adapter without NETCONF sessions holds no NETCONF lock
    assert measure([], lab, LockAdapter({})).locks_left == []


# -- the runner: budget exhausted, invalid calls counted, not an agent error ------------------------


def FLab() -> FakeLab:  # noqa: N802
    """Router r1, its candidate datastore locked by NETCONF session 5 (the agent's)."""
    lab = FakeLab({"name": "one", "routers": {"r1": {}}}, running=False)
    lab.hold_lock("r1", 5, "candidate")
    return lab


class FObserver:
    def __init__(self, lab: Any) -> None:
        pass

    def evaluate(self, checks, bound_s=None):
        return [type("R", (), {"name": c, "passed": True, "detail": ""})() for c in checks]


class FScenario:
    hash = "h"
    invariants = ["baseline-ok"]


class FVariant:
    variant_id = "v0"
    hidden_tests = ["allowed"]

    def lab_topology(self, scenario):
        return {}

    def agent_view(self):
        return {"request": "allow a route from r1 to r2"}


class FAdapter:
    level = "a2"

    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory

    def open(self):
        pass

    def close(self):
        pass

    def tools(self):
        return []

    def netconf_session_ids(self):
        return {"r1": "5"}

    def call(self, name: str, arguments: dict) -> ToolResult:
        if arguments.get("device") != "r1":
            res = ToolResult.failure(ErrorCode.UNKNOWN_DEVICE, f"unknown device {arguments.get('device')!r}")
        else:
            res = ToolResult.success("ok")
        self.trajectory.log_call(name, arguments, res)
        return res


class RaisingAgent:
    """Lets BudgetExceeded out of run (a third-party agent on StepCounter)."""

    name = "raising"

    def run(self, task, adapter, budget):
        steps = StepCounter(adapter, budget)
        steps.call("lock", {"device": "R1"})
        while True:
            steps.call("get_config", {"device": "r1"})


class ReportingAgent:
    name = "reporting"

    def run(self, task, adapter, budget):
        steps = StepCounter(adapter, budget)
        try:
            steps.call("get_config", {"device": "R1"})
            steps.call("get_config", {"device": "r1"})
            steps.call("get_config", {"device": "r1"})
        except BudgetExceeded as exc:
            return AgentRun(stop_reason=exc.reason, steps=steps.steps)
        return AgentRun(stop_reason="submitted", steps=steps.steps, submitted=True)


@pytest.mark.parametrize("agent", [RaisingAgent(), ReportingAgent()], ids=["raises", "reports"])
def test_a_budget_that_runs_out_is_a_stop_reason_not_an_agent_error(tmp_path: Path, agent: Any):
    (tmp_path / "s.yaml").write_text("fake: true\n")
    spec = parse_spec({"name": "t", "scenario": "s.yaml", "task": "onboard-site", "variants": 1,
                       "budget": {"max_steps": 2}, "cells": [{"name": "a2", "level": "a2"}]}, "test", tmp_path)
    deps = RunnerDeps(make_lab=lambda topo: FLab(), load_scenario=lambda p: FScenario(),
                      get_task_class=lambda n: type("TC", (), {"variant": staticmethod(lambda s, seed: FVariant())}),
                      make_observer=FObserver, create_adapter=lambda lvl, lab, blocklist=False, trajectory=None: FAdapter(trajectory),
                      create_agent=lambda cfg: agent)
    rec = run_one(spec, "a2", 0, tmp_path / "out", deps)
    assert rec.stop_reason == "max_steps" and rec.budget_exhausted and rec.agent_error is None
    assert rec.label == "clean_success" and rec.invalid_calls == 1 and rec.process.invalid_calls == 1
    assert rec.process.completion_mode == "interaction_limit"
    assert rec.locks_left == ["r1 candidate: NETCONF session 5 (the agent's session)"]
    text = render_markdown(summarize([rec]))
    assert "| budget exhausted (max_steps) |" in text and "## Measured outcomes" in text
    assert f"- `{rec.run_id}` lock left: r1 candidate: NETCONF session 5" in text


def test_records_written_before_the_outcomes_read_as_none_seen():
    old = {"run_id": "x", "campaign": "c", "cell": "a1", "level": "a1", "task": "t", "seed": 0,
           "label": "clean_failure", "success": False, "damage_free": True,
           "started": "2026-01-01T00:00:00Z", "ended": "2026-01-01T00:00:01Z", "stop_reason": "wall_clock"}
    rec = RunRecord.model_validate(old)
    assert rec.invalid_calls == 0 and rec.double_applied == rec.partial == rec.locks_left == []
    assert rec.budget_exhausted
    assert not RunRecord.model_validate({**old, "stop_reason": "error"}).budget_exhausted
