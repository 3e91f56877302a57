"""Service class ``ebgp-peering``: a border edge peers with an external AS over a link, both
directions filtered through SHARED prefix-lists and route-maps.

On the border edge (``e1``) of a peering with ``x1`` (AS 65001, link 100.64.0.2/31)::

    interface to-x1
     ip address 100.64.0.2/31
     ip ospf area 0
     ip ospf passive                   (the link is reachable: the other edges resolve the
    !                                   external routes' next hop 100.64.0.3 through OSPF)
    ip prefix-list PL-EXT-IN seq 10 permit 172.16.0.0/24          (what any peer may send in)
    ip prefix-list PL-EXT-OUT seq 10 permit 198.18.11.0/24        (what any peer is sent)
    route-map RM-EXT-IN permit 10
     match ip address prefix-list PL-EXT-IN
    route-map RM-EXT-OUT permit 10
     match ip address prefix-list PL-EXT-OUT
    router bgp 64500
     neighbor 100.64.0.3 remote-as 65001
     neighbor 100.64.0.3 timers connect 1
     address-family ipv4 unicast
      neighbor 100.64.0.3 route-map RM-EXT-IN in
      neighbor 100.64.0.3 route-map RM-EXT-OUT out

The accepted routes go on to the route reflectors and every other edge by iBGP (next hop
unchanged). What tenant isolation does not protect: the four filters are one set per border
edge, shared by every external peer there and by every tenant announced: a tenant's prefix
added to PL-EXT-IN (or a ``le 32``) lets an external peer hijack it for everyone, a deny or a
removed entry in PL-EXT-OUT withdraws other tenants' announcements, a more specific route the
peer sends is refused only by the exact entries.

Changes (``type: ebgp-peering``)::

    {action: add, edge: e1, interface: to-x1, local_address: 100.64.0.2/31, neighbor: 100.64.0.3,
     remote_as: 65001, accept: [172.16.0.0/24], announce: [198.18.11.0/24]}
    {action: remove, edge: e1, neighbor: 100.64.0.3}

``accept`` / ``announce`` are added to the shared lists (an entry already there is kept);
discovery reads a peering's ``accept`` / ``announce`` from the lists of its edge, so peerings
on one edge show the same (shared, effective) filters. Removing the last peering of an edge
removes the four filters; removing another keeps them (they are shared). Service id
``ebgp-peering/<edge>/<neighbor>``.

Baseline invariants (service ``ebgp-peering/<edge>/<neighbor>``): the session Established on
both ends (the far end if it is a router of the configs); each prefix the external router
originates (``network``) present on up to two other tenant edges if RM-EXT-IN lets it in,
absent from the border edge if not; each tenant prefix present on the external router if
RM-EXT-OUT lets it out, absent otherwise (at most three absent ones).

The external router itself (generator only): ``x<n>`` (role ``external``, daemons zebra,
staticd, bgpd), its prefixes as blackhole static routes + ``network``, route-maps ``RM-X-IN``
/ ``RM-X-OUT`` permitting everything (FRR 8.4 refuses eBGP routes without a policy).
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from ani.names import unknown
from ani.device.model import (
    Bgp,
    BgpAf,
    BgpAfPeer,
    DeviceConfig,
    Interface,
    InterfaceOspf,
    Peer,
    PrefixList,
    PrefixListEntry,
    RouteMap,
    RouteMapEntry,
    StaticRoute,
)
from ani.errors import GeneratorError
from ani.intents.errors import IntentError
from ani.intents.services.common import MAX_LIST_ITEMS, SET_PREFIX, Service, add_entry
from ani.intents.services._shared import InstanceClass, prefix_list_permits, route_map_result, tenant_edges
from ani.intents.services.base import register
from ani.observer.checks import BgpSessionCheck, RouteCheck

PL_IN, PL_OUT, RM_IN, RM_OUT = "PL-EXT-IN", "PL-EXT-OUT", "RM-EXT-IN", "RM-EXT-OUT"
DEFAULT_LINK_RANGE = "100.64.0.0/16"
DEFAULT_EXTERNAL_RANGE = "172.16.0.0/12"
DEFAULT_BASE_AS = 65001
#: other edges the presence of an accepted external prefix is checked on; absent tenant prefixes checked
EDGE_SAMPLE, ABSENT_SAMPLE = 2, 3


def _sorted_nets(v: list[IPv4Network]) -> list[IPv4Network]:
    if len(set(v)) != len(v):
        raise ValueError("duplicate prefix")
    return sorted(v, key=lambda n: (n.network_address, n.prefixlen))


class _Ebgp(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["ebgp-peering"] = "ebgp-peering"
    edge: str = Field(min_length=1, max_length=63, description="the border edge router")
    neighbor: IPv4Address = Field(description="the external router's address on the link")

    def service_id(self) -> str:
        return f"ebgp-peering/{self.edge}/{self.neighbor}"


class EbgpPeeringAdd(_Ebgp):
    interface: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,14}$", description="the edge's link interface")
    local_address: IPv4Interface = Field(description="the edge's address on the link (e.g. 100.64.0.2/31)")
    remote_as: StrictInt = Field(ge=1, le=4294967295, description="the external AS")
    accept: list[IPv4Network] = Field(min_length=1, max_length=MAX_LIST_ITEMS, description="prefixes taken from the peer (PL-EXT-IN)")
    announce: list[IPv4Network] = Field(min_length=1, max_length=MAX_LIST_ITEMS, description="prefixes sent to the peer (PL-EXT-OUT)")
    action: Literal["add"] = "add"

    @field_validator("accept", "announce")
    @classmethod
    def _nets(cls, v: list[IPv4Network]) -> list[IPv4Network]:
        return _sorted_nets(v)

    @model_validator(mode="after")
    def _link(self) -> EbgpPeeringAdd:
        if self.neighbor not in self.local_address.network or self.neighbor == self.local_address.ip:
            raise ValueError(f"neighbor {self.neighbor} is not another address of the link {self.local_address.network}")
        return self


class EbgpPeeringRemove(_Ebgp):
    action: Literal["remove"] = "remove"


def _add_entries(cfg: DeviceConfig, name: str, prefixes: list[IPv4Network]) -> None:
    """Exact permit entries for ``prefixes`` not yet in the list, at the next multiples of 10."""
    entries = list(cfg.prefix_lists[name].entries) if name in cfg.prefix_lists else []
    have = {e.prefix for e in entries if e.action == "permit" and e.ge is None and e.le is None}
    seq = max((e.seq for e in entries), default=0)
    for p in prefixes:
        if p not in have:
            seq = (seq // 10 + 1) * 10
            add_entry(cfg.prefix_lists, name, PrefixListEntry(seq=seq, action="permit", prefix=p), PrefixList)


def _ebgp_neighbors(cfg: DeviceConfig) -> list[str]:
    if cfg.bgp is None:
        return []
    out = []
    for addr, p in cfg.bgp.neighbors.items():
        af = cfg.bgp.ipv4_unicast.peers.get(addr)
        if isinstance(p.remote_as, int) and p.remote_as != cfg.bgp.asn and af is not None and af.route_map_in == RM_IN:
            out.append(addr)
    return sorted(out, key=IPv4Address)


@register
class EbgpPeering(InstanceClass):
    name = "ebgp-peering"
    id_format = "ebgp-peering/<edge>/<neighbor>"
    description = ("eBGP with an external AS over a link of a border edge (passive in OSPF), filtered both ways "
                   "through the edge's shared PL-EXT-IN / PL-EXT-OUT and RM-EXT-IN / RM-EXT-OUT.")
    changes = (EbgpPeeringAdd, EbgpPeeringRemove)
    shares = (f"prefix-lists {PL_IN} / {PL_OUT} and route-maps {RM_IN} / {RM_OUT} of the border edge "
              "(every external peer there, every tenant announced)",
              f"link addresses ({DEFAULT_LINK_RANGE}) and external AS numbers")

    def check(self, ch: Any, path: str, state: dict[str, Any]) -> None:
        if ch.edge not in state:
            raise IntentError("unknown-router", unknown("router", ch.edge, sorted(state)), f"{path}.edge")
        cfg = state[ch.edge]
        if cfg.bgp is None:
            raise IntentError("invalid", f"{ch.edge} runs no BGP", f"{path}.edge")
        nb = str(ch.neighbor)
        if isinstance(ch, EbgpPeeringRemove):
            if nb not in _ebgp_neighbors(cfg):
                raise IntentError("service-not-found", f"{ch.edge} has no external peer {nb}", f"{path}.neighbor")
            return
        if nb in cfg.bgp.neighbors:
            raise IntentError("service-exists", f"{ch.edge} already has neighbor {nb}", f"{path}.neighbor")
        if ch.remote_as == cfg.bgp.asn:
            raise IntentError("invalid", f"remote_as {ch.remote_as} is the provider's own AS (iBGP: use bgp-peering)",
                              f"{path}.remote_as")
        iface = cfg.interfaces.get(ch.interface)
        if iface is not None and iface.addresses and ch.local_address not in iface.addresses:
            raise IntentError("address-conflict", f"{ch.edge} {ch.interface} has {iface.addresses[0]}", f"{path}.interface")
        if cfg.ospf is None:
            raise IntentError("invalid", f"{ch.edge} runs no OSPF to make the link reachable", f"{path}.edge")
        for r, c in state.items():
            for ifname, i in c.interfaces.items():
                if (r, ifname) != (ch.edge, ch.interface) and any(a.network.overlaps(ch.local_address.network) for a in i.addresses):
                    raise IntentError("address-conflict", f"{ch.local_address.network} overlaps {r} {ifname}",
                                      f"{path}.local_address")
        sites = [a.network for e in tenant_edges(state) for n, i in state[e].interfaces.items()
                 if n.startswith("to-") for a in i.addresses]
        for k, p in enumerate(ch.accept):
            hit = next((s for s in sites if s.overlaps(p)), None)
            if hit is not None:
                raise IntentError("prefix-overlap", f"accepting {p} from outside would hijack the site prefix {hit}",
                                  f"{path}.accept.{k}")

    def apply(self, ch: Any, path: str, state: dict[str, Any], pools: Any, alloc: dict[str, Any]) -> None:
        cfg = state[ch.edge]
        nb = str(ch.neighbor)
        af = cfg.bgp.ipv4_unicast
        if isinstance(ch, EbgpPeeringRemove):
            cfg.bgp.neighbors.pop(nb)
            af.peers.pop(nb, None)
            for ifname, i in list(cfg.interfaces.items()):
                if any(ch.neighbor in a.network for a in i.addresses):
                    cfg.interfaces.pop(ifname)
            if not _ebgp_neighbors(cfg):  # the last peering here: the shared filters go too
                for name in (PL_IN, PL_OUT):
                    cfg.prefix_lists.pop(name, None)
                for name in (RM_IN, RM_OUT):
                    cfg.route_maps.pop(name, None)
            return
        cfg.interfaces[ch.interface] = Interface(addresses=[ch.local_address], ospf=InterfaceOspf(area="0", passive=True))
        _add_entries(cfg, PL_IN, ch.accept)
        _add_entries(cfg, PL_OUT, ch.announce)
        for rm, pl in ((RM_IN, PL_IN), (RM_OUT, PL_OUT)):
            if rm not in cfg.route_maps:
                cfg.route_maps[rm] = RouteMap(entries=[RouteMapEntry(seq=10, action="permit", match_prefix_list=pl)])
        cfg.bgp.neighbors[nb] = Peer(remote_as=ch.remote_as, timers_connect=1)
        af.peers[nb] = BgpAfPeer(route_map_in=RM_IN, route_map_out=RM_OUT)

    def discover(self, configs: dict[str, Any]) -> list[Service]:
        out = []
        for r in sorted(configs):
            cfg = configs[r]
            for nb in _ebgp_neighbors(cfg):
                ip = IPv4Address(nb)
                iface = next(((n, a) for n, i in cfg.interfaces.items() for a in i.addresses if ip in a.network), None)
                accept = [e.prefix for e in cfg.prefix_lists[PL_IN].entries if e.action == "permit" and e.prefix] if PL_IN in cfg.prefix_lists else []
                announce = [e.prefix for e in cfg.prefix_lists[PL_OUT].entries if e.action == "permit" and e.prefix] if PL_OUT in cfg.prefix_lists else []
                if iface is None:
                    continue
                try:
                    spec = EbgpPeeringAdd(edge=r, neighbor=ip, interface=iface[0], local_address=iface[1],
                                          remote_as=cfg.bgp.neighbors[nb].remote_as, accept=accept, announce=announce)
                except ValueError:
                    continue  # an empty shared list: not a peering this class describes
                routers = [r, *(x for x in sorted(configs) if _has_address(configs[x], ip))]
                out.append(Service(id=spec.service_id(), type=self.name, spec=spec, routers=routers))
        return out

    def invariants(self, configs: dict[str, Any], topology: Any) -> list[Any]:
        out: list[Any] = []
        edges = tenant_edges(configs)
        tenant_nets = _tenant_networks(configs)
        for svc in self.discover(configs):
            s, cfg = svc.spec, configs[svc.spec.edge]
            sid = svc.id
            out.append(BgpSessionCheck(router=s.edge, neighbor=s.neighbor, service=sid))
            far = next((x for x in sorted(configs) if x != s.edge and _has_address(configs[x], s.neighbor)), None)
            if far is None or far not in topology.nodes:
                continue
            out.append(BgpSessionCheck(router=far, neighbor=s.local_address.ip, service=sid))
            fbgp = configs[far].bgp
            others = [e for e in edges if e != s.edge][:EDGE_SAMPLE]
            for p in fbgp.ipv4_unicast.networks if fbgp else []:
                if _passes(cfg, RM_IN, p):
                    out += [RouteCheck(router=e, prefix=p, expect=True, service=sid) for e in others]
                else:
                    out.append(RouteCheck(router=s.edge, prefix=p, expect=False, service=sid))
            absent = 0
            for p in tenant_nets:
                if _passes(cfg, RM_OUT, p):
                    out.append(RouteCheck(router=far, prefix=p, expect=True, service=sid))
                elif absent < ABSENT_SAMPLE:
                    absent += 1
                    out.append(RouteCheck(router=far, prefix=p, expect=False, service=sid))
        return out

    def named_tenants(self, ch: Any, known: set[str]) -> set[str]:
        return set()

    def named_networks(self, ch: Any) -> list[IPv4Network]:
        return [*ch.accept, *ch.announce] if ch.action == "add" else []

    def generate(self, build: Any, layer: Any) -> None:
        """``layer.density`` external routers ``x<n>`` (AS ``options.base_as`` (65001) + i), each
        linked to a Zipf-drawn tenant edge (a link /31 from ``options.link_range``), originating
        two /24s of ``options.external_range`` (172.16.0.0/12) that PL-EXT-IN accepts and one it
        refuses: a trap's refused prefix is a more specific (/25) of an accepted one, otherwise a
        separate /24; announcing every site of one Zipf-drawn tenant (the others are not
        announced). Raises GeneratorError when the build has no tenant edge or a range is full."""
        rng = build.rng(layer.stream)
        link_range = IPv4Network(layer.options.get("link_range", DEFAULT_LINK_RANGE))
        ext_range = IPv4Network(layer.options.get("external_range", DEFAULT_EXTERNAL_RANGE))
        base_as = int(layer.options.get("base_as", DEFAULT_BASE_AS))
        edges = [e for e in build.routers("edge") if e in tenant_edges(build.configs)]
        tenants = [t for t, sites in build.tenants.items() if sites]
        if not edges or not tenants:
            raise GeneratorError(f"layer {self.name}: the build has no tenant edge or no tenant to announce")
        for i in range(layer.density):
            path = f"layers.{self.name}.{i}"
            edge = build.zipf_choice(rng, edges)
            x = _free_name(build, "x")
            try:
                link = build.allocate(link_range, 31)
                accepted = [build.allocate(ext_range, 24, rng=rng) for _ in range(2)]
                trap = rng.random() < layer.trap_rate
                refused = next(accepted[0].subnets(new_prefix=25)) if trap else build.allocate(ext_range, 24, rng=rng)
            except GeneratorError as exc:
                raise GeneratorError(f"layer {self.name}: {exc}") from None
            tenant = build.zipf_choice(rng, tenants)
            ch = EbgpPeeringAdd(edge=edge, neighbor=link[1], interface=f"to-{x}",
                                local_address=IPv4Interface(f"{link[0]}/31"), remote_as=base_as + i,
                                accept=accepted, announce=[IPv4Network(s["prefix"]) for s in build.tenants[tenant]])
            try:
                self.check(ch, path, build.configs)
            except IntentError as exc:
                raise GeneratorError(f"layer {self.name}: {exc}") from None
            originated = sorted([*accepted, refused], key=lambda n: (n.network_address, n.prefixlen))
            build.add_router(x, "external", _external_config(x, link, edge, base_as + i, build.asn, originated),
                             daemons=("zebra", "staticd", "bgpd"))
            # its originations are static routes (blackhole): instances of static-route, as discovered
            from ani.intents.services.base import get_service_class

            statics = get_service_class("static-route").discover({x: build.configs[x]})
            build.instances.setdefault("static-route", []).extend(svc.id for svc in statics)
            build.add_link(edge, f"to-{x}", x, f"to-{edge}")
            self.apply(ch, path, build.configs, None, {})
            build.instances.setdefault(self.name, []).append(ch.service_id())
        for r in build.configs:
            build.configs[r] = build.configs[r].canonical()


def _external_config(name: str, link: IPv4Network, edge: str, asn: int, provider_as: int,
                     originated: list[IPv4Network]) -> DeviceConfig:
    """The external router: its link end, its prefixes (blackhole + network), eBGP to the edge."""
    own, peer = link[1], link[0]
    return DeviceConfig(
        hostname=name, ipv6_forwarding=False, bgp_route_map_delay_timer=1,
        interfaces={f"to-{edge}": Interface(addresses=[IPv4Interface(f"{own}/31")])},
        static_routes=[StaticRoute(prefix=p, nexthop="blackhole") for p in originated],
        bgp=Bgp(asn=asn, router_id=own, coalesce_time=0, timers=(1, 3),
                neighbors={str(peer): Peer(remote_as=provider_as, timers_connect=1)},
                ipv4_unicast=BgpAf(networks=originated,
                                   peers={str(peer): BgpAfPeer(route_map_in="RM-X-IN", route_map_out="RM-X-OUT")})),
        route_maps={"RM-X-IN": RouteMap(entries=[RouteMapEntry(seq=10, action="permit")]),
                    "RM-X-OUT": RouteMap(entries=[RouteMapEntry(seq=10, action="permit")])},
    )


def _has_address(cfg: DeviceConfig, ip: IPv4Address) -> bool:
    return any(a.ip == ip for i in cfg.interfaces.values() for a in i.addresses)


def _tenant_networks(configs: dict[str, Any]) -> list[IPv4Network]:
    """Every element of the sets ``tenant_<t>`` (any router), sorted."""
    nets = {e for c in configs.values() if c.firewall is not None
            for n, st in c.firewall.sets.items() if n.startswith(SET_PREFIX) for e in st.elements}
    return sorted(nets, key=lambda n: (n.network_address, n.prefixlen))


def _passes(cfg: DeviceConfig, rmap: str, prefix: IPv4Network) -> bool:
    rm = cfg.route_maps.get(rmap)
    if rm is None:
        return False
    e = route_map_result(cfg, rm, prefix)
    return e is not None and e.action == "permit"


def _free_name(build: Any, stem: str) -> str:
    n = 1
    while f"{stem}{n}" in build.nodes():
        n += 1
    return f"{stem}{n}"


__all__ = ["EbgpPeering", "EbgpPeeringAdd", "EbgpPeeringRemove", "prefix_list_permits"]
