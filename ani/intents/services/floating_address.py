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

from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ani.device.model import Interface
from ani.errors import GeneratorError
from ani.intents.errors import IntentError
from ani.intents.services.base import ServiceClass, register
from ani.intents.services.common import IfName, Intent, IntentAdd, IntentRemove, RouterName, Service, is_remove, loopback, router
from ani.intents.services.realism import FLOAT_AREA, ZIPF, edge_ranks, layer_options
from ani.observer.checks import LoopbackCheck

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.intents.pools import Pools
    from ani.scenario.build import Build, Layer

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



# -- generator -----------------------------------------------------------------------------------


def _generate(build: Build, layer: Layer) -> None:
    """``layer.density`` floating (service) addresses: a /32 of 198.51.100.0/24 on ``lo`` of an
    edge drawn by Zipf rank; ``lo`` is in OSPF area 0, so the underlay carries it. A trap
    (``trap_rate``) is the address next to a floating address of another edge (when there is
    one with a free neighbour), else an unused address (.200-.254) inside a site prefix of
    another edge: a /32 that longest-match shadows part of that site's /24. Invariants: each
    route reflector and the edge after the owner (in edge order) ping the address from their
    loopback (service ``floating-address/<address>``). Option ``zipf`` (float). Raises
    GeneratorError: no edges, 198.51.100.0/24 full."""
    opts = layer_options(layer, {"zipf": float})
    s = float(opts.get("zipf", ZIPF))
    rng = build.rng(layer.stream)
    edges = edge_ranks(build, rng)
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

    def generate(self, build: Build, layer: Layer) -> None:
        _generate(build, layer)
