"""What the run record keeps of each scheduled fault (``RunRecord.faults``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class FaultRecord(BaseModel):
    """One scheduled fault of a run and what became of it.

    Times are seconds since the agent started (the session's start), None when it did not
    happen. ``verified`` is None when the fault was never injected; ``detail`` is the last
    check's one-line detail (or why it was not injected / why the run is invalid).
    ``merged_into``: the index (in ``RunRecord.faults``) of the fault with the same target that
    was in effect when this one was due; it was not injected again, the other one lasted until
    this one's end. ``deferred_s``: seconds the fault waited, once due, for a fault of another
    kind on one of its routers to end (None: it did not wait; one router carries one fault at a
    time). ``failed_after``: the agent's tool calls that failed once this fault was in effect
    (``"commit: conflict"``, in order; :func:`note_failed_calls`): whether the level noticed the
    fault (a concurrent writer refused as "running changed", a frozen router's timeout) or
    answered every call ``ok`` (then only the fault's ``detail`` says what became of it).
    ``undone_by``: the agent's call that ended the fault before its time (``"step 5: shell on
    e1"``: an ``ip link set ... up``, a ``no shutdown``), None if nothing the agent did ended it;
    such a fault is the agent's doing, not an infrastructure error (the run stays valid).
    ``wrote``: the configuration changes the fault itself made (a kind with
    ``writes_config``), ``"<router>: + <block> / <line>"`` as
    :func:`ani.observer.changes.config_changes` writes them, at injection and at removal; the
    observer leaves these out of ``unrequested_changes`` (``RunRecord.fault_residue`` lists the
    ones still there at the end).
    ``at_s``: the point in seconds of the agent's time (``faults.placement: time``; None: the
    point is ``at_step``). ``exposure_s``: seconds the fault was in effect during the run, from
    its injection (a merged fault: from when it was due) to the start of its removal (None: never
    in effect); ``acting_s``: the part of it before the agent stopped (the rest fell in the hold,
    ``faults.hold``: the run kept open until every fault had run its duration).
    """

    kind: str
    target: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    at_step: int
    at_s: float | None = None
    duration_s: float | None = None
    injected: bool = False
    injected_s: float | None = None
    verified: bool | None = None
    removed: bool | None = None
    removed_s: float | None = None
    invalid: str | None = None
    merged_into: int | None = None
    deferred_s: float | None = None
    failed_after: list[str] = Field(default_factory=list)
    undone_by: str | None = None
    wrote: list[str] = Field(default_factory=list)
    exposure_s: float | None = None
    acting_s: float | None = None
    detail: str = ""


def note_failed_calls(records: list[FaultRecord], events: list[dict[str, Any]]) -> list[FaultRecord]:
    """Fill each injected record's ``failed_after`` from the run's trajectory ``events``: the
    ``tool_call`` events with ``ok`` False after the fault's ``fault_injected`` event, as
    ``"<tool>: <error_code>"``. Returns ``records`` (changed in place)."""
    used: set[int] = set()
    for rec in records:
        if not rec.injected:
            continue
        start = None
        for i, ev in enumerate(events):
            if (i not in used and ev.get("event") == "fault_injected" and ev.get("kind") == rec.kind
                    and ev.get("at_step") == rec.at_step and ev.get("target") == rec.target):
                start = i
                used.add(i)
                break
        if start is None:
            continue
        rec.failed_after = [f"{ev.get('tool')}: {ev.get('error_code') or 'error'}" for ev in events[start + 1:]
                            if ev.get("event") == "tool_call" and ev.get("ok") is False]
    return records
