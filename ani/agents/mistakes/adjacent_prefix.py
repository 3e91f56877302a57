"""Mistake kind ``adjacent-prefix``: a new site gets a prefix inside another tenant's site
(the draft's prefix-adjacency trap: the block next door, a digit off), shadowing it.

Intent layer. One ``tenant-site`` ``onboard`` of the correct change (drawn with ``ctx.rng``)
gets, instead of its prefix ``P``, the more specific half ``P'`` of the other tenant's site
prefix ``Q`` nearest to ``P`` (numerically; ties drawn), the half that holds ``Q``'s gateway (so
its hosts); its gateway is ``P'``'s first address, as the pools would give. Not applicable
without an onboard or without another tenant's site of /29 or shorter.

What each level does with it: the intents compiler refuses it (``prefix-overlap`` naming the
other site: :func:`ani.intents.services.tenant_site` ``_check``), so A3-T's ``plan`` / ``apply``
refuse it before any router changes: that refusal is the level preventing the damage.
A level that takes device configurations (A0 / A1 / A2 / A3-R) has no such check: the kind's
:meth:`AdjacentPrefix.mistaken_configs` is the same mistake as configurations (the correct
intended configurations with ``P`` / its gateway swapped for ``P'`` / its gateway on the edge's
interface, the edge's tenant prefix-list entry and the tenant's nftables set elements).

Damage: the edge announces ``P'`` (``redistribute connected`` through the tenant prefix-list);
being more specific than ``Q``, it draws every router's traffic to ``Q``'s hosts in ``P'`` to
the new site's edge (``Q``'s own edge included), so every reach expected to succeed with an end
in ``P'`` fails (the replies of a reach from a host in ``P'`` are drawn away too). ``Q``'s own
route is still there (route checks hold), and isolation still holds (the drawn traffic goes
nowhere).
"""

from __future__ import annotations

from ipaddress import IPv4Interface, IPv4Network
from typing import TYPE_CHECKING, Any, ClassVar

from ani.agents.mistakes._changes import sites, tenant_list_of
from ani.agents.mistakes._where import Attachments, names_in_order, reaches
from ani.agents.mistakes.base import LEVELS, Made, MistakeContext, MistakeKind, register_mistake

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig


def _onboards(changes: list[dict[str, Any]]) -> list[int]:
    return [i for i, c in enumerate(changes) if c.get("type") == "tenant-site" and c.get("action") == "onboard"
            and c.get("prefix") and c.get("edge")]


def _victims(ctx: MistakeContext, change: dict[str, Any]) -> list[Any]:
    """Other tenants' sites (services) whose prefix has room for a half (/29 or shorter),
    nearest to the change's prefix first (ties by id)."""
    p = IPv4Network(change["prefix"])
    others = [s for s in sites(ctx.before) if s.spec.tenant != change["tenant"] and s.spec.prefix.prefixlen <= 29]
    return sorted(others, key=lambda s: (abs(int(s.spec.prefix.network_address) - int(p.network_address)), s.id))


def shadow_half(site: Any) -> IPv4Network:
    """The half of ``site``'s prefix that holds its gateway."""
    low, high = site.spec.prefix.subnets(prefixlen_diff=1)
    return low if site.spec.gateway in low else high


