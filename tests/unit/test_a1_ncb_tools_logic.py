"""A1's optional tools without a lab: the options that offer them, the strict argument models
and their messages, refusals that touch nothing, the keys and bounds of the calls, the status
logic over a fake lab, the tool kinds and the MCP listing. The real-lab behaviour (all or
nothing across routers, a frozen daemon) is in tests/integration/test_a1_ncb_tools.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

import pytest

from test_allowlist_adapter import RecordingLab as _RecordingLab

from ani.adapters.a1 import A1Adapter
from ani.adapters.a1_args import ApplyConfigArgs, BatchArgs, StatusArgs, config_lines
from ani.adapters.device_status import format_status, read_status
from ani.campaign.metrics import compute_metrics, tool_kind
from ani.errors import ConfigError, ErrorCode, LabGone
from ani.lab.proc import ExecResult
from ani.lab.topology import parse_topology
from ani.mcp.cli import parse_options
from ani.mcp.server import AdapterTools
from ani.testing import FakeLab

EXTRA = ["batch_configure_devices", "check_device_status"]
CORE = {"get_topology", "get_running_config", "execute_validation", "update_config", "snapshot", "rollback",
        "list_snapshots"}


#: routers r1 (zebra, staticd, bgpd) -- r2 (zebra, staticd), host h1 behind r1
TOPOLOGY = {
    "name": "a1-ncb",
    "routers": {"r1": {"daemons": ["bgpd"], "config": "hostname r1\n"}, "r2": {"config": "hostname r2\n"}},
    "hosts": {"h1": {"gateway": "198.18.1.1"}},
    "links": [
        {"a": {"node": "r1", "ifname": "eth-r2"}, "b": {"node": "r2", "ifname": "eth-r1"}},
        {"a": {"node": "r1", "ifname": "eth-h1"}, "b": {"node": "h1", "ifname": "eth0", "address": "198.18.1.10/24"}},
    ],
}


def RecordingLab() -> _RecordingLab:  # noqa: N802 - test_allowlist_adapter's lab that fails on any I/O
    """test_allowlist_adapter's lab that fails on any I/O, with routers that have daemons and a host."""
    return _RecordingLab(parse_topology(TOPOLOGY, source="test"))


def a1(lab: Any = None, **options: Any) -> A1Adapter:
    return A1Adapter(lab if lab is not None else RecordingLab(), options=options)


def names(adapter: A1Adapter) -> set[str]:
    return {t.name for t in adapter.tools()}


# -- options ---------------------------------------------------------------------------------


def test_default_tools_are_unchanged() -> None:
    assert names(a1()) == CORE


def test_extra_tools_and_the_netconfarena_shape() -> None:
    assert names(a1(extra_tools=EXTRA)) == CORE | set(EXTRA)
    assert names(a1(extra_tools=["check_device_status"])) == CORE | {"check_device_status"}
    assert names(a1(apply_config_shape="netconfarena")) == CORE - {"update_config"} | {"apply_config"}
    both = a1(extra_tools=EXTRA, apply_config_shape="netconfarena")
    assert names(both) == CORE - {"update_config"} | {"apply_config"} | set(EXTRA)


def test_a_tool_not_offered_is_an_unknown_tool() -> None:
    lab = RecordingLab()
    res = a1(lab).call("apply_config", {"configs": {"r1": "ip route 10.0.0.0/8 blackhole"}})
    assert res.error.code == ErrorCode.UNKNOWN_TOOL and "update_config" in res.error.message
    res = a1(lab, apply_config_shape="netconfarena").call(
        "update_config", {"device": "r1", "commands": ["ip route 10.0.0.0/8 blackhole"]})
    assert res.error.code == ErrorCode.UNKNOWN_TOOL and "apply_config" in res.error.message
    assert lab.touched == []


