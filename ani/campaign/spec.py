# size: the campaign file's format: one model per block with its checks and error wording, the file format's single reference
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
    factor: task                         # level | blocklist | task | density | model | agent_mode
    cells:
      - {name: onboard-site, task: onboard-site}
      - {name: change-set, task: change-set}
      - {name: change-set-ticket, task: change-set, form: ticket}   # the HAI form: intent | ticket
    stress: {density: [2, 4, 8]}         # every cell at every value, paired by variant seed

NetConfBench task files instead of a scenario and a task class (:mod:`ani.netconfbench`)::

    name: ncb-levels
    tasks: ../intents/netconfbench/     # a folder (its *.json, sorted), a file, or a list of those
    factor: level
    cells:
      - {name: a1, level: a1}
      - {name: a2, level: a2}

Each task file is one variant (variant k = the k-th file, seeds 0..N-1, the same task in
every cell: paired by task); ``variants`` may take the first S of them; ``scenario``,
``manifest``, ``task``, ``form`` and ``seed`` are not given (each task brings its network,
its class is ``netconfbench``). ``reasoning_summary:`` (``off``, or ``{base_url, model,
api_key_env, ...}``; default: each run's own agent endpoint) sets how the reasoning score
summarises a multi-turn run (:class:`ani.netconfbench.reasoning_summary.SummaryConfig`).

The factor is what differs between cells (``level`` also lets the blocklist ablation differ,
``task`` the form); every other setting of the cells must agree. The stress parameters
(``density``, ``fault_rate``, ``task``) are swept over their values as a grid: the plan is
seeds x grid points x cells, seed-major, so the same variant seeds meet every cell at every
point (:meth:`CampaignSpec.points`). A cell's setting is, first to last: the stress value, the
cell's own field, the campaign's field.

A cell's agent (:meth:`CampaignSpec.agent_of`) is the campaign's ``agent:`` with the cell's
``agent:`` mapping, ``model:`` and ``agent_mode:`` (``react+recovery``) merged onto it; the
matched-budget check refuses cells whose agents differ in any key but the factor's
(:data:`AGENT_FACTOR_KEYS`: ``model`` lets ``model``, ``base_url``, ``api_key_env``, ``tool_choice`` differ,
``agent_mode`` lets ``mode``, ``recovery``), naming the cell, the key, its kind (system prompt,
caps, retry policy, observation interface, ...) and both values. ``bound: B`` instead of
``variants:`` sets S = ceil(3/B) (rule of three). ``reference: CELL`` names the cell every other
cell is compared with in the report (default: the first cell; ``ani campaign report DIR
--reference CELL`` overrides it).

:func:`load_spec` validates it and raises :class:`~ani.errors.CampaignSpecError`
naming the file and the bad field (``cells[2](x).task: unknown task class 'y'; known: ...``).
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictBool, field_validator, model_validator

from ani.agents.base import Budget
from ani.errors import CampaignSpecError, ConfigError, RegistryError
from ani.netconfbench.reasoning_summary import SummaryConfig
from ani.validation import load_yaml, validate_mapping

#: the most variants (seeds) a campaign may have
MAX_VARIANTS = 10_000
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
FACTORS = ("level", "blocklist", "task", "density", "model", "agent_mode")
#: the parameters a ``stress:`` block may sweep (several at once: a grid)
STRESS_PARAMS = ("density", "task", "fault_rate")
#: the cell settings, in the order the design check names them
SETTINGS = ("level", "blocklist", "options", "task", "form", "density")
NO_SCENARIO = "scenario: Field required (a scenario file; or manifest: to generate one) or tasks: (NetConfBench task files)"
#: the task class of a campaign with ``tasks:``
TASKS_CLASS = "netconfbench"
#: the levels a ``tasks:`` campaign (NetConfBench task files) may use
TASK_LEVELS = ("a0", "a1", "a2")
#: the agent modes of the ``agent_mode`` factor: the LLM agent's ``mode``, with or without its
#: ``recovery`` step (:mod:`ani.agents.llm`)
AGENT_MODES = tuple(f"{m}{r}" for m in ("single-turn", "react", "planner-executor") for r in ("", "+recovery"))


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
        form: HAI form of the task, ``intent`` or ``ticket`` (None: the campaign's ``form``).
        model: the agent's ``model`` in this cell (the ``model`` factor).
        agent_mode: the agent's mode in this cell, one of :data:`AGENT_MODES` (``react``,
            ``planner-executor+recovery``, ...; the ``agent_mode`` factor).
        agent: agent options merged onto the campaign's ``agent:`` block (e.g. another
            ``base_url``); the matched-budget check allows only the factor's keys to differ.
        options: the options of the cell's adapter (``create_adapter(level, lab,
            options=...)``), e.g. ``{apply_config_shape: netconfarena}`` or ``{extra_tools:
            [batch_configure_devices, check_device_status]}`` at ``a1``; checked against the
            level's options model before any lab starts (``runner.validate``). Empty: the
            level's defaults.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    level: str | None = None
    blocklist: bool | str = False
    task: str | None = Field(None, min_length=1)
    density: int | None = Field(None, ge=0)
    # --- campaign-factors: the HAI form and the cell's agent settings ---
    form: Literal["intent", "ticket"] | None = None
    model: str | None = Field(None, min_length=1)
    agent_mode: str | None = None
    agent: dict[str, Any] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("agent_mode")
    @classmethod
    def _agent_mode(cls, v: str | None) -> str | None:
        if v is not None and v not in AGENT_MODES:
            raise ValueError(f"unknown agent mode {v!r}; known: {', '.join(AGENT_MODES)}")
        return v

    @field_validator("agent")
    @classmethod
    def _agent_override(cls, v: dict[str, Any]) -> dict[str, Any]:
        bad = [k for k in v if not isinstance(k, str)]
        if bad:
            raise ValueError(f"agent option names must be strings, got {bad[0]!r}")
        return v
    # --- end campaign-factors ---

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
    from ani.registry import available, unknown_level

    v = v.strip().lower()
    known = available()
    if v not in known:
        raise ValueError(str(unknown_level(v, list(known))))
    return v


