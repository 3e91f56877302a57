"""Argument models of the A3-T tools (:mod:`ani.adapters.a3t`, :mod:`ani.adapters.service_tools`)
and the A3-T options check.

``changes`` is a list of JSON objects, each one typed service change (``type`` + ``action``
select the model; the models and their JSON Schemas: ``ani.intents.models``,
``intents/schemas/``, tool ``get_service_schema``). It is typed loosely here (a list of
objects) so that a bad change is refused by intent validation with ``invalid_intent`` naming
the change and field (``changes.0.route_map_in``), not by the argument check.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any, Literal

from pydantic import Field

from ani.adapters.base import Args
from ani.errors import ConfigError

#: what ``get_state`` can show
STATE_VIEWS = ("interfaces", "routes", "bgp", "ospf", "firewall", "config")

CHANGES_DESCRIPTION = (
    "Service changes, applied in order, each a JSON object with 'type' and 'action', e.g. "
    '{"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2", '
    '"prefix": "198.19.7.0/24", "gateway": "198.19.7.1"}. Types and their fields: '
    "list_service_types and get_service_schema."
)


class ServiceTypeArgs(Args):
    type: str = Field(description="A service type, e.g. tenant-site (see list_service_types)")


class ListServicesArgs(Args):
    type: str | None = Field(default=None, description="Only services of this type (None: every service)")


class ServiceIdArgs(Args):
    id: str = Field(min_length=1, description="A service id, e.g. tenant-site/blue/blue2 (see list_services)")


class PlanArgs(Args):
    changes: list[dict[str, Any]] = Field(min_length=1, description=CHANGES_DESCRIPTION)


class ApplyArgs(Args):
    changes: list[dict[str, Any]] = Field(min_length=1, description=CHANGES_DESCRIPTION)
    confirm_timeout_s: int | None = Field(
        default=None, ge=1, le=3600,
        description=("Confirm timeout of the transaction's confirmed commits, seconds (default: the "
                     "adapter's, 60): if the transaction dies before confirming, every router "
                     "rolls back by itself at the latest after this time"),
    )


class GetStateArgs(Args):
    device: str = Field(description="Device name (a router of the topology)")
    what: Literal["interfaces", "routes", "bgp", "ospf", "firewall", "config"] = Field(
        description=("interfaces (addresses, state), routes (the IPv4 routing table), bgp (BGP "
                     "summary), ospf (OSPF neighbors), firewall (nftables ruleset), config (FRR "
                     "running configuration)"),
    )


# -- options --------------------------------------------------------------------------------

#: ``{option: (type(s), default)}`` of the A3-T adapter
OPTIONS: dict[str, tuple[tuple[type, ...], Any]] = {
    "confirm_timeout_s": ((int,), 60),
    "site_network": ((str, IPv4Network, type(None)), None),
    "site_prefixlen": ((int,), 24),
    "seq_limit": ((int, type(None)), None),
    "check_bound_s": ((int, float), 20.0),
}


def check_options(options: dict[str, Any], level: str = "a3t") -> dict[str, Any]:
    """The options with defaults filled in and values converted (``site_network`` to an
    IPv4Network). Raises ConfigError naming the option for an unknown key, a wrong type or a
    value out of range."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ConfigError(f"{level} options: unknown {unknown}; known: {sorted(OPTIONS)}")
    out: dict[str, Any] = {}
    for key, (kinds, default) in OPTIONS.items():
        v = options.get(key, default)
        if isinstance(v, bool) or not isinstance(v, kinds):
            names = " or ".join("None" if k is type(None) else k.__name__ for k in kinds)
            raise ConfigError(f"{level} options.{key} must be {names}, got {v!r}")
        out[key] = v
    if out["confirm_timeout_s"] < 1:
        raise ConfigError(f"{level} options.confirm_timeout_s must be >= 1, got {out['confirm_timeout_s']}")
    if not 8 <= out["site_prefixlen"] <= 30:
        raise ConfigError(f"{level} options.site_prefixlen must be 8..30, got {out['site_prefixlen']}")
    if out["seq_limit"] is not None and out["seq_limit"] < 1:
        raise ConfigError(f"{level} options.seq_limit must be >= 1, got {out['seq_limit']}")
    if out["check_bound_s"] <= 0:
        raise ConfigError(f"{level} options.check_bound_s must be > 0, got {out['check_bound_s']}")
    if out["site_network"] is not None:
        try:
            out["site_network"] = IPv4Network(out["site_network"])
        except ValueError as exc:
            raise ConfigError(f"{level} options.site_network: {exc}") from None
        if out["site_prefixlen"] < out["site_network"].prefixlen:
            raise ConfigError(f"{level} options.site_prefixlen {out['site_prefixlen']} is shorter than "
                              f"site_network {out['site_network']}")
    return out
