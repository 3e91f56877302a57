"""The MCP server at every other level (a0, a2, a3t, a3r, a4) on a real lab, through the official
MCP client (issue 5 §2 and case 1; A1 is tests/integration/test_mcp_server.py).

One lab of scenarios/brownfield-small.yaml (with its NETCONF servers) for the module: routers c1,
c2 (route reflectors) and e1..e4 (edges with PL-TENANTS, RM-TENANTS-OUT, nftables table inet fw).
For each level an adapter is opened on the lab and served in-process (``mcp.Client`` on
``build_server(adapter)``, JSON-RPC over memory streams). Each level checks:

- ``tools/list`` is exactly the level's tool names (written out here, not read from the adapter),
  each with the adapter's JSON Schema and the read-only / destructive hints;
- a read call succeeds;
- a call naming router ``e9`` is an ``isError`` result naming it, code ``unknown_device``;
- a refused change is an ``isError`` result naming the cause with the level's code (A0: a command
  that fails; A2: invalid YANG data, an rpc-error; A3-T: an invalid intent; A3-R: a bad
  ``sot_patch``; A4: an invalid service file), and every router's FRR running configuration and
  nftables ruleset are unchanged (read out of band through the lab, not through the server).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, types

from ani.mcp.server import build_server
from ani.registry import create_adapter

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "scenarios" / "brownfield-small.yaml", "mcpl"  # conftest's module_lab
NS = "urn:ani:yang:ani-frr"

SOT = {"sot_commit", "sot_diff", "sot_discard", "sot_list", "sot_log", "sot_patch", "sot_read", "sot_revert",
       "drift", "reconcile", "reconcile_status", "get_topology"}
SERVICES = {"get_service", "get_service_schema", "get_state", "list_service_types", "list_services", "plan"}

# level -> (tool names, read-only ones, destructive ones)
TOOLS: dict[str, tuple[set[str], set[str], set[str]]] = {
    "a0": ({"get_topology", "shell"}, {"get_topology"}, {"shell"}),
    "a2": ({"get_topology", "get_config", "get_state", "get_schema", "edit_config", "validate", "compare", "commit",
            "confirm_commit", "cancel_commit", "discard_changes", "lock", "unlock"},
           {"get_topology", "get_config", "get_state", "get_schema", "validate", "compare"},
           {"commit", "confirm_commit", "cancel_commit"}),
    "a3t": (SERVICES | {"get_topology", "apply"}, SERVICES | {"get_topology"}, {"apply"}),
    "a3r": (SOT, {"get_topology", "drift", "reconcile_status", "sot_diff", "sot_list", "sot_log", "sot_read"},
            {"sot_commit", "sot_revert", "reconcile"}),
    "a4": (SOT | SERVICES | {"sot_delete"},
           SERVICES | {"get_topology", "drift", "reconcile_status", "sot_diff", "sot_list", "sot_log", "sot_read"},
           {"sot_commit", "sot_revert", "reconcile"}),
}


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def text_of(res: types.CallToolResult) -> str:
    return "\n".join(c.text for c in res.content if isinstance(c, types.TextContent))


def code_of(res: types.CallToolResult) -> str | None:
    err = (res.structured_content or {}).get("error")
    return None if err is None else err["code"]


def routers_state(lab: Any) -> dict[str, tuple[str, str]]:
    """FRR running configuration and nftables ruleset of every router, read out of band."""
    return {r: (lab.running_config(r), lab.exec(r, ["nft", "list", "ruleset"]).stdout) for r in lab.routers}


Call = Callable[[Client], Awaitable[types.CallToolResult]]


def call(tool: str, args: dict[str, Any]) -> Call:
    return lambda client: client.call_tool(tool, args)


async def head(client: Client) -> str:
    res = await client.call_tool("sot_list", {})
    assert res.is_error is False, text_of(res)
    return res.structured_content["data"]["revision"]


async def a3r_bad_patch(client: Client) -> types.CallToolResult:
    """A patch whose parent path does not exist in e1's document (issue 4 case 6)."""
    return await client.call_tool("sot_patch", {"path": "devices/e1.json", "base_revision": await head(client), "patch": [
        {"op": "add", "path": "/bgp/neighbors/100.64.255.1/timers/keepalive", "value": 5}]})


async def a4_bad_service(client: Client) -> types.CallToolResult:
    """A service file whose route map does not exist on e1."""
    change = {"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9", "remote_as": 65001,
              "route_map_in": "RM-UNDEF"}
    return await client.call_tool("sot_patch", {"path": "services/peer.json", "base_revision": await head(client),
                                                "patch": [{"op": "add", "path": f"/{k}", "value": v}
                                                          for k, v in change.items()]})


BAD_PL = (f'<frr xmlns="{NS}"><prefix-list><name>PL-TENANTS</name><entry><seq>5</seq><action>allow</action>'
          "<prefix>192.0.2.0/24</prefix></entry></prefix-list></frr>")