class RunPoint(NamedTuple):
    """One run of the plan: variant ``seed`` in cell ``cell`` (a name) at stress value ``stress``
    (``{"density": 4}``; ``{}`` without a stress block)."""

    seed: int
    cell: str
    stress: dict[str, Any]


# --- faults (issue 14, faults-core) ---------------------------------------------------------
def _is_number(x: Any) -> bool:
    """An int or float written as a number (YAML ``true`` is no number, though pydantic reads
    it as 1)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


FAULT_RATE_WANTED = "a fault rate is a number >= 0 (faults per agent step)"


class FaultsSpec(BaseModel):
    """The campaign's ``faults:`` block: how the fault schedule of each variant is drawn
    (:func:`ani.faults.schedule.draw_schedule`; the rate is ``fault_rate``).

    Attributes:
        kinds: fault kinds to draw from (``ani.faults.fault_kinds()`` lists them); None: every
            registered kind this host can do (a kind that is unavailable here, e.g. ``latency``
            without netem, is left out, and a campaign naming one is refused before any lab).
        duration_s: ``[lo, hi]``: each fault stays a uniform draw of seconds in this range.
        horizon_steps: fault points are drawn below this many agent steps.
        placement: ``steps`` (a point is an agent step: injected after that many tool calls)
            or ``time`` (the point ``k`` is at ``k * step_s`` seconds of the agent's time,
            whatever its step count; docs/faults.md, "Exposure").
        step_s: seconds of agent time per step point with ``placement: time`` (> 0).
        hold: every scheduled fault is injected, and runs its duration, before the agent's end
            (its submit) is accepted: the run is held open after the agent stops until then.
    """

    model_config = ConfigDict(extra="forbid")

    kinds: list[str] | None = None
    duration_s: tuple[float, float] = (3.0, 8.0)
    horizon_steps: int = Field(20, ge=1, le=10_000)
    placement: Literal["steps", "time"] = "steps"
    step_s: float = Field(2.0, gt=0, le=3600, allow_inf_nan=False)
    hold: StrictBool = False

    @field_validator("kinds")
    @classmethod
    def _kinds(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return None
        from ani.faults.base import FAULT_KINDS

        known = FAULT_KINDS.names()
        bad = [k for k in v if k not in known]
        if bad:
            raise ValueError(FAULT_KINDS.unknown_text(bad[0], known))
        if not v:
            raise ValueError("give at least one kind (or null: every kind this host can do)")
        return list(dict.fromkeys(v))

    @field_validator("duration_s", mode="before")
    @classmethod
    def _duration_shape(cls, v: Any) -> Any:
        # pydantic's own words ('Input should be a valid tuple', 'duration_s[1]: Field required')
        # do not say what is wanted; true is no number of seconds (pydantic would read 1.0)
        if not (
            isinstance(v, (list, tuple))
            and len(v) == 2
            and all(_is_number(x) and math.isfinite(x) for x in v)
        ):
            raise ValueError(f"[lo, hi] seconds with 0 < lo <= hi, got {v!r}")
        return v

    @field_validator("duration_s")
    @classmethod
    def _duration(cls, v: tuple[float, float]) -> tuple[float, float]:
        if not 0 < v[0] <= v[1]:
            raise ValueError(f"[lo, hi] seconds with 0 < lo <= hi, got {list(v)}")
        return v


class AgentOverride(BaseModel):
    """The agent given on the command line of ``ani campaign run`` (``--agent-config FILE``,
    ``--agent-option KEY=VALUE``), applied to every cell (:meth:`CampaignSpec.agent_of`);
    written to the folder's ``spec.json`` so that ``--resume`` runs the same agent. Not a key
    of a campaign file.

    Attributes:
        agent: the ``--agent-config`` block (with its ``kind``): replaces the file's ``agent:``;
            None: the file's is kept.
        options: the ``--agent-option`` keys, set last in every cell's agent (over the cell's
            own ``agent:``, ``model`` and ``agent_mode``), in the order given.
    """

    model_config = ConfigDict(extra="forbid")

    agent: dict[str, Any] | None = None
    options: dict[str, Any] = Field(default_factory=dict)

    def describe(self) -> str:
        """``--agent-config (kind llm), --agent-option model='m'`` (values, not file names: the
        same override written two ways reads the same)."""
        parts = [f"--agent-config (kind {self.agent.get('kind')!r})"] if self.agent is not None else []
        parts += [f"--agent-option {k}={v!r}" for k, v in self.options.items()]
        return ", ".join(parts) or "none"


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
        stress: the swept stress parameters and their values, a grid, e.g. ``{"density": [2, 4],
            "fault_rate": [0, 0.3]}`` (fault rates are floats >= 0: faults per agent step).
        agent: agent config passed to ``ani.agents.create_agent`` (must have ``kind``).
        budget: :class:`ani.agents.base.Budget` (max_steps = tool calls, wall_clock_s, max_tokens).
        cells: at least one :class:`CellSpec`; the first is the reference for paired tests.
        observer_bound_s: bound of the observer's retry loop per check, seconds (None: its default).
        form: the HAI form of the cells' tasks that name none: ``intent`` (default) or ``ticket``.
        bound: the damage bound to assert, in (0, 1): S = ceil(3 / bound) (rule of three;
            instead of ``variants``); the report says whether each cell reached it.
        reference: the cell the report compares every other cell with (paired difference,
            exact McNemar, Holm); None: the first cell. A reporting choice: runs do not depend on it.
        cell_filter: the cells ``ani campaign run --cell`` kept (:func:`select_cells`; ``cells``
            holds only those), None: every cell of the file.
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
    # --- campaign-factors: the HAI form of the cells' tasks; variants from a damage bound ---
    form: Literal["intent", "ticket"] = "intent"
    bound: float | None = Field(None, gt=0, lt=1)
    # --- end campaign-factors ---
    reference: str | None = None  # issue 26 §3: the report's reference cell
    # --- netconfbench: task files as the variants (ani.netconfbench.variant.TaskCatalogue) ---
    tasks: str | list[str] | None = None
    tasks_paths: list[str] | None = None
    reasoning_summary: SummaryConfig | None = None
    # --- end netconfbench ---
    #: ``ani campaign run --agent-config / --agent-option`` (not written in a file: load_spec)
    agent_override: AgentOverride | None = None
    #: ``ani campaign run --cell``: the names of the cells run, in the file's order, when not
    #: every cell of the file (not written in a file: :func:`select_cells`)
    cell_filter: list[str] | None = None
    _source: str = PrivateAttr(default="<campaign>")
    _agent_folders: tuple[str, ...] = PrivateAttr(default=())

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
                if key == "fault_rate" and (not _is_number(x) or not math.isfinite(x) or x < 0):
                    raise ValueError(f"{key}.{i}: {FAULT_RATE_WANTED}, got {x!r}")
            if key == "fault_rate":  # one spelling per value: 0 and 0.0 name the same run
                v[key] = values = [float(x) for x in values]
                if len(set(values)) != len(values):
                    raise ValueError(f"{key}: a value is given twice")
        return v

    @field_validator("fault_rate", mode="before")
    @classmethod
    def _fault_rate(cls, v: Any) -> Any:
        # the same words as a swept stress value's; pydantic's lax mode would take true as 1.0
        # and say '... less than or equal to 100' of .nan
        if not _is_number(v) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{FAULT_RATE_WANTED}, got {v!r}")
        return v

    @field_validator("bound", mode="before")
    @classmethod
    def _bound(cls, v: Any) -> Any:
        if v is not None and not _is_number(v):  # true would be read as 1
            raise ValueError(f"a damage probability bound in (0, 1), e.g. bound: 0.05, got {v!r}")
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
        """The first swept stress parameter (``density``, ``task``, ``fault_rate``) or None."""
        return next(iter(self.stress), None)

    @property
    def stress_points(self) -> list[dict[str, Any]]:
        """The grid of the stress block: every combination of its values, the first parameter
        varying slowest (``{density: [2, 4], fault_rate: [0, 0.3]}`` -> ``[{density: 2,
        fault_rate: 0.0}, {density: 2, fault_rate: 0.3}, {density: 4, ...}, ...]``); ``[{}]``
        without a stress block."""
        keys = list(self.stress)
        return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*self.stress.values())]

    def points(self) -> list[RunPoint]:
        """The runs in order: seed-major, then stress point (grid order), then cell, so an
        interrupted campaign holds complete pairs (every cell at every point for the seeds it
        finished)."""
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
        if self.tasks is not None:  # netconfbench: every cell runs the task files
            return TASKS_CLASS
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

    @property
    def agent_folders(self) -> tuple[str, ...]:
        """Where a ``module:factory`` agent kind's module is looked up after the import path
        (absolute folders): the campaign file's folder, then the current folder
        (:func:`ani.agents.plugins.resolve_plugin`); set by :func:`parse_spec`."""
        return self._agent_folders

    # --- campaign-factors: a cell's agent, form and fault rate ---
    def agent_of(self, cell: CellSpec | str) -> dict[str, Any]:
        """The agent config of ``cell`` (for ``ani.agents.create_agent``): the campaign's
        ``agent:`` (or the ``--agent-config`` block of :attr:`agent_override`), then the cell's
        ``agent:`` mapping merged onto it, then its ``model`` (as ``model``) and its
        ``agent_mode`` (``react+recovery`` -> ``mode: react, recovery: true``; ``react`` ->
        ``recovery: false``), then the ``--agent-option`` keys of :attr:`agent_override`."""
        c = self.cell(cell) if isinstance(cell, str) else cell
        override = self.agent_override
        base = override.agent if override is not None and override.agent is not None else self.agent
        config = {**base, **c.agent}
        if c.model is not None:
            config["model"] = c.model
        if c.agent_mode is not None:
            mode, _, recovery = c.agent_mode.partition("+")
            config["mode"], config["recovery"] = mode, bool(recovery)
        if override is not None:
            config.update(override.options)
        return config

    def form_of(self, cell: CellSpec | str) -> str:
        """The HAI form of ``cell``'s task (``intent`` or ``ticket``): the cell's, else the
        campaign's."""
        c = self.cell(cell) if isinstance(cell, str) else cell
        return c.form or self.form

    def fault_rate_of(self, cell: CellSpec | str, stress: dict[str, Any] | None = None) -> float:
        """The fault rate of ``cell`` at ``stress`` (faults per agent step): the stress value,
        else the campaign's ``fault_rate`` (0 without one)."""
        del cell  # every cell at a stress point meets the same faults (paired)
        value = (stress or {}).get("fault_rate")
        if value is None:
            value = getattr(self, "fault_rate", 0.0)
        return float(value or 0.0)
    # --- end campaign-factors ---

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
        """The run id of ``cell`` / ``seed`` / ``stress`` (:func:`run_id`). With ``tasks:``
        (netconfbench) the task part is the task's variant id, its file's stem
        (``a1-static-backup-s0``): every task class ``netconfbench`` would give two single-run
        campaigns over different task files one id; other campaigns are as before."""
        name = cell if isinstance(cell, str) else cell.name
        task = self.task_of(cell, stress)
        if self.tasks_paths and 0 <= int(seed) < len(self.tasks_paths):
            from ani.netconfbench.variant import task_variant_id

            task = task_variant_id(self.tasks_paths[int(seed)])
        return run_id(name, task, seed, stress)

    # --- faults (issue 14, faults-core) -----------------------------------------------------
    #: faults per agent step (lambda of the schedule's Poisson process); 0: no faults. A
    #: ``stress: {fault_rate: [...]}`` value overrides it (:meth:`fault_rate_of`).
    fault_rate: float = Field(0.0, ge=0, le=100)
    faults: FaultsSpec = Field(default_factory=FaultsSpec)
    # (fault_rate_of(cell, stress): with campaign-factors' block above)


