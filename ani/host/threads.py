"""Threads that carry the context of the code that starts them (:mod:`contextvars`).

A run's work continues in threads it starts (the observer's concurrent checks, the sampler, the
fault session's watcher, an adapter's helpers, a lab's set-up pool...). A plain
``threading.Thread`` or ``ThreadPoolExecutor`` task starts in an empty context, so what the run
set in its context (its fault scope, :func:`ani.host.programs.fault_scope`) would be lost
there. Every thread of the SDK is started through this module instead::

    thread(target, *args, name="ani-x")      -> Thread   (not started; the context is the
                                                          caller's of start(), copied)
    ContextPool(max_workers=4)               -> a ThreadPoolExecutor whose tasks run in a copy
                                                of the context of the code that submits them
                                                (also through map() and run_in_executor())
    bind(fn)                                 -> fn to run in a copy of the current context,
                                                wherever it is called (a Timer's callback)
    in_netns("/run/netns/ani-x-r1", fn)      -> fn() run by a thread of its own that entered
                                                that network namespace (it ends there)

``asyncio.to_thread`` and ``anyio.to_thread.run_sync`` copy the context themselves;
``loop.run_in_executor(None, ...)`` (the loop's default pool) does not: give it a
:class:`ContextPool` or a :func:`bind`-ed callable. A unit test checks that ani/ starts no
thread another way.

Standard library only (the NETCONF server process imports it).
"""

from __future__ import annotations

import contextvars
import ctypes
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["ContextPool", "ContextThread", "bind", "in_netns", "thread"]

#: ``setns(2)`` nstype of a network namespace (linux/sched.h)
CLONE_NEWNET = 0x40000000


def bind(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn`` bound to a copy of the current context: each call runs in that copy (one call at
    a time: a context cannot be entered by two threads at once)."""
    return functools.partial(contextvars.copy_context().run, fn)


class ContextThread(threading.Thread):
    """A ``threading.Thread`` that runs in a copy of the context of the code calling
    :meth:`start` (same arguments as ``threading.Thread``)."""

    _ani_context: contextvars.Context | None = None

    def start(self) -> None:
        self._ani_context = contextvars.copy_context()
        super().start()

    def run(self) -> None:
        ctx = self._ani_context
        if ctx is None:  # run() called directly, without start(): the caller's own context
            super().run()
        else:
            ctx.run(super().run)


def thread(target: Callable[..., Any], *args: Any, name: str | None = None, daemon: bool = True) -> ContextThread:
    """A :class:`ContextThread` running ``target(*args)`` (not started; daemon by default)."""
    return ContextThread(target=target, args=args, name=name, daemon=daemon)


class ContextPool(ThreadPoolExecutor):
    """A ``ThreadPoolExecutor`` whose every task runs in a copy of the context of the code that
    submitted it (a pool's threads outlive a task: the context is the task's, not the
    thread's)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        ctx = contextvars.copy_context()
        return super().submit(ctx.run, fn, *args, **kwargs)


def in_netns(netns_path: str, fn: Callable[[], T]) -> T:
    """``fn()`` run in the network namespace at ``netns_path`` (``/run/netns/<name>``) by a
    thread started for it, which ends there: ``setns(2)`` of ``CLONE_NEWNET`` moves only the
    calling thread, so no other thread of the process changes namespace. What ``fn`` opens there
    (a socket, a netlink socket of a library) stays in that namespace for life. Blocks until
    ``fn`` returns; returns its value, or raises what it raised. Raises OSError if the namespace
    cannot be entered (it is gone: ``ENOENT``; no ``CAP_SYS_ADMIN``: ``EPERM``)."""
    box: dict[str, Any] = {}

    def enter() -> None:
        try:
            fd = os.open(netns_path, os.O_RDONLY | os.O_CLOEXEC)
            try:
                if _libc().setns(fd, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns({netns_path}): {os.strerror(err)}")
            finally:
                os.close(fd)
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    t = thread(enter, name="ani-netns")
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)
