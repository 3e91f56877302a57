"""A LangChain 1.x agent (``langchain.agents.create_agent``) or any LangGraph graph over a
``messages`` state (e.g. ``langgraph.prebuilt.create_react_agent``) run as an ani agent
(:mod:`ani.agents.framework`). Needs ``pip install 'ani-sdk[langchain]'``.

    from ani.integrations.langchain_agent import agent
    ani_agent = agent(lambda tools, task: create_agent(ChatOpenAI(...), tools))

The loop is LangGraph's own (``astream(..., stream_mode="updates")``, the request as one
``HumanMessage``): each ``AIMessage`` a node returns is one ``agent_turn`` (tokens from its
``usage_metadata``: ``input_tokens`` / ``output_tokens`` / ``total_tokens``); the run stops at the
next update once a budget is hit; ``recursion_limit`` is set to ``2 * max_steps + 5`` (a model
and a tools super-step per call, plus the answer) so ani's budget ends a long run, not LangGraph's
default. The answer is the text of the last ``AIMessage`` when it has no tool calls.
"""

from __future__ import annotations

import json
from typing import Any

from ani.agents.framework import FrameworkAgent, FrameworkSession
from ani.integrations import langchain as _tools
from ani.integrations._common import require

_messages = require("langchain_core.messages", "langchain", "LangChain", __name__)

__all__ = ["RUNNER", "agent"]


def _ai_messages(update: Any) -> list[Any]:
    """The ``AIMessage``s of one ``updates`` chunk (``{node: {"messages": [...]}}``)."""
    out = []
    for value in update.values() if isinstance(update, dict) else ():
        msgs = value.get("messages", []) if isinstance(value, dict) else []
        out.extend(m for m in (msgs if isinstance(msgs, list) else [msgs]) if isinstance(m, _messages.AIMessage))
    return out


def _log_turn(session: FrameworkSession, m: Any) -> None:
    usage = m.usage_metadata or {}
    session.turn(usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens"),
                 finish_reason=(m.response_metadata or {}).get("finish_reason"), content=m.text or None,
                 tool_calls=[{"id": c.get("id"), "name": c.get("name"),
                              "arguments": json.dumps(c.get("args"), default=str)} for c in m.tool_calls])


class LangChainRunner:
    """The LangChain / LangGraph runner (:class:`ani.agents.framework.FrameworkRunner`)."""

    framework = "langchain"

    def tools(self, adapter: Any, **options: Any) -> list[Any]:
        return _tools.tools(adapter, **options)

    def run(self, agent: Any, prompt: str, session: FrameworkSession) -> str | None:
        config = {"recursion_limit": 2 * session.budget.max_steps + 5}

        async def loop() -> str | None:
            last = None
            request = {"messages": [_messages.HumanMessage(prompt)]}
            async for update in agent.astream(request, config=config, stream_mode="updates"):
                for m in _ai_messages(update):
                    _log_turn(session, m)
                    last = m
                if session.stopped():
                    return None
            return last.text if last is not None and not last.tool_calls else None

        return session.run_async(loop)


RUNNER = LangChainRunner()


def agent(build: Any, name: str | None = None, **tool_options: Any) -> FrameworkAgent:
    """``FrameworkAgent("langchain", build, name, **tool_options)``: ``build(tools, task)``
    returns a LangChain agent / LangGraph graph given the tools of
    :func:`ani.integrations.langchain.tools`."""
    return FrameworkAgent(RUNNER, build, name, **tool_options)
