"""Service class ``tenant-site``: a site of a tenant on an edge router.

A site is a prefix whose gateway address is on an edge router's interface (``to-<site>`` by
default), advertised through the edge's shared tenant prefix-list (the one matched by the
route-map of ``redistribute connected``, :func:`~ani.intents.services.common.tenant_list`) and
put in the nftables set ``tenant_<tenant>`` of every router that has it.

::

    {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2"}
    # -> e2: interface to-nsite 198.19.0.1/24; ip prefix-list PL-TENANTS seq <free> permit 198.19.0.0/24;
    #    set tenant_blue += 198.19.0.0/24 on every router that has the set

- changes: :class:`TenantSiteOnboard`, :class:`TenantSiteMove`, :class:`TenantSiteRemove`;
  service id ``tenant-site/<tenant>/<site>``.
- allocate: an onboard without ``prefix`` takes one from the tenant's site pool
  (``Pools.site_prefix``), without ``gateway`` the prefix's first address, without
  ``interface`` ``to-<site>``; the prefix-list seq comes from the list's seq pool.
- discover: on a router whose ``redistribute connected`` route-map matches a prefix-list, each
  permit entry with a prefix that an interface address of the router lies in; the tenant is the
  one whose nftables set ``tenant_<t>`` holds the prefix (on any router); the site name is the
  interface name without ``to-``.
- invariants: every pair of sites whose host is a node of the topology (:func:`site_hosts`, in
  topology host order): ``reach`` between sites of the same tenant (service ``tenant:<t>``),
  ``reach expect=False`` between sites of different tenants (service ``isolation``); one check
  per unordered pair (a ping tests both directions).
- shares: the edge's tenant prefix-list (and its seq pool), the sets ``tenant_<t>``.
"""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from itertools import combinations
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from ani.device.model import FirewallSet, Interface, PrefixList, PrefixListEntry, RouteMap, RouteMapEntry
from ani.errors import GeneratorError
from ani.intents.errors import IntentError, PoolExhausted
from ani.intents.services.base import ServiceClass, Touched, register
from ani.intents.services.common import (
    IfName,
    Intent,
    IntentRemove,
    RouterName,
    Service,
    TenantName,
    add_entry,
    inventory,
    router,
    tenant_list,
    tenant_of,
    tenant_set,
)
from ani.intents.services.realism import SITE_AREA, ZIPF, SitePicker, edge_ranks, layer_options

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.intents.inventory import Inventory
    from ani.intents.pools import Pools
    from ani.observer.checks import Check, ReachCheck
    from ani.scenario.build import Build, Layer

__all__ = ["SiteHost", "TenantSite", "TenantSiteMove", "TenantSiteOnboard", "TenantSiteRemove", "site_hosts"]


# -- models ---------------------------------------------------------------------------------------


class _TenantSite(Intent):
    """A site of a tenant: a prefix whose gateway address is on an edge router's interface,
    advertised through the edge's shared tenant prefix-list and put in the nftables set
    ``tenant_<tenant>`` of every router that has it."""

    type: Literal["tenant-site"] = "tenant-site"
    tenant: TenantName = Field(description="the tenant the site belongs to")
    site: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_\-]{0,30}$")] = Field(
        description="the site's name (its host node, e.g. nsite); unique within the tenant"
    )
    edge: RouterName | None = Field(
        default=None, description="onboard: the edge router; move: the new edge; remove: ignored if None, checked if set"
    )
    interface: IfName | None = Field(
        default=None, description="the edge interface facing the site (default to-<site>)"
    )
    prefix: IPv4Network | None = Field(
        default=None, description="the site's prefix; onboard without it allocates one from the site pool"
    )
    gateway: IPv4Address | None = Field(
        default=None, description="the gateway address on the edge interface (default: first address of the prefix)"
    )

    def service_id(self) -> str:
        return f"tenant-site/{self.tenant}/{self.site}"


class TenantSiteOnboard(_TenantSite):
    """Attach a new site of an existing tenant to an edge router."""

    action: Literal["onboard"] = "onboard"
    edge: RouterName = Field(description="the edge router the site's host is cabled to")


class TenantSiteMove(_TenantSite):
    """Move an existing site to another edge (and / or interface); prefix and gateway are kept
    unless given."""

    action: Literal["move"] = "move"
    edge: RouterName = Field(description="the new edge router")


