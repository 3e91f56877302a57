"""Safe RFC 6902 JSON Patch over the ``jsonpatch`` library.

- atomic: applied to a deep copy; on any failure the input is untouched and :class:`PatchError`
  (index, op, path, message) is raised; every exception of jsonpatch / jsonpointer, including
  the ones outside their hierarchy (KeyError, TypeError, IndexError, ValueError), becomes one.
- pointers are checked first (RFC 6901: ``""`` or ``/...``; ``~`` only as ``~0`` / ``~1``; array
  indices without leading zeros; ``-`` only as the target of ``add`` / ``move`` / ``copy``), and a
  missing parent is named (with a hint when a key holding ``/`` was not escaped).
- ``test`` compares JSON values (RFC 6902 §4.6): same type, numbers numerically equal
  (``1 == 1.0``), booleans are not numbers (``true != 1``, ``false != 0``).
- :func:`pointer` builds a pointer from raw keys, escaping ``~`` before ``/``.
- bounded (:mod:`ani.sot.bounds`): at most ``MAX_OPS`` operations; the document is measured (as
  compact JSON) whenever an operation may have grown it past ``max_bytes``, so a few ``copy``
  operations that double it each time are refused at the one that crosses the bound, before
  memory grows; messages quote no value longer than ``SHOW_MAX`` characters, and ``PatchError.op``
  holds the operation without its ``value``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch
import jsonpointer

from ani.sot.bounds import MAX_FILE_BYTES, MAX_OPS, show
from ani.sot.errors import PatchError

__all__ = ["apply_patch", "pointer", "json_equal", "PatchError"]

#: the deepest nesting of an operation's value (a device document is about 6 deep); deeper
#: values are refused before copying (copy / json recursion would overflow on a few hundred)
MAX_DEPTH = 64
#: the longest JSON Pointer (``path`` / ``from``) of an operation, in characters
MAX_POINTER_CHARS = 2048

_OPS = {"add": ("value",), "remove": (), "replace": ("value",), "move": ("from",), "copy": ("from",), "test": ("value",)}


def pointer(*parts: Any) -> str:
    """A JSON Pointer from raw reference tokens: ``pointer("static_routes", "192.0.2.0/24",
    "next_hop") == "/static_routes/192.0.2.0~124/next_hop"`` (``~`` -> ``~0`` before ``/`` -> ``~1``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values per RFC 6902 §4.6 (booleans are not numbers)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) or isinstance(b, (int, float)):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def _tokens(path: Any, what: str) -> list[str]:
    if not isinstance(path, str):
        raise ValueError(f"{what} must be a string JSON Pointer")
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError(f"{what} {show(path)} must be empty or start with '/'")
    if len(path) > MAX_POINTER_CHARS:
        raise ValueError(f"{what} is {len(path)} characters, at most {MAX_POINTER_CHARS}")
    out = []
    for raw in path[1:].split("/"):
        i = raw.find("~")
        while i != -1:
            if raw[i + 1:i + 2] not in ("0", "1"):
                raise ValueError(f"{what} {show(path)}: '~' must be followed by 0 or 1 (RFC 6901); "
                                 "escape '~' as ~0 and '/' as ~1 (ani.sot.patch.pointer does it)")
            i = raw.find("~", i + 2)
        out.append(raw.replace("~1", "/").replace("~0", "~"))
    return out


def _join(tokens: list[str]) -> str:
    return pointer(*tokens)


def _resolve(doc: Any, tokens: list[str], path: str, *, last_may_be_new: bool, allow_dash: bool) -> Any:
    """Walk ``tokens``; the last one may be missing if ``last_may_be_new``. Raises ValueError
    naming the first missing or bad parent."""
    cur = doc
    for i, tok in enumerate(tokens):
        last = i == len(tokens) - 1
        here = _join(tokens[: i + 1])
        if isinstance(cur, dict):
            if tok not in cur:
                if last and last_may_be_new:
                    return None
                hint = ""
                rest = tokens[i + 1:]
                for j in range(1, len(rest) + 1):
                    if "/".join([tok, *rest[:j]]) in cur:
                        hint = (f"; the key {'/'.join([tok, *rest[:j]])!r} exists: escape '/' in a key as ~1 "
                                f"(ani.sot.patch.pointer builds the path)")
                        break
                if last:
                    raise ValueError(f"{here} does not exist{hint}")
                raise ValueError(f"missing parent: {here} does not exist (needed by {path}){hint}")
            cur = cur[tok]
        elif isinstance(cur, list):
            if tok == "-":
                if last and allow_dash:
                    return None
                raise ValueError(f"{here}: '-' (end of array) is only valid as the target of add")
            if not (tok.isascii() and tok.isdigit()) or (len(tok) > 1 and tok[0] == "0"):
                raise ValueError(f"{here}: array index {tok!r} must be digits (0-9) without a leading zero")
            n = int(tok)
            limit = len(cur) + (1 if last and last_may_be_new else 0)
            if n >= limit:
                raise ValueError(f"{here}: array index {n} out of range (length {len(cur)})"
                                 if last else f"missing parent: {here} (array index {n} out of range, length {len(cur)})")
            if last and n == len(cur):
                return None
            cur = cur[n]
        else:
            parent = _join(tokens[:i])
            raise ValueError(f"missing parent: {parent or '/'} is {'null' if cur is None else type(cur).__name__}, "
                             f"not an object or array (needed by {path})")
    return cur


