"""Typed service intents: one pydantic model per (service type, action).

::

    type                 actions                   service id (stable, readable)
    tenant-site          onboard | move | remove   tenant-site/<tenant>/<site>
    tenant-firewall      apply | remove            tenant-firewall/<tenant>
    static-route         add | remove              static-route/<router>/<prefix>/<next_hop>
    floating-address     add | remove              floating-address/<address>
    bgp-peering          add | remove              bgp-peering/<router>/<neighbor>
    prefix-list-entry    add | remove              prefix-list-entry/<list>/<prefix or any>
    route-map-entry      add | remove              route-map-entry/<route-map>/<seq>

A change is one of these models; :data:`ServiceChange` is their union, discriminated by
``type`` and ``action`` together (``parse_change({"type": "tenant-site", "action": "onboard",
...})``). Every model forbids unknown fields. What each one compiles to: ``docs/intents.md``.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, StrictInt, Tag, TypeAdapter, field_validator

Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,62}$", description="an FRR list / map name")]
RouterName = Annotated[str, Field(min_length=1, max_length=63, description="a router of the topology (e.g. e2)")]
IfName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,14}$", description="a Linux interface name")]
#: a JSON integer: ``true`` / ``false``, ``"200"`` and ``200.0`` are refused (not 1, 0, 200), as in
#: the source of truth
Int = StrictInt
TenantName = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,15}$", description="a tenant of the scenario (e.g. blue)")]


class _Intent(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def service_id(self) -> str:  # pragma: no cover - every concrete class overrides
        raise NotImplementedError


class _Add(_Intent):
    """Mixin of the ``add`` changes; it comes first among the bases, so ``action`` stays the
    last field."""

    action: Literal["add"] = "add"


class _Remove(_Intent):
    """Mixin of the ``remove`` changes (first among the bases, like :class:`_Add`)."""

    action: Literal["remove"] = "remove"


# -- tenant site ------------------------------------------------------------------------------


class _TenantSite(_Intent):
    """A site of a tenant: a prefix whose gateway address is on an edge router's interface,
    advertised through the edge's shared tenant prefix-list and put in the nftables set
    ``tenant_<tenant>`` of every router that has it."""

    type: Literal["tenant-site"] = "tenant-site"
    tenant: TenantName = Field(description="the tenant the site belongs to")
    site: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_\-]{0,30}$")] = Field(
        description="the site's name (its host node, e.g. nsite); unique within the tenant"
    )
    edge: RouterName | None = Field(
        default=None, description="onboard: the edge router; move: the new edge; remove: ignored if None, checked if set"
    )
    interface: IfName | None = Field(
        default=None, description="the edge interface facing the site (default to-<site>)"
    )
    prefix: IPv4Network | None = Field(
        default=None, description="the site's prefix; onboard without it allocates one from the site pool"
    )
    gateway: IPv4Address | None = Field(
        default=None, description="the gateway address on the edge interface (default: first address of the prefix)"
    )

    def service_id(self) -> str:
        return f"tenant-site/{self.tenant}/{self.site}"


class TenantSiteOnboard(_TenantSite):
    """Attach a new site of an existing tenant to an edge router."""

    action: Literal["onboard"] = "onboard"
    edge: RouterName = Field(description="the edge router the site's host is cabled to")


class TenantSiteMove(_TenantSite):
    """Move an existing site to another edge (and / or interface); prefix and gateway are kept
    unless given."""

    action: Literal["move"] = "move"
    edge: RouterName = Field(description="the new edge router")


class TenantSiteRemove(_Remove, _TenantSite):
    """Detach an existing site: its prefix-list entry, gateway address and set elements go."""


# -- tenant firewall policy ---------------------------------------------------------------------


class _TenantFirewall(_Intent):
    """A tenant's isolation: nftables set ``tenant_<tenant>`` holding the tenant's site
    prefixes, and ``drop`` rules both ways between it and each tenant of ``isolate_from``."""

    type: Literal["tenant-firewall"] = "tenant-firewall"
    tenant: TenantName
    isolate_from: list[TenantName] | None = Field(
        default=None, description="tenants whose traffic with this one is dropped (default: every other tenant)"
    )
    routers: list[RouterName] | None = Field(
        default=None, description="routers carrying the policy (default: every router that has a firewall)"
    )

    def service_id(self) -> str:
        return f"tenant-firewall/{self.tenant}"


class TenantFirewallApply(_TenantFirewall):
    """Create or update the tenant's set and drop rules."""

    action: Literal["apply"] = "apply"


