"""Mistake kind ``scope-too-wide``: a per-site change applied on every edge.

Intent layer. One ``tenant-site`` ``onboard`` of the correct change (drawn with ``ctx.rng``) is
sent once per edge that can take a site of its tenant (a router with a tenant prefix-list and
the tenant's nftables set): the correct onboard, then the same onboard with ``edge`` set to each
other such edge, in name order. Not applicable without an onboard or without another such edge.

What each level does with it: the intents compiler refuses the repeats (``service-exists``: the
site is already onboarded), so A3-T refuses the whole change before any router changes: the
level preventing it. A level that takes device configurations has no such check: the kind's
:meth:`ScopeTooWide.mistaken_configs` is the same mistake as configurations (the correct ones
plus, on each other edge, the site's gateway on ``to-<site>`` and a permit of its prefix in the
tenant prefix-list at the list's next free seq).

Damage: an unrequested change on every other edge, which the observer's
``unrequested_changes`` must see (so ``expected_breaks`` is empty; measured at A1 on the
default brownfield: no baseline invariant failed): no baseline invariant
breaks, because the site's prefix is new (the compiler refuses an onboard overlapping any
site) and its host is cabled to one edge only (an interface the kernel does not have carries
no address, so the other edges announce nothing).
"""

from __future__ import annotations

from ipaddress import IPv4Interface, IPv4Network
from typing import TYPE_CHECKING, Any, ClassVar

from ani.agents.mistakes._changes import tenant_list_of
from ani.agents.mistakes.base import LEVELS, Made, MistakeContext, MistakeKind, register_mistake

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig


def _onboards(changes: list[dict[str, Any]]) -> list[int]:
    return [i for i, c in enumerate(changes) if c.get("type") == "tenant-site" and c.get("action") == "onboard"
            and c.get("prefix") and c.get("gateway") and c.get("edge")]


def other_edges(change: dict[str, Any], configs: dict[str, DeviceConfig]) -> list[str]:
    """The routers other than the change's edge that can take a site of its tenant, by name."""
    from ani.intents.services.common import tenant_set

    tset = tenant_set(change["tenant"])
    return sorted(r for r, c in configs.items() if r != change["edge"] and tenant_list_of(c) is not None
                  and c.firewall is not None and tset in c.firewall.sets)


@register_mistake
class ScopeTooWide(MistakeKind):
    """See the module doc."""

    name: ClassVar[str] = "scope-too-wide"
    layer: ClassVar[str] = "intent"
    levels: ClassVar[frozenset[str]] = frozenset(LEVELS)
    summary: ClassVar[str] = ("a site's onboard is applied on every edge that can take it, not on its own only; "
                              "the damage is unrequested changes on the other edges, no baseline invariant "
                              "(the intents compiler refuses it: service-exists)")

    def candidates(self, ctx: MistakeContext) -> list[int]:
        return [i for i in _onboards(ctx.changes) if other_edges(ctx.changes[i], ctx.before)]


    def _draw(self, ctx: MistakeContext) -> tuple[int, list[str], Made] | None:
        cands = self.candidates(ctx)
        if not cands:
            return None
        i = ctx.rng.choice(cands)
        ch = ctx.changes[i]
        extra = other_edges(ch, ctx.before)
        target = {"router": ch["edge"], "routers": extra, "change": i, "tenant": ch["tenant"], "site": ch["site"],
                  "prefix": ch["prefix"]}
        note = f"changes.{i} (onboard of {ch['tenant']}/{ch['site']} on {ch['edge']}) also applied on {', '.join(extra)}"
        return i, extra, Made(kind=self.name, expressed=True, note=note, target=target)

    def mistaken_changes(self, ctx: MistakeContext) -> tuple[list[dict[str, Any]], Made]:
        drawn = self._draw(ctx)
        if drawn is None:
            return list(ctx.changes), self.unexpressed(ctx, "no onboard with another edge to repeat it on")
        i, extra, made = drawn
        repeats = [{**ctx.changes[i], "edge": w} for w in extra]
        return [*ctx.changes[: i + 1], *repeats, *ctx.changes[i + 1 :]], made

    def mistaken_configs(self, ctx: MistakeContext) -> tuple[dict[str, DeviceConfig], Made]:
        """The same mistake as device configurations (see the module doc)."""
        from ani.device.model import Interface, PrefixList, PrefixListEntry
        from ani.intents.pools import Pools
        from ani.intents.services.common import add_entry

        drawn = self._draw(ctx)
        if drawn is None:
            return dict(ctx.after), self.unexpressed(ctx, "no onboard with another edge to repeat it on")
        i, extra, made = drawn
        ch = ctx.changes[i]
        state = {**ctx.before, **ctx.after}
        pools = Pools.from_configs(state)
        prefix = IPv4Network(ch["prefix"])
        out = dict(ctx.after)
        for w in extra:
            cfg = state[w].model_copy(deep=True)
            plist = tenant_list_of(cfg)
            iface = cfg.interfaces.get(ch["interface"], Interface())
            addr = IPv4Interface(f"{ch['gateway']}/{prefix.prefixlen}")
            cfg.interfaces[ch["interface"]] = iface.model_copy(update={"addresses": [*iface.addresses, addr]})
            entry = PrefixListEntry(seq=pools.seq(w, plist).allocate(), action="permit", prefix=prefix)
            add_entry(cfg.prefix_lists, plist, entry, PrefixList)
            out[w] = cfg.canonical()
        return out, made

    def expected_breaks(self, made: Made, invariants: list[Any], before: dict[str, DeviceConfig]) -> list[str]:
        """None (see the module doc): the damage is the unrequested changes. Not the base's
        static reading of the footprint, which would take the extra edges' interface addresses
        for connected networks the kernel does not have."""
        return []
