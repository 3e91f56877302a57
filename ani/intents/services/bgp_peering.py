"""Service class ``bgp-peering``: a BGP neighbor of a router's existing ``router bgp``.

::

    {"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9", "remote_as": 65010,
     "route_map_in": "RM-IN"}
    # -> e1: router bgp ... neighbor 192.0.2.9 remote-as 65010; address-family ipv4 unicast
    #    neighbor 192.0.2.9 route-map RM-IN in

- changes: :class:`BgpPeeringAdd`, :class:`BgpPeeringRemove`; service id
  ``bgp-peering/<router>/<neighbor>``.
- check: the router has ``router bgp``; the neighbor is not its own address; ``remote_as`` or an
  existing ``peer_group``; the route-maps named exist.
- discover: each neighbor of each router (the iBGP sessions to route reflectors too: their
  invariants are class ``ibgp``'s).
"""

from __future__ import annotations

from ipaddress import IPv4Address
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from ani.names import unknown
from ani.device.model import BgpAfPeer, Peer
from ani.intents.errors import IntentError
from ani.intents.services.base import ServiceClass, register
from ani.intents.services.common import (
    Int,
    Intent,
    IntentAdd,
    IntentRemove,
    Name,
    RouterName,
    Service,
    is_remove,
    own_addresses,
    router,
)

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.intents.pools import Pools

__all__ = ["BgpPeering", "BgpPeeringAdd", "BgpPeeringRemove"]


class _BgpPeering(Intent):
    """A BGP neighbor of ``router`` (in its existing ``router bgp``)."""

    type: Literal["bgp-peering"] = "bgp-peering"
    router: RouterName
    neighbor: IPv4Address
    remote_as: Int | Literal["internal", "external"] | None = Field(
        default=None, description="1..4294967295, internal or external; needed unless peer_group is set"
    )
    peer_group: Name | None = Field(default=None, description="an existing peer-group of the router")
    description: str | None = None
    update_source: str | None = None
    route_map_in: Name | None = Field(default=None, description="an existing route-map of the router")
    route_map_out: Name | None = Field(default=None, description="an existing route-map of the router")

    @field_validator("remote_as")
    @classmethod
    def _asn(cls, v: Any) -> Any:
        if isinstance(v, int) and not 1 <= v <= 4294967295:
            raise ValueError("remote_as must be 1..4294967295")
        return v

    def service_id(self) -> str:
        return f"bgp-peering/{self.router}/{self.neighbor}"


class BgpPeeringAdd(IntentAdd, _BgpPeering):
    pass


class BgpPeeringRemove(IntentRemove, _BgpPeering):
    pass


@register
class BgpPeering(ServiceClass):
    """BGP neighbors (see the module doc)."""

    name = "bgp-peering"
    changes = (BgpPeeringAdd, BgpPeeringRemove)
    id_format = "bgp-peering/<router>/<neighbor>"
    description = ("A BGP neighbor of a router's existing router bgp, with optional route-maps in / out (which "
                   "must exist). add, remove.")

    def check(self, ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
        cfg = router(state, ch.router, f"{path}.router")
        if cfg.bgp is None:
            raise IntentError("unknown-reference", f"{ch.router} has no 'router bgp'", f"{path}.router")
        exists = str(ch.neighbor) in cfg.bgp.neighbors
        if is_remove(ch, exists, path, f"no service {ch.service_id()}", f"{ch.service_id()} already exists", f"{path}.neighbor"):
            return
        if ch.neighbor in own_addresses(cfg):
            raise IntentError("nexthop-self", f"neighbor {ch.neighbor} is an address of {ch.router} itself", f"{path}.neighbor")
        if ch.remote_as is None and ch.peer_group is None:
            raise IntentError("invalid", "remote_as or peer_group is required", f"{path}.remote_as")
        if ch.peer_group is not None and ch.peer_group not in cfg.bgp.peer_groups:
            raise IntentError("unknown-reference", unknown("peer-group", ch.peer_group, sorted(cfg.bgp.peer_groups),
                                                           where=ch.router), f"{path}.peer_group")
        for f in ("route_map_in", "route_map_out"):
            name = getattr(ch, f)
            if name is not None and name not in cfg.route_maps:
                raise IntentError("unknown-reference", unknown("route-map", name, sorted(cfg.route_maps), where=ch.router),
                                  f"{path}.{f}")

    def apply(self, ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> None:
        bgp = state[ch.router].bgp
        if ch.action == "remove":
            bgp.neighbors.pop(str(ch.neighbor), None)
            bgp.ipv4_unicast.peers.pop(str(ch.neighbor), None)
            return
        bgp.neighbors[str(ch.neighbor)] = Peer(remote_as=ch.remote_as, peer_group=ch.peer_group,
                                               description=ch.description, update_source=ch.update_source)
        af = BgpAfPeer(route_map_in=ch.route_map_in, route_map_out=ch.route_map_out)
        if not af.is_empty():
            bgp.ipv4_unicast.peers[str(ch.neighbor)] = af

    def discover(self, configs: dict[str, DeviceConfig]) -> list[Service]:
        out = []
        for r, cfg in configs.items():
            if cfg.bgp is None:
                continue
            for addr, p in cfg.bgp.neighbors.items():
                af = cfg.bgp.ipv4_unicast.peers.get(addr)
                spec = BgpPeeringAdd(
                    router=r, neighbor=IPv4Address(addr), remote_as=p.remote_as, peer_group=p.peer_group,
                    description=p.description, update_source=p.update_source,
                    route_map_in=af.route_map_in if af else None, route_map_out=af.route_map_out if af else None,
                )
                out.append(Service(spec.service_id(), "bgp-peering", spec, [r]))
        return out
