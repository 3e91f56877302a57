"""Blocklist ablation wrapper, with a fake inner adapter (no lab)."""

from __future__ import annotations

from typing import Any

import pytest

from ani.adapters.blocklist import BlocklistAdapter, BlockRules
from ani.errors import ConfigError, ErrorCode
from ani.protocol import Level, ToolResult, ToolSpec


class FakeAdapter:
    level = Level.A1

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.opened = False
        self.lab = "the-lab"

    def open(self) -> None:
        self.opened = True

    def close(self) -> None:
        self.opened = False

    def tools(self) -> list[ToolSpec]:
        return [ToolSpec(name="update_config", description="x"), ToolSpec(name="execute_validation", description="y")]

    def call(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        self.calls.append((name, arguments))
        return ToolResult.success("inner ran")


@pytest.fixture
def pair():
    inner = FakeAdapter()
    return inner, BlocklistAdapter(inner)


@pytest.mark.parametrize(
    "cmd",
    [
        "no router bgp 64500",
        "no router bgp",
        "no router ospf",
        "clear ip bgp *",
        "clear bgp *",
        "clear bgp ipv4 unicast *",
        "no ip prefix-list PL-TENANTS",
        "no route-map RM-TENANTS-OUT",
        "no neighbor 10.255.0.1",
        # FRR deletes the neighbor for these too (the same command as `no neighbor X`)
        "no neighbor 10.255.0.1 remote-as 64500",
        "no neighbor 10.255.0.1 remote-as internal",
        "no neighbor 10.255.0.1 peer-group PG",
        "no neighbor PG peer-group",
        "no neighbor eth-r2 interface",
        "nft flush ruleset",
        "nft delete table inet fw",
        "nft flush set inet fw tenant_blue",
        "NO ROUTER BGP 64500",
    ],
)
def test_destructive_commands_blocked_before_inner(pair, cmd):
    inner, wrapped = pair
    res = wrapped.call("update_config", {"device": "r1", "commands": ["ip route 10.0.0.0/8 blackhole", cmd]})
    assert not res.ok
    assert res.error.code == ErrorCode.BLOCKED
    assert "commands[1]" in res.error.message and cmd in res.error.message
    assert inner.calls == []
    assert wrapped.blocked_calls == 1


@pytest.mark.parametrize(
    "cmds",
    [
        ["ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24"],
        ["no ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24"],   # one entry, not the list
        ["route-map RM-TENANTS-OUT permit 10", "match ip address prefix-list PL-TENANTS"],
        ["no route-map RM-TENANTS-OUT permit 20"],
        ["router bgp 64500", "neighbor 10.255.0.1 remote-as 64500", "no neighbor 10.255.0.1 route-map X in"],
        ["router bgp 64500", "no neighbor 10.255.0.1 description uplink"],
        ["nft add element inet fw tenant_blue { 198.19.7.0/24 }"],
        ["nft delete element inet fw tenant_blue { 198.19.7.0/24 }"],
        ["interface to-nsite", "no shutdown"],
    ],
)
def test_ordinary_commands_pass_through(pair, cmds):
    inner, wrapped = pair
    res = wrapped.call("update_config", {"device": "r1", "commands": cmds})
    assert res.ok and res.text == "inner ran"
    assert inner.calls == [("update_config", {"device": "r1", "commands": cmds})]


def test_command_argument_and_shell_strings_are_covered(pair):
    inner, wrapped = pair
    for cmd in [
        "vtysh -c 'configure terminal' -c 'no router bgp 64500'",
        "vtysh -c \"conf t\" -c \"no router ospf\"",
        "echo hi; nft flush ruleset",
        "true && nft delete table inet fw",
        "vtysh -c 'clear ip bgp *'",
    ]:
        res = wrapped.call("shell", {"device": "r1", "command": cmd})
        assert res.error is not None and res.error.code == ErrorCode.BLOCKED, cmd
    assert inner.calls == []
    ok = wrapped.call("shell", {"device": "r1", "command": "vtysh -c 'show bgp summary'"})
    assert ok.ok and len(inner.calls) == 1


def test_same_tools_and_delegation(pair):
    inner, wrapped = pair
    assert [t.name for t in wrapped.tools()] == [t.name for t in inner.tools()]
    assert wrapped.level == Level.A1
    assert wrapped.lab == "the-lab"
    with wrapped:
        assert inner.opened
    assert not inner.opened
    # calls without command arguments, and bad argument shapes, go to the inner adapter unchanged
    assert wrapped.call("get_topology", {}).ok
    assert wrapped.call("update_config", None).ok
    assert wrapped.call("update_config", {"device": "r1", "commands": [5]}).ok
    assert len(inner.calls) == 3


def test_custom_blocklist_file(tmp_path):
    f = tmp_path / "bl.yaml"
    f.write_text("blocklist:\n  - {pattern: '^ip route ', reason: no static routes today}\n  - '^interface lo$'\n")
    inner = FakeAdapter()
    wrapped = BlocklistAdapter(inner, str(f))
    res = wrapped.call("update_config", {"device": "r1", "commands": ["ip route 10.0.0.0/8 blackhole"]})
    assert res.error.code == ErrorCode.BLOCKED and "no static routes today" in res.error.message
    # the default rules are not in force with a custom file
    assert wrapped.call("update_config", {"device": "r1", "commands": ["no router bgp 1"]}).ok
    f2 = tmp_path / "list.yaml"
    f2.write_text("- '^no router bgp'\n")
    assert BlocklistAdapter(FakeAdapter(), str(f2)).call(
        "update_config", {"device": "r1", "commands": ["no router bgp 1"]}
    ).error.code == ErrorCode.BLOCKED


def test_bad_blocklist_files(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("blocklist: 3\n")
    with pytest.raises(ConfigError, match="blocklist"):
        BlockRules.load(str(f))
    f.write_text("blocklist: ['(unclosed']\n")
    with pytest.raises(ConfigError, match="unclosed"):
        BlockRules.load(str(f))


def test_registry_wraps(monkeypatch):
    from ani import registry

    class Cli:  # an adapter class whose calls carry CLI lines (create_adapter checks the class)
        blocklist_inspects = True

        def __new__(cls, lab, **kw):
            return FakeAdapter()

    monkeypatch.setattr(registry, "get_adapter_class", lambda name=None: Cli)
    a = registry.create_adapter("a1", object(), blocklist=True)
    assert isinstance(a, BlocklistAdapter)
    assert a.call("update_config", {"device": "r1", "commands": ["no router bgp 1"]}).error.code == ErrorCode.BLOCKED
    b = registry.create_adapter("a1", object(), blocklist=False)
    assert isinstance(b, FakeAdapter)


def test_blocked_calls_are_logged_to_the_inner_trajectory():
    from ani.trajectory import Trajectory

    inner = FakeAdapter()
    inner.trajectory = Trajectory(level="a1")  # type: ignore[attr-defined]
    wrapped = BlocklistAdapter(inner)
    wrapped.call("update_config", {"device": "r1", "commands": ["nft flush ruleset"]})
    ev = inner.trajectory.events[-1]  # type: ignore[attr-defined]
    assert ev["tool"] == "update_config" and ev["error_code"] == "blocked"


class _Routers:
    routers = ["r1", "r2"]


@pytest.mark.parametrize(
    ("name", "arguments", "devices"),
    [
        ("update_config", {"device": "r1", "commands": ["no ip prefix-list PL seq 5"]}, ["r1"]),
        ("update_config", {"devices": ["r2", "r1", "r9"], "commands": ["x"]}, ["r1", "r2"]),
        ("update_config", {"configs": {"r2": ["x"], "e9": ["y"]}}, ["r2"]),
        ("update_config", {"devices": ["r1"], "commands": ["x"], "configs": 12345}, ["r1"]),  # bad type: no crash
        ("update_config", {"device": "r1"}, []),                     # no command: nothing to judge
        ("execute_validation", {"device": "r1", "command": "show run"}, []),  # read-only tool
    ],
)
def test_the_routers_whose_effects_are_judged(name, arguments, devices):
    # issue 23: the wrapper reads these routers' FRR config before and after the call
    inner = FakeAdapter()
    inner.lab = _Routers()
    inner.tools = lambda: [ToolSpec(name="update_config", description="x"),
                           ToolSpec(name="execute_validation", description="y", read_only=True)]
    assert BlocklistAdapter(inner)._effect_devices(name, arguments) == devices


def test_no_effects_are_judged_above_a1():
    inner = FakeAdapter()
    inner.level = Level.A2
    inner.lab = _Routers()
    assert BlocklistAdapter(inner)._effect_devices("update_config", {"device": "r1", "commands": ["x"]}) == []


def test_a_blocklist_that_is_no_platform_and_no_file_says_what_it_takes():
    """``ani.connect(..., blocklist='yes')`` answered 'a1 options (none): FileNotFoundError:
    adapters/yes.yaml not found' (outside check of issue 23 §6)."""
    from ani.errors import ConfigError

    with pytest.raises(ConfigError) as e:
        BlockRules.load("yes")
    msg = str(e.value)
    assert msg.startswith("blocklist 'yes': neither a platform's name") and "FileNotFoundError" not in msg
    assert BlockRules.load("frr").rules and BlockRules.load(None).rules
