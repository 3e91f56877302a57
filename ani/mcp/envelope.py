"""Which JSON-RPC error answers a malformed MCP message (JSON-RPC 2.0 §5.1), for every transport.

    error = diagnose(line)        # None: pass it to the SDK; else answer error.line() / error.doc()

The official ``mcp`` SDK drops some malformed messages without a word (stdio: every line it
cannot parse; both transports: a request whose ``id`` is not a string or an integer, which it
reads as a notification, so over HTTP it answers ``202 Accepted`` and over stdio nothing, and a
client waits for its own timeout), and answers others with the wrong code (HTTP: ``-32602
Validation error`` for an envelope that is not JSON-RPC). :func:`diagnose` says what each calls for:

- ``-32700`` parse error, ``id: null``: the line is not JSON (unparsable, truncated).
- ``-32600`` invalid request, with the request's ``id`` when it can be read (a top-level
  ``"id"`` that is a string or an integer), else ``id: null``: JSON that is not one JSON-RPC 2.0
  message (a batch ``[...]``, which MCP does not use; no ``"jsonrpc": "2.0"``; nesting deeper
  than the SDK parses; an integer the SDK cannot hold, e.g. 100,000 digits; a lone UTF-16
  surrogate such as ``"\\ud800"``; any other shape the SDK rejects); and a request whose ``id``
  is null, a boolean, a float, an object or an array (always ``id: null``: MCP ids are strings
  or integers, JSON-RPC 2.0 §4).

Used by :mod:`ani.mcp.stdio` (every wire line) and :mod:`ani.mcp.http_screen` (every POST body).
Works with mcp 1.x and 2.x (:mod:`ani.mcp.sdk`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pydantic_core

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

    def doc(self) -> dict[str, Any]:
        """The reply: ``{"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}``."""
        return {"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}}

    def line(self) -> str:
        """The reply as one wire line (compact JSON, newline included)."""
        return json.dumps(self.doc(), separators=(",", ":")) + "\n"


def diagnose(line: str | bytes) -> WireError | None:
    """None if ``line`` is one well-formed JSON-RPC 2.0 message for MCP; else the error to
    answer it with (``-32700`` with ``id: null``, or ``-32600`` with the request's id when
    readable; see the module doc). ``line``: one line of the wire (newline included or not), or
    one HTTP request's body."""
    try:
        message = sdk.validate_line(line)
    except Exception as exc:  # noqa: BLE001 - whatever the SDK rejects, it would drop
        return _rejected(line if isinstance(line, str) else line.decode("utf-8", "replace"), _first_problem(exc))
    if isinstance(message, types.JSONRPCNotification):
        return _id_of_a_notification(line)
    return None


def _id_of_a_notification(line: str | bytes) -> WireError | None:
    """A line the SDK read as a notification but that has an ``"id"`` member: a request whose
    id is not a string or an integer (null, a boolean, a float, an object, an array). The SDK
    drops its ``id`` and answers nothing; JSON-RPC 2.0 §5 calls for an error with ``id: null``
    (MCP: a request's id is a string or an integer, never null)."""
    try:
        doc = pydantic_core.from_json(line)  # the SDK's own parser: it read this line already
    except ValueError:
        return None
    if not isinstance(doc, dict) or "id" not in doc:
        return None
    return WireError(types.INVALID_REQUEST, f"Invalid Request: id is {_json_kind(doc['id'])}; a request's id "
                     "is a string or an integer (MCP: never null), a notification has no id", None)


def _json_kind(value: Any) -> str:
    """What JSON value ``value`` is, in words (never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float):
        return "a number with a fraction or an exponent"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return f"a {type(value).__name__}"


def _rejected(line: str, sdk_says: str) -> WireError:
    """The error for a line the SDK rejected (``sdk_says``: its first complaint)."""
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


__all__ = ["MAX_ID_CHARS", "WireError", "diagnose"]
