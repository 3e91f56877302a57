"""MCP over stdio that answers every malformed line (JSON-RPC 2.0 §5.1), built on the SDK's transport.

    async with screened_stdio() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())

The ``mcp`` SDK's ``stdio_server`` parses each line (:func:`ani.mcp.sdk.validate_line`); a line
that fails is handed to the session as an exception, which logs it and answers nothing, so a
client that sent an id waits for its own timeout (issue 12 §3: 8 of 24 malformed requests got no
reply). This module reads stdin itself, passes every line the SDK accepts through unchanged, and
answers every other line on the same wire (one writer for both, one whole line per write, so
frames never tear):

- ``-32700`` parse error, ``id: null``: the line is not JSON (unparsable, truncated).
- ``-32600`` invalid request, with the request's ``id`` when it can be read (a top-level
  ``"id"`` that is a string or an integer), else ``id: null``: JSON that is not one JSON-RPC 2.0
  message (a batch ``[...]``, which MCP does not use; no ``"jsonrpc": "2.0"``; nesting deeper
  than the SDK parses; an integer the SDK cannot hold, e.g. 100,000 digits; a lone UTF-16
  surrogate such as ``"\\ud800"``; any other shape the SDK rejects).

Whitespace-only lines are skipped without a reply (they carry no message). The server keeps
serving after every answer. While serving, fd 0 points at the null device and fd 1 at stderr
(as mcp 2.x's transport does for both), so a child process can neither read the client's
messages nor write onto the wire; both are restored on exit. Works with mcp 1.x and 2.x.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from io import TextIOWrapper
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from ani.mcp import sdk
from ani.mcp.sdk import types

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


@dataclass(frozen=True)
class WireError:
    """The JSON-RPC error that answers one malformed line: ``code`` (-32700 / -32600),
    ``message``, and ``id`` (the request's, or None for ``id: null``)."""

    code: int
    message: str
    id: int | str | None

    def line(self) -> str:
        """The reply as one wire line (compact JSON, newline included)."""
        doc = {"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}}
        return json.dumps(doc, separators=(",", ":")) + "\n"


def diagnose(line: str) -> WireError | None:
    """None if the SDK accepts ``line`` as one JSON-RPC message; else the error to answer it
    with (``-32700`` with ``id: null``, or ``-32600`` with the request's id when readable; see
    the module doc). ``line``: one line of the wire, newline included or not."""
    try:
        sdk.validate_line(line)
        return None
    except Exception as exc:  # noqa: BLE001 - whatever the SDK rejects, it would drop
        sdk_says = _first_problem(exc)
    try:
        doc = json.loads(line, parse_int=_parse_int)
    except RecursionError:
        return WireError(types.INVALID_REQUEST, "Invalid Request: JSON nested deeper than this server "
                         "parses", _top_level_id(line))
    except ValueError as exc:
        return WireError(types.PARSE_ERROR, f"Parse error: not JSON ({exc})", None)
    if isinstance(doc, list):
        return WireError(types.INVALID_REQUEST, "Invalid Request: a batch (JSON array); MCP sends one "
                         "JSON-RPC message per line", None)
    if not isinstance(doc, dict):
        return WireError(types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC object", None)
    rid = _readable_id(doc.get("id"))
    if doc.get("jsonrpc") != "2.0":
        why = 'no "jsonrpc": "2.0" member'
    else:
        why = sdk_says or "not a JSON-RPC 2.0 request, notification or response"
    return WireError(types.INVALID_REQUEST, f"Invalid Request: {why}", rid)


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


class _Wire:
    """The wire's stdout as the async text file the SDK's transport writes to: each ``write``
    is one whole line, written and flushed under one lock, so the SDK's messages and the
    answers to malformed lines never interleave."""

    def __init__(self, binary: Any) -> None:
        self._out = anyio.wrap_file(TextIOWrapper(binary, encoding="utf-8", write_through=True))
        self._lock = anyio.Lock()

    async def write(self, text: str) -> None:
        async with self._lock:
            await self._out.write(text)
            await self._out.flush()

    async def flush(self) -> None:  # every write is flushed already
        return None


class _ScreenedLines:
    """The lines of ``source`` the SDK can parse; every other line is answered on ``wire``."""

    def __init__(self, source: Any, wire: _Wire) -> None:
        self.source = source
        self.wire = wire

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
            print(f"ani mcp: answered a malformed line with {error.code}: {error.message[:200]}",
                  file=sys.stderr, flush=True)
            with suppress(OSError, ValueError):  # the client is gone: reading ends next
                await self.wire.write(error.line())


@contextmanager
def claimed_fd(fd: int, divert_to: int | None) -> Iterator[int]:
    """A private (non-inheritable) duplicate of the wire's ``fd`` (0 or 1); meanwhile ``fd``
    points at ``divert_to`` (a descriptor) or, if None, the null device; restored on exit."""
    private = os.dup(fd)
    os.set_inheritable(private, False)
    target = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY) if divert_to is None else divert_to
    os.dup2(target, fd)
    if divert_to is None:
        os.close(target)
    try:
        yield private
    finally:
        os.dup2(private, fd)


@asynccontextmanager
async def screened_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """``(read_stream, write_stream)`` for ``Server.run``, over this process's stdin/stdout, with
    every malformed line answered (module doc)."""
    sys.stdout.flush()
    with claimed_fd(0, None) as wire_in, claimed_fd(1, 2) as wire_out:
        # closefd=False: a worker thread may still block on these after the transport exits
        stdin = anyio.wrap_file(TextIOWrapper(os.fdopen(wire_in, "rb", closefd=False),
                                              encoding="utf-8", errors="replace"))
        wire = _Wire(os.fdopen(wire_out, "wb", closefd=False))
        lines = _ScreenedLines(stdin, wire)
        async with stdio_server(stdin=lines, stdout=wire) as streams:  # type: ignore[arg-type]
            yield streams
