"""Active validation of a service change: which checks a transaction runs between its commit
and its confirm (A3-T, A4).

::

    result = plan(changes, before)                         # CompileResult
    checks = active_checks(changes, before, result, lab.topology)
    run_transaction(lab, result.configs, checks=checks)

:func:`active_checks` returns ``ani.observer.checks`` checks (the observer evaluates them with
retry-until-converged), in a deterministic order, each with ``service=`` set:

1. the service's own checks. ``tenant-site`` onboard / move: the site's host (the node at the
   far end of the edge's site interface, if it is a host of the topology) reaches every other
   site of its tenant (``reach``) and no site of another tenant (``reach`` with
   ``expect=False``); then every other edge with a site of the tenant reaches the site's
   gateway (``reach <edge> -> <site's edge> (<gateway>)``: the prefix was carried there);
   service ``tenant-site/<tenant>/<site>``. Other services have no checks
   of their own beyond the baseline below (their effect is on the routers' configs, which
   the transaction's commit already verifies).
2. the baseline invariants of what the change touches, derived from the live configs + topology
   exactly as :func:`ani.scenario.invariants.baseline_invariants` derives them from a scenario
   (same names, same ``service`` tags, so the two can be compared):

   - ``reach`` between every pair of existing sites of a touched tenant (``tenant:<t>``);
   - ``reach expect=False`` between every pair of sites of different tenants, one of them
     touched (``isolation``);
   - ``bgp_session`` of every BGP neighbor that is another router's loopback, where the
     router or the neighbor is a touched router (``bgp``);
   - ``loopback`` from every router to every other router's loopback, sourced from its own,
     where either end is a touched router (``underlay``).

Touched routers: those whose config changes (``compiled.routers``). Touched tenants: those a
change names (``tenant``, ``isolate_from`` of a firewall change, every other tenant for a
firewall change without ``isolate_from``); those with a site on a touched router (before or
after); those whose site prefix overlaps a prefix or address a change names (a static route,
a floating address or a prefix-list entry over a tenant's prefix can blackhole it).

Existing sites are the ``tenant-site`` services of ``before`` (``ani.intents.Inventory``) whose
host is a node of the topology, in topology host order (the order of a scenario's sites); a
site removed or moved by the changes is not an existing site (a moved one gets its own checks).
A host's address is the address of its first link (``Scenario.host_address``).
"""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import IPv4Address, IPv4Network
from itertools import combinations
from typing import Any

from ani.device.model import DeviceConfig
from ani.intents.inventory import Inventory
from ani.intents.models import parse_changes
from ani.observer.checks import BgpSessionCheck, Check, LoopbackCheck, ReachCheck

__all__ = ["SiteHost", "active_checks", "baseline_checks", "loopbacks", "site_hosts"]


class SiteHost:
    """A tenant site whose host is a node of the topology: ``tenant``, ``site``, ``host``
    (node name), ``address`` (the host's address), ``prefix``, ``edge``."""

    __slots__ = ("address", "edge", "host", "prefix", "site", "tenant")

    def __init__(self, tenant: str, site: str, host: str, address: IPv4Address, prefix: IPv4Network, edge: str) -> None:
        self.tenant, self.site, self.host, self.address, self.prefix, self.edge = tenant, site, host, address, prefix, edge

    def __repr__(self) -> str:
        return f"SiteHost({self.tenant}/{self.site} {self.host} {self.address} on {self.edge})"


def _host_address(topology: Any, host: str) -> IPv4Address | None:
    for local, _remote in topology.links_of(host):
        if local.address is not None:
            return local.address.ip
    return None


def _site_host(topology: Any, tenant: str, site: str, edge: str, interface: str, prefix: IPv4Network) -> SiteHost | None:
    remote = topology.peer_of(edge, interface)
    if remote is None or topology.is_router(remote.node):
        return None
    addr = _host_address(topology, remote.node)
    if addr is None:
        return None
    return SiteHost(tenant, site, remote.node, addr, prefix, edge)


def site_hosts(configs: dict[str, DeviceConfig], topology: Any) -> list[SiteHost]:
    """The tenant sites of ``configs`` whose host is a node of ``topology``, in topology host
    order (ties: by service id)."""
    order = {h: i for i, h in enumerate(topology.hosts)}
    out = []
    for s in Inventory(configs).list_services("tenant-site"):
        sp = s.spec
        sh = _site_host(topology, sp.tenant, sp.site, sp.edge, sp.interface, sp.prefix)
        if sh is not None:
            out.append(sh)
    return sorted(out, key=lambda x: (order.get(x.host, len(order)), x.tenant, x.site))


def loopbacks(configs: dict[str, DeviceConfig], topology: Any) -> dict[str, IPv4Address]:
    """``{router: first address of interface lo}``, in topology router order."""
    out = {}
    for r in topology.routers:
        cfg = configs.get(r)
        lo = cfg.interfaces.get("lo") if cfg is not None else None
        if lo is not None and lo.addresses:
            out[r] = lo.addresses[0].ip
    return out


def _reach(a: SiteHost, b: SiteHost, expect: bool, service: str) -> ReachCheck:
    return ReachCheck(src=a.host, dst=b.address, dst_node=b.host, expect=expect, service=service)


