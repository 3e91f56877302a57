"""Agents: the ``Agent`` protocol, ``Budget``, ``AgentTask``, ``AgentRun``, ``create_agent``.

The scripted baseline agent lives in :mod:`ani.agents.scripted` (imported lazily by
``create_agent({"kind": "scripted"})``).
"""

from ani.agents.base import Agent, AgentRun, AgentTask, Budget, BudgetExceeded, StepCounter, StopReason
from ani.agents.factory import AGENT_KINDS, available, create_agent, register_agent

__all__ = [
    "AGENT_KINDS",
    "available",
    "Agent",
    "AgentRun",
    "AgentTask",
    "Budget",
    "BudgetExceeded",
    "StepCounter",
    "StopReason",
    "create_agent",
    "register_agent",
]
