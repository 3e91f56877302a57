"""Generator layers of the existing service classes: ``generate(build, layer)`` per class.

:data:`GENERATORS` maps a class name to its function; ``ani.scenario.generate`` calls it for
each manifest layer (a class registered in ``ani.intents.services`` with a ``generate`` of its
own takes precedence). Each function is self-contained (it moves into its class module,
``ani/intents/services/<class>.py``, as that class's ``generate``): it checks its prerequisites,
draws ``layer.density`` instances from ``build.rng(layer.stream)`` as device-model state,
records their service ids in ``build.instances[<class>]`` and appends their own baseline
invariants to ``build.invariants`` (the reach / isolation / BGP / underlay invariants are
computed from the scenario's content). Errors: GeneratorError (the generator prefixes the
layer, ``layers.2 (tenant-firewall): ...``).

Realism knobs (see ``docs/scenarios.md``):

- skew: edges and tenants are drawn by Zipf rank (``Build.zipf_choice``, exponent option
  ``zipf``, default 1.1); the rank order of the edges is a seeded shuffle, so which edges are
  loaded changes with the seed;
- ``trap_rate``: the share of instances placed as traps: a tenant site whose /24 is adjacent to
  another tenant's site (the two make a /23) and whose name extends another site's name of its
  tenant (``blue3`` / ``blue31``: one grep or one regex catches both); a floating address next
  to another one on another edge, or inside another edge's site prefix (a longest-match
  shadow); a static discard route for exactly another edge's site prefix, harmless only
  because its distance is above iBGP's 200.
"""

from __future__ import annotations

from collections.abc import Callable
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Any

from ani.device.model import (
    Firewall,
    FirewallRule,
    FirewallSet,
    Interface,
    PrefixList,
    PrefixListEntry,
    RouteMap,
    RouteMapEntry,
    StaticRoute,
)
from ani.errors import GeneratorError
from ani.intents.services.common import add_entry, loopback, tenant_set
from ani.observer.checks import LoopbackCheck, RouteCheck
from ani.scenario.build import Build, Layer

#: where tenant sites live: 198.18.0.0/15 without the free pool 198.19.0.0/16 (kept for tasks)
SITE_AREA = IPv4Network("198.18.0.0/16")
#: the free pool new sites get their prefix from (tasks); no layer allocates in it
SITE_POOL = IPv4Network("198.19.0.0/16")
#: shared state names (kept from brownfield-small)
PREFIX_LIST, ROUTE_MAP = "PL-TENANTS", "RM-TENANTS-OUT"
#: floating (service) addresses: /32s on the loopback of edges
FLOAT_AREA = IPv4Network("198.51.100.0/24")
#: sites every tenant gets (round-robin, manifest order) before tenants are drawn by Zipf rank
FIRST_SITES = 2
#: host names are <tenant><n>: node names have at most 10 characters
MAX_NODE = 10


def _options(layer: Layer, known: dict[str, type]) -> dict[str, Any]:
    """``layer.options`` checked against ``known`` ({name: type}). Raises GeneratorError."""
    for k, v in layer.options.items():
        if k not in known:
            raise GeneratorError(f"options.{k}: unknown option (known: {', '.join(known) or 'none'})")
        if not isinstance(v, known[k]) or isinstance(v, bool):
            raise GeneratorError(f"options.{k}: must be a {known[k].__name__}, got {v!r}")
    return dict(layer.options)


def _edge_ranks(build: Build, rng: Any) -> list[str]:
    edges = build.routers("edge")
    if not edges:
        raise GeneratorError("needs edge routers (topology.edges)")
    ranked = list(edges)
    rng.shuffle(ranked)
    return ranked


# -- tenant-site -------------------------------------------------------------------------------


