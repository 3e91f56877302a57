"""The runner's out-of-band observation of one run (issue 14 §2), in one object so that
:mod:`ani.campaign.runner` calls it at four points::

    obs = RunObservation.begin(spec, deps, lab, invariants, variant, trajectory)   # before agent.run
    adapter = obs.gated(adapter)                        # the agent's calls hold sampling back
    ... agent.run(...) ...
    obs.agent_ended()                                   # right after it
    obs.settle(settle_seconds(scenario), fault_session)  # counted from the agent's last change
    ... grading ...                                     # obs.read_final_beside() as its negatives start
    obs.finish(state, fault_session)                    # after grading: recovery, changes, damage
    obs.stop()                                          # always (run_one's finally; idempotent)
    RunRecord(..., **obs.fields())

What each part records (fields of :class:`ani.campaign.results.RunRecord`):

- ``unsafe``, ``samples``, ``sample_period_s``: the sampler (:mod:`ani.observer.sampler`) runs
  from just before ``agent.run`` until grading is done, on the run's baseline invariants (the
  superseded ones left out, as in grading); each tool call that changed something or tried to
  (``changed``, or an update by its kind: A0's ``ip addr flush`` changes only the kernel, which
  A0's change detection does not compare) pokes it.
- ``recovered``, ``recovery_s``: after grading it waits (at most ``observer_bound_s``, default
  20 s, from the reference time, and no longer once the routing has settled with
  :data:`RECOVERY_LOOKS` rounds begun in the quiet still failing: :mod:`ani.observer.settle`)
  for a complete round in which every invariant passes; the
  reference time is the later of the agent's end and the faults' end (``fault_session.ended_at``,
  monotonic; None or no session: no faults).
- ``unrequested_changes``: the routers' configurations read out of band before the agent acts
  (beside the baseline check) and after it (beside grading's negative checks,
  :meth:`RunObservation.read_final_beside`), against the task's reference end state (:mod:`ani.observer.changes`),
  less what the faults wrote themselves (``FaultRecord.wrote``, :func:`fault_lines`), which
  goes to ``fault_residue``.
- ``damaged``: the failed invariants' service tags by service class (:mod:`ani.intents.damage`),
  less ``fault_damage``.
- fault-explained violations (issue 23 §2): each ``Violation`` of ``unsafe`` says whether a
  fault in effect on a router its invariant concerns explains it (:mod:`ani.observer.concern`),
  ``unsafe.unexplained`` counts the rest; an invariant failed at grading whose open violation a
  fault explains goes to ``fault_damage`` and does not count against ``damage_free``.
- ``oscillating``: :func:`ani.campaign.oscillation.oscillating` over the trajectory.

Nothing here fails a run: a part that cannot be measured (a router read that fails) is left at
its default and said in a ``harness`` trajectory event (``observer_note``, with ``what`` and
``reason``); an observer without ``sample()`` (a test's fake) is not sampled (the fields stay None).
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ani.campaign.oscillation import oscillating
from ani.faults.base import target_label, target_routers
from ani.intents.damage import damaged_by_class
from ani.observer.concern import FaultInterval, check_routers, explain_violations
from ani.observer.sampler import DEFAULT_PERIOD_S, Sampler
from ani.host.threads import ContextPool

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["RECOVERY_BOUND_S", "RECOVERY_LOOKS", "GatedAdapter", "RunObservation", "attempted_change",
           "changing_call", "fault_intervals", "fault_lines", "read_initial"]

#: how long recovery is waited for when the campaign sets no ``observer_bound_s`` (seconds)
RECOVERY_BOUND_S = 20.0
#: complete sampling rounds that must fail in a settled network before recovery is given up
RECOVERY_LOOKS = 2


def attempted_change(ev: dict[str, Any], level: str) -> bool:
    """A ``tool_call`` that changed something, or tried to (an update by its kind,
    :func:`ani.campaign.metrics.tool_kind`: A0's ``ip addr flush`` changes the kernel, not the
    FRR config or nftables that A0's change detection compares, so its ``changed`` is false)."""
    if ev.get("event") != "tool_call":
        return False
    if ev.get("changed") is True:
        return True
    from ani.campaign.metrics import PREPARATORY_TOOLS, tool_kind

    tool = str(ev.get("tool", ""))
    args = ev.get("arguments") if isinstance(ev.get("arguments"), dict) else None
    return tool not in PREPARATORY_TOOLS and tool_kind(level, tool, args, changed=ev.get("changed")) == "update"


def changing_call(ev: dict[str, Any], level: str) -> bool:
    """A ``tool_call`` that may have changed the network: :func:`attempted_change`, or any call
    not known to only read (its kind neither retrieval nor validation: an unknown tool counts).
    The settle before grading counts from the last one (:meth:`RunObservation.settle`)."""
    if ev.get("event") != "tool_call":
        return False
    if attempted_change(ev, level):
        return True
    from ani.campaign.metrics import PREPARATORY_TOOLS, tool_kind

    tool = str(ev.get("tool", ""))
    if tool in PREPARATORY_TOOLS:
        return False
    args = ev.get("arguments") if isinstance(ev.get("arguments"), dict) else None
    return tool_kind(level, tool, args, changed=ev.get("changed")) not in ("retrieval", "validation")


def fault_intervals(records: list[Any], offset_s: float = 0.0) -> list[FaultInterval]:
    """The injected faults of ``records`` (``FaultRecord``) as intervals on the sampler's clock
    (``offset_s``: the fault session's start minus the sampler's, seconds): from injection to
    removal (None: never removed)."""
    out = []
    for i, r in enumerate(records):
        if not getattr(r, "injected", False) or r.injected_s is None:
            continue
        where = f"{r.at_s:g} s" if getattr(r, "at_s", None) is not None else f"step {r.at_step}"
        end = None if r.removed_s is None else r.removed_s + offset_s
        out.append(FaultInterval(label=f"#{i} {r.kind} {target_label(dict(r.target))} ({where})",
                                 routers=frozenset(target_routers(dict(r.target))),
                                 start_s=r.injected_s + offset_s, end_s=end))
    return out


def fault_lines(records: list[Any]) -> set[str]:
    """Every change line a fault wrote (``FaultRecord.wrote``), both ways: a line a fault
    added (``e4: + ip prefix-list X permit P``) and its removal (``e4: - ...``) are the
    fault's, whoever left it in place at the end (an A2 rollback to a snapshot taken while a
    fault's reservation was there puts it back: a residue of the fault, not a change the agent
    made nobody asked for)."""
    out: set[str] = set()
    for rec in records:
        for line in getattr(rec, "wrote", None) or []:
            router, _, change = str(line).partition(": ")
            sign, _, rest = change.partition(" ")
            if sign in ("+", "-") and rest:
                out.add(f"{router}: + {rest}")
                out.add(f"{router}: - {rest}")
    return out


def read_initial(lab: Lab, routers: list[str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(read_configs(...), read_kernel(...))`` of ``routers`` (default every router of the lab),
    the two at once: what :meth:`RunObservation.begin` reads, made earlier (issue 24 §3: beside
    the baseline check, whose reads and pings change no configuration) and handed to it as
    ``initial``. Raises what either read raises."""
    if routers is None:
        routers = list(getattr(getattr(lab, "topology", None), "routers", None) or [])
    from ani.observer.changes import read_configs, read_kernel

    with ContextPool(max_workers=1) as pool:
        kernel = pool.submit(read_kernel, lab, routers)
        configs = read_configs(lab, routers)
        return configs, kernel.result()


class GatedAdapter:
    """An adapter whose ``call`` brackets ``sampler.call_started()`` / ``call_ended()``; every
    other attribute is the wrapped adapter's."""

    def __init__(self, adapter: Any, sampler: Sampler) -> None:
        self._adapter = adapter
        self._sampler = sampler

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        self._sampler.call_started()
        try:
            return self._adapter.call(name, arguments)
        finally:
            self._sampler.call_ended()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)


class RunObservation:
    """See the module doc. Build it with :meth:`begin`."""

    def __init__(self, lab: Lab, trajectory: Any, level: str, bound_s: float | None) -> None:
        self.lab = lab
        self.trajectory = trajectory
        self.level = level
        self.bound_s = float(bound_s) if bound_s else RECOVERY_BOUND_S
        self.sampler: Sampler | None = None
        self.report: Any = None
        self.agent_end: float | None = None
        self.initial: dict[str, Any] | None = None
        self.kernel_initial: dict[str, Any] | None = None
        self.variant: Any = None
        self.final: dict[str, Any] | None = None  # the routers' configs after grading (read once)
        #: the final reads started beside grading's negative checks (:meth:`read_final_beside`)
        self._final_reads: Future[tuple[dict[str, Any], dict[str, Any]]] | None = None
        #: monotonic end of the agent's last call that may have changed the network (None: none)
        self.last_change: float | None = None
        #: how the settle before grading ended (:meth:`settle`)
        self.settled_by: str | None = None
        self._fields: dict[str, Any] = {}

    def _note(self, what: str, reason: str) -> None:
        try:
            self.trajectory.log("observer_note", kind="harness", what=what, reason=reason)
        except Exception:  # noqa: BLE001 - a note never breaks a run
            pass

    @classmethod
    def begin(cls, spec: Any, deps: Any, lab: Lab, invariants: list[Any], variant: Any,
              trajectory: Any, level: str, period_s: float = DEFAULT_PERIOD_S,
              initial: tuple[dict[str, Any], dict[str, Any]] | BaseException | None = None) -> RunObservation:
        """Read the initial configurations and start the sampler (just before ``agent.run``).
        ``initial``: what :func:`read_initial` returned (or raised) earlier in the run, used
        instead of reading now."""
        obs = cls(lab, trajectory, level, getattr(spec, "observer_bound_s", None))
        obs.variant = variant
        routers = list(getattr(getattr(lab, "topology", None), "routers", None) or [])
        if routers and hasattr(lab, "vtysh"):
            try:
                if isinstance(initial, BaseException):
                    raise initial
                obs.initial, obs.kernel_initial = initial if initial is not None else read_initial(lab, routers)
            except Exception as exc:  # noqa: BLE001
                obs._note("unrequested_changes", f"initial configs unreadable: {type(exc).__name__}: {exc}")
        observer = deps.make_observer(lab)
        if callable(getattr(observer, "sample", None)):
            obs.sampler = Sampler(observer, invariants, period_s=period_s)
            hook = getattr(trajectory, "_hook", None)

            def chained(ev: dict[str, Any], _prev: Any = hook, _s: Sampler = obs.sampler) -> None:
                obs.saw(ev)
                if attempted_change(ev, level):
                    _s.poke()
                if _prev is not None:
                    _prev(ev)

            if hasattr(trajectory, "_hook"):
                trajectory._hook = chained  # run_support.TeeTrajectory: sampler first, display after
            obs.sampler.start()
        elif hasattr(trajectory, "_hook"):  # not sampled: the settle still needs the last change
            hook = getattr(trajectory, "_hook", None)

            def seen(ev: dict[str, Any], _prev: Any = hook) -> None:
                obs.saw(ev)
                if _prev is not None:
                    _prev(ev)

            trajectory._hook = seen
        return obs

    def saw(self, ev: dict[str, Any]) -> None:
        """A trajectory event as it is logged: a :func:`changing_call` moves :attr:`last_change`."""
        if changing_call(ev, self.level):
            self.last_change = time.monotonic()

    def settle(self, settle_s: float, fault_session: Any = None, floor_s: float | None = None) -> float:
        """Wait until ``settle_s`` (:func:`ani.campaign.runner.settle_seconds`) have passed since
        the agent's last changing call and the faults' end (``fault_session.ended_at``), not
        since now: the agent's own calls after its last change, the measured outcomes and the
        adapter's close count towards it. Nothing changed: no wait. With ``floor_s`` (the
        route-map delay timer, seconds) and a lab whose routers can be read, the wait ends on
        evidence once ``floor_s`` have passed (:func:`ani.observer.settle.wait_settled`), at
        ``settle_s`` at the latest; :attr:`settled_by` says how it ended (``"evidence"``,
        ``"cap"``, ``"fixed"``; None: no wait). Returns the seconds waited."""
        from ani.observer.settle import settle_left, settle_reader, wait_settled

        ended = getattr(fault_session, "ended_at", None)
        now = time.monotonic()
        left = settle_left(settle_s, now, self.last_change, float(ended) if isinstance(ended, (int, float)) else None)
        if left <= 0:
            return 0.0
        reader = settle_reader(self.lab) if floor_s is not None else None
        if reader is None:
            self.settled_by = "fixed"
            time.sleep(left)
            return round(left, 3)
        cap_at = now + left
        self.settled_by = wait_settled(*reader, floor_at=cap_at - settle_s + floor_s, cap_at=cap_at)
        return round(time.monotonic() - now, 3)

    def gated(self, adapter: Any) -> Any:
        """``adapter`` as the agent gets it: each ``call`` tells the sampler a call is in flight
        (:meth:`ani.observer.sampler.Sampler.call_started`), everything else forwarded."""
        return adapter if self.sampler is None else GatedAdapter(adapter, self.sampler)

    def agent_ended(self) -> None:
        self.agent_end = time.monotonic()
        if self.sampler is not None:
            self.sampler.agent_ended(self.agent_end)

    def finish(self, state: dict[str, Any], fault_session: Any = None) -> None:
        """After grading: recovery, changes nobody asked for, damage, oscillation."""
        since = self.agent_end or time.monotonic()
        ended = getattr(fault_session, "ended_at", None)
        if isinstance(ended, (int, float)):
            since = max(since, float(ended))
        if self.sampler is not None:
            self._wait_recovered(since)
        self.stop()
        explained = self._explain(state, fault_session)
        self._fields["damaged"] = damaged_by_class([i for i in state.get("invariants") or []
                                                    if getattr(i, "name", None) not in explained])
        events = list(getattr(self.trajectory, "events", []) or [])
        self._fields["oscillating"] = oscillating(events, self.level)
        records = list(getattr(fault_session, "records", None) or [])
        unrequested = self._unrequested()
        own = fault_lines(records)
        self._fields["unrequested_changes"] = [c for c in unrequested if c not in own]
        self._fields["fault_residue"] = [c for c in unrequested if c in own]

    def _wait_recovered(self, since: float) -> None:
        """The sampler's recovery wait (until ``since`` + the bound at most), given up once the
        routing has settled and :data:`RECOVERY_LOOKS` complete rounds begun in the quiet still
        failed (:class:`ani.observer.settle.NetworkWatch`; a lab without a routing state to
        read: the bound alone)."""
        from ani.observer.settle import network_watch

        assert self.sampler is not None
        watch = network_watch(self.lab) if self.sampler._recovered_at(since) is None else None
        if watch is None:
            self.sampler.wait_recovered(since, self.bound_s)
            return
        watch.start()
        try:
            self.sampler.wait_recovered(since, self.bound_s, give_up=lambda fails: watch.settled(fails, RECOVERY_LOOKS))
        finally:
            watch.stop()

    def _explain(self, state: dict[str, Any], fault_session: Any) -> set[str]:
        """issue 23 §2: mark the violations a fault explains (:mod:`ani.observer.concern`); an
        invariant failed at grading whose violation, still open, a fault explains is the fault's
        damage (``fault_damage``), not the agent's: ``state["damage_free"]`` counts only the
        rest. Returns the names of those invariants."""
        rep = self.report
        t0 = getattr(fault_session, "t0", None)
        if rep is None or rep.unsafe is None or self.sampler is None or self.sampler.t0 is None or t0 is None:
            return set()
        intervals = fault_intervals(getattr(fault_session, "records", None) or [], t0 - self.sampler.t0)
        topology = getattr(self.lab, "topology", None)
        concerned = {str(c.name): check_routers(c, topology) for c in self.sampler.checks}
        vs = explain_violations(rep.unsafe.violations, concerned, intervals)
        rep.unsafe = rep.unsafe.model_copy(update={
            "violations": vs, "unexplained": sum(1 for v in vs if not v.fault_explained)})
        open_explained = {v.name for v in vs if v.end_s is None and v.fault_explained}
        failed = {i.name for i in state.get("invariants") or [] if not i.passed}
        own = failed & open_explained
        self._fields["fault_damage"] = sorted(own)
        if failed and failed <= open_explained:
            state["damage_free"] = True
        return own

    def read_final_beside(self) -> None:
        """Start reading the routers' final configurations and kernel addresses
        (:func:`read_initial`) in a thread of its own: the run's sequence calls it when grading's
        negative checks start (``Observer.on_negatives``; issue 24 §3), so the reads run beside
        the pings' wait instead of after grading. They read what :meth:`finish` would read:
        grading, its pings and the recovery wait change no configuration, and the agent has
        ended and the faults are removed before grading. Nothing to read (no initial read), or
        started already: nothing. :meth:`final_configs` and :meth:`finish` use what it read; a
        read that failed is made again there, as before."""
        if self.initial is None or self.final is not None or self._final_reads is not None:
            return
        pool = ContextPool(max_workers=1)
        try:
            self._final_reads = pool.submit(read_initial, self.lab, list(self.initial))
        finally:
            pool.shutdown(wait=False)

    def _take_final_reads(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """What :meth:`read_final_beside` read (waits for it); None: not started, or it failed
        (the caller reads again, noting what fails)."""
        fut, self._final_reads = self._final_reads, None
        if fut is None or fut.exception() is not None:
            return None
        return fut.result()

    def final_configs(self) -> dict[str, Any] | None:
        """The routers' configurations after grading, read out of band once (None: no initial
        read, or unreadable: said in an ``observer_note``)."""
        if self.final is None and self.initial is not None:
            read = self._take_final_reads()
            if read is not None:
                self.final = read[0]
                return self.final
            from ani.observer.changes import read_configs

            try:
                self.final = read_configs(self.lab, list(self.initial))
            except Exception as exc:  # noqa: BLE001
                self._note("final_configs", f"final configs unreadable: {type(exc).__name__}: {exc}")
        return self.final

    def _unrequested(self) -> list[str]:
        if self.initial is None:
            return []
        from ani.observer.changes import read_kernel, reference_configs, unrequested_changes

        reference, why = reference_configs(self.variant, self.initial)
        if reference is None:
            self._note("unrequested_changes", why or "no reference")
            return []
        read = self._take_final_reads() if self.final is None else None
        if read is not None:  # read beside grading's negative checks
            self.final = read[0]
            return unrequested_changes(self.initial, read[0], reference, self.kernel_initial, read[1])
        with ContextPool(max_workers=1) as pool:  # the kernel read beside the configs' reads
            kernel = pool.submit(read_kernel, self.lab, list(self.initial))
            final = self.final_configs()
            try:
                kernel_final = kernel.result()
            except Exception as exc:  # noqa: BLE001
                self._note("unrequested_changes",
                           f"final kernel addresses unreadable: {type(exc).__name__}: {exc}")
                return []
        if final is None:
            return []
        return unrequested_changes(self.initial, final, reference, self.kernel_initial, kernel_final)

    def stop(self) -> None:
        """Stop the sampler (idempotent) and keep its report."""
        if self.sampler is not None and self.report is None:
            self.report = self.sampler.stop()
            for err in self.report.errors:
                self._note("unsafe", f"a sampling round failed: {err}")

    def fields(self) -> dict[str, Any]:
        """The RunRecord fields measured so far."""
        out = dict(self._fields)
        rep = self.report
        if rep is not None:
            out.update(unsafe=rep.unsafe, samples=rep.samples, sample_period_s=rep.period_s,
                       recovered=rep.recovered, recovery_s=rep.recovery_s)
        return out
