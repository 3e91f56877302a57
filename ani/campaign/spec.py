"""The campaign file: one scenario, one task class, S variants, one agent, one budget, cells.

    name: level-sweep
    scenario: scenarios/brownfield-small.yaml   # relative to this file, or a shipped data file
    task: onboard-site
    variants: 3            # S: seeds seed .. seed+S-1
    seed: 1
    factor: level          # the one factor varied across cells
    agent: {kind: scripted}
    budget: {max_steps: 40, wall_clock_s: 300}
    cells:
      - {name: a0, level: a0}
      - {name: a1, level: a1}
      - {name: a1+blocklist, level: a1, blocklist: true}

A generated brownfield instead of a scenario file, the task class as the factor, and a swept
stress parameter::

    name: task-classes
    manifest: ../scenarios/default.yaml  # generated: ani.scenario.generate.generate_scenario
    scenario_seed: 7                     # the seed of the generated scenario (not of the variants)
    density: 2                           # instances per service class (default: the manifest's)
    level: a1                            # default level of the cells
    factor: task                         # level | blocklist | task | density
    cells:
      - {name: onboard-site, task: onboard-site}
      - {name: change-set, task: change-set}
    stress: {density: [2, 4, 8]}         # every cell at every value, paired by variant seed

The factor is what differs between cells (``level`` also lets the blocklist ablation differ);
every other setting of the cells must agree. A ``stress`` parameter (``density`` or ``task``)
is swept over its values: the plan is seeds x stress values x cells, seed-major, so the same
variant seeds meet every cell at every value (:meth:`CampaignSpec.points`). A cell's setting
is, first to last: the stress value, the cell's own field, the campaign's field.

:func:`load_spec` validates it and raises :class:`~ani.errors.CampaignSpecError`
naming the file and the bad field (``cells[2](x).task: unknown task class 'y'; known: ...``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from ani.agents.base import Budget
from ani.errors import CampaignSpecError
from ani.validation import load_yaml, validate_mapping

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
FACTORS = ("level", "blocklist", "task", "density")
#: the parameters a ``stress:`` block may sweep
STRESS_PARAMS = ("density", "task")
#: the cell settings, in the order the design check names them
SETTINGS = ("level", "blocklist", "task", "density")
NO_SCENARIO = "scenario: Field required (a scenario file; or manifest: to generate one)"


def safe_component(text: str) -> str:
    """``text`` reduced to ``[A-Za-z0-9._-]`` (other runs of characters become ``_``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "_"


class CellSpec(BaseModel):
    """One setting of the factor under study.

    Attributes:
        name: unique in the campaign; ``[A-Za-z0-9._+-]``, at most 64 characters.
        level: adapter name (``a0``, ``a1``, ... or a registered third-party adapter); None:
            the campaign's ``level`` (set by :func:`parse_spec`; one of the two is required).
        blocklist: the blocklist ablation: False, True (the platform default) or a YAML path.
        task: task class of this cell (None: the campaign's ``task``).
        density: density of the generated scenario in this cell (instances per service class;
            None: the campaign's ``density``, else the manifest's).
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    level: str | None = None
    blocklist: bool | str = False
    task: str | None = Field(None, min_length=1)
    density: int | None = Field(None, ge=0)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError(f"cell name {v!r} must match {NAME_RE.pattern}")
        return v

    @field_validator("level")
    @classmethod
    def _level(cls, v: str | None) -> str | None:
        return None if v is None else _known_level(v)


def _known_level(v: str) -> str:
    """``v`` (stripped, lower case) if it names an available adapter; ValueError otherwise."""
    from ani.registry import available

    v = v.strip().lower()
    known = available()
    if v not in known:
        raise ValueError(f"unknown level {v!r}; known: {', '.join(known)}")
    return v


class RunPoint(NamedTuple):
    """One run of the plan: variant ``seed`` in cell ``cell`` (a name) at stress value ``stress``
    (``{"density": 4}``; ``{}`` without a stress block)."""

    seed: int
    cell: str
    stress: dict[str, Any]


# --- faults (issue 14, faults-core) ---------------------------------------------------------
class FaultsSpec(BaseModel):
    """The campaign's ``faults:`` block: how the fault schedule of each variant is drawn
    (:func:`ani.faults.schedule.draw_schedule`; the rate is ``fault_rate``).

    Attributes:
        kinds: fault kinds to draw from (``ani.faults.fault_kinds()`` lists them); None: every
            registered kind this host can do (a kind that is unavailable here, e.g. ``latency``
            without netem, is left out, and a campaign naming one is refused before any lab).
        duration_s: ``[lo, hi]``: each fault stays a uniform draw of seconds in this range.
        horizon_steps: fault points are drawn below this many agent steps.
    """

    model_config = ConfigDict(extra="forbid")

    kinds: list[str] | None = None
    duration_s: tuple[float, float] = (3.0, 8.0)
    horizon_steps: int = Field(20, ge=1, le=10_000)

    @field_validator("kinds")
    @classmethod
    def _kinds(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return None
        from ani.faults import fault_kinds

        known = fault_kinds()
        bad = [k for k in v if k not in known]
        if bad:
            raise ValueError(f"unknown fault kind {bad[0]!r}; known: {', '.join(known)}")
        if not v:
            raise ValueError("give at least one kind (or null: every kind this host can do)")
        return list(dict.fromkeys(v))

    @field_validator("duration_s")
    @classmethod
    def _duration(cls, v: tuple[float, float]) -> tuple[float, float]:
        if not 0 < v[0] <= v[1]:
            raise ValueError(f"[lo, hi] seconds with 0 < lo <= hi, got {list(v)}")
        return v


class CampaignSpec(BaseModel):
    """A validated campaign file (see the module docstring for the shape).

    Attributes:
        name: campaign name (used in the results folder name).
        scenario: scenario path as written in the file (exactly one of ``scenario`` and
            ``manifest``).
        scenario_path: the resolved absolute path (set by :func:`load_spec`).
        manifest: a scenario manifest, as written; the brownfield is generated from it
            (``ani.scenario.generate.generate_scenario(manifest, seed=scenario_seed,
            density=...)``) once per density the campaign uses.
        manifest_path: the resolved absolute path (set by :func:`load_spec`).
        scenario_seed: seed of the generated scenario (default 1); only with ``manifest``.
        density: density of the generated scenario (instances per service class; None: the
            manifest's); only with ``manifest``.
        task: task class name, e.g. ``onboard-site`` (may be omitted when every cell, or the
            stress block, names the task).
        level: default level of the cells that name none.
        variants: S, the number of seeds (>= 1).
        seed: first seed; the seeds are ``seed .. seed + S - 1``.
        factor: the factor varied across cells (``level``, ``blocklist``, ``task``, ``density``).
        stress: at most one swept stress parameter and its values, e.g. ``{"density": [2, 4, 8]}``.
        agent: agent config passed to ``ani.agents.create_agent`` (must have ``kind``).
        budget: :class:`ani.agents.base.Budget` (max_steps = tool calls, wall_clock_s, max_tokens).
        cells: at least one :class:`CellSpec`; the first is the reference for paired tests.
        observer_bound_s: bound of the observer's retry loop per check, seconds (None: its default).
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    scenario: str | None = None
    scenario_path: str | None = None
    manifest: str | None = None
    manifest_path: str | None = None
    scenario_seed: int | None = Field(None, ge=0)
    density: int | None = Field(None, ge=0)
    task: str | None = Field(None, min_length=1)
    level: str | None = None
    variants: int = Field(3, ge=1, le=10_000)
    seed: int = Field(1, ge=0)
    factor: str = "level"
    stress: dict[str, list[Any]] = Field(default_factory=dict)
    agent: dict[str, Any] = Field(default_factory=lambda: {"kind": "scripted"})
    budget: Budget = Field(default_factory=Budget)
    cells: list[CellSpec] = Field(min_length=1)
    observer_bound_s: float | None = Field(None, gt=0)
    _source: str = PrivateAttr(default="<campaign>")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError(f"campaign name {v!r} must match {NAME_RE.pattern}")
        return v

    @field_validator("level")
    @classmethod
    def _level(cls, v: str | None) -> str | None:
        return None if v is None else _known_level(v)

    @field_validator("factor")
    @classmethod
    def _factor(cls, v: str) -> str:
        if v not in FACTORS:
            raise ValueError(f"factor {v!r} is not supported; supported: {', '.join(FACTORS)}")
        return v

    @field_validator("stress")
    @classmethod
    def _stress(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        if len(v) > 1:
            raise ValueError(f"one stress parameter per campaign, got {len(v)}: {', '.join(v)}")
        for key, values in v.items():
            if key not in STRESS_PARAMS:
                raise ValueError(f"{key!r} cannot be swept; stress parameters: {', '.join(STRESS_PARAMS)}")
            if not values:
                raise ValueError(f"{key}: give at least one value")
            if len(set(map(str, values))) != len(values):
                raise ValueError(f"{key}: a value is given twice")
            for i, x in enumerate(values):
                if key == "density" and (not isinstance(x, int) or isinstance(x, bool) or x < 0):
                    raise ValueError(f"{key}.{i}: a density is an int >= 0, got {x!r}")
                if key == "task" and (not isinstance(x, str) or not x):
                    raise ValueError(f"{key}.{i}: a task class name, got {x!r}")
        return v

    @field_validator("agent")
    @classmethod
    def _agent(cls, v: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(v.get("kind"), str) or not v["kind"]:
            raise ValueError("agent needs a 'kind' (e.g. {kind: scripted})")
        return v

    @model_validator(mode="after")
    def _cells_unique(self) -> CampaignSpec:
        seen: dict[str, str] = {}
        for c in self.cells:
            key = safe_component(c.name)
            if key in seen:
                raise ValueError(
                    f"cells {seen[key]!r} and {c.name!r} have the same name (run ids would collide)"
                )
            seen[key] = c.name
        return self

    @property
    def seeds(self) -> list[int]:
        """``[seed, seed + 1, ..., seed + variants - 1]``."""
        return list(range(self.seed, self.seed + self.variants))

    @property
    def stress_param(self) -> str | None:
        """The swept stress parameter (``density``, ``task``) or None."""
        return next(iter(self.stress), None)

    @property
    def stress_points(self) -> list[dict[str, Any]]:
        """``[{"density": 2}, {"density": 4}, ...]``; ``[{}]`` without a stress block."""
        key = self.stress_param
        return [{key: v} for v in self.stress[key]] if key else [{}]

    def points(self) -> list[RunPoint]:
        """The runs in order: seed-major, then stress value, then cell, so an interrupted
        campaign holds complete pairs (every cell at every value for the seeds it finished)."""
        return [
            RunPoint(seed, cell.name, dict(point))
            for seed in self.seeds
            for point in self.stress_points
            for cell in self.cells
        ]

    def cell(self, name: str) -> CellSpec:
        """The cell called ``name``; raises CampaignSpecError listing the cell names."""
        for c in self.cells:
            if c.name == name:
                return c
        raise CampaignSpecError(
            f"no cell {name!r} in campaign {self.name!r}; cells: {', '.join(c.name for c in self.cells)}"
        )

    def task_of(self, cell: CellSpec | str, stress: dict[str, Any] | None = None) -> str:
        """The task class of ``cell`` at ``stress``: the stress value, the cell's, the campaign's."""
        c = self.cell(cell) if isinstance(cell, str) else cell
        task = (stress or {}).get("task") or c.task or self.task
        if not task:
            raise CampaignSpecError(f"campaign {self.name!r}: cell {c.name!r} has no task class")
        return str(task)

    def density_of(self, cell: CellSpec | str, stress: dict[str, Any] | None = None) -> int | None:
        """The density asked for ``cell`` at ``stress`` (None: the manifest's own, or a scenario file)."""
        c = self.cell(cell) if isinstance(cell, str) else cell
        for value in ((stress or {}).get("density"), c.density, self.density):
            if value is not None:
                return int(value)
        return None

    @property
    def source(self) -> str:
        """The file (or ``command line``) the spec was read from, for messages."""
        return self._source

    def task_field(self, cell: CellSpec | str, stress: dict[str, Any] | None = None) -> str:
        """Where the task class of ``cell`` at ``stress`` is written: ``stress.task[1]``,
        ``cells[2](x).task`` or ``task``."""
        c = self.cell(cell) if isinstance(cell, str) else cell
        if (stress or {}).get("task"):
            return f"stress.task[{self.stress['task'].index(stress['task'])}]"  # type: ignore[index]
        if c.task:
            return f"cells[{self.cells.index(c)}]({c.name}).task"
        return "task"

    def run_id(self, cell: CellSpec | str, seed: int, stress: dict[str, Any] | None = None) -> str:
        """The run id of ``cell`` / ``seed`` / ``stress`` (:func:`run_id`)."""
        name = cell if isinstance(cell, str) else cell.name
        return run_id(name, self.task_of(cell, stress), seed, stress)

    # --- faults (issue 14, faults-core) -----------------------------------------------------
    #: faults per agent step (lambda of the schedule's Poisson process); 0: no faults. A
    #: ``stress: {fault_rate: [...]}`` value overrides it (:meth:`fault_rate_of`).
    fault_rate: float = Field(0.0, ge=0, le=100)
    faults: FaultsSpec = Field(default_factory=FaultsSpec)

    def fault_rate_of(self, cell: CellSpec | str, stress: dict[str, Any] | None = None) -> float:
        """The fault rate of ``cell`` at ``stress`` (faults per agent step): the stress value,
        else the campaign's ``fault_rate``. The same for every cell at one stress value: the
        schedule is part of the variant, never of the level."""
        self.cell(cell) if isinstance(cell, str) else cell  # an unknown cell name raises
        value = (stress or {}).get("fault_rate")
        return float(self.fault_rate if value is None else value)


def _design_errors(spec: CampaignSpec) -> list[str]:
    """What is wrong with the campaign's design (fields are fine one by one): one message each,
    naming the field."""
    errors: list[str] = []
    if spec.scenario is None and spec.manifest is None:
        errors.append(NO_SCENARIO)
    elif spec.scenario is not None and spec.manifest is not None:
        errors.append("manifest: give scenario: (a scenario file) or manifest: (generated), not both")
    if spec.manifest is None:
        if spec.scenario_seed is not None:
            errors.append("scenario_seed: only with manifest: (a scenario file is not generated)")
        used = [("density", spec.density)] + [
            (f"cells[{i}]({c.name}).density", c.density) for i, c in enumerate(spec.cells)
        ]
        errors += [
            f"{where}: only with manifest: (a scenario file's density is fixed)"
            for where, v in used
            if v is not None
        ]
        if spec.stress_param == "density":
            errors.append("stress.density: only with manifest: (a scenario file's density is fixed)")
    for i, c in enumerate(spec.cells):
        if c.level is None and spec.level is None:
            errors.append(f"cells[{i}]({c.name}).level: Field required (or give the campaign a level:)")
        if c.task is None and spec.task is None and spec.stress_param != "task":
            errors.append(f"cells[{i}]({c.name}).task: Field required (or give the campaign a task:)")
    if errors:
        return errors
    key = spec.stress_param
    factor = spec.factor
    if key is not None and key == factor:
        errors.append(f"stress.{key}: {key} is the factor; sweep another parameter or change the factor")
    varied = {"level": ("level", "blocklist")}.get(factor, (factor,))
    for i, c in enumerate(spec.cells):
        if key is not None and getattr(c, key) is not None:
            errors.append(f"cells[{i}]({c.name}).{key}: {key} is swept by stress:; a cell cannot fix it")
    ref = spec.cells[0]
    for i, c in enumerate(spec.cells[1:], 1):
        for setting in SETTINGS:
            if setting in varied or setting == key:
                continue
            if _setting(spec, ref, setting) != _setting(spec, c, setting):
                errors.append(
                    f"cells[{i}]({c.name}).{setting}: differs from cell {ref.name!r} but the factor is "
                    f"{factor!r} (a campaign varies one factor; cells must agree on the rest)"
                )
    settings = [tuple(_setting(spec, c, s) for s in SETTINGS) for c in spec.cells]
    if not errors and len(set(settings)) != len(settings):
        what = " and ".join(varied)
        errors.append(f"cells: two cells have the same {what} (nothing varies between them)")
    return errors


def _setting(spec: CampaignSpec, cell: CellSpec, setting: str) -> Any:
    """The effective value of one cell setting (campaign defaults filled in)."""
    if setting == "level":
        return cell.level or spec.level
    if setting == "task":
        return cell.task or spec.task
    if setting == "density":
        return spec.density_of(cell)
    return getattr(cell, setting)


def run_id(cell: str, task: str, seed: int, stress: dict[str, Any] | None = None) -> str:
    """Filesystem-safe run id ``<cell>-<task>-s<seed>`` (e.g. ``a1_blocklist-onboard-site-s2``);
    with a swept stress value other than the task, ``<cell>-<task>-<param><value>-s<seed>``
    (``a1-onboard-site-density4-s2``)."""
    extra = "".join(
        f"-{safe_component(k)}{safe_component(str(v))}" for k, v in (stress or {}).items() if k != "task"
    )
    return f"{safe_component(cell)}-{safe_component(task)}{extra}-s{int(seed)}"


def _format_loc(loc: tuple[Any, ...], data: Any) -> str:
    parts: list[str] = []
    node = data
    for item in loc:
        if isinstance(item, int):
            name = None
            if isinstance(node, list) and 0 <= item < len(node) and isinstance(node[item], dict):
                name = node[item].get("name")
            parts.append(f"[{item}]" + (f"({name})" if name else ""))
            node = node[item] if isinstance(node, list) and 0 <= item < len(node) else None
        else:
            parts.append(("." if parts else "") + str(item))
            node = node.get(item) if isinstance(node, dict) else None
    return "".join(parts)


def resolve_path(value: str, base_dir: Path | None, field: str | None = None) -> Path:
    """``value`` relative to ``base_dir`` if that file exists, else as given, else a shipped data file.

    Raises CampaignSpecError if none exists: one line that starts with ``field`` (the key that
    named the file, e.g. ``scenario`` or ``cells[1](a1).blocklist``) and says where it looked.
    """
    from ani.resources import resolve

    p = Path(value).expanduser()
    if not p.is_absolute() and base_dir is not None and (base_dir / p).exists():
        return (base_dir / p).resolve()
    try:
        return resolve(p).resolve()
    except FileNotFoundError:
        cwd = Path.cwd().resolve()
        if p.is_absolute():
            where = "it does not exist"
        elif base_dir is None or Path(base_dir).resolve() == cwd:
            where = f"looked in the current folder {cwd} and in the shipped data"
        else:
            where = f"looked in {base_dir}, in the current folder {cwd} and in the shipped data"
        prefix = f"{field}: " if field else ""
        raise CampaignSpecError(f"{prefix}file {value!r} not found ({where})") from None


def parse_spec(data: Any, source: str = "<campaign>", base_dir: Path | None = None) -> CampaignSpec:
    """Validate a campaign mapping (already parsed YAML) and resolve its paths.

    Raises CampaignSpecError naming ``source`` and the bad field.
    """
    try:
        spec = validate_mapping(
            CampaignSpec, data, source=source, what="campaign", error=CampaignSpecError,
            top="(top level)", format_loc=lambda loc: _format_loc(loc, data),
        )
    except CampaignSpecError as exc:
        if isinstance(data, dict) and "scenario" not in data and "manifest" not in data:
            raise CampaignSpecError(f"{exc}; {NO_SCENARIO}") from None  # said with the others
        raise
    spec._source = source
    errors = _design_errors(spec)
    if errors:
        raise CampaignSpecError(f"{source}: invalid campaign: {'; '.join(errors)}")
    for c in spec.cells:
        c.level = c.level or spec.level
    try:
        if spec.scenario is not None:
            spec.scenario_path = str(resolve_path(spec.scenario, base_dir, "scenario"))
        if spec.manifest is not None:
            spec.manifest_path = str(resolve_path(spec.manifest, base_dir, "manifest"))
            if spec.scenario_seed is None:
                spec.scenario_seed = 1
        for i, c in enumerate(spec.cells):
            if isinstance(c.blocklist, str):
                field = f"cells[{i}]({c.name}).blocklist"
                c.blocklist = str(resolve_path(c.blocklist, base_dir, field))
    except CampaignSpecError as exc:
        raise CampaignSpecError(f"{source}: {exc}") from None
    return spec


def load_spec(path: str | Path, variants: int | None = None) -> CampaignSpec:
    """Read and validate a campaign YAML file.

    Args:
        path: the file, or the name of a shipped campaign (``campaigns/level-sweep.yaml``).
        variants: override of ``variants`` (S), e.g. from ``--variants``.

    Raises:
        CampaignSpecError: missing file, bad YAML, or a bad field (the message names it).
    """
    from ani.resources import resolve

    try:
        p = resolve(path).resolve()
    except FileNotFoundError:
        raise CampaignSpecError(f"campaign file {str(path)!r} not found") from None
    data = load_yaml(p, CampaignSpecError)
    if variants is not None and isinstance(data, dict):
        data = {**data, "variants": variants}
    return parse_spec(data, str(path), p.parent)
