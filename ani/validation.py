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

#: a key of a user's file is named in an error only when it looks like a name (a field, a
#: router): at most 40 letters, digits, ``_ . -``. Anything else (a line of a file of another
#: kind, such as ``/etc/shadow`` given as a platform file, a hash, a key's base64) is never
#: quoted: an error names where it is and what is wrong, never a file's content.
NAMEABLE_KEY_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,39}$")
#: what stands in a path for a key that is not shown (:data:`NAMEABLE_KEY_RE`)
HIDDEN_KEY = "<key not shown>"

M = TypeVar("M", bound=BaseModel)


def _dotted(loc: tuple[Any, ...], prefix: str) -> str:
    return ".".join([prefix, *map(str, loc)] if prefix else map(str, loc))


def nameable(key: Any) -> bool:
    """Whether ``key`` (a key or index of a user's file) may be named in an error
    (:data:`NAMEABLE_KEY_RE`; an index always)."""
    return isinstance(key, int) or bool(NAMEABLE_KEY_RE.match(str(key)))


def shown_key(key: Any) -> Any:
    """``key`` as an error may show it: itself if :func:`nameable`, else :data:`HIDDEN_KEY`."""
    return key if nameable(key) else HIDDEN_KEY


def closest(key: str, candidates: list[str]) -> str | None:
    """The one of ``candidates`` that ``key`` likely misspells (difflib, ratio 0.75 or more), or
    None."""
    import difflib

    found = difflib.get_close_matches(key, [c for c in candidates if c != key], n=1, cutoff=0.75)
    return found[0] if found else None


def close_match(key: str, candidates: list[str]) -> str:
    """`` (did you mean 'testcases'?)`` when ``key`` is a likely misspelling of one of
    ``candidates`` (:func:`closest`), else ``""``."""
    found = closest(key, candidates)
    return f" (did you mean {found!r}?)" if found else ""


def format_validation_error(
    exc: ValidationError,
    *,
    prefix: str = "",
    top: str = "",
    format_loc: Callable[[tuple[Any, ...]], str] | None = None,
    split_nested: bool = False,
    unknown: str = "",
    known: list[str] | None = None,
) -> str:
    """``"loc: msg; loc: msg"`` for the errors of ``exc`` (pydantic's ``"Value error, "`` dropped).

    A key of the input is named only when it looks like a name (:func:`nameable`); the others
    stand as :data:`HIDDEN_KEY` in a path, and the unknown ones are counted in one last part
    (``3 unknown keys that are not names (not shown)``), so a file of another kind given in
    place of this one (``/etc/shadow``) is never quoted. An unknown key that is a likely
    misspelling of a field (one reported missing beside it, or one of ``known`` at the top
    level) says so: ``testcase: unknown key (did you mean 'testcases'?)``.

    Args:
        prefix: first part of every dotted path (``"checks"`` -> ``checks.0.router: ...``).
        top: where an error with no path is said to be (``"arguments"``); if empty, such a
            message stands alone (a model validator's message already names its fields).
        format_loc: turns a path into text instead of joining it with dots (then ``prefix``
            is unused).
        split_nested: a value error's message that is itself a ``"a: x; b: y"`` list (a nested
            model's validator) becomes ``loc.a: x; loc.b: y``.
        unknown: message for a field the model forbids (``extra_forbidden``), instead of pydantic's.
        known: the model's top-level field names, to suggest for a misspelt top-level key.
    """
    parts: list[str] = []
    errors = exc.errors()
    missing: dict[tuple[Any, ...], list[str]] = {(): list(known or [])}
    for err in errors:
        if err["type"] == "missing" and err["loc"]:
            missing.setdefault(tuple(err["loc"])[:-1], []).append(str(err["loc"][-1]))
    hidden = 0
    for err in errors:
        raw = tuple(err["loc"])
        extra = err["type"] == "extra_forbidden"
        if extra and raw and not nameable(raw[-1]):
            hidden += 1
            continue
        loc = tuple(shown_key(p) for p in raw)
        where = format_loc(loc) if format_loc is not None else _dotted(loc, prefix)
        where = where or top
        msg = err["msg"].removeprefix("Value error, ")
        if extra:
            msg = (unknown or msg) + (close_match(str(raw[-1]), missing.get(raw[:-1], [])) if raw else "")
        if not where:
            parts.append(msg)
        elif split_nested and err["type"] == "value_error":
            for m in msg.split("; "):
                parts.append(f"{where}.{m}" if _FIELD_MSG_RE.match(m) else f"{where}: {m}")
        else:
            parts.append(f"{where}: {msg}")
    if hidden:
        parts.append(f"{hidden} unknown key{'s that are not names' if hidden > 1 else ' that is not a name'} "
                     "(not shown: is it a file of another kind?)")
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
                    f"key {repr(key) if nameable(key) else HIDDEN_KEY} is written twice in one mapping (line {first.line + 1}, "
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
    return _QUOTED.sub(_shown_quote, " ".join(text.split()))


#: a quoted token in PyYAML's words (``found undefined alias 'x'``, ``the tag '...'``, ``key 'k'``)
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def _shown_quote(m: re.Match[str]) -> str:
    """A quoted token of a YAML problem as shown: itself when it is a name, a character or one
    of PyYAML's token names (``'<stream end>'``), else ``<not shown>`` (a file's content)."""
    inner = m.group(1) if m.group(1) is not None else m.group(2)
    if len(inner) <= 4 or nameable(inner) or (inner.startswith("<") and inner.endswith(">") and len(inner) < 30):
        return m.group(0)
    return "<not shown>"


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
    options.setdefault("known", [f.alias or n for n, f in model.model_fields.items()])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(f"{source}: invalid {what}: {format_validation_error(exc, **options)}") from None
