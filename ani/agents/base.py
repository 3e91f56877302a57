"""What an agent is given and what it returns.

::

    class Agent(Protocol):
        name: str
        def run(self, task: AgentTask, adapter: Adapter, budget: Budget) -> AgentRun

An agent acts only through ``adapter.tools()`` / ``adapter.call()``; it sees the task's
request and attached files (:class:`AgentTask`), never the hidden tests or the lab.
:class:`AgentTask`, :class:`Budget` and :class:`AgentRun` are defined in :mod:`ani.agent_types`.
"""

from __future__ import annotations

import time
from typing import Any, Protocol, runtime_checkable

from ani.agent_types import AgentRun, AgentTask, Budget, StopReason
from ani.errors import AgentError

# AgentTask, Budget, AgentRun and StopReason live in ani.agent_types (below scenario and
# netconfbench, which build tasks); agents import them from here, as they always have
__all__ = ["Agent", "AgentRun", "AgentTask", "Budget", "BudgetExceeded", "StepCounter", "StopReason"]


@runtime_checkable
class Agent(Protocol):
    """An agent under test (or a baseline)."""

    name: str

    def run(self, task: AgentTask, adapter: Any, budget: Budget) -> AgentRun:
        """Work on ``task`` through ``adapter`` within ``budget``; never raises for its own failures."""


# An agent may also offer ``preflight() -> list[str]``: a cheap check of what it depends on
# (the LLM agent: its endpoint), called once by campaigns and ``ani run`` before the first lab
# starts. It returns warnings (printed, not fatal) and raises ConfigError when no run could
# work (e.g. the endpoint refuses connections or rejects the key). Agents without it skip it.


class BudgetExceeded(AgentError):
    """Raised inside an agent when a budget limit is hit; ``reason`` is the stop reason."""

    def __init__(self, reason: StopReason) -> None:
        super().__init__(reason)
        self.reason: StopReason = reason


class StepCounter:
    """Counts tool calls against a budget; ``call`` raises BudgetExceeded before exceeding it."""

    def __init__(self, adapter: Any, budget: Budget) -> None:
        self.adapter = adapter
        self.budget = budget
        self.steps = 0
        self.t0 = time.monotonic()

    def check_clock(self) -> None:
        if time.monotonic() - self.t0 >= self.budget.wall_clock_s:
            raise BudgetExceeded("wall_clock")

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """``adapter.call(name, arguments)`` counted as one step."""
        self.check_clock()
        if self.steps >= self.budget.max_steps:
            raise BudgetExceeded("max_steps")
        self.steps += 1
        return self.adapter.call(name, arguments)
