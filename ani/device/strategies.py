"""Hypothesis strategies for :class:`~ani.device.model.DeviceConfig` (needs the dev extra).

``device_configs(hostname)`` draws configurations FRR 8.4 accepts and prints back unchanged, so
a rendered sample loaded into a real router must parse back to the same model. To stay inside
that set it avoids what FRR rejects or rewrites (see ``docs/device-model.md``): default values
(FRR does not print them), ``ip ospf network broadcast``, interface areas together with
``network ... area``, discard and forwarding next hops for one prefix, route-reflector-client on
eBGP peers, settings on peer-group members that the group already has, duplicate prefix-list
entries, and ``ip ospf passive`` under ``passive-interface default``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ani.device.model import Bgp, BgpAf, BgpAfPeer, DeviceConfig, Interface, InterfaceOspf, Ospf
from ani.device.model import OspfNetwork, Peer, PrefixList, PrefixListEntry, RouteMap, RouteMapEntry
from ani.device.model import Firewall, FirewallRule, FirewallSet, StaticRoute

IFNAMES = ("lo", "eth0", "eth1", "to-e2", "to-e10", "dummy3")
ADDRESSES = tuple(
    [f"10.{i}.0.1/24" for i in range(1, 7)]
    + [f"100.64.{i}.0/31" for i in range(4)]
    + [f"10.255.0.{i}/32" for i in range(1, 4)]
    + ["9.9.9.1/24", "172.16.5.1/28"]
)
PREFIXES = ("203.0.113.0/24", "198.51.100.0/24", "192.0.2.0/25", "10.200.0.0/16", "172.20.0.0/14", "10.200.0.0/24")
NEXTHOPS = ("192.0.2.1", "192.0.2.200", "10.1.0.2", "eth0", "to-e2")
AREAS = ("0", "1", "0.0.0.1")
PL_NAMES = ("PL-A", "PL-B", "PL-TENANTS")
RM_NAMES = ("RM-A", "RM-B", "RM-OUT")
WORDS = ("uplink", "to", "core", "site-7", "a_b", "R1")
COMMUNITIES = ("64500:1", "64500:2", "65000:100", "no-export")
SET_NAMES = ("BLUE", "RED", "mgmt_4", "Drop", "_x.y-z")  # names nft accepts (not a keyword in lower case)
#: pairwise disjoint (an nftables interval set refuses overlapping elements)
SET_ELEMENTS = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "10.1.0.0/16", "10.2.0.0/16",
                "198.18.11.0/24", "172.16.0.0/12", "10.9.9.9/32")

_text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)


def _opt(values):  # type: ignore[no-untyped-def]
    return st.sampled_from((None, *values))


@st.composite
def _interfaces(draw, ospf_areas: bool, ospf: bool, passive_default: bool) -> dict[str, Interface]:  # type: ignore[no-untyped-def]
    names = draw(st.lists(st.sampled_from(IFNAMES), unique=True, max_size=4))
    pool = list(draw(st.permutations(ADDRESSES)))
    out = {}
    for name in names:
        n = draw(st.integers(0, 2))
        addrs, pool = pool[:n], pool[n:]
        o = InterfaceOspf()
        if ospf:
            o = InterfaceOspf(
                area=draw(_opt(AREAS)) if ospf_areas else None,
                network=None if name == "lo" else draw(_opt(("point-to-point", "point-to-multipoint", "non-broadcast"))),
                hello_interval=draw(_opt((1, 2, 5))),
                dead_interval=draw(_opt((3, 7, 12))),
                passive=False if passive_default else draw(st.booleans()),
            )
        out[name] = Interface(description=draw(st.none() | _text), addresses=addrs, ospf=o)
    return out


@st.composite
def _static_routes(draw) -> list[StaticRoute]:  # type: ignore[no-untyped-def]
    out = []
    for prefix in draw(st.lists(st.sampled_from(PREFIXES), unique=True, max_size=3)):
        if draw(st.booleans()):
            out.append(StaticRoute(prefix=prefix, nexthop=draw(st.sampled_from(("Null0", "blackhole", "reject"))),
                                   distance=draw(st.sampled_from((1, 10, 250)))))
        else:
            for nh in draw(st.lists(st.sampled_from(NEXTHOPS), unique=True, min_size=1, max_size=3)):
                out.append(StaticRoute(prefix=prefix, nexthop=nh, distance=draw(st.sampled_from((1, 5, 200)))))
    return out


@st.composite
def _ospf(draw, networks: bool) -> Ospf:  # type: ignore[no-untyped-def]
    nets = []
    if networks:
        for p in draw(st.lists(st.sampled_from(PREFIXES), unique=True, max_size=3)):
            nets.append(OspfNetwork(prefix=p, area=draw(st.sampled_from(AREAS))))
    return Ospf(
        router_id=draw(_opt(("10.255.0.1", "1.1.1.1"))),
        passive_default=draw(st.booleans()),
        networks=nets,
        throttle_spf=draw(_opt(((0, 50, 500), (10, 100, 1000)))),
        throttle_lsa_all=draw(_opt((0, 100))),
        lsa_min_arrival=draw(_opt((0, 100))),
    )


@st.composite
def _bgp(draw) -> Bgp:  # type: ignore[no-untyped-def]
    asn = draw(st.sampled_from((64500, 65001, 4200000000)))
    groups: dict[str, Peer] = {}
    for name in draw(st.lists(st.sampled_from(("RR", "EDGES", "EXT")), unique=True, max_size=2)):
        groups[name] = Peer(
            remote_as=draw(st.sampled_from(("internal", "external", asn, 65010 if asn != 65010 else 65011))),
            description=draw(st.none() | _text),
            update_source=draw(_opt(("lo", "10.255.0.1"))),
            timers=draw(_opt(((1, 3), (0, 0), (20, 90)))),
            timers_connect=draw(_opt((1, 5))),
        )
    neighbors: dict[str, Peer] = {}
    for addr in draw(st.lists(st.sampled_from(("192.0.2.1", "192.0.2.2", "198.51.100.7", "10.255.0.9")), unique=True, max_size=3)):
        common = {"description": draw(st.none() | _text), "shutdown": draw(st.booleans())}
        if groups and draw(st.booleans()):
            neighbors[addr] = Peer(peer_group=draw(st.sampled_from(sorted(groups))), **common)
        else:
            neighbors[addr] = Peer(
                remote_as=draw(st.sampled_from(("internal", "external", asn, 65020))),
                update_source=draw(_opt(("lo",))),
                timers=draw(_opt(((1, 3), (10, 30), (60, 180)))),  # 60 180 is printed for a neighbor
                timers_connect=draw(_opt((2, 10))),
                **common,
            )

    def internal(p: Peer) -> bool:
        return p.remote_as in ("internal", asn)

    af_peers = {}
    for name, p in list(groups.items()) + [(a, n) for a, n in neighbors.items() if n.peer_group is None]:
        af_peers[name] = BgpAfPeer(
            route_reflector_client=internal(p) and draw(st.booleans()),
            prefix_list_in=draw(_opt(PL_NAMES)),
            prefix_list_out=draw(_opt(PL_NAMES)),
            route_map_in=draw(_opt(RM_NAMES)),
            route_map_out=draw(_opt(RM_NAMES)),
        )
    sources = draw(st.lists(st.sampled_from(("kernel", "connected", "static", "ospf")), unique=True, max_size=2))
    af = BgpAf(
        networks=draw(st.lists(st.sampled_from(PREFIXES), unique=True, max_size=2)),
        redistribute={s: draw(_opt(RM_NAMES)) for s in sources},
        peers=af_peers,
    )
    return Bgp(asn=asn, router_id=draw(_opt(("10.255.0.1", "2.2.2.2"))), timers=draw(_opt(((1, 3), (10, 30), (60, 180)))),  # 60 180 is printed for a neighbor
               coalesce_time=draw(_opt((0, 50, 1000, 4294967295))),
               ebgp_requires_policy=draw(st.booleans()),
               peer_groups=groups, neighbors=neighbors, ipv4_unicast=af)


@st.composite
def _prefix_list(draw) -> PrefixList:  # type: ignore[no-untyped-def]
    entries, seen = [], set()
    for seq in draw(st.lists(st.sampled_from((5, 10, 15, 20)), unique=True, min_size=1, max_size=3)):
        prefix = draw(_opt(("0.0.0.0/0", "10.0.0.0/8", "198.18.0.0/16", "192.0.2.0/24")))
        ge = le = None
        if prefix is not None:
            plen = int(prefix.split("/")[1])
            ge = draw(_opt(tuple(x for x in (8, 16, 24) if x >= plen)))
            le = draw(_opt(tuple(x for x in (24, 28, 32) if x >= max(plen, ge or 0))))
        if (prefix, ge, le) in seen:
            continue
        seen.add((prefix, ge, le))
        entries.append(PrefixListEntry(seq=seq, action=draw(st.sampled_from(("permit", "deny"))), prefix=prefix, ge=ge, le=le))
    return PrefixList(entries=entries)


@st.composite
def _route_map(draw) -> RouteMap:  # type: ignore[no-untyped-def]
    entries = []
    for seq in draw(st.lists(st.sampled_from((10, 20, 30)), unique=True, min_size=1, max_size=2)):
        comm = draw(st.none() | st.just(["none"]) | st.lists(st.sampled_from(COMMUNITIES), unique=True, min_size=1, max_size=3))
        entries.append(RouteMapEntry(
            seq=seq,
            action=draw(st.sampled_from(("permit", "deny"))),
            match_prefix_list=draw(_opt(PL_NAMES)),
            set_community=comm,
            set_community_additive=comm not in (None, ["none"]) and draw(st.booleans()),
            set_local_preference=draw(_opt((50, 200))),
            set_metric=draw(_opt((0, 10, 4000000000))),
        ))
    return RouteMap(entries=entries)


@st.composite
def firewalls(draw) -> Firewall:  # type: ignore[no-untyped-def]
    """A firewall nft accepts: sets of disjoint prefixes (possibly empty), rules that use
    existing sets only."""
    names = draw(st.lists(st.sampled_from(SET_NAMES), unique=True, max_size=3))
    sets = {n: FirewallSet(elements=draw(st.lists(st.sampled_from(SET_ELEMENTS), unique=True, max_size=3)))
            for n in names}
    rules = []
    for _ in range(draw(st.integers(0, 4))):
        rules.append(FirewallRule(saddr_set=draw(_opt(names)), daddr_set=draw(_opt(names)),
                                  action=draw(st.sampled_from(("accept", "drop")))))
    return Firewall(sets=sets, forward_policy=draw(st.sampled_from(("accept", "drop"))), forward_rules=rules)


@st.composite
def device_configs(  # type: ignore[no-untyped-def]
    draw, hostname: str = "r1", firewall: bool = False, yang_valid: bool = False
) -> DeviceConfig:
    """A DeviceConfig FRR 8.4 accepts and prints back as is. ``firewall``: also draw a
    firewall (None or one of :func:`firewalls`); it is not FRR text, so ``render`` / ``parse``
    do not carry it. ``yang_valid``: only route-maps and prefix-lists that exist are applied to
    peers and redistribution (FRR accepts others, the YANG module requires the instance)."""
    with_ospf = draw(st.booleans())
    ospf_networks = with_ospf and draw(st.booleans())
    ospf = draw(_ospf(ospf_networks)) if with_ospf else None
    m = DeviceConfig(
        hostname=hostname,
        ipv6_forwarding=draw(st.booleans()),
        bgp_route_map_delay_timer=draw(_opt((0, 1, 5, 10))),  # 5: FRR's default, canonical None
        interfaces=draw(_interfaces(with_ospf and not ospf_networks, with_ospf, bool(ospf and ospf.passive_default))),
        static_routes=draw(_static_routes()),
        ospf=ospf,
        bgp=draw(st.none() | _bgp()),
        prefix_lists={n: draw(_prefix_list()) for n in draw(st.lists(st.sampled_from(PL_NAMES), unique=True, max_size=3))},
        route_maps={n: draw(_route_map()) for n in draw(st.lists(st.sampled_from(RM_NAMES), unique=True, max_size=2))},
        firewall=draw(st.none() | firewalls()) if firewall else None,
    )
    if yang_valid and m.bgp is not None:
        d = m.model_dump()
        af = d["bgp"]["ipv4_unicast"]
        af["redistribute"] = {k: (v if v in m.route_maps else None) for k, v in af["redistribute"].items()}
        for p in af["peers"].values():
            for k in ("route_map_in", "route_map_out"):
                if p[k] not in m.route_maps:
                    p[k] = None
            for k in ("prefix_list_in", "prefix_list_out"):
                if p[k] not in m.prefix_lists:
                    p[k] = None
        m = DeviceConfig.model_validate(d)
    return m
