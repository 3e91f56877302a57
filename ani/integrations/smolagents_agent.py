"""A smolagents ``ToolCallingAgent`` (or ``CodeAgent``) run as an ani agent
(:mod:`ani.agents.framework`). Needs ``pip install 'ani-sdk[smolagents]'``.

    from ani.integrations.smolagents_agent import agent
    ani_agent = agent(lambda tools, task: ToolCallingAgent(tools=tools, model=model), errors="return")

The loop is smolagents' own (``agent.run(prompt, stream=True)``): each ``ActionStep`` is one
``agent_turn`` (tokens from its ``token_usage``: ``input_tokens`` / ``output_tokens``); the run
stops after the step in which a budget was hit (smolagents' loop is synchronous: the wall clock
is checked between steps and at each tool call, a model request in progress is not cut);
``max_steps`` is ``budget.max_steps + 1``. The answer is the ``FinalAnswerStep``'s output; a run
that smolagents ended at its own ``max_steps`` (its forced last answer) is not submitted.
"""

from __future__ import annotations

import json
from typing import Any

from ani.agents.framework import FrameworkAgent, FrameworkSession
from ani.integrations import smolagents as _tools
from ani.integrations._common import require

_smol = require("smolagents", "smolagents", "smolagents", __name__)
from smolagents.memory import ActionStep, FinalAnswerStep  # noqa: E402
from smolagents.utils import AgentMaxStepsError  # noqa: E402

__all__ = ["RUNNER", "agent"]


def _log_turn(session: FrameworkSession, step: Any) -> None:
    u = step.token_usage
    msg = step.model_output_message
    content = getattr(msg, "content", None) if msg is not None else None
    session.turn(getattr(u, "input_tokens", None), getattr(u, "output_tokens", None), getattr(u, "total_tokens", None),
                 finish_reason=None, content=content if isinstance(content, str) and content else None,
                 tool_calls=[{"id": c.id, "name": c.name,
                              "arguments": c.arguments if isinstance(c.arguments, str)
                              else json.dumps(c.arguments, default=str)} for c in step.tool_calls or []])


class SmolagentsRunner:
    """The smolagents runner (:class:`ani.agents.framework.FrameworkRunner`)."""

    framework = "smolagents"

    def tools(self, adapter: Any, **options: Any) -> list[Any]:
        return _tools.tools(adapter, **options)

    def run(self, agent: Any, prompt: str, session: FrameworkSession) -> str | None:
        steps = agent.run(prompt, stream=True, max_steps=session.budget.max_steps + 1)
        try:
            for step in steps:
                if isinstance(step, ActionStep):
                    if isinstance(step.error, AgentMaxStepsError):
                        raise RuntimeError(f"smolagents stopped at its own max_steps ({step.error})")
                    if step.model_output_message is not None or step.token_usage is not None:
                        _log_turn(session, step)
                    if session.stopped():  # after the whole step (its calls' outputs come first)
                        return None
                elif isinstance(step, FinalAnswerStep):
                    return None if step.output is None else str(step.output)
            return None
        finally:
            steps.close()


RUNNER = SmolagentsRunner()


def agent(build: Any, name: str | None = None, **tool_options: Any) -> FrameworkAgent:
    """``FrameworkAgent("smolagents", build, name, **tool_options)``: ``build(tools, task)``
    returns a smolagents agent given the tools of :func:`ani.integrations.smolagents.tools`
    (``errors="return"`` recommended: a refused call stays beside the others of its step)."""
    return FrameworkAgent(RUNNER, build, name, **tool_options)
