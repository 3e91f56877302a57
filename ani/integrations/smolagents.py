"""ANI tools as smolagents tools (``ToolCallingAgent``; a ``CodeAgent`` calls them as functions).
Needs ``pip install 'ani-sdk[smolagents]'``.

    from smolagents import ToolCallingAgent
    from ani.integrations.smolagents import tools

    agent = ToolCallingAgent(tools=tools(adapter), model=model)   # adapter: opened

What a tool does (:func:`tools`, each a ``smolagents.Tool``):

- inputs: one per property of the tool's JSON Schema, with its smolagents ``type`` (``string``,
  ``integer``, ``number``, ``boolean``, ``array``, ``object``; ``any`` where the schema has no
  single type) and the schema's other keywords (``items``, ``enum``, ...); an argument the tool
  does not require, or one that accepts null, is ``nullable`` (smolagents' word for optional: its
  MCP bridge marks none, so ``get_topology({})`` was refused); a null means "not given";
- result: the text the agent reads (:meth:`ToolResult.observation`, the same text as MCP's text
  content; docs/tool-results.md), ``output_type="string"``;
- errors: an ``ok=False`` result raises :class:`ani.errors.ToolCallError` (``result``, ``code``,
  ``retriable``) with the JSON of :meth:`ToolResult.error_payload` (its observation) as message;
  the agent records it as the step's error (``AgentToolExecutionError``) and the model reads it
  in the next step. smolagents loses the observations of the other calls of a step whose call
  raised: with ``errors="return"`` a failure is returned as that JSON text instead (a normal
  observation, every parallel result kept);
- hints: smolagents has no place for them (the description is left as the tool's);
- names: a tool name that is not a Python identifier (``-`` is legal in ANI) is given with ``_``;
- calls: synchronous; ``ToolCallingAgent`` runs a step's calls in a thread pool, the adapter
  serialises what must be.
"""

from __future__ import annotations

import keyword
from typing import Any, Literal

from ani.errors import ToolCallError
from ani.integrations._common import BoundTool, bind, require

_smol = require("smolagents", "smolagents", "smolagents", __name__)
Tool = _smol.Tool

__all__ = ["AniSmolagentsTool", "inputs_of", "tools"]

_TYPES = {"string", "boolean", "integer", "number", "array", "object", "null"}
_DROP = {"type", "anyOf", "oneOf", "title"}


def _types(prop: dict[str, Any]) -> tuple[list[str], bool]:
    """The smolagents types of a property schema, and whether it accepts null."""
    branches = (prop.get("anyOf") or []) + (prop.get("oneOf") or [])
    raw: list[Any] = []
    if branches:
        for b in branches:
            t = b.get("type") if isinstance(b, dict) else None
            raw.extend(t if isinstance(t, list) else [t])
    else:
        t = prop.get("type")
        raw = t if isinstance(t, list) else [t]
    nullable = "null" in raw
    real = [t for t in raw if t != "null"]
    if not real or any(t not in _TYPES for t in real):
        return ["any"], nullable
    return sorted(set(real), key=real.index), nullable


def inputs_of(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """smolagents ``inputs`` of a tool's JSON Schema (module doc): ``{name: {"type": str |
    list[str], "description": str, "nullable": True (optional ones), <other keywords>}}``."""
    required = set(schema.get("required") or [])
    out: dict[str, dict[str, Any]] = {}
    for name, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        types, accepts_null = _types(prop)
        entry = {k: v for k, v in prop.items() if k not in _DROP}
        entry["type"] = types[0] if len(types) == 1 else types
        entry["description"] = prop.get("description", "")
        if name not in required or accepts_null:
            entry["nullable"] = True
        out[name] = entry
    return out


def _py_name(name: str) -> str:
    out = name.replace("-", "_")
    if out[:1].isdigit() or keyword.iskeyword(out):
        out = f"t_{out}"
    return out


class AniSmolagentsTool(Tool):
    """One ANI tool as a ``smolagents.Tool`` (made by :func:`tools`)."""

    skip_forward_signature_validation = True
    output_type = "string"

    def __init__(self, bound: BoundTool, errors: Literal["raise", "return"] = "raise") -> None:
        self.bound = bound
        self.errors = errors
        self.name = _py_name(bound.name)
        self.description = bound.spec.description
        self.inputs = inputs_of(bound.spec.input_schema)
        super().__init__()

    def forward(self, **kwargs: Any) -> str:
        result = self.bound.call(kwargs)
        text = result.observation()
        if result.ok or self.errors == "return":
            return text
        raise ToolCallError(text, result)


def tools(adapter: Any, *, errors: Literal["raise", "return"] = "raise") -> list[AniSmolagentsTool]:
    """One smolagents tool per tool of ``adapter`` (opened; its ``tools()``, in order).

    Args:
        adapter: an ANI adapter (``ani.connect(...)``, ``ani.registry.create_adapter(...)``).
        errors: ``raise`` (smolagents' error channel) or ``return`` (the failure as the
            observation; module doc).

    Raises:
        ValueError: ``errors`` is neither.
    """
    if errors not in ("raise", "return"):
        raise ValueError(f"errors must be 'raise' or 'return', got {errors!r}")
    return [AniSmolagentsTool(b, errors) for b in bind(adapter)]
