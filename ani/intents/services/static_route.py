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

from ani.device.model import StaticRoute
from ani.intents.errors import IntentError
from ani.intents.services.base import ServiceClass, register
from ani.intents.services.common import Int, Intent, IntentAdd, IntentRemove, RouterName, Service, is_remove, own_addresses, router

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.intents.pools import Pools

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
            raise IntentError("unknown-reference", f"{ch.router} has no interface {ch.next_hop!r}", f"{path}.next_hop")

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
