"""An openai-agents ``Agent`` run as an ani agent (:mod:`ani.agents.framework`). Needs
``pip install 'ani-sdk[openai-agents]'``.

    from ani.integrations.openai_agents_agent import agent
    ani_agent = agent(lambda tools, task: agents.Agent(name="netops", tools=tools, model=...))

The loop is the openai-agents ``Runner``'s own (``Runner.run``, tracing off: a benchmark run
uploads nothing): each model response (``RunHooks.on_llm_end``) is one ``agent_turn`` (tokens
from its ``usage``: ``input_tokens`` / ``output_tokens`` / ``total_tokens``); once a budget is
hit the run stops after the tool call or model response that saw it; ``max_turns`` is
``max_steps + 1`` so ani's budget, not the Runner's default of 10 turns, ends a long run. The
answer is the run's ``final_output``.
"""

from __future__ import annotations

from typing import Any

from ani.agents.framework import FrameworkAgent, FrameworkSession
from ani.integrations import openai_agents as _tools
from ani.errors import AgentError
from ani.integrations._common import require

_agents = require("agents", "openai-agents", "openai-agents", __name__)

__all__ = ["RUNNER", "agent"]


class _Stop(AgentError):
    """A budget was hit: ends the Runner's loop (raised from a hook, caught by the runner)."""


def _turn_fields(response: Any) -> dict[str, Any]:
    calls, texts = [], []
    for item in response.output:
        kind = getattr(item, "type", None)
        if kind == "function_call":
            calls.append({"id": item.call_id, "name": item.name, "arguments": item.arguments})
        elif kind == "message":
            texts.extend(getattr(c, "text", "") for c in item.content)
    return {"finish_reason": None, "content": "\n".join(texts) or None, "tool_calls": calls}


class _Hooks(_agents.RunHooks):
    def __init__(self, session: FrameworkSession) -> None:
        self.session = session

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        u = response.usage
        self.session.turn(u.input_tokens, u.output_tokens, u.total_tokens, **_turn_fields(response))
        if self.session.stopped():
            raise _Stop

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        if self.session.stopped():
            raise _Stop


class OpenAIAgentsRunner:
    """The openai-agents runner (:class:`ani.agents.framework.FrameworkRunner`)."""

    framework = "openai_agents"

    def tools(self, adapter: Any, **options: Any) -> list[Any]:
        return _tools.tools(adapter, **options)

    def run(self, agent: Any, prompt: str, session: FrameworkSession) -> str | None:
        async def loop() -> str | None:
            try:
                result = await _agents.Runner.run(
                    agent, prompt, hooks=_Hooks(session), max_turns=session.budget.max_steps + 1,
                    run_config=_agents.RunConfig(tracing_disabled=True))
            except _Stop:
                return None
            return None if result.final_output is None else str(result.final_output)

        return session.run_async(loop)


RUNNER = OpenAIAgentsRunner()


def agent(build: Any, name: str | None = None, **tool_options: Any) -> FrameworkAgent:
    """``FrameworkAgent("openai_agents", build, name, **tool_options)``: ``build(tools, task)``
    returns an ``agents.Agent`` given the tools of :func:`ani.integrations.openai_agents.tools`."""
    return FrameworkAgent(RUNNER, build, name, **tool_options)
