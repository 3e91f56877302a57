"""ANI tools as LangChain tools (LangChain 1.x ``create_agent``, LangGraph ``ToolNode`` /
``create_react_agent``, or any chat model's ``bind_tools``). Needs ``pip install 'ani-sdk[langchain]'``.

    from langchain.agents import create_agent
    from ani.integrations.langchain import tools

    agent = create_agent(model, tools(adapter))          # adapter: opened, e.g. ani.connect(...)

What a tool does (:func:`tools`):

- schema: the tool's JSON Schema as ``args_schema`` (``strict=True``: the strict form, for
  ``ChatOpenAI(...).bind_tools(..., strict=True)``); any argument name works, also ``config``
  (A2's ``edit_config``), which LangChain's ``StructuredTool`` would take for its own
  ``RunnableConfig``;
- result: ``response_format="content_and_artifact"``: the ``ToolMessage`` content is what the agent
  reads (:meth:`ToolResult.observation`, the same text as MCP's text content;
  docs/tool-results.md), its ``artifact`` the whole result as data
  (:meth:`ToolResult.structured`);
- errors: an ``ok=False`` result raises :class:`LangChainToolError` (a ``ToolException``) and the
  tool handles it (``handle_tool_error``): the agent goes on with a ``ToolMessage`` of
  ``status="error"`` whose content is the JSON of
  :meth:`ToolResult.error_payload` (the failure's observation: ``ok``, ``code``, ``message``,
  ``retriable``);
- hints: ``metadata = {"ani_level", "read_only", "destructive"}`` and ``tags`` (``ani``,
  ``ani:<level>``, ``read_only`` or ``destructive``), e.g. for LangChain's human-in-the-loop
  middleware: ``interrupt_on={t.name: True for t in ts if "destructive" in t.tags}``;
- calls: ``invoke`` runs the adapter call in the caller's thread (``ToolNode`` runs a turn's calls
  in a thread pool), ``ainvoke`` in a worker thread (``asyncio.to_thread``).
"""

from __future__ import annotations

from typing import Any

from ani.errors import ToolCallError
from ani.integrations._common import BoundTool, bind, hints, level_of, require

_tools = require("langchain_core.tools", "langchain", "LangChain", __name__)
BaseTool = _tools.BaseTool
ToolException = _tools.ToolException

__all__ = ["AniLangChainTool", "LangChainToolError", "tools"]


class LangChainToolError(ToolCallError, ToolException):
    """An ``ok=False`` result as a LangChain ``ToolException`` (``result``, ``code``, ``retriable``:
    :class:`ani.errors.ToolCallError`); the message is the JSON payload the model reads."""


class AniLangChainTool(BaseTool):
    """One ANI tool as a LangChain ``BaseTool`` (made by :func:`tools`)."""

    bound: Any = None  #: the :class:`~ani.integrations._common.BoundTool`
    response_format: str = "content_and_artifact"
    handle_tool_error: Any = True

    def _answer(self, result: Any) -> tuple[str, dict[str, Any]]:
        if not result.ok:
            raise LangChainToolError(result.observation(), result)
        return result.observation(), result.structured()

    def _run(self, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        return self._answer(self.bound.call(kwargs))

    async def _arun(self, **kwargs: Any) -> tuple[str, dict[str, Any]]:
        return self._answer(await self.bound.acall(kwargs))


def _tool(b: BoundTool, level: str) -> AniLangChainTool:
    meta = hints(b.spec, level)
    tags = ["ani", f"ani:{level}"] + [h for h in ("read_only", "destructive") if meta[h]]
    return AniLangChainTool(name=b.name, description=b.spec.description, args_schema=b.parameters,
                            bound=b, metadata=meta, tags=tags)


def tools(adapter: Any, *, strict: bool = False) -> list[AniLangChainTool]:
    """One LangChain tool per tool of ``adapter`` (opened; its ``tools()``, in order).

    Args:
        adapter: an ANI adapter (``ani.connect(...)``, ``ani.registry.create_adapter(...)``).
        strict: show the strict schema form (for a model bound with ``strict=True``); the
            arguments are turned back before the call.
    """
    level = level_of(adapter)
    return [_tool(b, level) for b in bind(adapter, strict=strict)]
