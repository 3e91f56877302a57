"""The :class:`~ani.campaign.results.RunRecord` of an executed run (:func:`build_record`):
its label, outcome fields, counts from the trajectory, process metrics, timings and cost."""

from __future__ import annotations

import time
from typing import Any

from ani.campaign.metrics import compute_metrics
from ani.campaign.outcomes import invalid_calls
from ani.campaign.provenance import run_provenance
from ani.campaign.results import ENV_INVALID, INFRA, INVALID_LABELS, RunRecord, label_for
from ani.trajectory import Trajectory


def build_record(ctx: Any) -> RunRecord:
    """The record of ``ctx`` (an :class:`ani.campaign.execute.RunContext` after teardown)."""
    from ani.campaign.run_support import as_steps, now_utc

    state, calls = ctx.state, (ctx.trajectory.calls if ctx.trajectory is not None else [])
    label, reason = label_of(state)
    t0 = time.monotonic()
    extra: dict[str, Any] = {}
    for ext in ctx.extensions:
        fields = getattr(ext, "fields", None)
        if callable(fields):
            extra.update(fields(ctx, label))
    record = RunRecord(
        **ctx.info,
        label=label,
        success=None if label in INVALID_LABELS else state["success"],
        damage_free=None if label in INVALID_LABELS else state["damage_free"],
        infra_error_reason=reason,
        agent_error=agent_error(state),
        tests=state.get("tests", []),
        invariants=state.get("invariants", []),
        steps=as_steps(state.get("steps")),
        tool_calls=len(calls),
        tool_errors=sum(1 for c in calls if c.get("ok") is False),
        changed_calls=sum(1 for c in calls if c.get("changed") is True),
        stop_reason=state.get("stop_reason"),
        wall_s=round(time.monotonic() - ctx.t_start, 3),
        started=ctx.started,
        ended=now_utc(),
        teardown_error=state.get("teardown_error"),
        unattributed=state.get("unattributed"),
        process=process_metrics(ctx, label),
        faults=state.get("faults", []),
        mistake=state.get("mistake"),
        timings=dict(ctx.timings),
        provenance=run_provenance(ctx.plan.agent),  # issue 26 §3: cached per process
        **extra,
        **outcome_fields(state, calls),
        **ncb_fields(state, label),
    )
    ctx.timings["record"] = round(time.monotonic() - t0, 3)
    return record.model_copy(update={"cost": cost_of(record, ctx.trajectory),
                                     "timings": dict(ctx.timings)})


def label_of(state: dict[str, Any]) -> tuple[str, str | None]:
    """``(label, infra_error_reason)``: every run ends in exactly one state."""
    reason = state.get("infra_error_reason")
    if reason is None and state.get("success") is None:
        reason = "run did not complete"  # defensive
    if reason is None:
        return label_for(state["success"], state["damage_free"]), None
    return (ENV_INVALID if state.get("env_invalid") else INFRA), reason


def agent_error(state: dict[str, Any]) -> str | None:
    """The agent's error, with the adapter's close error appended."""
    err = state.get("agent_error")
    if state.get("close_error"):
        err = (err + "; " if err else "") + f"adapter close: {state['close_error']}"
    return err


def ncb_fields(state: dict[str, Any], label: str) -> dict[str, Any]:
    """``testcase_score`` / ``task_pass`` of a graded run (any task class), and ``ncb`` of a
    NetConfBench one."""
    if label in INVALID_LABELS:
        return {}
    from ani.netconfbench.scoring import task_pass, testcase_score

    tests = state.get("tests") or []
    return {"testcase_score": testcase_score(tests), "task_pass": task_pass(tests), "ncb": state.get("ncb")}


def outcome_fields(state: dict[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The measured outcomes (``invalid_calls`` counted from the trajectory even when the agent
    never ran to the measurement)."""
    out = state.get("outcomes")
    if out is None:
        return {"invalid_calls": invalid_calls(calls)}
    return {"invalid_calls": out.invalid_calls, "double_applied": list(out.double_applied),
            "locks_left": list(out.locks_left), "partial": list(out.partial)}


def process_metrics(ctx: Any, label: str) -> Any:
    """The run's process metrics; None if the agent never ran (the lab, the baseline or the
    adapter's open failed): such a run has no turns and no completion mode to report."""
    state = ctx.state
    if ctx.trajectory is None or not state.get("agent_ran"):
        return None
    submitted = state.get("submitted")
    return compute_metrics(
        ctx.trajectory.events,
        str(ctx.info.get("level", "")),
        stop_reason=state.get("stop_reason"),
        submitted=submitted if isinstance(submitted, bool) else None,
        success=None if label in INVALID_LABELS else state.get("success"),
        tools=state.get("tools"),
        prompt_tokens=state.get("prompt_tokens"),
        completion_tokens=state.get("completion_tokens"),
    )


def cost_of(record: RunRecord, trajectory: Trajectory | None) -> dict[str, Any]:
    """The run's cost, a dependent variable: ``tokens`` (prompt + completion as the token budget
    counted them, the agent's ``agent_stop`` total; else the process metrics' sum; None: no model
    reported usage), ``prompt_tokens``, ``completion_tokens``, ``turns`` (model responses, else
    actions), ``steps`` (agent steps), ``tool_calls``, ``agent_s`` and ``wall_s`` (seconds)."""
    proc = record.process
    prompt = proc.prompt_tokens if proc is not None else None
    completion = proc.completion_tokens if proc is not None else None
    tokens = None
    for ev in (trajectory.events if trajectory is not None else []):
        if ev.get("event") == "agent_stop" and isinstance(ev.get("total_tokens"), int):
            tokens = ev["total_tokens"] or None
    if tokens is None and prompt is not None and completion is not None:
        tokens = prompt + completion
    return {
        "tokens": tokens,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "turns": proc.turns if proc is not None else None,
        "steps": record.steps,
        "tool_calls": record.tool_calls,
        "agent_s": record.agent_s,
        "wall_s": record.wall_s,
    }
