"""A1's optional tools on real FRR (tests/data/a1_pair.yaml: r1 ospfd + bgpd AS 64501, r2 bgpd
AS 64502): ``batch_configure_devices`` and ``apply_config`` are all or nothing across devices
(a line FRR refuses on one router rolls back both), ``check_device_status`` shows a frozen
daemon without blocking. Every state is read out of band through the lab, never through the
adapter. One lab for the module; each test uses its own prefix-list names. Every test that drives
A1 runs over both transports of its CLI session (local vtysh and the router's SSH)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from ani.adapters.a1 import A1Adapter
from ani.errors import ErrorCode

pytestmark = pytest.mark.integration
LAB_SSH = True  # conftest's make_lab / module_lab: the tests use the lab's SSH server

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a1_pair.yaml", "ncbt", False

EXTRA = {"extra_tools": ["batch_configure_devices", "check_device_status"]}
#: passes the allowlist, FRR refuses it (no such peer-group)
REJECTED = "neighbor 10.0.12.9 peer-group PG-NOPE"


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture(params=["local", "ssh"])
def transport(request) -> str:
    return request.param


@pytest.fixture
def a1(lab, open_adapter, transport):
    return open_adapter(A1Adapter(lab, options={**EXTRA, "transport": transport}))


def running(lab, router: str) -> str:
    text = lab.running_config(router)
    return text[text.index("Current configuration:"):] if "Current configuration:" in text else text


def test_a_line_refused_on_the_second_router_rolls_back_both(lab, a1):
    before = {r: running(lab, r) for r in ("r1", "r2")}
    res = a1.call("batch_configure_devices", {"configs": {
        "r1": ["ip prefix-list PL-NCB1 seq 5 permit 192.0.2.0/24", "router bgp 64501",
               "neighbor 10.0.12.9 remote-as 64509"],
        "r2": ["ip prefix-list PL-NCB1 seq 5 permit 192.0.2.0/24", "router bgp 64502", REJECTED],
    }})
    assert not res.ok and res.error.code == ErrorCode.ROLLED_BACK, res.text
    assert res.error.message.startswith(f"r2: command 3 {REJECTED!r} failed")
    assert "every device was rolled back" in res.error.message
    devs = res.data["devices"]
    assert devs["r1"]["status"] == "undone" and devs["r1"]["rolled_back"] is True
    assert [r["status"] for r in devs["r1"]["results"]] == ["success"] * 3
    assert all(r.get("undone") for r in devs["r1"]["results"][::2])  # the statements, not the block line
    assert devs["r2"]["status"] == "failed"
    assert [r["status"] for r in devs["r2"]["results"]] == ["success", "success", "error"]
    assert res.data["failed_device"] == "r2" and res.data["failed_index"] == 2 and res.changed is False
    assert {r: running(lab, r) for r in ("r1", "r2")} == before


def test_a_failure_on_the_first_router_sends_nothing_to_the_next(lab, a1):
    before = {r: running(lab, r) for r in ("r1", "r2")}
    res = a1.call("batch_configure_devices", {"configs": {
        "r1": ["ip prefix-list PL-NCB2 seq 5 permit 192.0.2.0/24", "router bgp 64501", REJECTED],
        "r2": ["ip prefix-list PL-NCB2 seq 5 permit 192.0.2.0/24"],
    }})
    assert res.error.code == ErrorCode.ROLLED_BACK, res.text
    assert res.data["devices"]["r2"]["status"] == "not_run"
    assert res.data["devices"]["r2"]["results"] == [
        {"command": "ip prefix-list PL-NCB2 seq 5 permit 192.0.2.0/24", "status": "not_run"}]
    assert "not sent to r2" in res.error.message
    assert {r: running(lab, r) for r in ("r1", "r2")} == before


def test_an_allowlist_refusal_sends_nothing_to_any_router(lab, a1):
    before = {r: running(lab, r) for r in ("r1", "r2")}
    snaps = {r: len(a1.call("list_snapshots", {"device": r}).data["snapshots"]) for r in ("r1", "r2")}
    res = a1.call("batch_configure_devices", {"configs": {
        "r1": ["ip prefix-list PL-NCB3 seq 5 permit 192.0.2.0/24"],
        "r2": ["ip prefix-list PL-NCB3 seq 5 permit 192.0.2.0/24", "write memory"],
    }})
    assert res.error.code == ErrorCode.NOT_ALLOWED
    assert res.error.message.startswith("r2: command 2 'write memory'")
    assert res.error.message.endswith("nothing was sent to any device")
    assert res.data["devices"]["r2"]["status"] == "refused" and res.data["devices"]["r1"]["status"] == "not_run"
    assert {r: len(a1.call("list_snapshots", {"device": r}).data["snapshots"]) for r in ("r1", "r2")} == snaps
    assert {r: running(lab, r) for r in ("r1", "r2")} == before


def test_the_drafts_shape_sends_the_same_commands_to_every_router(lab, a1):
    line = f"ip prefix-list PL-NCB4-{a1.transport} seq 5 permit 198.51.100.0/24"
    res = a1.call("batch_configure_devices", {"devices": ["r2", "r1"], "commands": [line]})
    assert res.ok and res.changed, res.text
    assert list(res.data["devices"]) == ["r2", "r1"]  # the order given
    for r in ("r1", "r2"):
        assert line in running(lab, r)
        assert res.data["devices"][r]["status"] == "applied" and res.data["devices"][r]["changed"] is True
        assert f"+{line}" in res.data["devices"][r]["diff"]
    assert res.text.startswith("r2:\n  1. [success] " + line)


def test_apply_config_netconfarena_shape(lab, open_adapter, transport):
    a = open_adapter(A1Adapter(lab, options={"apply_config_shape": "netconfarena", "transport": transport}))
    names = {t.name for t in a.tools()}
    assert "apply_config" in names and "update_config" not in names
    line = f"ip prefix-list PL-NCB5-{transport} seq 5 permit 203.0.113.0/24"
    res = a.call("apply_config", {"configs": {"r1": f"configure terminal\n{line}\nend\n", "r2": f"\n{line}\n"}})
    assert res.ok and res.changed, res.text
    r1 = res.data["devices"]["r1"]["results"]
    assert [r["command"] for r in r1] == ["configure terminal", line, "end"]
    assert r1[0]["message"] == r1[2]["message"] == "configuration mode is managed by the adapter"
    assert [r["command"] for r in res.data["devices"]["r2"]["results"]] == [line]
    for r in ("r1", "r2"):
        assert line in running(lab, r)

    before = {r: running(lab, r) for r in ("r1", "r2")}
    bad = a.call("apply_config", {"configs": {
        "r1": "ip prefix-list PL-NCB6 seq 5 permit 203.0.113.0/24",
        "r2": f"router bgp 64502\n{REJECTED}\n"}})
    assert bad.error.code == ErrorCode.ROLLED_BACK, bad.text
    assert {r: running(lab, r) for r in ("r1", "r2")} == before


def test_device_status_shows_a_frozen_daemon(lab, a1):
    res = a1.call("check_device_status", {"metrics": ["interface", "cpu", "memory"]})
    assert res.ok, res.text
    st = res.data["devices"]
    assert set(st) == {"r1", "r2"}
    assert st["r1"]["status"] == "up" and st["r1"]["reachable"] is True
    assert set(st["r1"]["daemons"]) == {"zebra", "staticd", "ospfd", "bgpd"}
    assert all(d["state"] == "running" and d["rss_bytes"] > 0 and d["cpu_s"] >= 0 for d in st["r1"]["daemons"].values())
    eth = {i["name"]: i for i in st["r1"]["interfaces"]}["eth-r2"]
    assert eth["admin_up"] and eth["oper_state"] == "UP" and eth["rx_packets"] > 0  # BGP keepalives

    pid = lab.daemon_pids("r2")["bgpd"]
    os.kill(pid, signal.SIGSTOP)
    # SIGSTOP takes effect when the process is next scheduled (a loaded machine: later)
    deadline = time.monotonic() + 10.0
    while psutil.Process(pid).status() != psutil.STATUS_STOPPED and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        frozen = a1.call("check_device_status", {"devices": ["r2"], "metrics": []})
    finally:
        os.kill(pid, signal.SIGCONT)
    assert frozen.ok, frozen.text
    r2 = frozen.data["devices"]["r2"]
    assert r2["status"] == "degraded" and r2["reachable"] is True
    assert r2["daemons"]["bgpd"] == {"state": "frozen", "pid": pid}
    assert r2["daemons"]["zebra"]["state"] == "running"
    assert "interfaces" not in r2 and list(frozen.data["devices"]) == ["r2"]
    assert "bgpd FROZEN (stopped)" in frozen.text

    again = a1.call("check_device_status", {"devices": ["r2"]})
    assert again.data["devices"]["r2"]["status"] == "up", again.text


def test_the_docs_example_runs_as_written(run_doc_example):
    out = run_doc_example("protocol.md", "a1-extra-tools").splitlines()
    assert out[0] == "True True ['applied', 'applied']"
    assert out[1] == "False rolled_back undone e2"
    assert out[2] == "True"
    assert out[3].startswith("e1: up (reachable); daemons: zebra running, staticd running")
    assert out[-1] == "True ['success', 'success', 'success']"
