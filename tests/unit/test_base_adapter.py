"""BaseAdapter: tool specs, validation before anything runs, stable error codes, logging."""

from __future__ import annotations

import subprocess
import time

import pytest
from pydantic import Field

from ani.adapters.base import Args, BaseAdapter, DeviceArgs, NoArgs, tool
from ani.errors import AniTimeout, ErrorCode
from ani.protocol import Adapter, Level, ToolResult
from ani.testing import FakeLab
from ani.trajectory import Trajectory

TOPOLOGY = {
    "routers": {"r1": {}, "r2": {}, "r3": {}},
    "hosts": {"h1": {"gateway": "198.18.1.1"}},
    "links": [
        {"a": {"node": "r1", "ifname": "eth-r2"}, "b": {"node": "r2", "ifname": "eth-r1"}},
        {"a": {"node": "r2", "ifname": "eth-r3"}, "b": {"node": "r3", "ifname": "eth-r2"}},
        {"a": {"node": "r1", "ifname": "eth-h1"}, "b": {"node": "h1", "ifname": "eth0", "address": "198.18.1.10/24"}},
    ],
}


class SetArgs(DeviceArgs):
    commands: list[str] = Field(min_length=1, description="lines")
    dry_run: bool = False


class MultiArgs(Args):
    devices: list[str]


class Recording(BaseAdapter):
    level = Level.A1

    def __init__(self, *a, **kw) -> None:  # noqa: ANN002, ANN003
        super().__init__(*a, **kw)
        self.ran: list[tuple[str, object]] = []

    @tool(args=SetArgs, destructive=True, description="Set lines")
    def set_lines(self, args: SetArgs) -> ToolResult:
        self.ran.append(("set_lines", args))
        time.sleep(0.05)
        return ToolResult.success(f"{len(args.commands)} lines on {args.device}", changed=True)

    @tool(args=MultiArgs, read_only=True, description="Ping all", name="ping-all")
    def ping_all(self, args: MultiArgs) -> ToolResult:
        self.ran.append(("ping-all", args))
        return ToolResult.success("ok")

    @tool(args=NoArgs, description="Slow")
    def slow(self, args: NoArgs) -> ToolResult:
        self.ran.append(("slow", args))
        raise AniTimeout(2.5, "vtysh")

    @tool(args=NoArgs, description="Slow subprocess")
    def slow_proc(self, args: NoArgs) -> ToolResult:
        self.ran.append(("slow_proc", args))
        raise subprocess.TimeoutExpired(["vtysh"], 4)


@pytest.fixture
def adapter() -> Recording:
    return Recording(FakeLab(TOPOLOGY), trajectory=Trajectory(run_id="run-7", level="a1"))


def test_is_an_adapter(adapter: Recording) -> None:
    assert isinstance(adapter, Adapter)
    with adapter as a:
        assert a is adapter


def test_tool_specs(adapter: Recording) -> None:
    specs = {s.name: s for s in adapter.tools()}
    assert set(specs) == {"get_topology", "set_lines", "ping-all", "slow", "slow_proc"}
    s = specs["set_lines"]
    assert (s.description, s.read_only, s.destructive) == ("Set lines", False, True)
    assert s.input_schema["required"] == ["device", "commands"]
    assert s.input_schema["additionalProperties"] is False
    assert s.input_schema["properties"]["commands"] == {
        "description": "lines",
        "items": {"type": "string"},
        "minItems": 1,
        "type": "array",
    }
    assert "title" not in s.input_schema and "title" not in s.input_schema["properties"]["device"]
    assert specs["ping-all"].read_only is True
    assert specs["get_topology"].read_only is True
    assert specs["slow"].input_schema["properties"] == {}


def test_valid_call_runs_and_is_timed(adapter: Recording) -> None:
    r = adapter.call("set_lines", {"device": "r2", "commands": ["a", "b"]})
    assert r.ok and r.text == "2 lines on r2" and r.changed
    assert r.elapsed_s >= 0.05
    assert len(adapter.ran) == 1


def test_unknown_tool(adapter: Recording) -> None:
    r = adapter.call("rm_rf", {"device": "r1"})
    assert r.ok is False and r.error.code is ErrorCode.UNKNOWN_TOOL
    assert r.error.message == (
        "unknown tool 'rm_rf'; tools are: get_topology, ping-all, set_lines, slow, slow_proc"
    )
    assert adapter.ran == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"device": "r1"}, "set_lines: commands: Field required"),
        ({"device": "r1", "commands": "not a list"}, "set_lines: commands: Input should be a valid list"),
        ({"device": "r1", "commands": []}, "set_lines: commands: List should have at least 1 item after validation, not 0"),
        ({"device": "r1", "commands": ["x"], "force": True}, "set_lines: force: unknown argument"),
        ({"device": 7, "commands": ["x"]}, "set_lines: device: Input should be a valid string"),
        ({"commands": [1]}, "set_lines: device: Field required; commands.0: Input should be a valid string"),
        (["r1"], "arguments must be a JSON object, got list"),
        ("device=r1", "arguments must be a JSON object, got str"),
    ],
)
def test_bad_arguments_never_reach_the_handler(adapter: Recording, arguments: object, message: str) -> None:
    r = adapter.call("set_lines", arguments)  # type: ignore[arg-type]
    assert r.ok is False and r.error.code is ErrorCode.INVALID_ARGUMENTS
    assert r.error.message == message
    assert r.text == f"error [invalid_arguments]: {message}"
    assert adapter.ran == []


