"""Running a NETCONF server process until it is told to stop: the life of the process,
independent of what the routers are (the lab's wiring is :mod:`ani.lab.netconf_server`).

    spec = ServeSpec(routers=["r1", "r2"], username="ani", password=pw, host_key=key,
                     build=make_devices, on_listening=write_ports, on_ready=write_ready,
                     gone=lab_removed, ports={"r1": 40001})
    rc = run(spec)          # blocks; 0 after SIGTERM / SIGINT or gone(), 1 if build() failed

Start-up is in two phases so that it does not slow down whatever starts it:

1. *listen*: bind 127.0.0.1, one port per router (``spec.ports`` wanted, else free ones), then
   ``on_listening({router: port})``.
2. *devices* (in a thread): ``build()`` returns ``({router: Device}, {module: (revision, YANG
   text)})``; each Device's ``recover()`` then honours what an earlier server process left in
   its journal (a pending confirmed commit, RFC 6241 §8.4), the routers in parallel; then the
   server takes the Devices and ``on_ready()`` is called. A session opened before this is
   done gets its hello when it is.

Both phases run at a lower CPU priority (nice :data:`STARTUP_NICE`) so that they yield to
whatever is being built meanwhile; the event loop and the RPC threads run at normal priority.

A frozen router (the fault injector's seam, :mod:`ani.faults.kinds.frozen_router`): on SIGUSR1
the server asks ``spec.frozen_wanted()`` which routers to freeze, freezes / thaws its part of each
(:meth:`ani.netconf.server.NetconfServer.freeze`) and tells ``spec.on_frozen({router: since})``.
Requests made before the Devices exist are honoured once they do.

Stopping: on SIGTERM / SIGINT the server stops listening and drops its sessions, then calls
each Device's ``shutdown()``: a pending confirmed commit without ``persist`` is rolled back
(its session ends with the server, RFC 6241 §8.4.1), a persistent one stays recorded for the
next server, locks are withdrawn. When ``gone()`` turns true (polled every :data:`WATCH_S`
seconds: the routers no longer exist) it stops without touching them. After SIGKILL nothing
runs: the next server's ``recover()`` does what ``shutdown()`` would have done.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ani.host.threads import ContextPool, bind, thread

log = logging.getLogger("ani.netconf.serve")

#: how often ``gone()`` is polled (seconds)
WATCH_S = 1.0
#: CPU niceness of the start-up (restored to 0 once the Devices exist)
STARTUP_NICE = 10


@dataclass
class ServeSpec:
    """What :func:`serve` runs (see the module docstring).

    ``build``: phase 2, run in a thread: ``() -> (devices, schemas)``; raising stops the
    server (exit 1). ``on_listening(ports)`` and ``on_ready()`` run on the event loop.
    ``gone``: ``() -> bool``, polled; True stops the server without shutting the Devices down.
    ``name``: for the log."""

    routers: list[str]
    username: str
    password: str = field(repr=False)
    host_key: Any
    build: Callable[[], tuple[dict[str, Any], dict[str, tuple[str, str]]]]
    host: str = "127.0.0.1"
    ports: dict[str, int] | None = None
    on_listening: Callable[[dict[str, int]], None] = lambda ports: None
    on_ready: Callable[[], None] = lambda: None
    gone: Callable[[], bool] = lambda: False
    name: str = "netconf"
    # a frozen router's management plane (issue 14, faults-kinds): on SIGUSR1 the server reads
    # ``frozen_wanted()`` (the routers to freeze now), freezes / thaws routers to match
    # (NetconfServer.freeze / thaw) and reports ``on_frozen({router: since})``
    frozen_wanted: Callable[[], set[str]] = lambda: set()
    on_frozen: Callable[[dict[str, float]], None] = lambda frozen: None


def set_nice(value: int) -> None:
    """Set the calling thread's niceness (Linux: per thread). Lowering it needs root; if that is
    refused the thread keeps its niceness."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), value)
    except OSError:
        pass


def _each(devices: dict[str, Any], method: str) -> None:
    """Call ``method`` (``recover`` | ``shutdown``) on each Device that has it, the routers in
    parallel (a rollback takes about a second each); log what each says it did."""
    todo = {n: d for n, d in devices.items() if hasattr(d, method)}
    if not todo:
        return
    with ContextPool(max_workers=min(8, len(todo)), thread_name_prefix=f"nc-{method}") as ex:
        for name, said in zip(todo, ex.map(lambda d: getattr(d, method)(), todo.values()), strict=True):
            if said:
                log.warning("%s: %s", name, said)