def baseline_checks(
    configs: dict[str, DeviceConfig],
    topology: Any,
    *,
    tenants: Iterable[str] | None = None,
    routers: Iterable[str] | None = None,
    sites: list[SiteHost] | None = None,
) -> list[Check]:
    """The baseline invariants of ``configs`` on ``topology`` (as ``baseline_invariants`` of a
    scenario), restricted to ``tenants`` (reach / isolation pairs involving them; None: all)
    and ``routers`` (BGP sessions and loopback pairs with a touched end; None: all).
    ``sites``: the existing sites (default :func:`site_hosts` of ``configs``)."""
    tset = None if tenants is None else set(tenants)
    rset = None if routers is None else set(routers)
    sites = site_hosts(configs, topology) if sites is None else sites
    out: list[Check] = []
    for a, b in combinations(sites, 2):
        same = a.tenant == b.tenant
        if tset is not None and a.tenant not in tset and b.tenant not in tset:
            continue
        out.append(_reach(a, b, same, f"tenant:{a.tenant}" if same else "isolation"))
    loops = loopbacks(configs, topology)
    by_addr = {ip: r for r, ip in loops.items()}
    for router in topology.routers:
        cfg = configs.get(router)
        if cfg is None or cfg.bgp is None:
            continue
        for nb in (IPv4Address(n) for n in cfg.bgp.neighbors):
            if nb in by_addr and by_addr[nb] != router:
                if rset is None or router in rset or by_addr[nb] in rset:
                    out.append(BgpSessionCheck(router=router, neighbor=nb, service="bgp"))
    for src, dst in ((s, d) for s in loops for d in loops if s != d):
        if rset is None or src in rset or dst in rset:
            out.append(LoopbackCheck(router=src, address=loops[dst], source=loops[src],
                                     name=f"loopback {src} -> {dst} ({loops[dst]})", service="underlay"))
    return out


def _named_networks(ch: Any) -> list[IPv4Network]:
    """Prefixes / addresses a change names, as networks (for the overlap with tenant sites)."""
    if ch.type == "static-route":
        return [ch.prefix]
    if ch.type == "floating-address":
        return [ch.address.network, IPv4Network(f"{ch.address.ip}/32")]
    if ch.type == "prefix-list-entry" and ch.prefix is not None:
        return [ch.prefix]
    return []


def touched_tenants(changes: list[Any], before: dict[str, DeviceConfig], after: dict[str, DeviceConfig],
                    routers: Iterable[str]) -> list[str]:
    """Tenants the changes touch (see the module doc), sorted."""
    rset = set(routers)
    inv_b, inv_a = Inventory(before), Inventory(after)
    known = set(inv_b.tenants()) | set(inv_a.tenants())
    sites = [s.spec for s in inv_b.list_services("tenant-site")] + [s.spec for s in inv_a.list_services("tenant-site")]
    out: set[str] = set()
    for ch in changes:
        if ch.type == "tenant-site":
            out.add(ch.tenant)
        elif ch.type == "tenant-firewall":
            out.add(ch.tenant)
            out |= set(ch.isolate_from) if ch.isolate_from is not None else (known - {ch.tenant})
        for net in _named_networks(ch):
            out |= {sp.tenant for sp in sites if sp.prefix.overlaps(net)}
    out |= {sp.tenant for sp in sites if sp.edge in rset}
    return sorted(out)


def active_checks(changes: list[Any], before: dict[str, DeviceConfig], compiled: Any, topology: Any) -> list[Check]:
    """The checks a transaction applying ``compiled`` (a ``CompileResult`` of ``changes``
    against ``before``, ``{router: DeviceConfig}`` of every router now) runs as active
    validation on ``topology`` (``ani.lab.topology.Topology``): the service's own checks, then
    the baseline invariants of what it touches (see the module doc). ``changes``: models or
    mappings (``compiled.changes``, with allocations filled in, is best)."""
    models = parse_changes(list(compiled.changes) if getattr(compiled, "changes", None) else changes)
    after = {**before, **compiled.configs}
    routers = sorted(compiled.configs)
    tenants = touched_tenants(models, before, after, routers)

    own_ids: list[str] = []  # sites with their own checks: onboarded or moved
    gone: set[tuple[str, str]] = set()  # (tenant, site) removed or moved: not existing sites
    for ch in models:
        if ch.type == "tenant-site":
            gone.add((ch.tenant, ch.site))
            if ch.action in ("onboard", "move") and ch.service_id() not in own_ids:
                own_ids.append(ch.service_id())
    existing = [s for s in site_hosts(before, topology) if (s.tenant, s.site) not in gone]
    after_sites = {f"tenant-site/{s.tenant}/{s.site}": s for s in site_hosts(after, topology)}

    specs = {s.id: s.spec for s in Inventory(after).list_services("tenant-site")}
    out: list[Check] = []
    for sid in own_ids:
        me = after_sites.get(sid)
        if me is not None:  # else the site's host is not a node of the topology: nothing to ping from
            for other in after_sites.values():
                if other.host != me.host:
                    out.append(_reach(me, other, other.tenant == me.tenant, sid))
        spec = specs.get(sid)
        if spec is None:
            continue
        # the route reached the tenant's other edges: each pings the site's gateway
        edges = {sp.edge for sp in specs.values() if sp.tenant == spec.tenant} - {spec.edge}
        for r in (r for r in topology.routers if r in edges):
            out.append(ReachCheck(src=r, dst=spec.gateway, dst_node=spec.edge, expect=True, service=sid))
    out += baseline_checks(before, topology, tenants=tenants, routers=routers, sites=existing)
    return out
