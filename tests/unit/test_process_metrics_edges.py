"""Adversarial pass over the process metrics and their report (issue 5 §3): runs with only null
actions, with no action, wait-only runs, infrastructure errors, records written before the metrics
existed (report and resume of an older results folder), and the exact inverse at each level with
the argument shapes of the real adapters.
"""

from __future__ import annotations

import json
import warnings
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from ani.adapters.base import Args, BaseAdapter, DeviceArgs, tool
from ani.campaign.loop import run_campaign
from ani.campaign.metrics import (
    ProcessMetrics,
    compute_metrics,
    is_inverse,
)
from ani.campaign.report import render_markdown, summarize
from ani.campaign.results import RunRecord, RunStore, label_for, read_runs
from ani.campaign.runner import RunnerDeps, run_one
from ani.campaign.spec import parse_spec
from ani.errors import ErrorCode
from ani.protocol import Level, ToolResult
from ani.testing import FakeLab
from ani.testing.fake_campaign import flag, set_flag
from ani.trajectory import Trajectory, log_agent_action, log_agent_turn

# --- a tiny real adapter and a fake world -------------------------------------------------------


class Lines(Args):
    device: str
    commands: list[str]


class TinyA1(BaseAdapter):
    """A1's names on a fake lab; ``update_config`` sets the lab's done flag (a bogus line:
    refused)."""

    level = Level.A1

    @tool(args=DeviceArgs, read_only=True, description="running config")
    def get_running_config(self, args: DeviceArgs) -> ToolResult:
        return ToolResult.success("hostname " + args.device)

    @tool(args=Lines, destructive=True, description="apply lines")
    def update_config(self, args: Lines) -> ToolResult:
        if any("bogus" in c for c in args.commands):
            return ToolResult.failure(ErrorCode.COMMAND_FAILED, "% Unknown command")
        set_flag(self.lab, "done")
        return ToolResult.success("applied", changed=True)


def Lab(topology=None) -> FakeLab:  # noqa: N802 - the run's lab (ani.testing), made down as the runner wants it
    return FakeLab(running=False)


class Observer:
    fail_grading = False

    def __init__(self, lab):
        self.lab = lab

    def evaluate(self, checks, bound_s=None):
        if Observer.fail_grading and "done" in checks:
            raise RuntimeError("observer lost the lab")
        done = flag(self.lab, "done")
        return [SimpleNamespace(name=c, passed=c == "inv" or done) for c in checks]


class Variant:
    variant_id = "v1"
    hidden_tests = ["done"]

    def lab_topology(self, scenario):
        return {}

    def agent_view(self):
        return {}


class Agent:
    """Runs ``script(trajectory, adapter)``; returns what ``result`` says."""

    name = "edge"

    def __init__(self, script, **result):
        self.script, self.result = script, result

    def run(self, task, adapter, budget):
        self.script(adapter.trajectory, adapter)
        return SimpleNamespace(**{"steps": 0, "error": None, **self.result})


def deps_for(agent, adapter_cls=TinyA1) -> RunnerDeps:
    return RunnerDeps(
        make_lab=Lab,
        load_scenario=lambda path: SimpleNamespace(hash="h", invariants=["inv"]),
        get_task_class=lambda name: SimpleNamespace(variant=lambda scenario, seed: Variant()),
        make_observer=Observer,
        create_adapter=lambda level, lab, blocklist=False, trajectory=None: adapter_cls(
            lab, trajectory=trajectory
        ),
        create_agent=lambda cfg: agent,
    )


@pytest.fixture
def spec(tmp_path):
    (tmp_path / "s.yaml").write_text("x: 1\n")
    return parse_spec(
        {"name": "edges", "scenario": "s.yaml", "task": "t", "variants": 1, "seed": 1,
         "cells": [{"name": "a1", "level": "a1"}]},
        "test",
        tmp_path,
    )


@pytest.fixture(autouse=True)
def _grading_ok():
    Observer.fail_grading = False
    yield
    Observer.fail_grading = False


# --- runs with nothing, or nothing but null actions / waits ---------------------------------------