@pytest.mark.parametrize(("options", "words"), [
    ({"extra_tools": ["batch_configure"]}, ["extra_tools.0", "'batch_configure_devices' or 'check_device_status'"]),
    ({"extra_tools": "check_device_status"}, ["extra_tools", "valid list"]),
    ({"extra_tools": ["check_device_status", "check_device_status"]}, ["extra_tools", "more than once"]),
    ({"apply_config_shape": "arena"}, ["apply_config_shape", "'netconfbench' or 'netconfarena'"]),
])
def test_bad_options_raise_config_error_naming_them(options: dict, words: list[str]) -> None:
    with pytest.raises(ConfigError) as exc:
        A1Adapter(None, options=options)
    assert str(exc.value).startswith("a1 options: ")
    for w in words:
        assert w in str(exc.value)


def test_the_mcp_server_offers_them_from_its_command_line_options() -> None:
    opts = parse_options(["extra_tools=[batch_configure_devices, check_device_status]",
                          "apply_config_shape=netconfarena"])
    bridge = AdapterTools(A1Adapter(None, options=opts))
    listed = {t.name: t for t in bridge.list_tools()}
    assert set(EXTRA) | {"apply_config"} <= set(listed) and "update_config" not in listed
    assert listed["check_device_status"].annotations.read_only_hint is True
    for name in ("batch_configure_devices", "apply_config"):
        ann = listed[name].annotations
        assert ann.read_only_hint is False and ann.destructive_hint is True
    assert listed["apply_config"].model_dump(by_alias=True)["inputSchema"]["required"] == ["configs"]


# -- argument models -------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "message"), [
    ({}, "arguments: give devices + commands (the same commands on every device) or configs"),
    ({"devices": ["r1"]}, "arguments: commands: Field required (with devices)"),
    ({"commands": ["x"]}, "arguments: devices: Field required (with commands)"),
    ({"devices": [], "commands": ["x"]}, "arguments: devices: is empty"),
    ({"devices": ["r1"], "commands": []}, "arguments: commands: is empty"),
    ({"devices": ["r1", "r2", "r1"], "commands": ["x"]}, "devices: named more than once: 'r1'"),
    ({"configs": {}}, "configs: is empty"),
    ({"configs": {"r1": ["x"], "r2": []}}, "configs: empty command list for 'r2'"),
    ({"devices": ["r1"], "commands": ["x"], "configs": {"r1": ["x"]}}, "either devices + commands or configs, not both"),
    ({"configs": {"r1": "ip route 10.0.0.0/8 blackhole"}}, "configs.r1: Input should be a valid list"),
    ({"devices": "r1", "commands": ["x"]}, "devices: Input should be a valid list"),
    ({"devices": ["r1"], "commands": ["x"], "force": True}, "force: unknown argument"),
    ({"device_ips": ["10.0.0.1"], "commands": ["x"]}, "device_ips: address devices by name: 'devices'"),
    ({"devices": ["r1"], "commands": ["x"], "credential_id": "c1"}, "credential_id: not needed"),
])
def test_batch_arguments_refused_with_the_field(args: dict, message: str) -> None:
    lab = RecordingLab()
    res = a1(lab, extra_tools=EXTRA).call("batch_configure_devices", args)
    assert res.error.code == ErrorCode.INVALID_ARGUMENTS
    assert res.error.message.startswith("batch_configure_devices: ")
    assert message in res.error.message
    assert lab.touched == []


@pytest.mark.parametrize(("args", "message"), [
    ({"configs": {}}, "configs: is empty"),
    ({"configs": {"r1": "\n  \n"}}, "configs: no configuration lines for 'r1'"),
    ({"configs": {"r1": ["ip route 10.0.0.0/8 blackhole"]}}, "configs.r1: Input should be a valid string"),
    ({"config": {"r1": "x"}}, "configs: Field required"),
])
def test_apply_config_arguments_refused_with_the_field(args: dict, message: str) -> None:
    lab = RecordingLab()
    res = a1(lab, apply_config_shape="netconfarena").call("apply_config", args)
    assert res.error.code == ErrorCode.INVALID_ARGUMENTS and message in res.error.message, res.error.message
    assert lab.touched == []


