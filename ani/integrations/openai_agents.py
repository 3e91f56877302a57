"""ANI tools as openai-agents function tools. Needs ``pip install 'ani-sdk[openai-agents]'``.

    from agents import Agent
    from ani.integrations.openai_agents import tools

    agent = Agent(name="netops", tools=tools(adapter))   # adapter: opened, e.g. ani.connect(...)

What a tool does (:func:`tools`, each an ``agents.FunctionTool``):

- schema: strict by default, as openai-agents wants (``strict_json_schema=True``): the strict form
  of :meth:`ToolSpec.to_openai` ``strict=True`` (every property required, optionals nullable,
  free-form objects such as A3-T ``changes`` items and A3-R / A4 JSON Patch operations as JSON
  text), which openai-agents' own strict check accepts for every built-in tool; the arguments
  go back to the tool's form before the call (:meth:`ToolSpec.arguments_from_strict`).
  ``strict=False`` gives the tool's own schema with ``strict_json_schema=False``;
- result: the text the agent reads (:meth:`ToolResult.observation`, the same text as MCP's text
  content; docs/tool-results.md);
- errors: a ``FunctionTool`` has no error object that reaches the model: its documented channel
  for an error the model should see is the returned text (an exception would end the run), so an
  ``ok=False`` result returns the JSON of :meth:`ToolResult.error_payload` (its observation)
  (``{"ok": false, "code", "message", "retriable", ...}``), which a model and a guardrail tell from
  a success by ``"ok": false``;
- hints: openai-agents has no annotation field on a function tool; ``approve_destructive=True``
  sets ``needs_approval`` on the destructive tools (the run then stops at an interruption until
  approved, ``RunState.approve``). Off by default: an unattended run would stop;
- calls: async, the adapter call in a worker thread (``asyncio.to_thread``); the Runner runs a
  turn's calls concurrently, the adapter serialises what must be. No ``timeout_seconds``: every
  adapter call is bounded by the level itself (its documented bounds), and a tool timeout shorter
  than that would report a change that went on and succeeded as failed.
"""

from __future__ import annotations

import json
from typing import Any

from ani.integrations._common import BoundTool, bind, require

_agents = require("agents", "openai-agents", "openai-agents", __name__)
FunctionTool = _agents.FunctionTool

__all__ = ["tools"]


def _tool(b: BoundTool, approve_destructive: bool) -> Any:
    async def invoke(_ctx: Any, raw: str) -> str:
        try:
            arguments = json.loads(raw) if raw else {}
        except ValueError:
            arguments = raw  # the adapter answers invalid_arguments, naming what it got
        result = await b.acall(arguments)
        return result.observation()

    return FunctionTool(
        name=b.name,
        description=b.spec.description,
        params_json_schema=b.parameters,
        on_invoke_tool=invoke,
        strict_json_schema=b.strict,
        needs_approval=bool(approve_destructive and b.spec.destructive),
    )


def tools(adapter: Any, *, strict: bool = True, approve_destructive: bool = False) -> list[Any]:
    """One ``agents.FunctionTool`` per tool of ``adapter`` (opened; its ``tools()``, in order).

    Args:
        adapter: an ANI adapter (``ani.connect(...)``, ``ani.registry.create_adapter(...)``).
        strict: the strict schema form (openai-agents' default; module doc).
        approve_destructive: destructive tools need approval (``needs_approval``).
    """
    return [_tool(b, approve_destructive) for b in bind(adapter, strict=strict)]
