"""What a task variant works on, for the kinds that aim at it (:mod:`ani.faults.kinds`; the
topology's routers and links are :mod:`ani.faults.targets`).

Every task class names the edge routers it changes in its parameters (``TaskVariant.params``,
never shown to the agent): ``edge`` (onboard-site, decommission, troubleshoot) or, for
change-set, the ``edge`` / ``from_edge`` / ``to_edge`` of each ``add`` / ``move`` / ``remove``
entry; a NetConfBench task (:mod:`ani.netconfbench.variant`) the routers its first solution
configures (``lab_solutions[0].configs``, in the lab's names, in the solution's order). A kind
draws its target among those (the fault then meets the task), else among the scenario's
routers.

    task_routers(scenario, variant) -> ["e1", "e2"]    # sorted, routers of the scenario only
    pick_router(rng, scenario, variant) -> "e2" | None  # rng.choice of the above (else any router)
    primary_edge(scenario, variant) -> "e2" | None      # the router the task's first change is on
"""

from __future__ import annotations

import random
from typing import Any

__all__ = ["primary_edge", "pick_router", "scenario_routers", "task_routers"]

_EDGE_KEYS = ("edge", "to_edge", "from_edge")


def scenario_routers(scenario: Any) -> list[str]:
    """The scenario's routers, sorted ([] for an object without a topology)."""
    topo = getattr(scenario, "topology", None)
    return sorted(getattr(topo, "routers", {}) or {})


def _edges_in_order(params: dict[str, Any]) -> list[str]:
    out: list[str] = []
    if isinstance(params.get("edge"), str):
        out.append(params["edge"])
    for section in ("add", "move", "remove"):
        for entry in params.get(section) or []:
            if isinstance(entry, dict):
                out += [str(entry[k]) for k in _EDGE_KEYS if isinstance(entry.get(k), str)]
    solutions = params.get("lab_solutions")
    if isinstance(solutions, list) and solutions and isinstance(solutions[0], dict):
        out += [str(r) for r, lines in (solutions[0].get("configs") or {}).items() if lines]
    return out


def task_routers(scenario: Any, variant: Any) -> list[str]:
    """The routers the variant's task changes (see the module doc), sorted; [] if it names none."""
    params = getattr(variant, "params", None) or {}
    known = set(scenario_routers(scenario))
    return sorted({r for r in _edges_in_order(params) if r in known})


def primary_edge(scenario: Any, variant: Any) -> str | None:
    """The router of the task's first change (``edge``, else the first change-set entry's)."""
    params = getattr(variant, "params", None) or {}
    known = set(scenario_routers(scenario))
    return next((r for r in _edges_in_order(params) if r in known), None)


def pick_router(rng: random.Random, scenario: Any, variant: Any) -> str | None:
    """One router drawn with ``rng``: among :func:`task_routers`, else among every router of the
    scenario; None if it has none."""
    pool = task_routers(scenario, variant) or scenario_routers(scenario)
    return rng.choice(pool) if pool else None