# level -> (read call, what its text holds), (unknown-router call), (refused change, code, words in its text)
CASES: dict[str, dict[str, Any]] = {
    "a0": {
        "read": (call("shell", {"device": "e1", "command": "vtysh -c 'show running-config'"}), "PL-TENANTS"),
        "unknown": call("shell", {"device": "e9", "command": "true"}),
        "refused": (call("shell", {"device": "e1", "command": "nft add element inet fw tenant_nope '{ 192.0.2.1 }'"}),
                    "command_failed", ["exit status 1", "tenant_nope"]),
    },
    "a2": {
        "read": (call("get_config", {"device": "e1"}), "PL-TENANTS"),
        "unknown": call("get_config", {"device": "e9"}),
        "refused": (call("edit_config", {"device": "e1", "config": BAD_PL}), "command_failed",
                    ["invalid-value", "allow"]),
    },
    "a3t": {
        "read": (call("get_state", {"device": "e2", "what": "routes"}), "198.18.12.0/24"),
        "unknown": call("get_state", {"device": "e9", "what": "routes"}),
        "refused": (call("apply", {"changes": [{"type": "bgp-peering", "action": "add", "router": "e1",
                                                "neighbor": "192.0.2.9", "remote_as": 65001,
                                                "route_map_in": "RM-UNDEF"}]}),
                    "invalid_intent", ["RM-UNDEF"]),
    },
    "a3r": {
        "read": (call("sot_read", {"path": "devices/e1.json"}), "PL-TENANTS"),
        "unknown": call("drift", {"devices": ["e9"]}),
        "refused": (a3r_bad_patch, "invalid_intent", ["/bgp/neighbors/100.64.255.1/timers", "nothing changed"]),
    },
    "a4": {
        "read": (call("get_state", {"device": "e2", "what": "routes"}), "198.18.12.0/24"),
        "unknown": call("get_state", {"device": "e9", "what": "routes"}),
        "refused": (a4_bad_service, "invalid_intent", ["services/peer.json", "RM-UNDEF"]),
    },
}


@pytest.mark.parametrize("level", ["a0", "a2", "a3t", "a3r", "a4"])
def test_level_over_mcp_tools_read_unknown_router_refused_change(lab, level):
    before = routers_state(lab)
    adapter = create_adapter(level, lab)
    adapter.open()
    case = CASES[level]
    try:
        async def main() -> dict[str, Any]:
            async with Client(build_server(adapter), mode="legacy") as client:
                out: dict[str, Any] = {"tools": (await client.list_tools()).tools}
                out["read"] = await case["read"][0](client)
                out["unknown"] = await case["unknown"](client)
                out["refused"] = await case["refused"][0](client)
                if level in ("a3r", "a4"):  # nothing staged in the source of truth either
                    out["diff"] = await client.call_tool("sot_diff", {})
                return out

        out = anyio.run(main)
        specs = {s.name: s for s in adapter.tools()}
    finally:
        adapter.close()

    names, read_only, destructive = TOOLS[level]
    listed = {t.name: t for t in out["tools"]}
    assert len(out["tools"]) == len(listed)  # no name twice
    assert set(listed) == names == set(specs)
    for name, t in listed.items():
        assert t.input_schema == specs[name].input_schema, name
        assert t.input_schema["type"] == "object", name
        assert t.annotations.read_only_hint is (name in read_only), name
        assert t.annotations.destructive_hint is (name in destructive), name
        assert t.description, name

    read, words = out["read"], case["read"][1]
    assert read.is_error is False, text_of(read)
    assert read.structured_content["ok"] is True and read.structured_content["changed"] is False
    assert words in text_of(read)

    unk = out["unknown"]
    assert unk.is_error is True
    assert code_of(unk) == "unknown_device", text_of(unk)
    assert "e9" in text_of(unk)

    _, code, causes = case["refused"]
    ref = out["refused"]
    assert ref.is_error is True, text_of(ref)
    assert code_of(ref) == code, text_of(ref)
    for w in causes:
        assert w in text_of(ref), (w, text_of(ref))
    assert ref.structured_content["changed"] is False
    if "diff" in out:
        assert out["diff"].is_error is False and out["diff"].structured_content["data"]["files"] == []

    assert routers_state(lab) == before  # out of band: no router changed


def test_a0_over_mcp_sees_no_other_checkout_of_the_host(lab, tmp_path):
    """Issue 23 §1: a repository next to this checkout (its hidden test holding a canary), and this
    checkout's own tests, are not in an A0 shell reached over MCP (the sandbox's root is an
    allowlist: ani.adapters.sandbox.VISIBLE_ROOTS)."""
    import secrets
    import shutil

    tag = secrets.token_hex(4)
    marker = ROOT.parent / f".ani-marker-{tag}"
    (marker / "tests").mkdir(parents=True)
    (marker / "tests" / "test_hidden.py").write_text(f"SECRET = 'canary-{tag}'\n")
    own = ROOT / "tests" / "integration" / "test_mcp_levels.py"
    adapter = create_adapter("a0", lab)
    adapter.open()
    try:
        async def main() -> types.CallToolResult:
            async with Client(build_server(adapter), mode="legacy") as client:
                return await client.call_tool("shell", {"device": "e1", "command":
                    f"cat {marker}/tests/test_hidden.py {own}; ls -A {ROOT.parent}; "
                    f"find / -name '.ani-marker-{tag}' 2>/dev/null; echo END"})

        res = anyio.run(main)
    finally:
        adapter.close()
        shutil.rmtree(marker, ignore_errors=True)
    text = text_of(res)
    assert f"canary-{tag}" not in text and "def test_" not in text, text
    assert res.structured_content["data"]["stdout"] == "END\n", text
    assert f"cat: {marker}/tests/test_hidden.py: No such file or directory" in text
