"""Reading user files: YAML loading and one-line messages from pydantic ``ValidationError`` s.

:func:`read_text` reads a user file's text and :func:`load_yaml` a YAML file, raising a :class:`~ani.errors.ConfigError` (or the
subclass asked for) that names the file. :func:`format_validation_error` turns each error
into ``field.path: message`` and joins them with ``"; "``. :func:`validate_mapping` checks
a parsed file against a model, raising ``"<file>: invalid <what>: <those errors>"``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ani.errors import ConfigError

_FIELD_MSG_RE = re.compile(r"^[\w.-]+: ")

M = TypeVar("M", bound=BaseModel)


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
        format_loc: turns a path into text instead of joining it with dots (then ``prefix``
            is unused).
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
            for m in msg.split("; "):
                parts.append(f"{where}.{m}" if _FIELD_MSG_RE.match(m) else f"{where}: {m}")
        else:
            parts.append(f"{where}: {msg}")
    return "; ".join(parts)


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key written twice in one mapping (PyYAML would keep the
    last value silently: a router or a cell key written twice would lose the first). Merge keys
    (``<<: *anchor``) may still be overridden."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark)
            except TypeError:  # an unhashable key: the base class reports it
                continue
            if first is not key_node.start_mark:
                raise yaml.constructor.ConstructorError(
                    None, None,
                    f"key {key!r} is written twice in one mapping (line {first.line + 1}, "
                    f"column {first.column + 1} and line {key_node.start_mark.line + 1}, "
                    f"column {key_node.start_mark.column + 1})",
                )
        return super().construct_mapping(node, deep=deep)


def read_text(path: str | Path, error: type[ConfigError] = ConfigError) -> str:
    """The UTF-8 text of the user file at ``path``; a UTF-8 byte order mark at its start (as
    some Windows editors write) is accepted and dropped. Raises ``error`` (``"<path>: cannot
    read: <why>"``) if it is missing or unreadable, or if it is not UTF-8: the message says
    where (``not UTF-8 text: byte 0xe9 at line 3, column 17``), what it looks like (UTF-16,
    by its byte order mark or its zero bytes; else probably Latin-1 / Windows-1252) and to
    save it as UTF-8."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise error(f"{p}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{p}: cannot read: {not_utf8(data, exc)}") from None


def not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    """Why ``data`` is not UTF-8 text, in a user's words (see :func:`read_text`)."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or (len(data) > 1 and data.count(0) >= len(data) // 4):
        return "not UTF-8 text: it looks like UTF-16 (save it as UTF-8)"
    before = data[: exc.start]
    line = before.count(b"\n") + 1
    column = len(before) - (before.rfind(b"\n") + 1) + 1
    return (f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}, column {column} is not UTF-8 "
            "(the file is probably Latin-1 or Windows-1252: save it as UTF-8)")


def load_yaml(path: str | Path, error: type[ConfigError] = ConfigError) -> Any:
    """The parsed YAML of the file at ``path``.

    Raises ``error`` (``"<path>: cannot read: ..."`` or ``"<path>: not valid YAML: ..."``)
    if the file is missing, unreadable, not UTF-8 or not YAML, or if a mapping has a key twice.
    """
    p = Path(path)
    text = read_text(p, error)
    try:
        return parse_yaml(text)
    except yaml.YAMLError as exc:
        raise error(f"{p}: not valid YAML: {yaml_problem(exc)}") from None


def yaml_problem(exc: yaml.YAMLError) -> str:
    """One line for a YAML error: ``line 3, column 1: expected the node content, but found
    '<stream end>' (while parsing a flow node)`` (PyYAML's own text spans several lines, quotes
    the input and names ``<unicode string>`` instead of the file)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem is None:
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        return " ".join(lines[:1]) or type(exc).__name__
    at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    text = f"{at}{problem}" + (f" ({context})" if context else "")
    return " ".join(text.split())


def parse_yaml(text: str) -> Any:
    """The parsed YAML (or JSON) of ``text``, the way every user file is read: safe types only,
    and a key written twice in one mapping is an error. Raises ``yaml.YAMLError``."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass


def validate_mapping(
    model: type[M], data: Any, *, source: str, what: str, error: type[ConfigError] = ConfigError, **options: Any
) -> M:
    """``data`` (a parsed file) validated as ``model``.

    Raises ``error``: ``"<source>: a <what> must be a mapping, got list"``, or
    ``"<source>: invalid <what>: <errors>"`` with the errors as :func:`format_validation_error`
    (given ``options``) words them.
    """
    if not isinstance(data, dict):
        raise error(f"{source}: a {what} must be a mapping, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(f"{source}: invalid {what}: {format_validation_error(exc, **options)}") from None
