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

The models live with their service class (``ani/intents/services/<type>.py``, one module per
class: model, check, allocate, apply, discover, invariants); this module re-exports them and
builds the catalogue from the registry (:func:`ani.intents.services.service_classes`), so a
class registered later (a new module, a test's own class) is parsed and listed too:

- :data:`CHANGE_CLASSES`: every change model, classes in registration order (a live sequence);
- :data:`SERVICE_TYPES`: ``{type: [model, ...]}`` in the same order (a live mapping);
- :data:`ServiceChange`: their union, discriminated by ``type`` and ``action`` together
  (``parse_change({"type": "tenant-site", "action": "onboard", ...})``); read at access time.

Every model forbids unknown fields. What each one compiles to: ``docs/intents.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Annotated, Any, Union

from pydantic import Discriminator, Field, Tag, TypeAdapter

from ani.intents.services import service_classes
from ani.intents.services.base import RegistryView
from ani.intents.services.bgp_peering import BgpPeeringAdd, BgpPeeringRemove
from ani.intents.services.common import IfName, Int, Intent, IntentAdd, IntentRemove, Name, RouterName, TenantName
from ani.intents.services.floating_address import FloatingAddressAdd, FloatingAddressRemove
from ani.intents.services.prefix_list_entry import PrefixListEntryAdd, PrefixListEntryRemove
from ani.intents.services.route_map_entry import RouteMapEntryAdd, RouteMapEntryRemove
from ani.intents.services.static_route import StaticRouteAdd, StaticRouteRemove
from ani.intents.services.tenant_firewall import TenantFirewallApply, TenantFirewallRemove
from ani.intents.services.tenant_site import TenantSiteMove, TenantSiteOnboard, TenantSiteRemove

__all__ = [
    "CHANGE_CLASSES", "SERVICE_TYPES", "BgpPeeringAdd", "BgpPeeringRemove", "FloatingAddressAdd",
    "FloatingAddressRemove", "IfName", "Int", "Name", "PrefixListEntryAdd", "PrefixListEntryRemove",
    "RouteMapEntryAdd", "RouteMapEntryRemove", "RouterName", "ServiceChange", "StaticRouteAdd",
    "StaticRouteRemove", "TenantFirewallApply", "TenantFirewallRemove", "TenantName", "TenantSiteMove",
    "TenantSiteOnboard", "TenantSiteRemove", "parse_change", "parse_changes", "type_schema",
]  # fmt: skip

# the bases under their earlier names
_Intent, _Add, _Remove = Intent, IntentAdd, IntentRemove


def _change_classes() -> tuple[type[Intent], ...]:
    return tuple(m for cls in service_classes() for m in cls.changes)


class _ChangeClasses(Sequence):
    """Every change model of the registered classes (registration order), read on each access."""

    def __getitem__(self, i: Any) -> Any:
        return _change_classes()[i]

    def __len__(self) -> int:
        return len(_change_classes())

    def __repr__(self) -> str:
        return f"CHANGE_CLASSES{_change_classes()!r}"


def _service_types() -> dict[str, list[type[Intent]]]:
    out: dict[str, list[type[Intent]]] = {}
    for m in _change_classes():
        out.setdefault(m.model_fields["type"].default, []).append(m)
    return out


#: every change model, in catalogue order (a tuple-like live view of the registry)
CHANGE_CLASSES: Sequence[type[Intent]] = _ChangeClasses()
#: ``{"tenant-site": [TenantSiteOnboard, ...], ...}`` in catalogue order (a live view of the registry)
SERVICE_TYPES: Mapping[str, list[type[Intent]]] = RegistryView(_service_types, "SERVICE_TYPES")


def _tag(cls: type[Intent]) -> str:
    return f"{cls.model_fields['type'].default}/{cls.model_fields['action'].default}"


def _discriminate(v: Any) -> str | None:
    if isinstance(v, dict):
        return f"{v.get('type')}/{v.get('action')}"
    return f"{getattr(v, 'type', None)}/{getattr(v, 'action', None)}"


def _union(classes: tuple[type[Intent], ...]) -> Any:
    return Annotated[
        Union[tuple(Annotated[c, Tag(_tag(c))] for c in classes)],  # type: ignore[valid-type]
        Discriminator(_discriminate, custom_error_type="unknown-change",
                      custom_error_message="unknown (type, action)"),
    ]


@lru_cache(maxsize=8)
def _list_adapter(classes: tuple[type[Intent], ...]) -> TypeAdapter[Any]:
    return TypeAdapter(list[_union(classes)])  # type: ignore[misc]


def __getattr__(name: str) -> Any:
    if name == "ServiceChange":  # any change; discriminated by ``type`` + ``action``
        return _union(_change_classes())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_change(data: Any) -> Any:
    """The model of one change (a mapping). Raises IntentError ``schema`` naming the field."""
    return parse_changes([data])[0]


def parse_changes(data: Any) -> list[Any]:
    """Models of a list of changes (mappings or models). Raises IntentError ``schema`` naming the
    first bad field as ``changes.<i>.<field>``."""
    from pydantic import ValidationError

    from ani.intents.errors import IntentError

    classes = _change_classes()
    try:
        return _list_adapter(classes).validate_python(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = [str(p) for p in e["loc"]]
        if len(loc) >= 2 and "/" in loc[1]:  # drop the union tag from the path
            loc.pop(1)
        if e["type"] == "unknown-change":
            item = data[int(loc[0])] if isinstance(data, list) else None
            msg = f"unknown change {_discriminate(item)!r}; known: {', '.join(_tag(c) for c in classes)}"
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
