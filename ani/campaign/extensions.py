"""Features of a run that are not its sequence, called at fixed points of
:func:`ani.campaign.execute.execute` (each hook optional; called in the order of
:data:`EXTENSIONS`):

    before_agent(ctx)    after the adapter opened, just before agent.run
    agent_stopped(ctx)   the agent returned (not on Ctrl-C)
    after_agent(ctx)     always after agent.run, before the adapter is closed
    agent_ended(ctx)     after the adapter is closed
    before_grade(ctx)    before the host-fault check and grading (may raise StopRun)
    graded(ctx)          after grading filled tests / invariants / success / damage_free
    stop(ctx)            always, before teardown (also after Ctrl-C or a StopRun)
    fields(ctx, label)   the record fields it adds (dict)

``KnownAnswer`` adds its keys to ``state["mistake"]`` (the record's ``mistake``, copied by
:mod:`ani.campaign.run_record`) rather than through ``fields``.

Adding a feature = a class here (or in its own module) plus an entry in :data:`EXTENSIONS`.
"""

from __future__ import annotations

import time
from typing import Any

from ani.campaign.execute import RunContext, StopRun
from ani.campaign.results import INVALID_LABELS


class Observation:
    """Out-of-band observation (issue 14 §2, :mod:`ani.campaign.observe_run`): the initial
    configurations read and the sampler started before the agent (and before the step-0
    faults); recovery, unrequested changes, damage by class and oscillation after grading."""

    def __init__(self) -> None:
        self.obs: Any = None

    def before_agent(self, ctx: RunContext) -> None:
        from ani.campaign.observe_run import RunObservation

        t0 = time.monotonic()
        self.obs = RunObservation.begin(ctx, ctx.deps, ctx.lab, ctx.invariants, ctx.variant,
                                        ctx.trajectory, ctx.level, initial=ctx.state.pop("initial_reads", None))
        ctx.state["observation"] = self.obs
        ctx.adapter = self.obs.gated(ctx.adapter)  # no sampling process starts during an agent call
        ctx.timed("observe_begin_s", t0)

    def agent_ended(self, ctx: RunContext) -> None:
        if self.obs is not None:
            self.obs.agent_ended()  # from here every sampling round is complete

    def graded(self, ctx: RunContext) -> None:
        t0 = time.monotonic()
        self.obs.finish(ctx.state, ctx.state.get("faults_session"))
        ctx.timed("observe_finish_s", t0)

    def stop(self, ctx: RunContext) -> None:
        if self.obs is not None:
            self.obs.stop()  # the sampler stops before teardown on every path

    def fields(self, ctx: RunContext, label: str) -> dict[str, Any]:
        return self.obs.fields() if self.obs is not None and label not in INVALID_LABELS else {}


class Outcomes:
    """Measured outcomes (cases-tools, :mod:`ani.campaign.outcomes`): invalid calls, double
    application, partial changes, locks left -- measured before ``close()`` releases the
    agent's NETCONF sessions and with them its locks."""

    def after_agent(self, ctx: RunContext) -> None:
        from ani.campaign.outcomes import Outcomes as Measured
        from ani.campaign.outcomes import invalid_calls, measure
        from ani.campaign.run_support import error_text

        t0 = time.monotonic()
        try:
            ctx.state["outcomes"] = measure(ctx.trajectory.events, ctx.lab, ctx.adapter)
        except Exception as exc:  # noqa: BLE001 - a measurement never fails a run; say it
            ctx.state["outcomes"] = Measured(invalid_calls=invalid_calls(ctx.trajectory.events),
                                             locks_left=[f"not measured: {error_text(exc)}"])
        ctx.timed("measure_s", t0)


class Faults:
    """Faults below the ANI (issue 14): the plan's schedule met through a FaultSession that
    starts with the agent's clock and is driven by the trajectory; held after the agent with
    ``faults.hold``; removed before grading; a fault that did not take, vanished or stayed makes
    the run ``environment_invalid``; routing recovers before grading."""

    #: seconds a hold may last beyond the schedule's last point plus its durations (issue 23)
    HOLD_SLACK_S = 30.0

    def __init__(self, schedule: list[Any]) -> None:
        self.schedule = schedule
        self.session: Any = None

    def before_agent(self, ctx: RunContext) -> None:
        from ani.campaign.observe_run import attempted_change
        from ani.faults.session import FaultSession

        level = ctx.level
        self.session = FaultSession(ctx.lab, self.schedule, ctx.trajectory,
                                    attempted_change=lambda ev: attempted_change(dict(ev), level),
                                    retry_skipped=ctx.plan.fault_hold)  # issue 23: met at every level
        ctx.state["faults_session"] = self.session
        ctx.trajectory.on_tool_call = self.session.on_tool_call
        self.session.start()

    def agent_stopped(self, ctx: RunContext) -> None:
        """``faults.hold``: keep the run open until every scheduled fault was injected and ran
        its duration (``info["fault_hold_s"]``; Ctrl-C ends it)."""
        if self.session is None or not ctx.plan.fault_hold:
            return
        last = max((f.at_s if f.at_s is not None else 0.0) for f in self.schedule)
        longest = sum(float(f.duration_s or 0.0) for f in self.schedule)  # deferrals may chain them
        ctx.info["fault_hold_s"] = self.session.hold(bound_s=last + longest + self.HOLD_SLACK_S)

    def after_agent(self, ctx: RunContext) -> None:
        from ani.campaign.run_support import sigint_deferred

        if self.session is None:
            return
        ctx.trajectory.on_tool_call = None
        with sigint_deferred():
            self.session.stop()
        ctx.state["faults"] = self.session.records

    def before_grade(self, ctx: RunContext) -> None:
        if self.session is None:
            return
        if self.session.invalid_reason:
            raise StopRun(f"environment invalid: {self.session.invalid_reason}", env_invalid=True)
        if any(r.injected for r in self.session.records):
            t0 = time.monotonic()
            try:
                ctx.lab.wait_converged()
            except Exception:  # noqa: BLE001 - the observer grades what it finds
                pass
            ctx.timed("fault_wait_s", t0)

    def stop(self, ctx: RunContext) -> None:
        """Removed even after a crash; the records note the agent's calls that failed under them."""
        from ani.faults.record import note_failed_calls

        if self.session is None:
            return
        self.session.stop()
        events = ctx.trajectory.events if ctx.trajectory is not None else []
        ctx.state["faults"] = note_failed_calls(self.session.records, events)


