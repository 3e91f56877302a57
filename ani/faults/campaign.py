"""The campaign side of faults: which kinds a campaign draws from, and the schedule of a run.

Used by :mod:`ani.campaign.runner`::

    schedule = schedule_for(spec, cell, stress, scenario, variant, seed)   # [] at fault_rate 0
    problems = unavailable_kinds(spec)    # {kind: why} for faults.kinds this host cannot do

The schedule depends on the variant seed, the fault rate of the run's stress value, the
scenario (targets) and the ``faults:`` block, never on the cell's level: every cell at one stress
value meets the same faults at the same agent steps.
"""

from __future__ import annotations

from typing import Any

from ani.faults.base import FaultSpec, fault_kinds, get_fault_kind
from ani.faults.schedule import draw_schedule, place_in_time

_HOST: dict[str, str | None] = {}  # kind -> why unavailable on this host (None: available), once


def host_unavailable(kind: str) -> str | None:
    """Why this host cannot do ``kind`` (``FaultKind.unavailable(None)``: the host-level check,
    before any lab), or None. A kind whose check needs a lab and raises without one counts as
    available here; the run's session checks it again with the lab."""
    if kind not in _HOST:
        try:
            _HOST[kind] = get_fault_kind(kind).unavailable(None)
        except Exception:  # noqa: BLE001 - needs a lab to tell: the session checks it
            _HOST[kind] = None
    return _HOST[kind]


def campaign_kinds(spec: Any) -> list[str]:
    """The kinds the campaign draws from: ``faults.kinds``, or every registered kind this host
    can do (sorted)."""
    chosen = getattr(getattr(spec, "faults", None), "kinds", None)
    if chosen is not None:
        return sorted(chosen)
    return [k for k in fault_kinds() if host_unavailable(k) is None]


def unavailable_kinds(spec: Any) -> dict[str, str]:
    """``{kind: why}`` for the kinds named in ``faults.kinds`` that this host cannot do ({} for
    a campaign without faults or without an explicit list)."""
    faults = getattr(spec, "faults", None)
    if not getattr(spec, "fault_rate", 0) and not getattr(spec, "stress", {}).get("fault_rate"):
        return {}
    out = {}
    for k in getattr(faults, "kinds", None) or []:
        why = host_unavailable(k)
        if why:
            out[k] = why
    return out


def schedule_for(spec: Any, cell: Any, stress: dict[str, Any] | None, scenario: Any, variant: Any,
                 seed: int) -> list[FaultSpec]:
    """The fault schedule of one run (:func:`ani.faults.schedule.draw_schedule`), placed in
    seconds of the agent's time with ``faults.placement: time`` (:func:`place_in_time`)."""
    rate = spec.fault_rate_of(cell, stress)
    if rate <= 0:
        return []
    f = spec.faults
    drawn = draw_schedule(seed=int(seed), rate=rate, scenario=scenario, variant=variant,
                          kinds=campaign_kinds(spec), horizon_steps=f.horizon_steps,
                          duration_s=tuple(f.duration_s))
    if getattr(f, "placement", "steps") == "time":
        return place_in_time(drawn, f.step_s)
    return drawn