class TenantSiteRemove(IntentRemove, _TenantSite):
    """Detach an existing site: its prefix-list entry, gateway address and set elements go."""


# -- sites with a host in the topology (the invariants, and the active checks of A3-T / A4) -------


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
    for s in inventory(configs).list_services("tenant-site"):
        sp = s.spec
        sh = _site_host(topology, sp.tenant, sp.site, sp.edge, sp.interface, sp.prefix)
        if sh is not None:
            out.append(sh)
    return sorted(out, key=lambda x: (order.get(x.host, len(order)), x.tenant, x.site))


def reach(a: SiteHost, b: SiteHost, expect: bool, service: str) -> ReachCheck:
    """``reach`` from site ``a``'s host to site ``b``'s host (``expect`` False: must not)."""
    from ani.observer.checks import ReachCheck

    return ReachCheck(src=a.host, dst=b.address, dst_node=b.host, expect=expect, service=service)


def site_pairs(sites: Iterable[SiteHost], tenants: Iterable[str] | None = None) -> list[Check]:
    """One ``reach`` per unordered pair of ``sites`` (in order): same tenant ``tenant:<t>``,
    else ``isolation`` with ``expect=False``; only pairs with a site of ``tenants`` if given."""
    tset = None if tenants is None else set(tenants)
    out: list[Check] = []
    for a, b in combinations(sites, 2):
        if tset is not None and a.tenant not in tset and b.tenant not in tset:
            continue
        same = a.tenant == b.tenant
        out.append(reach(a, b, same, f"tenant:{a.tenant}" if same else "isolation"))
    return out


def _reflectors(configs: dict[str, DeviceConfig], topology: Any) -> list[str]:
    """Routers (topology order) that reflect iBGP routes to clients; else every BGP router."""
    bgp = [r for r in topology.routers if (c := configs.get(r)) is not None and c.bgp is not None]
    rr = [r for r in bgp if any(p.route_reflector_client for p in configs[r].bgp.ipv4_unicast.peers.values())]
    return rr or bgp


def site_routes(sites: Iterable[SiteHost], configs: dict[str, DeviceConfig], topology: Any,
                tenants: Iterable[str] | None = None) -> list[Check]:
    """One ``route`` per site (in order): its prefix is carried in BGP to the first route
    reflector other than its edge, service ``tenant:<t>``; only sites of ``tenants`` if given.

    The reach pairs alone do not protect a site's announcement when every site of its tenant
    sits on one edge (their traffic never leaves it): withdrawing the prefix would go unseen."""
    from ani.observer.checks import RouteCheck

    tset = None if tenants is None else set(tenants)
    rrs = _reflectors(configs, topology)
    out: list[Check] = []
    for a in sites:
        if tset is not None and a.tenant not in tset:
            continue
        at = next((r for r in rrs if r != a.edge), None)
        if at is not None:
            out.append(RouteCheck(router=at, prefix=a.prefix, service=f"tenant:{a.tenant}"))
    return out


# -- check ----------------------------------------------------------------------------------------


def _prefix_owner(inv: Inventory, state: dict[str, DeviceConfig], prefix: IPv4Network, skip: str | None = None) -> str | None:
    """The service or router interface already using a network overlapping ``prefix``."""
    for s in inv.list_services("tenant-site"):
        if s.id != skip and s.spec.prefix.overlaps(prefix):
            return f"{s.id} ({s.spec.prefix})"
    for r, cfg in state.items():
        for ifname, iface in cfg.interfaces.items():
            for a in iface.addresses:
                if a.network.prefixlen < 32 and a.network.overlaps(prefix):
                    if skip is not None and (sp := inv.get_service(skip)) and sp.spec.prefix == a.network:
                        continue
                    return f"{r} interface {ifname} ({a.network})"
    return None