class TenantFirewallRemove(_Remove, _TenantFirewall):
    """Remove the tenant's drop rules and set (refused while a rule of another tenant uses it)."""


# -- static route / floating address ------------------------------------------------------------


class _StaticRoute(_Intent):
    """``ip route PREFIX NEXT_HOP [DISTANCE]`` on one router."""

    type: Literal["static-route"] = "static-route"
    router: RouterName
    prefix: IPv4Network
    next_hop: str = Field(description="an IPv4 address (not the router's own), an interface, Null0, blackhole or reject")
    distance: Int = Field(default=1, ge=1, le=255, description="administrative distance (1 is FRR's default)")

    def service_id(self) -> str:
        return f"static-route/{self.router}/{self.prefix}/{self.next_hop}"


class StaticRouteAdd(_Add, _StaticRoute):
    """Add the route, or change its distance if the (prefix, next hop) route exists."""


class StaticRouteRemove(_Remove, _StaticRoute):
    pass


class _FloatingAddress(_Intent):
    """An address (with its prefix length) that lives on exactly one router's interface."""

    type: Literal["floating-address"] = "floating-address"
    address: IPv4Interface = Field(description="address/length, e.g. 198.51.100.10/32")
    router: RouterName
    interface: IfName = Field(default="lo")

    def service_id(self) -> str:
        return f"floating-address/{self.address.ip}"


class FloatingAddressAdd(_Add, _FloatingAddress):
    """Put the address on ``router``/``interface``; if it is on another router it moves."""


class FloatingAddressRemove(_Remove, _FloatingAddress):
    pass


# -- BGP peering ----------------------------------------------------------------------------------


class _BgpPeering(_Intent):
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


class BgpPeeringAdd(_Add, _BgpPeering):
    pass


class BgpPeeringRemove(_Remove, _BgpPeering):
    pass


# -- shared list entries --------------------------------------------------------------------------


class _PrefixListEntry(_Intent):
    """``ip prefix-list NAME seq SEQ ACTION PREFIX [ge] [le]`` on each of ``routers``."""

    type: Literal["prefix-list-entry"] = "prefix-list-entry"
    routers: list[RouterName] = Field(min_length=1)
    name: Name
    seq: Int | None = Field(default=None, ge=1, le=4294967295, description="None: allocated from the list's pool")
    entry_action: Literal["permit", "deny"] = "permit"
    prefix: IPv4Network | None = Field(default=None, description="None means 'any'")
    ge: Int | None = Field(default=None, ge=1, le=32)
    le: Int | None = Field(default=None, ge=1, le=32)

    def service_id(self) -> str:
        return f"prefix-list-entry/{self.name}/{self.prefix if self.prefix is not None else 'any'}"


class PrefixListEntryAdd(_Add, _PrefixListEntry):
    pass


class PrefixListEntryRemove(_Remove, _PrefixListEntry):
    pass


