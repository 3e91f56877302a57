"""``python -m ani.netconf.serve --lab ID``: the NETCONF server process of one lab.

Started by ``Lab.up()`` (never by hand, normally). Start-up is in two phases so that it does
not slow the lab down:

1. *listen* (light imports only: asyncssh, lxml): read the router names from the lab's state
   file and the credentials from ``netconf.json``, make the host key, bind 127.0.0.1 port 0 per
   router, write the ports and the PID into ``<lab dir>/netconf.json`` (atomically, 0600).
   ``Lab.up()`` waits for this.
2. *devices* (in a thread): attach to the lab without taking it over (it never removes it),
   build one :class:`ani.netconf.datastore.Device` per router on an
   :class:`ani.netconf.frr_backend.FrrBackend`, load the YANG texts for get-schema. A session
   opened before this is done gets its hello when it is; ``"devices": "ok"`` is then added to
   ``netconf.json``.

Both phases run at a lower CPU priority (nice 10) so that they yield to FRR while the lab is
being built (the lab's up time hardly changes); the event loop and the RPC threads run at
normal priority once listening. Logs go to ``<lab dir>/netconf.log``. The process exits on
SIGTERM / SIGINT, and by itself when the lab's state file disappears (the lab was removed by
someone who did not know about it).

Exit status: 0 after a signal or the lab's removal, 2 bad arguments / no such lab, 1 failure to
start (the log says why).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger("ani.netconf.serve")

#: how often the server checks that its lab still exists (seconds)
WATCH_S = 1.0
#: CPU niceness of the start-up (restored to 0 once the Devices exist)
STARTUP_NICE = 10


def _setup_logging(lab_dir: Path) -> None:
    from ani.lab.netconf import LOG_FILE

    handler = logging.FileHandler(lab_dir / LOG_FILE)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.getLogger("asyncssh").setLevel(logging.WARNING)


def _set_nice(value: int) -> None:
    """Set the calling thread's niceness (Linux: per thread). Lowering it needs root; if that is
    refused the thread keeps its niceness."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), value)
    except OSError:
        pass


def build_devices(lab_id: str) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    """Phase 2: ({router: Device}, {module: (revision, YANG text)}) for lab ``lab_id``
    (nothing is read from the routers yet). Raises LabNotFound."""
    from ani.device.yang import module_texts
    from ani.lab.lab import Lab
    from ani.netconf.datastore import Device
    from ani.netconf.frr_backend import FrrBackend

    lab = Lab.attach(lab_id, own=False)
    devices = {r: Device(r, FrrBackend(lab, r), hostname=r) for r in lab.routers}
    schemas = module_texts()
    next(iter(devices.values())).codec  # noqa: B018 - load the YANG model now, not at the 1st RPC
    return devices, schemas


async def serve(lab_id: str, lab_dir: Path) -> int:
    from ani.lab.netconf import HOST, HOST_KEY_FILE, ensure_host_key, read_info, write_json_private
    from ani.netconf.server import NetconfServer

    state_file = lab_dir / "state.json"
    try:
        routers = list(json.loads(state_file.read_text())["topology"]["routers"])
    except (OSError, ValueError, KeyError) as exc:
        log.error("lab %s: cannot read the routers from %s: %s", lab_id, state_file, exc)
        return 2
    info = read_info(lab_dir)
    if not info or "password" not in info:
        log.error("lab %s: no credentials in %s/netconf.json", lab_id, lab_dir)
        return 1
    server = NetconfServer(routers, info["username"], info["password"],
                           ensure_host_key(lab_dir / HOST_KEY_FILE), host=HOST)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    ports = await server.start()
    write_json_private(lab_dir / "netconf.json", {**info, "ports": ports, "pid": os.getpid()})
    log.info("lab %s: NETCONF server listening (pid %d): %s", lab_id, os.getpid(),
             ", ".join(f"{r}={p}" for r, p in ports.items()))

    failed: list[BaseException] = []

    def phase2() -> None:
        _set_nice(STARTUP_NICE)
        try:
            devices, schemas = build_devices(lab_id)
        except BaseException as exc:  # noqa: BLE001 - reported by the loop below
            log.exception("lab %s: building the datastores failed", lab_id)
            failed.append(exc)
            loop.call_soon_threadsafe(stop.set)
            return
        loop.call_soon_threadsafe(server.set_devices, devices, schemas)
        log.info("lab %s: datastores ready", lab_id)

    _set_nice(0)  # the event loop and the RPC threads (made later, by it) run at normal priority
    threading.Thread(target=phase2, name="netconf-devices", daemon=True).start()
    await _wait_devices(server, stop, lab_dir, info, ports)
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), WATCH_S)
        except (TimeoutError, asyncio.TimeoutError):
            if not state_file.exists():
                log.info("lab %s is gone: stopping", lab_id)
                break
    log.info("lab %s: NETCONF server stopping", lab_id)
    await server.close()
    return 1 if failed else 0


async def _wait_devices(server: Any, stop: asyncio.Event, lab_dir: Path, info: dict[str, Any],
                        ports: dict[str, int]) -> None:
    from ani.lab.netconf import write_json_private

    ready = asyncio.ensure_future(server.ready.wait())
    stopped = asyncio.ensure_future(stop.wait())
    await asyncio.wait({ready, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if server.ready.is_set():
        write_json_private(lab_dir / "netconf.json",
                           {**info, "ports": ports, "pid": os.getpid(), "devices": "ok"})
    for f in (ready, stopped):
        f.cancel()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ani.netconf.serve",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--lab", required=True, help="id of the running lab to serve")
    ap.add_argument("--dir", type=Path, default=None,
                    help="the lab's directory (default: from the lab id; the lab passes it)")
    args = ap.parse_args(argv)
    _set_nice(STARTUP_NICE)  # start-up yields to FRR (see serve())
    lab_dir = args.dir
    if lab_dir is None:
        from ani.lab.state import LAB_ID_RE, lab_dir as dir_of

        lab_dir = dir_of(args.lab) if LAB_ID_RE.match(args.lab) else None
    if lab_dir is None or not lab_dir.is_dir():
        print(f"no lab {args.lab!r}", file=sys.stderr)
        return 2
    _setup_logging(lab_dir)
    try:
        rc = asyncio.run(serve(args.lab, lab_dir))
    except Exception:
        log.exception("lab %s: NETCONF server failed", args.lab)
        rc = 1
    logging.shutdown()
    # Device timers (confirmed-commit timeouts) and busy worker threads must not keep a server
    # whose lab is going away alive: leave without joining them.
    os._exit(rc)


if __name__ == "__main__":
    main()