@pytest.mark.parametrize(("args", "message"), [
    ({"metrics": ["cpu", "disk"]}, "metrics.1: Input should be 'cpu', 'memory' or 'interface'"),
    ({"devices": ["r1", "r1"]}, "devices: named more than once: 'r1'"),
    ({"device_ip": "10.0.0.1", "metrics": ["cpu"]}, "device_ip: address devices by name"),
    ({"devices": "r1"}, "devices: Input should be a valid list"),
])
def test_status_arguments_refused_with_the_field(args: dict, message: str) -> None:
    res = a1(extra_tools=EXTRA).call("check_device_status", args)
    assert res.error.code == ErrorCode.INVALID_ARGUMENTS and message in res.error.message, res.error.message


def test_models_plan_in_the_order_given() -> None:
    assert BatchArgs(devices=["r2", "r1"], commands=["a", "b"]).plan() == {"r2": ["a", "b"], "r1": ["a", "b"]}
    assert BatchArgs(configs={"r2": ["a"], "r1": ["b"]}).plan() == {"r2": ["a"], "r1": ["b"]}
    assert list(ApplyConfigArgs(configs={"r2": "a", "r1": "b\nc"}).plan().items()) == [("r2", ["a"]), ("r1", ["b", "c"])]
    assert StatusArgs().metrics == ["interface"] and StatusArgs().devices == []


def test_config_lines_split_newlines_and_drop_blank_lines() -> None:
    text = "configure terminal\r\nrouter bgp 64501\n neighbor 10.0.0.2 remote-as 64502\n\n   \nend\n"
    assert config_lines(text) == ["configure terminal", "router bgp 64501", " neighbor 10.0.0.2 remote-as 64502", "end"]
    assert config_lines("") == []


# -- names, refusals, keys -------------------------------------------------------------------


def test_unknown_devices_in_any_shape_are_named_with_the_known_ones() -> None:
    lab = RecordingLab()
    a = a1(lab, extra_tools=EXTRA, apply_config_shape="netconfarena")
    for tool, args in [
        ("batch_configure_devices", {"configs": {"r1": ["x"], "R2": ["x"]}}),
        ("batch_configure_devices", {"devices": ["r1", "R2"], "commands": ["x"]}),
        ("apply_config", {"configs": {"R2": "x"}}),
        ("check_device_status", {"devices": ["R2"]}),
    ]:
        res = a.call(tool, args)
        assert res.error.code == ErrorCode.UNKNOWN_DEVICE, (tool, res.text)
        assert res.error.message == "unknown device 'R2'; did you mean 'r2'? (names are case-sensitive); known: r1, r2"
    res = a.call("apply_config", {"configs": {"h1": "x"}})
    assert res.error.message == "'h1' is a host, not a router; known routers: r1, r2"
    assert lab.touched == []


def test_an_allowlist_refusal_on_any_device_touches_no_device() -> None:
    lab = RecordingLab()
    res = a1(lab, extra_tools=EXTRA).call("batch_configure_devices", {"configs": {
        "r1": ["ip route 10.0.0.0/8 blackhole"], "r2": ["ip route 10.0.0.0/8 blackhole", "write memory"]}})
    assert res.error.code == ErrorCode.NOT_ALLOWED
    assert res.error.message.startswith("r2: command 2 'write memory'")
    assert res.error.message.endswith("; nothing was sent to any device")
    assert res.data["failed_device"] == "r2" and res.data["failed_index"] == 1
    assert res.data["devices"]["r1"]["status"] == "not_run"
    assert res.data["devices"]["r2"]["results"][1]["status"] == "error"
    assert lab.touched == []


def test_keys_and_bounds() -> None:
    a = a1(extra_tools=EXTRA, apply_config_shape="netconfarena", call_timeout_s=42, command_timeout_s=3)
    batch = BatchArgs(configs={"r2": ["x"], "r1": ["y"]})
    assert a.call_keys("batch_configure_devices", batch) == ["r2", "r1"]
    assert a.call_keys("batch_configure_devices", BatchArgs(devices=["r1", "r2"], commands=["x"])) == ["r1", "r2"]
    assert a.call_keys("apply_config", ApplyConfigArgs(configs={"r1": "x"})) == ["r1"]
    assert a.call_keys("check_device_status", StatusArgs(devices=["r1"])) == []  # waits for no call
    assert a.call_bound_s("batch_configure_devices", batch) == 42
    assert a.call_bound_s("apply_config", batch) == 42
    assert a.call_bound_s("check_device_status", batch) == 3