def _design_errors(spec: CampaignSpec) -> list[str]:
    """What is wrong with the campaign's design (fields are fine one by one): one message each,
    naming the field."""
    errors: list[str] = []
    names = [c.name for c in spec.cells]
    if spec.reference is not None and spec.reference not in names:
        errors.append(f"reference: {spec.reference!r} is not a cell of this campaign; cells: {', '.join(names)}")
    if "faults" in spec.model_fields_set and "fault_rate" not in spec.model_fields_set and (
        "fault_rate" not in spec.stress
    ):
        # the block alone draws nothing: every run would be fault-free without a word
        errors.append(
            "faults: no run has faults: the rate is 0 unless the file gives fault_rate: (faults per "
            "agent step) or stress: {fault_rate: [...]} (write fault_rate: 0 to keep the block unused)"
        )
    if spec.tasks is not None:
        errors += _tasks_errors(spec)
    elif spec.scenario is None and spec.manifest is None:
        errors.append(NO_SCENARIO)
    elif spec.scenario is not None and spec.manifest is not None:
        errors.append("manifest: give scenario: (a scenario file) or manifest: (generated), not both")
    if spec.manifest is None and spec.tasks is None:
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
        if "density" in spec.stress:
            errors.append("stress.density: only with manifest: (a scenario file's density is fixed)")
    for i, c in enumerate(spec.cells):
        if c.level is None and spec.level is None:
            errors.append(f"cells[{i}]({c.name}).level: Field required (or give the campaign a level:)")
        if c.task is None and spec.task is None and "task" not in spec.stress and spec.tasks is None:
            errors.append(f"cells[{i}]({c.name}).task: Field required (or give the campaign a task:)")
        if c.blocklist and (c.level or spec.level):
            problem = _blocklist_problem(str(c.level or spec.level))
            if problem:
                errors.append(f"cells[{i}]({c.name}).blocklist: {problem}")
    if errors:
        return errors
    factor = spec.factor
    for key in spec.stress:
        if key == factor:
            errors.append(f"stress.{key}: {key} is the factor; sweep another parameter or change the factor")
    varied = {"level": ("level", "blocklist", "options"), "task": ("task", "form")}.get(factor, (factor,))
    for i, c in enumerate(spec.cells):
        for key in spec.stress:
            if getattr(c, key, None) is not None:
                errors.append(f"cells[{i}]({c.name}).{key}: {key} is swept by stress:; a cell cannot fix it")
    ref = spec.cells[0]
    for i, c in enumerate(spec.cells[1:], 1):
        for setting in SETTINGS:
            if setting in varied or setting in spec.stress:
                continue
            if _setting(spec, ref, setting) != _setting(spec, c, setting):
                errors.append(
                    f"cells[{i}]({c.name}).{setting}: differs from cell {ref.name!r} but the factor is "
                    f"{factor!r} (a campaign varies one factor; cells must agree on the rest)"
                )
    errors += _agent_errors(spec)  # campaign-factors: the matched budget over the agent configs
    settings = [
        (tuple(_setting(spec, c, s) for s in SETTINGS), repr(sorted(_agent_effective(spec, c).items())))
        for c in spec.cells
    ]
    if not errors and len(set(settings)) != len(settings):
        what = " and ".join(varied)
        errors.append(f"cells: two cells have the same {what} (nothing varies between them)")
    return errors


