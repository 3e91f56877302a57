"""``ani mcp serve`` that cannot start, seen from the official MCP client (issue 16: with no level
the server exited 2 and the client saw a bare ExceptionGroup): the client's ``initialize`` fails
with the reason, and the server then exits with its code. Also: the level given in the client
entry's ``env`` (docs/mcp.md's second snippet) reaches the server. The same on mcp 1.x:
tests/integration/test_mcp_sdk1.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_mcp_server_left")]

ROOT = Path(__file__).resolve().parents[2]
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a1_pair.yaml", "ref", False


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def leaves(exc: BaseException) -> list[BaseException]:
    subs = getattr(exc, "exceptions", None)
    return [x for e in subs for x in leaves(e)] if subs else [exc]


def connect_error(args: list[str], env: dict[str, str] | None = None) -> list[str]:
    """The leaf exceptions (``Type: message``) the official client raises connecting to
    ``ani mcp serve ARGS`` (a fresh environment: only the client's defaults plus ``env``)."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "ani.cli", "mcp", "serve", *args],
                                   cwd=str(ROOT), env=env)

    async def main() -> None:
        async with Client(params) as client:
            await client.list_tools()

    with pytest.raises(BaseException) as info:  # noqa: PT011 - the client's own wrapping, unwrapped below
        anyio.run(main)
    return [f"{type(e).__name__}: {e}" for e in leaves(info.value)]


def test_no_level_the_client_shows_why(lab, monkeypatch):
    monkeypatch.setenv("ANI_LEVEL", "a1")  # set here, but a stdio client does not pass it on
    got = connect_error(["--lab", lab.id])
    want = ("MCPError: ani mcp serve cannot start: no level: pass --level LEVEL in the server's args, "
            'or ANI_LEVEL in its env')
    assert got and all(g.startswith(want) for g in got), got
    assert '"env": {"ANI_LEVEL": "a1"}' in got[0] and "levels: a0, a1, a2, a3r, a3t, a4" in got[0]


def test_other_reasons_reach_the_client_too(lab):
    got = connect_error(["--lab", "nosuchlab0", "--level", "a1"])
    assert got[0].startswith("MCPError: ani mcp serve cannot start: no lab 'nosuchlab0' (known:"), got
    assert lab.id in got[0]
    got = connect_error(["--lab", lab.id, "--level", "a1", "--option", "timeout_s=3"])
    assert got[0].startswith("MCPError: ani mcp serve cannot start: "), got
    assert "timeout_s" in got[0] and "command_timeout_s" in got[0]  # the option, and the level's own


def test_the_server_answers_then_exits_with_its_code(lab):
    proc = subprocess.Popen([sys.executable, "-m", "ani.cli", "mcp", "serve", "--lab", lab.id], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={k: v for k, v in __import__("os").environ.items() if k != "ANI_LEVEL"})
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "0"}}}
    out, err = proc.communicate(json.dumps(init) + "\n", timeout=120)
    (reply,) = [json.loads(line) for line in out.splitlines()]
    assert reply["id"] == 0 and reply["error"]["code"] == -32603
    assert reply["error"]["message"].startswith("ani mcp serve cannot start: no level")
    assert proc.returncode == 2
    assert err.startswith("error: no level")


def env_snippet() -> dict[str, Any]:
    doc = (ROOT / "docs" / "mcp.md").read_text()
    m = re.search(r"<!-- snippet:mcp-client-config-env -->\s*```json\n(.*?)\n```", doc, re.S)
    assert m, "docs/mcp.md lost its env snippet"
    return json.loads(m.group(1))["mcpServers"]["ani"]


def test_the_level_in_the_entrys_env_reaches_the_server(lab, tmp_path, monkeypatch):
    monkeypatch.delenv("ANI_LEVEL", raising=False)
    entry = env_snippet()
    assert set(entry) == {"command", "args", "env"} and entry["env"] == {"ANI_LEVEL": "a1"}
    command = entry["command"].replace("/path/to/ani-sdk", str(ROOT))
    args = [lab.id if a == "demo" else a for a in entry["args"]]
    assert "--level" not in args

    async def main() -> tuple[str | None, list[str]]:
        params = StdioServerParameters(command=command, args=args, env=entry["env"], cwd=str(tmp_path))
        async with Client(params) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            return client.instructions, names

    instructions, names = anyio.run(main)
    assert "get_running_config" in names and "update_config" in names
    assert instructions.startswith("ANI level a1 on lab ")