def test_only_null_actions_until_the_step_limit(spec, tmp_path):
    def script(traj, adapter):
        for turn in (1, 2, 3):
            log_agent_turn(traj, turn, prompt_tokens=50, completion_tokens=5)
            log_agent_action(traj, "null", reason="invalid_json")

    agent = Agent(script, stop_reason="max_steps", submitted=False, steps=3)
    r = run_one(spec, "a1", 1, tmp_path, deps=deps_for(agent))
    p = r.process
    assert r.label == "clean_failure" and r.tool_calls == 0 and r.tool_errors == 0
    assert p.actions == 3 and p.action_counts["null"] == 3 and p.share("null") == 1.0
    assert p.turns == 3 and p.error_actions == 0 and p.repeat_actions == 0
    assert p.completion_mode == "interaction_limit"
    assert (p.prompt_tokens, p.completion_tokens) == (150, 15)


def test_only_null_actions_then_submit_is_an_error_submission_not_early(spec, tmp_path):
    def script(traj, adapter):
        log_agent_action(traj, "null", reason="no_tool_call")
        log_agent_action(traj, "submit")

    agent = Agent(script, stop_reason="submitted", submitted=True)
    p = run_one(spec, "a1", 1, tmp_path, deps=deps_for(agent)).process
    assert p.completion_mode == "error_submission" and p.turns == 2 and p.actions == 2


def test_a_run_without_any_action(spec, tmp_path):
    agent = Agent(lambda traj, adapter: None, stop_reason="error", submitted=False,
                  error="chat-completions endpoint: APIConnectionError", prompt_tokens=0,
                  completion_tokens=0)
    r = run_one(spec, "a1", 1, tmp_path, deps=deps_for(agent))
    p = r.process
    assert r.label == "clean_failure" and r.agent_error.startswith("chat-completions endpoint")
    assert (p.turns, p.actions) == (0, 0)
    assert p.share("null") is None and p.error_action_rate is None and p.repeat_action_rate is None
    assert p.completion_mode == "agent_error"
    assert (p.prompt_tokens, p.completion_tokens) == (None, None)  # no model turn: unknown
    assert p.describe() == "0 turns; 0 actions (none); 0 errors, 0 repeats; agent_error"
    (c,) = summarize([r], {"cells": [{"name": "a1", "level": "a1"}]}).cells
    assert c.process.runs == 1 and c.process.actions == 0
    assert all(v is None for v in c.process.shares.values())
    md = render_markdown(summarize([r], {"cells": [{"name": "a1", "level": "a1"}]}))
    assert "| a1 | 1 | 0 | 0.0 | - | - | - | - | - | - | - | - |" in md
    assert "| a1 | 0 | 0 | 0 | 0 | 1 | 0 | - | - |" in md


def test_a_silent_return_is_no_submission(spec, tmp_path):
    agent = Agent(lambda traj, adapter: None, stop_reason=None, submitted=False)
    p = run_one(spec, "a1", 1, tmp_path, deps=deps_for(agent)).process
    assert p.completion_mode == "no_submission" and p.actions == 0


@pytest.mark.parametrize(
    "stop,submitted,mode",
    [("submitted", True, "early_submission"), ("max_steps", False, "interaction_limit"),
     ("wall_clock", False, "interaction_limit")],
)
def test_wait_only_runs(spec, tmp_path, stop, submitted, mode):
    def script(traj, adapter):
        for _ in range(3):
            log_agent_action(traj, "wait", seconds=5, waited_s=5.0, ok=True)
        if submitted:
            log_agent_action(traj, "submit")

    agent = Agent(script, stop_reason=stop, submitted=submitted)
    p = run_one(spec, "a1", 1, tmp_path, deps=deps_for(agent)).process
    assert p.action_counts["wait"] == 3 and p.action_counts["submit"] == int(submitted)
    assert p.completion_mode == mode
    assert p.repeat_actions == 0  # waiting again is not repeating a config or validation action
    assert p.error_actions == 0


