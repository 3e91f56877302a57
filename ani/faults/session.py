# size: one run's fault session: inject, verify, watch and remove share the session's timeline and records
"""One run's faults: inject at their points, verify, watch, end after their duration, remove.

The campaign runner creates a :class:`FaultSession` after the lab is up and before the agent
runs, and drives it::

    session = FaultSession(lab, schedule, trajectory)
    session.start()                 # the agent's clock starts; injects the step-0 faults
    ... after each tool_call event (the runner's trajectory hook, in the agent's thread):
    session.on_tool_call(step, ev)  # step: tool calls returned so far (1, 2, ...); ev: the call
    session.hold()                  # optional (faults.hold): every fault injected and over first
    session.stop()                  # after the agent, and again in run_one's finally: idempotent
    session.records, session.invalid_reason, session.ended_at

Points are agent steps (``FaultSpec.at_step``; ``docs/faults.md``): a fault is injected when
the ``at_step``-th tool call has returned, before the next one runs. A fault placed in time
(``FaultSpec.at_s`` set, ``faults.placement: time``) is injected by the watcher thread
``at_s`` seconds after :meth:`FaultSession.start`, between or during the agent's calls, and a
deferred one as soon as its router is free.

Exposure: each injected fault's record says how long it was in effect during the run
(``FaultRecord.exposure_s``: from its injection to the start of its removal) and how much of
that came before the agent stopped (``acting_s``). :meth:`FaultSession.hold` (``faults.hold``)
keeps the run open after the agent stopped until every scheduled fault has been injected and has
run its duration, so every level meets every fault for its whole duration. Durations are seconds: a
watcher thread removes a fault ``duration_s`` seconds after its injection (so a fault lasts the
same time whatever the level's speed); a fault with ``duration_s=None`` stays until
:meth:`FaultSession.stop`.

Validity: each fault is verified right after injection (``kind.verify``) and checked to be still
present (``kind.present``) at every later tool-call boundary and just before it is removed. A
fault that could not be injected, did not take, or vanished sets :attr:`invalid_reason`: the run
is ``environment_invalid`` (an infrastructure error, never the agent's failure), and no further
fault is injected. Removal is verified too (``kind.removed``); a fault that cannot be removed
also invalidates the run (the grading would see it).

Trajectory events (``event`` = the name, all with ``kind``, ``target``, ``at_step``, and
``t_s``: seconds since :meth:`start`): ``fault_injected`` (``duration_s``, ``params``,
``step``), ``fault_verified`` (``ok``, ``detail``), ``fault_invalid`` (``reason``),
``fault_removed`` (``ok``, ``detail``, ``why``), ``fault_not_reached`` (the agent stopped before
the point), ``fault_merged`` (``into_step``: a fault due while another with the same target,
``FaultKind.overlap_key``, was in effect is not injected twice; the one in effect lasts until the
later end), ``fault_deferred`` (``behind``: a fault due while a fault of a kind that blocks
its router, ``FaultKind.blocks_router`` (a frozen router), is in effect on one of its routers
waits until that one is removed, then is injected at the next
tool-call boundary (step placement: a step, as every injection) or, placed in time or under the
hold, by the watcher as soon as that removal has ended (every cell alike): one
router carries one fault at a time, so a held lock is never attempted on a frozen router, whose
NETCONF server part answers nothing; ``FaultRecord.deferred_s`` says how long it waited). Every
one also carries ``source: "harness"``. ``fault_skipped`` (``reason``): the kind raised
:class:`~ani.errors.FaultNotApplicable` (the run's own state stands in its way, e.g. the agent's
session holds the lock a held-lock fault would take): not injected, the run stays valid. With
``retry_skipped`` (the runner's ``faults.hold``) it is tried again every :data:`RETRY_EVERY_S`
seconds until it takes (then it runs its whole duration; ``deferred_s`` says how long it waited)
or the run ends, so a level whose own transaction held the lock at the fault's point still meets
the fault once it let go (issue 23 §2: exposure must not depend on the level).

Undone by the agent: a fault that vanished while the agent's own call that changed, or tried to
change, one of its routers was running (``attempted_change(ev)`` true for the ``tool_call`` event
``ev``, a call whose arguments name the router as ``device`` / ``devices`` or name no router at
all, such as an A3-T intent) is the agent's doing, not the infrastructure's: an A0 ``ip link set
dev IF up``, an A1 ``no shutdown``, an ``nft delete table``. It is recorded as
``FaultRecord.undone_by`` (``"step 5: shell on e1"``), event ``fault_undone`` (``by``,
``detail``); what is left of the fault is removed and the run stays valid (graded: what the agent
did is measured). A fault that vanished with no such call (between calls, or under a read) still
makes the run ``environment_invalid``. A vanish the duration watcher sees while a call is in
flight is decided when that call returns (its ``elapsed_s`` says whether it was running then).

Thread safety: every transition holds one lock; the watcher thread and the agent's thread never
act on a fault at the same time. A timed removal (``concurrent_removal``, default with the
watcher) marks the fault ``removing`` under the lock and undoes it on a thread of its own
without the lock, so one slow removal never delays another fault's end; a fault due on a target
still being removed waits for it; :meth:`FaultSession.stop` waits for every removal under way. Nothing here raises into the agent: a kind's exception becomes
an invalid fault.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ani.errors import FaultNotApplicable
from ani.faults.base import FaultKind, FaultSpec, get_fault_kind, target_label, target_routers
from ani.faults.record import FaultRecord
from ani.host.threads import thread
from ani.lab.protocol import Lab

#: trajectory event names
FAULT_EVENTS = ("fault_injected", "fault_verified", "fault_invalid", "fault_removed", "fault_not_reached",
                "fault_merged", "fault_deferred", "fault_skipped", "fault_undone")

#: seconds of slack when deciding whether a call was running at a vanish (clock granularity)
_SLACK_S = 0.05
#: seconds between two tries of a skipped fault (``retry_skipped``)
RETRY_EVERY_S = 2.0


def _cause(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@dataclass
class _Active:
    index: int
    spec: FaultSpec
    kind: FaultKind
    handle: Any
    injected_at: float
    deadline: float | None
    state: str = "active"  # active -> removed
    extra: dict[str, Any] = field(default_factory=dict)
    merged: list[tuple[int, float]] = field(default_factory=list)  # (index, when due) merged into this


class FaultSession:
    """The faults of one run (see the module doc).

    Args:
        lab: the run's lab (what the kinds act on).
        schedule: the variant's faults (:func:`ani.faults.schedule.draw_schedule`), any order;
            they are injected by ``at_step``, ties in list order.
        trajectory: where the ``fault_*`` events go (anything with ``log(event, **fields)``).
        clock: monotonic seconds (tests may pass their own).
        get_kind: ``name -> FaultKind`` (default :func:`ani.faults.base.get_fault_kind`).
        attempted_change: ``tool_call event -> bool``: the call changed or tried to change
            something (the runner passes :func:`ani.campaign.observe_run.attempted_change` at
            the cell's level). None: no call is ever taken as the agent undoing a fault.
    """

    def __init__(self, lab: Lab, schedule: list[FaultSpec], trajectory: Any, *,
                 clock: Callable[[], float] = time.monotonic,
                 get_kind: Callable[[str], FaultKind] = get_fault_kind,
                 watch: bool = True,
                 attempted_change: Callable[[Mapping[str, Any]], bool] | None = None,
                 retry_skipped: bool = False, concurrent_removal: bool | None = None) -> None:
        self.lab = lab
        self.schedule = sorted(schedule, key=lambda s: s.at_step)  # stable: ties keep list order
        self.trajectory = trajectory
        self._clock = clock
        self._get_kind = get_kind
        self._watch = watch
        self._lock = threading.RLock()
        self._wake = threading.Condition(self._lock)
        self._records = [FaultRecord(kind=s.kind, target=dict(s.target), params=dict(s.params),
                                     at_step=s.at_step, at_s=s.at_s, duration_s=s.duration_s)
                         for s in self.schedule]
        self._next = 0  # index of the next fault to inject
        self._deferred: list[int] = []  # due, waiting for a fault on one of their routers to end
        self._due_at: dict[int, float] = {}
        self._active: list[_Active] = []
        self._t0: float | None = None
        self._stopped = False
        self._invalid: str | None = None
        self._ended_at: float | None = None
        self._watcher: threading.Thread | None = None
        self._attempted_change = attempted_change
        self._pending: dict[int, tuple[float, str]] = {}  # index -> (when, detail): vanished mid-call
        self._step = 0  # tool calls returned so far
        self._agent_end: float | None = None  # when the agent stopped (hold or stop)
        self._all_due = False  # holding: every step-placed fault is due now
        self._retry_skipped = retry_skipped
        self._concurrent_removal = watch if concurrent_removal is None else concurrent_removal
        self._removers: list[threading.Thread] = []
        self._retry: dict[int, float] = {}  # skipped fault index -> monotonic time of its next try

    # --- what the runner reads -------------------------------------------------------------------

    @property
    def records(self) -> list[FaultRecord]:
        """One record per scheduled fault, in injection order (copies)."""
        with self._lock:
            return [r.model_copy(deep=True) for r in self._records]

    @property
    def invalid_reason(self) -> str | None:
        """Why the run is ``environment_invalid`` (the first fault that did not take, vanished
        or could not be removed), or None."""
        return self._invalid

    @property
    def ended_at(self) -> float | None:
        """Monotonic time (the session's clock) the last injected fault was removed; None if
        none was injected or one is still active."""
        return self._ended_at

    @property
    def t0(self) -> float | None:
        """Monotonic time (the session's clock) the agent's clock started (:meth:`start`), or
        None; every ``*_s`` of the records and events is seconds since then."""
        return self._t0

    @property
    def active(self) -> int:
        """How many faults are in effect now."""
        with self._lock:
            return sum(1 for a in self._active if a.state == "active")

    # --- driving ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the agent's clock, inject the step-0 faults, start the duration watcher."""
        with self._lock:
            if self._t0 is not None:
                return
            self._t0 = self._clock()
            self._inject_due(0)  # step 0, and time-placed faults at 0 s
            if self._watch and self.schedule:
                self._watcher = thread(self._watch_loop, name="ani-fault-watch")
                self._watcher.start()

    def on_tool_call(self, step: int, call: Mapping[str, Any] | None = None) -> None:
        """After the agent's ``step``-th tool call returned (``call``: its ``tool_call`` event,
        or None): check the active faults are still present (one that vanished under this call,
        if it changed one of the fault's routers, was undone by the agent), end the expired ones,
        inject the ones due at ``step`` (or earlier). Never raises."""
        with self._lock:
            if self._t0 is None or self._stopped:
                return
            self._step = max(self._step, step)
            self._settle_pending(step, call)
            self._check_present(step, call)
            self._end_expired()
            self._inject_deferred()  # at a step boundary, like every other injection
            self._inject_retries()
            self._inject_due(step)
            self._wake.notify_all()

    def stop(self) -> None:
        """Remove every active fault (checking it was still present) and verify the removal;
        mark the faults never reached. Idempotent (a later call removes only what an interrupted
        earlier one left); never raises."""
        with self._lock:
            if self._agent_end is None:
                self._agent_end = self._clock()
            self._stopped = True
            self._wake.notify_all()
            self._settle_pending(None, None)  # no call returns any more: a vanish is not the agent's
            live = [a for a in self._active if a.state == "active"]
            for a in live:  # every one checked before any is removed
                if not self._records[a.index].invalid:
                    self._check_one(a)
            for a in reversed(live):  # last injected first
                self._remove(a, why="end of the agent's run")
            for i in self._deferred:  # faults on one router (deferral): never injected
                rec = self._records[i]
                rec.detail = (rec.detail or "deferred") + "; not injected: the agent's run ended first"
            self._deferred = []
            self._retry = {}  # skipped faults never injected: their detail says why
            if self._active and all(x.state != "active" for x in self._active) and self._ended_at is None:
                self._ended_at = self._clock()
            for i in range(self._next, len(self.schedule)):
                spec = self.schedule[i]
                rec = self._records[i]
                if not rec.detail:
                    rec.detail = "not reached: the agent stopped before this point"
                self._event("fault_not_reached", spec)
            self._next = len(self.schedule)
        w = self._watcher
        if w is not None and w is not threading.current_thread():
            w.join(timeout=5.0)
        self.settle()

    # --- internals (hold the lock) -----------------------------------------------------------------

    def _t(self) -> float:
        return round(self._clock() - (self._t0 or self._clock()), 3)

    def _event(self, name: str, spec: FaultSpec, **fields: Any) -> None:
        try:
            self.trajectory.log(name, source="harness", kind=spec.kind, target=dict(spec.target),
                                at_step=spec.at_step, t_s=self._t(), **fields)
        except Exception:  # noqa: BLE001 - the record keeps it; a log error never breaks a run
            pass

    def _invalidate(self, index: int, reason: str) -> None:
        spec = self.schedule[index]
        full = f"{spec.kind} {target_label(spec.target)} (step {spec.at_step}): {reason}"
        self._records[index].invalid = reason
        self._records[index].detail = reason
        if self._invalid is None:
            self._invalid = f"fault {full}"
        self._event("fault_invalid", spec, reason=reason)

    def _is_due(self, i: int, step: int | None) -> bool:
        """Fault ``i`` is due: its time has come (time placement), or ``step`` reached its point,
        or the session holds (every fault due)."""
        spec = self.schedule[i]
        if spec.at_s is not None:
            return self._t0 is not None and self._clock() - self._t0 >= spec.at_s
        return self._all_due or (step is not None and spec.at_step <= step)

    def _next_due_time(self) -> float | None:
        """Monotonic time the next time-placed fault is due (None: none waits for its time)."""
        if self._next < len(self.schedule) and self._t0 is not None:
            at = self.schedule[self._next].at_s
            if at is not None:
                return self._t0 + at
        return None

    def _inject_due(self, step: int | None) -> None:
        while self._next < len(self.schedule) and self._is_due(self._next, step):
            i = self._next
            self._next += 1
            if self._invalid is not None:
                self._records[i].detail = "not injected: the run is already environment_invalid"
                continue
            self._due_at[i] = self._clock()
            if self._defer(i):
                continue
            self._inject(i, self._step if step is None else step)

    # --- faults on one router (deferral) ------------------------------------------------------------

    @staticmethod
    def _routers(spec: FaultSpec) -> set[str]:
        """The routers a fault acts on (:func:`ani.faults.base.target_routers`)."""
        return target_routers(spec.target)

    def _blocker(self, i: int) -> _Active | None:
        """An active (or still being removed) fault of another kind that blocks one of fault
        ``i``'s routers (same-kind faults on the same target are merged instead, :meth:`_merge`),
        or a fault with the same overlap key still being removed (its removal would undo ``i``)."""
        spec = self.schedule[i]
        mine = self._routers(spec)
        key = None
        for a in self._active:
            if a.state == "removing":
                if key is None:
                    try:
                        key = self._get_kind(spec.kind).overlap_key(spec)
                    except Exception:  # noqa: BLE001 - an unknown kind fails at its injection
                        key = ()
                if a.kind.overlap_key(a.spec) == key:
                    return a
            if (a.state in ("active", "removing") and a.spec.kind != spec.kind
                    and getattr(a.kind, "blocks_router", False) and mine & self._routers(a.spec)):
                return a
        return None

    def _defer(self, i: int) -> bool:
        """Defer fault ``i`` if a fault of another kind is in effect on one of its routers."""
        a = self._blocker(i)
        if a is None:
            return False
        spec, rec = self.schedule[i], self._records[i]
        rec.detail = (f"deferred: {a.spec.kind} {target_label(a.spec.target)} (step {a.spec.at_step}) "
                      "was in effect on the same router")
        self._deferred.append(i)
        self._event("fault_deferred", spec, behind={"kind": a.spec.kind, "target": dict(a.spec.target),
                                                     "at_step": a.spec.at_step})
        return True

    def _inject_retries(self) -> None:
        """Try again the skipped faults whose next try has come (``retry_skipped``)."""
        now = self._clock()
        for i in sorted(self._retry):
            if self._invalid is None and self._retry[i] <= now and self._blocker(i) is None:
                self._inject(i, self._step)

    def _inject_deferred(self) -> None:
        """Inject the deferred faults whose routers are free now, in schedule order."""
        for i in list(self._deferred):
            if self._invalid is not None:
                self._deferred.remove(i)
                self._records[i].detail += "; not injected: the run is already environment_invalid"
                continue
            if self._blocker(i) is None:
                self._deferred.remove(i)
                self._records[i].deferred_s = round(self._clock() - self._due_at.get(i, self._clock()), 3)
                self._inject(i, self.schedule[i].at_step)

    def _merge(self, i: int, kind: FaultKind) -> bool:
        """Merge fault ``i`` into an active fault with the same overlap key (True), if any."""
        spec, rec = self.schedule[i], self._records[i]
        key = kind.overlap_key(spec)
        for a in self._active:
            if a.state == "active" and a.kind.overlap_key(a.spec) == key:
                end = None if spec.duration_s is None else self._clock() + spec.duration_s
                a.deadline = None if a.deadline is None or end is None else max(a.deadline, end)
                a.merged.append((i, self._clock()))
                rec.merged_into = a.index
                rec.detail = (f"merged: the same target was already under fault #{a.index} (step "
                              f"{a.spec.at_step}); that one lasts until this one's end")
                self._event("fault_merged", spec, into_step=a.spec.at_step, duration_s=spec.duration_s)
                return True
        return False

    def _inject(self, i: int, step: int) -> None:
        spec, rec = self.schedule[i], self._records[i]
        try:
            kind = self._get_kind(spec.kind)
            if self._merge(i, kind):
                return
            why = kind.unavailable(self.lab)
            if why:
                self._invalidate(i, f"unavailable on this host: {why}")
                return
            before = self._read_own(kind, spec)
            handle = kind.inject(self.lab, spec)
            self._note_wrote(i, spec, before)
        except FaultNotApplicable as exc:  # the run's own state stands in its way: measured
            rec.detail = f"not injected: {exc}"
            if i not in self._retry:  # said once; the later tries are silent
                self._event("fault_skipped", spec, reason=str(exc), step=step, retry=self._retry_skipped)
            if self._retry_skipped:
                self._retry[i] = self._clock() + RETRY_EVERY_S
            return
        except Exception as exc:  # noqa: BLE001 - FaultError or a kind's bug: not the agent's
            self._invalidate(i, f"inject failed: {_cause(exc)}")
            # it may have half-taken: try to undo with no handle
            return
        now = self._clock()
        if self._retry.pop(i, None) is not None:
            rec.deferred_s = round(now - self._due_at.get(i, now), 3)
        a = _Active(i, spec, kind, handle, now, None if spec.duration_s is None else now + spec.duration_s)
        self._active.append(a)
        self._ended_at = None
        rec.injected, rec.injected_s = True, self._t()
        self._event("fault_injected", spec, duration_s=spec.duration_s, params=dict(spec.params), step=step)
        try:
            ok, detail = kind.verify(self.lab, spec, handle)
        except Exception as exc:  # noqa: BLE001
            ok, detail = False, f"verify failed: {_cause(exc)}"
        rec.verified, rec.detail = bool(ok), detail
        self._event("fault_verified", spec, ok=bool(ok), detail=detail)
        if not ok:
            self._invalidate(i, f"did not take effect: {detail}")
            self._remove(a, why="it did not take effect")

    def _check_one(self, a: _Active, *, step: int | None = None, call: Mapping[str, Any] | None = None,
                   in_watcher: bool = False) -> bool:
        """Is fault ``a`` still present? If not: undone by the agent's ``call`` (returned at
        ``step``) when that call could have changed its routers; pending when the watcher sees
        it (a call may be in flight: decided when it returns); else the run is invalid."""
        try:
            ok, detail = a.kind.present(self.lab, a.spec, a.handle)
        except Exception as exc:  # noqa: BLE001
            ok, detail = False, f"present check failed: {_cause(exc)}"
        if not ok:
            if step is not None and self._by_agent(a, call):
                self._undone(a, step, call, detail)
            elif in_watcher and self._attempted_change is not None:
                self._pending[a.index] = (self._clock(), detail)
            else:
                self._invalidate(a.index, f"vanished while it should be in effect: {detail}")
        return bool(ok)

    def _check_present(self, step: int | None = None, call: Mapping[str, Any] | None = None) -> None:
        for a in self._active:
            if a.state == "active" and not self._records[a.index].invalid:
                self._check_one(a, step=step, call=call)

    # --- what a fault wrote into the configuration -------------------------------------------------

    def _read_own(self, kind: FaultKind, spec: FaultSpec) -> dict[str, Any] | None:
        """The configurations of the fault's routers when its kind writes configuration (None
        otherwise, or when they cannot be read: then nothing is recorded)."""
        if not getattr(kind, "writes_config", False):
            return None
        routers = sorted(self._routers(spec))
        if not routers:  # a lab that cannot be read (no vtysh): the read below says so, nothing recorded
            return None
        try:
            from ani.observer.changes import read_configs

            return read_configs(self.lab, routers)
        except Exception:  # noqa: BLE001 - unreadable: nothing recorded
            return None

    def _note_wrote(self, i: int, spec: FaultSpec, before: dict[str, Any] | None) -> None:
        self._records[i].wrote += self._wrote_lines(before)

    def _wrote_lines(self, before: dict[str, Any] | None) -> list[str]:
        """What changed in the routers' configurations since ``before`` (re-read now)."""
        if before is None:
            return []
        try:
            from ani.device.changes import config_changes
            from ani.observer.changes import read_configs

            after = read_configs(self.lab, list(before))
        except Exception:  # noqa: BLE001
            return []
        return [f"{r}: {c}" for r in before if r in after for c in config_changes(before[r], after[r])]

    # --- undone by the agent -------------------------------------------------------------------

    @staticmethod
    def _call_routers(call: Mapping[str, Any]) -> set[str] | None:
        """The routers a call names (``device`` / ``devices``), or None: it names none (an
        A3-T intent, an A3-R commit: it may act on any router)."""
        args = call.get("arguments") if isinstance(call.get("arguments"), Mapping) else {}
        out: set[str] = set()
        for key in ("device", "devices", "router", "routers"):
            v = args.get(key)
            if isinstance(v, str):
                out.add(v)
            elif isinstance(v, (list, tuple)):
                out.update(str(x) for x in v)
        return out or None

    def _by_agent(self, a: _Active, call: Mapping[str, Any] | None) -> bool:
        """Could ``call`` (a returned tool call) have undone fault ``a``?"""
        if call is None or self._attempted_change is None:
            return False
        try:
            changing = bool(self._attempted_change(call))
        except Exception:  # noqa: BLE001 - a classifier error is no evidence
            return False
        if not changing:
            return False
        named = self._call_routers(call)
        return named is None or bool(named & self._routers(a.spec))

    @staticmethod
    def _call_label(step: int, call: Mapping[str, Any]) -> str:
        named = FaultSession._call_routers(call)
        where = f" on {','.join(sorted(named))}" if named else ""
        return f"step {step}: {call.get('tool', '?')}{where}"

    def _undone(self, a: _Active, step: int, call: Mapping[str, Any], detail: str) -> None:
        rec = self._records[a.index]
        by = self._call_label(step, call)
        rec.undone_by = by
        self._event("fault_undone", a.spec, by=by, detail=detail)
        self._remove(a, why=f"undone by the agent ({by}): the rest of it is removed")
        rec.detail = f"undone by the agent's call ({by}): {detail}"

    def _settle_pending(self, step: int | None, call: Mapping[str, Any] | None) -> None:
        """Decide the vanishes the watcher saw: the agent's when ``call`` (returned at ``step``)
        was running then and could have changed the fault's routers; else invalid."""
        if not self._pending:
            return
        started = None
        if call is not None:
            try:
                started = self._clock() - float(call.get("elapsed_s") or 0.0) - _SLACK_S
            except (TypeError, ValueError):
                started = None
        for i, (when, detail) in sorted(self._pending.items()):
            a = next(x for x in self._active if x.index == i)
            rec = self._records[i]
            if step is not None and started is not None and started <= when and self._by_agent(a, call):
                by = self._call_label(step, call)
                rec.undone_by = by
                rec.detail = f"undone by the agent's call ({by}): {detail}"
                self._event("fault_undone", a.spec, by=by, detail=detail)
            else:
                self._invalidate(i, f"vanished while it should be in effect: {detail}")
        self._pending.clear()

    def _end_expired(self, *, in_watcher: bool = False) -> None:
        now = self._clock()
        for a in self._active:
            if a.state == "active" and a.deadline is not None and now >= a.deadline:
                if not self._records[a.index].invalid:
                    self._check_one(a, in_watcher=in_watcher)
                if a.state == "active" and self._concurrent_removal:
                    self._remove_concurrently(a, why="its duration passed")
                elif a.state == "active":
                    self._remove(a, why="its duration passed")

    def _remove(self, a: _Active, *, why: str) -> None:
        self._note_exposure(a, self._clock())
        ok, detail, wrote = self._undo(a)
        self._removed(a, ok, detail, wrote, why)

    def _undo(self, a: _Active) -> tuple[bool, str, list[str]]:
        """The removal itself, on the lab: ``(ok, detail, lines the removal wrote)``."""
        try:
            before = self._read_own(a.kind, a.spec)
            a.kind.remove(self.lab, a.spec, a.handle)
            wrote = self._wrote_lines(before)
            ok, detail = a.kind.removed(self.lab, a.spec, a.handle)
        except Exception as exc:  # noqa: BLE001
            return False, f"remove failed: {_cause(exc)}", []
        return bool(ok), detail, wrote

    def _remove_concurrently(self, a: _Active, *, why: str) -> None:
        """Remove ``a`` on a thread of its own, the lock released meanwhile: a slow removal (a
        kind that writes configuration reads its routers twice) never delays another fault's
        end (issue 23: measured 2.4 s behind a pool reservation's removal on a loaded machine).
        Until it is done, a fault due on the same target waits (:meth:`_blocker`)."""
        a.state = "removing"
        self._note_exposure(a, self._clock())

        def run() -> None:
            ok, detail, wrote = self._undo(a)
            with self._lock:
                self._removed(a, ok, detail, wrote, why)
                self._wake.notify_all()

        t = thread(run, name="ani-fault-remove")
        self._removers.append(t)
        t.start()

    def settle(self, timeout_s: float = 60.0) -> None:
        """Wait for the removals under way on their own threads (call without the lock)."""
        for t in list(self._removers):
            if t is not threading.current_thread():
                t.join(timeout=timeout_s)

    def _removed(self, a: _Active, ok: bool, detail: str, wrote: list[str], why: str) -> None:
        rec = self._records[a.index]
        rec.wrote += wrote
        a.state = "removed"  # only now: a KeyboardInterrupt above leaves it for the next stop()
        rec.removed, rec.removed_s = bool(ok), self._t()
        if not rec.invalid:
            rec.detail = detail if ok else rec.detail
        self._event("fault_removed", a.spec, ok=bool(ok), detail=detail, why=why)
        if not ok:
            self._invalidate(a.index, f"could not be removed: {detail}")
        if all(x.state == "removed" for x in self._active) and not self._deferred:
            self._ended_at = self._clock()

    def _note_exposure(self, a: _Active, off: float) -> None:
        """Fill ``exposure_s`` / ``acting_s`` of fault ``a`` (and of the faults merged into it,
        from when each was due), the fault being in effect until ``off`` (monotonic)."""
        end = off if self._agent_end is None else min(off, self._agent_end)
        for i, since in [(a.index, a.injected_at), *a.merged]:
            rec = self._records[i]
            rec.exposure_s = round(max(0.0, off - since), 3)
            rec.acting_s = round(max(0.0, end - since), 3)

    def _clock_injects(self) -> bool:
        """The clock (watcher, hold) injects: time placement, or holding (every fault due)."""
        return self._all_due or any(s.at_s is not None for s in self.schedule)

    def _next_wake(self) -> float | None:
        """Monotonic time of the watcher's next duty: a deadline, a time-placed fault due, a
        skipped fault's next try, or now when a deferred fault's router is free and the clock
        injects (so a waiting fault starts when its blocker's removal ends, in every cell,
        not at the agent's next call or the next scheduled fault: issue 23 §2)."""
        if (self._deferred and self._invalid is None and self._clock_injects()
                and any(self._blocker(i) is None for i in self._deferred)):
            return self._clock()
        times = [a.deadline for a in self._active if a.state == "active" and a.deadline is not None]
        due = self._next_due_time()
        if due is not None and self._invalid is None:
            times.append(due)
        if self._retry and self._invalid is None:
            times.append(min(self._retry.values()))
        return min(times) if times else None

    def _timed_duties(self) -> None:
        """What the clock drives (watcher and hold): end the expired faults; with time
        placement or while holding, inject the deferred faults whose router is free and the
        faults due now."""
        self._end_expired(in_watcher=not self._all_due)
        if self._clock_injects():
            self._inject_deferred()
            self._inject_retries()
            self._inject_due(None)

    def _watch_loop(self) -> None:
        with self._lock:
            while not self._stopped:
                when = self._next_wake()
                if when is not None:
                    wait = max(0.0, when - self._clock())
                    if wait <= 0:
                        self._timed_duties()
                        continue
                    self._wake.wait(timeout=min(wait, 1.0))
                else:
                    self._wake.wait(timeout=1.0)

    # --- hold: every fault met before the agent's end is accepted ----------------------------------

    def _work_left(self) -> bool:
        if self._invalid is not None:
            return any(a.state == "active" for a in self._active)
        return (self._next < len(self.schedule) or bool(self._deferred) or bool(self._retry)
                or any((a.state == "active" and a.deadline is not None) or a.state == "removing"
                       for a in self._active))

    def hold(self, bound_s: float | None = None, *, tick_s: float = 0.5) -> float:
        """The agent stopped; keep the run open until every scheduled fault has been injected
        (a time-placed one at its time, a step-placed one at once, a deferred one when its
        router is free) and has run its duration, at most ``bound_s`` seconds (None: no bound).
        ``tick_s``: the longest single wait (seconds of the real clock). Returns the seconds held
        (the session's clock); never raises. :meth:`stop` must still be called."""
        with self._lock:
            if self._t0 is None or self._stopped:
                return 0.0
            start = self._clock()
            if self._agent_end is None:
                self._agent_end = start
            self._settle_pending(None, None)  # no call returns any more
            self._all_due = True
            self._timed_duties()
            while self._work_left() and not self._stopped:
                now = self._clock()
                if bound_s is not None and now - start >= bound_s:
                    break
                when = self._next_wake()
                wait = tick_s if when is None else max(0.0, min(when - now, tick_s))
                if wait > 0:
                    self._wake.wait(timeout=wait)
                self._timed_duties()
            return round(self._clock() - start, 3)


__all__ = ["FaultSession", "FAULT_EVENTS"]
