"""An MCP server for any ANI adapter (built on the official ``mcp`` SDK, low-level ``Server``;
mcp 1.x or 2.x, :mod:`ani.mcp.sdk`).

    server = build_server(adapter)                 # exactly adapter.tools(), nothing else
    await serve_stdio(server)                      # or: await serve_http(server, port=8765)

What a client sees:

- ``tools/list``: one MCP ``Tool`` per :class:`~ani.protocol.ToolSpec` of the adapter, with its
  JSON Schema (``inputSchema``) and the annotations ``readOnlyHint`` / ``destructiveHint``
  (:meth:`ToolSpec.to_mcp`). At A1 these are the NetConfBench tools ``get_topology``,
  ``get_running_config``, ``update_config``, ``execute_validation`` plus ``snapshot``,
  ``rollback`` and ``list_snapshots`` (and the optional ones its options switch on:
  ``batch_configure_devices``, ``check_device_status``, ``apply_config``; :mod:`ani.adapters.a1`).
- ``tools/call`` of a listed tool always returns a ``CallToolResult``
  (:func:`to_call_result`): ``isError`` is ``not ToolResult.ok``, the text content is the
  observation (:meth:`ToolResult.observation`), the same text the framework integrations and
  the shipped LLM agent give a model: the result's text, and for a failure the JSON error payload
  ``{"ok": false, "code", "message", "retriable", "changed"[, "text"]}`` whose message names the
  cause (the adapter's error message, e.g. the rejected line, the unknown router, ``timeout
  after N s``); ``structuredContent`` holds
  ``{ok, error: {code, message, retriable} | null, changed, elapsed_s, data}``; a campaign counts
  tool errors from ``isError`` (or ``structuredContent.ok``), never from the text. Bad arguments
  are tool failures too (``invalid_arguments``), so a model can correct itself. A harness fault
  raised by the adapter is also an ``isError`` result (code ``harness_fault``, message
  ``harness fault in <tool>: <type>: <message>``).
- Protocol (JSON-RPC) errors only for malformed requests: a line (HTTP: a POST body) that is not
  JSON (``-32700``, ``id: null``) or not one JSON-RPC 2.0 message (``-32600``, with its id when
  readable: a batch, no ``jsonrpc``, too deep, a huge integer, a lone surrogate; a request whose
  ``id`` is null, a boolean, a float or an object, with ``id: null``; :mod:`ani.mcp.envelope`
  says which, :mod:`ani.mcp.stdio` and :mod:`ani.mcp.http_screen` answer them, where the SDK
  drops them or takes them for notifications), a method the server does not serve,
  params that are not a ``tools/call`` shape (no ``name``, ``arguments`` not an object; the SDK
  answers these before this module runs), and a tool name that ``tools/list`` never offered
  (``-32602 invalid params``, naming the tool and the offered ones, as the MCP spec says).

Adapters are synchronous: each call runs in a worker thread (the event loop keeps serving pings
and cancellations meanwhile). The SDK handles a client's requests concurrently; an adapter whose
``concurrent_calls`` is true (every ``BaseAdapter``: it serialises what must be, per router or
whole, bounded by each call's own bound, see docs/protocol.md "Concurrency") gets them in
parallel; any other adapter gets them one at a time.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.lowlevel import Server

from ani.mcp import sdk
from ani.mcp.sdk import types
from ani.protocol import ToolResult, ToolSpec

SERVER_NAME = "ani"
DEFAULT_HOST = "127.0.0.1"


def structured(result: ToolResult) -> dict[str, Any]:
    """The ``structuredContent`` of a call: :meth:`ToolResult.structured` (``{ok: bool, error:
    {code: str, message: str, retriable: bool} | None, changed: bool, elapsed_s: float (seconds),
    data: dict | None}``)."""
    return result.structured()


def result_text(result: ToolResult) -> str:
    """The text content of a call: :meth:`ToolResult.observation`, the text the framework
    integrations of :mod:`ani.integrations` and the shipped LLM agent give the model (the
    result's text; for a failure the JSON error payload, which names the cause)."""
    return result.observation()


def to_call_result(result: ToolResult) -> types.CallToolResult:
    """An ANI :class:`ToolResult` as an MCP ``CallToolResult`` (``isError = not ok``)."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=result_text(result))],
        structuredContent=structured(result),
        isError=not result.ok,
    )


def harness_fault(name: str, exc: BaseException) -> types.CallToolResult:
    """The ``isError`` result of an adapter that raised (a harness fault, not an agent mistake)."""
    msg = f"harness fault in {name}: {type(exc).__name__}: {exc}"
    payload = {"ok": False, "code": "harness_fault", "message": msg, "retriable": False, "changed": False}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))],
        structuredContent={"ok": False, "error": {"code": "harness_fault", "message": msg, "retriable": False},
                           "changed": False, "elapsed_s": 0.0, "data": None},
        isError=True,
    )


class AdapterTools:
    """The bridge between one adapter and the MCP handlers.

    Args:
        adapter: an opened ANI adapter (anything with ``tools()`` and ``call(name, arguments)``).

    The tool list is read once, at construction: an adapter's tools do not change while it runs.
    """

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.specs: dict[str, ToolSpec] = {s.name: s for s in adapter.tools()}
        #: None: the adapter takes concurrent calls (``concurrent_calls``); else one at a time
        self._lock = None if getattr(adapter, "concurrent_calls", False) else anyio.Lock()

    def list_tools(self) -> list[types.Tool]:
        """One MCP ``Tool`` per adapter ToolSpec, in the adapter's order."""
        return [s.to_mcp() for s in self.specs.values()]

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        spec = self.specs.get(name)
        return None if spec is None else spec.input_schema

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """Run one tool in a worker thread (one at a time unless the adapter takes concurrent
        calls, see the module doc).

        Raises:
            sdk.ProtocolError: ``INVALID_PARAMS`` if ``name`` is not an offered tool (a
                malformed request).
        """
        if name not in self.specs:
            shown = repr(name) if len(name) <= 80 else f"{name[:80]!r}... ({len(name)} characters)"
            raise sdk.protocol_error(
                types.INVALID_PARAMS,
                f"unknown tool {shown}; tools are: {', '.join(self.specs)}",
            )
        args = {} if arguments is None else arguments
        async with self._lock if self._lock is not None else contextlib.nullcontext():
            try:
                result = await anyio.to_thread.run_sync(self.adapter.call, name, args)
            except Exception as exc:  # noqa: BLE001 - an adapter fault must not kill the server
                print(f"ani mcp: {name}: harness fault: {type(exc).__name__}: {exc}", file=sys.stderr)
                return harness_fault(name, exc)
        return to_call_result(result)


def build_server(adapter: Any, *, name: str = SERVER_NAME, instructions: str | None = None) -> Server[Any]:
    """An MCP low-level ``Server`` that offers exactly ``adapter.tools()``.

    Args:
        adapter: an opened ANI adapter; the caller opens and closes it.
        name: the server name reported to clients.
        instructions: optional text for the client (e.g. which lab and level).
    """
    bridge = AdapterTools(adapter)

    async def list_tools() -> list[types.Tool]:
        return bridge.list_tools()

    from ani import __version__ as version

    server = sdk.new_server(name, version=version, instructions=instructions, list_tools=list_tools,
                            call_tool=bridge.call, input_schema=bridge.input_schema)
    server.ani_tools = bridge  # type: ignore[attr-defined]  # for introspection in tests
    return server


async def serve_stdio(server: Server[Any]) -> None:
    """Serve ``server`` over this process's stdin/stdout until stdin closes; every malformed
    line gets its JSON-RPC error (-32700 / -32600, :mod:`ani.mcp.stdio`) and serving goes on."""
    from ani.mcp.stdio import screened_stdio

    async with screened_stdio() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def listen_socket(host: str = DEFAULT_HOST, port: int = 8765) -> socket.socket:
    """A TCP socket listening on ``host:port`` (``port=0``: a free one), for :func:`serve_http`.

    Bind it before opening anything, so a port in use is a clear error up front.

    Raises:
        OSError: the address cannot be bound, e.g. ``[Errno 98] Address already in use``.
        OverflowError: ``port`` is outside 0-65535.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT only, not a listener
        sock.bind((host, port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


async def serve_http(server: Server[Any], *, host: str = DEFAULT_HOST, port: int = 8765,
                     path: str = "/mcp", on_ready: Any = None,
                     sock: socket.socket | None = None) -> None:
    """Serve ``server`` over streamable HTTP at ``http://host:port/path`` until cancelled.

    ``port=0`` picks a free port; ``on_ready(url)`` is called once the socket listens, with the
    real URL. Every malformed POST body gets its JSON-RPC error (HTTP 400,
    :mod:`ani.mcp.http_screen`). DNS-rebinding protection (Host/Origin checks) is on for loopback hosts. ``sock``:
    an already listening socket (:func:`listen_socket`) to serve on instead of binding
    ``host:port`` here; without it, a port that cannot be bound raises OSError.
    """
    import uvicorn

    from ani.mcp.http_screen import screened

    if sock is None:
        sock = listen_socket(host, port)

    app = screened(sdk.http_app(server, path=path, host=host), host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    userver = uvicorn.Server(config)

    async def announce() -> None:
        while not userver.started:
            if userver.should_exit:
                return
            await anyio.sleep(0.05)
        sock_port = port
        for s in userver.servers:
            for sock in s.sockets:
                sock_port = sock.getsockname()[1]
                break
        if on_ready is not None:
            on_ready(f"http://{host}:{sock_port}{path}")

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await userver.serve(sockets=[sock])
        tg.cancel_scope.cancel()
