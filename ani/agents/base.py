"""What an agent is given and what it returns.

::

    class Agent(Protocol):
        name: str
        def run(self, task: AgentTask, adapter: Adapter, budget: Budget) -> AgentRun

An agent acts only through ``adapter.tools()`` / ``adapter.call()``; it sees the task's
request and attached files (:class:`AgentTask`), never the hidden tests or the lab.
"""

from __future__ import annotations

import time
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ani.errors import AgentError

StopReason = Literal["submitted", "max_steps", "max_tokens", "wall_clock", "error"]


class AgentTask(BaseModel):
    """The agent's view of a task variant.

    Attributes:
        task_class: e.g. ``onboard-site``.
        variant_id: e.g. ``onboard-site-s3``.
        request: the operator's request (identical text across the variants of a class).
        files: attached files, ``{file name: text}`` (e.g. ``{"site.yaml": "tenant: blue\\n..."}``).
        oracle: what only a scripted baseline reads, never a model: a ``netconfbench`` variant's
            reference solution (``{"solution_id", "configs": {router: [command, ...]}}``, lab
            names; :mod:`ani.agents.scripted_ncb`). Left out of dumps and reprs; the LLM agent
            builds its messages from ``request`` and ``files`` only.
    """

    model_config = ConfigDict(frozen=True)

    task_class: str
    variant_id: str
    request: str
    files: dict[str, str] = Field(default_factory=dict)
    oracle: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)


class Budget(BaseModel):
    """Limits of one run (also the ``budget:`` block of a campaign file; unknown keys refused;
    numbers must be finite: an infinite wall clock is refused, like NaN).

    Attributes:
        max_steps: maximum number of tool calls.
        max_tokens: maximum model tokens (None: unlimited; meaningless for scripted agents).
        wall_clock_s: maximum wall time of the run, seconds.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    max_steps: int = Field(default=40, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    wall_clock_s: float = Field(default=300.0, gt=0)


class AgentRun(BaseModel):
    """How a run ended.

    Attributes:
        stop_reason: ``submitted`` (the agent declared it is done), ``max_steps``,
            ``max_tokens``, ``wall_clock`` (budget exhausted) or ``error`` (the agent itself failed).
        steps: tool calls made.
        submitted: the agent declared the task done.
        error: what went wrong when ``stop_reason`` is ``error``.
        trajectory: the adapter's trajectory (``adapter.trajectory``), or None.
        tokens: model tokens used, prompt + completion, plus the ``total_tokens`` of responses
            that reported no prompt/completion split (0 for scripted agents; the process
            metrics record tokens as unknown, None, when no model turn reported usage and these
            totals are 0).
        prompt_tokens: prompt tokens, from the responses' ``usage`` (0 when not reported).
        completion_tokens: completion tokens, likewise.
        null_actions: malformed model outputs (invalid tool-call JSON, unknown tool, text
            where a call was needed), each answered with an error observation.
        infra_error: set when the agent could not work for a cause outside the system under
            test, e.g. the LLM agent's model endpoint failed (refused, 401, 404, retries
            exhausted) before any model turn was received: the runner records the run as an
            infrastructure error naming it (left out of the rates, rerun by ``--resume``)
            instead of grading it as the model's failure. None otherwise.
        mistake: the mistake the agent made on purpose (``ani.agents.mistakes.Made`` as a
            dict: ``kind``, ``expressed``, ``note``, ``target``, ``footprint``, ``changes``),
            for the known-answer measures; None: no mistake (an agent without mistakes, or
            none drawn for this variant). Never shown to the observer or the grader.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    stop_reason: StopReason
    steps: int = 0
    submitted: bool = False
    error: str | None = None
    trajectory: Any = None
    tokens: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    null_actions: int = 0
    infra_error: str | None = None
    mistake: dict[str, Any] | None = None


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
