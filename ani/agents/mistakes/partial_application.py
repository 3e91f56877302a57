"""``partial-application``: the agent stops after the first router's part of a multi-router
change (the later changes are never made).

Typed-change granularity, so that every level can express it (A3-T included): the changes are
taken in their apply order and the agent stops at the first one that reaches beyond the first
change's router (the routers a change names: its ``edge``, ``router`` or ``routers``); the
changes before it are made. Applicable when that leaves at least one change out and makes at
least one (``onboard-site``'s single change: never; a ``change-set`` reaching a second edge, a
``decommission`` whose clean-up spans every edge: yes). Intent layer: every level.
"""

from __future__ import annotations

from typing import Any

from ani.agents.mistakes.base import Made, MistakeContext, MistakeKind, register_mistake


def routers_of(change: dict[str, Any]) -> set[str]:
    """The routers a typed change names (``edge``, ``router``, ``routers``; empty: none)."""
    out = {str(change[k]) for k in ("edge", "router") if change.get(k)}
    return out | {str(r) for r in change.get("routers") or []}


def first_router_part(changes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The changes up to (without) the first one naming a router other than the first
    change's (see the module doc); ``[]`` when the first change names none."""
    first = routers_of(changes[0]) if changes else set()
    if len(first) != 1:
        return []
    out = []
    for c in changes:
        if not routers_of(c) <= first:
            break
        out.append(c)
    return out


@register_mistake
class PartialApplication(MistakeKind):
    """See the module doc."""

    name = "partial-application"
    layer = "intent"
    summary = "stops after the first router's part of a multi-router change (the rest is never made)"

    def applicable(self, ctx: MistakeContext) -> bool:
        return 0 < len(first_router_part(ctx.changes)) < len(ctx.changes)

    def mistaken_changes(self, ctx: MistakeContext) -> tuple[list[dict[str, Any]], Made]:
        part = first_router_part(ctx.changes)
        router = sorted(routers_of(ctx.changes[0]))[0]
        left = ctx.changes[len(part):]
        note = (f"made the first {len(part)} of {len(ctx.changes)} changes (those on {router}) and stopped "
                f"before {left[0]['type']} {left[0]['action']} on {', '.join(sorted(routers_of(left[0]))) or '?'}")
        target = {"router": router, "made": len(part), "left_out": left}
        return part, Made(kind=self.name, expressed=True, note=note, target=target)
