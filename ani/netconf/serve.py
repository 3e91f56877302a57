"""``python -m ani.netconf.serve --lab ID``: the NETCONF server process of one lab.

Started by ``Lab.up()`` (never by hand, normally). It attaches to the lab without taking it
over (it never removes it), builds one :class:`ani.netconf.datastore.Device` per router on an
:class:`ani.netconf.frr_backend.FrrBackend`, listens on 127.0.0.1 with one port per router,
then writes the ports and its PID into ``<lab dir>/netconf.json`` (atomically, 0600). Logs go
to ``<lab dir>/netconf.log``. It exits on SIGTERM / SIGINT, and by itself when the lab's state
file disappears (the lab was removed by someone who did not know about it).

Exit status: 0 after a signal or the lab's removal, 2 bad arguments / no such lab, 1 failure to
start (the log says why).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

log = logging.getLogger("ani.netconf.serve")

#: how often the server checks that its lab still exists (seconds)
WATCH_S = 1.0


def _setup_logging(lab_dir: Path) -> None:
    from ani.lab.netconf import LOG_FILE

    handler = logging.FileHandler(lab_dir / LOG_FILE)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.getLogger("asyncssh").setLevel(logging.WARNING)


def build_devices(lab) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """One Device per router of ``lab`` (nothing is read from the routers yet)."""
    from ani.netconf.datastore import Device
    from ani.netconf.frr_backend import FrrBackend

    return {r: Device(r, FrrBackend(lab, r), hostname=r) for r in lab.routers}


async def serve(lab_id: str) -> int:
    from ani.device.yang import module_texts
    from ani.lab.lab import Lab
    from ani.lab.netconf import HOST, HOST_KEY_FILE, ensure_host_key, read_info, write_json_private
    from ani.lab.state import state_path
    from ani.netconf.server import NetconfServer

    lab = Lab.attach(lab_id, own=False)
    info = read_info(lab.dir)
    if not info or "password" not in info:
        log.error("lab %s: no credentials in %s/netconf.json", lab_id, lab.dir)
        return 1
    server = NetconfServer(
        build_devices(lab), info["username"], info["password"],
        ensure_host_key(lab.dir / HOST_KEY_FILE), module_texts(), host=HOST,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    ports = await server.start()
    write_json_private(lab.dir / "netconf.json", {**info, "ports": ports, "pid": os.getpid()})
    log.info("lab %s: NETCONF server ready (pid %d): %s", lab_id, os.getpid(),
             ", ".join(f"{r}={p}" for r, p in ports.items()))
    state = state_path(lab_id)
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), WATCH_S)
        except (TimeoutError, asyncio.TimeoutError):
            if not state.exists():
                log.info("lab %s is gone: stopping", lab_id)
                break
    log.info("lab %s: NETCONF server stopping", lab_id)
    await server.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ani.netconf.serve", description=__doc__.split("\n")[0])
    ap.add_argument("--lab", required=True, help="id of the running lab to serve")
    args = ap.parse_args(argv)
    from ani.errors import LabNotFound
    from ani.lab.state import LAB_ID_RE, lab_dir

    if not LAB_ID_RE.match(args.lab) or not lab_dir(args.lab).is_dir():
        print(f"no lab {args.lab!r}", file=sys.stderr)
        return 2
    _setup_logging(lab_dir(args.lab))
    try:
        rc = asyncio.run(serve(args.lab))
    except LabNotFound as exc:
        log.error("%s", exc)
        rc = 2
    except Exception:
        log.exception("lab %s: NETCONF server failed", args.lab)
        rc = 1
    logging.shutdown()
    # Device timers (confirmed-commit timeouts) and busy worker threads must not keep a server
    # whose lab is going away alive: leave without joining them.
    os._exit(rc)


if __name__ == "__main__":
    main()