class NcbScores:
    """NetConfBench's scores (issue 15 §3) of a variant whose ``params`` has ``solutions``,
    from the observation's initial and final configurations, the trajectory and what the faults
    wrote; never fails the run (a scoring error is a ``harness`` event ``ncb_scores_failed``)."""

    def graded(self, ctx: RunContext) -> None:
        from ani.campaign.observe_run import fault_lines
        from ani.campaign.run_support import error_text
        from ani.netconfbench.scoring import score_run

        params = getattr(ctx.variant, "params", None)
        if not isinstance(params, dict) or "solutions" not in params:
            return
        obs = ctx.state["observation"]
        try:
            ctx.state["ncb"] = score_run(params, obs.initial, obs.final_configs(), list(ctx.trajectory.events),
                                         fault_lines(list(ctx.state.get("faults") or [])),
                                         agent_config=dict(ctx.plan.agent), summary=_summary(ctx.plan))
        except Exception as exc:  # noqa: BLE001 - diagnostic scores never fail a run
            ctx.trajectory.log("ncb_scores_failed", kind="harness", reason=error_text(exc))


class KnownAnswer:
    """The known answer (issue 25 §3, :mod:`ani.campaign.known_answer`): after grading, the
    mistake an agent made on purpose (``state["mistake"]``, its ``AgentRun.mistake``) gets its
    expected breaks (from the run's baseline invariants and the initial configurations), whether
    it reached the network (the observation's final configurations), the invariants the observer
    flagged and whether the level prevented it. Computed after the observer and the grader
    worked, never shown to them; never fails the run (an error is a ``harness`` event
    ``known_answer_failed`` and leaves ``expected_breaks`` None)."""

    def graded(self, ctx: RunContext) -> None:
        from ani.campaign.known_answer import annotate, expected_breaks
        from ani.campaign.run_support import error_text

        made = ctx.state.get("mistake")
        if not isinstance(made, dict) or not made.get("kind"):
            return
        obs = ctx.state.get("observation")
        initial, expected = getattr(obs, "initial", None), None
        try:
            expected = expected_breaks(made, ctx.invariants, initial)
        except Exception as exc:  # noqa: BLE001 - a measure never fails a run; say it
            ctx.trajectory.log("known_answer_failed", kind="harness", what="expected_breaks", reason=error_text(exc))
        try:
            final = obs.final_configs() if obs is not None else None  # the observation's read, once
            done = annotate(made, expected=expected, final=final, invariants=list(ctx.state.get("invariants") or []),
                            fault_damage=(obs.fields().get("fault_damage") if obs is not None else None),
                            initial=initial, correct=lambda: _reference(ctx.variant, initial))
        except Exception as exc:  # noqa: BLE001
            ctx.trajectory.log("known_answer_failed", kind="harness", what="reached", reason=error_text(exc))
            done = annotate(made, expected=expected, final=None, invariants=list(ctx.state.get("invariants") or []))
        ctx.state["mistake"] = done


def _reference(variant: Any, initial: dict[str, Any] | None) -> dict[str, Any] | None:
    """The variant's reference end state on ``initial`` (:func:`ani.observer.changes.reference_configs`),
    None when it has none."""
    if initial is None:
        return None
    from ani.observer.changes import reference_configs

    return reference_configs(variant, initial)[0]


def _summary(plan: Any) -> Any:
    """The plan's reasoning-summary config as the scorer takes it (None: its default)."""
    if plan.reasoning_summary is None:
        return None
    from ani.netconfbench.reasoning_summary import SummaryConfig

    return SummaryConfig.model_validate(plan.reasoning_summary)


def extensions_for(ctx: RunContext) -> list[Any]:
    """The extensions of one run, in hook order: observation first (its initial read sees the
    brownfield before any step-0 fault), outcomes before faults (locks measured before the
    faults' are removed), NetConfBench scores and the known answer after the observation's
    final read."""
    out: list[Any] = [Observation(), Outcomes()]
    schedule = ctx.plan.fault_schedule()
    if schedule:
        out.append(Faults(schedule))
    out += [NcbScores(), KnownAnswer()]
    return out
