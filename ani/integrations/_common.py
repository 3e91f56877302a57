"""What the four framework integrations share (:mod:`ani.integrations`).

- :class:`BoundTool`: one :class:`~ani.protocol.ToolSpec` of an opened adapter, callable from a
  framework's loop, sync (:meth:`BoundTool.call`, from the framework's worker threads: adapters
  serialise what must be, :mod:`ani.adapters.locking`) or async (:meth:`BoundTool.acall`, the same
  call in a worker thread through ``asyncio.to_thread``, so the event loop keeps running).
  Arguments are cleaned first: a null for an optional argument means "not given" (frameworks and
  models send one), and with ``strict`` the strict form goes back to the tool's own
  (:meth:`ToolSpec.arguments_from_strict`: JSON text parsed where the tool wants an object).
- :func:`error_payload`: the JSON text a model reads for an ``ok=False`` result (its
  :meth:`ToolResult.observation`), with the code and the retriable flag kept; :func:`hints`: the tool's read-only / destructive hints as data.
- :func:`require`: import a framework, or an ImportError naming the extra that installs it.
"""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ani.protocol import ToolResult, ToolSpec
from ani.strict_schema import drop_absent_nulls, strict_schema

__all__ = ["BoundTool", "bind", "error_payload", "hints", "level_of", "require"]


def require(module: str, extra: str, framework: str, integration: str) -> ModuleType:
    """``importlib.import_module(module)``.

    Raises:
        ImportError: ``ani.integrations.X needs <framework>: pip install 'ani-sdk[<extra>]'
            (<the original error>)``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{integration} needs {framework}: pip install 'ani-sdk[{extra}]' ({exc})",
                          name=exc.name) from exc


def error_payload(result: ToolResult) -> str:
    """The JSON text of a failed result, what the model reads through the framework's error
    channel: :meth:`ToolResult.error_payload` (``{"ok": false, "code": str | null, "message": str,
    "retriable": bool, "changed": bool}``, plus ``"text"`` when the result's text says more than
    ``error [code]: message``); for any result, :meth:`ToolResult.observation` is the text."""
    return result.error_payload()


def hints(spec: ToolSpec, level: str) -> dict[str, Any]:
    """``{"ani_level": level, "read_only": bool, "destructive": bool}``: the tool's hints
    (:class:`~ani.protocol.ToolSpec`; destructive = may change what a router runs)."""
    return {"ani_level": level, "read_only": spec.read_only, "destructive": spec.destructive}


@dataclass
class BoundTool:
    """One tool of an opened adapter.

    Attributes:
        adapter: the adapter (``tools()`` / ``call(name, arguments)``).
        spec: the tool.
        strict: arguments come in the strict form (:meth:`ToolSpec.to_openai` ``strict=True``).
    """

    adapter: Any
    spec: ToolSpec
    strict: bool = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema the framework shows the model: the strict form with ``strict``."""
        return strict_schema(self.spec.input_schema) if self.strict else self.spec.input_schema

    def arguments(self, arguments: Any) -> Any:
        """``arguments`` as the adapter takes them (module doc)."""
        if arguments is None:
            return {}
        if self.strict:
            return self.spec.arguments_from_strict(arguments)
        return drop_absent_nulls(self.spec.input_schema, arguments)

    def call(self, arguments: Any) -> ToolResult:
        """Run the tool (blocking; safe from several threads at once)."""
        return self.adapter.call(self.spec.name, self.arguments(arguments))

    async def acall(self, arguments: Any) -> ToolResult:
        """:meth:`call` in a worker thread (``asyncio.to_thread``)."""
        return await asyncio.to_thread(self.call, arguments)


def level_of(adapter: Any) -> str:
    """The adapter's level as a string (``a1``), or its class name if it has none."""
    level = getattr(adapter, "level", None)
    return str(getattr(level, "value", level)) if level is not None else type(adapter).__name__


def bind(adapter: Any, *, strict: bool = False) -> list[BoundTool]:
    """A :class:`BoundTool` per tool of ``adapter`` (``adapter.tools()``, in its order)."""
    return [BoundTool(adapter, spec, strict) for spec in adapter.tools()]
