"""``ani mcp serve`` next to the ecosystem's MCP clients: on mcp 1.x (what langchain-mcp-adapters
0.3.2 and mcpadapt need) and on mcp 2.x, in an environment of its own (docs/mcp.md, "MCP SDK
versions" and "Framework recipes").

The module builds one virtualenv in a temporary directory with ani (editable, this checkout),
mcp 1.30.0 and the clients (langchain-mcp-adapters 0.3.2, smolagents[mcp] with mcpadapt,
openai-agents, pydantic-ai-slim[mcp] with fastmcp 3), some seconds with uv's cache; every
session below is a real client in that environment spawning that environment's ``ani`` against a
real lab (tests/data/a1_pair.yaml, one for the module). Then the same environment is moved to
mcp 2.3.0 (fastmcp 4) for the clients that take either major, and to mcp 1.24.0 (the oldest 1.x
the pin allows). ``ANI_TEST_MCP_ENV=DIR`` keeps the environment in DIR (made if missing) and
reuses it on the next run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# the environment is built in the first test's setup (uv: a minute on a busy machine without its cache)
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800), pytest.mark.usefixtures("no_mcp_server_left")]

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "mcp.md"
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "tests" / "data" / "a1_pair.yaml", "sdk"

SDK1 = {"mcp": "1.30.0", "fastmcp-slim": "3.4.11"}
SDK1_OLDEST = {"mcp": "1.24.0", "fastmcp-slim": "3.4.11"}
R9_PAYLOAD = ('{"ok": false, "code": "unknown_device", "message": "unknown device \'r9\'; known: r1, r2", '
              '"retriable": false, "changed": false}')  # the text content of the refused call (ToolResult.observation)
SDK2 = {"mcp": "2.3.0", "fastmcp-slim": "4.2.3"}
CLIENTS = ["langchain-mcp-adapters==0.3.2", "smolagents[mcp]==1.26.0", "openai-agents==0.24.0",
           "pydantic-ai-slim[mcp]==2.68.0"]
A1_TOOLS = ["execute_validation", "get_running_config", "get_topology", "list_snapshots", "rollback",
            "snapshot", "update_config"]
REJECTED = "neighbor 10.0.12.9 peer-group PG-NOPE"  # passes the allowlist, FRR refuses it


class Env:
    """A virtualenv holding ani (editable) and the clients; ``use(pins)`` moves it to those
    versions unless it has them already. It has no pip of its own: the project venv's uv (or pip)
    installs into it (``uv pip install --python``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.python = str(path / "bin" / "python")
        self.ani = str(path / "bin" / "ani")
        self.pinned: dict[str, str] | None = None  # the pins use() last saw installed (only install changes them)
        # byte code cached: uv compiles nothing (install, below), so the first client to import
        # a module compiles it and writes its .pyc into the environment (the environment the
        # clients spawn their servers with writes too: mcp passes no PYTHONDONTWRITEBYTECODE)
        self.environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def install(self, *args: str, timeout: float = 900) -> None:
        # uv (which scripts/setup.sh puts into the project venv) installs into this environment:
        # pip took some 38 CPU-s for the first of this module's three installs, uv 19 (it links
        # from its cache; docs/performance.md, "Ninth round"); the project venv's pip where there
        # is no uv. Neither byte-compiles (uv never does, pip is told --no-compile): the first
        # client to import a module compiles it (self.environ, below).
        if importlib.util.find_spec("uv") is not None:
            argv = [sys.executable, "-m", "uv", "pip", "install", "-q", "--python", self.python, *args]
        else:
            argv = [sys.executable, "-m", "pip", "--python", self.python, "install", "-q",
                    "--disable-pip-version-check", "--no-compile", *args]
        res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        assert res.returncode == 0, f"{' '.join(argv[2:5])} {' '.join(args)}:\n{res.stderr[-3000:]}"
        self.pinned = None

    def versions(self, *names: str) -> dict[str, str | None]:
        code = ("import json, sys\nfrom importlib.metadata import version, PackageNotFoundError\n"
                "def v(n):\n    try:\n        return version(n)\n    except PackageNotFoundError:\n        return None\n"
                "print(json.dumps({n: v(n) for n in sys.argv[1:]}))")
        return json.loads(self.run(code, *names).stdout)

    def use(self, pins: dict[str, str]) -> None:
        if self.pinned == pins:  # checked after the last install: nothing has changed them since
            return
        if self.versions(*pins) != pins:
            self.install(*(f"{k}=={v}" for k, v in pins.items()))
        assert self.versions(*pins) == pins
        self.pinned = dict(pins)

    def run(self, code: str, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        """``code`` as a script in this environment (from the repository root); fails the test
        unless it exits 0."""
        res = subprocess.run([self.python, "-c", code, *args], cwd=ROOT, capture_output=True, text=True,
                             timeout=timeout, stdin=subprocess.DEVNULL, env=self.environ)
        assert res.returncode == 0, f"exit {res.returncode}:\n{res.stderr[-4000:]}"
        return res


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Iterator[Env]:
    kept = os.environ.get("ANI_TEST_MCP_ENV")
    path = Path(kept) if kept else tmp_path_factory.mktemp("mcp-env") / "venv"
    e = Env(path)
    if not (path / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=300)
    if e.versions("ani-sdk", *SDK1)["ani-sdk"] is None:
        e.install("-e", str(ROOT), *(f"{k}=={v}" for k, v in SDK1.items()), *CLIENTS)
    yield e
    if not kept:  # hundreds of MB: not left in the temporary directories pytest keeps
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def running(lab, router: str = "r1") -> str:
    text = lab.running_config(router)
    return text[text.index("Current configuration:"):]


def recipe(name: str, env: Env, lab) -> str:
    """The docs/mcp.md recipe ``name`` with this environment's ani and the lab's id put in."""
    m = re.search(rf"<!-- recipe:{re.escape(name)} -->\s*```python\n(.*?)\n```", DOC.read_text(), re.S)
    assert m, f"docs/mcp.md lost its recipe:{name}"
    code = m.group(1)
    assert '"/path/to/ani-sdk/.venv/bin/ani"' in code and 'LAB = "demo"' in code
    return code.replace('"/path/to/ani-sdk/.venv/bin/ani"', repr(env.ani)).replace('LAB = "demo"', f"LAB = {lab.id!r}")


# -- mcp 1.x: the environment, and the official 1.x client ---------------------------------------


def test_the_clients_install_next_to_ani_on_mcp_1(env):
    env.use(SDK1)
    got = env.versions("ani-sdk", "mcp", "langchain-mcp-adapters", "mcpadapt", "openai-agents",
                       "pydantic-ai-slim", "fastmcp-slim")
    assert got["mcp"] == "1.30.0" and got["langchain-mcp-adapters"] == "0.3.2" and got["mcpadapt"]
    assert all(got.values()), got
    out = env.run("import langchain_mcp_adapters.tools, mcpadapt.core, agents.mcp, pydantic_ai.mcp\n"
                  "from ani.mcp import sdk; print(sdk.MAJOR)").stdout
    assert out.strip() == "1"


SESSION = r"""
import json, sys, anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

ani, lab, level = sys.argv[1:4]
calls = json.loads(sys.argv[4])

async def main():
    params = StdioServerParameters(command=ani, args=["mcp", "serve", "--lab", lab, "--level", level])
    out = {}
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        init = await s.initialize()
        out["server"] = init.serverInfo.name
        tools = (await s.list_tools()).tools
        out["tools"] = sorted(t.name for t in tools)
        out["read_only"] = sorted(t.name for t in tools if t.annotations.readOnlyHint)
        out["calls"] = []
        for name, args in calls:
            try:
                res = await s.call_tool(name, args)
                out["calls"].append({"is_error": res.isError, "text": res.content[0].text,
                                     "structured": res.structuredContent})
            except McpError as exc:
                out["calls"].append({"protocol_error": exc.error.code, "message": exc.error.message})
    print(json.dumps(out))

anyio.run(main)
"""


def session(env: Env, lab, level: str, calls: list) -> dict[str, Any]:
    return json.loads(env.run(SESSION, env.ani, lab.id, level, json.dumps(calls)).stdout)


def check_a1(out: dict[str, Any], lab, before: str) -> None:
    assert out["server"] == "ani" and out["tools"] == A1_TOOLS
    assert {"get_running_config", "execute_validation", "get_topology"} <= set(out["read_only"])
    assert "update_config" not in out["read_only"]
    ok, rejected, unknown, no_tool = out["calls"]
    assert ok["is_error"] is False and "router bgp 64501" in ok["text"] and ok["structured"]["ok"] is True
    assert rejected["is_error"] is True and REJECTED in rejected["text"]
    assert rejected["structured"]["error"]["code"] == "rolled_back" and rejected["structured"]["changed"] is False
    assert unknown["is_error"] is True and unknown["structured"]["error"]["code"] == "unknown_device"
    assert no_tool["protocol_error"] == -32602 and "unknown tool 'nope'" in no_tool["message"]
    assert running(lab) == before  # the refused change left nothing applied (out of band)


A1_CALLS = [
    ["get_running_config", {"device": "r1"}],
    ["update_config", {"device": "r1", "commands": ["router bgp 64501", "neighbor 10.0.12.9 remote-as 64509",
                                                     REJECTED]}],
    ["get_running_config", {"device": "r9"}],
    ["nope", {}],
]


def test_official_1x_client_over_stdio_at_a1_and_a2(env, lab):
    env.use(SDK1)
    before = running(lab)
    check_a1(session(env, lab, "a1", A1_CALLS), lab, before)

    out = session(env, lab, "a2", [["get_config", {"device": "r1"}], ["lock", {"device": "r9"}]])
    assert {"lock", "get_config", "edit_config", "commit", "confirm_commit"} <= set(out["tools"])
    got, bad = out["calls"]
    assert got["is_error"] is False and "64501" in got["text"]
    assert bad["is_error"] is True and bad["structured"]["error"]["code"] == "unknown_device"
    assert lab.netconf_lock("r1", "candidate") is None


HTTP = r"""
import json, sys, anyio, httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

url = sys.argv[1]

async def main():
    async with streamablehttp_client(url) as (r, w, _), ClientSession(r, w) as s:
        await s.initialize()
        names = sorted(t.name for t in (await s.list_tools()).tools)
        res = await s.call_tool("execute_validation", {"device": "r2", "command": "show bgp summary"})
    async with httpx.AsyncClient() as c:   # DNS rebinding: a foreign Host header is refused
        foreign = await c.post(url, headers={"Host": "evil.example", "Accept": "application/json, text/event-stream"},
                               json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    print(json.dumps({"tools": names, "is_error": res.isError, "text": res.content[0].text,
                      "foreign": foreign.status_code}))

anyio.run(main)
"""


def test_official_1x_client_over_streamable_http(env, lab):
    env.use(SDK1)
    proc = subprocess.Popen([env.ani, "mcp", "serve", "--lab", lab.id, "--level", "a1", "--http", "--port", "0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url, seen = None, []
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stderr], [], [], 1.0)
            if ready:
                line = proc.stderr.readline()
                assert line, f"server exited: {''.join(seen)}"
                seen.append(line)
                m = re.search(r" at (http://127\.0\.0\.1:\d+/mcp)", line)
                url = m.group(1) if m else None
        assert url, "".join(seen)
        out = json.loads(env.run(HTTP, url).stdout)
        assert out["tools"] == A1_TOOLS
        assert out["is_error"] is False and "10.0.12.1" in out["text"]
        assert out["foreign"] == 421
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert proc.returncode == 0


def test_malformed_lines_are_answered_on_mcp_1(env, lab):
    """mcp 1.x's JSON-RPC error model has no ``id: null``; the server writes these answers itself."""
    env.use(SDK1)
    proc = subprocess.Popen([env.ani, "mcp", "serve", "--lab", lab.id, "--level", "a1"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write('this is not json\n{"id":7,"method":"tools/list"}\n')
        proc.stdin.flush()
        first, second = proc.stdout.readline(), proc.stdout.readline()
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert '"id":null' in first and json.loads(first)["error"]["code"] == -32700
    assert json.loads(second)["id"] == 7 and json.loads(second)["error"]["code"] == -32600
    assert proc.returncode == 0


NO_LEVEL = r"""
import sys, anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

def leaves(exc):
    subs = getattr(exc, "exceptions", None)
    return [x for e in subs for x in leaves(e)] if subs else [exc]

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=["mcp", "serve", "--lab", sys.argv[2]])
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()

try:
    anyio.run(main)
except BaseException as exc:
    for leaf in leaves(exc):
        print(type(leaf).__name__, leaf)
"""


def test_no_level_is_an_error_the_1x_client_shows(env, lab):
    env.use(SDK1)
    out = env.run(NO_LEVEL, env.ani, lab.id).stdout
    assert "McpError ani mcp serve cannot start: no level: pass --level LEVEL" in out, out
    assert '"env": {"ANI_LEVEL": "a1"}' in out


# -- the recipes of docs/mcp.md, as written, on mcp 1.x ----------------------------------------


def test_recipe_official_1x(env, lab):
    env.use(SDK1)
    lines = env.run(recipe("official-1x", env, lab)).stdout.splitlines()
    assert lines == [str(A1_TOOLS), "True unknown_device"]


def test_recipe_langchain(env, lab):
    env.use(SDK1)
    lines = env.run(recipe("langchain", env, lab)).stdout.splitlines()
    assert lines[0] == "True"
    assert lines[1] == "error " + R9_PAYLOAD


LANGCHAIN_LIFETIME = r"""
import asyncio, json, sys
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

client = MultiServerMCPClient({"ani": {"transport": "stdio", "command": sys.argv[1],
                                       "args": ["mcp", "serve", "--lab", sys.argv[2], "--level", "a1"]}})

async def main():
    per_call = {t.name: t for t in await client.get_tools()}      # a new server for every call
    await per_call["snapshot"].ainvoke({"device": "r1"})
    lost = await per_call["list_snapshots"].ainvoke({"device": "r1"})
    async with client.session("ani") as session:                   # one server for the block
        kept = {t.name: t for t in await load_mcp_tools(session)}
        await kept["snapshot"].ainvoke({"device": "r1"})
        seen = await kept["list_snapshots"].ainvoke({"device": "r1"})
    print(json.dumps([lost[0]["text"], seen[0]["text"]]))

asyncio.run(main())
"""


def test_langchain_get_tools_loses_the_snapshot_a_session_keeps(env, lab):
    """Why the recipe opens a session (issue 16: get_tools() starts a server per call)."""
    env.use(SDK1)
    lost, seen = json.loads(env.run(LANGCHAIN_LIFETIME, env.ani, lab.id).stdout)
    assert lost == "no snapshots of r1"
    assert seen.startswith("r1-s1 ")


def test_recipe_pydantic_ai_on_1(env, lab):
    env.use(SDK1)
    check_pydantic_ai(env.run(recipe("pydantic-ai", env, lab)).stdout)


def check_pydantic_ai(stdout: str) -> None:
    """TestModel called get_topology (ok) and get_running_config with device 'a' (unknown); with
    ``tool_error_behavior="failed"`` the failure reached the model and the run ended normally."""
    out = json.loads(stdout)
    assert out["get_topology"]["ok"] is True
    assert [n["name"] for n in out["get_topology"]["data"]["topology"]["nodes"]] == ["r1", "r2"]
    failed = out["get_running_config"]
    failed = json.loads(failed) if isinstance(failed, str) else failed
    assert failed["ok"] is False and failed["error"]["code"] == "unknown_device"


def test_recipe_openai_agents_on_1(env, lab):
    env.use(SDK1)
    check_openai_agents(env.run(recipe("openai-agents", env, lab)).stdout)


def check_openai_agents(stdout: str) -> None:
    lines = stdout.splitlines()
    assert lines[0] == "7"
    assert lines[1] == R9_PAYLOAD


def test_recipe_smolagents(env, lab):
    env.use(SDK1)
    lines = env.run(recipe("smolagents", env, lab)).stdout.splitlines()
    assert lines == ["nodes: r1, r2", R9_PAYLOAD]


def test_smolagents_refuses_a_left_out_optional_argument_without_the_recipes_loop(env, lab):
    """What the recipe's loop is for (issue 16: ``get_topology({})`` refused)."""
    env.use(SDK1)
    code = recipe("smolagents", env, lab)
    code = code.replace('tool.inputs[name]["nullable"] = True', "pass")
    code += ("\n    from smolagents.tools import validate_tool_arguments\n"
             "    try:\n        validate_tool_arguments(by_name['get_topology'], {})\n"
             "    except ValueError as exc:\n        print('refused:', exc)\n")
    code = code.replace('print(by_name["get_topology"]().splitlines()[0])', "pass")
    assert "refused: Argument devices is required" in env.run(code).stdout


# -- mcp 2.x in the same environment; the oldest 1.x ---------------------------------------------


CLIENT2 = r"""
import sys, anyio
from mcp import Client, StdioServerParameters

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=["mcp", "serve", "--lab", sys.argv[2], "--level", "a1"])
    async with Client(params) as c:
        names = sorted(t.name for t in (await c.list_tools()).tools)
        res = await c.call_tool("get_running_config", {"device": "r9"})
        print(names)
        print(res.is_error, res.structured_content["error"]["code"])

anyio.run(main)
"""


def test_mcp_2_in_the_same_environment_pydantic_ai_and_openai_agents_too(env, lab):
    env.use(SDK2)
    assert env.run("from ani.mcp import sdk; print(sdk.MAJOR)").stdout.strip() == "2"
    assert env.run(CLIENT2, env.ani, lab.id).stdout.splitlines() == [str(A1_TOOLS), "True unknown_device"]
    check_pydantic_ai(env.run(recipe("pydantic-ai", env, lab)).stdout)       # fastmcp 4
    check_openai_agents(env.run(recipe("openai-agents", env, lab)).stdout)
    # the two clients that need 1.x do not import on 2.x (docs/mcp.md's table)
    probe = ("for m in ('langchain_mcp_adapters.tools', 'mcpadapt.core'):\n"
             "    try:\n        __import__(m); print(m, 'ok')\n"
             "    except ImportError as exc:\n        print(m, 'ImportError')\n")
    assert env.run(probe).stdout.split() == ["langchain_mcp_adapters.tools", "ImportError",
                                             "mcpadapt.core", "ImportError"]


def test_the_oldest_mcp_1_allowed(env, lab):
    env.use(SDK1_OLDEST)  # last in the module: nothing after it needs 1.30 (each test says what it needs)
    assert env.run("from ani.mcp import sdk; print(sdk.MAJOR)").stdout.strip() == "1"
    before = running(lab)
    check_a1(session(env, lab, "a1", A1_CALLS), lab, before)
    assert "McpError ani mcp serve cannot start: no level" in env.run(NO_LEVEL, env.ani, lab.id).stdout
