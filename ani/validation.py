"""One-line error messages from pydantic ``ValidationError`` s, shared by every file and argument parser.

:func:`format_validation_error` turns each error into ``field.path: message`` and joins
them with ``"; "``; callers put their own ``"<file>: invalid ...: "`` in front.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

_FIELD_MSG_RE = re.compile(r"^[\w.-]+: ")


def _dotted(loc: tuple[Any, ...], prefix: str) -> str:
    return ".".join([prefix, *map(str, loc)] if prefix else map(str, loc))


def format_validation_error(
    exc: ValidationError,
    *,
    prefix: str = "",
    top: str = "",
    format_loc: Callable[[tuple[Any, ...]], str] | None = None,
    split_nested: bool = False,
    unknown: str = "",
) -> str:
    """``"loc: msg; loc: msg"`` for the errors of ``exc`` (pydantic's ``"Value error, "`` dropped).

    Args:
        prefix: first part of every dotted path (``"checks"`` -> ``checks.0.router: ...``).
        top: where an error with no path is said to be (``"arguments"``); if empty, such a
            message stands alone (a model validator's message already names its fields).
        format_loc: turns a path into text instead of joining it with dots (``prefix`` is then unused).
        split_nested: a value error's message that is itself a ``"a: x; b: y"`` list (a nested
            model's validator) becomes ``loc.a: x; loc.b: y``.
        unknown: message for a field the model forbids (``extra_forbidden``), instead of pydantic's.
    """
    parts: list[str] = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        where = format_loc(loc) if format_loc is not None else _dotted(loc, prefix)
        where = where or top
        msg = err["msg"].removeprefix("Value error, ")
        if unknown and err["type"] == "extra_forbidden":
            msg = unknown
        if not where:
            parts.append(msg)
        elif split_nested and err["type"] == "value_error":
            parts.extend(f"{where}.{m}" if _FIELD_MSG_RE.match(m) else f"{where}: {m}" for m in msg.split("; "))
        else:
            parts.append(f"{where}: {msg}")
    return "; ".join(parts)
