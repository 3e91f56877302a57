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
    time).
    """

    kind: str
    target: dict[str, Any] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict)
    at_step: int
    duration_s: float | None = None
    injected: bool = False
    injected_s: float | None = None
    verified: bool | None = None
    removed: bool | None = None
    removed_s: float | None = None
    invalid: str | None = None
    merged_into: int | None = None
    deferred_s: float | None = None
    detail: str = ""