def test_identical_validations_with_a_wait_between_are_not_repeats():
    traj = Trajectory("x", "a1")
    ev = {"device": "r1", "command": "show bgp summary"}
    traj.log("tool_call", tool="execute_validation", arguments=ev, ok=True)
    log_agent_action(traj, "wait", seconds=2, ok=True)
    traj.log("tool_call", tool="execute_validation", arguments=ev, ok=True)
    traj.log("tool_call", tool="execute_validation", arguments=ev, ok=True)
    assert compute_metrics(traj.events, "a1").repeat_identical == 1


# --- infrastructure errors ----------------------------------------------------------------------


class BrokenOpen(TinyA1):
    def open(self):
        raise ConnectionRefusedError("NETCONF port closed")


def test_an_adapter_that_cannot_open_has_no_process_metrics(spec, tmp_path):
    agent = Agent(lambda traj, adapter: pytest.fail("the agent must not run"),
                  stop_reason="submitted")
    r = run_one(spec, "a1", 1, tmp_path, deps=deps_for(agent, BrokenOpen))
    assert r.label == "infra_error" and r.infra_error_reason.startswith("adapter open")
    assert r.process is None  # the agent never got an interface: no turns, no completion mode


def test_an_ungraded_run_keeps_its_actions_but_no_graded_mode(spec, tmp_path):
    def script(traj, adapter):
        adapter.call("update_config", {"device": "r1", "commands": ["ip route 10.0.0.0/8 Null0"]})
        log_agent_action(traj, "submit")

    Observer.fail_grading = True
    agent = Agent(script, stop_reason="submitted", submitted=True)
    r = run_one(spec, "a1", 1, tmp_path, deps=deps_for(agent))
    assert r.label == "infra_error" and r.infra_error_reason.startswith("grading")
    assert r.process.action_counts["update"] == 1 and r.process.completion_mode is None
    # infrastructure errors stay out of the cell's process metrics
    (c,) = summarize([r], {"cells": [{"name": "a1", "level": "a1"}]}).cells
    assert c.process.runs == 0 and c.process.mean_turns is None


# --- records written before the metrics, or by an older version of them -------------------------

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def rec(seed: int, success: bool, process: ProcessMetrics | None) -> RunRecord:
    return RunRecord(
        run_id=f"a1-t-s{seed}", campaign="edges", cell="a1", level="a1", task="t", seed=seed,
        label=label_for(success, True), success=success, damage_free=True, started=T0, ended=T0,
        process=process,
    )


def test_a_record_whose_process_no_longer_validates_keeps_its_verdict(tmp_path):
    line = rec(1, True, None).model_dump(mode="json")
    line["process"] = {"turns": 3, "actions": 3, "completion_mode": "gave_up"}  # an unknown mode
    (tmp_path / "runs.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.warns(
        UserWarning, match="run a1-t-s1: process metrics unreadable.*completion_mode"
    ):
        (r,) = read_runs(tmp_path)
    assert r.label == "clean_success" and r.success is True and r.process is None


