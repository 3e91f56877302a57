"""Argument models and options of the A4 tools (:mod:`ani.adapters.a4`); every other tool takes
the A3-R (:mod:`ani.adapters.a3r_args`) or A3-T (:mod:`ani.adapters.a3t_args`) models."""

from __future__ import annotations

from pydantic import Field

from ani.adapters.a3r_args import A3ROptions
from ani.adapters.a3t_args import A3TOptions
from ani.adapters.base import Args


class A4Options(A3ROptions, A3TOptions):
    """A4's options: A3-R's (``max_tries``, ``keep_repo``) and A3-T's (``confirm_timeout_s``,
    ``site_network``, ``site_prefixlen``, ``seq_limit``, ``check_bound_s``)."""


SERVICES_WORKFLOW = (
    "Services live in the same repository as services/<name>.json, each ONE service change object "
    "with a creating action (tenant-site onboard, tenant-firewall apply, or add of static-route, "
    "floating-address, bgp-peering, prefix-list-entry, route-map-entry; fields: get_service_schema), "
    "e.g. services/tenant-site-blue-nsite.json = {\"type\": \"tenant-site\", \"action\": \"onboard\", "
    "\"tenant\": \"blue\", \"site\": \"nsite\", \"edge\": \"e2\", \"prefix\": \"198.19.7.0/24\", "
    "\"gateway\": \"198.19.7.1\"}. Create one with sot_patch on the new path (add each field at "
    "/<field>); remove a service with sot_delete (or sot_revert the commit that added it). The "
    "desired state is the device files with every service compiled on top; commits are applied as "
    "transactions with active validation and rollback."
)


class SotDeleteArgs(Args):
    path: str = Field(max_length=256, description="A service file, services/<name>.json (see sot_list)")
    base_revision: str = Field(
        max_length=40,
        description="The revision (HEAD) your edit is based on, as reported by sot_read / sot_list / sot_log "
        "(7 to 40 hex digits); refused with a conflict error when the file changed since"
    )
