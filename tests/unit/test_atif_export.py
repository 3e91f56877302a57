"""ATIF (issue 27 §2): ``ani campaign export --format atif`` writes each run's trajectory as an
ATIF v1.8 document that the ``atif`` package's models validate, with the run's verdict, level,
scenario hash, cell and task variant in its metadata; :func:`ani.trajectory_atif.from_atif`
reads it back to the same events, and every tool call (name, arguments, result text, order)
survives the round trip. The runs are real ones (tests/data/campaign-results/README.md): the
scripted agent at every level, and the LLM agent driven by a fake model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import atif
import pytest

from ani.campaign.export_atif import export_atif
from ani.campaign.results import read_runs
from ani.errors import CampaignSpecError, TrajectoryError
from ani.trajectory import Trajectory
from ani.trajectory_atif import SCHEMA_VERSION, from_atif, read_calls, read_events, recorded_calls, to_atif

DATA = Path(__file__).resolve().parents[1] / "data" / "campaign-results"
KA = DATA / "known-answer"
LLM = DATA / "run-llm"
LEVEL_RUNS = sorted((KA / "trajectories").glob("*.jsonl"))
ALL_RUNS = LEVEL_RUNS + [LLM / "trajectories" / "a3t-onboard-site-s1.jsonl"]


def _calls(events):
    return [(c.tool, c.arguments, c.text, c.summary, c.ok, c.error_code, c.changed) for c in recorded_calls(events)]


def test_the_fixture_holds_a_run_of_every_level():
    assert sorted(p.stem.split("-")[0] for p in LEVEL_RUNS) == [
        "a0", "a1", "a1_blocklist", "a2", "a3r", "a3t", "a4"]


@pytest.mark.parametrize("path", ALL_RUNS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_a_round_trip_keeps_every_event_and_every_tool_call(path):
    events = Trajectory.read(path)
    doc = to_atif(events, request="the request")
    text = json.dumps(doc.to_json_dict())
    atif.Trajectory.model_validate_json(text)  # what another harness reads
    back = from_atif(text)
    assert back == events
    assert _calls(back) == _calls(events)
    assert len(recorded_calls(back)) == sum(e["event"] == "tool_call" for e in events) > 0
    # ATIF's own fields carry each call (its name, arguments and flags are not kept twice)
    carried = [(c.function_name, c.arguments, e) for s in doc.steps for c in s.tool_calls or []
               for e in c.extra["ani_events"] if e["event"] == "tool_call"]
    assert [(name, args) for name, args, _e in carried] == [(c.tool, c.arguments) for c in recorded_calls(events)]
    assert all(not {"tool", "arguments", "ok", "changed"} & set(e["fields"]) for _n, _a, e in carried)


def test_an_export_of_the_campaign_validates_and_carries_the_run(tmp_path):
    out = tmp_path / "atif"
    files = export_atif(KA, out)
    records = {r.run_id: r for r in read_runs(KA)}
    assert [f.name for f in files] == [f"{r}.json" for r in (
        "a0-onboard-site-s1", "a1-onboard-site-s1", "a1_blocklist-onboard-site-s1", "a2-onboard-site-s1",
        "a3t-onboard-site-s1", "a3r-onboard-site-s1", "a4-onboard-site-s1")]  # plan order
    for f in files:
        doc = atif.Trajectory.model_validate_json(f.read_text())
        rec = records[f.stem]
        ani = doc.extra["ani"]
        assert doc.schema_version == SCHEMA_VERSION == "ATIF-v1.8" and doc.session_id == rec.run_id
        assert ani["run"]["level"] == rec.level and ani["run"]["cell"] == rec.cell
        assert ani["run"]["scenario_hash"] == rec.scenario_hash == (
            "f161abbb3a6a2c5fb864e9a343e394b4961dfb61c1dc88d7efa4642f735edcf5")
        assert ani["run"]["variant_id"] == "onboard-site-s1" and ani["verdict"]["label"] == rec.label
        assert doc.agent.name == "ani-scripted"
        # the request, rebuilt from the plan (a scripted run's trajectory does not hold it)
        assert doc.steps[0].source == "user" and doc.steps[0].message.startswith("Please onboard a new site")
        assert "Attached file site.yaml:\n```\ntenant: red\nedge: e4\n" in doc.steps[0].message
        agent_steps = [s for s in doc.steps if s.source == "agent"]
        assert len(agent_steps) == rec.tool_calls and all(s.llm_call_count == 0 for s in agent_steps)
        assert from_atif(doc) == Trajectory.read(KA / "trajectories" / f"{rec.run_id}.jsonl")
    a4 = json.loads((out / "a4-onboard-site-s1.json").read_text())["extra"]["ani"]["verdict"]
    assert a4["label"] == "clean_failure" and a4["tests"] == {"passed": 6, "total": 8}
    assert [c["name"] for c in a4["failed_checks"]] == ["reach nsite -> red1 (198.18.142.10)",
                                                         "reach nsite -> red2 (198.18.119.10)"]
    assert a4["agent_error"].startswith("AgentFailed: sot_commit: [rolled_back]")


def test_a_failed_call_shows_its_flags_on_its_observation(tmp_path):
    events = Trajectory.read(KA / "trajectories" / "a4-onboard-site-s1.jsonl")
    doc = to_atif(events).to_json_dict()
    failed = [r["extra"] for s in doc["steps"] for r in (s.get("observation") or {}).get("results", [])
              if r.get("extra", {}).get("ok") is False]
    assert len(failed) == sum(e.get("ok") is False for e in events) == 1
    assert failed[0]["error_code"] == next(e["error_code"] for e in events if e.get("ok") is False)


def test_the_mistake_event_stays_where_it_happened():
    events = Trajectory.read(KA / "trajectories" / "a0-onboard-site-s1.jsonl")
    doc = to_atif(events).to_json_dict()
    kept = [e for s in doc["steps"] for e in (s.get("extra") or {}).get("ani_events", [])]
    assert [e["event"] for e in kept] == ["agent_mistake"]
    assert kept[0]["seq"] == next(i for i, e in enumerate(events) if e["event"] == "agent_mistake")


def test_the_llm_run_maps_to_its_model_turns():
    path = LLM / "trajectories" / "a3t-onboard-site-s1.jsonl"
    events = Trajectory.read(path)
    doc = to_atif(events).to_json_dict()
    steps = doc["steps"]
    assert [s["source"] for s in steps] == ["system", "user", "agent", "agent", "agent", "agent", "system"]
    assert steps[0]["message"].startswith("You are") and "Attached file site.yaml" in steps[1]["message"]
    turns = steps[2:6]
    assert [s["metrics"] for s in turns] == [{"prompt_tokens": 120, "completion_tokens": 15},
                                             {"prompt_tokens": 300, "completion_tokens": 8},
                                             {"prompt_tokens": 420, "completion_tokens": 40},
                                             {"prompt_tokens": 500, "completion_tokens": 12}]
    assert [[c["function_name"] for c in s.get("tool_calls", [])] for s in turns] == [
        ["get_topology", "frobnicate"], [], ["apply"], ["wait", "submit"]]
    assert [s["message"] for s in turns[:2]] == ["Looking at the network first.", "I will now onboard the site."]
    results = {r["source_call_id"]: r["content"] for s in turns for r in s.get("observation", {}).get("results", [])}
    assert results["t2"].startswith("error: unknown tool 'frobnicate'")
    assert results["t4"] == "waited 1 s" and results["t5"] == "submitted"
    assert steps[6]["message"] == "agent stopped: submitted"
    assert len(doc["agent"]["tool_definitions"]) == 10
    # only the adapter's calls are tool calls of ani; the text is what the model was sent
    calls = read_calls(path)
    assert [c.tool for c in calls] == ["get_topology", "apply"] and [c.call_id for c in calls] == ["t1", "t3"]
    assert calls[0].text.startswith("nodes: c1, c2, e1, e2, e3, e4, blue1 (host)") and "\n" in calls[0].text
    assert calls[1].changed is True and calls[1].arguments["changes"][0]["prefix"] == "198.19.126.0/24"


def test_read_events_takes_either_kind_of_file(tmp_path):
    src = LLM / "trajectories" / "a3t-onboard-site-s1.jsonl"
    exported = tmp_path / "run.json"
    exported.write_text(json.dumps(to_atif(Trajectory.read(src)).to_json_dict()))
    assert read_events(exported) == read_events(src) == Trajectory.read(src)


def test_an_atif_document_of_another_harness_reads_as_its_tool_calls():
    doc = {  # the atif package's own example
        "schema_version": "ATIF-v1.7",
        "agent": {"name": "my-agent", "version": "1.0.0", "model_name": "claude-sonnet-4-6"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "What time is it?"},
            {"step_id": 2, "source": "agent", "message": "Let me check.",
             "tool_calls": [{"tool_call_id": "c1", "function_name": "now", "arguments": {}}],
             "observation": {"results": [{"source_call_id": "c1", "content": "2026-05-16T12:00:00Z"}]},
             "metrics": {"prompt_tokens": 120, "completion_tokens": 18}},
        ],
    }
    calls = recorded_calls(from_atif(doc))
    assert [(c.tool, c.arguments, c.text, c.ok, c.call_id) for c in calls] == [
        ("now", {}, "2026-05-16T12:00:00Z", None, "c1")]


def test_a_file_that_is_neither_is_refused_naming_the_line_not_the_text(tmp_path):
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"event": "tool_call", "tool": "x"}\nsecret-token-123\n')
    with pytest.raises(TrajectoryError) as err:
        read_events(bad)
    assert str(err.value) == f"{bad}:2: not a JSON line (neither ani's trajectory nor ATIF)"
    bad.write_text('{"schema_version": "ATIF-v1.8", "agent": {"name": "a", "version": "1"}, "steps": '
                   '[{"step_id": 2, "source": "user", "message": "secret-token-123"}]}')
    with pytest.raises(TrajectoryError) as err:
        read_events(bad)
    assert "not an ATIF trajectory" in str(err.value) and "step_id=2 is not sequential" in str(err.value)
    assert "secret-token-123" not in str(err.value)


def test_a_run_without_a_trajectory_still_exports_with_its_verdict(tmp_path):
    src = tmp_path / "ka"
    shutil.copytree(KA, src)
    (src / "trajectories" / "a2-onboard-site-s1.jsonl").unlink()
    export_atif(src, tmp_path / "out")
    doc = atif.Trajectory.model_validate_json((tmp_path / "out" / "a2-onboard-site-s1.json").read_text())
    assert [s.source for s in doc.steps] == ["user"] and doc.extra["ani"]["trajectory_file"] is None
    assert "no trajectory was written" in doc.notes and doc.extra["ani"]["verdict"]["label"] == "dangerous_success"


def test_export_refuses_what_it_cannot_write_without_losing_anything(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.json").write_text("mine")
    with pytest.raises(CampaignSpecError, match="already holds files; give a new or empty folder"):
        export_atif(KA, out)
    assert (out / "keep.json").read_text() == "mine" and len(list(out.iterdir())) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "plan.jsonl").write_text((KA / "plan.jsonl").read_text())
    with pytest.raises(CampaignSpecError, match="no finished run to export"):
        export_atif(empty, tmp_path / "o2")
    with pytest.raises(CampaignSpecError, match="not a results folder"):
        export_atif(tmp_path, tmp_path / "o3")


def test_odd_events_keep_their_order_and_every_adapter_call_is_an_atif_tool_call():
    """A reply without tool calls whose adapter call no observation answered, an observation of an
    unknown call id, a timestamp that is not ISO 8601, an event of a third-party agent."""
    events = [
        {"event": "agent_turn", "turn": 1, "content": None, "tool_calls": [], "prompt_tokens": None,
         "completion_tokens": None},
        {"event": "agent_observation", "tool_call_id": "zz", "text": "x"},
        {"event": "tool_call", "tool": "get_state", "arguments": {"device": "r1"}, "ok": False,
         "error_code": "unknown-device", "summary": "no  router\n r1"},
        {"event": "agent_action", "action": "null", "reason": "no_tool_call"},
        {"event": "my_agent_note", "timestamp": "yesterday", "text": "hm"},
        {"event": "agent_stop", "stop_reason": "error", "error": "boom"},
    ]
    doc = to_atif(events).to_json_dict()
    assert [(s["source"], [c["function_name"] for c in s.get("tool_calls", [])]) for s in doc["steps"]] == [
        ("user", []), ("agent", []), ("agent", ["get_state"]), ("system", [])]
    assert doc["steps"][2]["observation"]["results"][0]["extra"] == {
        "ok": False, "error_code": "unknown-device"}
    assert doc["steps"][3]["message"] == "agent stopped: error; error: boom"
    assert from_atif(json.dumps(doc)) == events


def test_a_framework_agent_s_call_is_answered_on_its_model_turn_not_repeated():
    """A framework agent (ani.agents.framework) logs agent_turn and then the adapter's tool_call,
    with no agent_observation: the export showed each call twice, once on the model's turn
    without an observation and once as a step of its own (a pydantic-ai run of 2 calls had 4
    ATIF tool calls). The adapter call now answers the turn's call of the same tool."""
    events = [
        {"event": "agent_start", "agent": "pydantic-ai", "framework": "pydantic_ai", "request": "go"},
        {"event": "agent_turn", "turn": 1, "prompt_tokens": 100, "completion_tokens": 10, "content": None,
         "tool_calls": [{"id": "c0", "name": "get_topology", "arguments": "{}"}]},
        {"event": "tool_call", "tool": "get_topology", "arguments": {}, "ok": True, "error_code": None,
         "changed": False, "summary": "nodes: r1", "observation": "nodes: r1"},
        {"event": "agent_turn", "turn": 2, "prompt_tokens": 100, "completion_tokens": 10, "content": None,
         "tool_calls": [{"id": "c1", "name": "list_snapshots", "arguments": "{}"}]},
        {"event": "agent_refused", "tool": "list_snapshots", "reason": "max_steps", "message": "budget spent"},
        {"event": "agent_stop", "stop_reason": "max_steps", "steps": 1},
    ]
    doc = to_atif(events).to_json_dict()
    calls = [(s.get("llm_call_count"), c["tool_call_id"], c["function_name"])
             for s in doc["steps"] for c in s.get("tool_calls", [])]
    assert calls == [(1, "c0", "get_topology"), (1, "c1", "list_snapshots")]
    results = doc["steps"][1]["observation"]["results"]
    assert [(r["source_call_id"], r["content"]) for r in results] == [("c0", "nodes: r1")]
    assert from_atif(json.dumps(doc)) == events
    assert [c.tool for c in recorded_calls(from_atif(json.dumps(doc)))] == ["get_topology"]


