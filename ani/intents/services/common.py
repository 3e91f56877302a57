"""What several service classes share: field types and bases of the change models, the
tenant naming conventions (nftables set, edge prefix-list) and small state helpers.

::

    tenant_set("blue")                       # "tenant_blue": the nftables set of a tenant's prefixes
    tenant_list(cfg)                         # "PL-TENANTS": the edge's prefix-list of tenant prefixes
    router(state, "e2", "changes.0.edge")    # state["e2"], or IntentError unknown-router
    is_remove(ch, exists, path, missing)     # True for a remove of what exists (service-not-found otherwise)
    drop_entries(cfg.route_maps, "RM", keep, RouteMap)

``state`` is ``{router: ani.device.model.DeviceConfig}``. Nothing here imports the class modules
or the intents compiler, so every class module may import it. :class:`Service` (a discovered
instance) lives here for the same reason; ``ani.intents.inventory`` re-exports it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from ani.names import unknown
from ani.intents.errors import IntentError

#: the most items one list of a service's typed model holds (prefixes, routers, clients,
#: communities): refused by its schema before anything compiles (issue 23: an ebgp-peering with
#: 16,000 announced prefixes compiled for 81 s before the size bound refused it)
MAX_LIST_ITEMS = 256

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.intents.inventory import Inventory

__all__ = [
    "SET_PREFIX", "IfName", "Int", "Intent", "IntentAdd", "IntentRemove", "Name", "RouterName", "Service", "TenantName",
    "add_entry", "drop_entries", "inventory", "is_remove", "loopback", "loopbacks", "own_addresses", "router", "tenant_list", "tenant_of", "tenant_set",
]  # fmt: skip

# -- field types and bases of the change models ---------------------------------------------------

Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,62}$", description="an FRR list / map name")]
RouterName = Annotated[str, Field(min_length=1, max_length=63, description="a router of the topology (e.g. e2)")]
IfName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,14}$", description="a Linux interface name")]
#: a JSON integer: ``true`` / ``false``, ``"200"`` and ``200.0`` are refused (not 1, 0, 200), as in
#: the source of truth
Int = StrictInt
TenantName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,15}$", description="a tenant of the scenario (e.g. blue)")]


class Intent(BaseModel):
    """Base of every change model: unknown fields are refused, models are frozen. A concrete
    model sets ``type`` and ``action`` (``Literal`` fields with that default) and ``service_id``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def service_id(self) -> str:  # pragma: no cover - every concrete class overrides
        raise NotImplementedError


class IntentAdd(Intent):
    """Mixin of the ``add`` changes; it comes first among the bases, so ``action`` stays the
    last field."""

    action: Literal["add"] = "add"


class IntentRemove(Intent):
    """Mixin of the ``remove`` changes (first among the bases, like :class:`IntentAdd`)."""

    action: Literal["remove"] = "remove"


@dataclass
class Service:
    """One service instance: ``id``, ``type``, ``spec`` (the model that creates it), ``routers``."""

    id: str
    type: str
    spec: Any
    routers: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "routers": list(self.routers), "spec": self.spec.model_dump(mode="json")}


# -- tenant conventions ---------------------------------------------------------------------------

SET_PREFIX = "tenant_"


def tenant_set(tenant: str) -> str:
    """The nftables set of a tenant's prefixes."""
    return f"{SET_PREFIX}{tenant}"


def tenant_list(cfg: DeviceConfig) -> str | None:
    """The prefix-list of tenant prefixes of an edge: the first one matched by the route-map
    of ``redistribute connected`` (None if there is none)."""
    if cfg.bgp is None:
        return None
    rmap = cfg.bgp.ipv4_unicast.redistribute.get("connected")
    if rmap is None or rmap not in cfg.route_maps:
        return None
    for e in cfg.route_maps[rmap].entries:
        if e.match_prefix_list:
            return e.match_prefix_list
    return None


def tenant_of(configs: dict[str, DeviceConfig], prefix: IPv4Network) -> str | None:
    """The tenant whose nftables set ``tenant_<t>`` (on any router) holds a network
    overlapping ``prefix``; None if no set does."""
    for cfg in configs.values():
        if cfg.firewall is None:
            continue
        for name, s in cfg.firewall.sets.items():
            if name.startswith(SET_PREFIX) and any(prefix.overlaps(e) for e in s.elements):
                return name[len(SET_PREFIX) :]
    return None


def loopback(cfg: DeviceConfig | None) -> IPv4Address | None:
    """A router's loopback: the first address of ``lo`` (None: no config, no lo address)."""
    lo = cfg.interfaces.get("lo") if cfg is not None else None
    return lo.addresses[0].ip if lo is not None and lo.addresses else None


def loopbacks(configs: dict[str, DeviceConfig], topology: Any) -> dict[str, IPv4Address]:
    """``{router: first address of interface lo}``, in topology router order."""
    out = {}
    for r in topology.routers:
        ip = loopback(configs.get(r))
        if ip is not None:
            out[r] = ip
    return out


# -- state helpers --------------------------------------------------------------------------------


def inventory(state: dict[str, DeviceConfig]) -> Inventory:
    """``ani.intents.inventory.Inventory(state)`` (imported here, at call time: the inventory
    discovers through the class modules, which import this module)."""
    from ani.intents.inventory import Inventory

    return Inventory(state)


def router(state: dict[str, DeviceConfig], name: str | None, path: str) -> DeviceConfig:
    """``state[name]``. Raises IntentError ``invalid`` (no name) or ``unknown-router`` at ``path``."""
    if name is None:
        raise IntentError("invalid", "a router is required", path)
    if name not in state:
        raise IntentError("unknown-router", unknown("router", name, sorted(state)), path)
    return state[name]


def own_addresses(cfg: DeviceConfig) -> set[IPv4Address]:
    """Every interface address of a router."""
    return {a.ip for i in cfg.interfaces.values() for a in i.addresses}


def is_remove(ch: Any, exists: bool, path: str, missing: str, taken: str | None = None, taken_path: str | None = None) -> bool:
    """Whether ``ch`` is a remove. A remove of what does not exist is ``service-not-found``
    (``missing``, at ``path``); an add of what exists is ``service-exists`` (``taken``, at
    ``taken_path``) when ``taken`` is given."""
    if ch.action == "remove":
        if not exists:
            raise IntentError("service-not-found", missing, path)
        return True
    if exists and taken is not None:
        raise IntentError("service-exists", taken, taken_path or path)
    return False


def add_entry(lists: dict, name: str, entry: Any, make: Callable[..., Any]) -> None:
    """Append ``entry`` to ``lists[name]`` (``make(entries=...)`` builds the list; a missing
    list is created)."""
    lst = lists.get(name)
    lists[name] = make(entries=[*(lst.entries if lst is not None else []), entry])


def drop_entries(lists: dict, name: str, keep: Callable[[Any], bool], make: Callable[..., Any]) -> None:
    """Keep the entries of ``lists[name]`` for which ``keep(entry)`` holds (``make(entries=...)``
    rebuilds the list); a list left empty goes. No list of that name: nothing to do."""
    lst = lists.get(name)
    if lst is None:
        return
    rest = [e for e in lst.entries if keep(e)]
    if rest:
        lists[name] = make(entries=rest)
    else:
        del lists[name]
