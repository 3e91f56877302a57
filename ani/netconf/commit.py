"""Confirmed-commit state (RFC 6241 §8.4, ``:confirmed-commit:1.1``) and the timer it uses.

:class:`PendingCommit` is what a :class:`ani.netconf.datastore.Device` keeps between a
confirmed commit and its confirming commit / cancel-commit / timeout. The rollback point is the
running configuration *before the first* confirmed commit; a follow-up confirmed commit only
restarts the timer (and may change ``persist`` / the owning session), it never moves it.

A pending commit outlives the server process through :meth:`PendingCommit.to_record` /
:meth:`PendingCommit.from_record` (kept by :mod:`ani.netconf.journal`): the deadline is stored
as ``time.monotonic()`` seconds together with the kernel's boot id (CLOCK_MONOTONIC is
system-wide and survives a process restart) and as Unix time (used after a reboot).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ani.device.model import DeviceConfig
from ani.host.threads import bind
from ani.netconf.errors import RpcError

#: RFC 6241 §8.4.5.1: confirm-timeout defaults to 600 seconds
DEFAULT_CONFIRM_TIMEOUT_S = 600
_UINT32_MAX = 4294967295
_DECIMAL = re.compile(r"^\+?[0-9]+$")


class Timer(Protocol):
    """What :data:`TimerFactory` returns (``threading.Timer`` fits)."""

    def start(self) -> None: ...
    def cancel(self) -> None: ...


#: ``factory(seconds, callback) -> Timer``; the callback runs once, on another thread, unless
#: the timer was cancelled first.
TimerFactory = Callable[[float, Callable[[], None]], Timer]


def thread_timer(seconds: float, callback: Callable[[], None]) -> Timer:
    """The default :data:`TimerFactory`: a daemon ``threading.Timer``."""
    t = threading.Timer(seconds, bind(callback))  # the callback in the starter's context
    t.daemon = True
    return t


def parse_confirm_timeout(value: str | int | None) -> int:
    """The ``confirm-timeout`` of a confirmed commit in seconds (RFC 6241 §8.4.5.1: uint32,
    units seconds, default 600). ``value`` is the element's text: a decimal string such as
    ``"30"`` (an int is accepted too; None means omitted -> 600).

    Raises RpcError ``invalid-value`` (error-info ``bad-element`` = ``confirm-timeout``) for 0,
    a negative or non-integer value, or one above 4294967295."""
    if value is None:
        return DEFAULT_CONFIRM_TIMEOUT_S
    text = str(value).strip()
    if isinstance(value, bool) or not _DECIMAL.match(text) or not 1 <= int(text) <= _UINT32_MAX:
        raise RpcError(
            "invalid-value",
            f"confirm-timeout {str(value)!r} is not a whole number of seconds in 1..{_UINT32_MAX}",
            type="protocol", info={"bad-element": "confirm-timeout"})
    return int(text)


@dataclass(eq=False)
class PendingCommit:
    """A confirmed commit waiting for its confirming commit.

    ``rollback``: running before the first confirmed commit; ``owner``: the session that issued
    the latest (follow-up) confirmed commit, None once that session ended (persist only);
    ``persist``: the persist token or None; ``timeout_s`` / ``deadline`` (``time.monotonic``):
    of the current timer; ``generation``: changes on every restart so a stale timer callback
    can tell it is stale."""

    rollback: DeviceConfig
    owner: int | None
    persist: str | None
    timeout_s: int
    deadline: float = 0.0
    generation: int = 0
    timer: Timer | None = field(default=None, repr=False)

    def restart(self, factory: TimerFactory, timeout_s: int, on_expiry: Callable[[int], None],
                started: float | None = None) -> None:
        """(Re)start the timer: ``on_expiry(generation)`` runs ``timeout_s`` seconds after
        ``started`` (``time.monotonic()``; default now), i.e. after what is left of that."""
        self.cancel_timer()
        self.generation += 1
        self.timeout_s = timeout_s
        now = time.monotonic()
        self.deadline = (now if started is None else started) + timeout_s
        gen = self.generation
        self.timer = factory(max(0.0, self.deadline - now), lambda: on_expiry(gen))
        self.timer.start()

    def cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def remaining_s(self) -> float:
        """Seconds left before the rollback (0 when the deadline has passed)."""
        return max(0.0, self.deadline - time.monotonic())

    def to_record(self) -> dict[str, Any]:
        """This pending commit as JSON-serialisable data: ``rollback`` (the DeviceConfig as
        JSON), ``persist``, ``owner`` (session id or None), ``timeout_s``, ``deadline_monotonic``
        (``time.monotonic()`` seconds), ``boot_id``, ``deadline`` (Unix seconds)."""
        return {
            "rollback": self.rollback.model_dump(mode="json"),
            "persist": self.persist,
            "owner": self.owner,
            "timeout_s": self.timeout_s,
            "deadline_monotonic": self.deadline,
            "boot_id": boot_id(),
            "deadline": time.time() + (self.deadline - time.monotonic()),
        }

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> PendingCommit:
        """The pending commit of a :meth:`to_record` dict, written by an earlier server
        process: ``owner`` is None (no session survives its server) and ``deadline`` is on this
        process's ``time.monotonic()`` clock (the timer is not started). Raises ValueError
        (pydantic's ValidationError included) if ``rec`` is not such a record."""
        try:
            rollback = DeviceConfig.model_validate(rec["rollback"])
            timeout_s = int(rec["timeout_s"])
            persist = rec.get("persist")
            if persist is not None and not isinstance(persist, str):
                raise ValueError(f"persist {persist!r} is not a string")
            if rec.get("boot_id") and rec.get("boot_id") == boot_id():
                deadline = float(rec["deadline_monotonic"])
            else:  # another boot: the monotonic clock restarted
                deadline = time.monotonic() + (float(rec["deadline"]) - time.time())
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a pending-commit record: {exc!r}") from exc
        return cls(rollback=rollback, owner=None, persist=persist, timeout_s=timeout_s,
                   deadline=deadline)


def boot_id() -> str | None:
    """The kernel's boot id (``/proc/sys/kernel/random/boot_id``), or None if unknown."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip() or None
    except OSError:
        return None