def test_report_and_resume_of_an_older_results_folder(spec, tmp_path):
    """A folder whose runs.jsonl predates the metrics: the report renders dashes for them, and
    --resume skips those runs and runs only the new seed (whose metrics are recorded)."""
    out = tmp_path / "old"
    out.mkdir()
    old = rec(1, True, None).model_dump(mode="json")
    del old["process"]
    old["campaign"] = spec.name
    (out / "runs.jsonl").write_text(json.dumps(old) + "\n")
    (out / "spec.json").write_text(spec.model_dump_json())
    md = render_markdown(summarize(read_runs(out), json.loads(spec.model_dump_json())))
    assert "| a1 | 0 | 0 | - | - | - | - | - | - | - | - | - |" in md
    assert "| a1-t-s1 | a1 | 1 | clean_success | - | - | - | 0 | 0 | - | - | 0.0 |" in md

    def script(traj, adapter):
        adapter.call("update_config", {"device": "r1", "commands": ["ip route 10.0.0.0/8 Null0"]})
        log_agent_action(traj, "submit")

    grown = spec.model_copy(update={"variants": 2})
    agent = Agent(script, stop_reason="submitted", submitted=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an older line is read without a warning
        res = run_campaign(grown, out, resume=True, progress=False, deps=deps_for(agent))
    assert res.skipped == ["a1-t-s1"] and [r.run_id for r in res.ran] == ["a1-t-s2"]
    by_id = {r.run_id: r for r in read_runs(out)}
    assert by_id["a1-t-s1"].process is None
    assert by_id["a1-t-s2"].process.completion_mode == "correct_submission"
    md = (out / "summary.md").read_text()
    # the cell's process metrics come from the one run that has them
    assert "| a1 | 1 | 2 | 2.0 | 0% | 50% | 0% | 0% | 50% | 0% | 0% | 0% |" in md


# --- the exact inverse at each level, with the real adapters' argument shapes --------------------


def tc(tool, ok=True, summary="", **arguments):
    return {"event": "tool_call", "tool": tool, "arguments": arguments, "ok": ok,
            "summary": summary}


def test_argument_names_the_inverse_rules_read_are_the_real_adapters():
    """is_inverse reads these argument names; a rename in an adapter would silently stop it."""
    from ani.registry import get_adapter_class

    want = {
        "a1": {"update_config": {"device", "commands"}},
        "a2": {"edit_config": {"device"}, "discard_changes": {"device"}, "commit": {"devices"},
               "cancel_commit": {"devices"}},
        "a3t": {"apply": {"changes"}},
        "a3r": {"sot_patch": {"path", "patch"}, "sot_revert": {"revision"}},
        "a4": {"sot_patch": {"path", "patch"}, "sot_delete": {"path"}, "sot_revert": {"revision"}},
    }
    for level, tools in want.items():
        cls = get_adapter_class(level)
        specs = {
            getattr(cls, a).__ani_tool__["name"]: getattr(cls, a).__ani_tool__
            for a in dir(cls)
            if hasattr(getattr(cls, a, None), "__ani_tool__")
        }
        for name, fields in tools.items():
            props = set(specs[name]["args"].model_json_schema().get("properties", {}))
            assert fields <= props, (level, name, props)


def test_a0_shell_is_never_an_inverse():
    assert not is_inverse(tc("shell", device="r1", command="ip route add 10.9.0.0/24 dev lo"),
                          tc("shell", device="r1", command="ip route del 10.9.0.0/24 dev lo"))


def test_a2_commit_then_cancel_commit_of_the_same_devices():
    assert is_inverse(tc("commit", devices=["e1", "e2"], confirmed=True, confirm_timeout_s=120),
                      tc("cancel_commit", devices=["e2", "e1"]))
    assert not is_inverse(tc("commit", devices=["e1"]), tc("cancel_commit", False, devices=["e1"]))


def test_json_patch_test_operations_do_not_hide_an_inverse():
    add = [{"op": "test", "path": "/asn", "value": 65001},
           {"op": "add", "path": "/static_routes/-", "value": {"prefix": "10.9.0.0/24"}}]
    # the '-' index appends; its inverse removes the element it became, which is unknown here
    assert not is_inverse(tc("sot_patch", path="devices/e1.json", patch=add),
                          tc("sot_patch", path="devices/e1.json",
                             patch=[{"op": "remove", "path": "/static_routes/-"}]))
    add2 = [{"op": "test", "path": "/asn", "value": 65001},
            {"op": "add", "path": "/vrfs/blue", "value": {}}]
    rm2 = [{"op": "remove", "path": "/vrfs/blue"}]
    assert is_inverse(tc("sot_patch", path="devices/e1.json", patch=add2),
                      tc("sot_patch", path="devices/e1.json", patch=rm2))
    only_test = [{"op": "test", "path": "/asn", "value": 65001}]
    assert not is_inverse(tc("sot_patch", path="devices/e1.json", patch=only_test),
                          tc("sot_patch", path="devices/e1.json", patch=only_test))


SHA = "3f9c2a1b7d0e4c5f8a6b9d2e1c0f3a4b5c6d7e8f"


def test_a3r_commit_then_revert_of_that_commit():
    commit = tc("sot_commit", summary=f"committed {SHA}; reconcile converged", message="add route")
    assert is_inverse(commit, tc("sot_revert", revision="HEAD"))
    assert is_inverse(commit, tc("sot_revert", revision=SHA[:12]))
    assert is_inverse(commit, tc("sot_revert", revision=SHA))
    assert not is_inverse(commit, tc("sot_revert", revision="HEAD~1"))
    assert not is_inverse(commit, tc("sot_revert", revision="0000aaaa"))
    assert not is_inverse(commit, tc("sot_revert", revision=SHA[:3]))  # too short to name it
    assert not is_inverse(tc("sot_commit", False, summary="", message="x"),
                          tc("sot_revert", revision="HEAD"))


def test_a4_creating_a_service_file_then_deleting_it():
    route = {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24",
             "next_hop": "Null0"}
    ops = [{"op": "add", "path": f"/{k}", "value": v} for k, v in route.items()]
    path = "services/discard-192.0.2.0.json"
    assert is_inverse(tc("sot_patch", path=path, patch=ops, base_revision=SHA),
                      tc("sot_delete", path=path, base_revision=SHA))
    whole = [{"op": "add", "path": "", "value": route}]
    assert is_inverse(tc("sot_patch", path=path, patch=whole), tc("sot_delete", path=path))
    assert not is_inverse(tc("sot_patch", path=path, patch=ops),
                          tc("sot_delete", path="services/other.json"))
    # editing one field of an existing service, then deleting the file, is not undoing the edit
    edit = [{"op": "replace", "path": "/next_hop", "value": "10.0.0.1"}]
    assert not is_inverse(tc("sot_patch", path=path, patch=edit), tc("sot_delete", path=path))


def test_inverse_pairs_count_in_a_run():
    traj = Trajectory("x", "a4")
    route = {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24",
             "next_hop": "Null0"}
    path = "services/r.json"
    traj.log("tool_call", tool="sot_patch", ok=True, summary="",
             arguments={"path": path, "patch": [{"op": "add", "path": "", "value": route}]})
    traj.log("tool_call", tool="sot_delete", ok=True, summary="", arguments={"path": path})
    traj.log("tool_call", tool="sot_commit", ok=True, summary=f"committed {SHA}",
             arguments={"message": "m"})
    traj.log("tool_call", tool="sot_revert", ok=True, summary="reverted",
             arguments={"revision": "HEAD"})
    m = compute_metrics(traj.events, "a4")
    assert m.repeat_inverse == 2 and m.action_counts["update"] == 4


def test_a_run_with_no_logged_action_that_reports_submitted(tmp_path):
    m = compute_metrics([], "a1", stop_reason="submitted", success=True)
    store = RunStore(tmp_path)
    store.append(rec(1, True, m))
    (r,) = read_runs(tmp_path)
    assert r.process == m and r.process.submit_inferred
    assert r.process.completion_mode == "correct_submission"


def test_turns_without_usage_give_unknown_tokens_not_zero():
    traj = Trajectory("x", "a1")
    log_agent_turn(traj, 1)  # the endpoint sent no usage
    log_agent_action(traj, "submit")
    m = compute_metrics(traj.events, "a1", prompt_tokens=0, completion_tokens=0)
    assert (m.prompt_tokens, m.completion_tokens) == (None, None)
    assert m.describe() == "1 turn; 1 action (submit 1); 0 errors, 0 repeats; no completion mode"
    # an agent that counts its own tokens (and logs turns without them) is believed
    m = compute_metrics(traj.events, "a1", prompt_tokens=700, completion_tokens=30)
    assert (m.prompt_tokens, m.completion_tokens) == (700, 30)
    # usage on some turns: the known usage is summed
    log_agent_turn(traj, 2, prompt_tokens=120, completion_tokens=8)
    m = compute_metrics(traj.events, "a1", prompt_tokens=0, completion_tokens=0)
    assert (m.prompt_tokens, m.completion_tokens) == (120, 8)


def test_resume_of_a_folder_written_before_newer_spec_fields(spec, tmp_path):
    """spec.json of an older version lacks fields added since (with their defaults): not a
    difference; a real difference is still refused, naming the field."""
    from ani.campaign.loop import check_resume
    from ani.errors import CampaignSpecError

    out = tmp_path / "old"
    out.mkdir()
    saved = json.loads(spec.model_dump_json())
    for key in ("observer_bound_s", "factor", "agent"):
        del saved[key]
    del saved["budget"]["max_tokens"]
    for cell in saved["cells"]:
        del cell["blocklist"]
    (out / "spec.json").write_text(json.dumps(saved))
    check_resume(spec, out)  # no error
    saved["budget"]["max_steps"] = 7
    (out / "spec.json").write_text(json.dumps(saved))
    with pytest.raises(CampaignSpecError, match="differs .* in: budget"):
        check_resume(spec, out)


@pytest.mark.parametrize(
    "level,calls,mode",
    [
        ("a1", [("snapshot", {"device": "r1"})], "early_submission"),
        ("a2", [("lock", {"device": "r1"}), ("get_config", {"device": "r1"}),
                ("unlock", {"device": "r1"})], "early_submission"),
        ("a2", [("lock", {"device": "r1"}), ("edit_config", {"device": "r1", "config": "<x/>"})],
         "error_submission"),
        ("a1", [("snapshot", {"device": "r1"}), ("rollback", {"device": "r1", "snapshot_id": "s"})],
         "error_submission"),
    ],
)
def test_a_snapshot_or_a_lock_is_not_an_attempt_at_the_change(level, calls, mode):
    traj = Trajectory("x", level)
    for tool_name, args in calls:
        traj.log("tool_call", tool=tool_name, arguments=args, ok=True, changed=False)
    log_agent_action(traj, "submit")
    m = compute_metrics(traj.events, level, stop_reason="submitted", submitted=True, success=False)
    assert m.completion_mode == mode
    # the kind (and so the shares) is unchanged: a lock is still an update-kind action
    assert m.action_counts["update"] == sum(
        1 for t, _ in calls if t in ("snapshot", "lock", "unlock", "edit_config", "rollback")
    )


def test_a3r_commit_then_revert_read_from_the_real_adapters_events(tmp_path, monkeypatch):
    """The sot_commit -> sot_revert rule reads the commit's summary: checked on the real A3-R
    adapter (its repository and tools; fake routers read and written in memory)."""
    import ani.device.apply as device_apply
    from ani.adapters.a3r import A3RAdapter
    from ani.device.model import DeviceConfig, StaticRoute
    from ani.sot.patch import pointer

    cfgs = {r: DeviceConfig(hostname=r, static_routes=[StaticRoute(prefix="192.0.2.0/24",
                                                                   nexthop="Null0")])
            for r in ("r1", "r2")}

    def apply_(lab, router, cfg, **kw):
        changed = cfgs[router] != cfg.canonical()
        cfgs[router] = cfg.canonical()
        return device_apply.ApplyReport(changed=changed, diff=[], seconds=0.0)

    monkeypatch.setattr(device_apply, "read", lambda lab, r, *a, **kw: cfgs[r])
    monkeypatch.setattr(device_apply, "apply", apply_)
    (tmp_path / "lab").mkdir()
    lab = SimpleNamespace(dir=tmp_path / "lab", topology=SimpleNamespace(routers=["r1", "r2"]))
    traj = Trajectory("x", "a3r")
    a = A3RAdapter(lab, trajectory=traj)
    a.open()
    try:
        base = a.call("sot_list", {}).data["revision"]
        ops = [{"op": "replace", "path": pointer("static_routes", "192.0.2.0/24", "distance"),
                "value": 200}]
        assert a.call("sot_patch", {"path": "devices/r2.json", "patch": ops,
                                    "base_revision": base}).ok
        sha = a.call("sot_commit", {"message": "r2: distance 200"}).data["revision"]
        assert a.call("sot_revert", {"revision": sha[:10]}).ok
        assert cfgs["r2"].static_routes[0].distance == 1  # undone on the router
    finally:
        a.close()
    m = compute_metrics(traj.events, "a3r")
    assert m.repeat_inverse == 1 and m.action_counts["update"] == 3
