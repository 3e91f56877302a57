"""A plug-in agent for ani, named in a campaign file by ``module:factory`` (docs/agents.md).

It looks at the network (``get_topology``, offered at every level) and submits without
changing anything:
a do-nothing baseline that shows what an agent is (``name`` and ``run(task, adapter, budget)
-> AgentRun``) and how it keeps to the budget (``StepCounter`` counts each tool call and
raises ``BudgetExceeded`` before the budget's last step is passed). Use it as the skeleton of
your own agent.

With this file beside a campaign file (or in the current folder, or installed)::

    agent: {kind: "survey_agent:make_agent", looks: 2}

or for one run::

    ani run --level a1 --agent survey_agent:make_agent --agent-option looks=2

The factory's keyword arguments are the agent's options: ani checks the options given against
its signature before any lab starts (an unknown or missing one is named).
"""

from __future__ import annotations

from typing import Any

from ani.agents.base import AgentRun, AgentTask, Budget, BudgetExceeded, StepCounter

class SurveyAgent:
    """Calls ``get_topology`` ``looks`` times (each call is a step), then submits."""

    name = "survey"

    def __init__(self, looks: int = 1) -> None:
        if looks < 0:
            raise ValueError("looks must be 0 or more")
        self.looks = looks

    def run(self, task: AgentTask, adapter: Any, budget: Budget) -> AgentRun:
        """Work on ``task`` through ``adapter`` within ``budget`` (never raises for its own failures)."""
        steps = StepCounter(adapter, budget)  # one step per tool call, checked before the call
        trajectory = getattr(adapter, "trajectory", None)
        try:
            for _ in range(self.looks):
                steps.call("get_topology", {})
        except BudgetExceeded as exc:  # max_steps or wall_clock: the run stops with that reason
            return AgentRun(stop_reason=exc.reason, steps=steps.steps, trajectory=trajectory)
        return AgentRun(stop_reason="submitted", steps=steps.steps, submitted=True, trajectory=trajectory)


def make_agent(looks: int = 1) -> SurveyAgent:
    """The factory a campaign file names: ``agent: {kind: "survey_agent:make_agent", looks: 2}``."""
    return SurveyAgent(looks=looks)
