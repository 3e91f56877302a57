"""The ``replay`` agent (issue 27 §3) on ani.testing's FakeLab: a run recorded at a3t (calls the
adapter refuses among them) is replayed call for call against a fresh lab, refused again where it was,
with no difference; a lab that answers otherwise gives flag and text differences as
``replay_diff`` events, never a failure; volatile text (times, uptimes) is not a difference; the
recorded stop reason and mistake come back; ATIF is read as well as ani's JSONL; a bad file is a
ConfigError before any lab. The real levels: tests/integration/test_replay_rerun.py."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from ani.agents import create_agent
from ani.agents.base import AgentTask, Budget
from ani.agents.replay import Renames, ReplayAgent, compare, mask, script
from ani.errors import ConfigError, TrajectoryError
from ani.registry import create_adapter
from ani.protocol import ErrorInfo, ToolResult
from ani.errors import ErrorCode
from ani.testing import FakeLab
from ani.testing.fake_lab import DEFAULT_TOPOLOGY
from ani.trajectory import Trajectory, log_agent_action
from ani.trajectory_atif import read_calls, to_atif

TASK = AgentTask(task_class="t", variant_id="t-s1", request="do it")
CALLS = [
    ("get_topology", {}),
    ("get_state", {"device": "r1"}),  # refused: invalid_arguments (no 'what')
    ("get_config", {"device": "r1"}),  # refused: unknown_tool at a3t
    ("get_topology", {}),
]
BIGGER = {**DEFAULT_TOPOLOGY, "routers": {**DEFAULT_TOPOLOGY["routers"], "r3": {"config": "hostname r3\n"}},
          "links": [*DEFAULT_TOPOLOGY["links"], {"a": {"node": "r2", "ifname": "eth-r3"}, "b": {"node": "r3", "ifname": "eth-r2"}}]}


def _record(path, lab=None, *, stop=None, mistake=None):
    traj = Trajectory("t-s1", "a3t", path)
    adapter = create_adapter("a3t", lab or FakeLab(), trajectory=traj)
    if mistake is not None:
        traj.log("agent_mistake", mistake=mistake)
    for tool, args in CALLS:
        adapter.call(tool, args)
    if stop is not None:
        traj.log("agent_stop", stop_reason=stop, steps=len(CALLS))
    else:
        log_agent_action(traj, "submit")
    traj.close()
    return traj


def _replay(path, lab=None, budget=None, **options):
    traj = Trajectory("t-s1", "a3t")
    adapter = create_adapter("a3t", lab or FakeLab(), trajectory=traj)
    agent = create_agent({"kind": "replay", "trajectory": str(path), "pace": False, **options})
    return agent.run(TASK, adapter, budget or Budget()), traj


def test_a_replay_issues_the_recorded_calls_in_order_and_the_refused_one_is_refused_again(tmp_path):
    recorded = _record(tmp_path / "r.jsonl")
    assert recorded.calls[2]["ok"] is False  # the recording has a refusal
    run, traj = _replay(tmp_path / "r.jsonl")
    assert [(c["tool"], c["arguments"]) for c in traj.calls] == [(t, a) for t, a in CALLS]
    assert [c["error_code"] for c in traj.calls] == [c["error_code"] for c in recorded.calls]
    assert run.stop_reason == "submitted" and run.submitted and run.steps == 4
    end = [e for e in traj.events if e["event"] == "replay_end"]
    assert end and end[0]["calls"] == 4 and end[0]["replayed"] == 4 and end[0]["differing"] == 0
    assert not [e for e in traj.events if e["event"] == "replay_diff"]


def test_a_lab_that_answers_otherwise_is_recorded_as_differences_not_a_failure(tmp_path):
    _record(tmp_path / "r.jsonl")
    run, traj = _replay(tmp_path / "r.jsonl", FakeLab(BIGGER))  # one router more
    diffs = [e for e in traj.events if e["event"] == "replay_diff"]
    assert run.stop_reason == "submitted" and len(traj.calls) == 4  # went on to the end
    assert [(d["index"], d["tool"], set(d["fields"])) for d in diffs] == \
        [(0, "get_topology", {"text"}), (3, "get_topology", {"text"})]
    text = diffs[0]["fields"]["text"]
    assert text["kind"] == "observation" and "r3" in text["replayed"] and "r3" not in text["recorded"]
    end = [e for e in traj.events if e["event"] == "replay_end"][0]
    assert (end["differing"], end["text_differences"], end["flag_differences"]) == (2, 2, 0)


def test_volatile_text_is_masked_and_real_changes_are_not():
    assert mask("Last update 00:01:23 ago") == mask("Last update 02:11:05 ago")
    assert mask("Up 1d02h03m") == mask("Up 00w3d04h")
    assert mask("at 2026-12-05T18:22:04.123Z") == mask("at 2026-12-06T01:02:03Z")
    assert mask("expires in 12s") == mask("expires in 113s")
    assert mask("10.0.0.0/24 via 10.1.1.1") != mask("10.0.1.0/24 via 10.1.1.1")


def test_compare_checks_flags_strictly_and_text_only_where_recorded(tmp_path):
    _record(tmp_path / "r.jsonl")
    rec = read_calls(tmp_path / "r.jsonl")[0]
    assert compare(rec, ToolResult(ok=True, text=rec.event["observation"])) == {}
    assert compare(rec, ToolResult(ok=True, text=rec.event["observation"] + " up 00:00:09")) == {
        "text": {"kind": "observation", "recorded": "", "replayed": " up #", "at": len(rec.event["observation"])}}
    refused = ToolResult(ok=False, error=ErrorInfo(code=ErrorCode.DEVICE_UNREACHABLE, message="down"))
    got = compare(rec, refused)
    assert got["ok"] == {"recorded": True, "replayed": False}
    assert got["error_code"] == {"recorded": None, "replayed": "device_unreachable"}
    bare = {k: v for k, v in rec.event.items() if k not in ("observation", "summary", "changed")}
    no_text = rec.__class__(**{**rec.__dict__, "summary": None, "event": bare})
    assert compare(no_text, ToolResult(ok=True, text="x", changed=True)) == {}  # nothing recorded to compare


def test_the_recorded_stop_reason_and_mistake_come_back(tmp_path):
    _record(tmp_path / "r.jsonl", stop="max_steps", mistake={"kind": "adjacent-prefix", "expressed": True})
    run, _ = _replay(tmp_path / "r.jsonl")
    assert run.stop_reason == "max_steps" and not run.submitted
    assert run.mistake == {"kind": "adjacent-prefix", "expressed": True}
    run, _ = _replay(tmp_path / "r.jsonl", stop_reason="error")  # the run record's, given by rerun
    assert run.stop_reason == "error" and run.error


def test_the_budget_stops_a_replay(tmp_path):
    _record(tmp_path / "r.jsonl")
    run, traj = _replay(tmp_path / "r.jsonl", budget=Budget(max_steps=2))
    assert run.stop_reason == "max_steps" and len(traj.calls) == 2


def test_an_atif_trajectory_replays_the_same_calls(tmp_path):
    recorded = _record(tmp_path / "r.jsonl")
    doc = to_atif(Trajectory.read(tmp_path / "r.jsonl"), request="do it")
    (tmp_path / "r.json").write_text(doc.model_dump_json(exclude_none=True))
    run, traj = _replay(tmp_path / "r.json")
    assert [(c["tool"], c["arguments"], c["ok"]) for c in traj.calls] == \
        [(c["tool"], c["arguments"], c["ok"]) for c in recorded.calls]
    assert run.stop_reason == "submitted"
    assert not [e for e in traj.events if e["event"] == "replay_diff"]


def test_the_recorded_gaps_are_the_pacing(tmp_path):
    lines = [{"event": "tool_call", "tool": "a", "arguments": {}, "ok": True, "elapsed_s": 0.5,
              "timestamp": "2026-12-05T10:00:01Z"},
             {"event": "agent_action", "action": "wait", "seconds": 5, "waited_s": 4.0,
              "timestamp": "2026-12-05T10:00:06Z"},
             {"event": "tool_call", "tool": "b", "arguments": {}, "ok": True, "elapsed_s": 1.0,
              "timestamp": "2026-12-05T10:00:10Z"}]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    steps = script([json.loads(x) for x in (tmp_path / "t.jsonl").read_text().splitlines()])
    assert [(s.call.tool if s.call else None, s.wait_s, s.gap_s) for s in steps] == \
        [("a", 0.0, 0.0), (None, 4.0, 1.0), ("b", 0.0, 3.0)]  # the wait logged after its 4 s


def test_a_bad_trajectory_is_a_config_error_naming_the_file_not_its_text(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("secret-looking text\n")
    with pytest.raises(TrajectoryError) as err:
        create_agent({"kind": "replay", "trajectory": str(bad)})
    assert str(bad) in str(err.value) and "secret" not in str(err.value)
    with pytest.raises(ConfigError, match="no such|cannot read"):
        ReplayAgent(str(tmp_path / "missing.jsonl"))
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(TrajectoryError, match="no events"):
        ReplayAgent(str(tmp_path / "empty.jsonl"))
    with pytest.raises(ConfigError, match="agent.stop_reason"):
        ReplayAgent(str(bad), stop_reason="done")
    with pytest.raises(ConfigError, match="agent.trajectory: required"):
        create_agent({"kind": "replay"})


OLD, NEW = "eaaddd54a3b47bd3bd1996ce62fca99b2f49daa9", "160b3712b5aa18e65b713fb028ad1cde02f84cc3"


def test_revisions_the_fresh_lab_minted_are_passed_back_in_place_of_the_recorded_ones():
    """A3-R / A4: ``sot_list`` answers HEAD <revision>; the agent passes it back as
    ``base_revision``: the replay passes the fresh lab's (else every patch is a stale-base
    conflict and the verdict agrees only by chance)."""
    names = Renames()
    names.learn(f"HEAD {OLD} devices/c1.json", f"HEAD {NEW} devices/c1.json")
    args = {"path": "devices/e1.json", "base_revision": OLD, "patch": [{"op": "add", "value": OLD[:12]}], "n": 3}
    assert names.rewrite(args) == {"path": "devices/e1.json", "base_revision": NEW,
                                   "patch": [{"op": "add", "value": NEW[:12]}], "n": 3}
    assert names.apply(f"changed in the working tree (base {OLD[:12]})") == f"changed in the working tree (base {NEW[:12]})"
    assert names.rewrite({"device": "e1", "x": "eaaddd5400"}) == {"device": "e1", "x": "eaaddd5400"}  # not a short form


def test_a_renamed_revision_is_no_text_difference_but_another_text_is():
    from ani.trajectory_atif import RecordedCall

    rec = RecordedCall(tool="sot_list", arguments={}, text=None, summary=f"HEAD {OLD} devices/c1.json",
                       ok=True, error_code=None, changed=False, event={"ok": True, "error_code": None, "changed": False})
    names = Renames()
    now = ToolResult(ok=True, text=f"HEAD {NEW} devices/c1.json")
    names.learn(rec.summary, now.text)
    assert compare(rec, now, names) == {}
    assert compare(rec, now)["text"]["kind"] == "summary"  # without the renames it differs
    assert compare(rec, ToolResult(ok=True, text=f"HEAD {NEW} devices/c2.json"), names)["text"]["at"] > 40
