"""A1 adapter without a lab: tool schemas (NetConfBench shapes), refusals that touch nothing,
output capping, and a fuzz of the planner. The fake lab records every access."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ani.adapters.a1 import A1Adapter
from ani.adapters.allowlist import Refused, plan_config
from ani.adapters.platform import load_platform
from ani.adapters.sandbox import truncation_marker
from ani.errors import ErrorCode
from ani.protocol import Level


class _Topo:
    routers = {"r1": None, "r2": None}
    nodes = ["r1", "r2"]
    links: list = []

    def is_router(self, n: str) -> bool:
        return n in self.routers


class RecordingLab:
    """Any method call on the lab is recorded and fails the test if it would do I/O.

    Hand-written on purpose (issue 28: one of the few lab fakes not on ``ani.testing.FakeLab``):
    every attribute, even one no lab has, is a method that fails the test, so code that probes
    the lab (``hasattr(lab, "node_argv")``) and then sends is caught; FakeLab answers instead.
    ``topology``: the lab's (default routers r1, r2); ``locks``: ``{router: NETCONF session}``
    holding the lock on the running datastore (``netconf_lock`` answers them and sends nothing;
    without it ``netconf_lock`` is one more method that fails)."""

    def __init__(self, topology: Any = None, locks: dict[str, int] | None = None) -> None:
        self.topology = topology if topology is not None else _Topo()
        self.locks = locks
        self.touched: list[str] = []

    def __getattr__(self, name: str) -> Any:
        if name == "netconf_lock" and self.locks is not None:
            return self._netconf_lock

        def f(*a: Any, **k: Any) -> Any:
            self.touched.append(name)
            raise AssertionError(f"lab.{name} called: something was sent")

        return f

    def _netconf_lock(self, router: str, target: str = "running") -> Any:
        from ani.lab.netconf import NetconfLock

        session = (self.locks or {}).get(router) if target == "running" else None
        return None if session is None else NetconfLock(router, target, session, 1764430000.0, 4400)


@pytest.fixture
def pair():
    lab = RecordingLab()
    return lab, A1Adapter(lab)


def test_tools_and_schemas(pair):
    _lab, a = pair
    assert a.level == Level.A1
    specs = {t.name: t for t in a.tools()}
    assert set(specs) == {
        "get_topology", "get_running_config", "execute_validation", "update_config",
        "snapshot", "rollback", "list_snapshots",
    }
    upd = specs["update_config"].input_schema
    assert upd["required"] == ["device", "commands"]
    assert upd["properties"]["commands"]["type"] == "array"
    assert upd["properties"]["commands"]["items"] == {"type": "string"}
    ev = specs["execute_validation"].input_schema
    assert ev["required"] == ["device", "command"] and ev["properties"]["command"]["type"] == "string"
    assert specs["execute_validation"].read_only and specs["get_running_config"].read_only
    assert specs["update_config"].destructive and specs["rollback"].destructive
    assert specs["rollback"].input_schema["required"] == ["device", "snapshot_id"]


@pytest.mark.parametrize(
    "cmd",
    [
        "show ip route\nconfigure terminal\nno router bgp 64501",
        "show ip route\rconfigure terminal\rno router bgp 64501",
        "show ip route; no router bgp 64501",
        "show ip route && no router bgp 64501",
        "show ip route\u2028no router bgp 64501",
    ],
)
def test_case7_refused_without_touching_the_lab(pair, cmd):
    lab, a = pair
    res = a.call("execute_validation", {"device": "r1", "command": cmd})
    assert res.error.code == ErrorCode.NOT_ALLOWED
    res = a.call("update_config", {"device": "r1", "commands": ["ip route 10.0.0.0/8 blackhole", cmd]})
    assert res.error.code == ErrorCode.NOT_ALLOWED
    assert res.data["results"][0]["status"] == "not_run"
    assert res.data["results"][1]["status"] == "error"
    assert lab.touched == [] and a._sessions == {}


def test_bad_arguments_and_unknown_device(pair):
    lab, a = pair
    assert a.call("update_config", {"device": "r1", "commands": "ip route 10.0.0.0/8 blackhole"}).error.code == ErrorCode.INVALID_ARGUMENTS
    assert a.call("update_config", {"device": "r1", "commands": []}).error.code == ErrorCode.INVALID_ARGUMENTS
    assert a.call("execute_validation", {"device": "r1"}).error.code == ErrorCode.INVALID_ARGUMENTS
    assert a.call("execute_validation", {"device": "h9", "command": "show ip route"}).error.code == ErrorCode.UNKNOWN_DEVICE
    assert a.call("rollback", {"device": "r1", "snapshot_id": "r1-s1"}).error.code == ErrorCode.UNKNOWN_SNAPSHOT
    assert a.call("list_snapshots", {"device": "r2"}).data == {"snapshots": []}
    assert lab.touched == []


def test_a1_caps_output_with_the_shared_marker(monkeypatch):
    a = A1Adapter(RecordingLab(), options={"max_output_bytes": 64})
    monkeypatch.setattr(a, "_cli", lambda *_a, **_k: ("x" * 100, False))
    res = a.call("get_running_config", {"device": "r1"})
    assert res.ok and res.data["truncated"] is True and res.data["bytes"] == 100
    assert res.data["running_config"] == "x" * 64 + truncation_marker(36, 64)


_P = load_platform()
_LINES = st.sampled_from([
    "router bgp 64500", "neighbor 10.0.0.1 remote-as 64500", "address-family ipv4 unicast",
    "exit-address-family", "exit", "end", "interface eth0", "ip address 10.0.0.1/24",
    "route-map RM permit 10", "match ip address prefix-list PL", "ip prefix-list PL seq 5 permit 10.0.0.0/8",
    "router ospf", "network 10.0.0.0/8 area 0", "redistribute connected", "! c",
    "nft add element inet fw s { 10.0.0.0/8 }", "clear ip bgp *", "configure terminal",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_LINES, st.text(max_size=30)), max_size=12))
def test_planner_never_crashes_and_plans_are_consistent(cmds):
    try:
        steps = plan_config(_P, cmds)
    except Refused as exc:
        assert 0 <= exc.index <= len(cmds)
        return
    assert [s.index for s in steps] == list(range(len(cmds)))
    for s in steps:
        assert s.kind in ("cli", "exec", "nft", "noop")
        assert all(n == "exit" for n in s.nav)


def test_a_netconf_lock_on_running_refuses_update_config_and_rollback_sending_nothing():
    lab = RecordingLab(locks={"r1": 7})  # r1's running datastore is locked by NETCONF session 7
    a = A1Adapter(lab)
    res = a.call("update_config", {"device": "r1", "commands": ["ip route 10.0.0.0/8 blackhole"]})
    assert res.error.code == ErrorCode.LOCKED and res.error.retriable
    assert "NETCONF session 7 holds the lock on r1's running datastore" in res.error.message
    assert res.data["netconf_session"] == 7 and not res.changed
    from ani.device.state import RouterState

    snap = a.snapshots.take("r1", state=RouterState(frr="", nft=""))  # a snapshot taken earlier
    res = a.call("rollback", {"device": "r1", "snapshot_id": snap.id})
    assert res.error.code == ErrorCode.LOCKED
    assert lab.touched == [] and a._sessions == {}
    # allowlist refusals still come first (nothing to lock against)
    res = a.call("update_config", {"device": "r1", "commands": ["write memory"]})
    assert res.error.code == ErrorCode.NOT_ALLOWED
