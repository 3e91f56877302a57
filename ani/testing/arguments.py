"""Arguments the conformance suite derives from a tool's own schema.

- :func:`bad_arguments`: argument objects the schema refuses (so the adapter must refuse them
  too, with ``invalid_arguments``, before anything reaches a device);
- :func:`with_nulls`: a valid call as a strict-mode client sends it (every optional property
  absent from the call given as ``null``; ``ToolSpec.to_openai(strict=True)`` makes them
  required and nullable, and the adapter treats a null argument as absent).

    >>> schema = {"type": "object", "additionalProperties": False, "required": ["device"],
    ...           "properties": {"device": {"type": "string"}, "detail": {"type": "boolean"}}}
    >>> [why for why, _args in bad_arguments(schema, {"device": "r1"})]
    ['not an object', 'unknown argument', "without required 'device'", "'device' of a wrong type", "'detail' of a wrong type"]
    >>> with_nulls(schema, {"device": "r1"})
    {'device': 'r1', 'detail': None}
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

__all__ = ["UNKNOWN_ARGUMENT", "bad_arguments", "with_nulls"]

#: the name of the argument no tool has
UNKNOWN_ARGUMENT = "zz_not_an_argument"
#: values tried, in order, for a property of a wrong type (never null: a null argument means
#: absent, see :func:`with_nulls`)
_WRONG = (12345, "zz-not-a-valid-value", True, 1.5, [12345], {"zz": [12345]})


def bad_arguments(schema: dict[str, Any], valid: dict[str, Any] | None = None) -> list[tuple[str, Any]]:
    """``[(why, arguments)]``, each refused by ``schema`` (checked with jsonschema): not an
    object; an unknown argument (when ``additionalProperties`` is false); each required property
    left out; each property given a value of a wrong type. ``valid``: a call the schema accepts,
    the base the cases change (default ``{}``)."""
    base = dict(valid or {})
    check = Draft202012Validator(schema)
    props = schema.get("properties") or {}
    cases: list[tuple[str, Any]] = [("not an object", ["not", "an", "object"])]
    if schema.get("additionalProperties") is False:
        cases.append(("unknown argument", {**base, UNKNOWN_ARGUMENT: 1}))
    for name in schema.get("required") or []:
        cases.append((f"without required {name!r}", {k: v for k, v in base.items() if k != name}))
    for name, sub in props.items():
        value = _wrong_value(sub, schema)
        if value is not _NONE:
            cases.append((f"{name!r} of a wrong type", {**base, name: value}))
    out: list[tuple[str, Any]] = []
    for why, args in cases:
        if not check.is_valid(args) and all(args != a for _w, a in out):
            out.append((why, args))
    return out


class _NoValue:
    pass


_NONE = _NoValue()


def _wrong_value(sub: Any, root: dict[str, Any]) -> Any:
    if not isinstance(sub, dict):
        return _NONE
    # the property's schema with the root's definitions, so a $ref resolves
    check = Draft202012Validator({**{k: v for k, v in root.items() if k in ("$defs", "definitions")}, **sub})
    for v in _WRONG:
        if not check.is_valid(v):
            return v
    return _NONE


def with_nulls(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` plus ``null`` for every property of ``schema`` that is not required and not
    given (top level), as a strict-mode client sends the call."""
    required = set(schema.get("required") or [])
    out = dict(arguments)
    for name in schema.get("properties") or {}:
        if name not in out and name not in required:
            out[name] = None
    return out
