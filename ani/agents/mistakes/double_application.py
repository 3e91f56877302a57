"""``double-application``: the change is carried out twice, as on a retry that sends it again
(the calls computed from the first read, repeated as they were).

What the repetition does is the level's: A0 / A1 / A2 push the same difference again, which
the routers take as a no-op (FRR and nft lines already present); A3-T refuses the second
``apply`` (``service-exists`` / ``service-not-found``: typed intents are not idempotent, the
compiler says so), A3-R / A4 refuse the second ``sot_patch`` on the stale revision. In every
case the network ends as with the correct change: the footprint is empty and no invariant is
expected to break, a known answer of no damage (the repeated changing calls show in the run
record's ``double_applied`` when the level reports them as changing). A refused repetition does
not fail the run; the trajectory's ``agent_mistake`` event keeps its error. Intent layer: every
level.
"""

from __future__ import annotations

from typing import Any

from ani.agents.mistakes.base import Made, MistakeContext, MistakeKind, register_mistake


@register_mistake
class DoubleApplication(MistakeKind):
    """See the module doc."""

    name = "double-application"
    layer = "intent"
    repeats = 2
    summary = "the change is carried out twice, as on a retry that sends it again"

    def applicable(self, ctx: MistakeContext) -> bool:
        return bool(ctx.changes)

    def mistaken_changes(self, ctx: MistakeContext) -> tuple[list[dict[str, Any]], Made]:
        note = f"the {len(ctx.changes)} change(s) were carried out twice through the {ctx.level} tools"
        return list(ctx.changes), Made(kind=self.name, expressed=True, note=note, target={"times": 2})