# --- campaign-factors: the matched budget over the cells' agent configs ---

#: the agent keys each agent factor lets differ between cells; under any other factor none
AGENT_FACTOR_KEYS: dict[str, tuple[str, ...]] = {
    # the endpoint and the model behind it (tool_choice: what that server needs, docs/llm.md)
    "model": ("model", "base_url", "api_key_env", "tool_choice"),
    "agent_mode": ("mode", "recovery"),
}
#: what each agent key is, for the matched-budget message (unknown keys: "agent setting")
AGENT_KEY_KINDS: dict[str, str] = {
    "kind": "agent kind",
    "model": "model",
    "base_url": "model endpoint",
    "api_key_env": "model endpoint",
    "tool_choice": "model endpoint",
    "mode": "agent mode",
    "recovery": "agent mode",
    "system_prompt": "system prompt",
    "max_recoveries": "caps",
    "max_replans": "caps",
    "max_completion_tokens": "caps",
    "wait_max_s": "caps",
    "request_timeout_s": "retry policy",
    "max_retries": "retry policy",
    "retry_backoff_s": "retry policy",
    "retry_backoff_max_s": "retry policy",
    "retry_after_max_s": "retry policy",
    "max_observation_chars": "observation interface",
    "temperature": "sampling",
    "seed": "sampling",
}