def tenant_site(build: Build, layer: Layer) -> None:
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
    opts = _options(layer, {"zipf": float})
    s = float(opts.get("zipf", 1.1))
    rng = build.rng(layer.stream)
    edges = _edge_ranks(build, rng)
    tenants = list(build.tenants)
    if not tenants:
        raise GeneratorError("needs tenants (manifest tenants:)")
    slots = list(SITE_AREA.subnets(new_prefix=24))
    share = len(slots) // len(tenants)
    region = {t: slots[i * share : (i + 1) * share] for i, t in enumerate(tenants)}
    owner: dict[IPv4Network, str] = {IPv4Network(x["prefix"]): t for t, sites in build.tenants.items() for x in sites}

    blocked = {n for n in slots if not build.is_free(n)}  # once: is_free scans every used network

    def free(net: IPv4Network) -> bool:
        return net not in owner and net not in blocked

    def neighbours(net: IPv4Network) -> list[IPv4Network]:
        out = []
        for delta in (-256, 256):
            addr = int(net.network_address) + delta
            cand = IPv4Network(f"{IPv4Address(addr)}/24")
            if cand.subnet_of(SITE_AREA):
                out.append(cand)
        return out

    def next_to_other(net: IPv4Network, tenant: str) -> bool:
        return any(owner.get(n, tenant) != tenant for n in neighbours(net))

    def pick_prefix(tenant: str, trap: bool) -> IPv4Network:
        if trap:
            cands = sorted({n for p, t in owner.items() if t != tenant for n in neighbours(p) if free(n)},
                           key=lambda n: int(n.network_address))
            if cands:
                return rng.choice(cands)
        cands = [n for n in region[tenant] if free(n) and not next_to_other(n, tenant)]
        if not cands:
            raise GeneratorError(f"no free /24 left for tenant {tenant} in {SITE_AREA} "
                                 f"({len(region[tenant])} per tenant): lower the density")
        return rng.choice(cands)

    def pick_name(tenant: str, trap: bool) -> str:
        taken = build.nodes()
        mine = sorted(int(x["host"][len(tenant):]) for x in build.tenants[tenant])
        if trap:
            cands = [f"{tenant}{m * 10 + d}" for m in mine for d in range(10)]
            cands = [c for c in cands if len(c) <= MAX_NODE and c not in taken]
            if cands:
                return rng.choice(cands)
        n = 1
        while f"{tenant}{n}" in taken:
            n += 1
        name = f"{tenant}{n}"
        if len(name) > MAX_NODE:
            raise GeneratorError(f"site name {name!r} is longer than {MAX_NODE} characters: use a shorter tenant name")
        return name

    have_sites = any(build.tenants.values())
    for i in range(layer.density):
        if i < FIRST_SITES * len(tenants) and not have_sites:
            tenant = tenants[i % len(tenants)]  # every tenant gets its first sites before the skew
        else:
            tenant = build.zipf_choice(rng, tenants, s)
        edge = build.zipf_choice(rng, edges, s)
        trap = rng.random() < layer.trap_rate
        prefix = pick_prefix(tenant, trap)
        host = pick_name(tenant, trap)
        gateway, addr = prefix[1], prefix[10]
        build.used.append(prefix)
        owner[prefix] = tenant
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
    # the shared route-map and redistribution on every edge (the brownfield's convention, also
    # where no site is yet: a site onboarded there later follows it)
    for e in build.routers("edge"):
        cfg = build.configs[e]
        if ROUTE_MAP not in cfg.route_maps:
            cfg.route_maps[ROUTE_MAP] = RouteMap(entries=[RouteMapEntry(seq=10, action="permit", match_prefix_list=PREFIX_LIST)])
        if cfg.bgp is not None and "connected" not in cfg.bgp.ipv4_unicast.redistribute:
            cfg.bgp.ipv4_unicast.redistribute["connected"] = ROUTE_MAP


# -- tenant-firewall ---------------------------------------------------------------------------


