"""Service class ``route-map-entry``: ``route-map NAME ACTION SEQ`` with its match / set lines.

::

    {"type": "route-map-entry", "action": "add", "routers": ["e1"], "name": "RM-TENANTS-OUT", "seq": 20,
     "match_prefix_list": "PL-A", "set_local_preference": 200}
    # -> e1: route-map RM-TENANTS-OUT permit 20 / match ip address prefix-list PL-A / set local-preference 200

- changes: :class:`RouteMapEntryAdd`, :class:`RouteMapEntryRemove`; service id
  ``route-map-entry/<route-map>/<seq>``.
- check: the seq is free (``seq-conflict``); the matched prefix-list exists; a remove that would
  empty a route-map still used by ``redistribute`` or a neighbor is refused.
- discover: identical entries (map, seq, action, match, sets) grouped over routers.
- shares: route-maps (``RM-TENANTS-OUT`` of every edge's ``redistribute connected``) and their seqs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from ani.names import unknown
from ani.device.model import RouteMap, RouteMapEntry
from ani.intents.errors import IntentError
from ani.intents.services.base import ServiceClass, register
from ani.intents.services.common import (
    MAX_LIST_ITEMS,
    Int,
    Intent,
    IntentAdd,
    IntentRemove,
    Name,
    RouterName,
    Service,
    add_entry,
    drop_entries,
    router,
)

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.intents.pools import Pools

__all__ = ["RouteMapEntryAdd", "RouteMapEntryRemove", "RouteMapEntryService"]


class _RouteMapEntry(Intent):
    """``route-map NAME ACTION SEQ`` with its match / set lines, on each of ``routers``."""

    type: Literal["route-map-entry"] = "route-map-entry"
    routers: list[RouterName] = Field(min_length=1, max_length=MAX_LIST_ITEMS)
    name: Name
    seq: Int = Field(ge=1, le=65535)
    entry_action: Literal["permit", "deny"] = "permit"
    match_prefix_list: Name | None = Field(default=None, description="an existing prefix-list (or one added in the same changes)")
    set_local_preference: Int | None = Field(default=None, ge=0, le=4294967295)
    set_metric: Int | None = Field(default=None, ge=0, le=4294967295)
    set_community: list[Annotated[str, Field(max_length=64)]] | None = Field(default=None, max_length=MAX_LIST_ITEMS)

    def service_id(self) -> str:
        return f"route-map-entry/{self.name}/{self.seq}"


class RouteMapEntryAdd(IntentAdd, _RouteMapEntry):
    pass


class RouteMapEntryRemove(IntentRemove, _RouteMapEntry):
    pass


@register
class RouteMapEntryService(ServiceClass):
    """Route-map entries (see the module doc)."""

    name = "route-map-entry"
    changes = (RouteMapEntryAdd, RouteMapEntryRemove)
    id_format = "route-map-entry/<route-map>/<seq>"
    description = ("route-map NAME permit|deny SEQ with match prefix-list / set lines on a set of routers. "
                   "add, remove.")
    shares = ("route-maps (RM-TENANTS-OUT behind every edge's redistribute connected) and their seqs",)

    def check(self, ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
        for i, r in enumerate(ch.routers):
            cfg = router(state, r, f"{path}.routers.{i}")
            rm = cfg.route_maps.get(ch.name)
            has = rm is not None and any(e.seq == ch.seq for e in rm.entries)
            if ch.action == "remove":
                if not has:
                    raise IntentError("service-not-found", f"{r}: route-map {ch.name} has no entry {ch.seq}", path)
                if len(rm.entries) == 1 and cfg.bgp is not None:
                    users = [k for k, v in cfg.bgp.ipv4_unicast.redistribute.items() if v == ch.name]
                    users += [k for k, p in cfg.bgp.ipv4_unicast.peers.items() if ch.name in (p.route_map_in, p.route_map_out)]
                    if users:
                        raise IntentError("invalid", f"{r}: route-map {ch.name} would disappear but is used by {', '.join(users)}", path)
                continue
            if has:
                raise IntentError("seq-conflict", f"{r}: seq {ch.seq} of route-map {ch.name} is already used", f"{path}.seq")
            if ch.match_prefix_list is not None and ch.match_prefix_list not in cfg.prefix_lists:
                raise IntentError("unknown-reference", unknown("prefix-list", ch.match_prefix_list, sorted(cfg.prefix_lists),
                                                               where=r), f"{path}.match_prefix_list")

    def apply(self, ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> None:
        for r in ch.routers:
            if ch.action == "remove":
                drop_entries(state[r].route_maps, ch.name, lambda e: e.seq != ch.seq, RouteMap)
                continue
            entry = RouteMapEntry(seq=ch.seq, action=ch.entry_action, match_prefix_list=ch.match_prefix_list,
                                  set_local_preference=ch.set_local_preference, set_metric=ch.set_metric,
                                  set_community=ch.set_community)
            add_entry(state[r].route_maps, ch.name, entry, RouteMap)

    def discover(self, configs: dict[str, DeviceConfig]) -> list[Service]:
        rm: dict[tuple, list[str]] = {}
        for r, cfg in configs.items():
            for name, rmap in cfg.route_maps.items():
                for e in rmap.entries:
                    key = (name, e.seq, e.action, e.match_prefix_list, e.set_local_preference, e.set_metric,
                           tuple(e.set_community) if e.set_community else None)
                    rm.setdefault(key, []).append(r)
        out = []
        for (name, seq, action, mpl, lp, metric, comm), routers in rm.items():
            spec = RouteMapEntryAdd(routers=routers, name=name, seq=seq, entry_action=action, match_prefix_list=mpl,
                                    set_local_preference=lp, set_metric=metric, set_community=list(comm) if comm else None)
            out.append(Service(spec.service_id(), "route-map-entry", spec, routers))
        return out
