"""Run one variant in one cell (:func:`run_one`); a whole campaign is
:func:`ani.campaign.loop.run_campaign`.

One run::

    variant = get_task_class(task).variant(scenario, seed)
    lab = Lab(variant.lab_topology(scenario)).up()        # LabError          -> infra_error
    baseline = scenario.invariants minus variant.superseded   # the situation / task changes those
    Observer(lab).evaluate(baseline)                      # any failure       -> infra_error
    adapter = create_adapter(level, lab, blocklist=..., trajectory=...); adapter.open()
    agent.run(variant.agent_view(), adapter, budget)      # an exception      -> agent_error, still graded
                                                          # BudgetExceeded    -> its stop reason, no agent_error
                                                          # run.infra_error   -> infra_error, not graded
                                                          # a host fault      -> infra_error, not graded
    adapter.close()
    Observer(lab).evaluate(variant.hidden_tests + baseline)   # one pass, split
    lab.down()                                            # always

A variant's ``superseded`` invariants (baseline invariants the situation deliberately breaks or
the task deliberately changes, e.g. a moved site's reachability, a troubleshoot fault's broken
isolation) are left out of both baseline passes: not checked before the agent acts, not part of
the damage verdict after it (the variant's hidden tests grade them); the record lists their
names in ``RunRecord.superseded``.

A *host fault* during the run (the host or the harness failed, not the agent) makes it an
infrastructure error naming the cause: a ``harness_fault`` event in the trajectory (an adapter's
tool met a HostFault such as ProgramMissing, or crashed: :meth:`BaseAdapter.call`), a HostFault
out of ``agent.run``, a ProgramMissing noted in the fault journal (:mod:`ani.host.programs`; also
when some caller turned it into an ordinary failure), a fault of the lab's helpers
(``lab.harness_faults()``: its NETCONF server met one or stopped), or an FRR daemon that stopped
while the agent changed nothing. A daemon that stopped after the agent changed a configuration
cannot be attributed: the run is graded and ``RunRecord.unattributed`` says so.

Before the first lab, :func:`check_host` refuses cells whose level cannot work on this machine
(``ani doctor``'s checks).

Out-of-band observation (observer-run, issue 14 §2; :mod:`ani.campaign.observe_run`): just
before ``agent.run`` the routers' configurations are read and the sampler of the baseline
invariants starts (the agent gets the adapter wrapped so that no sampling process starts during
one of its calls); after grading, recovery is awaited and the record gets ``unsafe``,
``samples``, ``sample_period_s``, ``recovered``, ``recovery_s``, ``damaged``,
``unrequested_changes`` and ``oscillating``. The sampler is stopped before teardown on every path.

The other modules (lab, scenario, observer, agents) are imported lazily by the
default :class:`RunnerDeps`; tests inject small fakes.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ani.agents.base import BudgetExceeded
from ani.campaign.metrics import compute_metrics
from ani.campaign.outcomes import Outcomes, invalid_calls
from ani.campaign.outcomes import measure as measure_outcomes
from ani.campaign.results import ENV_INVALID, INFRA, INVALID_LABELS, CheckOutcome, RunRecord, label_for
from ani.campaign.spec import CampaignSpec, CellSpec, agent_mode_of
from ani.errors import CapabilityMissing, ConfigError, HostFault
from ani.host.programs import fault_mark, faults_since
from ani.trajectory import TOOL_CALL_EVENT, Trajectory

EventHook = Callable[[dict[str, Any]], None]


# --- dependencies (real ones imported lazily) ------------------------------------------------------


def _real_make_lab(topology: Any) -> Any:
    try:
        from ani.lab import Lab  # type: ignore[attr-defined]
    except ImportError:
        from ani.lab.lab import Lab
    return Lab(topology)


def _real_load_scenario(path: str | Path) -> Any:
    from ani.scenario import load_scenario  # type: ignore[attr-defined]

    return load_scenario(path)


def _real_generate_scenario(manifest: str | Path, *, seed: int, density: int | None = None) -> Any:
    from ani.scenario.generate import generate_scenario  # type: ignore[import-not-found]

    return generate_scenario(manifest, seed=seed, density=density)


def _real_render_scenario(manifest: str | Path, *, seed: int, density: int | None = None) -> str | None:
    from ani.scenario.generate import generate, render_yaml  # type: ignore[import-not-found]

    return render_yaml(generate(manifest, seed=seed, density=density))


def _real_get_task_class(name: str) -> Any:
    from ani.scenario import get_task_class  # type: ignore[attr-defined]

    return get_task_class(name)


def _real_make_observer(lab: Any) -> Any:
    from ani.observer import Observer  # type: ignore[attr-defined]

    return Observer(lab)


def _real_create_adapter(name: str, lab: Any, **kwargs: Any) -> Any:
    from ani.registry import create_adapter

    return create_adapter(name, lab, **kwargs)


def _real_create_agent(config: dict[str, Any]) -> Any:
    from ani.agents import create_agent  # type: ignore[attr-defined]

    return create_agent(config)


def _real_load_catalogue(paths: list[str]) -> Any:
    from ani.netconfbench.variant import TaskCatalogue

    return TaskCatalogue([Path(p) for p in paths])


def _real_check_host(levels: list[str], daemons: set[str]) -> dict[str, list[Any]]:
    from ani.host.checks import unfit

    return unfit(levels, daemons)


@dataclass
class RunnerDeps:
    """Factories the runner calls; the defaults are the real modules (imported on first use).

    Attributes:
        make_lab: ``Topology -> Lab`` (not started; the runner calls ``up()`` and ``down()``).
        load_scenario: ``path -> Scenario``.
        generate_scenario: ``(manifest path, seed=, density=) -> Scenario`` (hash set):
            :func:`ani.scenario.generate.generate_scenario`.
        render_scenario: ``(manifest path, seed=, density=) -> scenario-file YAML text`` (the
            copy a results folder keeps; None: keep none).
        get_task_class: ``name -> task class`` with ``.variant(scenario, seed)``.
        make_observer: ``Lab -> Observer`` with ``.evaluate(checks, bound_s=...)``.
        create_adapter: ``(level, lab, blocklist=, trajectory=[, options=]) -> Adapter``
            (``options`` only for a cell with ``options``).
        create_agent: ``agent config dict -> Agent``.
        check_host: ``(levels, FRR daemons) -> {level: [Finding]}`` of the levels that cannot
            run on this machine (:func:`ani.host.checks.unfit`); used only with the real lab
            factory or when replaced.
    """

    make_lab: Callable[[Any], Any] = _real_make_lab
    load_scenario: Callable[[Any], Any] = _real_load_scenario
    generate_scenario: Callable[..., Any] = _real_generate_scenario
    render_scenario: Callable[..., str | None] = _real_render_scenario
    get_task_class: Callable[[str], Any] = _real_get_task_class
    make_observer: Callable[[Any], Any] = _real_make_observer
    create_adapter: Callable[..., Any] = _real_create_adapter
    create_agent: Callable[[dict[str, Any]], Any] = _real_create_agent
    check_host: Callable[[list[str], set[str]], dict[str, list[Any]]] = _real_check_host
    #: netconfbench: ``[task file, ...] -> TaskCatalogue`` (scenario and task class of a
    #: campaign with ``tasks:``; :mod:`ani.netconfbench.variant`)
    load_catalogue: Callable[[list[str]], Any] = _real_load_catalogue
    _scenarios: dict[str, Any] = field(default_factory=dict, repr=False)

    def scenario(self, path: str | Path) -> Any:
        """The scenario at ``path``, loaded once per deps object."""
        key = str(path)
        if key not in self._scenarios:
            self._scenarios[key] = self.load_scenario(path)
        return self._scenarios[key]

    def catalogue(self, paths: list[str]) -> Any:
        """The task catalogue of ``paths``, loaded once per deps object. Raises TaskFormatError."""
        key = "\0tasks\0" + "\0".join(paths)
        if key not in self._scenarios:
            self._scenarios[key] = self.load_catalogue(list(paths))
        return self._scenarios[key]

    def generated(self, manifest: str | Path, seed: int, density: int | None) -> Any:
        """The scenario generated from ``manifest`` with ``seed`` at ``density``, generated once
        per deps object. Raises GeneratorError / TopologyError (a bad manifest)."""
        key = f"{manifest}\0{seed}\0{density}"
        if key not in self._scenarios:
            self._scenarios[key] = self.generate_scenario(manifest, seed=seed, density=density)
        return self._scenarios[key]


# --- helpers -----------------------------------------------------------------------------------------


class _TeeTrajectory(Trajectory):
    """A trajectory that also hands each event to ``hook`` (live printing in ``ani run``)."""

    def __init__(self, *args: Any, hook: EventHook | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._hook = hook
        # faults (issue 14): called with the step (tool calls so far) and the event after each tool_call
        self.on_tool_call: Callable[[int, dict[str, Any]], None] | None = None
        self._steps = 0

    def log(self, event: str, **fields: Any) -> dict[str, Any]:
        rec = super().log(event, **fields)
        if event == TOOL_CALL_EVENT and self.on_tool_call is not None:  # faults (issue 14)
            self._steps += 1
            try:
                self.on_tool_call(self._steps, rec)
            except Exception:  # noqa: BLE001 - the session records its own failures
                pass
        if self._hook is not None:
            try:
                self._hook(rec)
            except Exception:  # noqa: BLE001 - a display hook never breaks a run
                pass
        return rec


def _announce(hook: EventHook | None, event: dict[str, Any]) -> None:
    """Hand a runner event (not a trajectory event: it is not stored) to the display hook.

    Runner events: ``{"event": "run_phase", "phase": "grading", "hidden_tests": N,
    "invariants": M}`` when grading starts (it can take tens of seconds)."""
    if hook is None:
        return
    try:
        hook(event)
    except Exception:  # noqa: BLE001 - a display hook never breaks a run
        pass


@contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold Ctrl-C until the block ends (so teardown is not interrupted); main thread only.

    A process that ignores SIGINT (started with ``&`` from a script, or ``nohup``) keeps
    ignoring it here: a SIGINT during teardown must not stop it when one at any other moment
    does not."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        yield
        return
    received: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda s, f: received.append(s))
    except ValueError:  # not the main interpreter
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received:
            raise KeyboardInterrupt


def _outcomes(results: Any) -> list[CheckOutcome]:
    out = []
    for r in results or []:
        out.append(
            CheckOutcome(
                name=str(r.name),
                passed=bool(r.passed),
                detail=str(getattr(r, "detail", "") or ""),
                service=getattr(r, "service", None) or None,
            )
        )
    return out


def _err(exc: BaseException) -> str:
    text = str(exc).strip() or repr(exc)
    pending = getattr(exc, "pending", None)
    if pending:
        text += " [pending: " + "; ".join(map(str, pending)) + "]"
    return f"{type(exc).__name__}: {text}"


#: FRR's ``bgp route-map delay-timer`` when a config does not set it (seconds, FRR 8.4)
FRR_ROUTE_MAP_DELAY_S = 5
#: what BGP needs beyond that timer to carry a change to the other routers (seconds)
PROPAGATION_S = 1.0
#: seconds a fault hold may last beyond the schedule's last point plus its durations (issue 23)
HOLD_SLACK_S = 30.0


def settle_seconds(scenario: Any) -> float:
    """How long the network needs after the agent's last change before grading (seconds):
    the longest ``bgp route-map delay-timer`` of the scenario's BGP routers (FRR applies a
    changed route-map or prefix-list to existing routes only when it fires) plus
    :data:`PROPAGATION_S`; 0 without BGP. Grading earlier lets a positive invariant pass on
    routes about to be withdrawn: damage goes unseen."""
    configs = getattr(scenario, "device_configs", None)
    if not isinstance(configs, dict):
        return 0.0
    timers = [FRR_ROUTE_MAP_DELAY_S if c.bgp_route_map_delay_timer is None else c.bgp_route_map_delay_timer
              for c in configs.values() if getattr(c, "bgp", None) is not None]
    return float(max(timers)) + PROPAGATION_S if timers else 0.0


def _evaluate(observer: Any, checks: Any, bound_s: float | None) -> Any:
    if bound_s is None:
        return observer.evaluate(list(checks))
    return observer.evaluate(list(checks), bound_s=bound_s)


def _as_steps(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    try:
        return len(value)
    except TypeError:
        return None


def _now() -> datetime:
    return datetime.now(UTC)


# --- one run -----------------------------------------------------------------------------------------


def scenario_for(spec: CampaignSpec, deps: RunnerDeps, density: int | None = None) -> Any:
    """The scenario of ``spec`` at ``density``: its scenario file, or the scenario generated from
    its manifest (``scenario_seed``, ``density``; None: the manifest's own).

    With ``tasks:`` (netconfbench) it is the task catalogue; each run's own scenario is
    :func:`run_scenario`'s.

    Raises ConfigError: the paths are not resolved, or the file / manifest / a task file is bad.
    """
    if spec.tasks is not None:
        if not spec.tasks_paths:
            raise ConfigError(f"campaign {spec.name!r}: tasks are not resolved (use load_spec/parse_spec)")
        try:
            return deps.catalogue(spec.tasks_paths)
        except ConfigError as exc:
            raise type(exc)(f"{spec.source}: tasks: {exc}") from None
    if spec.manifest is not None:
        if not spec.manifest_path:
            raise ConfigError(
                f"campaign {spec.name!r}: manifest path is not resolved (use load_spec/parse_spec)"
            )
        return deps.generated(spec.manifest_path, int(spec.scenario_seed or 0), density)
    if not spec.scenario_path:
        raise ConfigError(
            f"campaign {spec.name!r}: scenario path is not resolved (use load_spec/parse_spec)"
        )
    return deps.scenario(spec.scenario_path)


def prepare(
    spec: CampaignSpec,
    deps: RunnerDeps,
    cell: CellSpec | str | None = None,
    stress: dict[str, Any] | None = None,
) -> tuple[Any, Any]:
    """Load the scenario and the task class of one cell (default the first) at one stress value,
    checking the config before any lab starts.

    Returns ``(scenario, task_class)``. Raises ConfigError (scenario/manifest/task problems).
    """
    cell = spec.cells[0] if cell is None else cell
    scenario = scenario_for(spec, deps, spec.density_of(cell, stress))
    if spec.tasks is not None:  # netconfbench: the catalogue makes the variants too
        return scenario, scenario
    try:
        task_class = deps.get_task_class(spec.task_of(cell, stress))
    except ConfigError as exc:  # name the field that chose it: "cells[2](x).task: unknown ..."
        raise type(exc)(f"{spec.source}: {spec.task_field(cell, stress)}: {exc}") from None
    return scenario, task_class


def _ncb_param(variant: Any, key: str) -> Any:
    """netconfbench: ``variant.params[key]`` of a netconfbench variant, else None."""
    if getattr(variant, "task_class", None) != "netconfbench":
        return None
    return (getattr(variant, "params", None) or {}).get(key)


def run_scenario(scenario: Any, variant: Any) -> Any:
    """The scenario a run of ``variant`` starts from: ``scenario`` itself, or for a task
    catalogue (netconfbench) the variant's task's own."""
    own = getattr(scenario, "scenario_of", None)
    return own(variant) if callable(own) else scenario


def scenario_density(scenario: Any, asked: int | None) -> int | None:
    """The density of ``scenario``: ``asked`` if given, else what its ``generated`` block says
    (a generated scenario file), else None (a hand-written scenario)."""
    if asked is not None:
        return asked
    gen = getattr(scenario, "generated", None)
    value = gen.get("density") if isinstance(gen, dict) else getattr(gen, "density", None)
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def design_points(spec: CampaignSpec) -> list[tuple[CellSpec, dict[str, Any]]]:
    """Every (cell, stress value) of ``spec`` once."""
    return [(cell, point) for point in spec.stress_points for cell in spec.cells]


def validate(spec: CampaignSpec, deps: RunnerDeps) -> None:
    """Check everything that can be checked without a lab, so a bad config fails before any run.

    Loads (or generates) every scenario and task class the campaign uses, builds every variant,
    creates the agent once and (with the real adapter factory) imports every cell's adapter class.

    Raises:
        ConfigError: scenario, manifest, task, variant or agent config problems.
        RegistryError: an adapter cannot be loaded.
    """
    for cell, point in design_points(spec):
        scenario, task_class = prepare(spec, deps, cell, point)
        for seed in spec.seeds:
            variant_of(task_class, scenario, seed, spec.form_of(cell))
    check_agents(spec, deps)
    if deps.create_adapter is _real_create_adapter:
        from ani.registry import get_adapter_class

        for i, cell in enumerate(spec.cells):
            get_adapter_class(str(cell.level))
            try:
                check_adapter_options(str(cell.level), dict(cell.options))
            except ConfigError as exc:
                raise ConfigError(f"cells[{i}]({cell.name}).options: {exc}") from None
        if any(cell.blocklist for cell in spec.cells):
            import ani.adapters.blocklist  # noqa: F401 - the ablation wrapper must load


def check_adapter_options(level: str, options: dict[str, Any]) -> None:
    """Check ``options`` (a cell's ``options:``, ``ani run --option``) with the options model of
    the adapter of ``level``, which parses them at construction on no target (``None``: an
    adapter checks only what needs no lab then, e.g. A1 checks ``transport: ssh`` against the
    lab when it is built on one). Raises
    ConfigError naming the level, each bad option and the known ones
    (:func:`ani.adapters.options.parse_options`); RegistryError for an unknown level."""
    from ani.registry import get_adapter_class

    if options:
        get_adapter_class(level)(None, options=dict(options))


def check_host(spec: CampaignSpec, deps: RunnerDeps, cells: list[str] | None = None) -> None:
    """Refuse, before any lab starts, cells whose level cannot work on this machine: a program,
    kernel feature or privilege it needs is missing (``ani doctor``'s checks, for the levels of
    ``cells`` -- default every cell -- and the FRR daemons the scenario's variants run).

    Skipped when ``deps`` makes fake labs (and ``check_host`` is the real one).

    Raises:
        CapabilityMissing: one line, e.g. ``cells a2, a3t cannot run on this machine:
            /usr/lib/frr/frr-reload.py is missing (apt-get install frr-pythontools); see 'ani doctor'``.
    """
    if deps.check_host is _real_check_host and deps.make_lab is not _real_make_lab:
        return  # a fake lab needs nothing from this host
    from ani.host.checks import describe_unfit

    # faults (issue 14): a kind named in faults.kinds that this host cannot do
    from ani.faults.campaign import unavailable_kinds

    missing = unavailable_kinds(spec)
    if missing:
        raise CapabilityMissing(
            "faults.kinds: " + "; ".join(f"{k} cannot run on this machine: {why}" for k, why in missing.items())
            + " (leave it out of faults.kinds, or give kinds: null for every kind this host can do)")

    chosen = {c.name: str(c.level) for c in spec.cells if cells is None or c.name in cells}
    if not chosen:
        return
    daemons: set[str] = set()
    for cell, point in design_points(spec):
        if cell.name not in chosen:
            continue
        scenario, task_class = prepare(spec, deps, cell, point)
        daemons |= _daemons(getattr(scenario, "topology", None))
        for seed in spec.seeds:
            try:
                daemons |= _daemons(task_class.variant(scenario, seed).lab_topology(scenario))
            except Exception:  # noqa: BLE001 - validate() reported variant problems; the base topology counts
                continue
    bad = deps.check_host(list(dict.fromkeys(chosen.values())), daemons)
    if bad:
        raise CapabilityMissing(describe_unfit(chosen, bad))


def _daemons(topology: Any) -> set[str]:
    routers = getattr(topology, "routers", None)
    if not isinstance(routers, dict):
        return set()
    return {str(d) for r in routers.values() for d in (getattr(r, "daemons", None) or [])}


def preflight(spec: CampaignSpec, deps: RunnerDeps) -> list[str]:
    """The agent's own cheap check of what it depends on, before the first lab starts.

    Creates the agent once and calls its ``preflight()`` if it has one (the LLM agent: one
    ``GET {base_url}/models``); agents without it are skipped. Returns its warnings (text).

    Raises:
        ConfigError: the agent config is bad, or the agent says no run could work (e.g. its
            endpoint refuses connections or rejects the key), naming the cause.
    """
    warnings: list[str] = []
    configs = {_frozen(config): config for config in map(spec.agent_of, spec.cells)}
    for config in configs.values():  # each distinct agent once (a model factor: each endpoint)
        agent = deps.create_agent(dict(config))
        check = getattr(agent, "preflight", None)
        if callable(check):
            warnings += [str(w) for w in (check() or []) if str(w) not in warnings]
    return warnings


# --- campaign-factors: each cell's agent, the task's form, the cost ---


def _frozen(config: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A hashable key of an agent config (its values are YAML scalars)."""
    return tuple(sorted((k, v if isinstance(v, (str, int, float, bool, type(None))) else repr(v))
                        for k, v in config.items()))


def variant_of(task_class: Any, scenario: Any, seed: int, form: str) -> Any:
    """The variant ``seed`` of ``task_class`` in the HAI ``form`` (``intent``, the default of
    every task class, is asked without the keyword, so a class without forms still works)."""
    if form == "intent":
        return task_class.variant(scenario, seed)
    return task_class.variant(scenario, seed, form=form)


def check_agents(spec: CampaignSpec, deps: RunnerDeps) -> None:
    """Create each distinct agent of the cells once (a bad option fails before any lab).

    Raises:
        ConfigError: the agent config is bad (``cells[1](x): agent.mode: ...`` when the cells'
            agents differ).
    """
    configs = [spec.agent_of(c) for c in spec.cells]
    one = len({_frozen(c) for c in configs}) == 1
    for i, (cell, config) in enumerate(zip(spec.cells, configs, strict=True)):
        if i and one:
            break
        try:
            deps.create_agent(dict(config))
        except ConfigError as exc:
            if one:
                raise
            raise type(exc)(f"{spec.source}: cells[{i}]({cell.name}): {exc}") from None


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
# --- end campaign-factors ---


def run_one(
    spec: CampaignSpec,
    cell: CellSpec | str,
    seed: int,
    out_dir: str | Path,
    deps: RunnerDeps | None = None,
    on_event: EventHook | None = None,
    *,
    stress: dict[str, Any] | None = None,
) -> RunRecord:
    """Run the variant ``seed`` of the cell's task class in ``cell`` on a fresh lab and grade it.

    Args:
        spec: the campaign (scenario, task, agent, budget).
        cell: a cell of ``spec`` or its name.
        seed: the variant's seed.
        stress: the stress value of the run (``{"density": 4}``; None or ``{}``: none), which
            picks the scenario (density) or the task class (task) with the cell's settings.
        out_dir: results folder; the trajectory goes to ``out_dir/trajectories/<run_id>.jsonl``
            (an earlier partial file of the same run id is replaced).
        deps: factories (default: the real lab, scenario, observer, adapters, agents).
        on_event: called with each trajectory event as it is logged (for live display), and
            with the runner's ``run_phase`` event when grading starts (not stored).

    Returns:
        A :class:`RunRecord` in exactly one state: an outcome label, or ``infra_error`` when the
        lab did not start, a baseline invariant failed before the agent acted, the adapter could
        not be opened, the agent reported an ``infra_error`` (the LLM agent: its endpoint failed
        before any model turn; not graded), a host fault occurred during the run (module doc;
        not graded), or the observer could not grade. An agent exception is not an
        infrastructure error: it is recorded in ``agent_error`` and the run is graded.

    Raises:
        ConfigError: the scenario or task cannot be loaded (nothing was started).
        KeyboardInterrupt: after the lab has been taken down.
    """
    deps = deps or RunnerDeps()
    cell = spec.cell(cell) if isinstance(cell, str) else cell
    stress = dict(stress or {})
    task = spec.task_of(cell, stress)
    rid = spec.run_id(cell, seed, stress)
    out = Path(out_dir)
    traj_path = out / "trajectories" / f"{rid}.jsonl"
    scenario, task_class = prepare(spec, deps, cell, stress)
    variant = variant_of(task_class, scenario, seed, spec.form_of(cell))
    scenario = run_scenario(scenario, variant)  # netconfbench: the task's own network
    agent_config = spec.agent_of(cell)
    agent = deps.create_agent(dict(agent_config))  # config errors raise here, before any lab
    budget = spec.budget

    started = _now()
    t_start = time.monotonic()
    info: dict[str, Any] = {
        "run_id": rid,
        "campaign": spec.name,
        "cell": cell.name,
        "level": cell.level,
        "blocklist": cell.blocklist,
        "adapter_options": dict(cell.options),
        "task": task,
        "variant_id": str(getattr(variant, "variant_id", "") or "") or None,
        # netconfbench: the task file and the name map of an imported task
        "task_file": _ncb_param(variant, "task_file"),
        "task_sha256": _ncb_param(variant, "task_sha256"),
        "names": _ncb_param(variant, "names"),
        "seed": int(seed),
        "scenario_hash": str(getattr(scenario, "hash", "") or "") or None,
        "density": scenario_density(scenario, spec.density_of(cell, stress)),
        "stress": stress,
        "trajectory": None,
        "superseded": [c.name for c in _superseded(scenario, variant)[1]],
        # campaign-factors: the factors of the run
        "form": spec.form_of(cell),
        "model": str(agent_config["model"]) if agent_config.get("model") is not None else None,
        "agent_mode": agent_mode_of(agent_config),
    }
    state: dict[str, Any] = {"agent_config": dict(agent_config),  # ncb: the reasoning summariser's default
                             "reasoning_summary": spec.reasoning_summary}
    # faults (issue 14): the variant's schedule, from its seed and the rate (never the level)
    from ani.faults.campaign import schedule_for

    info["fault_rate"] = spec.fault_rate_of(cell, stress)
    state["fault_schedule"] = schedule_for(spec, cell, stress, scenario, variant, seed)
    try:
        _execute(
            spec, cell, scenario, variant, agent, budget, deps, traj_path, on_event, info, state
        )
    finally:
        session = state.get("faults_session")  # faults (issue 14): removed even after a crash
        if session is not None:
            with _sigint_deferred():
                session.stop()
            from ani.faults.record import note_failed_calls

            traj = state.get("trajectory")
            state["faults"] = note_failed_calls(session.records, traj.events if traj is not None else [])
        if state.get("observation") is not None:  # observer-run: the sampler stops before teardown
            state["observation"].stop()
        trajectory = state.get("trajectory")
        if trajectory is not None:
            trajectory.close()
        lab = state.get("lab")
        if lab is not None:
            with _sigint_deferred():
                t0 = time.monotonic()
                try:
                    lab.down()
                except Exception as exc:  # noqa: BLE001 - the verdict stands; say so
                    state["teardown_error"] = _err(exc)
                info["teardown_s"] = round(time.monotonic() - t0, 3)
    record = _record(info, state, started, t_start)
    return record.model_copy(update={"cost": cost_of(record, state.get("trajectory"))})  # campaign-factors


def _execute(
    spec: CampaignSpec,
    cell: CellSpec,
    scenario: Any,
    variant: Any,
    agent: Any,
    budget: Any,
    deps: RunnerDeps,
    traj_path: Path,
    on_event: EventHook | None,
    info: dict[str, Any],
    state: dict[str, Any],
) -> None:
    """The run's phases; fills ``info``/``state`` and returns at the first infrastructure error."""
    # 1. the substrate, and the baseline it must satisfy before the agent acts
    phase = "lab up"
    invariants, _gone = _superseded(scenario, variant)
    try:
        topology = variant.lab_topology(scenario)
        state["lab"] = lab = deps.make_lab(topology)
        t0 = time.monotonic()
        lab.up()
        info["lab_up_s"] = round(time.monotonic() - t0, 3)
        phase = "baseline invariants"
        t0 = time.monotonic()
        baseline = _evaluate(deps.make_observer(lab), invariants, spec.observer_bound_s)
        info["baseline_s"] = round(time.monotonic() - t0, 3)
    except Exception as exc:  # noqa: BLE001 - any substrate fault makes the run invalid
        state["infra_error_reason"] = f"{phase}: {_err(exc)}"
        return
    failed = [r for r in baseline if not r.passed]
    if failed:
        names = "; ".join(f"{r.name}: {getattr(r, 'detail', '') or 'failed'}" for r in failed)
        state["infra_error_reason"] = f"baseline invariants failed before the agent acted: {names}"
        state["invariants"] = _outcomes(baseline)
        return

    # 2. the interface and the agent
    if traj_path.exists():
        traj_path.unlink()
    state["trajectory"] = trajectory = _TeeTrajectory(
        info["run_id"], cell.level, traj_path, hook=on_event
    )
    info["trajectory"] = str(traj_path)
    try:
        extra = {"options": dict(cell.options)} if cell.options else {}
        adapter = deps.create_adapter(
            cell.level, lab, blocklist=cell.blocklist, trajectory=trajectory, **extra
        )
        adapter.open()
    except Exception as exc:  # noqa: BLE001
        state["infra_error_reason"] = f"adapter open: {_err(exc)}"
        return
    try:  # the ToolSpec hints classify tools the level's name table does not know
        state["tools"] = list(adapter.tools())
    except Exception:  # noqa: BLE001 - metrics only; never fails a run
        state["tools"] = []
    # --- observer-run (issue 14 §2): initial configs read and the sampler started, out of band
    # (before the step-0 faults: the initial state is the brownfield's, and the sampler sees them)
    from ani.campaign.observe_run import RunObservation

    state["observation"] = RunObservation.begin(spec, deps, lab, invariants, variant, trajectory, cell.level)
    adapter = state["observation"].gated(adapter)  # no sampling process starts during an agent call
    # --- end observer-run
    # faults (issue 14): the session starts with the agent's clock; the trajectory hook drives it
    schedule = state.get("fault_schedule") or []
    if schedule:
        from ani.faults.session import FaultSession

        from ani.campaign.observe_run import attempted_change

        level = cell.level
        state["faults_session"] = session = FaultSession(
            lab, schedule, trajectory, attempted_change=lambda ev: attempted_change(dict(ev), level),
            retry_skipped=bool(getattr(spec.faults, "hold", False)))  # issue 23: met at every level
        trajectory.on_tool_call = session.on_tool_call
        session.start()
    t0 = time.monotonic()
    state["agent_ran"] = True
    mark = fault_mark()
    try:
        result = agent.run(variant.agent_view(), adapter, budget)
        state["steps"] = getattr(result, "steps", None)
        state["stop_reason"] = getattr(result, "stop_reason", None)
        state["submitted"] = getattr(result, "submitted", None)
        state["prompt_tokens"] = getattr(result, "prompt_tokens", None)
        state["completion_tokens"] = getattr(result, "completion_tokens", None)
        if getattr(result, "error", None):
            state["agent_error"] = str(result.error)
        if getattr(result, "infra_error", None):  # e.g. the model endpoint, before any turn
            state["infra_error_reason"] = f"agent: {result.infra_error}"
    except BudgetExceeded as exc:  # cases-tools: an agent that lets its budget's stop out stopped, it did not crash
        state["stop_reason"] = exc.reason
    except HostFault as exc:  # the host failed under the agent (e.g. a program it ran is missing)
        state["host_faults"] = [str(exc)]
        state["stop_reason"] = "error"
    except Exception as exc:  # noqa: BLE001 - the SUT failed, not the infrastructure
        state["agent_error"] = _err(exc)
        state["stop_reason"] = "error"
    finally:
        info["agent_s"] = round(time.monotonic() - t0, 3)
        if sys.exc_info()[0] is None:  # not on Ctrl-C: the agent stopped, its end waits for the faults
            _hold_faults(spec, state, info)
        # --- cases-tools: measured outcomes (ani.campaign.outcomes), before close() releases
        # the agent's NETCONF sessions and with them its locks
        try:
            state["outcomes"] = measure_outcomes(trajectory.events, lab, adapter)
        except Exception as exc:  # noqa: BLE001 - a measurement never fails a run; say it
            state["outcomes"] = Outcomes(invalid_calls=invalid_calls(trajectory.events),
                                         locks_left=[f"not measured: {_err(exc)}"])
        # --- end cases-tools
        if state.get("faults_session") is not None:  # faults (issue 14): removed before grading
            trajectory.on_tool_call = None
            with _sigint_deferred():
                state["faults_session"].stop()
            state["faults"] = state["faults_session"].records
        try:
            adapter.close()
        except Exception as exc:  # noqa: BLE001
            state["close_error"] = _err(exc)
    state["observation"].agent_ended()  # observer-run: from here every sampling round is complete
    if state.get("infra_error_reason"):
        return  # the agent never acted (its model never answered): nothing to grade
    # faults (issue 14): a fault that did not take, vanished or stayed: the run did not meet the
    # stimulus it was scheduled; not the agent's verdict. Otherwise let routing recover from the
    # faults before grading (a convergence timeout here is for the grading to judge).
    session = state.get("faults_session")
    if session is not None and session.invalid_reason:
        state["infra_error_reason"] = f"environment invalid: {session.invalid_reason}"
        state["env_invalid"] = True
        return
    if session is not None and any(r.injected for r in session.records):
        t0 = time.monotonic()
        try:
            lab.wait_converged()
        except Exception:  # noqa: BLE001 - the observer grades what it finds
            pass
        info["fault_wait_s"] = round(time.monotonic() - t0, 3)
    if _host_faults(state, trajectory, lab, mark):
        return  # the host or the harness failed during the run: not the agent's verdict
    dead = _dead_daemons(lab)
    if dead:
        changed = sum(1 for c in trajectory.calls if c.get("changed") is True)
        if not changed:  # nothing the agent did can have stopped them
            state["infra_error_reason"] = (
                f"host fault during the run: FRR daemon(s) stopped while the agent changed nothing: {dead}")
            return
        state["unattributed"] = (
            f"FRR daemon(s) not running at grading time: {dead}, after {changed} changing call(s) of "
            "the agent: the harness cannot tell whether the agent's change or the host stopped them")

    # 3. grading, out of band (never through the adapter), once the agent's last change has
    # taken effect everywhere (settle_seconds)
    settle = settle_seconds(scenario) if trajectory.calls else 0.0
    if settle:
        time.sleep(settle)
    hidden = list(variant.hidden_tests)
    _announce(
        on_event,
        {
            "event": "run_phase",
            "phase": "grading",
            "hidden_tests": len(hidden),
            "invariants": len(invariants),
        },
    )
    try:
        observer = deps.make_observer(lab)
        # one evaluation: checks run concurrently and share one bound (results keep input order)
        t0 = time.monotonic()
        graded = _evaluate(observer, [*hidden, *invariants], spec.observer_bound_s)
        info["grading_s"] = round(time.monotonic() - t0, 3)
        tests, invariants = graded[: len(hidden)], graded[len(hidden) :]
    except Exception as exc:  # noqa: BLE001
        state["infra_error_reason"] = f"grading: {_err(exc)}"
        return
    if _host_faults(state, trajectory, lab, mark):
        return  # e.g. a program the observer runs went missing and a check swallowed it
    state["tests"] = _outcomes(tests)
    state["invariants"] = _outcomes(invariants)
    if not state["tests"]:
        state["infra_error_reason"] = "grading: the variant has no hidden tests"
        return
    state["success"] = all(t.passed for t in state["tests"])
    state["damage_free"] = all(i.passed for i in state["invariants"])
    # --- observer-run (issue 14 §2): recovery, changes nobody asked for, damage by class, oscillation
    state["observation"].finish(state, state.get("faults_session"))
    # --- end observer-run
    _ncb_scores(variant, state, trajectory)  # ncb-scores (issue 15 §3)


def _hold_faults(spec: CampaignSpec, state: dict[str, Any], info: dict[str, Any]) -> None:
    """issue 23 §2 (``faults.hold``): keep the run open after the agent stopped until every
    scheduled fault has been injected and has run its duration (at most the schedule's last
    point plus the longest duration plus :data:`HOLD_SLACK_S`); ``info["fault_hold_s"]``."""
    session = state.get("faults_session")
    faults = getattr(spec, "faults", None)
    if session is None or not getattr(faults, "hold", False):
        return
    sched = state.get("fault_schedule") or []
    last = max((f.at_s if f.at_s is not None else 0.0) for f in sched) if sched else 0.0
    longest = sum(float(f.duration_s or 0.0) for f in sched)  # deferrals may chain them
    info["fault_hold_s"] = session.hold(bound_s=last + longest + HOLD_SLACK_S)  # Ctrl-C ends it


def _ncb_scores(variant: Any, state: dict[str, Any], trajectory: Any) -> None:
    """ncb-scores: ``state["ncb"]`` for a variant whose ``params`` has ``"solutions"`` (a
    NetConfBench task), from the observation's initial and final configurations, the
    trajectory and what the faults wrote (:func:`ani.netconfbench.scoring.score_run`); never fails the run (a scoring
    error is said in a ``harness`` event ``ncb_scores_failed``)."""
    params = getattr(variant, "params", None)
    if not isinstance(params, dict) or "solutions" not in params:
        return
    from ani.campaign.observe_run import fault_lines
    from ani.netconfbench.scoring import score_run

    obs = state["observation"]
    try:
        state["ncb"] = score_run(params, obs.initial, obs.final_configs(), list(trajectory.events),
                                 fault_lines(list(state.get("faults") or [])),
                                 agent_config=state.get("agent_config"), summary=state.get("reasoning_summary"))
    except Exception as exc:  # noqa: BLE001 - diagnostic scores never fail a run
        trajectory.log("ncb_scores_failed", kind="harness", reason=_err(exc))


def _superseded(scenario: Any, variant: Any) -> tuple[list[Any], list[Any]]:
    """``(baseline invariants that stay, those the variant supersedes)``, both in the
    scenario's order; a superseded name the scenario does not have is ignored."""
    names = set(getattr(variant, "superseded", None) or ())
    invariants = list(scenario.invariants)
    if not names:
        return invariants, []
    gone = [c for c in invariants if getattr(c, "name", None) in names]
    return [c for c in invariants if all(c is not g for g in gone)], gone


def _host_faults(state: dict[str, Any], trajectory: Trajectory, lab: Any, mark: int) -> bool:
    """Collect the run's host faults (see the module doc); if there are any, make the run an
    infrastructure error naming each cause once and return True."""
    causes = list(state.get("host_faults", []))
    for ev in trajectory.events:
        if ev.get("event") == "harness_fault":
            causes.append(f"{ev.get('tool')}: {ev.get('cause')}")
    causes += faults_since(mark)
    own = getattr(lab, "harness_faults", None)
    if callable(own):
        try:
            causes += [str(c) for c in own()]
        except Exception as exc:  # noqa: BLE001 - the lab cannot even say: that is a fault too
            causes.append(f"lab: {_err(exc)}")
    # a cause is said once: an adapter's "tool: X is missing" covers the journal's "X is missing"
    uniq: list[str] = []
    for c in causes:
        if c not in uniq and not any(u.endswith(": " + c) for u in uniq):
            uniq = [u for u in uniq if not c.endswith(": " + u)] + [c]
    if not uniq:
        return False
    state["infra_error_reason"] = "host fault during the run: " + "; ".join(uniq)
    return True


def _dead_daemons(lab: Any) -> str:
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


def _record(
    info: dict[str, Any], state: dict[str, Any], started: datetime, t_start: float
) -> RunRecord:
    trajectory = state.get("trajectory")
    calls: list[dict[str, Any]] = trajectory.calls if trajectory is not None else []
    reason = state.get("infra_error_reason")
    if reason is None and state.get("success") is None:
        reason = "run did not complete"  # defensive: every run ends in exactly one state
    label = INFRA if reason is not None else label_for(state["success"], state["damage_free"])
    if label == INFRA and state.get("env_invalid"):  # faults (issue 14)
        label = ENV_INVALID
    agent_error = state.get("agent_error")
    if state.get("close_error"):
        agent_error = (
            agent_error + "; " if agent_error else ""
        ) + f"adapter close: {state['close_error']}"
    return RunRecord(
        **info,
        label=label,
        success=None if label in INVALID_LABELS else state["success"],
        damage_free=None if label in INVALID_LABELS else state["damage_free"],
        infra_error_reason=reason,
        agent_error=agent_error,
        tests=state.get("tests", []),
        invariants=state.get("invariants", []),
        steps=_as_steps(state.get("steps")),
        tool_calls=len(calls),
        tool_errors=sum(1 for c in calls if c.get("ok") is False),
        changed_calls=sum(1 for c in calls if c.get("changed") is True),
        stop_reason=state.get("stop_reason"),
        wall_s=round(time.monotonic() - t_start, 3),
        started=started,
        ended=_now(),
        teardown_error=state.get("teardown_error"),
        unattributed=state.get("unattributed"),
        process=_process(info, state, label),
        faults=state.get("faults", []),  # faults (issue 14)
        **(state["observation"].fields() if state.get("observation") is not None and label not in INVALID_LABELS else {}),  # observer-run
        **_outcome_fields(state, calls),  # cases-tools
        **_ncb_fields(state, label),  # ncb-scores
    )


def _ncb_fields(state: dict[str, Any], label: str) -> dict[str, Any]:
    """ncb-scores: ``testcase_score`` / ``task_pass`` of a graded run (any task class), and
    ``ncb`` of a NetConfBench one."""
    if label in INVALID_LABELS:
        return {}
    from ani.netconfbench.scoring import task_pass, testcase_score

    tests = state.get("tests") or []
    return {"testcase_score": testcase_score(tests), "task_pass": task_pass(tests), "ncb": state.get("ncb")}


def _outcome_fields(state: dict[str, Any], calls: list[dict[str, Any]]) -> dict[str, Any]:
    """cases-tools: the record's measured outcomes (``invalid_calls`` counted from the
    trajectory even when the agent never ran to the measurement)."""
    out = state.get("outcomes")
    if out is None:
        return {"invalid_calls": invalid_calls(calls)}
    return {"invalid_calls": out.invalid_calls, "double_applied": list(out.double_applied),
            "locks_left": list(out.locks_left), "partial": list(out.partial)}


def _process(info: dict[str, Any], state: dict[str, Any], label: str) -> Any:
    """The run's process metrics; None if the agent never ran (the lab, the baseline or the
    adapter's open failed): such a run has no turns and no completion mode to report."""
    trajectory = state.get("trajectory")
    if trajectory is None or not state.get("agent_ran"):
        return None
    submitted = state.get("submitted")
    return compute_metrics(
        trajectory.events,
        str(info.get("level", "")),
        stop_reason=state.get("stop_reason"),
        submitted=submitted if isinstance(submitted, bool) else None,
        success=None if label in INVALID_LABELS else state.get("success"),
        tools=state.get("tools"),
        prompt_tokens=state.get("prompt_tokens"),
        completion_tokens=state.get("completion_tokens"),
    )
