"""MCP over stdio that answers every malformed line (JSON-RPC 2.0 §5.1), built on the SDK's transport.

    async with screened_stdio() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())

The ``mcp`` SDK's ``stdio_server`` parses each line (:func:`ani.mcp.sdk.validate_line`); a line
that fails is handed to the session as an exception, which logs it and answers nothing, so a
client that sent an id waits for its own timeout (issue 12 §3: 8 of 24 malformed requests got no
reply). This module reads stdin itself, passes every line the SDK accepts as one well-formed message
through unchanged, and answers every other line on the same wire with the JSON-RPC error
:func:`ani.mcp.envelope.diagnose` names (``-32700`` / ``-32600``; one writer for both, one whole
line per write, so frames never tear), including a request whose ``id`` is null, a boolean, a
float or an object, which the SDK would take for a notification and not answer.

Whitespace-only lines are skipped without a reply (they carry no message). The server keeps
serving after every answer. While serving, fd 0 points at the null device and fd 1 at stderr
(as mcp 2.x's transport does for both), so a child process can neither read the client's
messages nor write onto the wire; both are restored on exit. Works with mcp 1.x and 2.x.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from io import TextIOWrapper
from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from ani.mcp.envelope import MAX_ID_CHARS, WireError, diagnose


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


__all__ = ["MAX_ID_CHARS", "WireError", "claimed_fd", "diagnose", "screened_stdio"]
