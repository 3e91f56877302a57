"""What every executor shares: the interface the coordinator calls, the record of a run that
never returned, and the run function named by an import path.

The coordinator (``ani campaign run``, ``ani run``) plans, then hands the plans to an
:class:`Executor`; the executor reports through a :class:`RunSink` (a run started, an event of
a run in flight, a run finished). The coordinator is the only writer of ``runs.jsonl``: it
stores what :meth:`RunSink.finished` hands it.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib import import_module
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ani.campaign.plan import RunPlan
from ani.campaign.provenance import run_provenance
from ani.campaign.results import INFRA, RunRecord
from ani.campaign.spec import agent_mode_of
from ani.errors import ConfigError

log = logging.getLogger("ani.campaign.executors")

#: the run function every executor calls unless told otherwise (``execute(plan, workdir, *,
#: deps=None, on_event=None) -> RunRecord``)
DEFAULT_TARGET = "ani.campaign.execute:execute"

#: a run function: ``target(plan, workdir, *, deps=None, on_event=None) -> RunRecord``
Target = Callable[..., RunRecord]


class RunSink(Protocol):
    """Where an executor reports (the coordinator). Called from the thread that called
    :meth:`Executor.run`, one call at a time."""

    def started(self, plan: RunPlan) -> None:
        """The run of ``plan`` started (on a worker)."""

    def event(self, run_id: str, event: dict[str, Any]) -> None:
        """A trajectory event of a run in flight (a dict as :class:`ani.trajectory.Trajectory`
        stores it)."""

    def finished(self, plan: RunPlan, record: RunRecord) -> None:
        """The run of ``plan`` ended with ``record`` (its trajectory already in
        ``out_dir/trajectories/<run_id>.jsonl``); the coordinator stores it."""


@runtime_checkable
class Executor(Protocol):
    """Runs plans; ``slots`` of them at once.

    :meth:`run` returns when every plan has finished: each reported exactly once through
    ``sink.finished`` (in any order). On Ctrl-C or a stop (SIGTERM, SIGHUP) it stops every run
    in flight (each takes its lab down through the run function's own KeyboardInterrupt
    handling), waits for them, reports nothing for the interrupted runs (``--resume`` runs them),
    then raises KeyboardInterrupt. A run whose worker died is reported as :func:`lost_record`.
    """

    name: str
    slots: int

    def run(self, plans: Sequence[RunPlan], out_dir: Path, sink: RunSink) -> None: ...

    def close(self) -> None: ...


def lost_record(plan: RunPlan, reason: str, *, trajectory: str | None = None) -> RunRecord:
    """The ``infra_error`` record of a run that never returned a record of its own (its worker
    died, the run raised, the cluster lost its task): every factor field comes from ``plan``,
    ``infra_error_reason`` is ``reason``; no verdict, no timings (``wall_s`` 0, ``started`` =
    ``ended`` = now). ``--resume`` runs it again. ``trajectory``: what the run wrote before it
    was lost, if anything."""
    now = datetime.now(UTC)
    agent = dict(plan.agent)
    return RunRecord(
        run_id=plan.run_id,
        campaign=plan.campaign,
        cell=plan.cell,
        level=plan.level,
        blocklist=plan.blocklist,
        adapter_options=dict(plan.adapter_options),
        task=plan.task,
        task_file=_task_file(plan),
        seed=plan.seed,
        scenario_hash=plan.scenario.hash,
        density=plan.density,
        stress=dict(plan.stress),
        label=INFRA,
        infra_error_reason=reason,
        started=now,
        ended=now,
        trajectory=trajectory,
        fault_rate=plan.fault_rate,
        form=plan.form,
        model=str(agent["model"]) if agent.get("model") is not None else None,
        agent_mode=agent_mode_of(agent),
        provenance=run_provenance(agent),  # issue 26 §3 (this process's host)
    )


def _task_file(plan: RunPlan) -> str | None:
    """A NetConfBench run's task file: the one task file of its scenario reference, if one."""
    tasks = plan.scenario.tasks
    return tasks[0] if tasks and len(tasks) == 1 else None


def load_target(path: str) -> Target:
    """The run function at ``module:function``.

    Raises:
        ConfigError: ``path`` is not ``module:function``, or names nothing importable or callable.
    """
    module_name, sep, attr = str(path).partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"executor target {path!r}: expected 'module:function'")
    try:
        fn = getattr(import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"executor target {path!r} cannot be loaded: {type(exc).__name__}: {exc}") from None
    if not callable(fn):
        raise ConfigError(f"executor target {path!r} is not callable")
    return fn


def call_target(target: Target, plan: RunPlan, workdir: Path, *, deps: Any = None,
                on_event: Callable[[dict[str, Any]], None] | None = None) -> RunRecord:
    """Run ``plan`` with ``target``; an exception it raises (a harness fault: execute turns the
    lab's, the agent's and the host's failures into records itself) becomes
    :func:`lost_record` (``run raised <Type>: <message>``, its traceback logged). A
    KeyboardInterrupt passes through (the run took its lab down)."""
    kwargs: dict[str, Any] = {"on_event": on_event}
    if deps is not None:
        kwargs["deps"] = deps
    try:
        return target(plan, workdir, **kwargs)
    except Exception as exc:  # noqa: BLE001 - one run's harness fault must not end the others
        log.error("run %s raised", plan.run_id, exc_info=True)
        return lost_record(plan, f"run raised {error_text(exc)}")


def error_text(exc: BaseException) -> str:
    """``<Type>: <message>`` (the first line of the message, cut to 300 characters)."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    msg = msg if len(msg) <= 300 else msg[:297] + "..."
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def exit_text(code: int | None) -> str:
    """A worker's end as words: ``exit code 3``, ``killed by SIGKILL``, ``exit code 130
    (interrupted)``, ``still running`` (None)."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}" + (" (interrupted)" if code == 130 else "")