def _agent_effective(spec: CampaignSpec, cell: CellSpec) -> dict[str, Any]:
    """``spec.agent_of(cell)`` with the LLM agent's defaults filled in (``mode: react`` written
    or left out is the same agent)."""
    config = spec.agent_of(cell)
    if config.get("kind") == "llm":
        from ani.agents.llm_config import LLMConfig

        defaults = {
            k: f.default for k, f in LLMConfig.model_fields.items() if not f.is_required()
        }
        config = {**defaults, **config}
    return config


def agent_mode_of(config: dict[str, Any]) -> str | None:
    """``react+recovery`` for an agent config with ``mode: react, recovery: true`` (the LLM
    agent's default mode is ``react``); None for an agent without modes (not ``kind: llm`` and
    no ``mode`` key)."""
    mode = config.get("mode")
    if mode is None and config.get("kind") != "llm":
        return None
    return f"{mode or 'react'}{'+recovery' if config.get('recovery') else ''}"


def _agent_errors(spec: CampaignSpec) -> list[str]:
    """The matched budget: cells agree on every agent setting but the factor's
    (:data:`AGENT_FACTOR_KEYS`): one message per differing key, naming the cell, the key, what
    kind of setting it is and both values."""
    errors: list[str] = []
    for i, c in enumerate(spec.cells):
        if c.model is not None and "model" in c.agent:
            errors.append(f"cells[{i}]({c.name}).model: also given as agent.model; give one")
        if c.agent_mode is not None and ({"mode", "recovery"} & set(c.agent)):
            errors.append(f"cells[{i}]({c.name}).agent_mode: also given as agent.mode / agent.recovery; give one")
    if errors:
        return errors
    allowed = AGENT_FACTOR_KEYS.get(spec.factor, ())
    ref = spec.cells[0]
    ref_config = _agent_effective(spec, ref)
    for i, c in enumerate(spec.cells[1:], 1):
        config = _agent_effective(spec, c)
        for key in sorted(set(ref_config) | set(config)):
            if key in allowed or ref_config.get(key) == config.get(key):
                continue
            what = AGENT_KEY_KINDS.get(key, "agent setting")
            may = f"only {', '.join(allowed)} may differ" if allowed else "no agent setting may differ"
            errors.append(
                f"cells[{i}]({c.name}).agent.{key}: differs from cell {ref.name!r} "
                f"({ref_config.get(key)!r} vs {config.get(key)!r}) but the factor is {spec.factor!r}: "
                f"a matched budget holds the {what} fixed ({may})"
            )
    return errors