def tenant_firewall(build: Build, layer: Layer) -> None:
    """Tenant isolation on every edge: nftables ``table inet fw`` with a set ``tenant_<t>`` of each
    tenant's site prefixes and, in chain ``forward`` (policy accept), ``ip saddr @tenant_<a> ip
    daddr @tenant_<b> drop`` for every ordered pair of tenants. One instance per tenant with
    sites: isolation is a baseline invariant between every pair of tenants, so ``density`` does
    not apply (it is not a count of partial policies). Existing sets and rules are kept.
    Raises GeneratorError if there is no tenant site yet (put a tenant-site layer first)."""
    _options(layer, {})
    tenants = [t for t, sites in build.tenants.items() if sites]
    if not tenants:
        raise GeneratorError("needs tenant sites: put a tenant-site layer before it")
    for e in build.routers("edge"):
        cfg = build.configs[e]
        fw = cfg.firewall.model_copy(deep=True) if cfg.firewall is not None else Firewall()
        for t in tenants:
            name = tenant_set(t)
            have = set(fw.sets[name].elements) if name in fw.sets else set()
            fw.sets[name] = FirewallSet(elements=sorted(have | {IPv4Network(x["prefix"]) for x in build.tenants[t]},
                                                        key=lambda n: int(n.network_address)))
        for a in tenants:
            for b in tenants:
                rule = FirewallRule(saddr_set=tenant_set(a), daddr_set=tenant_set(b), action="drop")
                if a != b and rule not in fw.forward_rules:
                    fw.forward_rules.append(rule)
        cfg.firewall = Firewall.model_validate(fw.model_dump())
    build.instances.setdefault("tenant-firewall", []).extend(f"tenant-firewall/{t}" for t in tenants)


# -- floating-address --------------------------------------------------------------------------


def floating_address(build: Build, layer: Layer) -> None:
    """``layer.density`` floating (service) addresses: a /32 of 198.51.100.0/24 on ``lo`` of an
    edge drawn by Zipf rank; ``lo`` is in OSPF area 0, so the underlay carries it. A trap
    (``trap_rate``) is the address next to a floating address of another edge (when there is
    one with a free neighbour), else an unused address (.200-.254) inside a site prefix of
    another edge: a /32 that longest-match shadows part of that site's /24. Invariants: each
    route reflector and the edge after the owner (in edge order) ping the address from their
    loopback (service ``floating-address/<address>``). Option ``zipf`` (float). Raises
    GeneratorError: no edges, 198.51.100.0/24 full."""
    opts = _options(layer, {"zipf": float})
    s = float(opts.get("zipf", 1.1))
    rng = build.rng(layer.stream)
    edges = _edge_ranks(build, rng)
    order = build.routers("edge")
    on: dict[IPv4Address, str] = {}
    for r, c in build.configs.items():
        lo = c.interfaces.get("lo")
        for a in (lo.addresses[1:] if lo else []):
            on[a.ip] = r
    taken = {a.ip for c in build.configs.values() for i in c.interfaces.values() for a in i.addresses}
    hosts = {ln.b.address.ip for ln in build.links if ln.b.address is not None}

    def usable(ip: IPv4Address) -> bool:
        return ip not in taken and ip not in hosts and ip not in on

    for _ in range(layer.density):
        edge = build.zipf_choice(rng, edges, s)
        trap = rng.random() < layer.trap_rate
        ip = None
        if trap:
            ends = {FLOAT_AREA.network_address, FLOAT_AREA.broadcast_address}
            near = sorted({ip0 + d for ip0, r in on.items() if r != edge for d in (-1, 1)
                           if (ip0 + d) in FLOAT_AREA and (ip0 + d) not in ends and usable(ip0 + d)})
            if near:
                ip = rng.choice(near)
            else:
                inside = [IPv4Network(x["prefix"]) for sites in build.tenants.values() for x in sites if x["edge"] != edge]
                cands = [p[k] for p in inside for k in range(200, 255) if usable(p[k])]
                if cands:
                    ip = rng.choice(cands)
        if ip is None:
            cands = [a for a in FLOAT_AREA.hosts() if usable(a) and a - 1 not in on and a + 1 not in on]
            if not cands:
                raise GeneratorError(f"no free address left in {FLOAT_AREA}: lower the density")
            ip = rng.choice(cands)
        on[ip] = edge
        cfg = build.configs[edge]
        lo = cfg.interfaces["lo"]
        cfg.interfaces["lo"] = lo.model_copy(update={"addresses": [*lo.addresses, IPv4Interface(f"{ip}/32")]})
        net = IPv4Network(f"{ip}/32")
        if build.is_free(net):
            build.used.append(net)
        sid = f"floating-address/{ip}"
        build.instances.setdefault("floating-address", []).append(sid)
        nxt = order[(order.index(edge) + 1) % len(order)]
        for src in [*build.route_reflectors, nxt]:
            if src == edge:
                continue
            build.invariants.append(LoopbackCheck(router=src, address=ip, source=loopback(build.configs[src]),
                                                  name=f"floating {ip} from {src}", service=sid))