@register_mistake
class AdjacentPrefix(MistakeKind):
    """See the module doc."""

    name: ClassVar[str] = "adjacent-prefix"
    layer: ClassVar[str] = "intent"
    levels: ClassVar[frozenset[str]] = frozenset(LEVELS)
    summary: ClassVar[str] = ("a new site gets the more specific half of another tenant's neighbouring site "
                              "prefix: that site's traffic is drawn to the new site's edge (the intents compiler "
                              "refuses it: prefix-overlap)")

    def applicable(self, ctx: MistakeContext) -> bool:
        return any(_victims(ctx, ctx.changes[i]) for i in _onboards(ctx.changes))

    def _draw(self, ctx: MistakeContext) -> tuple[int, Any] | None:
        cands = [i for i in _onboards(ctx.changes) if _victims(ctx, ctx.changes[i])]
        if not cands:
            return None
        i = ctx.rng.choice(cands)
        victims = _victims(ctx, ctx.changes[i])
        p = IPv4Network(ctx.changes[i]["prefix"])
        best = abs(int(victims[0].spec.prefix.network_address) - int(p.network_address))
        nearest = [v for v in victims if abs(int(v.spec.prefix.network_address) - int(p.network_address)) == best]
        return i, ctx.rng.choice(nearest)

    def _made(self, ctx: MistakeContext, i: int, victim: Any) -> tuple[dict[str, Any], Made]:
        ch = ctx.changes[i]
        half = shadow_half(victim)
        wrong = {**ch, "prefix": str(half), "gateway": str(next(half.hosts()))}
        target = {"router": ch["edge"], "change": i, "tenant": ch["tenant"], "site": ch["site"],
                  "intended": ch["prefix"], "prefix": str(half), "gateway": wrong["gateway"],
                  "victim": victim.id, "victim_tenant": victim.spec.tenant, "victim_prefix": str(victim.spec.prefix)}
        note = (f"changes.{i} onboards {ch['tenant']}/{ch['site']} on {ch['edge']} with {half}, inside "
                f"{victim.id} ({victim.spec.prefix}), instead of {ch['prefix']}")
        return wrong, Made(kind=self.name, expressed=True, note=note, target=target)

    def mistaken_changes(self, ctx: MistakeContext) -> tuple[list[dict[str, Any]], Made]:
        drawn = self._draw(ctx)
        if drawn is None:
            return list(ctx.changes), self.unexpressed(ctx, "no onboard next to another tenant's site")
        wrong, made = self._made(ctx, *drawn)
        changes = [dict(c) for c in ctx.changes]
        changes[drawn[0]] = wrong
        return changes, made

    def mistaken_configs(self, ctx: MistakeContext) -> tuple[dict[str, DeviceConfig], Made]:
        """The same mistake as device configurations (for the levels that take them; see the
        module doc): the correct intended configurations with the prefix swapped."""
        drawn = self._draw(ctx)
        if drawn is None:
            return dict(ctx.after), self.unexpressed(ctx, "no onboard next to another tenant's site")
        wrong, made = self._made(ctx, *drawn)
        ch = ctx.changes[drawn[0]]
        out = {r: swap_site_prefix(c, ch, wrong, edge=r == ch["edge"]) for r, c in ctx.after.items()}
        return out, made

    def expected_breaks(self, made: Made, invariants: list[Any], before: dict[str, DeviceConfig]) -> list[str]:
        """Every reach expected to succeed with an end inside the shadowing prefix."""
        if not made.expressed or not made.target.get("prefix"):
            return []
        half = IPv4Network(made.target["prefix"])
        att = Attachments(invariants, before)
        return names_in_order(invariants, [c for c in reaches(invariants) if att.reach_touches(c, half)])


def swap_site_prefix(cfg: DeviceConfig, correct: dict[str, Any], wrong: dict[str, Any], *, edge: bool) -> DeviceConfig:
    """``cfg`` with the site of ``correct`` (an onboard mapping) given ``wrong``'s prefix and
    gateway: on the edge its interface address and tenant prefix-list entry, everywhere the
    element of the tenant's nftables set."""
    from ani.intents.services.common import tenant_set

    p, q = IPv4Network(correct["prefix"]), IPv4Network(wrong["prefix"])
    out = cfg.model_copy(deep=True)
    if edge:
        iface = out.interfaces.get(correct["interface"])
        if iface is not None:
            old = IPv4Interface(f"{correct['gateway']}/{p.prefixlen}")
            iface.addresses = [IPv4Interface(f"{wrong['gateway']}/{q.prefixlen}") if a == old else a
                               for a in iface.addresses]
        plist = tenant_list_of(out)
        if plist and plist in out.prefix_lists:
            for e in out.prefix_lists[plist].entries:
                if e.prefix == p:
                    e.prefix = q
    fw_set = out.firewall.sets.get(tenant_set(correct["tenant"])) if out.firewall else None
    if fw_set is not None:
        fw_set.elements = [q if e == p else e for e in fw_set.elements]
    return out.canonical()
