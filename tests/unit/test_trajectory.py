"""The trajectory: one JSON event per call, in memory and in the run's file."""

from __future__ import annotations

import json
import threading
from datetime import datetime
from pathlib import Path

from ani.adapters.base import BaseAdapter, DeviceArgs, tool
from ani.errors import ErrorCode
from ani.testing import FakeLab
from ani.protocol import Level, ToolResult
from ani.trajectory import OBSERVATION_CHARS, SUMMARY_CHARS, Trajectory, cut_text


class Echo(BaseAdapter):
    level = Level.A0

    @tool(args=DeviceArgs, description="echo")
    def echo(self, args: DeviceArgs) -> ToolResult:
        return ToolResult.success(f"hello from {args.device}\n" + "x" * 500, {"n": 1})


def Lab() -> FakeLab:  # noqa: N802 - routers r1, r2
    return FakeLab({"routers": {"r1": {}, "r2": {}}})


def test_calls_are_written_as_json_lines_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "run-42.jsonl"  # parent created on demand
    traj = Trajectory(run_id="run-42", level="a0", path=path)
    adapter = Echo(Lab(), trajectory=traj)
    adapter.call("echo", {"device": "r2"})
    adapter.call("echo", {"device": "r7"})
    adapter.call("nope", {"x": 1})
    traj.log("agent_message", content="thinking", step=3)
    traj.close()

    lines = path.read_text().splitlines()
    assert len(lines) == 4
    events = [json.loads(line) for line in lines]
    assert Trajectory.read(path) == events == traj.events
    first, second, third, note = events
    for e in (first, second, third):
        assert e["event"] == "tool_call"
        assert e["run_id"] == "run-42"
        assert e["level"] == "a0"
        assert isinstance(e["elapsed_s"], float) and e["elapsed_s"] >= 0
        datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00"))
    assert (first["tool"], first["arguments"], first["ok"], first["error_code"]) == ("echo", {"device": "r2"}, True, None)
    assert (second["ok"], second["error_code"]) == (False, "unknown_device")
    assert (third["tool"], third["arguments"], third["error_code"]) == ("nope", {"x": 1}, "unknown_tool")
    assert note == {**note, "event": "agent_message", "content": "thinking", "step": 3, "run_id": "run-42"}
    assert traj.calls == [first, second, third]


def test_summary_is_short_single_spaced(tmp_path: Path) -> None:
    traj = Trajectory(level="a0")
    e = traj.log_call("echo", {}, ToolResult.success("a\n  b\tc " + "y" * 1000))
    assert e["summary"].startswith("a b c yyy")
    assert len(e["summary"]) == SUMMARY_CHARS and e["summary"].endswith("...")
    e = traj.log_call("echo", {}, ToolResult.failure(ErrorCode.TIMEOUT, "timeout after 2 s", changed=True))
    assert (e["summary"], e["error_code"], e["changed"]) == ("error [timeout]: timeout after 2 s", "timeout", True)


def test_appends_to_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    for run in ("a", "b"):
        t = Trajectory(run_id=run, level="a1", path=path)
        t.log_call("get_topology", {}, ToolResult.success("ok"))
        t.close()
    assert [e["run_id"] for e in Trajectory.read(path)] == ["a", "b"]


def test_in_memory_only_has_no_file() -> None:
    t = Trajectory(run_id="m", level="a0")
    t.log("x")
    assert t.path is None and t.events[0]["event"] == "x" and t.events[0]["level"] == "a0"


