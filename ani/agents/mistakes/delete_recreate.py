"""Mistake kind ``delete-recreate``: a shared prefix-list is deleted and recreated with only the
entries the task needed, dropping the entries of the other sites (and tenants) that lived in it.

Device layer (an edit of the compiled configurations: A0 / A1 / A2 / A3-R / A4, not A3-T). The
shared object is an edge's tenant prefix-list (the one behind ``redistribute connected``,
:func:`ani.intents.services.common.tenant_list`: every site of the edge, of every tenant, has a
permit in it). Among the edges whose tenant list the correct change adds an entry to and that
hold other entries, one is drawn with ``ctx.rng``; its list in the mistaken configuration holds
only the entries the correct change added. Not applicable when the correct change adds no entry
to a tenant list that holds others (a removal only, a first site on an edge).

Damage: each dropped entry's prefix, connected on that edge, is no longer redistributed into
BGP (the route-map's implicit deny), so every invariant that needs that site's announcement
breaks (:func:`ani.agents.mistakes._where.site_prefix_breaks` with ``unless_at`` the edge: its
route at the reflectors and at external peers, its policy routes, its reaches to hosts on other
routers; a reach between two hosts of that edge stays inside it and holds).
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Any, ClassVar

from ani.agents.mistakes._changes import site_moves, tenant_list_of
from ani.agents.mistakes._where import site_prefix_breaks
from ani.agents.mistakes.base import DEVICE_LEVELS, Made, MistakeContext, MistakeKind, register_mistake

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig


def _split(ctx: MistakeContext, r: str) -> tuple[str, list[Any], list[Any]] | None:
    """(list name, entries the correct change added, entries it keeps) of router ``r``'s tenant
    list, or None if the change adds none or keeps none."""
    after = ctx.after[r]
    name = tenant_list_of(after)
    if name is None or name not in after.prefix_lists:
        return None
    before = ctx.before[r].prefix_lists.get(name)
    had = {(e.seq, e.action, e.prefix) for e in before.entries} if before is not None else set()
    added = [e for e in after.prefix_lists[name].entries if (e.seq, e.action, e.prefix) not in had]
    kept = [e for e in after.prefix_lists[name].entries if (e.seq, e.action, e.prefix) in had]
    return (name, added, kept) if added and kept else None


@register_mistake
class DeleteRecreate(MistakeKind):
    """See the module doc."""

    name: ClassVar[str] = "delete-recreate"
    layer: ClassVar[str] = "device"
    levels: ClassVar[frozenset[str]] = DEVICE_LEVELS
    summary: ClassVar[str] = ("an edge's shared tenant prefix-list is deleted and recreated with only the task's "
                              "entries: the other sites of that edge are no longer announced")

    def candidates(self, ctx: MistakeContext) -> list[str]:
        return [r for r in sorted(ctx.after) if r in ctx.before and _split(ctx, r) is not None]


    def mistaken_configs(self, ctx: MistakeContext) -> tuple[dict[str, DeviceConfig], Made]:
        from ani.intents.services.common import tenant_of

        cands = self.candidates(ctx)
        if not cands:
            return dict(ctx.after), self.unexpressed(ctx, "the change adds no entry to a shared tenant prefix-list")
        r = ctx.rng.choice(cands)
        name, added, kept = _split(ctx, r)
        cfg = ctx.after[r].model_copy(deep=True)
        cfg.prefix_lists[name].entries = [e.model_copy() for e in added]
        dropped = [str(e.prefix) for e in kept]
        tenants = sorted({t for e in kept if e.prefix is not None and (t := tenant_of(ctx.before, e.prefix))})
        target = {"router": r, "object": f"ip prefix-list {name}", "kept": [str(e.prefix) for e in added],
                  "dropped": dropped, "tenants": tenants, "moves": site_moves(ctx.changes)}
        note = (f"{r}: ip prefix-list {name} deleted and recreated with the task's {len(added)} entr"
                f"{'y' if len(added) == 1 else 'ies'} only, dropping {len(kept)} ({', '.join(dropped)})")
        return {**ctx.after, r: cfg.canonical()}, Made(kind=self.name, expressed=True, note=note, target=target)

    def expected_breaks(self, made: Made, invariants: list[Any], before: dict[str, DeviceConfig]) -> list[str]:
        """Per dropped prefix that is connected on the edge: the invariants that need its
        announcement (see the module doc), in ``invariants``' order."""
        if not made.expressed or made.target.get("router") not in before:
            return []
        r = made.target["router"]
        nets = [a.network for i in before[r].interfaces.values() for a in i.addresses if a.network.prefixlen < 32]
        out: list[str] = []
        for p in map(IPv4Network, made.target.get("dropped", [])):
            if any(n.subnet_of(p) for n in nets):
                out += [n for n in site_prefix_breaks(invariants, before, p, unless_at=r,
                                                               moves=made.target.get("moves")) if n not in out]
        order = {c.name: i for i, c in enumerate(invariants)}
        return sorted(out, key=lambda n: order[n])
