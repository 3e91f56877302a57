"""Baseline invariants of a scenario, computed from its content (emitted with the scenario).

Each service class (``ani/intents/services/<class>.py``) derives the invariants of its
instances from the routers' configs and the topology (its ``invariants(configs, topology)``);
a scenario's baseline invariants are their concatenation, classes in registration order
(:func:`ani.intents.services.service_classes`). For the shipped classes:

- ``tenant-site``: every pair of sites of the same tenant reaches each other (``reach``, one
  check per unordered pair: a ping tests both directions), service ``tenant:<name>``; no pair
  of sites of different tenants does (``reach`` with ``expect: false``), service ``isolation``;
- ``ibgp``: every BGP session configured between routers' loopbacks is Established, seen from
  each side (``bgp_session``), service ``bgp``;
- ``underlay``: every router reaches every other router's loopback from its own loopback
  (``loopback``), service ``underlay``.

The configs are the scenario's startup state (``ani.intents.network_configs``: FRR config and
nftables); the sites are those the configs carry (prefix-list entry, gateway address, set
element) whose host is a node of the topology, in topology host order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# the service classes' invariants are the intents layer's (intents.checks restricts them to what a
# change touches); importable here as before
from ani.intents.checks import class_invariants

if TYPE_CHECKING:
    from ani.observer.checks import Check
    from ani.scenario.manifest import Scenario

__all__ = ["baseline_invariants", "class_invariants", "listed_invariants"]


def listed_invariants(scenario: Scenario) -> list[Check]:
    """The invariants a scenario file lists explicitly: the hook for its ``invariants:`` key
    (the generator writes it; ``Scenario`` exposes the parsed list as ``listed_invariants``
    once it has the field). A scenario without that key lists none."""
    return list(getattr(scenario, "listed_invariants", None) or [])


def baseline_invariants(scenario: Scenario) -> list[Check]:
    """The baseline invariants of ``scenario`` (deterministic order): :func:`class_invariants`
    of its startup configs, then each of :func:`listed_invariants` whose name is not among
    them (a file that lists what its layers emitted adds nothing twice)."""
    from ani.intents.inventory import network_configs

    out = class_invariants(network_configs(scenario), scenario.topology)
    names = {c.name for c in out}
    return out + [c for c in listed_invariants(scenario) if c.name not in names]
