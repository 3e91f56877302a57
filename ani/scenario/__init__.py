"""Scenarios (brownfield topology + tenants + pools), baseline invariants, task classes.

    >>> from ani.scenario import load_scenario, get_task_class
    >>> scenario = load_scenario("scenarios/brownfield-small.yaml")     # doctest: +SKIP
    >>> variant = get_task_class("onboard-site").variant(scenario, 3)  # doctest: +SKIP
    >>> ticket = get_task_class("change-set").variant(scenario, 3, form="ticket")  # doctest: +SKIP

Task classes: ``onboard-site``, ``change-set``, ``decommission``, ``troubleshoot``
(:mod:`ani.scenario.tasks`, ``docs/tasks.md``).
"""

from ani.scenario.manifest import Pool, Scenario, Site, Tenant, load_scenario, parse_scenario, read_topology
from ani.scenario.tasks import (
    FORMS,
    TASK_CLASSES,
    ChangeSet,
    Decommission,
    OnboardSite,
    TaskClass,
    TaskVariant,
    Troubleshoot,
    get_task_class,
)

__all__ = [
    "FORMS",
    "TASK_CLASSES",
    "ChangeSet",
    "Decommission",
    "OnboardSite",
    "Pool",
    "Scenario",
    "Site",
    "TaskClass",
    "TaskVariant",
    "Tenant",
    "Troubleshoot",
    "get_task_class",
    "load_scenario",
    "parse_scenario",
    "read_topology",
]
