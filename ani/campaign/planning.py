"""Plan a campaign: every run of a :class:`~ani.campaign.spec.CampaignSpec` as a
:class:`~ani.campaign.plan.RunPlan`, in the campaign's order (:func:`plan_campaign`).

Planning resolves what a run would otherwise look up in the spec: the cell's level, options and
agent, the task class and form, the density, the scenario (the copy the results folder keeps,
with its hash) and the fault schedule (drawn here from the seed and the spec only, so it is the
same on every host and in every executor).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ani.agents.plugins import is_plugin
from ani.campaign.plan import RunPlan, ScenarioRef, jsonable
from ani.campaign.spec import CampaignSpec, CellSpec, safe_component


def scenario_files(spec: CampaignSpec, deps: Any, out_dir: Path | None) -> dict[int | None, str]:
    """``{density: path}`` of the scenario files the folder keeps: a generated scenario's copy
    per density (:func:`ani.campaign.loop.write_generated`'s names), or a hand-written scenario
    file copied to ``scenarios/<name>`` (key None); paths relative to ``out_dir``. Empty without
    ``out_dir`` or when nothing was kept (then a plan regenerates or names the original file)."""
    if out_dir is None or spec.tasks is not None:
        return {}
    if spec.manifest_path is None:
        src = Path(spec.scenario_path or "")
        if not src.is_file():
            return {}
        rel = f"scenarios/{safe_component(src.name) or 'scenario.yaml'}"
        dest = out_dir / rel
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
        return {None: rel}
    from ani.campaign.loop import generated_name
    from ani.campaign.runner import design_points, scenario_for

    out: dict[int | None, str] = {}
    for density in dict.fromkeys(spec.density_of(c, p) for c, p in design_points(spec)):
        rel = f"scenarios/{generated_name(spec, scenario_for(spec, deps, density), density)}.yaml"
        if (out_dir / rel).is_file():
            out[density] = rel
    return out


def scenario_ref(spec: CampaignSpec, scenario: Any, density: int | None, files: dict[int | None, str]) -> ScenarioRef:
    """Where the run's scenario comes from (:class:`ScenarioRef`), with its hash."""
    digest = str(getattr(scenario, "hash", "") or "") or None
    if spec.tasks is not None:
        return ScenarioRef(tasks=tuple(spec.tasks_paths or ()))
    key = density if spec.manifest_path is not None else None
    if spec.manifest_path is not None:
        return ScenarioRef(file=files.get(key), manifest=spec.manifest_path, seed=int(spec.scenario_seed or 0),
                           density=density, hash=digest)
    if key in files:
        return ScenarioRef(file=files[key], hash=digest)
    return ScenarioRef(file=str(spec.scenario_path), hash=digest)


def plan_run(spec: CampaignSpec, cell: CellSpec | str, seed: int, stress: dict[str, Any] | None,
             deps: Any, *, files: dict[int | None, str] | None = None, lab_prefix: str | None = None) -> RunPlan:
    """The plan of one run: variant ``seed`` of ``cell`` at ``stress``.

    Raises ConfigError: the scenario or task cannot be loaded (as :func:`ani.campaign.runner.prepare`)."""
    from ani.campaign.runner import prepare, scenario_density, variant_of
    from ani.faults.campaign import schedule_for

    cell = spec.cell(cell) if isinstance(cell, str) else cell
    stress = dict(stress or {})
    scenario, task_class = prepare(spec, deps, cell, stress)
    density = spec.density_of(cell, stress)
    from ani.campaign.runner import run_scenario

    variant = variant_of(task_class, scenario, seed, spec.form_of(cell))  # faults are drawn on it
    schedule = schedule_for(spec, cell, stress, run_scenario(scenario, variant), variant, seed)
    faults = getattr(spec, "faults", None)
    agent = spec.agent_of(cell)
    return RunPlan(
        run_id=spec.run_id(cell, seed, stress), campaign=spec.name, cell=cell.name, level=str(cell.level),
        blocklist=cell.blocklist, adapter_options=jsonable(dict(cell.options)), task=spec.task_of(cell, stress),
        form=spec.form_of(cell), seed=int(seed), stress=jsonable(stress),
        density=scenario_density(scenario, density) if spec.tasks is None else density,
        scenario=scenario_ref(spec, scenario, density, files or {}),
        fault_rate=spec.fault_rate_of(cell, stress), faults=tuple(f.to_dict() for f in schedule),
        fault_hold=bool(getattr(faults, "hold", False)), agent=jsonable(agent),
        agent_folders=spec.agent_folders if is_plugin(str(agent.get("kind", ""))) else (),
        budget=jsonable(spec.budget), observer_bound_s=spec.observer_bound_s,
        reasoning_summary=jsonable(spec.reasoning_summary) if spec.reasoning_summary is not None else None,
        lab_prefix=lab_prefix,
    )


def plan_campaign(spec: CampaignSpec, deps: Any, out_dir: Path | None = None, *,
                  lab_prefix: str | None = None) -> list[RunPlan]:
    """Every run of ``spec`` (:meth:`CampaignSpec.points` order: seed-major, then stress value,
    then cell), each a :class:`RunPlan`; the folder's scenario copies are referred to (and a
    hand-written scenario file copied in) when ``out_dir`` is given."""
    files = scenario_files(spec, deps, out_dir)
    return [plan_run(spec, p.cell, p.seed, p.stress, deps, files=files, lab_prefix=lab_prefix)
            for p in spec.points()]
