"""How long a scenario's network needs after a change before it is graded (seconds).

FRR applies a changed route-map or prefix-list to existing routes only when the ``bgp
route-map delay-timer`` fires; the campaign runner waits :func:`settle_seconds` after the
agent's last change, NetConfBench's task check (:func:`ani.netconfbench.lab.validate_task`)
after a lab starts. Read from the scenario's device configs, so it lives with the scenario
(docs/architecture.md, "Layers"); ``ani.campaign.runner`` re-exports the names.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FRR_ROUTE_MAP_DELAY_S", "PROPAGATION_S", "route_map_delay_s", "settle_seconds"]

#: FRR's ``bgp route-map delay-timer`` when a config does not set it (seconds, FRR 8.4)
FRR_ROUTE_MAP_DELAY_S = 5
#: what BGP needs beyond that timer to carry a change to the other routers (seconds)
PROPAGATION_S = 1.0


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


def route_map_delay_s(scenario: Any) -> float:
    """The longest ``bgp route-map delay-timer`` of the scenario's BGP routers (seconds; FRR's
    :data:`FRR_ROUTE_MAP_DELAY_S` where unset; 0 without BGP): the part of
    :func:`settle_seconds` that is a timer's fixed wait, the rest (:data:`PROPAGATION_S`) may end
    on evidence (:meth:`ani.campaign.observe_run.RunObservation.settle`)."""
    s = settle_seconds(scenario)
    return max(0.0, s - PROPAGATION_S) if s else 0.0