async def serve(spec: ServeSpec) -> int:
    """Run the server of ``spec`` until SIGTERM / SIGINT or ``gone()``. Returns the exit status:
    0, or 1 if ``build()`` failed."""
    from ani.netconf.server import NetconfServer

    server = NetconfServer(spec.routers, spec.username, spec.password, spec.host_key, host=spec.host)
    stop = asyncio.Event()
    signalled = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        signalled.set()
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)

    # frozen routers (issue 14, faults-kinds): SIGUSR1 = "read frozen_wanted() again"
    refreeze = asyncio.Event()
    loop.add_signal_handler(signal.SIGUSR1, refreeze.set)
    freeze_task = asyncio.ensure_future(_freezer(spec, server, refreeze))
    ports = await server.start(spec.ports)
    spec.on_listening(ports)
    log.info("%s: NETCONF server listening (pid %d): %s", spec.name, os.getpid(),
             ", ".join(f"{r}={p}" for r, p in ports.items()))

    failed: list[BaseException] = []
    built: dict[str, Any] = {}
    set_nice(0)  # the event loop and the RPC threads (made later, by it) run at normal priority
    thread(_build_devices, spec, server, loop, stop, failed, built, name="netconf-devices").start()
    await _until_stopped(spec, server, stop)
    log.info("%s: NETCONF server stopping", spec.name)
    freeze_task.cancel()
    await server.close()  # thaws frozen routers first
    if signalled.is_set() and built:
        # after the sessions are gone (an RPC still running finishes first: the Device
        # serialises), before the process exits
        await loop.run_in_executor(None, bind(_each), built, "shutdown")
    return 1 if failed else 0


async def _freezer(spec: ServeSpec, server: Any, refreeze: asyncio.Event) -> None:
    """On each ``refreeze`` (SIGUSR1): freeze the routers ``spec.frozen_wanted()`` names and
    thaw the others, then report them (``spec.on_frozen``); runs until cancelled."""
    await server.ready.wait()  # the Devices exist: a frozen one is held too
    while True:
        await refreeze.wait()
        refreeze.clear()
        try:
            want = set(spec.frozen_wanted()) & set(server.routers)
        except Exception:  # noqa: BLE001 - a bad request file must not stop the server
            log.exception("%s: reading the frozen routers failed", spec.name)
            continue
        for name in sorted(set(server.frozen()) - want):
            server.thaw(name)
        for name in sorted(want - set(server.frozen())):
            if not await server.freeze(name):
                log.error("%s: %s: could not freeze (its datastore stayed busy)", spec.name, name)
        spec.on_frozen(server.frozen())


def _build_devices(spec: ServeSpec, server: Any, loop: asyncio.AbstractEventLoop, stop: asyncio.Event,
                   failed: list[BaseException], built: dict[str, Any]) -> None:
    """The second phase, in a thread at nice :data:`STARTUP_NICE`: build the datastores, recover
    their journals and hand them to the server (``built`` holds them); a failure is appended
    to ``failed`` and stops the server."""
    set_nice(STARTUP_NICE)
    try:
        devices, schemas = spec.build()
        _each(devices, "recover")
    except BaseException as exc:  # noqa: BLE001 - reported by the loop below
        log.exception("%s: building the datastores failed", spec.name)
        failed.append(exc)
        loop.call_soon_threadsafe(stop.set)
        return
    built.update(devices)
    loop.call_soon_threadsafe(server.set_devices, devices, schemas)
    log.info("%s: datastores ready", spec.name)


async def _until_stopped(spec: ServeSpec, server: Any, stop: asyncio.Event) -> None:
    """Say ready (``spec.on_ready``) once the datastores are, unless stopped first; then wait
    for ``stop``, looking every :data:`WATCH_S` whether the routers are gone."""
    ready = asyncio.ensure_future(server.ready.wait())
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait({ready, stopped}, return_when=asyncio.FIRST_COMPLETED)
    for f in (ready, stopped):
        f.cancel()
    if server.ready.is_set() and not stop.is_set():
        spec.on_ready()
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), WATCH_S)
        except (TimeoutError, asyncio.TimeoutError):
            if spec.gone():
                log.info("%s: the routers are gone: stopping", spec.name)
                break


def run(spec: ServeSpec) -> int:
    """:func:`serve` on a new event loop (the calling thread starts at nice
    :data:`STARTUP_NICE`). Returns the exit status; an unexpected failure is logged, status 1."""
    set_nice(STARTUP_NICE)
    try:
        return asyncio.run(serve(spec))
    except Exception:
        log.exception("%s: NETCONF server failed", spec.name)
        return 1


__all__ = ["ServeSpec", "run", "serve", "set_nice", "STARTUP_NICE", "WATCH_S"]
