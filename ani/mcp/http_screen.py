"""Streamable HTTP that answers every malformed JSON-RPC message (JSON-RPC 2.0 §5.1), around the SDK's app.

    app = screened(sdk.http_app(server, path="/mcp", host=host), host=host)

The SDK's streamable HTTP transport reads a POST body that is one JSON-RPC message. It takes a
request whose ``id`` is null (or a boolean, a float, an object) for a notification and answers
``202 Accepted`` with no body, so the client never gets a reply; and it answers an envelope that
is not JSON-RPC with ``-32602`` ("Validation error", the code of bad ``params``). This wrapper
reads each POST body first (at most :data:`MAX_BODY_BYTES`; a longer one goes to the SDK, which
refuses it) and answers a malformed one itself, with the error :func:`ani.mcp.envelope.diagnose`
names, the same as over stdio: HTTP 400, ``Content-Type: application/json``, body
``{"jsonrpc": "2.0", "id": <the request's id or null>, "error": {"code": -32700 | -32600,
"message": ...}}``. Every other request (a well-formed body, a GET, a DELETE, a request the
SDK's Host / Origin / Content-Type checks refuse) goes to the SDK unchanged, the body replayed.
The server keeps serving after every answer.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ani.mcp.envelope import diagnose

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: the longest POST body screened, bytes (mcp 2.x's own default bound on a request body)
MAX_BODY_BYTES = 4 * 1024 * 1024


def loopback_security(host: str) -> Any:
    """The SDK's DNS-rebinding protection for a loopback ``host`` (Host / Origin must be
    loopback), as mcp 2.x turns on by itself; None for any other host."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        return None
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def screened(app: App, *, host: str) -> App:
    """``app`` (the SDK's streamable HTTP app) with every malformed POST body answered by its
    JSON-RPC error (module doc). ``host``: the address served, for the SDK's own header checks,
    which run first (a request they refuse gets the SDK's answer, never this one)."""
    from mcp.server.transport_security import TransportSecurityMiddleware
    from starlette.requests import Request
    from starlette.responses import Response

    guard = TransportSecurityMiddleware(loopback_security(host))

    async def screen(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await app(scope, receive, send)
            return
        body, complete, replay = await _read_body(receive)
        if complete and await guard.validate_request(Request(scope), is_post=True) is None:
            error = diagnose(body)
            if error is not None:
                print(f"ani mcp: answered a malformed request with {error.code}: {error.message[:200]}",
                      file=sys.stderr, flush=True)
                reply = Response(json.dumps(error.doc(), separators=(",", ":")), status_code=400,
                                 media_type="application/json")
                await reply(scope, replay, send)
                return
        await app(scope, replay, send)

    return screen


async def _read_body(receive: Receive) -> tuple[bytes, bool, Receive]:
    """(the body read, whether it is whole and within :data:`MAX_BODY_BYTES`, a ``receive`` that
    replays what was read and then reads on)."""
    chunks: list[Message] = []
    size, complete = 0, False
    while True:
        message = await receive()
        chunks.append(message)
        if message.get("type") != "http.request":
            break
        size += len(message.get("body", b""))
        if size > MAX_BODY_BYTES:
            break
        if not message.get("more_body", False):
            complete = True
            break
    body = b"".join(m.get("body", b"") for m in chunks if m.get("type") == "http.request")

    async def replay() -> Message:
        return chunks.pop(0) if chunks else await receive()

    return body, complete, replay


__all__ = ["MAX_BODY_BYTES", "loopback_security", "screened"]
