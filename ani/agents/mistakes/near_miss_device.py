"""Mistake kind ``near-miss-device``: a site's change lands on a router whose name differs from
the right one by one character (``e2`` for ``e1``, ``c1`` for ``e1``).

Intent layer (a typed change naming the wrong device): expressible at every level. One
``tenant-site`` ``onboard`` / ``move`` of the correct change gets, as its ``edge``, a router of
the network whose name has the same length and differs in exactly one character; the pair
(change, router) is drawn with ``ctx.rng`` among those whose changes the intents compiler
accepts (a slip every level lets through unless it checks more than the compiler). Not
applicable when no such pair exists (no site change, no near-miss router, or every near miss
refused: a ``remove`` on the wrong edge is refused, ``invalid``).

Damage: the site is configured on a router its host is not cabled to. A moved site leaves its
old edge and is reachable nowhere: every invariant that needs its prefix (:func:`site_prefix_breaks`:
its reaches, its route at the reflectors, its policy and export routes) breaks. An onboarded
site is new, so no baseline invariant names it: the damage is an unrequested change on the wrong
router (the observer's ``unrequested_changes``) and the task's own hidden tests.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Any, ClassVar

from ani.agents.mistakes._changes import compiles, site_changes, site_prefix
from ani.agents.mistakes._where import site_prefix_breaks
from ani.agents.mistakes.base import LEVELS, Made, MistakeContext, MistakeKind, register_mistake

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig


def near_misses(name: str, routers: list[str]) -> list[str]:
    """The routers of ``routers`` (sorted) whose name has ``name``'s length and differs from it
    in exactly one character."""
    return sorted(r for r in routers if len(r) == len(name) and sum(a != b for a, b in zip(r, name, strict=True)) == 1)


@register_mistake
class NearMissDevice(MistakeKind):
    """See the module doc."""

    name: ClassVar[str] = "near-miss-device"
    layer: ClassVar[str] = "intent"
    levels: ClassVar[frozenset[str]] = frozenset(LEVELS)
    summary: ClassVar[str] = ("a site's onboard or move names a router one character away from the right one "
                              "(e2 for e1); a moved site is then unreachable, an onboarded one is an unrequested "
                              "change on the wrong router")

    def _pick(self, ctx: MistakeContext) -> tuple[int, str, list[dict[str, Any]]] | None:
        """(change index, wrong router, the changes with it), drawn with ``ctx.rng`` among the
        pairs that compile; None if none does."""
        pairs = [(i, w) for i, ch in site_changes(ctx.changes) for w in near_misses(ch["edge"], sorted(ctx.before))]
        ctx.rng.shuffle(pairs)
        for i, wrong in pairs:
            changes = [dict(c) for c in ctx.changes]
            changes[i]["edge"] = wrong
            if compiles(changes, ctx.before) is not None:
                return i, wrong, changes
        return None

    def applicable(self, ctx: MistakeContext) -> bool:
        import random

        # a copy of the rng: deciding applicability does not move the draw the agent makes next
        probe = MistakeContext(ctx.task, ctx.level, ctx.changes, ctx.before, ctx.after, random.Random(0))
        return self._pick(probe) is not None

    def mistaken_changes(self, ctx: MistakeContext) -> tuple[list[dict[str, Any]], Made]:
        picked = self._pick(ctx)
        if picked is None:
            return list(ctx.changes), self.unexpressed(ctx, "no site change has a near-miss router the compiler accepts")
        i, wrong, changes = picked
        ch = ctx.changes[i]
        prefix = site_prefix(ch, ctx.before)
        target = {"router": wrong, "intended": ch["edge"], "change": i, "action": ch["action"],
                  "tenant": ch["tenant"], "site": ch["site"], "prefix": str(prefix) if prefix else None}
        note = f"changes.{i} ({ch['action']} of {ch['tenant']}/{ch['site']}) sent to {wrong} instead of {ch['edge']}"
        return changes, Made(kind=self.name, expressed=True, note=note, target=target)

    def expected_breaks(self, made: Made, invariants: list[Any], before: dict[str, DeviceConfig]) -> list[str]:
        """A moved site: every invariant that needs its prefix; an onboarded site: those of its
        (new) prefix, none in a baseline."""
        if not made.expressed or not made.target.get("prefix"):
            return []
        return site_prefix_breaks(invariants, before, IPv4Network(made.target["prefix"]))