def _check(ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
    inv = inventory(state)
    sid = ch.service_id()
    existing = inv.get_service(sid)
    if ch.action == "onboard" and existing is not None:
        raise IntentError("service-exists", f"{sid} already exists on {existing.spec.edge}", path)
    if ch.action in ("move", "remove") and existing is None:
        raise IntentError("service-not-found", f"no service {sid}", path)
    if ch.action == "remove":
        if ch.edge is not None and ch.edge != existing.spec.edge:
            raise IntentError("invalid", f"{sid} is on {existing.spec.edge}, not {ch.edge}", f"{path}.edge")
        return
    if tenant_set(ch.tenant) not in {n for c in state.values() if c.firewall for n in c.firewall.sets} and ch.tenant not in inv.tenants():
        raise IntentError("unknown-reference", f"unknown tenant {ch.tenant!r} (no nftables set {tenant_set(ch.tenant)})", f"{path}.tenant")
    cfg = router(state, ch.edge, f"{path}.edge")
    plist = tenant_list(cfg)
    if plist is None:
        raise IntentError("unknown-reference", f"{ch.edge} has no prefix-list behind 'redistribute connected route-map'", f"{path}.edge")
    if ch.edge not in [r for r, c in state.items() if c.firewall and tenant_set(ch.tenant) in c.firewall.sets]:
        raise IntentError("unknown-reference", f"{ch.edge} has no nftables set {tenant_set(ch.tenant)}", f"{path}.edge")
    prefix = ch.prefix if ch.prefix is not None else (existing.spec.prefix if existing else None)
    if prefix is None:  # not allocated yet: checked again once it is
        return
    if prefix.prefixlen == 32:
        raise IntentError("invalid", f"{prefix} has no room for a gateway and a host: a site prefix is /31 or shorter",
                          f"{path}.prefix")
    gateway = ch.gateway if ch.gateway is not None else (existing.spec.gateway if existing else None)
    if gateway is not None and gateway not in prefix:
        raise IntentError("invalid", f"gateway {gateway} is not in {prefix}", f"{path}.gateway")
    if gateway is not None and gateway in (prefix.network_address, prefix.broadcast_address) and prefix.prefixlen < 31:
        raise IntentError("invalid", f"gateway {gateway} is not a host address of {prefix}", f"{path}.gateway")
    owner = _prefix_owner(inv, state, prefix, skip=sid if existing else None)
    if owner is not None:
        raise IntentError("prefix-overlap", f"{prefix} overlaps {owner}", f"{path}.prefix")
    other = inv.tenant_of(prefix)
    if other is not None and other != ch.tenant:
        raise IntentError("prefix-overlap", f"{prefix} is in the nftables set of tenant {other}", f"{path}.prefix")
    iface = cfg.interfaces.get(ch.interface or f"to-{ch.site}")
    if iface is not None and iface.addresses and not (existing and existing.spec.edge == ch.edge and existing.spec.interface == ch.interface):
        raise IntentError("address-conflict", f"{ch.edge} interface {ch.interface} already has {', '.join(map(str, iface.addresses))}", f"{path}.interface")


# -- allocate -------------------------------------------------------------------------------------


def _allocate(ch: Any, path: str, pools: Pools, alloc: dict[str, Any]) -> Any:
    """Fill in what the change leaves to the pools (site prefix, gateway, interface)."""
    upd: dict[str, Any] = {}
    if ch.action == "onboard":
        if ch.prefix is None:
            if not pools.has_site_pool(ch.tenant):
                raise IntentError("invalid", "no prefix given and there is no site pool to allocate one from "
                                  "(adapter option site_network is not set): give the site's prefix", f"{path}.prefix")
            try:
                upd["prefix"] = pools.site_prefix(ch.tenant).allocate()
            except PoolExhausted as exc:
                raise PoolExhausted(exc.pool, exc.size, f"{path}.prefix") from None
            alloc[f"{path}.prefix"] = str(upd["prefix"])
        prefix = upd.get("prefix", ch.prefix)
        if ch.gateway is None:
            upd["gateway"] = pools.gateway(prefix)
            alloc[f"{path}.gateway"] = str(upd["gateway"])
        if ch.interface is None:
            upd["interface"] = f"to-{ch.site}"
    elif ch.action == "move":
        if ch.interface is None:
            upd["interface"] = f"to-{ch.site}"
    return ch.model_copy(update=upd) if upd else ch


# -- apply ----------------------------------------------------------------------------------------


def _attach(state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any], path: str,
            tenant: str, edge: str, ifname: str, prefix: IPv4Network, gateway: Any, seq: int | None = None) -> None:
    cfg = state[edge]
    plist = tenant_list(cfg)
    assert plist is not None  # checked
    lst = cfg.prefix_lists.get(plist)
    if lst is None or not any(e.prefix == prefix for e in lst.entries):
        if seq is None or (lst is not None and any(e.seq == seq for e in lst.entries)):
            seq = pools.seq(edge, plist).allocate()
        else:
            pools.seq(edge, plist).used.add(seq)
        alloc[f"{path}.seq/{edge}/{plist}"] = seq
        add_entry(cfg.prefix_lists, plist, PrefixListEntry(seq=seq, action="permit", prefix=prefix), PrefixList)
    iface = cfg.interfaces.get(ifname, Interface())
    cfg.interfaces[ifname] = iface.model_copy(update={"addresses": [*iface.addresses, IPv4Interface(f"{gateway}/{prefix.prefixlen}")]})
    _set_element(state, tenant, prefix, add=True)


