"""MCP over stdio that answers every malformed line (JSON-RPC 2.0 §5.1), built on the SDK's transport.

    async with screened_stdio() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())

The ``mcp`` SDK's ``stdio_server`` parses each line with ``jsonrpc_message_adapter.validate_json``;
a line that fails is handed to the session as an exception, which logs it and answers nothing, so
a client that sent an id waits for its own timeout (issue 12 §3: 8 of 24 malformed requests got no
reply). This module reads stdin itself, passes every line the SDK accepts through unchanged, and
answers every other line on the same wire (through the transport's writer, so frames never tear):

- ``-32700`` parse error, ``id: null``: the line is not JSON (unparsable, truncated).
- ``-32600`` invalid request, with the request's ``id`` when it can be read (a top-level
  ``"id"`` that is a string or an integer), else ``id: null``: JSON that is not one JSON-RPC 2.0
  message (a batch ``[...]``, which MCP does not use; no ``"jsonrpc": "2.0"``; nesting deeper
  than the SDK parses; an integer the SDK cannot hold, e.g. 100,000 digits; a lone UTF-16
  surrogate such as ``"\\ud800"``; any other shape the SDK rejects).

Whitespace-only lines are skipped without a reply (they carry no message). The server keeps
serving after every answer. While serving, fd 0 points at the null device (as the SDK does for
both descriptors), so a child process cannot read the client's messages; it is restored on exit.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from io import TextIOWrapper
from typing import Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

#: longest id (characters of a string, digits of an integer) echoed back; longer ids read as null
MAX_ID_CHARS = 256

_SPACE = re.compile(r"[ \t\r\n]*")


class _Huge:
    """Stands for an integer literal too long for Python's ``int()`` (over 4300 digits)."""


def _parse_int(text: str) -> int | _Huge:
    return int(text) if len(text) <= 4000 else _Huge()


def _readable_id(value: Any) -> int | str | None:
    """``value`` as a JSON-RPC id to echo: a string or integer (not a bool) short enough to
    echo and encodable as UTF-8; anything else is None (``id: null``)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    if isinstance(value, int):
        return value if len(str(abs(value))) <= MAX_ID_CHARS else None
    if len(value) > MAX_ID_CHARS:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate cannot go on the wire
        return None
    return value


def _top_level_id(line: str) -> int | str | None:
    """The ``"id"`` member of the top-level object of ``line``, read without parsing the
    (possibly very deep) rest: a scan that tracks nesting depth and strings; None if absent or
    not readable."""
    start = _SPACE.match(line).end()
    if not line.startswith("{", start):
        return None
    decoder = json.JSONDecoder(parse_int=_parse_int)
    depth, i, n = 0, start, len(line)
    while i < n:
        c = line[i]
        if c == '"':
            try:
                text, end = json.decoder.scanstring(line, i + 1)
            except ValueError:
                return None
            if depth == 1:
                colon = _SPACE.match(line, end).end()
                if line.startswith(":", colon) and text == "id":
                    try:
                        value, _ = decoder.raw_decode(line, _SPACE.match(line, colon + 1).end())
                    except (ValueError, RecursionError):
                        return None
                    return _readable_id(value)
            i = end
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return None
        i += 1
    return None


def diagnose(line: str) -> types.JSONRPCError | None:
    """None if the SDK accepts ``line`` as one JSON-RPC message; else the error to answer it
    with (``-32700`` with ``id: null``, or ``-32600`` with the request's id when readable; see
    the module doc). ``line``: one line of the wire, newline included or not."""
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except Exception as exc:  # noqa: BLE001 - whatever the SDK rejects, it would drop
        sdk_says = _first_problem(exc)
    try:
        doc = json.loads(line, parse_int=_parse_int)
    except RecursionError:
        return _error(types.INVALID_REQUEST, "Invalid Request: JSON nested deeper than this server "
                      "parses", _top_level_id(line))
    except ValueError as exc:
        return _error(types.PARSE_ERROR, f"Parse error: not JSON ({exc})", None)
    if isinstance(doc, list):
        return _error(types.INVALID_REQUEST, "Invalid Request: a batch (JSON array); MCP sends one "
                      "JSON-RPC message per line", None)
    if not isinstance(doc, dict):
        return _error(types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC object", None)
    rid = _readable_id(doc.get("id"))
    if doc.get("jsonrpc") != "2.0":
        why = 'no "jsonrpc": "2.0" member'
    else:
        why = sdk_says or "not a JSON-RPC 2.0 request, notification or response"
    return _error(types.INVALID_REQUEST, f"Invalid Request: {why}", rid)


def _first_problem(exc: Exception) -> str:
    """The SDK's (pydantic's) first complaint, one short line: ``Invalid JSON: number out of
    range at line 1 column 4362``, ``jsonrpc: Field required``."""
    errors = getattr(exc, "errors", None)
    try:
        first = errors()[0] if callable(errors) else None
    except Exception:  # noqa: BLE001
        first = None
    if not first:
        return " ".join(str(exc).split())[:200]
    loc = ".".join(str(p) for p in first.get("loc", ())[1:])
    return f"{loc}: {first['msg']}" if loc else str(first["msg"])


def _error(code: int, message: str, rid: int | str | None) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=rid, error=types.ErrorData(code=code, message=message))


class _ScreenedLines:
    """The lines of ``source`` the SDK can parse; every other line is answered on ``reply``."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.reply: Any = None
        self.ready = anyio.Event()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.source:
            if not line.strip():
                continue
            error = diagnose(line)
            if error is None:
                yield line
                continue
            print(f"ani mcp: answered a malformed line with {error.error.code}: "
                  f"{error.error.message[:200]}", file=sys.stderr, flush=True)
            await self.ready.wait()
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self.reply.send(SessionMessage(error))


@asynccontextmanager
async def _claimed_stdin() -> AsyncIterator[Any]:
    """The wire's stdin as an async text file; fd 0 points at the null device meanwhile."""
    private = os.dup(0)
    os.set_inheritable(private, False)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        binary = os.fdopen(private, "rb", closefd=False)  # a worker thread may still block on it
        yield anyio.wrap_file(TextIOWrapper(binary, encoding="utf-8", errors="replace"))
    finally:
        os.dup2(private, 0)


@asynccontextmanager
async def screened_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` for ``Server.run``, over this process's stdin/stdout, with
    every malformed line answered (module doc)."""
    async with _claimed_stdin() as stdin:
        lines = _ScreenedLines(stdin)
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.reply = write_stream
            lines.ready.set()
            yield read_stream, write_stream
