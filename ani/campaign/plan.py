"""A campaign plans, then executes: one :class:`RunPlan` per run, written to ``plan.jsonl``.

A plan holds everything one run needs and nothing it must look up in the campaign spec: the run
id and its factors (cell, level, blocklist, adapter options, task class and form, seed, stress
values), where its scenario is (a file in the results folder, with its hash), the fault schedule
(drawn here, once, from the seed and the spec only, so it is the same on every host), the agent
block, the budget and the observer's bound. :func:`ani.campaign.execute.execute` runs one plan
with nothing else in hand, on this machine, in a worker process or on a Dask worker.

Results folder::

    plan.jsonl     one RunPlan per line, in the campaign's order (seed-major, then stress value,
                   then cell: an interrupted campaign holds complete pairs); written before the
                   first run, read back by --resume and ``ani campaign rerun``
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ani.campaign.results import RunFactors
from ani.errors import CampaignSpecError

PLAN_FILE = "plan.jsonl"
#: the version of the plan's shape; a folder planned with another one is refused on --resume
PLAN_VERSION = 1


class ScenarioRef(BaseModel):
    """Where a run's scenario comes from: ``file``, ``manifest`` (a generated one has both: the
    folder's copy and how to make it again) or ``tasks``.

    Attributes:
        file: a scenario file: relative to the results folder (``scenarios/default-s7-d4.yaml``,
            the copy the folder keeps) or absolute (a hand-written scenario file).
        manifest / seed / density: regenerate it (used when the folder keeps no copy).
        tasks: NetConfBench task files (absolute paths): the catalogue; the run's own
            scenario is its task's.
        hash: the scenario hash (sha256 hex) the run must find; None: not known at planning.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str | None = None
    manifest: str | None = None
    seed: int | None = None
    density: int | None = None
    tasks: tuple[str, ...] | None = None
    hash: str | None = None

    @field_validator("file")
    @classmethod
    def _inside(cls, v: str | None) -> str | None:
        """A relative file stays inside the results folder (no ``..``)."""
        if v is not None and not Path(v).is_absolute() and ".." in Path(v).parts:
            raise ValueError("a scenario file relative to the results folder must stay inside it (no '..')")
        return v


class RunPlan(RunFactors):
    """One run of a campaign, resolved (frozen, JSON-serialisable: :meth:`to_line` /
    :meth:`from_line`).

    Attributes:
        run_id: ``<cell>-<task>-s<seed>[-<stress>]`` (:func:`ani.campaign.spec.run_id`).
        campaign: the campaign's name. cell: the cell's name. level: adapter name.
        blocklist: the ablation: False, True (the platform's default list) or a YAML path.
        adapter_options: the cell's adapter options (``create_adapter(..., options=)``).
        task: task class name (``netconfbench`` with task files). form: ``intent`` / ``ticket``.
        seed: the variant's seed. stress: the stress values (``{"density": 4}``; ``{}``).
        density: the density asked (None: the manifest's own, or a scenario file).
        scenario: :class:`ScenarioRef`.
        fault_rate: faults per agent step. faults: the fault schedule
            (:meth:`ani.faults.base.FaultSpec.to_dict` each). fault_hold: ``faults.hold``.
        agent: the agent config (``ani.agents.create_agent``): its kind (a registered name or
            a plug-in ``module:factory``) and options. budget: ``Budget`` fields.
        agent_folders: where a plug-in agent's module is looked up after the worker's import
            path (absolute folders: the campaign file's, the current one at planning; empty for
            a registered kind). On a Dask worker on another machine the module must be
            importable there (installed, or at the same path).
        observer_bound_s: the observer's retry bound per check, seconds (None: its default).
        reasoning_summary: NetConfBench's reasoning summariser config (dict) or None.
        lab_prefix: what the run's lab carries so its owner finds it (``ani lab status``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = PLAN_VERSION
    form: str = "intent"
    seed: int
    stress: dict[str, Any] = Field(default_factory=dict)
    density: int | None = None
    scenario: ScenarioRef
    fault_rate: float = 0.0
    faults: tuple[dict[str, Any], ...] = ()
    fault_hold: bool = False
    agent: dict[str, Any] = Field(default_factory=lambda: {"kind": "scripted"})
    agent_folders: tuple[str, ...] = ()
    budget: dict[str, Any] = Field(default_factory=dict)
    observer_bound_s: float | None = None
    reasoning_summary: dict[str, Any] | None = None
    lab_prefix: str | None = None

    def to_line(self) -> str:
        """One JSON line (no newline), keys in field order."""
        return self.model_dump_json()

    @classmethod
    def from_line(cls, line: str) -> RunPlan:
        """Raises ValueError (pydantic's ValidationError) on a malformed line."""
        return cls.model_validate_json(line)

    def fault_schedule(self) -> list[Any]:
        """The schedule as :class:`ani.faults.base.FaultSpec` values."""
        from ani.faults.base import FaultSpec

        return [FaultSpec.from_dict(dict(f)) for f in self.faults]


def plan_hash(plans: list[RunPlan]) -> str:
    """sha256 hex of the plans' lines (what a resumed folder must still plan)."""
    h = hashlib.sha256()
    for p in plans:
        h.update(p.to_line().encode() + b"\n")
    return h.hexdigest()


def write_plans(out_dir: str | Path, plans: list[RunPlan]) -> Path:
    """Write ``out_dir/plan.jsonl`` atomically (a temporary file renamed over it). Returns its path."""
    path = Path(out_dir) / PLAN_FILE
    tmp = path.with_name(f".{PLAN_FILE}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for p in plans:
            fh.write(p.to_line() + "\n")
    os.replace(tmp, path)  # whole or absent (a kill -9 leaves the page cache's copy; planned again if absent)
    return path


def read_plans(out_dir: str | Path) -> list[RunPlan]:
    """The plans of a results folder (``plan.jsonl``), in order.

    Raises:
        CampaignSpecError: no ``plan.jsonl`` there (a folder of an older ani, or not a campaign
            folder), or a line is not a plan (its line number and the field).
    """
    path = Path(out_dir) / PLAN_FILE
    if not path.is_file():
        raise CampaignSpecError(f"{out_dir}: no {PLAN_FILE} (not a campaign results folder, or one "
                                "written before campaigns were planned)")
    plans = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            plans.append(RunPlan.from_line(line))
        except (ValidationError, ValueError) as exc:
            first = exc.errors()[0] if isinstance(exc, ValidationError) else {"loc": (), "msg": str(exc)}
            where = ".".join(str(x) for x in first.get("loc", ())) or "line"
            raise CampaignSpecError(f"{path}:{i}: not a run plan ({where}: {first.get('msg')})") from None
    return plans


def plan_by_id(plans: list[RunPlan], run_id: str) -> RunPlan:
    """The plan with ``run_id``. Raises CampaignSpecError naming a few known ids."""
    for p in plans:
        if p.run_id == run_id:
            return p
    known = ", ".join(p.run_id for p in plans[:5]) + (", ..." if len(plans) > 5 else "")
    raise CampaignSpecError(f"no run {run_id!r} in this campaign's plan (runs: {known or 'none'})")


def jsonable(value: Any) -> Any:
    """``value`` as JSON data (pydantic models dumped, tuples as lists); for plan fields."""
    if isinstance(value, BaseModel):
        return json.loads(value.model_dump_json())
    return json.loads(json.dumps(value, default=str))
