"""ANI tools as pydantic-ai tools. Needs ``pip install 'ani-sdk[pydantic-ai]'`` (pydantic-ai-slim;
add the model provider's extra yourself, e.g. ``pydantic-ai-slim[openai]``).

    from pydantic_ai import Agent
    from ani.integrations.pydantic_ai import tools

    agent = Agent(model, tools=tools(adapter))           # adapter: opened, e.g. ani.connect(...)

What a tool does (:func:`tools`, each a ``pydantic_ai.Tool`` made with ``Tool.from_schema``):

- schema: the tool's JSON Schema (``strict=True``: the strict form, with ``Tool.strict`` set, for
  providers that enforce it); the adapter validates the arguments;
- result: ``ToolReturn(return_value=<what the agent reads>, metadata=<the result as data>)``
  (:meth:`ToolResult.observation`, :meth:`ToolResult.structured`; metadata is not sent to the model);
- errors: an ``ok=False`` result raises ``pydantic_ai.ToolFailed`` with the JSON of
  :meth:`ToolResult.error_payload` (the failure's observation: ``ok``, ``code``, ``message``,
  ``retriable``): the model sees a failed tool result and the run goes on. Not ``ModelRetry``: that consumes the tool's
  retry budget (one by default), and the run ends with ``UnexpectedModelBehavior`` at the second
  refused command, which is an ordinary event for a network agent. Bound repeated failures with
  ``UsageLimits`` instead;
- hints: ``Tool.metadata = {"ani_level", "read_only", "destructive"}`` (for toolset filters such
  as ``FilteredToolset``); ``approve_destructive=True`` sets ``requires_approval`` on the
  destructive tools (pydantic-ai's deferred-approval flow: the agent's output type must then
  allow ``DeferredToolRequests``);
- calls: async functions running the adapter call in a worker thread (``asyncio.to_thread``);
  pydantic-ai runs a turn's calls concurrently, the adapter serialises what must be.
"""

from __future__ import annotations

from typing import Any

from ani.integrations._common import BoundTool, bind, hints, level_of, require

_pai = require("pydantic_ai", "pydantic-ai", "pydantic-ai", __name__)
Tool = _pai.Tool
ToolFailed = _pai.ToolFailed
ToolReturn = _pai.ToolReturn

__all__ = ["tools"]


def _tool(b: BoundTool, level: str, approve_destructive: bool) -> Any:
    async def run(**kwargs: Any) -> Any:
        result = await b.acall(kwargs)
        if not result.ok:
            raise ToolFailed(result.observation())
        return ToolReturn(return_value=result.observation(), metadata=result.structured())

    run.__name__ = b.name
    tool = Tool.from_schema(run, name=b.name, description=b.spec.description, json_schema=b.parameters)
    tool.metadata = hints(b.spec, level)
    if b.strict:
        tool.strict = True
    if approve_destructive and b.spec.destructive:
        tool.requires_approval = True
    return tool


def tools(adapter: Any, *, strict: bool = False, approve_destructive: bool = False) -> list[Any]:
    """One ``pydantic_ai.Tool`` per tool of ``adapter`` (opened; its ``tools()``, in order).

    Args:
        adapter: an ANI adapter (``ani.connect(...)``, ``ani.registry.create_adapter(...)``).
        strict: show the strict schema form and mark the tools strict; the arguments are turned
            back before the call.
        approve_destructive: destructive tools need approval (``requires_approval``).
    """
    level = level_of(adapter)
    return [_tool(b, level, approve_destructive) for b in bind(adapter, strict=strict)]
