"""Whether two runs of one variant met the same faults for the same time (issue 23 §2).

A paired comparison is fair only when both runs met the same physical events: the same faults,
each in effect about as long (``FaultRecord.exposure_s``). :func:`exposure_differences` says
where two runs' fault records differ beyond the stated tolerance::

    >>> from ani.faults.record import FaultRecord
    >>> a = [FaultRecord(kind="link_down", at_step=4, duration_s=5.0, injected=True, exposure_s=5.1)]
    >>> b = [FaultRecord(kind="link_down", at_step=4, duration_s=5.0, injected=True, exposure_s=0.3)]
    >>> exposure_differences(a, a)
    []
    >>> exposure_differences(a, b)
    ['fault #0 link_down - (step 4): in effect 5.1 s vs 0.3 s']

Tolerance: a fault's two exposures may differ by :data:`EXPOSURE_TOLERANCE_S` seconds or
:data:`EXPOSURE_TOLERANCE_FRAC` of its duration, whichever is larger: the session removes a
fault within a watcher wake-up and a lock wait of its deadline, which a loaded 2-core machine
stretches to a fraction of a second (docs/faults.md, "Exposure").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ani.faults.base import target_label
from ani.faults.record import FaultRecord

__all__ = ["EXPOSURE_TOLERANCE_FRAC", "EXPOSURE_TOLERANCE_S", "as_records", "exposure_differences",
           "exposure_summary", "faults_met"]

#: seconds two exposures of one fault may differ by (or the fraction below, if larger)
EXPOSURE_TOLERANCE_S = 1.0
#: fraction of the fault's duration two exposures of one fault may differ by
EXPOSURE_TOLERANCE_FRAC = 0.1


def as_records(records: Sequence[Any]) -> list[FaultRecord]:
    """``records`` as :class:`FaultRecord` (a record read without validation holds dicts)."""
    return [r if isinstance(r, FaultRecord) else FaultRecord.model_validate(r) for r in records or []]


def faults_met(records: Sequence[Any]) -> list[FaultRecord]:
    """The records of the faults that were in effect during the run (``exposure_s`` > 0)."""
    return [r for r in as_records(records) if (r.exposure_s or 0) > 0]


def exposure_summary(records: Sequence[Any]) -> str:
    """``3 of 7 faults, 14.2 s in effect (9.0 s while the agent acted)``."""
    records = as_records(records)
    met = faults_met(records)
    total = sum(r.exposure_s for r in met)
    acting = sum(getattr(r, "acting_s", None) or 0.0 for r in met)
    return f"{len(met)} of {len(records)} faults, {total:.1f} s in effect ({acting:.1f} s while the agent acted)"


def _label(i: int, r: Any) -> str:
    where = f"{r.at_s:g} s" if getattr(r, "at_s", None) is not None else f"step {r.at_step}"
    return f"fault #{i} {r.kind} {target_label(dict(r.target or {}))} ({where})"


def exposure_differences(a: Sequence[Any], b: Sequence[Any], *, tol_s: float = EXPOSURE_TOLERANCE_S,
                         tol_frac: float = EXPOSURE_TOLERANCE_FRAC) -> list[str]:
    """Where runs ``a`` and ``b`` (their ``RunRecord.faults``, one variant's schedule) met their
    faults differently: a different schedule, or a fault whose exposures differ by more than
    ``max(tol_s, tol_frac * duration_s)`` seconds (a fault never in effect counts 0 s). One line
    each, ``[]`` when they agree."""
    a, b = as_records(a), as_records(b)
    if [(r.kind, r.at_step) for r in a] != [(r.kind, r.at_step) for r in b]:
        return [f"different schedules: {len(a)} vs {len(b)} faults"]
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        ex, ey = getattr(x, "exposure_s", None) or 0.0, getattr(y, "exposure_s", None) or 0.0
        tol = max(tol_s, tol_frac * float(x.duration_s or 0.0))
        if abs(ex - ey) > tol:
            out.append(f"{_label(i, x)}: in effect {ex:.1f} s vs {ey:.1f} s")
    return out
