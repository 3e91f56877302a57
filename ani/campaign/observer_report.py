"""What the out-of-band observer saw, for the Markdown report and the live output (issue 14 §2).

- :func:`observer_markdown`: the section ``## Observer: unsafe intermediate states, damage,
  recovery`` of ``summary.md``: per cell (valid runs), how many runs passed through an unsafe
  intermediate state (an invariant seen violated during the run although the final state is
  damage-free: ``unsafe`` set and ``damage_free`` true), how many were unsafe at all, recovered,
  left changes nobody asked for, oscillated; the damaged service instances by service class;
  then one line per unsafe run (first violation, invariant, how long) and per unrequested change.
- :func:`observer_line`: one line for ``ani run`` / ``ani campaign run --progress``, or None
  when there is nothing to say.

Violations a fault explains (issue 23 §2: first seen while a fault was in effect on a router
the invariant concerns, ``Violation.fault_explained``) are the fault's effect: "unsafe
intermediate" and "unsafe (any)" count only runs with a violation no fault explains, and the
column "fault-explained" counts runs with violations a fault explains.

Records written before these fields existed read as "not sampled" (``sample_period_s`` None)
and are counted as such.
"""

from __future__ import annotations

from typing import Any

from ani.observer.sampler import unexplained_unsafe

__all__ = ["fault_explained", "observer_line", "observer_markdown"]


def _s(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}s"


def _unsafe_text(r: Any) -> str:
    u = r.unsafe
    how_long = "still violated when sampling stopped" if u.duration_s is None else f"for {_s(u.duration_s)}"
    more = f"; {len(u.violations)} violation interval(s), unsafe {_s(u.unsafe_s)} in all" if len(u.violations) > 1 else ""
    if u.explained:
        more += f"; {u.explained} explained by faults ({', '.join(sorted({f for v in u.violations for f in v.faults}))})"
    return f"first violation at {_s(u.first_violation_s)}: {u.invariant} ({u.service or 'untagged'}) {how_long}{more}"


def _unsafe(r: Any) -> bool:
    """The run passed through a violation no fault explains."""
    return unexplained_unsafe(getattr(r, "unsafe", None))


def fault_explained(r: Any) -> bool:
    """The run had violations, or failures at grading, a fault explains (the "fault-explained"
    count of summary.md and report.html); ``unsafe`` an UnsafeState or its dict."""
    u = getattr(r, "unsafe", None)
    if isinstance(u, dict):
        n = sum(1 for v in u.get("violations") or [] if (v or {}).get("fault_explained"))
    else:
        n = 0 if u is None else u.explained
    return n > 0 or bool(getattr(r, "fault_damage", None))


def observer_line(rec: Any) -> str | None:
    """``unsafe intermediate state: first violation at 1.3s: reach blue1 -> blue3 (tenant:blue)
    for 1.2s; recovered after 0.0s; 2 unrequested change(s)``, or None (nothing seen, not
    sampled)."""
    parts = []
    if getattr(rec, "unsafe", None) is not None:
        kind = "unsafe intermediate state" if rec.damage_free else "unsafe state"
        if not unexplained_unsafe(rec.unsafe):
            kind = "violations explained by faults only"
        parts.append(f"{kind}: {_unsafe_text(rec)}")
    if getattr(rec, "fault_damage", None):
        parts.append("failed at grading, explained by faults: " + ", ".join(rec.fault_damage))
    if getattr(rec, "damaged", None):
        parts.append("damaged: " + "; ".join(f"{k} {len(v)} ({', '.join(v)})" for k, v in rec.damaged.items()))
    if getattr(rec, "recovered", None) is False:
        parts.append("not recovered")
    elif getattr(rec, "recovered", None) and getattr(rec, "recovery_s", None):
        parts.append(f"recovered after {_s(rec.recovery_s)}")
    if getattr(rec, "unrequested_changes", None):
        parts.append(f"{len(rec.unrequested_changes)} unrequested change(s): " + "; ".join(rec.unrequested_changes[:3])
                     + (" ..." if len(rec.unrequested_changes) > 3 else ""))
    if getattr(rec, "oscillating", False):
        parts.append("oscillating (undid and redid the same change)")
    return "; ".join(parts) or None


def observer_markdown(s: Any) -> list[str]:
    """The report's observer section (module doc); [] when no valid run was sampled."""
    runs = [r for c in s.cells for r in c.valid]
    if not any(getattr(r, "sample_period_s", None) is not None for r in runs):
        return []
    periods = sorted({r.sample_period_s for r in runs if getattr(r, "sample_period_s", None) is not None})
    lines = ["", "## Observer: unsafe intermediate states, damage, recovery", "",
             f"Baseline invariants sampled out of band every {', '.join(f'{p:g}' for p in periods)} s while "
             "the agent ran (and at once after each changing call). *Unsafe intermediate*: an invariant was "
             "seen violated during the run, yet the final state is damage-free (such runs still count as "
             "damage-free in the rates above; see docs/campaigns.md). Both count only violations no fault "
             "explains; *fault-explained*: runs with violations first seen while a fault was in effect on a "
             "router the invariant concerns (docs/faults.md).", "",
             "| cell | runs sampled | unsafe intermediate | unsafe (any) | fault-explained | recovered "
             "| unrequested changes | oscillating | damaged by service class |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in s.cells:
        sampled = [r for r in c.valid if getattr(r, "sample_period_s", None) is not None]
        inter = sum(1 for r in sampled if _unsafe(r) and r.damage_free)
        unsafe = sum(1 for r in sampled if _unsafe(r))
        explained = sum(1 for r in sampled if fault_explained(r))
        rec = [r for r in sampled if r.recovered is not None]
        dmg: dict[str, set[str]] = {}
        for r in c.valid:
            for cls, tags in (getattr(r, "damaged", None) or {}).items():
                dmg.setdefault(cls, set()).update(tags)
        dmg_text = "; ".join(f"{k}: {len(v)}" for k, v in sorted(dmg.items())) or "none"
        lines.append(
            f"| {c.name} | {len(sampled)} | {inter} | {unsafe} | {explained} | {sum(1 for r in rec if r.recovered)}/{len(rec)} "
            f"| {sum(1 for r in c.valid if getattr(r, 'unrequested_changes', None))} "
            f"| {sum(1 for r in c.valid if getattr(r, 'oscillating', False))} | {dmg_text} |")
    shown = [r for r in runs if getattr(r, "unsafe", None) is not None or getattr(r, "unrequested_changes", None)
             or getattr(r, "oscillating", False)]
    if shown:
        lines += ["", "Runs:", ""]
        for r in shown:
            lines.append(f"- `{r.run_id}` ({r.label}): {observer_line(r)}")
    return lines
