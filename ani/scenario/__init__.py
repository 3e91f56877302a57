"""Scenarios (brownfield topology + tenants + pools), baseline invariants, task classes.

    >>> from ani.scenario import load_scenario, get_task_class
    >>> scenario = load_scenario("scenarios/brownfield-small.yaml")     # doctest: +SKIP
    >>> variant = get_task_class("onboard-site").variant(scenario, 3)  # doctest: +SKIP
"""

from ani.scenario.manifest import Pool, Scenario, Site, Tenant, load_scenario, parse_scenario
from ani.scenario.tasks import TASK_CLASSES, OnboardSite, TaskClass, TaskVariant, get_task_class

__all__ = [
    "TASK_CLASSES",
    "OnboardSite",
    "Pool",
    "Scenario",
    "Site",
    "TaskClass",
    "TaskVariant",
    "Tenant",
    "get_task_class",
    "load_scenario",
    "parse_scenario",
]
