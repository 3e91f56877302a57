"""A pydantic-ai ``Agent`` run as an ani agent (:mod:`ani.agents.framework`). Needs
``pip install 'ani-sdk[pydantic-ai]'``.

    from ani.integrations.pydantic_ai_agent import agent
    ani_agent = agent(lambda tools, task: pydantic_ai.Agent(model, tools=tools))

The loop is pydantic-ai's own (``Agent.iter``): each ``CallToolsNode``'s model response is one
``agent_turn`` (tokens from its ``usage``: ``input_tokens`` / ``output_tokens``); the run stops at
the next node once a budget is hit; its ``request_limit`` is raised to ``max_steps + 1`` so ani's
budget, not pydantic-ai's default of 50 requests, ends a long run. The final output is the answer.
"""

from __future__ import annotations

import json
from typing import Any

from ani.agents.framework import FrameworkAgent, FrameworkSession
from ani.integrations import pydantic_ai as _tools
from ani.integrations._common import require

_pai = require("pydantic_ai", "pydantic-ai", "pydantic-ai", __name__)

__all__ = ["RUNNER", "agent"]


def _calls(response: Any) -> list[dict[str, Any]]:
    from pydantic_ai.messages import ToolCallPart

    return [{"id": p.tool_call_id, "name": p.tool_name,
             "arguments": p.args if isinstance(p.args, str) else json.dumps(p.args, default=str)}
            for p in response.parts if isinstance(p, ToolCallPart)]


def _text(response: Any) -> str | None:
    from pydantic_ai.messages import TextPart

    texts = [p.content for p in response.parts if isinstance(p, TextPart)]
    return "\n".join(texts) if texts else None


class PydanticAIRunner:
    """The pydantic-ai runner (:class:`ani.agents.framework.FrameworkRunner`)."""

    framework = "pydantic_ai"

    def tools(self, adapter: Any, **options: Any) -> list[Any]:
        return _tools.tools(adapter, **options)

    def run(self, agent: Any, prompt: str, session: FrameworkSession) -> str | None:
        limits = _pai.UsageLimits(request_limit=session.budget.max_steps + 1)

        async def loop() -> str | None:
            async with agent.iter(prompt, usage_limits=limits) as run:
                async for node in run:
                    if _pai.Agent.is_call_tools_node(node):
                        r = node.model_response
                        session.turn(r.usage.input_tokens, r.usage.output_tokens, None,
                                     finish_reason=r.finish_reason, content=_text(r), tool_calls=_calls(r))
                    if session.stopped():
                        return None
                return None if run.result is None else str(run.result.output)

        return session.run_async(loop)


RUNNER = PydanticAIRunner()


def agent(build: Any, name: str | None = None, **tool_options: Any) -> FrameworkAgent:
    """``FrameworkAgent("pydantic_ai", build, name, **tool_options)``: ``build(tools, task)``
    returns a ``pydantic_ai.Agent`` given the tools of :func:`ani.integrations.pydantic_ai.tools`."""
    return FrameworkAgent(RUNNER, build, name, **tool_options)
