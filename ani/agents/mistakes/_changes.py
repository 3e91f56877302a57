"""What the mistake kinds read in a variant's correct change (a private helper: not a kind).

    site_changes(ctx.changes)             # [(i, change)] of tenant-site onboard / move changes
    compiles(changes, ctx.before)         # the intended configs, or None if the compiler refuses
    sites(configs)                        # [Service] of every tenant-site (ani.intents.Inventory)
    site_moves(ctx.changes)               # {site: its edge after the change, None if removed}
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig

#: the typed actions that put a site on an edge (its ``edge`` field)
SITE_ACTIONS = ("onboard", "move")


def site_changes(changes: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """``[(index, change)]`` of the ``tenant-site`` changes that put a site on an edge."""
    return [(i, c) for i, c in enumerate(changes) if c.get("type") == "tenant-site" and c.get("action") in SITE_ACTIONS
            and c.get("edge")]


def site_moves(changes: list[dict[str, Any]]) -> dict[str, str | None]:
    """``{site: edge}`` of the sites the changes onboard or move, ``{site: None}`` of those they
    remove (JSON: kept in a mistake's target for its ``expected_breaks``)."""
    out: dict[str, str | None] = {}
    for c in changes:
        if c.get("type") == "tenant-site" and c.get("site"):
            out[str(c["site"])] = None if c.get("action") == "remove" else c.get("edge")
    return out


def compiles(changes: list[dict[str, Any]], before: dict[str, DeviceConfig]) -> dict[str, DeviceConfig] | None:
    """The intended configs of the routers ``changes`` change, or None if the intents compiler
    refuses them (``IntentError``)."""
    from ani.intents import IntentError, compile_changes

    try:
        return compile_changes(changes, before).configs
    except IntentError:
        return None


def sites(configs: dict[str, DeviceConfig]) -> list[Any]:
    """Every ``tenant-site`` service of ``configs`` (sorted by id)."""
    from ani.intents import Inventory

    return Inventory(configs).list_services("tenant-site")


def site_prefix(change: dict[str, Any], before: dict[str, DeviceConfig]) -> IPv4Network | None:
    """The prefix a site change puts on its edge: its own, or (a move) the site's current one."""
    if change.get("prefix"):
        return IPv4Network(str(change["prefix"]))
    sid = f"tenant-site/{change['tenant']}/{change['site']}"
    s = next((s for s in sites(before) if s.id == sid), None)
    return s.spec.prefix if s is not None else None


def tenant_list_of(cfg: DeviceConfig) -> str | None:
    """The router's tenant prefix-list (behind ``redistribute connected``), or None."""
    from ani.intents.services.common import tenant_list

    return tenant_list(cfg)