def _detach(state: dict[str, DeviceConfig], spec: Any, *, keep_set: bool = False) -> int | None:
    """Remove a site's entry and address from its edge; returns the seq it had."""
    cfg = state[spec.edge]
    plist = tenant_list(cfg)
    seq = None
    if plist and plist in cfg.prefix_lists:
        entries = cfg.prefix_lists[plist].entries
        seq = next((e.seq for e in entries if e.prefix == spec.prefix), None)
        rest = [e for e in entries if e.prefix != spec.prefix]
        if rest:
            cfg.prefix_lists[plist] = PrefixList(entries=rest)
        else:
            del cfg.prefix_lists[plist]
    iface = cfg.interfaces.get(spec.interface)
    if iface is not None:
        addrs = [a for a in iface.addresses if a.ip != spec.gateway]
        cfg.interfaces[spec.interface] = iface.model_copy(update={"addresses": addrs})
    if not keep_set:
        _set_element(state, spec.tenant, spec.prefix, add=False)
    return seq


def _set_element(state: dict[str, DeviceConfig], tenant: str, prefix: IPv4Network, *, add: bool) -> None:
    """Add / remove ``prefix`` in set ``tenant_<tenant>`` on every router that has the set."""
    name = tenant_set(tenant)
    for cfg in state.values():
        if cfg.firewall is None or name not in cfg.firewall.sets:
            continue
        elems = [e for e in cfg.firewall.sets[name].elements if e != prefix]
        if add:
            elems.append(prefix)
        cfg.firewall.sets[name] = FirewallSet(elements=elems)


