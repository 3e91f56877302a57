"""Service class ``static-route``: ``ip route PREFIX NEXT_HOP [DISTANCE]`` on one router.

::

    {"type": "static-route", "action": "add", "router": "c1", "prefix": "203.0.113.0/24", "next_hop": "blackhole"}
    # -> c1: ip route 203.0.113.0/24 blackhole

- changes: :class:`StaticRouteAdd` (an add of an existing (prefix, next hop) changes its
  distance), :class:`StaticRouteRemove`; service id ``static-route/<router>/<prefix>/<next_hop>``.
- check: the next hop is an address that is not the router's own (``nexthop-self``), an
  interface of the router, ``Null0``, ``blackhole`` or ``reject``.
- discover: each static route of each router.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ani.names import unknown
from ani.device.model import StaticRoute
from ani.errors import GeneratorError
from ani.intents.errors import IntentError
from ani.intents.services.base import ServiceClass, register
from ani.intents.services.common import Int, Intent, IntentAdd, IntentRemove, RouterName, Service, is_remove, loopback, own_addresses, router
from ani.intents.services.realism import ZIPF, edge_ranks, layer_options
from ani.observer.checks import RouteCheck

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.intents.pools import Pools
    from ani.scenario.build import Build, Layer

__all__ = ["StaticRouteAdd", "StaticRouteRemove", "StaticRouteService"]


class _StaticRoute(Intent):
    """``ip route PREFIX NEXT_HOP [DISTANCE]`` on one router."""

    type: Literal["static-route"] = "static-route"
    router: RouterName
    prefix: IPv4Network
    next_hop: str = Field(description="an IPv4 address (not the router's own), an interface, Null0, blackhole or reject")
    distance: Int = Field(default=1, ge=1, le=255, description="administrative distance (1 is FRR's default)")

    def service_id(self) -> str:
        return f"static-route/{self.router}/{self.prefix}/{self.next_hop}"


class StaticRouteAdd(IntentAdd, _StaticRoute):
    """Add the route, or change its distance if the (prefix, next hop) route exists."""


class StaticRouteRemove(IntentRemove, _StaticRoute):
    pass



# -- generator -----------------------------------------------------------------------------------


def _generate(build: Build, layer: Layer) -> None:
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
    opts = layer_options(layer, {"zipf": float})
    s = float(opts.get("zipf", ZIPF))
    rng = build.rng(layer.stream)
    edges = edge_ranks(build, rng)
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


@register
class StaticRouteService(ServiceClass):
    """Static routes (see the module doc)."""

    name = "static-route"
    changes = (StaticRouteAdd, StaticRouteRemove)
    id_format = "static-route/<router>/<prefix>/<next_hop>"
    description = ("ip route PREFIX NEXT_HOP [DISTANCE] on one router; add with another distance changes the "
                   "distance. add, remove.")

    def check(self, ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
        cfg = router(state, ch.router, f"{path}.router")
        exists = any(r.prefix == ch.prefix and r.nexthop == ch.next_hop for r in cfg.static_routes)
        if is_remove(ch, exists, path, f"no service {ch.service_id()}"):
            return
        try:
            hop = IPv4Address(ch.next_hop)
        except ValueError:
            hop = None
        if hop is not None and hop in own_addresses(cfg):
            raise IntentError("nexthop-self", f"next hop {hop} is an address of {ch.router} itself", f"{path}.next_hop")
        if hop is None and ch.next_hop not in ("Null0", "blackhole", "reject") and ch.next_hop not in cfg.interfaces:
            raise IntentError("unknown-reference", unknown("interface", ch.next_hop, sorted(cfg.interfaces), where=ch.router)
                              + " (or a next-hop address, Null0, blackhole, reject)", f"{path}.next_hop")

    def named_networks(self, ch: Any) -> list[IPv4Network]:
        return [ch.prefix]

    def apply(self, ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> None:
        cfg = state[ch.router]
        if ch.action == "remove":
            cfg.static_routes = [r for r in cfg.static_routes if not (r.prefix == ch.prefix and str(r.nexthop) == ch.next_hop)]
            return
        rest = [r for r in cfg.static_routes if not (r.prefix == ch.prefix and r.nexthop == ch.next_hop)]
        cfg.static_routes = [*rest, StaticRoute(prefix=ch.prefix, nexthop=ch.next_hop, distance=ch.distance)]

    def discover(self, configs: dict[str, DeviceConfig]) -> list[Service]:
        out = []
        for r, cfg in configs.items():
            for rt in cfg.static_routes:
                spec = StaticRouteAdd(router=r, prefix=rt.prefix, next_hop=rt.nexthop, distance=rt.distance)
                out.append(Service(spec.service_id(), "static-route", spec, [r]))
        return out

    def generate(self, build: Build, layer: Layer) -> None:
        _generate(build, layer)
