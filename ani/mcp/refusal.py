"""Why ``ani mcp serve`` cannot serve, told to the MCP client that spawned it (stdio).

A stdio client that spawns a server which prints an error on stderr and exits sees only a closed
pipe: the official client raises ``Connection closed`` inside an ExceptionGroup, and nothing
names the cause (stdio clients do not show the server's stderr). So when the server cannot start
(no level, no such lab, a bad option, an adapter that does not open, the ``mcp`` package
missing), it first answers the client's requests on the wire, each with one JSON-RPC error
whose message is the reason, and only then exits with its exit code:

    {"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"ani mcp serve cannot start: ..."}}

The client's first request (``initialize``; an mcp 2.x client probes ``server/discover``
first and falls back to ``initialize`` on an error) fails with that message (mcp 2.x
``MCPError``, 1.x ``McpError``), so the client shows it. Needs no ``mcp`` package: it is the
answer when that package is missing too.

It answers only where a client can be on the other end: stdin is fd 0 and not a terminal (at a
terminal the error line on stderr says it all and the command exits at once). It answers every
request until stdin closes, at most :data:`BOUND_S` seconds in all and :data:`AFTER_INIT_S` after
the ``initialize`` request; notifications and lines that are not JSON are read and dropped.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time

#: the JSON-RPC error code of the answer (JSON-RPC 2.0 "Internal error": the server cannot serve)
CODE = -32603
#: longest the refusal reads stdin, seconds
BOUND_S = 30.0
#: how long it goes on reading after answering ``initialize`` (the client gives up then), seconds
AFTER_INIT_S = 5.0


def client_may_listen() -> bool:
    """True if stdin is the process's fd 0 and not a terminal: an MCP client may be writing
    to it (a test runner's replaced ``sys.stdin`` or a terminal: False)."""
    try:
        return sys.stdin is not None and sys.stdin.fileno() == 0 and not os.isatty(0)
    except (AttributeError, OSError, ValueError):
        return False


def message_for(reason: str) -> str:
    """The text a client shows: ``ani mcp serve cannot start: <reason>``."""
    return f"ani mcp serve cannot start: {reason}"


def refuse(reason: str, *, bound_s: float = BOUND_S, after_init_s: float = AFTER_INIT_S) -> int:
    """Answer every request read from fd 0 with a JSON-RPC error naming ``reason`` (on fd 1),
    until EOF or the bounds (module doc). Returns how many requests were answered."""
    answered = 0
    buf = b""
    now = time.monotonic()
    deadline = now + bound_s
    text = message_for(reason)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return answered
        try:
            ready, _, _ = select.select([0], [], [], left)
        except (OSError, ValueError):
            return answered
        if not ready:
            return answered
        try:
            chunk = os.read(0, 65536)
        except OSError:
            return answered
        if not chunk:
            return answered
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            rid, method = _request(line)
            if method is None:
                continue
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": CODE, "message": text}}
            try:
                os.write(1, (json.dumps(reply, separators=(",", ":")) + "\n").encode())
            except OSError:  # the client is gone
                return answered
            answered += 1
            if method == "initialize":
                deadline = min(deadline, time.monotonic() + after_init_s)


def _request(line: bytes) -> tuple[int | str | None, str | None]:
    """(id, method) of a JSON-RPC request line; (None, None) for anything else (a notification,
    a response, a line that is not JSON)."""
    try:
        doc = json.loads(line)
    except ValueError:
        return None, None
    if not isinstance(doc, dict) or not isinstance(doc.get("method"), str) or "id" not in doc:
        return None, None
    rid = doc["id"]
    if isinstance(rid, bool) or not isinstance(rid, (int, str)):
        return None, None
    return rid, doc["method"]
