"""Service class ``floating-address``: an address that lives on exactly one router's interface.

::

    {"type": "floating-address", "action": "add", "address": "198.51.100.10/32", "router": "e1"}
    # -> e1: interface lo ip address 198.51.100.10/32 (and off any other router that had it)

- changes: :class:`FloatingAddressAdd` (on another router it moves), :class:`FloatingAddressRemove`;
  service id ``floating-address/<address>``.
- check: the address is not inside another interface's network (``address-conflict``).
- discover: each address of ``lo`` other than the router's first one (its loopback).
"""

from __future__ import annotations

from ipaddress import IPv4Interface, IPv4Network
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ani.device.model import Interface
from ani.intents.errors import IntentError
from ani.intents.services.base import ServiceClass, register
from ani.intents.services.common import IfName, Intent, IntentAdd, IntentRemove, RouterName, Service, is_remove, router

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.intents.pools import Pools

__all__ = ["FloatingAddress", "FloatingAddressAdd", "FloatingAddressRemove"]


class _FloatingAddress(Intent):
    """An address (with its prefix length) that lives on exactly one router's interface."""

    type: Literal["floating-address"] = "floating-address"
    address: IPv4Interface = Field(description="address/length, e.g. 198.51.100.10/32")
    router: RouterName
    interface: IfName = Field(default="lo")

    def service_id(self) -> str:
        return f"floating-address/{self.address.ip}"


class FloatingAddressAdd(IntentAdd, _FloatingAddress):
    """Put the address on ``router``/``interface``; if it is on another router it moves."""


class FloatingAddressRemove(IntentRemove, _FloatingAddress):
    pass


def _drop_address(state: dict[str, DeviceConfig], address: IPv4Interface) -> None:
    for cfg in state.values():
        for ifname, iface in list(cfg.interfaces.items()):
            if any(a.ip == address.ip for a in iface.addresses):
                cfg.interfaces[ifname] = iface.model_copy(update={"addresses": [a for a in iface.addresses if a.ip != address.ip]})


@register
class FloatingAddress(ServiceClass):
    """Floating addresses (see the module doc)."""

    name = "floating-address"
    changes = (FloatingAddressAdd, FloatingAddressRemove)
    id_format = "floating-address/<address>"
    description = ("An address that lives on exactly one router's interface (default lo); add on another "
                   "router moves it. add, remove.")

    def check(self, ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
        router(state, ch.router, f"{path}.router")
        where = [(r, i) for r, c in state.items() for i, f in c.interfaces.items() if any(a.ip == ch.address.ip for a in f.addresses)]
        if is_remove(ch, (ch.router, ch.interface) in where, path, f"{ch.address.ip} is not on {ch.router} {ch.interface}"):
            return
        for r, c in state.items():
            for i, f in c.interfaces.items():
                for a in f.addresses:
                    if a.ip != ch.address.ip and a.network.prefixlen < 32 and ch.address.ip in a.network and (r, i) != (ch.router, ch.interface):
                        raise IntentError("address-conflict", f"{ch.address.ip} is in {a.network} of {r} interface {i}", f"{path}.address")

    def named_networks(self, ch: Any) -> list[IPv4Network]:
        return [ch.address.network, IPv4Network(f"{ch.address.ip}/32")]

    def apply(self, ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> None:
        _drop_address(state, ch.address)
        if ch.action == "remove":
            return
        cfg = state[ch.router]
        iface = cfg.interfaces.get(ch.interface, Interface())
        cfg.interfaces[ch.interface] = iface.model_copy(update={"addresses": [*iface.addresses, ch.address]})

    def discover(self, configs: dict[str, DeviceConfig]) -> list[Service]:
        out = []
        for r, cfg in configs.items():
            lo = cfg.interfaces.get("lo")
            if lo is not None:
                for a in lo.addresses[1:]:
                    spec = FloatingAddressAdd(address=a, router=r, interface="lo")
                    out.append(Service(spec.service_id(), "floating-address", spec, [r]))
        return out