def test_none_arguments_mean_empty_object(adapter: Recording) -> None:
    r = adapter.call("get_topology", None)
    assert r.ok
    r = adapter.call("set_lines", None)
    assert r.error.code is ErrorCode.INVALID_ARGUMENTS and "device: Field required" in r.error.message


def test_unknown_device(adapter: Recording) -> None:
    r = adapter.call("set_lines", {"device": "r9", "commands": ["x"]})
    assert r.ok is False and r.error.code is ErrorCode.UNKNOWN_DEVICE
    assert r.error.message == "unknown device 'r9'; known: r1, r2, r3"
    assert adapter.ran == []


def test_hosts_are_not_devices(adapter: Recording) -> None:
    r = adapter.call("set_lines", {"device": "h1", "commands": ["x"]})
    assert r.error.code is ErrorCode.UNKNOWN_DEVICE
    assert adapter.ran == []


def test_every_name_in_a_devices_list_is_checked(adapter: Recording) -> None:
    r = adapter.call("ping-all", {"devices": ["r1", "r3", "rX"]})
    assert r.error.code is ErrorCode.UNKNOWN_DEVICE and "'rX'" in r.error.message
    assert adapter.ran == []
    assert adapter.call("ping-all", {"devices": ["r1", "r3"]}).ok


def test_timeouts_become_retriable_timeout_results(adapter: Recording) -> None:
    r = adapter.call("slow", {})
    assert (r.ok, r.error.code, r.error.retriable) == (False, ErrorCode.TIMEOUT, True)
    assert r.error.message == "timeout after 2.5 s (vtysh)"
    r = adapter.call("slow_proc", {})
    assert (r.error.code, r.error.message) == (ErrorCode.TIMEOUT, "timeout after 4 s")


def test_get_topology_whole_and_filtered(adapter: Recording) -> None:
    r = adapter.call("get_topology", {})
    topo = r.data["topology"]
    assert topo["nodes"] == [
        {"name": "r1", "role": "router"},
        {"name": "r2", "role": "router"},
        {"name": "r3", "role": "router"},
        {"name": "h1", "role": "host"},
    ]
    assert topo["links"] == ["r1 eth-r2 <-> r2 eth-r1", "r2 eth-r3 <-> r3 eth-r2", "r1 eth-h1 <-> h1 eth0"]
    # a host's address is shown, a router's is not (FRR is the router's truth)
    assert topo["link_details"][2] == [
        {"node": "r1", "interface": "eth-h1"},
        {"node": "h1", "interface": "eth0", "address": "198.18.1.10/24"},
    ]
    assert r.text.splitlines()[0] == "nodes: r1, r2, r3, h1 (host)"
    r3 = adapter.call("get_topology", {"devices": ["r3"]})
    assert [n["name"] for n in r3.data["topology"]["nodes"]] == ["r3"]
    assert r3.data["topology"]["links"] == ["r2 eth-r3 <-> r3 eth-r2"]
    assert adapter.call("get_topology", {"devices": ["r3", "zz"]}).error.code is ErrorCode.UNKNOWN_DEVICE


def test_every_call_is_one_event(adapter: Recording) -> None:
    adapter.call("set_lines", {"device": "r1", "commands": ["x"]})
    adapter.call("nope", {})
    adapter.call("set_lines", {"device": "r9", "commands": ["x"]})
    adapter.call("set_lines", "bad")  # type: ignore[arg-type]
    calls = adapter.trajectory.calls
    assert [(c["tool"], c["ok"], c["error_code"]) for c in calls] == [
        ("set_lines", True, None),
        ("nope", False, "unknown_tool"),
        ("set_lines", False, "unknown_device"),
        ("set_lines", False, "invalid_arguments"),
    ]
    assert all(c["run_id"] == "run-7" and c["level"] == "a1" for c in calls)
    assert calls[0]["arguments"] == {"device": "r1", "commands": ["x"]}
    assert calls[0]["changed"] is True and calls[0]["elapsed_s"] >= 0.05
    assert calls[3]["arguments"] == {"_raw": "'bad'"}


def test_default_trajectory_carries_the_level() -> None:
    a = Recording(FakeLab(TOPOLOGY))
    a.call("get_topology", {})
    assert a.trajectory.calls[0]["level"] == "a1"
