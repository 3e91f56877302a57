"""``python -m ani.lab.netconf_server --lab ID --dir DIR``: the NETCONF server process of one lab.

Started by ``Lab.up()`` (and ``Lab.restart_netconf()``), never by hand, normally. This module is
the lab's wiring of the lab-agnostic server (:mod:`ani.netconf.serve`, whose docstring
describes the two start-up phases and stopping):

* the router names come from the lab's state file, the credentials from ``netconf.json``
  (:mod:`ani.lab.netconf`), the host key from ``netconf_host_key`` (made if missing);
* the ports wanted are those of the previous server of the lab, if ``netconf.json`` names any
  (a restarted server is found where it was); once listening the server rewrites
  ``netconf.json`` (atomically, 0600) with ``"ports"`` and ``"pid"``, and adds
  ``"devices": "ok"`` once the datastores are ready (and what an earlier server left pending
  has been recovered);
* phase 2 attaches to the lab without taking it over (it never removes it) and builds one
  :class:`ani.netconf.datastore.Device` per router on an :class:`ani.netconf.frr_backend.FrrBackend`,
  with its journal in ``<lab dir>/netconf/`` (:mod:`ani.netconf.journal`; owner = this PID and
  its start time, so that readers can tell a dead server's entries) and the size and time
  bounds of :mod:`ani.netconf.limits` (``ANI_NETCONF_*`` of the environment it was started in);
* it stops by itself when the lab's state file disappears (the lab was removed by someone who
  did not know about it), without touching the routers.

Logs go to ``<lab dir>/netconf.log``. Exit status: 0 after a signal or the lab's removal, 2 bad
arguments / no such lab, 1 failure to start (the log says why).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

log = logging.getLogger("ani.lab.netconf_server")


def owner() -> dict[str, Any]:
    """What identifies this process in the journal files: ``{"pid", "start"}`` (start time in
    clock ticks since boot, :func:`ani.host.proc.start_time`)."""
    from ani.host.proc import start_time

    return {"pid": os.getpid(), "start": start_time(os.getpid())}


def build_devices(lab_id: str, lab_dir: Path) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    """Phase 2: ({router: Device}, {module: (revision, YANG text)}) for lab ``lab_id``, each
    Device journaled in ``<lab_dir>/netconf/`` (nothing is read from the routers yet).
    Raises LabNotFound."""
    from ani.device.yang import module_texts
    from ani.lab.lab import Lab
    from ani.lab.netconf import JOURNAL_DIR
    from ani.netconf.datastore import Device
    from ani.netconf.frr_backend import FrrBackend
    from ani.netconf.journal import Journal
    from ani.netconf.limits import Limits

    lab = Lab.attach(lab_id, own=False)
    journal = Journal(lab_dir / JOURNAL_DIR, owner())
    limits = Limits.from_env()  # the bounds of one edit-config / commit (ANI_NETCONF_*)
    devices = {r: Device(r, FrrBackend(lab, r), hostname=r, journal=journal.router(r), limits=limits)
               for r in lab.routers}
    schemas = module_texts()
    next(iter(devices.values())).codec  # noqa: B018 - load the YANG model now, not at the 1st RPC
    return devices, schemas


def spec_for(lab_id: str, lab_dir: Path) -> Any:
    """The :class:`ani.netconf.serve.ServeSpec` of lab ``lab_id``. Raises LabNotFound (no
    routers in the state file), LabError (no credentials in ``netconf.json``)."""
    from ani.lab.netconf import HOST, HOST_KEY_FILE, KIND, ensure_host_key, info_path, write_json_private
    from ani.lab.servers import routers_and_info
    from ani.netconf.serve import ServeSpec

    state_file = lab_dir / "state.json"
    routers, info = routers_and_info(KIND, lab_id, lab_dir, "password")
    previous = {str(k): int(v) for k, v in (info.get("ports") or {}).items() if str(k) in routers}
    base = {k: v for k, v in info.items() if k not in ("ports", "pid", "devices")}
    listening: dict[str, Any] = {}

    def on_listening(ports: dict[str, int]) -> None:
        listening.update(ports=ports, pid=os.getpid())
        write_json_private(info_path(lab_dir), {**base, **listening})

    def on_ready() -> None:
        write_json_private(info_path(lab_dir), {**base, **listening, "devices": "ok"})

    # a frozen router's management plane (issue 14, faults-kinds): the harness writes the
    # request, the server publishes what it froze (ani.lab.netconf.request_frozen / frozen_routers)
    from ani.lab.netconf import JOURNAL_DIR, read_frozen_request, write_frozen

    journal_dir = lab_dir / JOURNAL_DIR
    me = owner()

    def frozen_wanted() -> set[str]:
        return read_frozen_request(journal_dir)

    def on_frozen(frozen: dict[str, float]) -> None:
        write_frozen(journal_dir, me, frozen)

    return ServeSpec(
        frozen_wanted=frozen_wanted, on_frozen=on_frozen,
        routers=routers, username=info["username"], password=info["password"],
        host_key=ensure_host_key(lab_dir / HOST_KEY_FILE), host=HOST, ports=previous or None,
        build=lambda: build_devices(lab_id, lab_dir), on_listening=on_listening,
        on_ready=on_ready, gone=lambda: not state_file.exists(), name=f"lab {lab_id}",
    )


def main(argv: list[str] | None = None) -> int:
    from ani.lab.netconf import KIND
    from ani.lab.servers import process_start
    from ani.netconf.serve import STARTUP_NICE, run, set_nice

    set_nice(STARTUP_NICE)  # start-up yields to FRR (see ani.netconf.serve)
    found = process_start(KIND, __doc__.split("\n")[0], argv)
    if found is None:
        return 2
    lab_id, lab_dir = found
    from ani.errors import LabError, LabNotFound

    try:
        spec = spec_for(lab_id, lab_dir)
    except LabError as exc:
        log.error("%s", exc)
        rc = 2 if isinstance(exc, LabNotFound) else 1
    else:
        rc = run(spec)
    logging.shutdown()
    # Device timers (confirmed-commit timeouts) and busy worker threads must not keep a server
    # whose lab is going away alive: leave without joining them.
    os._exit(rc)


if __name__ == "__main__":
    raise SystemExit(main())  # the early exits (2: no such lab) return; the others os._exit