def test_a_call_recorded_whole_is_exported_whole_and_read_back_exactly():
    """Since issue 26 a ``tool_call`` event carries the observation the agent read, whole (up to
    OBSERVATION_CHARS): that is the ATIF observation's content and the replay's text, not the
    300-character summary; a failure's observation is its JSON payload, not its summary."""
    long = "interface eth0\n" + "x" * 5000
    payload = '{"ok": false, "code": "unknown_device", "message": "no router r9"}'
    events = [
        {"event": "tool_call", "tool": "get_running_config", "arguments": {"device": "r1"}, "ok": True,
         "error_code": None, "changed": False, "summary": long[:300], "observation": long,
         "observation_chars": len(long), "observation_truncated": False},
        {"event": "tool_call", "tool": "get_state", "arguments": {"device": "r9"}, "ok": False,
         "error_code": "unknown_device", "changed": False, "summary": "error [unknown_device]: no router r9",
         "observation": payload, "observation_chars": len(payload), "observation_truncated": False},
    ]
    doc = to_atif(events).to_json_dict()
    contents = [r["content"] for s in doc["steps"] for r in (s.get("observation") or {}).get("results", [])]
    assert contents == [long, payload]
    back = from_atif(json.dumps(doc))
    assert back == events
    assert [c.text for c in recorded_calls(back)] == [long, payload]