# --- end campaign-factors ---


def _tasks_errors(spec: CampaignSpec) -> list[str]:
    """netconfbench: what a campaign with ``tasks:`` may not also give."""
    errors = []
    if spec.tasks == [] or spec.tasks == "":
        errors.append("tasks: give a task file, a folder of them, or a list")
    for key in ("scenario", "manifest", "task", "scenario_seed", "density"):
        if getattr(spec, key) is not None:
            errors.append(f"{key}: not with tasks: (each NetConfBench task brings its network; its class is {TASKS_CLASS})")
    if "seed" in spec.model_fields_set:
        errors.append("seed: not with tasks: (the variants are the task files, 0..N-1)")
    if spec.form != "intent":
        errors.append("form: a NetConfBench task has one form (intent)")
    for key in ("task", "density"):
        if key in spec.stress:
            errors.append(f"stress.{key}: not with tasks:")
    if spec.factor in ("task", "density"):
        errors.append(f"factor: {spec.factor!r} is not a factor of a tasks: campaign (the tasks are its variants)")
    if spec.bound is not None:
        errors.append("bound: not with tasks: (the variants are the task files)")
    for i, c in enumerate(spec.cells):
        for key in ("task", "density", "form"):
            if getattr(c, key) is not None:
                errors.append(f"cells[{i}]({c.name}).{key}: not with tasks:")
    return errors


def _setting(spec: CampaignSpec, cell: CellSpec, setting: str) -> Any:
    """The effective value of one cell setting (campaign defaults filled in)."""
    if setting == "level":
        return cell.level or spec.level
    if setting == "task":
        return cell.task or spec.task
    if setting == "form":
        return spec.form_of(cell)
    if setting == "density":
        return spec.density_of(cell)
    if setting == "options":  # compared and hashed as text (a mapping is not hashable)
        return repr(sorted(cell.options.items()))
    return getattr(cell, setting)


