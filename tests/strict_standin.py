"""STAND-IN, tests only: issue 16 part 2 (``i16-frameworks``) owns ``ToolSpec.to_openai(strict=True)``
and the adapters' "a null argument is absent" (plan16.md, fixed interfaces). Until that is
merged, the conformance tests of this branch use this small stand-in so that they run; it does
nothing once ``ToolSpec.to_openai`` takes ``strict``. Delete this file (and its uses: grep
``strict_standin``) when part 2 is merged.

- ``to_openai(strict=True)``: every object ``additionalProperties: false`` with every property
  required (optional ones made nullable), keywords strict mode refuses dropped, a free-form
  object (``additionalProperties`` true) replaced by an empty one (lossy: part 2 decides the
  real form), ``"strict": true``;
- ``BaseAdapter`` drops top-level arguments that are ``None`` before validating.

Use: the fixture ``strict_standin`` (import it into a test module), or ``-p strict_standin`` on
a pytest command line (then it applies to every test of that session).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Iterator
from typing import Any

import pytest

from ani.adapters.base import BaseAdapter
from ani.protocol import ToolSpec
from ani.testing.strict import KEYWORDS


def needed() -> bool:
    return "strict" not in inspect.signature(ToolSpec.to_openai).parameters


def _strict(s: Any, nullable: bool = False) -> Any:
    if not isinstance(s, dict):
        return s
    out = {k: v for k, v in s.items() if k in KEYWORDS}
    t = out.get("type")
    if t == "object" or "properties" in out:
        if out.get("additionalProperties") not in (False, None) and not out.get("properties"):
            out = {"type": "object", "properties": {}, "additionalProperties": False,
                   **({"description": s["description"]} if "description" in s else {})}
        props = out.get("properties") or {}
        req = set(out.get("required") or [])
        out["properties"] = {k: _strict(v, nullable=k not in req) for k, v in props.items()}
        out["required"] = list(props)
        out["additionalProperties"] = False
    if isinstance(out.get("items"), dict):
        out["items"] = _strict(out["items"])
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [_strict(x) for x in out["anyOf"]]
    for key in ("$defs", "definitions"):
        if isinstance(out.get(key), dict):
            out[key] = {k: _strict(v) for k, v in out[key].items()}
    if nullable:
        branches = out.get("anyOf") or []
        if not any(isinstance(b, dict) and b.get("type") == "null" for b in branches):
            if isinstance(t, str) and "enum" not in out:
                out["type"] = [t, "null"]
            elif not (isinstance(t, list) and "null" in t):
                desc = out.pop("description", None)
                out = {"anyOf": [out, {"type": "null"}], **({"description": desc} if desc else {})}
    return out


def _to_openai(self: ToolSpec, strict: bool = False) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": self.name, "description": self.description,
                          "parameters": copy.deepcopy(self.input_schema)}
    if strict:
        fn["parameters"] = _strict(fn["parameters"])
        fn["strict"] = True
    return {"type": "function", "function": fn}


def _patch() -> Any:
    orig_openai, orig_dispatch = ToolSpec.to_openai, BaseAdapter._dispatch

    def dispatch(self: BaseAdapter, name: str, arguments: Any) -> Any:
        if isinstance(arguments, dict):
            arguments = {k: v for k, v in arguments.items() if v is not None}
        return orig_dispatch(self, name, arguments)

    ToolSpec.to_openai = _to_openai  # type: ignore[method-assign]
    BaseAdapter._dispatch = dispatch  # type: ignore[method-assign]

    def undo() -> None:
        ToolSpec.to_openai = orig_openai  # type: ignore[method-assign]
        BaseAdapter._dispatch = orig_dispatch  # type: ignore[method-assign]

    return undo


@pytest.fixture(scope="module")
def strict_standin() -> Iterator[None]:
    undo = _patch() if needed() else None
    yield
    if undo is not None:
        undo()


@pytest.fixture(autouse=True, scope="session")
def _strict_standin_session() -> Iterator[None]:
    """Only when this module is loaded as a plugin (``-p strict_standin``)."""
    undo = _patch() if needed() else None
    yield
    if undo is not None:
        undo()
