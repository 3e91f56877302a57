"""Validation errors in the words of a task or template file: ``json.path: plain message``.

Every :class:`~ani.errors.TaskFormatError` (and :class:`~ani.errors.TemplateError`) that comes
from a pydantic model of :mod:`ani.netconfbench` (a task, a testcase, a template's
``parameters``) is worded here, once, as ``"<file>: <json.path>: <message>"``::

    validation_problems(exc)
    -> ["testcases[2].expected_result.distance: must be at most 255 (got 300)",
        "parameters.left.type: 'pick' is not a parameter type (one of: choice, random_subnet, ...)",
        "intents: required"]

Paths are JSON paths (``testcases[2].expected_output``, ``startup_configs["New York"]``); the
tags pydantic puts in a path for a member of a tagged union (a testcase's shape, a parameter's
``type``) are left out (``drop``). Messages are plain words, never pydantic's ("Input should
be ...", "Extra inputs are not permitted", "Unable to extract tag using discriminator"):
:func:`plain_message` words each kind of error, and any kind it does not know keeps
pydantic's text with "Input should be" said as "must be". A model validator's message that
names its own sub-paths (``"[3]: ..."``, ``"links[2]: ..."``, several joined with ``"; "``)
is joined to the field's path.

:data:`NonBlankStr` is the string type of the fields that must say something (a task's name,
an intent, a solution id, a testcase name): ``""`` is refused with ``must not be empty``, a
whitespace-only string with ``must not be blank (whitespace only)``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from typing import Annotated, Any

from pydantic import AfterValidator, StrictStr, ValidationError

__all__ = ["NonBlankStr", "json_path", "non_blank", "plain_message", "validation_problems"]

_IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
#: a sub-path at the start of a validator's message (``commands[0]: ...``, ``links[2]: ...``)
_SUB_PATH_RE = re.compile(r"^[A-Za-z_]\w*(\[\d+\])?$")

#: error kinds whose message is fixed
_FIXED = {
    "missing": "required",
    "string_type": "must be a string",
    "list_type": "must be an array",
    "tuple_type": "must be an array",
    "set_type": "must be an array",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dataclass_type": "must be an object",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "none_required": "must be null",
    "ip_v4_network": "not an IPv4 prefix A.B.C.D/L (or A.B.C.D M.M.M.M) without host bits",
    "ip_v4_interface": "not an IPv4 address with its length A.B.C.D/L",
    "ip_v4_address": "not an IPv4 address",
}


def non_blank(value: str) -> str:
    """``value`` if it holds a character other than whitespace; else raises ValueError
    ``must not be empty`` (``""``) or ``must not be blank (whitespace only)``."""
    if not value.strip():
        raise ValueError("must not be empty" if not value else "must not be blank (whitespace only)")
    return value


#: a string that must say something: a task's name, an intent, a solution id, a testcase name
NonBlankStr = Annotated[StrictStr, AfterValidator(non_blank)]


def json_path(loc: tuple[Any, ...] | list[Any], drop: Collection[str] = ()) -> str:
    """A pydantic location as a JSON path: ``("testcases", 2, "expected_output")`` ->
    ``testcases[2].expected_output``; a key that is no identifier is quoted
    (``startup_configs["New York"]``); the parts in ``drop`` (union tags) are left out."""
    out = ""
    for part in loc:
        if isinstance(part, str) and part in drop:
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT_RE.match(str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{json.dumps(str(part))}]"
    return out


def _listing(text: str) -> str:
    """pydantic's ``"'a', 'b' or 'c'"`` as ``a, b, c``."""
    return ", ".join(p.strip().strip("'") for p in re.split(r",| or ", str(text)) if p.strip())


def _got(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def plain_message(err: Any) -> str:
    """One pydantic error (an item of ``ValidationError.errors()``) in plain words (module doc)."""
    kind = str(err.get("type", ""))
    ctx = err.get("ctx") or {}
    value = err.get("input")
    if kind in _FIXED:
        return _FIXED[kind]
    if kind in ("too_short", "string_too_short"):
        n = ctx.get("min_length", 1)
        return "must not be empty" if n == 1 else f"must have at least {n} {'characters' if 'string' in kind else 'items'}"
    if kind in ("too_long", "string_too_long"):
        return f"must have at most {ctx.get('max_length')} {'characters' if 'string' in kind else 'items'}"
    bounds = {"less_than_equal": ("at most", "le"), "less_than": ("less than", "lt"),
              "greater_than_equal": ("at least", "ge"), "greater_than": ("greater than", "gt")}
    if kind in bounds:
        words, key = bounds[kind]
        return f"must be {words} {ctx.get(key)} (got {_got(value)})"
    if kind == "literal_error":
        return f"{_got(value)} is not one of: {_listing(ctx.get('expected', ''))}"
    if kind == "enum":
        return f"{_got(value)} is not one of: {_listing(ctx.get('expected', ''))}"
    if kind == "string_pattern_mismatch":
        return f"{_got(value)} is not of the form {ctx.get('pattern')}"
    if kind == "union_tag_invalid":
        return f"{_got(ctx.get('tag'))} is not one of: {_listing(ctx.get('expected_tags', ''))}"
    if kind == "union_tag_not_found":
        return "required"
    if kind == "extra_forbidden":
        return "not an accepted key"
    msg = str(err.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if kind in ("value_error", "assertion_error"):
        return msg
    msg = re.sub(r"^Input should be\b", "must be", msg)
    return msg[:1].lower() + msg[1:]


def _tag_key(err: Any) -> str | None:
    """The discriminator key of a union-tag error (``type``), else None."""
    if err.get("type") in ("union_tag_invalid", "union_tag_not_found"):
        return str((err.get("ctx") or {}).get("discriminator", "")).strip("'\"") or None
    return None


def validation_problems(exc: ValidationError, *, prefix: str = "", drop: Collection[str] = (),
                        explain: Callable[[Any], str | None] | None = None) -> list[str]:
    """``["json.path: message", ...]``, one per error of ``exc`` (module doc).

    Args:
        prefix: the JSON path of the validated value in its file (``testcases[2]``), put before
            every path ("" : the file's top level).
        drop: union tags to leave out of the paths (:func:`json_path`).
        explain: ``error -> message`` for the errors a caller words better than
            :func:`plain_message` (a key the model forbids: naming the accepted keys); a None
            answer, or no ``explain``: :func:`plain_message`.
    """
    parts: list[str] = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        where = json_path(loc, drop)
        if (key := _tag_key(err)) is not None:
            where = f"{where}.{key}" if where else key
        if prefix:
            where = f"{prefix}{'' if not where or where.startswith('[') else '.'}{where}"
        msg = (explain(err) if explain is not None else None) or plain_message(err)
        if err["type"] not in ("value_error", "assertion_error"):
            parts.append(f"{where}: {msg}" if where else msg)
            continue
        for m in msg.split("; "):
            head, sep, rest = m.partition(": ")
            if sep and head.startswith("[") and head.endswith("]"):
                parts.append(f"{where}{head}: {rest}")
            elif sep and where and _SUB_PATH_RE.match(head):
                parts.append(f"{where}.{m}")  # a validator's own sub-path within ``where``
            else:
                parts.append(f"{where}: {m}" if where else m)
    return parts
