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

:func:`load_spec` validates it and raises :class:`~ani.errors.CampaignSpecError`
naming the file and the bad field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ani.agents.base import Budget
from ani.errors import CampaignSpecError
from ani.validation import load_yaml, validate_mapping

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
FACTORS = ("level", "blocklist")


def safe_component(text: str) -> str:
    """``text`` reduced to ``[A-Za-z0-9._-]`` (other runs of characters become ``_``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "_"


class CellSpec(BaseModel):
    """One setting of the factor under study.

    Attributes:
        name: unique in the campaign; ``[A-Za-z0-9._+-]``, at most 64 characters.
        level: adapter name (``a0``, ``a1``, ... or a registered third-party adapter).
        blocklist: the blocklist ablation: False, True (the platform default) or a YAML path.
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    level: str
    blocklist: bool | str = False

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError(f"cell name {v!r} must match {NAME_RE.pattern}")
        return v

    @field_validator("level")
    @classmethod
    def _level(cls, v: str) -> str:
        from ani.registry import available

        v = v.strip().lower()
        known = available()
        if v not in known:
            raise ValueError(f"unknown level {v!r}; known: {', '.join(known)}")
        return v


class CampaignSpec(BaseModel):
    """A validated campaign file (see the module docstring for the shape).

    Attributes:
        name: campaign name (used in the results folder name).
        scenario: scenario path as written in the file.
        scenario_path: the resolved absolute path (set by :func:`load_spec`).
        task: task class name, e.g. ``onboard-site``.
        variants: S, the number of seeds (>= 1).
        seed: first seed; the seeds are ``seed .. seed + S - 1``.
        factor: the factor varied across cells (``level`` or ``blocklist``).
        agent: agent config passed to ``ani.agents.create_agent`` (must have ``kind``).
        budget: :class:`ani.agents.base.Budget` (max_steps = tool calls, wall_clock_s, max_tokens).
        cells: at least one :class:`CellSpec`; the first is the reference for paired tests.
        observer_bound_s: bound of the observer's retry loop per check, seconds (None: its default).
    """

    model_config = ConfigDict(extra="forbid")

    name: str
    scenario: str
    scenario_path: str | None = None
    task: str
    variants: int = Field(3, ge=1, le=10_000)
    seed: int = Field(1, ge=0)
    factor: str = "level"
    agent: dict[str, Any] = Field(default_factory=lambda: {"kind": "scripted"})
    budget: Budget = Field(default_factory=Budget)
    cells: list[CellSpec] = Field(min_length=1)
    observer_bound_s: float | None = Field(None, gt=0)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME_RE.match(v):
            raise ValueError(f"campaign name {v!r} must match {NAME_RE.pattern}")
        return v

    @field_validator("factor")
    @classmethod
    def _factor(cls, v: str) -> str:
        if v not in FACTORS:
            raise ValueError(f"factor {v!r} is not supported; supported: {', '.join(FACTORS)}")
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
        settings = [(c.level, c.blocklist) for c in self.cells]
        if len(set(settings)) != len(settings):
            raise ValueError(
                "two cells have the same level and blocklist (nothing varies between them)"
            )
        if self.factor == "blocklist" and len({c.level for c in self.cells}) > 1:
            raise ValueError("factor is 'blocklist' but the cells differ in level")
        return self

    @property
    def seeds(self) -> list[int]:
        """``[seed, seed + 1, ..., seed + variants - 1]``."""
        return list(range(self.seed, self.seed + self.variants))

    def cell(self, name: str) -> CellSpec:
        """The cell called ``name``; raises CampaignSpecError listing the cell names."""
        for c in self.cells:
            if c.name == name:
                return c
        raise CampaignSpecError(
            f"no cell {name!r} in campaign {self.name!r}; cells: {', '.join(c.name for c in self.cells)}"
        )


def run_id(cell: str, task: str, seed: int) -> str:
    """Filesystem-safe run id ``<cell>-<task>-s<seed>`` (e.g. ``a1_blocklist-onboard-site-s2``)."""
    return f"{safe_component(cell)}-{safe_component(task)}-s{int(seed)}"


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
    spec = validate_mapping(
        CampaignSpec, data, source=source, what="campaign", error=CampaignSpecError,
        top="(top level)", format_loc=lambda loc: _format_loc(loc, data),
    )
    try:
        spec.scenario_path = str(resolve_path(spec.scenario, base_dir, "scenario"))
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
