"""The data an agent is given and returns: :class:`AgentTask`, :class:`Budget`, :class:`AgentRun`.

These are plain data (pydantic models): the task variants of ``ani.scenario`` and
``ani.netconfbench`` build :class:`AgentTask`, campaigns read :class:`Budget`, the runner reads
:class:`AgentRun`. They live below every package that uses them (docs/architecture.md, "Layers");
agents import them from :mod:`ani.agents.base`, which re-exports them with the :class:`Agent`
protocol.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AgentRun", "AgentTask", "Budget", "StopReason"]

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