# -- static-route ------------------------------------------------------------------------------


def static_route(build: Build, layer: Layer) -> None:
    """``layer.density`` static routes that blackhole nothing, on edges drawn by Zipf rank:

    - summary discard: ``ip route <the /23 of one of the edge's sites> Null0 254`` (its own /24
      is connected, a neighbouring site's /24 is a more specific BGP route); an edge without a
      site gets a backup route instead;
    - backup: ``ip route <another router's loopback>/32 <a p2p neighbour> D`` with D in
      200..254 (OSPF's 110 wins while the underlay has it);
    - trap (``trap_rate``): a discard route for exactly another edge's site /24 at distance
      201..254: harmless only because iBGP's 200 is lower.

    Invariant per route: its router has a route to exactly the prefix (``route``), service
    ``static-route/<router>/<prefix>/<next hop>``. Option ``zipf`` (float). Raises
    GeneratorError when no route can be drawn (no edge, an edge without links)."""
    opts = _options(layer, {"zipf": float})
    s = float(opts.get("zipf", 1.1))
    rng = build.rng(layer.stream)
    edges = _edge_ranks(build, rng)
    loops = {r: ip for r, c in build.configs.items() if (ip := loopback(c)) is not None}
    sites = [x for ss in build.tenants.values() for x in ss]
    for _ in range(layer.density):
        edge = build.zipf_choice(rng, edges, s)
        cfg = build.configs[edge]
        have = {(r.prefix, r.nexthop) for r in cfg.static_routes}
        trap = rng.random() < layer.trap_rate
        route = None
        for kind in (("shadow",) if trap else ()) + ("summary", "backup"):
            if kind == "shadow":
                cands = [IPv4Network(x["prefix"]) for x in sites if x["edge"] != edge]
                cands = [p for p in cands if (p, "Null0") not in have]
                if cands:
                    route = StaticRoute(prefix=rng.choice(cands), nexthop="Null0", distance=rng.randint(201, 254))
            elif kind == "summary":
                mine = [IPv4Network(x["prefix"]).supernet(new_prefix=23) for x in sites if x["edge"] == edge]
                mine = [p for p in mine if (p, "Null0") not in have]
                if mine and rng.random() < 0.5:
                    route = StaticRoute(prefix=rng.choice(mine), nexthop="Null0", distance=254)
            else:
                peers = []
                for ifname, iface in cfg.interfaces.items():
                    if ifname.startswith("to-") and iface.addresses and iface.addresses[0].network.prefixlen == 31:
                        a = iface.addresses[0]
                        other = next(x for x in a.network if x != a.ip)
                        peers.append(str(other))
                targets = [IPv4Network(f"{ip}/32") for r, ip in loops.items() if r != edge]
                cands = [(t, p) for t in targets for p in peers if (t, p) not in have]
                if cands:
                    t, p = rng.choice(cands)
                    route = StaticRoute(prefix=t, nexthop=p, distance=rng.randint(200, 254))
            if route is not None:
                break
        if route is None:
            raise GeneratorError(f"no static route left to draw on {edge}: lower the density")
        cfg.static_routes = [*cfg.static_routes, route]
        sid = f"static-route/{edge}/{route.prefix}/{route.nexthop}"
        build.instances.setdefault("static-route", []).append(sid)
        build.invariants.append(RouteCheck(router=edge, prefix=route.prefix, service=sid))


#: the generator of each existing service class, by class name
GENERATORS: dict[str, Callable[[Build, Layer], None]] = {
    "tenant-site": tenant_site,
    "tenant-firewall": tenant_firewall,
    "floating-address": floating_address,
    "static-route": static_route,
}
