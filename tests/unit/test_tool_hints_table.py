"""The MCP hints (readOnlyHint / destructiveHint) of every tool of every built-in level.

Rule (docs/protocol.md, "Tool hints"): ``read_only`` = changes nothing; ``destructive`` = may
change what a router runs (its running configuration or ruleset); a tool that changes only a
staging area (A2's candidate datastore and locks, A1's snapshot store, the A3-R / A4 source of
truth's working tree) is neither ("additive" for an MCP client).
"""

from __future__ import annotations

import pytest

from ani.registry import BUILTINS, get_adapter_class

RO, ADD, DESTR = "read-only", "additive", "destructive"

HINTS: dict[str, dict[str, str]] = {
    "a0": {"get_topology": RO, "shell": DESTR},
    "a1": {
        "get_topology": RO, "get_running_config": RO, "execute_validation": RO,
        "list_snapshots": RO, "snapshot": ADD, "rollback": DESTR, "update_config": DESTR,
    },
    "a2": {
        "get_topology": RO, "get_config": RO, "get_state": RO, "get_schema": RO, "compare": RO,
        "validate": RO, "edit_config": ADD, "discard_changes": ADD, "lock": ADD, "unlock": ADD,
        "commit": DESTR, "confirm_commit": DESTR, "cancel_commit": DESTR,
    },
    "a3t": {
        "get_topology": RO, "list_service_types": RO, "get_service_schema": RO,
        "list_services": RO, "get_service": RO, "plan": RO, "get_state": RO, "apply": DESTR,
    },
    "a3r": {
        "get_topology": RO, "sot_list": RO, "sot_read": RO, "sot_diff": RO, "sot_log": RO,
        "drift": RO, "reconcile_status": RO, "sot_patch": ADD, "sot_discard": ADD,
        "sot_commit": DESTR, "sot_revert": DESTR, "reconcile": DESTR,
    },
    "a4": {
        "get_topology": RO, "sot_list": RO, "sot_read": RO, "sot_diff": RO, "sot_log": RO,
        "drift": RO, "reconcile_status": RO, "list_service_types": RO, "get_service_schema": RO,
        "list_services": RO, "get_service": RO, "plan": RO, "get_state": RO,
        "sot_patch": ADD, "sot_discard": ADD, "sot_delete": ADD,
        "sot_commit": DESTR, "sot_revert": DESTR, "reconcile": DESTR,
    },
}

# Tools that change what routers run: losing `destructive` on any of them must fail here.
ROUTER_CHANGING = {
    ("a0", "shell"), ("a1", "update_config"), ("a1", "rollback"), ("a2", "commit"),
    ("a2", "cancel_commit"), ("a2", "confirm_commit"), ("a3t", "apply"), ("a3r", "sot_commit"),
    ("a3r", "sot_revert"), ("a3r", "reconcile"), ("a4", "sot_commit"), ("a4", "sot_revert"),
    ("a4", "reconcile"),
}


def _kind(read_only: bool, destructive: bool) -> str:
    assert not (read_only and destructive), "a tool cannot be both read-only and destructive"
    return RO if read_only else DESTR if destructive else ADD


def test_table_covers_every_builtin_level() -> None:
    assert set(HINTS) == set(BUILTINS)


@pytest.mark.parametrize("level", sorted(HINTS))
def test_hints_of_every_tool_as_mcp_clients_see_them(level: str) -> None:
    adapter = get_adapter_class(level)(None)  # tools() needs no lab
    seen = {}
    for spec in adapter.tools():
        ann = spec.to_mcp().annotations
        seen[spec.name] = _kind(bool(ann.read_only_hint), bool(ann.destructive_hint))
    assert seen == HINTS[level]


@pytest.mark.parametrize(("level", "name"), sorted(ROUTER_CHANGING))
def test_router_changing_tools_are_destructive(level: str, name: str) -> None:
    adapter = get_adapter_class(level)(None)
    spec = {s.name: s for s in adapter.tools()}[name]
    assert spec.destructive and not spec.read_only


def test_tool_decorator_refuses_read_only_and_destructive() -> None:
    from ani.adapters.base import NoArgs, tool

    with pytest.raises(ValueError, match="read_only and destructive"):
        tool(args=NoArgs, description="x", read_only=True, destructive=True)
