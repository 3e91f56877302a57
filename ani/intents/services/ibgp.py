"""Service class ``ibgp``: the BGP sessions between the routers' loopbacks (in the shipped
brownfield: every edge to each route reflector, ``update-source lo``).

No changes of its own (a session an agent adds is a ``bgp-peering`` change; it is an ``ibgp``
instance too as soon as its neighbor is another router's loopback).

- discover: each BGP neighbor of a router that is the loopback of another router of the
  configs: a :class:`LoopbackSession`, service id ``ibgp/<router>/<neighbor>``.
- invariants: each of those sessions is Established, seen from its router (``bgp_session``),
  routers in topology order, neighbors in config order, service ``bgp``; touched: the
  sessions with a touched router at either end.
"""

from __future__ import annotations

from ipaddress import IPv4Address
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from ani.intents.services.base import ServiceClass, Touched, register
from ani.intents.services.common import RouterName, Service, loopback, loopbacks

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.observer.checks import Check

__all__ = ["Ibgp", "LoopbackSession"]


class LoopbackSession(BaseModel):
    """A BGP session from ``router`` to ``neighbor``, the loopback of router ``peer``
    (a discovered instance; not a change)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    router: RouterName
    neighbor: IPv4Address
    peer: RouterName

    def service_id(self) -> str:
        return f"ibgp/{self.router}/{self.neighbor}"


def _sessions(configs: dict[str, DeviceConfig], order: list[str], by_addr: dict[IPv4Address, str]) -> list[LoopbackSession]:
    out = []
    for r in order:
        cfg = configs.get(r)
        if cfg is None or cfg.bgp is None:
            continue
        for nb in (IPv4Address(n) for n in cfg.bgp.neighbors):
            if nb in by_addr and by_addr[nb] != r:
                out.append(LoopbackSession(router=r, neighbor=nb, peer=by_addr[nb]))
    return out


def _checks(configs: dict[str, DeviceConfig], topology: Any, routers: frozenset[str] | None) -> list[Check]:
    from ani.observer.checks import BgpSessionCheck

    by_addr = {ip: r for r, ip in loopbacks(configs, topology).items()}
    return [BgpSessionCheck(router=s.router, neighbor=s.neighbor, service="bgp")
            for s in _sessions(configs, list(topology.routers), by_addr)
            if routers is None or s.router in routers or s.peer in routers]


@register
class Ibgp(ServiceClass):
    """iBGP between loopbacks (see the module doc)."""

    name = "ibgp"
    shares = ("the route reflectors' sessions, which carry every tenant's routes",)

    def discover(self, configs: dict[str, DeviceConfig]) -> list[Service]:
        by_addr = {ip: r for r, cfg in configs.items() if (ip := loopback(cfg)) is not None}
        return [Service(s.service_id(), self.name, s, [s.router]) for s in _sessions(configs, list(configs), by_addr)]

    def invariants(self, configs: dict[str, DeviceConfig], topology: Any) -> list[Check]:
        return _checks(configs, topology, None)

    def touched_invariants(self, configs: dict[str, DeviceConfig], topology: Any, touched: Touched) -> list[Check]:
        return _checks(configs, topology, touched.routers)
