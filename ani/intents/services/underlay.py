"""Service class ``underlay``: the routers' loopbacks and the routing that reaches them.

No changes of its own (the underlay is the brownfield's base; it is built by the scenario,
never by an agent's service change).

- discover: each router's loopback (the first address of ``lo``): a :class:`Loopback`,
  service id ``underlay/<router>``.
- invariants: every router reaches every other router's loopback from its own (``loopback``,
  sourced from its loopback), in topology router order, service ``underlay``;
  touched: the pairs with a touched router at either end.
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

__all__ = ["Loopback", "Underlay"]


class Loopback(BaseModel):
    """A router's loopback address (a discovered instance; not a change)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    router: RouterName
    address: IPv4Address

    def service_id(self) -> str:
        return f"underlay/{self.router}"


def _pairs(configs: dict[str, DeviceConfig], topology: Any, routers: frozenset[str] | None) -> list[Check]:
    from ani.observer.checks import LoopbackCheck

    loops = loopbacks(configs, topology)
    return [
        LoopbackCheck(router=src, address=loops[dst], source=loops[src],
                      name=f"loopback {src} -> {dst} ({loops[dst]})", service="underlay")
        for src in loops for dst in loops
        if src != dst and (routers is None or src in routers or dst in routers)
    ]


@register
class Underlay(ServiceClass):
    """Underlay routing (see the module doc)."""

    name = "underlay"
    shares = ("the loopback addresses and the underlay routes every other service rides on",)

    def discover(self, configs: dict[str, DeviceConfig]) -> list[Service]:
        out = []
        for r, cfg in configs.items():
            ip = loopback(cfg)
            if ip is not None:
                spec = Loopback(router=r, address=ip)
                out.append(Service(spec.service_id(), self.name, spec, [r]))
        return out

    def invariants(self, configs: dict[str, DeviceConfig], topology: Any) -> list[Check]:
        return _pairs(configs, topology, None)

    def touched_invariants(self, configs: dict[str, DeviceConfig], topology: Any, touched: Touched) -> list[Check]:
        return _pairs(configs, topology, touched.routers)
