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

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ani.agents.base import BudgetExceeded
from ani.campaign.metrics import compute_metrics
from ani.campaign.outcomes import Outcomes, invalid_calls
from ani.campaign.outcomes import measure as measure_outcomes
from ani.campaign.results import ENV_INVALID, INFRA, INVALID_LABELS, CheckOutcome, RunRecord, label_for
from ani.campaign.run_support import EventHook
from ani.campaign.spec import CampaignSpec, CellSpec, agent_mode_of
from ani.errors import CapabilityMissing, ConfigError, HostFault

# the wait before grading lives with the scenario (NetConfBench's task check uses it too); its
# names stay importable here
from ani.scenario.settle import FRR_ROUTE_MAP_DELAY_S, PROPAGATION_S, route_map_delay_s, settle_seconds  # noqa: F401


# --- dependencies (real ones imported lazily) ------------------------------------------------------


def real_make_lab(topology: Any, prefix: str | None = None, netconf: bool = True, ssh: bool = True) -> Any:
    """The default :attr:`RunnerDeps.make_lab`: a namespace :class:`~ani.lab.lab.Lab` of
    ``topology`` (not started), its name carrying ``prefix``, starting its NETCONF / SSH server
    only with ``netconf`` / ``ssh`` (:func:`ani.campaign.execute.lab_options` passes the three to a
    factory that names them: the run's level and fault kinds decide, :func:`~ani.campaign.execute.lab_servers`)."""
    try:
        from ani.lab import Lab  # type: ignore[attr-defined]
    except ImportError:
        from ani.lab.lab import Lab
    return Lab(topology, prefix=prefix, netconf=netconf, ssh=ssh)


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


def _real_make_observer(lab: Lab) -> Any:
    from ani.observer import Observer  # type: ignore[attr-defined]

    return Observer(lab)


def _real_create_adapter(name: str, lab: Lab, **kwargs: Any) -> Any:
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
        make_lab: ``Topology -> Lab`` (not started; the runner calls ``up()`` and ``down()``);
            a factory whose signature names ``prefix``, ``netconf`` or ``ssh`` gets them too
            (:func:`ani.campaign.execute.lab_options`).
        load_scenario: ``path -> Scenario``.
        generate_scenario: ``(manifest path, seed=, density=) -> Scenario`` (hash set):
            :func:`ani.scenario.generate.generate_scenario`.
        render_scenario: ``(manifest path, seed=, density=) -> scenario-file YAML text`` (the
            copy a results folder keeps; None: keep none).
        get_task_class: ``name -> task class`` with ``.variant(scenario, seed)``.
        make_observer: ``Lab -> Observer``: a
            :class:`~ani.campaign.run_support.GradingObserver` (``.evaluate(checks, bound_s=...)``,
            ``.on_negatives``).
        create_adapter: ``(level, lab, blocklist=, trajectory=[, options=]) -> Adapter``
            (``options`` only for a cell with ``options``).
        create_agent: ``agent config dict -> Agent``.
        check_host: ``(levels, FRR daemons) -> {level: [Finding]}`` of the levels that cannot
            run on this machine (:func:`ani.host.checks.unfit`); used only with the real lab
            factory or when replaced.
    """

    make_lab: Callable[[Any], Any] = real_make_lab
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

    def held(self, manifest: str | Path, seed: int, density: int | None) -> Any:
        """The scenario :meth:`generated` made for these arguments in this deps object, or None."""
        return self._scenarios.get(f"{manifest}\0{seed}\0{density}")

    def generated(self, manifest: str | Path, seed: int, density: int | None) -> Any:
        """The scenario generated from ``manifest`` with ``seed`` at ``density``, generated once
        per deps object. Raises GeneratorError / TopologyError (a bad manifest)."""
        key = f"{manifest}\0{seed}\0{density}"
        if key not in self._scenarios:
            self._scenarios[key] = self.generate_scenario(manifest, seed=seed, density=density)
        return self._scenarios[key]


# --- helpers -----------------------------------------------------------------------------------------


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
    if deps.check_host is _real_check_host and deps.make_lab is not real_make_lab:
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
    from ani.agents.plugins import plugin_folders

    warnings: list[str] = []
    configs = {_frozen(config): config for config in map(spec.agent_of, spec.cells)}
    for config in configs.values():  # each distinct agent once (a model factor: each endpoint)
        with plugin_folders(spec.agent_folders):
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
    from ani.agents.plugins import plugin_folders

    configs = [spec.agent_of(c) for c in spec.cells]
    one = len({_frozen(c) for c in configs}) == 1
    for i, (cell, config) in enumerate(zip(spec.cells, configs, strict=True)):
        if i and one:
            break
        try:
            with plugin_folders(spec.agent_folders):  # a module:factory kind: the campaign's folders
                deps.create_agent(dict(config))
        except ConfigError as exc:
            if one:
                raise
            raise type(exc)(f"{spec.source}: cells[{i}]({cell.name}): {exc}") from None


from ani.campaign.run_record import cost_of  # noqa: E402,F401 - moved; kept importable here


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
    from ani.campaign.execute import execute
    from ani.campaign.planning import plan_run

    deps = deps or RunnerDeps()
    plan = plan_run(spec, cell, seed, stress, deps)
    return execute(plan, out_dir, deps=deps, on_event=on_event)
