"""Oscillation: a run that keeps undoing and redoing the same change.

    oscillating(events, level)        # bool
    inverse_chain(events, level)      # longest run of undo/redo steps (int)

Only the run's *changing* actions are looked at, in order: ``tool_call`` events that succeeded
(``ok``) and are updates (:func:`ani.campaign.metrics.tool_kind`; a snapshot or a lock,
:data:`~ani.campaign.metrics.PREPARATORY_TOOLS`, changes nothing), so reads and validations
between an undo and a redo do not hide it (the process metrics' ``repeat_inverse`` counts only
an action that undoes the one just before it). Two consecutive changing actions form an
*inverse step* when the second exactly undoes the first (:func:`ani.campaign.metrics.is_inverse`:
A1 negated lines, A2 discard / cancel, A3-R patches and reverts, A3-T removals). A chain of
:data:`MIN_CHAIN` inverse steps or more (do, undo, redo) is oscillation: the agent returned to
a change it had itself undone. Where the level cannot tell an inverse (A0's shell, A1's
rollback) nothing is flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ani.campaign.metrics import PREPARATORY_TOOLS, is_inverse, tool_kind
from ani.trajectory import TOOL_CALL_EVENT

__all__ = ["MIN_CHAIN", "inverse_chain", "oscillating"]

#: inverse steps in a row that make a run oscillating (do, undo, redo)
MIN_CHAIN = 2


def _changing(events: Iterable[Mapping[str, Any]], level: str) -> list[Mapping[str, Any]]:
    out = []
    for ev in events:
        if ev.get("event") != TOOL_CALL_EVENT or ev.get("ok") is not True:
            continue
        tool = str(ev.get("tool", ""))
        args = ev.get("arguments") if isinstance(ev.get("arguments"), Mapping) else None
        if tool in PREPARATORY_TOOLS or tool_kind(level, tool, args, changed=ev.get("changed")) != "update":
            continue
        out.append(ev)
    return out


def inverse_chain(events: Iterable[Mapping[str, Any]], level: str) -> int:
    """The longest number of consecutive inverse steps among the changing actions."""
    best = cur = 0
    acts = _changing(events, level)
    for prev, ev in zip(acts, acts[1:]):
        cur = cur + 1 if is_inverse(prev, ev) else 0
        best = max(best, cur)
    return best


def oscillating(events: Iterable[Mapping[str, Any]], level: str) -> bool:
    """The run undid a change and redid it (:data:`MIN_CHAIN` inverse steps in a row)."""
    return inverse_chain(events, level) >= MIN_CHAIN