def test_concurrent_logging_keeps_lines_whole(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    t = Trajectory(run_id="c", level="a0", path=path)

    def work(k: int) -> None:
        for i in range(50):
            t.log_call("echo", {"k": k, "i": i, "pad": "z" * 300}, ToolResult.success("ok"))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    t.close()
    events = Trajectory.read(path)
    assert len(events) == 200
    assert sorted((e["arguments"]["k"], e["arguments"]["i"]) for e in events) == [
        (k, i) for k in range(4) for i in range(50)
    ]


def test_an_argument_json_cannot_write_is_recorded_not_raised(tmp_path):
    """An agent's 5,000-digit integer or a list nested 100,000 deep reached the trajectory, whose
    JSON writer raised out of Adapter.call (documented never to raise; outside check of issue 23)."""
    import json as _json

    from ani.trajectory import Trajectory, writable

    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    t = Trajectory("r", "a3r", tmp_path / "t.jsonl")
    rec = t.log("tool_call", tool="sot_patch", arguments={"value": 10**5000}, ok=False)
    assert rec["arguments"].startswith("<dict not written: ") and "4300" in rec["arguments"]
    rec = t.log("tool_call", tool="sot_patch", arguments={"value": deep}, ok=False)
    assert rec["arguments"].startswith("<dict not written: ") and "recursion" in rec["arguments"]
    assert [_json.loads(ln)["tool"] for ln in (tmp_path / "t.jsonl").read_text().splitlines()] == ["sot_patch"] * 2
    assert writable({"a": 1}) == {"a": 1}


def test_an_error_message_is_cut_at_the_bound():
    from ani.errors import ErrorCode
    from ani.protocol import MAX_MESSAGE_CHARS, ErrorInfo, ToolResult

    r = ToolResult.failure(ErrorCode.NOT_FOUND, "no such service " + "a" * 100_000)
    assert len(r.error.message) < MAX_MESSAGE_CHARS + 60 and r.error.message.endswith("characters not shown)")
    assert len(r.text) < MAX_MESSAGE_CHARS + 80
    assert len(ErrorInfo(code=ErrorCode.NOT_FOUND, message="x" * 10_000).message) < MAX_MESSAGE_CHARS + 60
    short = "unknown device 'r9'"
    assert ToolResult.failure(ErrorCode.UNKNOWN_DEVICE, short).error.message == short


class Big(BaseAdapter):
    """A result of ``size`` characters (device r1: one more line than the bound holds)."""

    level = Level.A1
    size = OBSERVATION_CHARS + 1000

    @tool(args=DeviceArgs, description="a large read")
    def dump(self, args: DeviceArgs) -> ToolResult:
        lines = [f"line {i:06d} of {args.device}" for i in range(self.size // 18 + 1)]
        return ToolResult.success("\n".join(lines)[: self.size], {"n": len(lines)})


def test_a_large_result_is_recorded_whole_up_to_the_bound_with_the_mark(tmp_path: Path) -> None:
    """Every agent's calls go through the adapter: the observation the model reads is recorded
    whole up to OBSERVATION_CHARS (65,536), then cut with the mark naming what was left out."""
    path = tmp_path / "t.jsonl"
    traj = Trajectory(path=path)
    adapter = Big(Lab(), trajectory=traj)
    res = adapter.call("dump", {"device": "r1"})
    text = res.observation()
    assert len(text) == OBSERVATION_CHARS + 1000
    [ev] = Trajectory.read(path)
    assert ev["observation"] == text[:OBSERVATION_CHARS] + "\n[... 1000 more characters cut]"
    assert ev["observation_chars"] == OBSERVATION_CHARS + 1000 and ev["observation_truncated"] is True
    assert len(ev["summary"]) <= SUMMARY_CHARS  # the one-line summary is kept as before


def test_a_result_of_exactly_the_bound_is_recorded_whole(tmp_path: Path) -> None:
    traj = Trajectory()
    adapter = Big(Lab(), trajectory=traj)
    adapter.size = OBSERVATION_CHARS
    text = adapter.call("dump", {"device": "r1"}).observation()
    [ev] = traj.calls
    assert ev["observation"] == text and len(text) == OBSERVATION_CHARS
    assert ev["observation_chars"] == OBSERVATION_CHARS and ev["observation_truncated"] is False


def test_a_failure_is_recorded_as_the_error_payload_the_model_reads() -> None:
    traj = Trajectory(observation_chars=1000)
    Echo(Lab(), trajectory=traj).call("echo", {"device": "r9"})
    [ev] = traj.calls
    payload = json.loads(ev["observation"])
    assert payload["ok"] is False and payload["code"] == ev["error_code"] == "unknown_device"
    assert ev["observation_truncated"] is False


def test_cut_text_says_how_much_was_cut() -> None:
    assert cut_text("abcdef", 6) == ("abcdef", None)
    assert cut_text("abcdefgh", 6) == ("abcdef\n[... 2 more characters cut]", 8)
