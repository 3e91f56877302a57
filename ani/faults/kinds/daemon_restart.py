"""``daemon_restart``: one FRR daemon of a router crashes and is restarted after a down time.

Inject: read the daemon's part of the running configuration (``vtysh -d DAEMON -c 'show
running-config'``), then SIGKILL the daemon (a crash: no clean shutdown; zebra drops the routes it
owned, its peers lose their sessions). The pid is checked to be that router's daemon
(:func:`ani.lab.frr.owns`) before the signal; nothing is killed by name. Verify / present: the
daemon is not running (its pid is gone and no new one runs).

Remove (after ``duration_s``, the down time, or at the end of the agent's run): start the daemon
again with the lab's own start code (:meth:`ani.lab.lab.Lab.start_daemon`, i.e.
:func:`ani.lab.frr.start`: same netns, pathspace, UTS / mount namespaces, and the lab's state
learns the new pid), then load a configuration into it (FRR-NOTES: a daemon started so reads no
``frr.conf``): ``params.config`` ``"running"`` (default: what it ran before the crash, as a
router that saved its configuration) or ``"startup"`` (the router's ``frr.conf``: what a real
crash does to unsaved changes). Removed: a new pid (not the old one) runs the daemon and
answers ``show running-config`` through vtysh.

Target ``{"router": "c1"}``; params ``{"daemon": "bgpd", "config": "running"}``. Only routing
daemons are drawn (``bgpd``, ``ospfd``): zebra's restart takes every other daemon's routes with
it, which is a different fault.
"""

from __future__ import annotations

import os
import random
import signal
import time
from typing import Any

from ani.errors import FaultError
from ani.faults.base import FaultKind, FaultSpec, register
from ani.faults.targets import poll, routers_of, topology_of
from ani.host import proc
from ani.lab import frr
from ani.lab.protocol import Lab, LocalFrr

#: the daemons this kind draws
DRAWN = ("bgpd", "ospfd")


def config_body(text: str) -> str:
    """``show running-config`` output without vtysh's two header lines (not config commands)."""
    return "".join(ln for ln in text.splitlines(keepends=True)
                   if not ln.startswith(("Building configuration", "Current configuration")))


@register
class DaemonRestart(FaultKind):
    name = "daemon_restart"
    needs = (LocalFrr,)  # its PID files, its start code

    def draw(self, rng: random.Random, scenario: Any, variant: Any) -> tuple[dict, dict] | None:
        topo = topology_of(scenario, variant)
        pairs = [(r, d) for r in routers_of(topo) for d in topo.routers[r].daemons if d in DRAWN]
        if not pairs:
            return None
        router, daemon = pairs[rng.randrange(len(pairs))]
        return {"router": router}, {"daemon": daemon, "config": "running"}

    def overlap_key(self, spec: FaultSpec) -> Any:
        return (self.name, spec.target.get("router"), spec.params.get("daemon"))

    def _names(self, spec: FaultSpec) -> tuple[str, str]:
        router, daemon = spec.target.get("router"), spec.params.get("daemon")
        if not router or not daemon:
            raise FaultError(f"daemon_restart: needs target.router and params.daemon, got {spec.target} {spec.params}")
        return str(router), str(daemon)

    def inject(self, lab: Lab, spec: FaultSpec) -> Any:
        router, daemon = self._names(spec)
        mode = spec.params.get("config", "running")
        if mode not in ("running", "startup"):
            raise FaultError(f"daemon_restart: params.config must be 'running' or 'startup', got {mode!r}")
        ps = lab.pathspace(router)
        pid = lab.daemon_pid(router, daemon)
        if pid is None:
            raise FaultError(f"daemon_restart {router}: {daemon} is not running before the fault")
        config = None
        if mode == "running":
            res = lab.exec(router, ["vtysh", "-d", daemon, "-c", "show running-config"], timeout=10.0)
            if not res.ok:
                raise FaultError(f"daemon_restart {router}: reading {daemon}'s running config failed: "
                                 f"{(res.stderr or res.stdout).strip()[-300:]}")
            config = config_body(res.stdout)
        if not frr.owns(pid, ps, daemon):  # guards the kill: that pid is this router's daemon
            raise FaultError(f"daemon_restart {router}: pid {pid} is not {daemon} of pathspace {ps}")
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5.0
        while proc.is_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        return {"router": router, "daemon": daemon, "old_pid": pid, "config": config, "mode": mode, "new_pid": None}

    def verify(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        return self.present(lab, spec, handle)

    def present(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        r, d, old = handle["router"], handle["daemon"], handle["old_pid"]
        now = lab.daemon_pid(r, d)
        if proc.is_alive(old) and frr.owns(old, lab.pathspace(r), d):
            return False, f"{r}: {d} pid {old} still runs"
        if now is not None:
            return False, f"{r}: {d} runs again (pid {now}) although the fault is in effect"
        return True, f"{r}: {d} down (pid {old} killed)"

    def remove(self, lab: Lab, spec: FaultSpec, handle: Any) -> None:
        r, d = handle["router"], handle["daemon"]
        if lab.daemon_pid(r, d) is not None:
            return  # already running (removed before, or someone restarted it): idempotent
        handle["new_pid"] = lab.start_daemon(r, d)
        if handle["mode"] == "running" and handle["config"]:
            res = lab.exec(r, ["vtysh", "-d", d, "-f", "/dev/stdin"], timeout=30.0, input=handle["config"])
        else:
            res = lab.exec(r, ["vtysh", "-d", d, "-b"], timeout=30.0)
        if not res.ok:
            raise FaultError(f"daemon_restart {r}: loading {d}'s configuration after the restart failed "
                             f"(exit {res.rc}): {(res.stderr or res.stdout).strip()[-500:]}")

    def removed(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        r, d, old = handle["router"], handle["daemon"], handle["old_pid"]

        def check() -> tuple[bool, str]:
            now = lab.daemon_pid(r, d)
            if now is None:
                return False, f"{r}: {d} not running after the restart"
            if now == old:
                return False, f"{r}: {d} still the old pid {old}"
            res = lab.exec(r, ["vtysh", "-d", d, "-c", "show running-config"], timeout=10.0)
            if not res.ok:
                return False, f"{r}: {d} pid {now} runs but vtysh does not reach it: {(res.stderr or res.stdout).strip()[-200:]}"
            return True, f"{r}: {d} restarted (pid {old} -> {now}, {handle['mode']} config loaded)"
        return poll(check, timeout_s=5.0, every_s=0.1)