# -- status logic over a fake lab ------------------------------------------------------------

IP_LINK = ('[{"ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "operstate": "UNKNOWN",'
           ' "stats64": {"rx": {"packets": 0, "errors": 0, "dropped": 0}, "tx": {"packets": 0, "errors": 0, "dropped": 0}}},'
           ' {"ifname": "eth-r2", "flags": ["BROADCAST"], "operstate": "DOWN",'
           ' "stats64": {"rx": {"packets": 7, "errors": 1, "dropped": 0}, "tx": {"packets": 9, "errors": 0, "dropped": 2}}}]')


def StatusLab(pids: dict[str, dict[str, int]], exec_result: Any = None) -> FakeLab:  # noqa: N802
    """A FakeLab on TOPOLOGY whose daemons run with ``pids`` (``{router: {daemon: pid}}``; a
    daemon not named there is dead) and whose every ``exec`` gives ``exec_result`` (an
    ExecResult, or an exception it raises; default: IP_LINK)."""
    lab = FakeLab(TOPOLOGY)
    for router in lab.routers:
        for daemon in lab.topology.routers[router].daemons:
            if daemon in pids.get(router, {}):
                lab.set_daemon_pid(router, daemon, pids[router][daemon])
            else:
                lab.kill_daemon(router, daemon)
    answer = exec_result if exec_result is not None else ExecResult(0, IP_LINK, "", False, 0.01)

    def run(node: str, argv: list[str]) -> ExecResult:
        if isinstance(answer, Exception):
            raise answer
        return answer

    lab.on_exec(run)
    return lab


def execs(lab: FakeLab) -> list[list[str]]:
    return [argv for _node, argv in lab.calls]


