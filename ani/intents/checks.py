"""Active validation of a service change: which checks a transaction runs between its commit
and its confirm (A3-T, A4).

::

    result = plan(changes, before)                         # CompileResult
    checks = active_checks(changes, before, result, lab.topology)
    run_transaction(lab, result.configs, checks=checks)

:func:`active_checks` returns ``ani.observer.checks`` checks (the observer evaluates them with
retry-until-converged), in a deterministic order, each with ``service=`` set:

1. the service's own checks (each class's ``own_checks``, classes in registration order).
   ``tenant-site`` onboard / move: the site's host (the node at the
   far end of the edge's site interface, if it is a host of the topology) reaches every other
   site of its tenant (``reach``) and no site of another tenant (``reach`` with
   ``expect=False``); then every other edge with a site of the tenant reaches the site's
   gateway (``reach <edge> -> <site's edge> (<gateway>)``: the prefix was carried there);
   service ``tenant-site/<tenant>/<site>``. Other services have no checks
   of their own beyond the baseline below (their effect is on the routers' configs, which
   the transaction's commit already verifies).
2. the baseline invariants of what the change touches, derived from the live configs + topology
   exactly as :func:`ani.scenario.invariants.baseline_invariants` derives them from a scenario
   (same names, same ``service`` tags, so the two can be compared): the ``touched_invariants``
   of every service class (``ani/intents/services/``); for the shipped classes:

   - ``reach`` between every pair of existing sites of a touched tenant (``tenant:<t>``);
   - ``reach expect=False`` between every pair of sites of different tenants, one of them
     touched (``isolation``);
   - ``bgp_session`` of every BGP neighbor that is another router's loopback, where the
     router or the neighbor is a touched router (``bgp``);
   - ``loopback`` from every router to every other router's loopback, sourced from its own,
     where either end is a touched router (``underlay``).

Touched routers: those whose config changes (``compiled.routers``). Touched tenants: those a
change names (its class's ``named_tenants``: ``tenant``, ``isolate_from`` of a firewall
change, every other tenant for a firewall change without ``isolate_from``); those with a site
on a touched router (before or after); those whose site prefix overlaps a prefix or address a
change names (its class's ``named_networks``: a static route, a floating address or a
prefix-list entry over a tenant's prefix can blackhole it).

Existing sites are the ``tenant-site`` services of ``before`` (``ani.intents.Inventory``) whose
host is a node of the topology, in topology host order (the order of a scenario's sites); a
site removed or moved by the changes is not an existing site (a moved one gets its own checks).
A host's address is the address of its first link (``Scenario.host_address``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ani.device.model import DeviceConfig
from ani.intents.inventory import Inventory
from ani.intents.models import parse_changes
from ani.intents.services import Touched, get_service_class, service_classes
from ani.intents.services.common import loopbacks
from ani.intents.services.tenant_site import SiteHost, site_hosts
from ani.observer.checks import Check

__all__ = ["SiteHost", "active_checks", "baseline_checks", "class_invariants", "loopbacks", "site_hosts"]


def class_invariants(configs: dict[str, Any], topology: Any) -> list[Check]:
    """The invariants of every service class's instances in ``configs`` (``{router:
    DeviceConfig}``) on ``topology``, classes in registration order: a scenario's baseline
    (:func:`ani.scenario.invariants.baseline_invariants`, which imports it from here)."""
    return [c for cls in service_classes() for c in cls.invariants(configs, topology)]


def baseline_checks(
    configs: dict[str, DeviceConfig],
    topology: Any,
    *,
    tenants: Iterable[str] | None = None,
    routers: Iterable[str] | None = None,
    sites: list[SiteHost] | None = None,
) -> list[Check]:
    """The baseline invariants of ``configs`` on ``topology`` (as ``baseline_invariants`` of a
    scenario: the ``invariants`` of every service class, in registration order), restricted to
    ``tenants`` (reach / isolation pairs involving them; None: all) and ``routers`` (BGP
    sessions and loopback pairs with a touched end; None: all): each class's
    ``touched_invariants``. ``sites``: the existing sites (default :func:`site_hosts` of ``configs``)."""
    if tenants is None and routers is None and sites is None:
        return class_invariants(configs, topology)
    touched = Touched(tenants=None if tenants is None else frozenset(tenants),
                      routers=None if routers is None else frozenset(routers),
                      sites=None if sites is None else tuple(sites))
    return [c for cls in service_classes() for c in cls.touched_invariants(configs, topology, touched)]


def touched_tenants(changes: list[Any], before: dict[str, DeviceConfig], after: dict[str, DeviceConfig],
                    routers: Iterable[str]) -> list[str]:
    """Tenants the changes touch (see the module doc), sorted: those each change's class names
    (``named_tenants``), those with a site prefix overlapping a network it names
    (``named_networks``), those with a site on a touched router (before or after)."""
    rset = set(routers)
    inv_b, inv_a = Inventory(before), Inventory(after)
    known = set(inv_b.tenants()) | set(inv_a.tenants())
    sites = [s.spec for s in inv_b.list_services("tenant-site")] + [s.spec for s in inv_a.list_services("tenant-site")]
    out: set[str] = set()
    for ch in changes:
        cls = get_service_class(ch.type)
        out |= cls.named_tenants(ch, known)
        for net in cls.named_networks(ch):
            out |= {sp.tenant for sp in sites if sp.prefix.overlaps(net)}
    out |= {sp.tenant for sp in sites if sp.edge in rset}
    return sorted(out)


def active_checks(changes: list[Any], before: dict[str, DeviceConfig], compiled: Any, topology: Any) -> list[Check]:
    """The checks a transaction applying ``compiled`` (a ``CompileResult`` of ``changes``
    against ``before``, ``{router: DeviceConfig}`` of every router now) runs as active
    validation on ``topology`` (``ani.lab.topology.Topology``): the service's own checks (each
    class's ``own_checks`` of its changes), then the baseline invariants of what it touches
    (each class's ``touched_invariants``; see the module doc). ``changes``: models or
    mappings (``compiled.changes``, with allocations filled in, is best)."""
    models = parse_changes(list(compiled.changes) if getattr(compiled, "changes", None) else changes)
    after = {**before, **compiled.configs}
    routers = sorted(compiled.configs)
    tenants = touched_tenants(models, before, after, routers)
    touched = Touched(tenants=frozenset(tenants), routers=frozenset(routers), changes=tuple(models))
    out: list[Check] = []
    for cls in service_classes():
        mine = [ch for ch in models if ch.type == cls.name]
        if mine:
            out += cls.own_checks(mine, before, after, topology)
    for cls in service_classes():
        out += cls.touched_invariants(before, topology, touched)
    return out