def _apply(ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> None:
    if ch.action == "onboard":
        _attach(state, pools, alloc, path, ch.tenant, ch.edge, ch.interface, ch.prefix, ch.gateway)
        return
    old = inventory(state).get_service(ch.service_id()).spec
    if ch.action == "remove":
        _detach(state, old)
        return
    # move: the seq of the old entry is kept when it is free on the new edge
    seq = _detach(state, old, keep_set=True)
    prefix = ch.prefix or old.prefix
    gateway = ch.gateway or (old.gateway if prefix == old.prefix else pools.gateway(prefix))
    if prefix != old.prefix:
        _set_element(state, old.tenant, old.prefix, add=False)
    _attach(state, pools, alloc, path, ch.tenant, ch.edge, ch.interface, prefix, gateway, seq)


# -- discover -------------------------------------------------------------------------------------


def _discover(configs: dict[str, DeviceConfig]) -> list[Service]:
    out = []
    for r, cfg in configs.items():
        plist = tenant_list(cfg)
        if plist is None or plist not in cfg.prefix_lists:
            continue
        for e in cfg.prefix_lists[plist].entries:
            if e.prefix is None or e.action != "permit":
                continue
            for ifname, iface in cfg.interfaces.items():
                addr = next((a for a in iface.addresses if a.ip in e.prefix), None)
                if addr is None:
                    continue
                tenant = tenant_of(configs, e.prefix)
                if tenant is None:
                    continue
                site = ifname[3:] if ifname.startswith("to-") else ifname
                spec = TenantSiteOnboard(
                    tenant=tenant, site=site, edge=r, interface=ifname, prefix=e.prefix, gateway=addr.ip
                )
                out.append(Service(spec.service_id(), "tenant-site", spec, [r]))
                break
    return out


# -- the class ------------------------------------------------------------------------------------



# -- generator -----------------------------------------------------------------------------------

#: shared state names of the generated brownfield (kept from brownfield-small)
PREFIX_LIST, ROUTE_MAP = "PL-TENANTS", "RM-TENANTS-OUT"
#: sites every tenant gets (round-robin, manifest order) before tenants are drawn by Zipf rank
FIRST_SITES = 2
#: host names are <tenant><n>: node names have at most 10 characters
MAX_NODE = 10


def _generate(build: Build, layer: Layer) -> None:
    """``layer.density`` tenant sites: a host ``<tenant><n>`` (eth0 .10/24, default route via .1)
    cabled to an edge's ``to-<host>``, the gateway .1 on that interface, the /24 in the edge's
    shared prefix-list ``PL-TENANTS`` (next seq, steps of 10) behind route-map ``RM-TENANTS-OUT``
    on ``redistribute connected`` (created on every edge if missing), and in nftables set
    ``tenant_<t>`` wherever that set exists. The first sites go one per tenant (in manifest
    order, twice), then tenants and edges are drawn by Zipf rank. Prefixes: a random free /24 of the
    tenant's share of 198.18.0.0/16 not adjacent to another tenant's site; a trap (``trap_rate``)
    takes the free /24 next to a random other tenant's site and, when one fits, a name extending
    one of its tenant's site names. Option ``zipf`` (float). Raises GeneratorError: no edges, no
    tenants, no free /24 left, a firewall without the tenant's set (order the layers)."""
    opts = layer_options(layer, {"zipf": float})
    s = float(opts.get("zipf", ZIPF))
    rng = build.rng(layer.stream)
    edges = edge_ranks(build, rng)
    tenants = list(build.tenants)
    if not tenants:
        raise GeneratorError("needs tenants (manifest tenants:)")
    picker = SitePicker(build, rng, tenants, MAX_NODE)
    have_sites = any(build.tenants.values())
    for i in range(layer.density):
        if i < FIRST_SITES * len(tenants) and not have_sites:
            tenant = tenants[i % len(tenants)]  # every tenant gets its first sites before the skew
        else:
            tenant = build.zipf_choice(rng, tenants, s)
        edge = build.zipf_choice(rng, edges, s)
        trap = rng.random() < layer.trap_rate
        prefix = picker.prefix(tenant, trap)
        host = picker.name(tenant, trap)
        picker.owner[prefix] = tenant
        _add_site(build, tenant, edge, host, prefix)
    # the shared route-map and redistribution on every edge (the brownfield's convention, also
    # where no site is yet: a site onboarded there later follows it)
    for e in build.routers("edge"):
        cfg = build.configs[e]
        if ROUTE_MAP not in cfg.route_maps:
            cfg.route_maps[ROUTE_MAP] = RouteMap(entries=[RouteMapEntry(seq=10, action="permit", match_prefix_list=PREFIX_LIST)])
        if cfg.bgp is not None and "connected" not in cfg.bgp.ipv4_unicast.redistribute:
            cfg.bgp.ipv4_unicast.redistribute["connected"] = ROUTE_MAP


def _add_site(build: Build, tenant: str, edge: str, host: str, prefix: IPv4Network) -> None:
    """Cable ``host`` to ``edge`` with the gateway .1 and the host .10 of ``prefix``; the /24 in
    the edge's prefix-list (next seq) and in every firewall's set of the tenant (GeneratorError:
    a firewall without it); the site recorded in the build."""
    gateway, addr = prefix[1], prefix[10]
    build.used.append(prefix)
    build.add_host(host, edge, f"to-{host}", IPv4Interface(f"{addr}/24"), gateway)
    cfg = build.configs[edge]
    cfg.interfaces[f"to-{host}"] = Interface(addresses=[IPv4Interface(f"{gateway}/24")])
    old = cfg.prefix_lists.get(PREFIX_LIST)
    seq = (max((e.seq for e in old.entries), default=0) // 10 + 1) * 10 if old else 10
    add_entry(cfg.prefix_lists, PREFIX_LIST, PrefixListEntry(seq=seq, action="permit", prefix=prefix), PrefixList)
    set_name = tenant_set(tenant)
    for r, c in build.configs.items():
        if c.firewall is None:
            continue
        if set_name not in c.firewall.sets:
            raise GeneratorError(f"{r} has a firewall without set {set_name}: put the tenant-site layers "
                                 "before the tenant-firewall layer")
        elems = c.firewall.sets[set_name].elements
        c.firewall.sets[set_name] = FirewallSet(elements=[*elems, prefix])
    build.tenants[tenant].append({"host": host, "edge": edge, "prefix": str(prefix), "gateway": str(gateway)})
    build.instances.setdefault("tenant-site", []).append(f"tenant-site/{tenant}/{host}")


@register
class TenantSite(ServiceClass):
    """Tenant sites (see the module doc)."""

    name = "tenant-site"
    changes = (TenantSiteOnboard, TenantSiteMove, TenantSiteRemove)
    id_format = "tenant-site/<tenant>/<site>"
    description = ("A site of a tenant: a prefix with its gateway on an edge router's interface, advertised through "
                   "the edge's tenant prefix-list and put in the nftables set tenant_<tenant> of every router that "
                   "has it. onboard (prefix / gateway allocated when omitted), move, remove.")
    pinned = {"onboard": ("prefix", "gateway")}
    shares = ("the edge's tenant prefix-list (redistribute connected route-map) and its seqs",
              "nftables sets tenant_<t> on every router that has them")

    def check(self, ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
        _check(ch, path, state)

    def allocate(self, ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> Any:
        return _allocate(ch, path, pools, alloc)

    def apply(self, ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> None:
        _apply(ch, path, state, pools, alloc)

    def discover(self, configs: dict[str, DeviceConfig]) -> list[Service]:
        return _discover(configs)

    def invariants(self, configs: dict[str, DeviceConfig], topology: Any) -> list[Check]:
        """Reach / isolation between every pair of sites (:func:`site_pairs`), then each
        site's prefix on a route reflector (:func:`site_routes`)."""
        sites = site_hosts(configs, topology)
        return site_pairs(sites) + site_routes(sites, configs, topology)

    def touched_invariants(self, configs: dict[str, DeviceConfig], topology: Any, touched: Touched) -> list[Check]:
        # existing sites: not those the changes remove or move (a moved one gets its own checks)
        gone = {(ch.tenant, ch.site) for ch in touched.changes if ch.type == self.name}
        sites = site_hosts(configs, topology) if touched.sites is None else touched.sites
        kept = [s for s in sites if (s.tenant, s.site) not in gone]
        return site_pairs(kept, touched.tenants) + site_routes(kept, configs, topology, touched.tenants)

    def named_tenants(self, ch: Any, known: set[str]) -> set[str]:
        return {ch.tenant}

    def own_checks(self, changes: list[Any], before: dict[str, DeviceConfig], after: dict[str, DeviceConfig],
                   topology: Any) -> list[Check]:
        """An onboarded or moved site's host reaches every other site of its tenant and no
        site of another (when the host is a node of the topology); then every other edge
        with a site of the tenant reaches the site's gateway (the prefix was carried there).
        Service ``tenant-site/<tenant>/<site>``."""
        from ani.observer.checks import ReachCheck

        own_ids: list[str] = []  # sites with their own checks: onboarded or moved
        for ch in changes:
            if ch.action in ("onboard", "move") and ch.service_id() not in own_ids:
                own_ids.append(ch.service_id())
        after_sites = {f"tenant-site/{s.tenant}/{s.site}": s for s in site_hosts(after, topology)}
        specs = {s.id: s.spec for s in inventory(after).list_services(self.name)}
        out: list[Check] = []
        for sid in own_ids:
            me = after_sites.get(sid)
            if me is not None:  # else the site's host is not a node of the topology: nothing to ping from
                for other in after_sites.values():
                    if other.host != me.host:
                        out.append(reach(me, other, other.tenant == me.tenant, sid))
            spec = specs.get(sid)
            if spec is None:
                continue
            # the route reached the tenant's other edges: each pings the site's gateway
            edges = {sp.edge for sp in specs.values() if sp.tenant == spec.tenant} - {spec.edge}
            for r in (r for r in topology.routers if r in edges):
                out.append(ReachCheck(src=r, dst=spec.gateway, dst_node=spec.edge, expect=True, service=sid))
        return out

    def generate(self, build: Build, layer: Layer) -> None:
        _generate(build, layer)