def _check_depth(value: Any) -> None:
    """Raises ValueError if ``value`` nests deeper than MAX_DEPTH (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > MAX_DEPTH:
                raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))


def _check_op(doc: Any, op: Any) -> None:
    if not isinstance(op, dict):
        raise ValueError("an operation must be an object")
    _check_depth(op.get("value"))
    name = op.get("op")
    if name not in _OPS:
        raise ValueError(f"unknown op {show(name)} (one of {', '.join(_OPS)})")
    if "path" not in op:
        raise ValueError("missing 'path'")
    for member in _OPS[name]:
        if member not in op:
            raise ValueError(f"{name} needs {member!r}")
    path = op["path"]
    tokens = _tokens(path, "path")
    if name in ("move", "copy"):
        src = _tokens(op["from"], "from")
        _resolve(doc, src, op["from"], last_may_be_new=False, allow_dash=False)
        if name == "move" and tokens[: len(src)] == src and len(tokens) > len(src):
            raise ValueError(f"cannot move {op['from']} into its own child {path}")
    if name in ("add", "move", "copy"):
        if tokens:
            _resolve(doc, tokens, path, last_may_be_new=True, allow_dash=True)
    else:
        _resolve(doc, tokens, path, last_may_be_new=False, allow_dash=False)
        if name in ("remove",) and not tokens:
            raise ValueError("cannot remove the whole document")


def json_size(value: Any) -> int:
    """Characters of ``value`` as compact JSON (the measure of :func:`apply_patch`'s bound)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def _summary(op: Any) -> Any:
    """``op`` for an error: its ``op``, ``path`` and ``from``, each cut to SHOW_MAX (never the value)."""
    if not isinstance(op, dict):
        return show(op)
    return {k: (v if isinstance(v, str) and len(v) <= 200 else show(v)) for k, v in op.items()
            if k in ("op", "path", "from")}


def _growth(work: Any, op: dict) -> int:
    """Characters of the subtree ``op`` puts into ``work`` (its value, or what it copies), plus
    its key: an upper bound on how much it grows the compact JSON of ``work``, and a lower bound
    on the size of the result for add / replace / copy (the result holds that subtree)."""
    name = op["op"]
    if name in ("add", "replace"):
        return json_size(op["value"]) + len(op["path"])
    if name == "copy":
        src = _resolve(work, _tokens(op["from"], "from"), op["from"], last_may_be_new=False, allow_dash=False)
        return json_size(src) + len(op["path"])
    if name == "move":
        return len(op["path"])
    return 0


def apply_patch(doc: Any, ops: Any, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """``doc`` with the RFC 6902 patch ``ops`` applied (a new object; ``doc`` is never modified).
    Raises :class:`PatchError` on the first failing operation, for more than ``MAX_OPS``
    operations, and at the operation after which the document, as compact JSON, is longer than
    ``max_bytes`` characters (checked as the patch is applied, so memory stays bounded)."""
    if not isinstance(ops, list):
        raise PatchError(None, None, None, "a JSON Patch is an array of operations")
    if len(ops) > MAX_OPS:
        raise PatchError(None, None, None, f"{len(ops)} operations, at most {MAX_OPS} in one patch")
    work = copy.deepcopy(doc)
    size = estimate = json_size(work)
    for i, op in enumerate(ops):
        path = op.get("path") if isinstance(op, dict) else None
        try:
            _check_op(work, op)
            if op["op"] == "test":
                _test(work, op)
                continue
            grows = _growth(work, op)
            if grows > max_bytes:  # the result holds that subtree: refused before it is built
                raise ValueError(_too_big(grows, max_bytes, "at least "))
            estimate += grows + 4  # punctuation: '"key":' and ','
            work = jsonpatch.JsonPatch([copy.deepcopy(op)]).apply(work, in_place=True)
            if estimate > max_bytes:  # measure only when the bound may be crossed
                size = estimate = json_size(work)
                if size > max_bytes:
                    raise ValueError(_too_big(size, max_bytes))
        except PatchError:
            raise
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException,
                KeyError, TypeError, IndexError, ValueError, AttributeError) as e:
            msg = str(e) if not isinstance(e, KeyError) else f"no such key {show(e.args[0] if e.args else e)}"
            raise PatchError(i, _summary(op), show(path, 200) if path is not None and len(str(path)) > 200
                             else path, msg) from None
    try:
        _check_depth(work)  # values within the limit can still stack up: a/b/... added op by op
    except ValueError as e:
        raise PatchError(None, None, None, f"the resulting document: {e}") from None
    return work


def _test(work: Any, op: dict) -> None:
    """The ``test`` operation (RFC 6902 §4.6); ValueError naming both values (each cut to 200 characters)."""
    actual = _resolve(work, _tokens(op["path"], "path"), op["path"], last_may_be_new=False, allow_dash=False)
    if not json_equal(actual, op["value"]):
        note = ""
        if any(isinstance(v, bool) for v in (actual, op["value"])) and actual == op["value"]:
            note = " (compared as JSON values: a boolean is not a number)"
        raise ValueError(f"test failed: {_cut(op['path'])} is {_cut(json.dumps(actual))}, "
                         f"not {_cut(json.dumps(op['value']))}{note}")


def _cut(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _too_big(size: int, bound: int, qualifier: str = "") -> str:
    return (f"the document would be {qualifier}{size} characters as compact JSON, over the bound of {bound} "
            "(ani.sot.bounds: a file of the source of truth is at most 1 MiB)")
