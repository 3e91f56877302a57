"""Settling on evidence (issue 24 §3): when a failing check may stop being retried before its
bound, and how long to wait after the agent's last change.

A failing positive check is retried until it passes or its bound (``observer_bound_s``, 20 s)
has passed: slow convergence is not failure. A check that fails because the agent broke
something (or never did the task) then costs the whole bound. :class:`NetworkWatch` lets it stop
earlier, on evidence that nothing is still converging:

- the routers' routing state (:func:`ani.lab.converge.routing_state`: every RIB entry's
  protocol, selection, installation and next hops, every BGP peer's and OSPF neighbor's state;
  read on the daemons' vty sockets every :data:`WATCH_PERIOD_S`) has not changed since
  ``quiet_since``;
- the check failed its last ``looks`` (:data:`SETTLE_LOOKS`) looks, every one of them begun
  after ``quiet_since`` (the state it reads did not change over them), and
- the latest of them began at least ``window_s`` after ``quiet_since``: the longest time
  routing may stay silent before a change still to come (:func:`ani.lab.converge.silent_timers_s`:
  an OSPF hello, a BGP connect retry of a session that is down), and at least
  :data:`MIN_QUIET_S`.

A check that passes still passes at its first passing look (nothing changes there), so this
never passes a check that would have failed; it can only fail, earlier, a check that the
routing's own timers could not have made pass. Without a routing state to read (a test's fake
lab, a daemon that cannot be reached) the bound alone decides.

:func:`settle_left` is the wait before grading, counted from the agent's last change (and the
faults' end) instead of from the moment the runner gets to it. :func:`wait_settled` ends that
wait on evidence once bgpd's route-map delay timer has passed: no routing change waiting on a
daemon's timer (:func:`ani.lab.converge.pending_timers`: the route-map update timer that may fire
late under load, a delayed re-announcement, a work queue) and the routing state unchanged for
:data:`SETTLE_QUIET_S`; never later than the fixed settle it replaces (docs/performance.md, "The
settle on evidence").
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from collections.abc import Callable, Sequence
from typing import Any

from ani.host.threads import ContextPool, thread
from ani.lab.protocol import Devices, Lab, LocalFrr, provides

__all__ = ["LOOK_FACTOR", "MIN_QUIET_S", "SETTLE_LOOKS", "SETTLE_PERIOD_S", "SETTLE_QUIET_S", "WATCH_PERIOD_S",
           "NetworkWatch", "network_watch", "settle_left", "settle_reader", "settled", "wait_settled"]

#: a failing check stops early only after this many consecutive failed looks in a quiet network
#: (a failed ping look lasts its 1 s wait for a reply: three cost about 3.6 s)
SETTLE_LOOKS = 3
#: the shortest quiet period (seconds) that counts as settled, whatever the timers say
MIN_QUIET_S = 2.0
#: seconds between two looks of :class:`NetworkWatch` at the routing state
WATCH_PERIOD_S = 0.25
#: the settle before grading: how long (seconds) the routing state must stay unchanged, with no
#: change waiting on a timer, before grading starts early. Measured (docs/performance.md, "The
#: settle on evidence"): after bgpd's route-map update timer fired (no timer pending any more),
#: the first RIB change came up to 0.32 s later and the next ones within 0.25 s of each other
#: (load 15-19); about one and a half times the longest gap
SETTLE_QUIET_S = 0.5
#: seconds between two looks of :func:`wait_settled`
SETTLE_PERIOD_S = 0.05
#: the quiet window is at least this many times the slowest look of the settle so far: a look
#: asks the same zebra and bgpd daemons that carry the change, so a slow answer means they wait
#: for the CPU and the change may too (measured: looks of 0.03-0.66 s, gaps up to 0.36 s, with four
#: busy loops beside the lab); under heavy load the settle then ends at its cap, the fixed settle
LOOK_FACTOR = 4.0


def settle_left(settle_s: float, now: float, *changes: float | None) -> float:
    """Seconds still to wait at monotonic ``now`` so that ``settle_s`` have passed since the
    latest of ``changes`` (monotonic times: the agent's last change, the faults' end; None:
    none). 0 when nothing changed or the time has already passed."""
    refs = [c for c in changes if c is not None]
    if settle_s <= 0 or not refs:
        return 0.0
    return max(0.0, max(refs) + settle_s - now)


def wait_settled(read_state: Callable[[], Any], read_pending: Callable[[], Sequence[Any]], *, floor_at: float,
                 cap_at: float, quiet_s: float = SETTLE_QUIET_S, period_s: float = SETTLE_PERIOD_S,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], Any] = time.sleep) -> str:
    """Wait (monotonic ``clock``) until ``floor_at``, then look every ``period_s`` until the
    routing is settled or ``cap_at``. Settled: a look began ``quiet_s`` or more after the end of
    the last look that saw a change waiting on a timer (``read_pending()`` not empty), an
    unreadable state (either read raised) or a ``read_state()`` other than this look's. A state
    seen stable while a timer was still pending is no evidence: the quiet counts only from the
    timer's end. The window is ``quiet_s`` or :data:`LOOK_FACTOR` times the slowest look so far,
    whichever is longer. Returns ``"evidence"`` (settled before the cap) or ``"cap"`` (at
    ``cap_at``, as a fixed settle would have: a look still running then is not waited for)."""
    now = clock()
    if floor_at > now:
        sleep(floor_at - now)
    missing = object()
    last: Any = missing
    since: float | None = None
    slowest = 0.0

    def look() -> tuple[bool, Any]:
        try:
            return bool(read_pending()), read_state()
        except Exception:  # noqa: BLE001 - unknown is not settled
            return True, missing

    pool = ContextPool(max_workers=1)  # not a with: its exit would wait for a look in flight
    try:
        while True:
            t0 = clock()
            if t0 >= cap_at:
                return "cap"
            try:
                busy, state = pool.submit(look).result(timeout=max(0.001, cap_at - t0))
            except FutureTimeout:
                return "cap"
            t1 = clock()
            slowest = max(slowest, t1 - t0)
            if busy or state is missing or since is None or state != last:
                last, since = (missing, None) if busy or state is missing else (state, t1)
            elif t0 - since >= max(quiet_s, LOOK_FACTOR * slowest):
                return "evidence"
            sleep(max(0.0, min(period_s, cap_at - clock())))
    finally:
        pool.shutdown(wait=False)


def settle_reader(lab: Lab) -> tuple[Callable[[], Any], Callable[[], list[str]]] | None:
    """``(read_state, read_pending)`` of ``lab`` for :func:`wait_settled`
    (:func:`ani.lab.converge.routing_state`, :func:`ani.lab.converge.pending_timers`); None for a
    lab without FRR routers to read here (not :class:`~ani.lab.protocol.LocalFrr`: a FakeLab)."""
    if not provides(lab, Devices, LocalFrr) or not lab.topology.routers:
        return None
    from ani.lab import converge

    return (lambda: converge.routing_state(lab)), (lambda: converge.pending_timers(lab))


def settled(fails: Sequence[float], quiet_since: float | None, window_s: float | None, looks: int) -> bool:
    """Whether a check whose failed looks began at monotonic ``fails`` (in order) may stop:
    its last ``looks`` looks all began at or after ``quiet_since`` (the routing state unchanged
    from then on; None: not quiet) and the last began ``window_s`` or more after it (None:
    unknown, never)."""
    if quiet_since is None or window_s is None or looks < 1 or len(fails) < looks:
        return False
    last = list(fails)[-looks:]
    return all(t >= quiet_since for t in last) and last[-1] - quiet_since >= window_s


class NetworkWatch:
    """Looks at a state every ``period_s`` on a thread of its own and says since when it has not
    changed (see the module doc).

    Args:
        read: the state now (any value with ``==``); None or an exception: unknown (not quiet).
        window_s: the quiet period that counts as settled (seconds; called once, at
            :meth:`start`; None or an exception: unknown, never settled).
        period_s: seconds between looks.
        clock: monotonic seconds.
    """

    def __init__(self, read: Callable[[], Any], window_s: Callable[[], float | None], *,
                 period_s: float = WATCH_PERIOD_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._read = read
        self._window = window_s
        self.period_s = period_s
        self.clock = clock
        self.window_s: float | None = None
        self._lock = threading.Lock()
        self._last: Any = None
        self._since: float | None = None
        self.looks = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def observe(self, state: Any, at: float) -> None:
        """One look's ``state``, read by ``at`` (monotonic: the end of the read, the latest the
        state can have changed)."""
        with self._lock:
            self.looks += 1
            if state is None:
                self._last, self._since = None, None
            elif self._since is None or state != self._last:
                self._last, self._since = state, at

    @property
    def quiet_since(self) -> float | None:
        """Monotonic time since which every look saw the same state (None: not quiet)."""
        with self._lock:
            return self._since

    def settled(self, fails: Sequence[float], looks: int = SETTLE_LOOKS) -> bool:
        """:func:`settled` with this watch's quiet time and window."""
        return settled(fails, self.quiet_since, self.window_s, looks)

    def look(self) -> None:
        """Read the state once and :meth:`observe` it."""
        try:
            state = self._read()
        except Exception:  # noqa: BLE001 - an unreadable state is not a quiet one
            state = None
        self.observe(state, self.clock())

    def start(self) -> NetworkWatch:
        """Find the window, look once, then go on looking on a daemon thread until :meth:`stop`."""
        try:
            w = self._window()
            self.window_s = None if w is None else max(MIN_QUIET_S, float(w))
        except Exception:  # noqa: BLE001 - no window: never settled, the bound decides
            self.window_s = None
        self.look()
        self._thread = thread(self._loop, name="ani-settle-watch")
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            self.look()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


def network_watch(lab: Lab) -> NetworkWatch | None:
    """A :class:`NetworkWatch` of ``lab``'s routing state (:func:`ani.lab.converge.routing_state`,
    window :func:`ani.lab.converge.silent_timers_s`), not started; None for a lab without FRR
    routers to read here (not :class:`~ani.lab.protocol.LocalFrr`: a FakeLab)."""
    if not provides(lab, Devices, LocalFrr) or not lab.topology.routers:
        return None
    from ani.lab import converge

    return NetworkWatch(lambda: converge.routing_state(lab), lambda: converge.silent_timers_s(lab))
