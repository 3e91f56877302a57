"""Both major versions of the official ``mcp`` SDK behind one face: mcp 1.x (1.24 and later)
and 2.x (2.3 and later). The rest of :mod:`ani.mcp` is written once, against this module.

Why both: the ecosystem's clients are on 1.x (langchain-mcp-adapters 0.3.2 asks for
``mcp>=1.24,<2``; mcpadapt, smolagents' MCP bridge, imports 1.x-only modules; fastmcp 3, what
pydantic-ai takes with ``mcp<2``), while 2.x is the current SDK. ani is installed next to either
(``pyproject.toml``: ``mcp>=1.24,!=2.0.*,!=2.1.*,!=2.2.*,<3``), and the server behaves the same
on both (tests/integration/test_mcp_sdk1.py runs real 1.x clients against it).

What differs, and how it is bridged:

- the server object: 2.x's low-level ``Server`` takes ``on_list_tools`` / ``on_call_tool``
  handlers; on 1.x the same two handlers are registered as request handlers
  (``server.request_handlers``), not through 1.x's ``@server.call_tool()`` decorator, which would
  turn a protocol error (an unknown tool) into a tool result and validate arguments itself;
- the protocol error: 2.x ``MCPError(code, message)``, 1.x ``McpError(ErrorData(...))``
  (:data:`ProtocolError`, :func:`protocol_error`);
- reading one wire line: 2.x ``jsonrpc_message_adapter.validate_json``, 1.x
  ``JSONRPCMessage.model_validate_json`` (:func:`validate_line`);
- streamable HTTP: 2.x ``Server.streamable_http_app``; on 1.x the same Starlette app is built
  from the SDK's ``StreamableHTTPSessionManager`` (:func:`http_app`).

Model fields are passed by their wire (camelCase) names (``inputSchema``, ``structuredContent``,
``isError``), which both majors accept.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server

#: 2 if the installed SDK's low-level server takes handlers in its constructor (mcp 2.x), else 1
MAJOR: int = 2 if "on_call_tool" in inspect.signature(Server.__init__).parameters else 1

if MAJOR == 2:
    from mcp.shared.exceptions import MCPError as ProtocolError
else:
    from mcp.shared.exceptions import McpError as ProtocolError  # type: ignore[no-redef,attr-defined]

__all__ = ["MAJOR", "ProtocolError", "http_app", "new_server", "protocol_error", "types", "validate_line"]

ListTools = Callable[[], Awaitable[list[Any]]]
CallTool = Callable[[str, "dict[str, Any] | None"], Awaitable[Any]]


def protocol_error(code: int, message: str) -> Exception:
    """The exception a handler raises to answer with a JSON-RPC error (``code``, ``message``)."""
    if MAJOR == 2:
        return ProtocolError(code, message)
    return ProtocolError(types.ErrorData(code=code, message=message))


def validate_line(line: str | bytes) -> Any:
    """Parse one wire line (or HTTP body) as the SDK's transports do: the message, one of
    ``types.JSONRPCRequest`` / ``JSONRPCNotification`` / ``JSONRPCResponse`` / ``JSONRPCError``
    (on 1.x unwrapped from its ``JSONRPCMessage`` root). Raises whatever the SDK raises for a
    line it would drop (a pydantic ``ValidationError``)."""
    if MAJOR == 2:
        return types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    return types.JSONRPCMessage.model_validate_json(line).root


def new_server(name: str, *, version: str, instructions: str | None, list_tools: ListTools,
               call_tool: CallTool,
               input_schema: Callable[[str], Mapping[str, Any] | None] | None = None) -> Server:
    """A low-level ``Server`` answering ``tools/list`` with ``await list_tools()`` (a list of
    ``types.Tool``) and ``tools/call`` with ``await call_tool(name, arguments)`` (a
    ``types.CallToolResult``; a :func:`protocol_error` it raises is answered as a JSON-RPC error).
    ``input_schema(name)``: the tool's schema, for 2.x's HTTP header validation."""
    if MAJOR == 2:
        async def on_list_tools(ctx: Any, params: Any) -> Any:
            return types.ListToolsResult(tools=await list_tools())

        async def on_call_tool(ctx: Any, params: Any) -> Any:
            return await call_tool(params.name, params.arguments)

        return Server(name, version=version, instructions=instructions, on_list_tools=on_list_tools,
                      on_call_tool=on_call_tool, get_tool_input_schema=input_schema)

    server = Server(name, version=version, instructions=instructions)

    async def list_handler(req: Any) -> Any:
        return types.ServerResult(types.ListToolsResult(tools=await list_tools()))

    async def call_handler(req: Any) -> Any:
        return types.ServerResult(await call_tool(req.params.name, req.params.arguments))

    server.request_handlers[types.ListToolsRequest] = list_handler
    server.request_handlers[types.CallToolRequest] = call_handler
    return server


def http_app(server: Server, *, path: str, host: str) -> Any:
    """The Starlette app serving ``server`` over streamable HTTP at ``path``; for a loopback
    ``host`` with DNS-rebinding protection (Host / Origin must be loopback), as 2.x does."""
    if MAJOR == 2:
        return server.streamable_http_app(streamable_http_path=path, host=host)

    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    from ani.mcp.http_screen import loopback_security

    manager = StreamableHTTPSessionManager(app=server, security_settings=loopback_security(host))

    class Endpoint:  # an ASGI app (a class, so Starlette's Route passes scope/receive/send)
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    return Starlette(routes=[Route(path, endpoint=Endpoint())], lifespan=lambda app: manager.run())