@pytest.fixture
def stopped_child():
    """A child process stopped with SIGSTOP (what the frozen_router fault does to a daemon)."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    os.kill(p.pid, signal.SIGSTOP)
    try:
        yield p.pid
    finally:
        p.kill()
        p.wait()


def _wait_stopped(pid: int) -> None:
    import psutil

    for _ in range(200):
        if psutil.Process(pid).status() == psutil.STATUS_STOPPED:
            return
        import time

        time.sleep(0.01)


def test_status_up_degraded_and_the_states_of_each_daemon(stopped_child: int) -> None:
    _wait_stopped(stopped_child)
    me = os.getpid()
    lab = StatusLab({"r1": {"zebra": me, "staticd": me, "bgpd": stopped_child}, "r2": {"zebra": me}})
    r1 = read_status(lab, "r1", ["interface", "cpu", "memory"])
    assert r1["status"] == "degraded" and r1["reachable"] is True
    assert r1["daemons"]["bgpd"]["state"] == "frozen" and r1["daemons"]["bgpd"]["pid"] == stopped_child
    assert r1["daemons"]["zebra"]["state"] == "running" and r1["daemons"]["zebra"]["rss_bytes"] > 0
    assert r1["daemons"]["zebra"]["cpu_s"] >= 0
    assert [i["name"] for i in r1["interfaces"]] == ["lo", "eth-r2"]
    eth = r1["interfaces"][1]
    assert eth == {"name": "eth-r2", "admin_up": False, "oper_state": "DOWN", "rx_packets": 7, "tx_packets": 9,
                   "rx_errors": 1, "tx_errors": 0, "rx_dropped": 0, "tx_dropped": 2}
    assert execs(lab) == [["ip", "-j", "-s", "link", "show"]]
    text = format_status(r1)
    assert text.startswith("r1: degraded (reachable); daemons: zebra running (cpu ")
    assert "bgpd FROZEN (stopped)" in text and "  eth-r2 down/DOWN rx 7 tx 9 pkts, 1/0 errors" in text

    r2 = read_status(lab, "r2", [])
    assert r2["daemons"] == {"zebra": {"state": "running", "pid": me}, "staticd": {"state": "not_running", "pid": None}}
    assert r2["status"] == "degraded" and "interfaces" not in r2


def test_status_all_running_is_up() -> None:
    me = os.getpid()
    st = read_status(StatusLab({"r2": {"zebra": me, "staticd": me}}), "r2", [])
    assert st["status"] == "up" and "cpu_s" not in st["daemons"]["zebra"] and "rss_bytes" not in st["daemons"]["zebra"]


def test_status_down_when_unreachable_or_nothing_runs() -> None:
    me = os.getpid()
    gone = read_status(StatusLab({"r2": {"zebra": me, "staticd": me}}, LabGone("x1", "no enter")), "r2")
    assert gone["status"] == "down" and gone["reachable"] is False and "x1" in gone["detail"]
    assert "interfaces" not in gone
    hung = read_status(StatusLab({"r2": {"zebra": me, "staticd": me}}, ExecResult(-9, "", "", True, 10.0)), "r2",
                       timeout_s=2)
    assert hung["status"] == "down" and hung["detail"] == "no answer from the router's namespace within 2 s"
    dead = read_status(StatusLab({}), "r2")
    assert dead["status"] == "down" and dead["reachable"] is True
    assert format_status(dead).startswith("r2: down (reachable); daemons: zebra NOT RUNNING, staticd NOT RUNNING")


def test_check_device_status_covers_every_router_by_default() -> None:
    me = os.getpid()
    lab = StatusLab({"r1": {"zebra": me, "staticd": me, "bgpd": me}, "r2": {"zebra": me, "staticd": me}})
    res = a1(lab, extra_tools=EXTRA).call("check_device_status", {})
    assert res.ok and not res.changed
    assert list(res.data["devices"]) == ["r1", "r2"] and res.data["metrics"] == ["interface"]
    assert all(st["status"] == "up" for st in res.data["devices"].values())


# -- tool kinds ------------------------------------------------------------------------------


def test_tool_kinds_of_the_new_tools() -> None:
    assert tool_kind("a1", "check_device_status") == "validation"
    assert tool_kind("a1", "batch_configure_devices") == "update"
    assert tool_kind("a1", "apply_config") == "update"
    events = [
        {"event": "tool_call", "tool": "check_device_status", "arguments": {}, "ok": True},
        {"event": "tool_call", "tool": "apply_config", "arguments": {"configs": {"r1": "x"}}, "ok": True},
        {"event": "tool_call", "tool": "batch_configure_devices", "arguments": {"configs": {"r1": ["x"]}}, "ok": False},
    ]
    m = compute_metrics(events, "a1", stop_reason="submitted", submitted=True, success=True)
    assert m.action_counts["validation"] == 1 and m.action_counts["update"] == 2 and m.action_counts["null"] == 0
    assert m.error_actions == 1 and m.completion_mode == "correct_submission"


# -- the blocklist ablation sees the per-device shapes ---------------------------------------


def test_the_blocklist_refuses_a_blocked_line_inside_configs() -> None:
    from ani.adapters.blocklist import BlocklistAdapter

    lab = RecordingLab()
    a = BlocklistAdapter(a1(lab, extra_tools=EXTRA, apply_config_shape="netconfarena"))
    res = a.call("batch_configure_devices", {"configs": {"r1": ["ip route 10.0.0.0/8 blackhole"],
                                                         "r2": ["router bgp 64502", "no router bgp 64502"]}})
    assert res.error.code == ErrorCode.BLOCKED and res.error.message.startswith("configs.r2[1] 'no router bgp 64502'")
    res = a.call("apply_config", {"configs": {"r1": "configure terminal\nno router bgp 64501\nend"}})
    assert res.error.code == ErrorCode.BLOCKED and res.data["argument"] == "configs.r1 line 2"
    res = a.call("batch_configure_devices", {"devices": ["r1", "r2"], "commands": ["no router bgp 64501"]})
    assert res.error.code == ErrorCode.BLOCKED and res.data["argument"] == "commands[0]"
    assert lab.touched == [] and a.blocked_calls == 3