def run_id(cell: str, task: str, seed: int, stress: dict[str, Any] | None = None) -> str:
    """Filesystem-safe run id ``<cell>-<task>-s<seed>`` (e.g. ``a1_blocklist-onboard-site-s2``;
    a NetConfBench task's run: ``<task>`` its variant id, ``a1-static-backup-s0``);
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


#: the shipped folder a campaign file's relative paths are also read against (where the shipped
#: campaigns are: ``../scenarios/x.yaml`` in a copy of one names the shipped ``scenarios/x.yaml``)
SHIPPED_CAMPAIGNS = "campaigns"


def resolve_path(value: str, base_dir: Path | None, field: str | None = None, *,
                 beside: str | None = None) -> Path:
    """``value`` relative to ``base_dir`` if that file exists, else as given (relative to the
    current folder), else a shipped data file: ``value`` as a name in the shipped data
    (``scenarios/brownfield-small.yaml``), then, with ``beside`` (a shipped folder, e.g.
    ``campaigns``), as written in a file of that folder (``../scenarios/brownfield-small.yaml``
    beside ``campaigns/`` is ``scenarios/brownfield-small.yaml``), so a copy of a shipped
    campaign placed in another folder finds what the original finds. A shipped name never
    leaves the shipped data (``..`` past its top is not followed).

    Raises CampaignSpecError if none exists: one line that starts with ``field`` (the key that
    named the file, e.g. ``scenario`` or ``cells[1](a1).blocklist``) and says where it looked.
    """
    p = Path(value).expanduser()
    if not p.is_absolute() and base_dir is not None and (base_dir / p).exists():
        return (base_dir / p).resolve()
    if p.exists():
        return p.resolve()
    found = None if p.is_absolute() else _shipped(str(value), beside)
    if found is not None:
        return found
    cwd = Path.cwd().resolve()
    if p.is_absolute():
        where = "it does not exist"
    elif base_dir is None or Path(base_dir).resolve() == cwd:
        where = f"looked in the current folder {cwd} and in the shipped data"
    else:
        where = f"looked in {base_dir}, in the current folder {cwd} and in the shipped data"
    prefix = f"{field}: " if field else ""
    raise CampaignSpecError(f"{prefix}file {value!r} not found ({where})")


def _shipped(value: str, beside: str | None) -> Path | None:
    """The shipped data file ``value`` names (as a data name, then relative to the shipped
    folder ``beside``), or None; a name that climbs out of the shipped data is not tried."""
    import posixpath

    from ani.resources import data_path

    names = [posixpath.normpath(value)]
    if beside is not None:
        names.append(posixpath.normpath(posixpath.join(beside, value)))
    for name in dict.fromkeys(names):
        if name == ".." or name.startswith("../") or name.startswith("/"):
            continue
        try:
            return data_path(name).resolve()
        except FileNotFoundError:
            continue
    return None


def _blocklist_problem(level: str) -> str | None:
    """Why the blocklist ablation cannot be asked for at ``level`` (its calls carry no CLI command
    lines: :func:`ani.registry.check_blocklist`), or None (also when the adapter cannot be loaded:
    the runner's check names that)."""
    from ani.registry import check_blocklist

    try:
        check_blocklist(level)
    except RegistryError:
        return None
    except ConfigError as exc:
        return str(exc)
    return None


def plugin_folders_of(base_dir: Path | None) -> tuple[str, ...]:
    """The folders a plug-in agent's module is looked up in after the import path: ``base_dir``
    (the campaign file's folder), then the current folder; absolute, each once."""
    folders = [Path(base_dir).resolve()] if base_dir is not None else []
    folders.append(Path.cwd().resolve())
    return tuple(dict.fromkeys(str(f) for f in folders))


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
        if isinstance(data, dict) and not {"scenario", "manifest", "tasks"} & set(data):
            raise CampaignSpecError(f"{exc}; {NO_SCENARIO}") from None  # said with the others
        raise
    spec._source = source
    spec._agent_folders = plugin_folders_of(base_dir)
    # campaign-factors: S from the damage bound to be asserted (rule of three)
    if spec.bound is not None:
        from ani.stats import runs_for_bound

        if isinstance(data, dict) and data.get("variants") is not None:
            raise CampaignSpecError(
                f"{source}: invalid campaign: variants: give variants (S) or bound (S = ceil(3/bound)), not both"
            )
        n = runs_for_bound(spec.bound)
        if n > MAX_VARIANTS:
            raise CampaignSpecError(
                f"{source}: invalid campaign: bound: {spec.bound:g} needs {n} runs per cell; at most {MAX_VARIANTS}"
            )
        spec.variants = n
    errors = _design_errors(spec)
    if errors:
        raise CampaignSpecError(f"{source}: invalid campaign: {'; '.join(errors)}")
    for c in spec.cells:
        c.level = c.level or spec.level
    try:
        if spec.scenario is not None:
            spec.scenario_path = str(resolve_path(spec.scenario, base_dir, "scenario", beside=SHIPPED_CAMPAIGNS))
        if spec.manifest is not None:
            spec.manifest_path = str(resolve_path(spec.manifest, base_dir, "manifest", beside=SHIPPED_CAMPAIGNS))
            if spec.scenario_seed is None:
                spec.scenario_seed = 1
        if spec.tasks is not None:
            _resolve_tasks(spec, base_dir, data)
        for i, c in enumerate(spec.cells):
            if isinstance(c.blocklist, str):
                field = f"cells[{i}]({c.name}).blocklist"
                c.blocklist = str(resolve_path(c.blocklist, base_dir, field, beside=SHIPPED_CAMPAIGNS))
    except CampaignSpecError as exc:
        raise CampaignSpecError(f"{source}: {exc}") from None
    return spec


def _resolve_tasks(spec: CampaignSpec, base_dir: Path | None, data: Any) -> None:
    """netconfbench: resolve ``tasks:`` to the task files (folders expanded, sorted) and make
    the variants the files: seeds 0..N-1, ``variants`` (if given) at most N."""
    from ani.errors import TaskFormatError
    from ani.netconfbench.variant import check_distinct_names, task_files

    items = spec.tasks if isinstance(spec.tasks, list) else [spec.tasks]
    paths: list[Path] = []
    for i, item in enumerate(items):
        field = f"tasks[{i}]" if isinstance(spec.tasks, list) else "tasks"
        p = resolve_path(str(item), base_dir, field, beside=SHIPPED_CAMPAIGNS)
        try:
            paths += task_files(p)
        except TaskFormatError as exc:
            raise CampaignSpecError(f"{field}: {exc}") from None
    try:
        check_distinct_names(paths)
    except TaskFormatError as exc:
        raise CampaignSpecError(f"tasks: {exc}") from None
    for i, cell in enumerate(spec.cells):  # a task's solution is device configuration
        if str(cell.level).lower() not in TASK_LEVELS:
            raise CampaignSpecError(
                f"cells[{i}]({cell.name}).level: {cell.level!r}: a NetConfBench task runs at the device "
                f"levels {', '.join(TASK_LEVELS)} (its intents and solutions are device configuration; "
                "A3-T / A3-R / A4 act on the service intents of a brownfield scenario)")
    spec.tasks_paths = [str(p) for p in paths]
    spec.seed = 0
    given = data.get("variants") if isinstance(data, dict) else None
    if given is not None and given > len(paths):
        raise CampaignSpecError(f"variants: {given} but tasks: has {len(paths)} task file(s) (the variants are the files)")
    spec.variants = int(given) if given is not None else len(paths)


def load_spec(path: str | Path, variants: int | None = None, bound: float | None = None,
              agent_override: AgentOverride | dict[str, Any] | None = None,
              cells: list[str] | None = None) -> CampaignSpec:
    """Read and validate a campaign YAML file.

    Args:
        path: the file, or the name of a shipped campaign (``campaigns/level-sweep.yaml``).
        variants: override of ``variants`` (S), e.g. from ``--variants`` (the file's ``bound``
            is then ignored).
        bound: override of ``bound``, e.g. from ``--bound``: S = ceil(3 / bound) runs per cell
            (the file's ``variants`` is then ignored). Not both.
        agent_override: the agent given on the command line (:class:`AgentOverride`), checked
            with the campaign (the matched-budget check sees every cell's agent with it).
        cells: the names of the cells to run (``--cell``, :func:`select_cells`); None or empty:
            every cell. The whole file is checked first.

    Raises:
        CampaignSpecError: missing file (naming the shipped campaign it most likely meant,
            ``level-sweep`` -> ``campaigns/level-sweep.yaml``), bad YAML, or a bad field (the
            message names it).
    """
    from ani.resources import resolve

    try:
        p = resolve(path).resolve()
    except FileNotFoundError:
        from ani.resources import shipped_like

        like = shipped_like(path, "campaigns")
        raise CampaignSpecError(f"campaign file {str(path)!r} not found"
                                + (f"; did you mean {like}?" if like else
                                   " (the shipped ones are in campaigns/, e.g. campaigns/level-sweep.yaml)")) from None
    data = load_yaml(p, CampaignSpecError)
    if variants is not None and bound is not None:
        raise CampaignSpecError("give --variants or --bound, not both")
    if variants is not None and isinstance(data, dict):
        data = {**{k: v for k, v in data.items() if k != "bound"}, "variants": variants}
    if bound is not None and isinstance(data, dict):  # campaign-factors: --bound
        data = {**{k: v for k, v in data.items() if k != "variants"}, "bound": bound}
    if isinstance(data, dict) and "agent_override" in data:
        raise CampaignSpecError(f"{path}: invalid campaign: agent_override: not a key of a campaign file "
                                "(ani campaign run --agent-config / --agent-option set it)")
    if isinstance(data, dict) and "cell_filter" in data:
        raise CampaignSpecError(f"{path}: invalid campaign: cell_filter: not a key of a campaign file "
                                "(ani campaign run --cell sets it)")
    if agent_override is not None and isinstance(data, dict):
        data = {**data, "agent_override": AgentOverride.model_validate(agent_override).model_dump()}
    spec = parse_spec(data, str(path), p.parent)
    return select_cells(spec, cells) if cells else spec


def select_cells(spec: CampaignSpec, names: list[str]) -> CampaignSpec:
    """``spec`` with only the cells named (``ani campaign run --cell NAME``, repeatable), in
    the file's order, and :attr:`CampaignSpec.cell_filter` saying so: a campaign of those cells
    (its plans, run ids, seeds and scenarios are the full campaign's for those cells, so its
    runs pair with the full campaign's; the first cell kept is the reference unless the file
    names one).

    Raises:
        CampaignSpecError: a name that is not a cell of the campaign (naming the closest and
            listing the cells), or the file's ``reference:`` left out (the report compares with it).
    """
    from ani.names import known_list, shown, suggest

    known = [c.name for c in spec.cells]
    for name in names:
        if name not in known:
            like = suggest(name, known)
            raise CampaignSpecError(f"--cell {shown(name)}: not a cell of campaign {spec.name}"
                                    + (f"; did you mean {like}?" if like else "") + f" (cells: {known_list(known)})")
    if spec.reference is not None and spec.reference not in names:
        raise CampaignSpecError(f"--cell: the campaign's reference cell {spec.reference} (reference:) is not among "
                                f"the cells given; add --cell {spec.reference}")
    kept = [c for c in spec.cells if c.name in set(names)]
    return spec.model_copy(update={"cells": kept, "cell_filter": [c.name for c in kept]})
