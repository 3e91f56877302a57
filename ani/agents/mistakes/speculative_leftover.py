"""Mistake kind ``speculative-leftover``: a static discard route added "to be safe" on the edge
the change works on, for a neighbouring block that is in fact another site's prefix, and left.

Device layer (A0 / A1 / A2 / A3-R / A4, not A3-T). The edge is that of one ``tenant-site``
``onboard`` / ``move`` of the correct change (drawn with ``ctx.rng``); the route is
``ip route <Q> Null0`` (the brownfield's own idiom for harmless discards), ``Q`` the prefix of a
site on another router: a site of a tenant that also has a site on the edge if there is one
(the block the agent thought it was protecting), else any other site; the one nearest the
change's prefix, ties drawn. Not applicable without such a change, without another site, or on
an edge whose BGP redistributes static routes (the discard would then be announced: another
mistake).

Damage: a static route (distance 1) beats the iBGP route to ``Q`` (200), so the edge discards
traffic to ``Q``: every reach expected to succeed between a host in ``Q`` and a host on that
edge fails (both directions: the reply of one is discarded), and a route check that ``Q`` is
absent from the edge fails. Elsewhere nothing changes; it is also an unrequested change the
observer's ``unrequested_changes`` sees.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Any, ClassVar

from ani.agents.mistakes._changes import site_changes, site_moves, site_prefix, sites
from ani.agents.mistakes._where import Attachments, names_in_order, reaches, routes
from ani.agents.mistakes.base import DEVICE_LEVELS, Made, MistakeContext, MistakeKind, register_mistake

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig

#: the discard next hop of the leftover route
NEXTHOP = "Null0"


def _redistributes_static(cfg: DeviceConfig) -> bool:
    return cfg.bgp is not None and "static" in cfg.bgp.ipv4_unicast.redistribute


def _ranked(ctx: MistakeContext, change: dict[str, Any]) -> tuple[list[Any], Any]:
    """(the sites the leftover may cover, best first; their ranking key without the id): sites
    on another router that no change of the task names and that the edge has no static route
    to already (see the module doc)."""
    edge = change["edge"]
    every = sites(ctx.before)
    named = {f"tenant-site/{c['tenant']}/{c['site']}" for c in ctx.changes if c.get("type") == "tenant-site"}
    here = {s.spec.tenant for s in every if s.spec.edge == edge}
    p = site_prefix(change, ctx.before)
    base = int(p.network_address) if p is not None else 0

    def key(s: Any) -> tuple[bool, int]:
        return (s.spec.tenant not in here, abs(int(s.spec.prefix.network_address) - base))

    static = {r.prefix for r in ctx.before[edge].static_routes} if edge in ctx.before else set()
    others = [s for s in every if s.spec.edge != edge and s.id not in named and s.spec.prefix not in static]
    return sorted(others, key=lambda s: (key(s), s.id)), key


@register_mistake
class SpeculativeLeftover(MistakeKind):
    """See the module doc."""

    name: ClassVar[str] = "speculative-leftover"
    layer: ClassVar[str] = "device"
    levels: ClassVar[frozenset[str]] = DEVICE_LEVELS
    summary: ClassVar[str] = ("a static discard route added 'to be safe' on the changed edge, for a block that is "
                              "another site's prefix, is left in place: the edge drops that site's traffic")

    def candidates(self, ctx: MistakeContext) -> list[int]:
        return [i for i, ch in site_changes(ctx.changes) if ch["edge"] in ctx.before
                and not _redistributes_static(ctx.before[ch["edge"]]) and _ranked(ctx, ch)[0]]


    def mistaken_configs(self, ctx: MistakeContext) -> tuple[dict[str, DeviceConfig], Made]:
        from ani.device.model import StaticRoute

        cands = self.candidates(ctx)
        if not cands:
            return dict(ctx.after), self.unexpressed(ctx, "no site change on an edge with another site to cover")
        i = ctx.rng.choice(cands)
        ch = ctx.changes[i]
        blocks, key = _ranked(ctx, ch)
        best = [b for b in blocks if key(b) == key(blocks[0])]
        victim = ctx.rng.choice(best)
        edge = ch["edge"]
        cfg = ctx.after.get(edge, ctx.before[edge]).model_copy(deep=True)
        cfg.static_routes.append(StaticRoute(prefix=victim.spec.prefix, nexthop=NEXTHOP))
        target = {"router": edge, "object": f"ip route {victim.spec.prefix} {NEXTHOP}", "prefix": str(victim.spec.prefix),
                  "victim": victim.id, "tenant": victim.spec.tenant, "change": i, "moves": site_moves(ctx.changes)}
        note = f"{edge}: ip route {victim.spec.prefix} {NEXTHOP} added to be safe and left (the prefix of {victim.id})"
        return {**ctx.after, edge: cfg.canonical()}, Made(kind=self.name, expressed=True, note=note, target=target)

    def expected_breaks(self, made: Made, invariants: list[Any], before: dict[str, DeviceConfig]) -> list[str]:
        """Reaches expected to succeed between a host in the discarded prefix and a host on the
        edge; route checks that the prefix is absent from the edge."""
        if not made.expressed or not made.target.get("prefix"):
            return []
        edge, prefix = made.target["router"], IPv4Network(made.target["prefix"])
        att = Attachments(invariants, before, made.target.get("moves"))
        hit = [c for c in reaches(invariants) if att.reach_touches(c, prefix) and att.far_end_router(c, prefix) == edge]
        hit += [c for c in routes(invariants, expect=False) if c.router == edge and c.prefix == prefix]
        return names_in_order(invariants, hit)