class _RouteMapEntry(_Intent):
    """``route-map NAME ACTION SEQ`` with its match / set lines, on each of ``routers``."""

    type: Literal["route-map-entry"] = "route-map-entry"
    routers: list[RouterName] = Field(min_length=1)
    name: Name
    seq: Int = Field(ge=1, le=65535)
    entry_action: Literal["permit", "deny"] = "permit"
    match_prefix_list: Name | None = Field(default=None, description="an existing prefix-list (or one added in the same changes)")
    set_local_preference: Int | None = Field(default=None, ge=0, le=4294967295)
    set_metric: Int | None = Field(default=None, ge=0, le=4294967295)
    set_community: list[str] | None = None

    def service_id(self) -> str:
        return f"route-map-entry/{self.name}/{self.seq}"


class RouteMapEntryAdd(_Add, _RouteMapEntry):
    pass


class RouteMapEntryRemove(_Remove, _RouteMapEntry):
    pass


# -- the union ------------------------------------------------------------------------------------

CHANGE_CLASSES: tuple[type[_Intent], ...] = (
    TenantSiteOnboard, TenantSiteMove, TenantSiteRemove,
    TenantFirewallApply, TenantFirewallRemove,
    StaticRouteAdd, StaticRouteRemove,
    FloatingAddressAdd, FloatingAddressRemove,
    BgpPeeringAdd, BgpPeeringRemove,
    PrefixListEntryAdd, PrefixListEntryRemove,
    RouteMapEntryAdd, RouteMapEntryRemove,
)  # fmt: skip


def _tag(cls: type[_Intent]) -> str:
    return f"{cls.model_fields['type'].default}/{cls.model_fields['action'].default}"


#: ``{"tenant-site": [TenantSiteOnboard, ...], ...}`` in catalogue order
SERVICE_TYPES: dict[str, list[type[_Intent]]] = {}
for _c in CHANGE_CLASSES:
    SERVICE_TYPES.setdefault(_c.model_fields["type"].default, []).append(_c)


def _discriminate(v: Any) -> str | None:
    if isinstance(v, dict):
        return f"{v.get('type')}/{v.get('action')}"
    return f"{getattr(v, 'type', None)}/{getattr(v, 'action', None)}"


ServiceChange = Annotated[
    Union[tuple(Annotated[c, Tag(_tag(c))] for c in CHANGE_CLASSES)],  # type: ignore[valid-type]
    Discriminator(_discriminate, custom_error_type="unknown-change",
                  custom_error_message="unknown (type, action)"),
]
"""Any change; discriminated by ``type`` + ``action``."""

_ADAPTER: TypeAdapter[Any] = TypeAdapter(ServiceChange)
_LIST_ADAPTER: TypeAdapter[Any] = TypeAdapter(list[ServiceChange])


def parse_change(data: Any) -> Any:
    """The model of one change (a mapping). Raises IntentError ``schema`` naming the field."""
    return parse_changes([data])[0]


def parse_changes(data: Any) -> list[Any]:
    """Models of a list of changes (mappings or models). Raises IntentError ``schema`` naming the
    first bad field as ``changes.<i>.<field>``."""
    from pydantic import ValidationError

    from ani.intents.errors import IntentError

    try:
        return _LIST_ADAPTER.validate_python(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = [str(p) for p in e["loc"]]
        if len(loc) >= 2 and "/" in loc[1]:  # drop the union tag from the path
            loc.pop(1)
        if e["type"] == "unknown-change":
            item = data[int(loc[0])] if isinstance(data, list) else None
            msg = f"unknown change {_discriminate(item)!r}; known: {', '.join(_tag(c) for c in CHANGE_CLASSES)}"
        else:
            msg = e["msg"]
        raise IntentError("schema", msg, ".".join(["changes", *loc])) from None


def type_schema(service_type: str) -> dict[str, Any]:
    """The JSON Schema of every change of ``service_type`` (one action per ``oneOf`` branch).
    Raises KeyError for an unknown type."""
    classes = SERVICE_TYPES[service_type]
    union = Annotated[Union[tuple(classes)], Field(discriminator="action")] if len(classes) > 1 else classes[0]  # type: ignore[valid-type]
    schema = TypeAdapter(union).json_schema()
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": service_type, **schema}
    return schema
