"""The topology base of a generated brownfield: underlay + iBGP with route reflectors.

``build_base(build, spec)`` adds the routers and links of a :class:`TopologySpec` to an empty
:class:`~ani.scenario.build.Build`, as device models (``ani.device.model.DeviceConfig``), in
the layout of ``scenarios/brownfield-small.yaml`` (``ani.scenario.gen_brownfield``) generalised:

- cores ``c1..cN`` (loopback 100.64.255.k), the first ``route_reflectors`` of them iBGP route
  reflectors; edges ``e1..eM`` (loopback 100.64.255.(10+k));
- p2p /31 links, interfaces ``to-<peer>``, the lower-numbered side (the core) holding the even
  address: core-core links in 100.64.0.0/24 (the cores are a full mesh), core ``ci`` - edge
  ``ek`` in 100.64.i.(2k-2)/31;
- each edge is linked to ``links_per_edge`` cores, spread round-robin (edge k starts at core
  ((k-1) mod N) + 1); with ``rr_full_mesh`` every route reflector also has a link to every other
  router;
- OSPF area 0 on the loopbacks and the p2p links (point-to-point, hello 1 s, dead 3 s,
  ``timers throttle lsa all 0``, ``timers lsa min-arrival 0``, ``timers throttle spf 0 50 500``:
  converges in about a second, ``/work/shared/FRR-NOTES.md``);
- iBGP over loopbacks (``update-source lo``, ``timers bgp 1 3``, ``timers connect 1``,
  ``bgp route-map delay-timer 1``, ``coalesce-time 0``: a session announces its routes as soon
  as it is up instead of after bgpd's subgroup coalesce timer, ~1 s; docs/performance.md):
  every router that is not a reflector peers with every
  reflector (peer-group ``RR``); a reflector peers with the other reflectors (``RR``, not
  clients) and with its clients (peer-groups ``EDGES`` and, for cores that are not reflectors,
  ``CORES``, both ``route-reflector-client``).

Non-reflector cores are route-reflector clients too: they may carry edge-to-edge traffic, and
tenant prefixes are only in BGP.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ani.device.model import Bgp, BgpAf, BgpAfPeer, DeviceConfig, Interface, InterfaceOspf, Ospf, Peer
from ani.errors import GeneratorError
from ani.scenario.build import Build

#: FRR daemons of every generated router
DAEMONS = ("zebra", "staticd", "ospfd", "bgpd")
#: most cores / edges the address plan holds (loopbacks 100.64.255.1..10 / .11..250)
MAX_CORES, MAX_EDGES = 10, 240


class TopologySpec(BaseModel):
    """``topology:`` of a manifest: how many cores, reflectors, edges and links."""

    model_config = ConfigDict(extra="forbid")

    cores: int = Field(default=2, ge=1, le=MAX_CORES, description="core routers c1..cN")
    route_reflectors: int = Field(default=2, ge=1, description="the first N cores are iBGP route reflectors")
    edges: int = Field(default=4, ge=1, le=MAX_EDGES, description="edge routers e1..eM (they carry tenant sites)")
    links_per_edge: int = Field(default=2, ge=1, description="core links of each edge (spread over the cores)")
    rr_full_mesh: bool = Field(default=False, description="every route reflector is linked to every other router")
    asn: int = Field(default=64500, ge=1, le=4294967295, description="the provider's AS (iBGP)")

    @model_validator(mode="after")
    def _fits(self) -> TopologySpec:
        if self.route_reflectors > self.cores:
            raise ValueError(f"route_reflectors: {self.route_reflectors} reflectors need as many cores "
                             f"(cores: {self.cores})")
        if self.links_per_edge > self.cores:
            raise ValueError(f"links_per_edge: {self.links_per_edge} links per edge need as many cores "
                             f"(cores: {self.cores}; an edge has one link per core at most)")
        if self.edges > 128:  # 100.64.<core>.0/24 holds 128 /31s
            raise ValueError(f"edges: at most 128 edges (100.64.<core>.0/24 holds 128 core-edge /31s), got {self.edges}")
        return self

    def router_count(self) -> int:
        return self.cores + self.edges


OSPF_P2P = InterfaceOspf(area="0", network="point-to-point", hello_interval=1, dead_interval=3)


def loopback(role: str, k: int) -> IPv4Address:
    """Loopback of core ``k`` (100.64.255.k) or edge ``k`` (100.64.255.(10+k)), k from 1."""
    return IPv4Address(f"100.64.255.{k if role == 'core' else 10 + k}")


def _router(name: str, lo: IPv4Address) -> DeviceConfig:
    return DeviceConfig(
        hostname=name,
        ipv6_forwarding=False,
        # bgpd holds every peer after a config load until its route-map update timer fires
        # (5 s by default); 1 s keeps route-map / prefix-list changes applied automatically
        bgp_route_map_delay_timer=1,
        interfaces={"lo": Interface(addresses=[IPv4Interface(f"{lo}/32")], ospf=InterfaceOspf(area="0"))},
        ospf=Ospf(router_id=lo, throttle_spf=(0, 50, 500), throttle_lsa_all=0, lsa_min_arrival=0),
    )


def links(spec: TopologySpec) -> list[tuple[str, str, str]]:
    """``(a, b, /31 network text)`` of every p2p link, ``a`` the core (even address)."""
    cores = [f"c{i}" for i in range(1, spec.cores + 1)]
    rrs = set(cores[: spec.route_reflectors])
    out: list[tuple[str, str, str]] = []
    n = 0
    for i in range(spec.cores):
        for j in range(i + 1, spec.cores):
            out.append((cores[i], cores[j], f"100.64.0.{2 * n}/31"))
            n += 1
    for k in range(1, spec.edges + 1):
        mine = {cores[(k - 1 + j) % spec.cores] for j in range(spec.links_per_edge)}
        if spec.rr_full_mesh:
            mine |= rrs
        for i, core in enumerate(cores, start=1):
            if core in mine:
                out.append((core, f"e{k}", f"100.64.{i}.{2 * (k - 1)}/31"))
    return out


def build_base(build: Build, spec: TopologySpec) -> None:
    """Add the base routers and links of ``spec`` to ``build`` (see the module doc); sets
    ``build.asn`` and ``build.route_reflectors``, marks every address used. Raises
    GeneratorError if ``build`` already has routers."""
    if build.configs:
        raise GeneratorError("topology: the base goes into an empty build")
    build.asn = spec.asn
    cores = [f"c{i}" for i in range(1, spec.cores + 1)]
    edges = [f"e{k}" for k in range(1, spec.edges + 1)]
    loops = {c: loopback("core", i) for i, c in enumerate(cores, 1)} | {e: loopback("edge", k) for k, e in enumerate(edges, 1)}
    for r in cores + edges:
        build.add_router(r, "core" if r in cores else "edge", _router(r, loops[r]), daemons=DAEMONS)
        build.used.append(IPv4Interface(f"{loops[r]}/32").network)
    for a, b, net in links(spec):
        lo_addr = IPv4Interface(net)
        hi_addr = IPv4Interface(f"{lo_addr.ip + 1}/31")
        for me, peer, addr in ((a, b, lo_addr), (b, a, hi_addr)):
            build.configs[me].interfaces[f"to-{peer}"] = Interface(addresses=[addr], ospf=OSPF_P2P)
        build.add_link(a, f"to-{b}", b, f"to-{a}")
        build.used.append(lo_addr.network)
    rrs = cores[: spec.route_reflectors]
    build.route_reflectors = list(rrs)
    for r in cores + edges:
        build.configs[r].bgp = _bgp(r, rrs, cores, edges, loops, spec.asn)
    for r in build.configs:
        build.configs[r] = build.configs[r].canonical()


def _group(asn: int) -> Peer:
    return Peer(remote_as=asn, update_source="lo", timers_connect=1)


def _bgp(r: str, rrs: list[str], cores: list[str], edges: list[str], loops: dict[str, IPv4Address], asn: int) -> Bgp:
    groups: dict[str, Peer] = {}
    neighbors: dict[str, Peer] = {}
    af: dict[str, BgpAfPeer] = {}
    others_rr = [x for x in rrs if x != r]
    if others_rr:
        groups["RR"] = _group(asn)
        neighbors |= {str(loops[x]): Peer(peer_group="RR") for x in others_rr}
    if r in rrs:
        for name, members in (("CORES", [c for c in cores if c not in rrs]), ("EDGES", edges)):
            if members:
                groups[name] = _group(asn)
                af[name] = BgpAfPeer(route_reflector_client=True)
                neighbors |= {str(loops[x]): Peer(peer_group=name) for x in members}
    # coalesce-time 0: no ~1 s wait (1000 ms + 50 ms a peer) before a session's first routes
    return Bgp(asn=asn, router_id=loops[r], coalesce_time=0, timers=(1, 3), peer_groups=groups, neighbors=neighbors,
               ipv4_unicast=BgpAf(peers=af))
