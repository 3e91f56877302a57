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
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from ani.adapters.base import Args
from ani.adapters.options import Options

#: default of the ``busy_timeout_s`` option of A3-T, A3-R and A4, seconds
BUSY_TIMEOUT_S = 120.0
BUSY_TIMEOUT_DESCRIPTION = ("how long a call waits for the adapter's other calls in flight (at A3-R / A4 "
                            "also for another writer's reconcile of the lab) before it answers timeout, seconds")

#: default bounds of one A3-T / A4 change set (options ``max_changes``, ``max_router_lines``,
#: ``plan_bound_s``, ``apply_bound_s``; docs/intents.md "Bounds")
MAX_CHANGES = 200
MAX_ROUTER_LINES = 1000  # = ani.netconf.limits.Limits().commit_lines
PLAN_BOUND_S = 60.0
APPLY_BOUND_S = 300.0

#: what ``get_state`` can show
STATE_VIEWS = ("interfaces", "routes", "bgp", "ospf", "firewall", "config")

CHANGES_DESCRIPTION = (
    "Service changes, applied in order, each a JSON object with 'type' and 'action', e.g. "
    '{"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2", '
    '"prefix": "198.19.7.0/24", "gateway": "198.19.7.1"}. Types and their fields: '
    "list_service_types and get_service_schema. At most 200 changes (option max_changes) and 1000 "
    "changed configuration lines per router (option max_router_lines) in one call: split a larger change set."
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


def _network(v: Any) -> Any:
    """``site_network`` is written as a string ("198.19.0.0/16"), not a number."""
    if v is not None and not isinstance(v, (str, IPv4Network)):
        raise ValueError(f"must be a prefix string such as 198.19.0.0/16, got {v!r}")
    return v


class A3TOptions(Options):
    """Options of the A3-T service tools (also A4's)."""

    confirm_timeout_s: int = Field(60, ge=1, le=3600, description="confirm timeout of a transaction's confirmed commits, seconds")
    site_network: Annotated[Annotated[IPv4Network, Field(strict=False)] | None, BeforeValidator(_network)] = Field(
        None, description="pool of site prefixes (None: an onboard must give its prefix)")
    site_prefixlen: int = Field(24, ge=8, le=30, description="length of an allocated site prefix")
    seq_limit: int | None = Field(None, ge=1, description="largest sequence number the pools hand out (a fault can shrink it)")
    check_bound_s: float = Field(20.0, gt=0, description="bound of each active validation check, seconds")
    busy_timeout_s: float = Field(BUSY_TIMEOUT_S, gt=0, description=BUSY_TIMEOUT_DESCRIPTION)
    max_changes: int = Field(MAX_CHANGES, ge=1, description="most service changes in one plan / apply")
    max_router_lines: int = Field(MAX_ROUTER_LINES, ge=1, description=(
        "most configuration lines one plan / apply may change on one router (the lab's NETCONF "
        "server refuses a larger commit: ANI_NETCONF_MAX_COMMIT_LINES)"))
    plan_bound_s: float = Field(PLAN_BOUND_S, gt=0, description="time bound of compiling a change set (plan, and apply before it sends anything), seconds")
    apply_bound_s: float = Field(APPLY_BOUND_S, gt=0, description=(
        "time bound of apply's transaction, seconds: past it no further step starts, and what was "
        "committed is cancelled (every router back to its prior config)"))

    @model_validator(mode="after")
    def _prefixlen_fits(self) -> A3TOptions:
        if self.site_network is not None and self.site_prefixlen < self.site_network.prefixlen:
            raise ValueError(f"site_prefixlen {self.site_prefixlen} is shorter than site_network {self.site_network}")
        return self
