"""Serialising the calls made on one adapter from several threads.

Agent frameworks (LangGraph, pydantic-ai, an MCP server) run a turn's tool calls in parallel
threads on ONE adapter. Each call names the *keys* it needs to itself (the level decides:
A0 / A1 a router, because sessions and the ``changed`` measurement are per router; A2 each
router it names; A3-T, A3-R, A4 the whole adapter, :data:`WHOLE`, because their calls are
transactions over every router or work on one working tree). A call waits for its keys until
its deadline (its own bound, counted from when the call started), then gives up with
:class:`Busy`, which names what it waited for and who holds it; the adapter answers that as
``timeout`` (retriable). Nothing queues forever.

    >>> locks = CallLocks()
    >>> with locks.hold(["r1"], deadline=time.monotonic() + 10, call="update_config"):
    ...     pass                                           # r1 is ours until the block ends

Rules: :data:`WHOLE` conflicts with every key and every key with :data:`WHOLE`; other keys
conflict only with themselves. A thread that already holds a key may take it again (re-entrant).
Several keys are taken together (all or none), so two calls naming the same routers in another
order cannot deadlock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ani.errors import AniTimeout

__all__ = ["WHOLE", "Busy", "CallLocks", "Holder"]

#: the key of a call that needs the whole adapter
WHOLE = "*"


@dataclass
class Holder:
    """Who holds a key: the ``call`` (tool name), its thread, since when (``time.monotonic()``),
    and how many times that thread took it (re-entrant holds)."""

    call: str
    thread: int
    since: float
    depth: int = 1


class Busy(AniTimeout):
    """The keys were not free before the deadline (an :class:`~ani.errors.AniTimeout`:
    ``seconds`` is the caller's bound, or the seconds waited when it gave none).

    Attributes:
        keys: the keys asked for.
        holders: ``[(key, Holder)]`` of the keys held by other calls at the deadline.
        waited_s: seconds waited.
    """

    def __init__(self, keys: list[str], holders: list[tuple[str, Holder]], waited_s: float,
                 bound_s: float | None = None) -> None:
        self.keys = list(keys)
        self.holders = list(holders)
        self.waited_s = waited_s
        seconds = waited_s if bound_s is None else bound_s
        super().__init__(seconds, message=f"timeout after {seconds:g} s waiting for {self.describe()}")

    def describe(self, now: float | None = None) -> str:
        """``r1 (held by update_config for 9.8 s)``, one part per holder; ``the adapter`` for
        :data:`WHOLE`."""
        now = time.monotonic() if now is None else now
        parts = []
        for key, h in self.holders:
            what = "the adapter" if key == WHOLE else key
            parts.append(f"{what} (held by {h.call} for {now - h.since:.1f} s)")
        return ", ".join(parts) or ", ".join("the adapter" if k == WHOLE else k for k in self.keys)


class CallLocks:
    """Keyed locks with a deadline (see the module doc). Thread-safe."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._held: dict[str, Holder] = {}

    def _blockers(self, keys: list[str], me: int) -> list[tuple[str, Holder]]:
        others = [(k, h) for k, h in self._held.items() if h.thread != me]
        if not others:
            return []
        if WHOLE in keys:
            return others
        return [(k, h) for k, h in others if k == WHOLE or k in keys]

    def held(self) -> dict[str, Holder]:
        """A copy of the keys held now (for diagnostics and for a close that cannot wait)."""
        with self._cond:
            return {k: Holder(h.call, h.thread, h.since, h.depth) for k, h in self._held.items()}

    @contextmanager
    def hold(self, keys: Iterable[str], *, deadline: float, call: str,
             bound_s: float | None = None) -> Iterator[None]:
        """Hold every key of ``keys`` for the block; wait for them until ``deadline``
        (``time.monotonic()`` seconds; ``bound_s``: the bound it stands for, for the Busy). An
        empty ``keys`` holds nothing.

        Raises:
            Busy: a key was still held by another call at the deadline.
        """
        want = sorted(set(keys))
        if not want:
            yield
            return
        me = threading.get_ident()
        t0 = time.monotonic()
        with self._cond:
            while True:
                blockers = self._blockers(want, me)
                if not blockers:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Busy(want, blockers, time.monotonic() - t0, bound_s)
                self._cond.wait(left)
            now = time.monotonic()
            for k in want:
                h = self._held.get(k)
                if h is not None:  # ours already (re-entrant)
                    h.depth += 1
                else:
                    self._held[k] = Holder(call, me, now)
        try:
            yield
        finally:
            with self._cond:
                for k in want:
                    h = self._held.get(k)
                    if h is None:
                        continue
                    h.depth -= 1
                    if h.depth <= 0:
                        del self._held[k]
                self._cond.notify_all()

    @contextmanager
    def drain(self, *, deadline: float, call: str) -> Iterator[set[str]]:
        """For a close: hold :data:`WHOLE`, waiting until ``deadline`` for the calls in flight.
        Yields the empty set when held; if calls are still running at the deadline, holds
        nothing and yields the keys they hold (the close then leaves those parts alone)."""
        cm = self.hold([WHOLE], deadline=deadline, call=call)
        try:
            cm.__enter__()
        except Busy as exc:
            yield {k for k, _ in exc.holders}
            return
        try:
            yield set()
        finally:
            cm.__exit__(None, None, None)
