"""``shared-entry-collision``: an entry the change adds to a shared prefix-list or route-map
takes the sequence number of another tenant's entry in it, replacing that entry (the draft's
shared-resource trap: FRR replaces an entry given an existing sequence number, silently).

The candidates: each entry the correct change adds (a sequence number the list or route-map did
not have) to a prefix-list or route-map that already held entries of another tenant (an entry
whose prefix, or whose matched prefix-list's prefixes, is a site prefix of a tenant other than
the change's; the sites from :class:`ani.intents.Inventory` on the configurations read). One
(router, object, added entry, victim entry) is drawn (the variant's generator, sorted); the
added entry is written at the victim's sequence number instead of its own. Device layer: A3-T
(typed intents, sequence numbers allocated by the compiler) cannot express it.
"""

from __future__ import annotations

from typing import Any

from ani.agents.mistakes.base import DEVICE_LEVELS, Made, MistakeContext, MistakeKind, register_mistake
from ani.device.model import DeviceConfig

_FIELDS = {"prefix-list": "prefix_lists", "route-map": "route_maps"}


def site_tenants(configs: dict[str, DeviceConfig]) -> dict[Any, str]:
    """``{site prefix: tenant}`` of the tenant sites configured in ``configs``."""
    from ani.intents import Inventory

    return {s.spec.prefix: s.spec.tenant for s in Inventory(configs).list_services("tenant-site")}


def entry_tenants(cfg: DeviceConfig, kind: str, entry: Any, tenants: dict[Any, str]) -> set[str]:
    """The tenants an entry serves: its prefix's (prefix-list), or those of the prefixes of the
    prefix-list it matches (route-map)."""
    if kind == "prefix-list":
        return {tenants[entry.prefix]} if entry.prefix in tenants else set()
    pl = cfg.prefix_lists.get(entry.match_prefix_list or "")
    return {tenants[e.prefix] for e in (pl.entries if pl else []) if e.prefix in tenants}


def entry_text(kind: str, name: str, entry: Any) -> str:
    """``ip prefix-list NAME seq N permit P`` / ``route-map NAME permit N``."""
    if kind == "prefix-list":
        what = "any" if entry.prefix is None else str(entry.prefix)
        return f"ip prefix-list {name} seq {entry.seq} {entry.action} {what}"
    return f"route-map {name} {entry.action} {entry.seq}"


def _own_tenants(ctx: MistakeContext) -> set[str]:
    return {str(c["tenant"]) for c in ctx.changes if c.get("tenant")}


@register_mistake
class SharedEntryCollision(MistakeKind):
    """See the module doc."""

    name = "shared-entry-collision"
    layer = "device"
    levels = DEVICE_LEVELS
    summary = ("an entry the change adds to a shared prefix-list or route-map reuses the sequence "
               "number of another tenant's entry, replacing it")

    def candidates(self, ctx: MistakeContext) -> list[tuple[str, str, str, int, int, str]]:
        """``[(router, type, name, added seq, victim seq, victim tenant)]``, sorted."""
        tenants, own = site_tenants(ctx.before), _own_tenants(ctx)
        out = []
        for r in sorted(ctx.after):
            for kind, field in _FIELDS.items():
                for name, new in sorted(getattr(ctx.after[r], field).items()):
                    old = getattr(ctx.before[r], field).get(name)
                    if old is None:
                        continue
                    had = {e.seq for e in old.entries}
                    added = [e.seq for e in new.entries if e.seq not in had]
                    for victim in old.entries:
                        if victim.seq not in {e.seq for e in new.entries}:
                            continue  # the change removes it anyway
                        others = entry_tenants(ctx.before[r], kind, victim, tenants) - own
                        for seq in added:
                            for t in sorted(others):
                                out.append((r, kind, name, seq, victim.seq, t))
        return sorted(set(out))


    def mistaken_configs(self, ctx: MistakeContext) -> tuple[dict[str, DeviceConfig], Made]:
        r, kind, name, seq, vseq, tenant = ctx.rng.choice(self.candidates(ctx))
        field = _FIELDS[kind]
        obj = getattr(ctx.after[r], field)[name]
        entries = {e.seq: e for e in obj.entries}
        mine, victim = entries.pop(seq), entries[vseq]
        entries[vseq] = mine.model_copy(update={"seq": vseq})
        new = type(obj).model_validate({"entries": [e.model_dump() for e in entries.values()]})
        cfg = ctx.after[r].model_copy(update={field: {**getattr(ctx.after[r], field), name: new}}).canonical()
        replaced = entry_text(kind, name, victim)
        note = f"on {r}, {entry_text(kind, name, mine)} was written at seq {vseq}, replacing {tenant}'s {replaced}"
        target = {"router": r, "object_type": kind, "object": f"{name} seq {vseq}", "tenant": tenant,
                  "replaced": replaced, "prefix": str(victim.prefix) if kind == "prefix-list" else None,
                  "intended_seq": seq}
        return {**ctx.after, r: cfg}, Made(kind=self.name, expressed=True, note=note, target=target)
