"""Execute one :class:`~ani.campaign.plan.RunPlan` with nothing else in hand: :func:`execute`.

A run is a sequence of phases over one :class:`RunContext`::

    resolve    scenario (the plan's file, hash checked), task class, variant, agent, budget
    lab up     variant.lab_topology(scenario) on a fresh lab          LabError      -> infra_error
    baseline   the scenario's invariants minus the variant's superseded ones, before the agent
    open       the level's adapter (blocklist, options), its trajectory
    agent      agent.run(variant.agent_view(), adapter, budget)       (extensions around it)
    close      the adapter closed (its NETCONF sessions and locks released)
    host       host faults met by the run, dead daemons               -> infra_error, not graded
    grade      hidden tests + baseline invariants, out of band (never through the adapter)
    teardown   always, also after Ctrl-C (held until the lab is down)

A phase that finds the run invalid raises :class:`StopRun` (its reason becomes the record's
``infra_error_reason``); the phases after it are skipped, teardown is not. Features of a run
that are not its sequence (out-of-band sampling, faults, measured outcomes, NetConfBench
scores) are :mod:`ani.campaign.extensions`, called at fixed points of the sequence; adding one
touches that module, not this one. The record is built by :mod:`ani.campaign.run_record`.

The semantics of each outcome (what is an infrastructure error, what is the agent's) are the
runner's: see :mod:`ani.campaign.runner`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ani.agents.base import Budget, BudgetExceeded
from ani.campaign.plan import RunPlan
from ani.campaign.results import RunRecord
from ani.errors import AniError, CampaignSpecError, HostFault

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

EventHook = Callable[[dict[str, Any]], None]


class StopRun(AniError):
    """A phase found the run invalid: ``reason`` is the record's ``infra_error_reason``;
    ``env_invalid``: a fault did not take or vanished (``environment_invalid``)."""

    def __init__(self, reason: str, *, env_invalid: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.env_invalid = env_invalid


@dataclass
class RunContext:
    """Everything one run holds while it executes; phases and extensions read and fill it.

    ``info`` holds the record's factor fields (run id, cell, level, ...) and phase timings
    (``lab_up_s``, ``baseline_s``, ``agent_s``, ``grading_s``, ``teardown_s``, seconds);
    ``state`` the outcome fields (``tests``, ``invariants``, ``success``, ``damage_free``,
    ``stop_reason``, ...) the record is built from.
    """

    plan: RunPlan
    workdir: Path
    deps: Any
    on_event: EventHook | None = None
    scenario: Any = None
    variant: Any = None
    agent: Any = None
    budget: Any = None
    invariants: list[Any] = field(default_factory=list)
    lab: Lab | None = None
    trajectory: Any = None
    adapter: Any = None
    extensions: list[Any] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    started: datetime | None = None
    t_start: float = 0.0
    fault_mark: int = 0
    #: the host faults met by this run's code and the threads it started (ani.host.programs)
    fault_scope: Any = None

    @property
    def level(self) -> str:
        return self.plan.level

    @property
    def observer_bound_s(self) -> float | None:
        return self.plan.observer_bound_s

    @property
    def traj_path(self) -> Path:
        return self.workdir / "trajectories" / f"{self.plan.run_id}.jsonl"

    timings: dict[str, float] = field(default_factory=dict)

    def timed(self, key: str, t0: float) -> None:
        """Seconds since ``t0`` (rounded to ms) as ``timings[key without _s]`` (the record's
        ``timings``) and, for a key the record has (``lab_up_s``, ``agent_s``, ...), ``info[key]``."""
        took = round(time.monotonic() - t0, 3)
        self.timings[key.removesuffix("_s")] = round(self.timings.get(key.removesuffix("_s"), 0.0) + took, 3)
        if key in RunRecord.model_fields:
            self.info[key] = took

    def each(self, hook: str, *args: Any) -> None:
        """Call ``hook`` of every extension that has it, in order."""
        for ext in self.extensions:
            fn = getattr(ext, hook, None)
            if callable(fn):
                fn(self, *args)


# --- resolve ------------------------------------------------------------------------------------


def scenario_of(plan: RunPlan, workdir: Path, deps: Any) -> Any:
    """The plan's scenario: the one generated at planning if ``deps`` still holds it (this
    process planned it), else its file (relative to ``workdir`` or absolute: the folder's copy),
    else regenerated from its manifest; or the NetConfBench task catalogue.

    Raises:
        CampaignSpecError: the file's scenario hash is not the plan's (the folder's scenario
            changed since planning: paired runs would not be comparable).
        ConfigError: the file, manifest or a task file is bad.
    """
    ref = plan.scenario
    if ref.tasks is not None:
        return deps.catalogue(list(ref.tasks))
    held = deps.held(ref.manifest, int(ref.seed or 0), ref.density) if ref.manifest is not None else None
    if held is not None:  # generated in this process at planning (the serial executor)
        scenario = held
    elif ref.file is not None:
        path = Path(ref.file)
        scenario = deps.scenario(path if path.is_absolute() else workdir / path)
    elif ref.manifest is not None:
        scenario = deps.generated(ref.manifest, int(ref.seed or 0), ref.density)
    else:
        raise CampaignSpecError(f"run {plan.run_id}: its plan names no scenario")
    found = str(getattr(scenario, "hash", "") or "")
    if ref.hash and found and found != ref.hash:
        raise CampaignSpecError(
            f"run {plan.run_id}: scenario {ref.file or ref.manifest} has hash {found[:12]}..., "
            f"the plan {ref.hash[:12]}...: the scenario changed since the campaign was planned")
    return scenario


def resolve(ctx: RunContext) -> None:
    """Scenario, variant, agent and budget of the plan (before any lab). Raises ConfigError."""
    from ani.campaign.runner import run_scenario, variant_of

    plan, deps = ctx.plan, ctx.deps
    catalogue = scenario_of(plan, ctx.workdir, deps)
    task_class = catalogue if plan.scenario.tasks is not None else deps.get_task_class(plan.task)
    ctx.variant = variant_of(task_class, catalogue, plan.seed, plan.form)
    ctx.scenario = run_scenario(catalogue, ctx.variant)
    from ani.agents.plugins import plugin_folders

    with plugin_folders(plan.agent_folders):  # a module:factory kind: its module's folders
        ctx.agent = deps.create_agent(dict(plan.agent))
    ctx.budget = Budget(**plan.budget)
    kept, gone = superseded(ctx.scenario, ctx.variant)
    ctx.invariants = kept
    ctx.info = factor_fields(plan, ctx.scenario, ctx.variant, gone)


def factor_fields(plan: RunPlan, scenario: Any, variant: Any, gone: list[Any]) -> dict[str, Any]:
    """The record's fields that say what ran (the plan's factors and the variant's ids)."""
    from ani.campaign.runner import scenario_density
    from ani.campaign.run_support import ncb_param
    from ani.campaign.spec import agent_mode_of

    return {
        "run_id": plan.run_id, "campaign": plan.campaign, "cell": plan.cell, "level": plan.level,
        "blocklist": plan.blocklist, "adapter_options": dict(plan.adapter_options), "task": plan.task,
        "variant_id": str(getattr(variant, "variant_id", "") or "") or None,
        "task_file": ncb_param(variant, "task_file"), "task_sha256": ncb_param(variant, "task_sha256"),
        "names": ncb_param(variant, "names"), "seed": plan.seed,
        "scenario_hash": str(getattr(scenario, "hash", "") or "") or None,
        "density": scenario_density(scenario, plan.density), "stress": dict(plan.stress),
        "trajectory": None, "superseded": [c.name for c in gone], "form": plan.form,
        "model": str(plan.agent["model"]) if plan.agent.get("model") is not None else None,
        "agent_mode": agent_mode_of(dict(plan.agent)), "fault_rate": plan.fault_rate,
    }


def superseded(scenario: Any, variant: Any) -> tuple[list[Any], list[Any]]:
    """``(baseline invariants that stay, those the variant supersedes)``, both in the
    scenario's order; a superseded name the scenario does not have is ignored."""
    names = set(getattr(variant, "superseded", None) or ())
    invariants = list(scenario.invariants)
    if not names:
        return invariants, []
    gone = [c for c in invariants if getattr(c, "name", None) in names]
    return [c for c in invariants if all(c is not g for g in gone)], gone


# --- phases -------------------------------------------------------------------------------------


def lab_up(ctx: RunContext) -> None:
    """A fresh lab of the variant's topology. StopRun: it did not start."""
    from ani.campaign.run_support import error_text

    try:
        ctx.lab = ctx.deps.make_lab(ctx.variant.lab_topology(ctx.scenario), **lab_options(ctx))
        t0 = time.monotonic()
        ctx.lab.up()
        ctx.timed("lab_up_s", t0)
    except Exception as exc:  # noqa: BLE001 - any substrate fault makes the run invalid
        raise StopRun(f"lab up: {error_text(exc)}") from None


def lab_options(ctx: RunContext) -> dict[str, Any]:
    """Keyword arguments of ``deps.make_lab`` beyond the topology: ``prefix`` (the plan's lab
    prefix, when it has one) and ``netconf`` / ``ssh`` (:func:`lab_servers`), each passed only to
    a lab factory whose signature names it (:func:`ani.campaign.runner.real_make_lab` takes all
    three; a test's fake factory takes none)."""
    import inspect

    opts: dict[str, Any] = {"prefix": ctx.plan.lab_prefix} if ctx.plan.lab_prefix else {}
    opts.update(lab_servers(ctx))
    try:
        params = inspect.signature(ctx.deps.make_lab).parameters
    except (TypeError, ValueError):  # no signature to read: pass nothing beyond the topology
        return {}
    named = {n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {k: v for k, v in opts.items() if k in named}


def lab_servers(ctx: RunContext) -> dict[str, bool]:
    """Which servers the run's lab starts, ``{"netconf": bool, "ssh": bool}``
    (:func:`ani.lab.protocol.servers_for`): those the level's adapter class needs with the cell's
    options (:meth:`ani.adapters.base.BaseAdapter.lab_needs`) and those the plan's fault kinds need
    (:meth:`ani.faults.base.FaultKind.lab_needs`). Every server when that cannot be told before
    the lab starts: an adapter factory other than the real one, an adapter class that does not
    declare its needs, a level or fault kind that does not load (its own error comes later)."""
    from ani.campaign.runner import _real_create_adapter
    from ani.lab.protocol import servers_for

    every = {"netconf": True, "ssh": True}
    if ctx.deps.create_adapter is not _real_create_adapter:
        return every
    from ani.faults.base import get_fault_kind
    from ani.registry import get_adapter_class

    try:
        declared = getattr(get_adapter_class(ctx.level), "lab_needs", None)
        needs = declared(dict(ctx.plan.adapter_options)) if declared is not None else None
        if needs is None:
            return every
        needs = tuple(needs)
        for spec in ctx.plan.fault_schedule():
            needs += tuple(get_fault_kind(spec.kind).lab_needs(spec))
    except Exception:  # noqa: BLE001 - undecidable here: every server (the run reports the cause)
        return every
    return servers_for(needs)


def baseline(ctx: RunContext) -> None:
    """The baseline invariants the variant keeps must hold before the agent acts. StopRun."""
    from ani.campaign.run_support import check_outcomes, error_text, evaluate_checks

    t0 = time.monotonic()
    reads = initial_reads(ctx.lab)  # beside the check: its reads and pings change no configuration
    try:
        results = evaluate_checks(ctx.deps.make_observer(ctx.lab), ctx.invariants, ctx.observer_bound_s)
    except Exception as exc:  # noqa: BLE001
        raise StopRun(f"baseline invariants: {error_text(exc)}") from None
    finally:
        ctx.state["initial_reads"] = outcome(reads)
    ctx.timed("baseline_s", t0)
    failed = [r for r in results if not r.passed]
    if failed:
        ctx.state["invariants"] = check_outcomes(results)
        names = "; ".join(f"{r.name}: {getattr(r, 'detail', '') or 'failed'}" for r in failed)
        raise StopRun(f"baseline invariants failed before the agent acted: {names}")


def initial_reads(lab: Lab) -> Any:
    """A future of the routers' initial configurations and addresses
    (:func:`ani.campaign.observe_run.read_initial`), read in a thread of its own; None for a lab
    that has no vtysh (a test's fake)."""
    if not callable(getattr(lab, "vtysh", None)) or not getattr(getattr(lab, "topology", None), "routers", None):
        return None
    from ani.campaign.observe_run import read_initial
    from ani.host.threads import ContextPool

    pool = ContextPool(max_workers=1)
    try:
        return pool.submit(read_initial, lab)
    finally:
        pool.shutdown(wait=False)


def outcome(future: Any) -> Any:
    """What ``future`` returned, or the exception it raised (None: no future); waits for it."""
    if future is None:
        return None
    return future.exception() or future.result()


def open_adapter(ctx: RunContext) -> None:
    """The trajectory file and the level's adapter, opened. StopRun: it could not be opened."""
    from ani.campaign.run_support import TeeTrajectory, error_text

    path = ctx.traj_path
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()  # an earlier partial file of the same run id
    ctx.trajectory = TeeTrajectory(ctx.plan.run_id, ctx.level, path, hook=ctx.on_event)
    ctx.info["trajectory"] = str(path)
    t0 = time.monotonic()
    try:
        extra = {"options": dict(ctx.plan.adapter_options)} if ctx.plan.adapter_options else {}
        ctx.adapter = ctx.deps.create_adapter(ctx.level, ctx.lab, blocklist=ctx.plan.blocklist,
                                              trajectory=ctx.trajectory, **extra)
        ctx.adapter.open()
    except Exception as exc:  # noqa: BLE001
        raise StopRun(f"adapter open: {error_text(exc)}") from None
    ctx.timed("open_s", t0)
    try:  # the ToolSpec hints classify tools the level's name table does not know
        ctx.state["tools"] = list(ctx.adapter.tools())
    except Exception:  # noqa: BLE001 - metrics only; never fails a run
        ctx.state["tools"] = []


def run_agent(ctx: RunContext) -> None:
    """The agent acts through the adapter within its budget; extensions around it
    (``before_agent``, ``agent_stopped``, ``after_agent``); the adapter is closed after."""
    import sys

    from ani.campaign.run_support import error_text

    ctx.each("before_agent")
    t0 = time.monotonic()
    ctx.state["agent_ran"] = True
    ctx.fault_mark = ctx.fault_scope.mark()
    try:
        _agent_result(ctx, ctx.agent.run(ctx.variant.agent_view(), ctx.adapter, ctx.budget))
    except BudgetExceeded as exc:  # an agent that lets its budget's stop out stopped, it did not crash
        ctx.state["stop_reason"] = exc.reason
    except HostFault as exc:  # the host failed under the agent (e.g. a program it ran is missing)
        ctx.state["host_faults"] = [str(exc)]
        ctx.state["stop_reason"] = "error"
    except Exception as exc:  # noqa: BLE001 - the SUT failed, not the infrastructure
        ctx.state["agent_error"] = error_text(exc)
        ctx.state["stop_reason"] = "error"
    finally:
        ctx.timed("agent_s", t0)
        if sys.exc_info()[0] is None:  # not on Ctrl-C: the agent stopped, its end waits for the faults
            ctx.each("agent_stopped")
        ctx.each("after_agent")  # measured outcomes (locks), faults removed, before close()
        close_adapter(ctx)
    ctx.each("agent_ended")


def _agent_result(ctx: RunContext, result: Any) -> None:
    for key in ("steps", "stop_reason", "submitted", "prompt_tokens", "completion_tokens", "mistake"):
        ctx.state[key] = getattr(result, key, None)
    if getattr(result, "error", None):
        ctx.state["agent_error"] = str(result.error)
    if getattr(result, "infra_error", None):  # e.g. the model endpoint, before any turn
        ctx.state["agent_infra_error"] = f"agent: {result.infra_error}"


def close_adapter(ctx: RunContext) -> None:
    from ani.campaign.run_support import error_text

    try:
        ctx.adapter.close()
    except Exception as exc:  # noqa: BLE001
        ctx.state["close_error"] = error_text(exc)


def check_run(ctx: RunContext) -> None:
    """After the agent: the agent never acted (its model never answered), an extension says
    the run did not meet its stimulus (``invalid_reason``), a host fault, or a daemon that
    stopped while the agent changed nothing: StopRun, not graded. ``before_grade`` runs here."""
    if ctx.state.get("agent_infra_error"):
        raise StopRun(ctx.state["agent_infra_error"])
    ctx.each("before_grade")  # e.g. faults: environment invalid, or wait for routing to recover
    host_faults(ctx)
    dead = dead_daemons(ctx.lab)
    if not dead:
        return
    changed = sum(1 for c in ctx.trajectory.calls if c.get("changed") is True)
    if not changed:  # nothing the agent did can have stopped them
        raise StopRun(f"host fault during the run: FRR daemon(s) stopped while the agent changed nothing: {dead}")
    ctx.state["unattributed"] = (
        f"FRR daemon(s) not running at grading time: {dead}, after {changed} changing call(s) of "
        "the agent: the harness cannot tell whether the agent's change or the host stopped them")


def grade(ctx: RunContext) -> None:
    """Hidden tests + invariants in one evaluation (checks run concurrently and share one
    bound), out of band, once the agent's last change has taken effect (settle_seconds); the
    observation's final reads start as its negative checks do (they only read)."""
    from ani.campaign.run_support import (
        GradingObserver,
        announce,
        check_outcomes,
        error_text,
        evaluate_checks,
    )
    from ani.scenario.settle import route_map_delay_s, settle_seconds

    settle = settle_seconds(ctx.scenario) if ctx.trajectory.calls else 0.0
    obs = ctx.state.get("observation")
    t0 = time.monotonic()
    if obs is not None:  # from the agent's last change, not from now; past the delay timer, on evidence
        obs.settle(settle, ctx.state.get("faults_session"), floor_s=route_map_delay_s(ctx.scenario))
    elif settle:
        time.sleep(settle)
    ctx.timed("settle_s", t0)
    hidden = list(ctx.variant.hidden_tests)
    announce(ctx.on_event, {"event": "run_phase", "phase": "grading", "hidden_tests": len(hidden),
                             "invariants": len(ctx.invariants)})
    t0 = time.monotonic()
    try:
        observer: GradingObserver = ctx.deps.make_observer(ctx.lab)
        if obs is not None:  # the final reads beside the pings' wait
            observer.on_negatives = obs.read_final_beside
        graded = evaluate_checks(observer, [*hidden, *ctx.invariants], ctx.observer_bound_s)
    except Exception as exc:  # noqa: BLE001
        raise StopRun(f"grading: {error_text(exc)}") from None
    ctx.timed("grading_s", t0)
    host_faults(ctx)  # e.g. a program the observer runs went missing and a check swallowed it
    ctx.state["tests"] = check_outcomes(graded[: len(hidden)])
    ctx.state["invariants"] = check_outcomes(graded[len(hidden):])
    if not ctx.state["tests"]:
        raise StopRun("grading: the variant has no hidden tests")
    ctx.state["success"] = all(t.passed for t in ctx.state["tests"])
    ctx.state["damage_free"] = all(i.passed for i in ctx.state["invariants"])
    ctx.each("graded")


#: the run's sequence after resolve; teardown is not a phase (it always runs)
PHASES: tuple[Callable[[RunContext], None], ...] = (lab_up, baseline, open_adapter, run_agent, check_run, grade)


# --- host faults and daemons --------------------------------------------------------------------


def host_faults(ctx: RunContext) -> None:
    """Raise StopRun naming each host fault of the run once (the agent's HostFault, an adapter's
    ``harness_fault`` event, the fault journal since the agent started, the lab's helpers)."""
    from ani.campaign.run_support import error_text

    causes = list(ctx.state.get("host_faults", []))
    causes += [f"{ev.get('tool')}: {ev.get('cause')}" for ev in ctx.trajectory.events
               if ev.get("event") == "harness_fault"]
    causes += ctx.fault_scope.faults(ctx.fault_mark)  # this run's own, not another run's beside it
    own = getattr(ctx.lab, "harness_faults", None)
    if callable(own):
        try:
            causes += [str(c) for c in own()]
        except Exception as exc:  # noqa: BLE001 - the lab cannot even say: that is a fault too
            causes.append(f"lab: {error_text(exc)}")
    uniq = once_each(causes)
    if uniq:
        raise StopRun("host fault during the run: " + "; ".join(uniq))


def once_each(causes: list[str]) -> list[str]:
    """Each cause once: an adapter's ``tool: X is missing`` covers the journal's ``X is missing``."""
    uniq: list[str] = []
    for c in causes:
        if c not in uniq and not any(u.endswith(": " + c) for u in uniq):
            uniq = [u for u in uniq if not c.endswith(": " + u)] + [c]
    return uniq


def dead_daemons(lab: Lab) -> str:
    """``"bgpd on e2; ospfd on c1"`` for the FRR daemons the lab started that are not running
    now ('' if all run, or if the lab cannot tell)."""
    dead = getattr(lab, "dead_daemons", None)
    routers = getattr(getattr(lab, "topology", None), "routers", None)
    if not callable(dead) or not isinstance(routers, dict):
        return ""
    parts = []
    for r in routers:
        try:
            gone = dead(r)
        except Exception:  # noqa: BLE001 - a lab that cannot tell is not evidence of a dead daemon
            continue
        parts += [f"{d} on {r}" for d in gone]
    return "; ".join(parts)


# --- the run ------------------------------------------------------------------------------------


def execute(plan: RunPlan, workdir: str | Path, *, deps: Any = None, on_event: EventHook | None = None) -> RunRecord:
    """Run ``plan`` on a fresh lab and grade it; the trajectory goes to
    ``workdir/trajectories/<run_id>.jsonl`` (an earlier partial file of the same run is replaced).

    Args:
        plan: the run (:class:`~ani.campaign.plan.RunPlan`).
        workdir: the results folder (or a worker's copy of what the plan needs: its scenario
            file under the same relative path).
        deps: factories (default :class:`ani.campaign.runner.RunnerDeps`: the real modules).
        on_event: called with each trajectory event as it is logged, and with ``run_phase``
            when grading starts (not stored); a display hook never breaks a run.

    Returns:
        A :class:`RunRecord` in exactly one state (see :mod:`ani.campaign.runner`).

    Raises:
        ConfigError: the plan's scenario, task or agent config is bad (nothing was started);
            CampaignSpecError: its scenario file changed since planning.
        KeyboardInterrupt: after the lab has been taken down.
    """
    from ani.campaign.extensions import extensions_for
    from ani.campaign.run_record import build_record
    from ani.campaign.runner import RunnerDeps
    from ani.campaign.run_support import now_utc

    from ani.host.programs import fault_scope

    ctx = RunContext(plan=plan, workdir=Path(workdir), deps=deps or RunnerDeps(), on_event=on_event)
    t0 = time.monotonic()
    resolve(ctx)  # config errors raise here, before any lab
    ctx.timed("resolve_s", t0)
    ctx.extensions = extensions_for(ctx)
    ctx.started, ctx.t_start = now_utc(), t0
    with fault_scope() as ctx.fault_scope:
        try:
            for phase in PHASES:
                phase(ctx)
        except StopRun as stop:
            ctx.state["infra_error_reason"] = stop.reason
            ctx.state["env_invalid"] = stop.env_invalid
        finally:
            teardown(ctx)
    return build_record(ctx)


def teardown(ctx: RunContext) -> None:
    """Every extension's ``stop`` (faults removed, sampler stopped), the trajectory closed, the
    lab down: always, with Ctrl-C held until the lab is down (``info["teardown_s"]``)."""
    from ani.campaign.run_support import error_text, sigint_deferred

    with sigint_deferred():
        ctx.each("stop")
    if ctx.trajectory is not None:
        ctx.trajectory.close()
    if ctx.lab is None:
        return
    with sigint_deferred():
        t0 = time.monotonic()
        try:
            ctx.lab.down()
        except Exception as exc:  # noqa: BLE001 - the verdict stands; say so
            ctx.state["teardown_error"] = error_text(exc)
        ctx.timed("teardown_s", t0)
