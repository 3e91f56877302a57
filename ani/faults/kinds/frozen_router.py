"""Fault kind ``frozen_router``: a router's FRR daemons and its management endpoint stopped for a
duration, then resumed (NMAA draft: frozen node).

Target ``{"router": "e2"}`` (drawn among the routers the task changes, else any router);
params ``{"management": true}``.

Effect:

* every FRR daemon the lab started on the router gets ``SIGSTOP`` (zebra, staticd, ospfd,
  bgpd, ...): routing on the router stops (no hellos, no updates: its neighbours time it out
  after their dead / hold timers), and ``vtysh`` on it hangs (the CLI levels' calls time out);
* its management endpoint: the lab's NETCONF server is ONE process serving every router, so
  stopping that process would freeze every router's NETCONF at once. Instead the server freezes
  this router's part alone (:meth:`ani.lab.lab.Lab.freeze_netconf`,
  :meth:`ani.netconf.server.NetconfServer.freeze`): its sessions get no hello and no reply (the
  requests wait, the client times out), and its datastores, including the confirm timer of a
  pending confirmed commit, are held. What stays shared, and so is *not* frozen: the SSH
  handshake (done by the one process for every port) completes, then nothing comes. A
  request that was waiting when its client gave up is dropped at resume (its session is gone;
  RFC 6241 §8.4.1 then rolls back that session's unconfirmed commit). Labs without a NETCONF
  server freeze the daemons only.

Verification: each daemon's state in ``/proc/<pid>/stat`` is ``T`` (stopped), same process
(start time) as injected; the server publishes the router as frozen. Removal: ``SIGCONT`` to the
daemons first, then the NETCONF part resumes (its waiting requests need FRR running); verified
by each daemon's state no longer ``T``, the server no longer listing the router, and a ``vtysh``
call answering. Teardown never waits on a stopped daemon: ``Lab.down`` sends ``SIGCONT`` after
``SIGTERM`` (:func:`ani.host.proc.kill_and_wait`) and the server thaws every router before it
shuts down.

Raises :class:`ani.errors.FaultError` when no daemon of the router runs, a signal cannot be sent,
or the server does not acknowledge the freeze (everything done so far is undone first).
"""

from __future__ import annotations

import os
import random
import signal
import time
from typing import Any

from ani.errors import AniError, FaultError
from ani.faults.base import FaultKind, FaultSpec, register
from ani.faults.task_targets import pick_router
from ani.host.proc import start_time
from ani.lab.protocol import Lab, LocalFrr, NetconfServer, provides

__all__ = ["FrozenRouter", "proc_state"]

#: bound on the kernel carrying out SIGSTOP / SIGCONT (seconds; it acts when the process next
#: runs, microseconds on an idle host)
STOP_WAIT_S = 2.0


def _wait(done: Any, bound_s: float) -> bool:
    deadline = time.monotonic() + bound_s
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    return True


def proc_state(pid: int) -> str | None:
    """The state letter of ``pid`` (field 3 of ``/proc/<pid>/stat``: ``R``, ``S``, ``T`` =
    stopped, ...), or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    rest = stat[stat.rfind(")") + 2:].split()
    return rest[0] if rest else None


@register
class FrozenRouter(FaultKind):
    """See the module doc. Handle: ``{"router", "daemons": {name: [pid, start]}, "management"}``."""

    name = "frozen_router"
    needs = (LocalFrr,)  # the daemons' pids (and, with a NetconfServer, its part of the server)
    blocks_router = True  # nothing else can act on a router whose processes are stopped

    def lab_needs(self, spec: FaultSpec) -> tuple[type, ...]:
        """``LocalFrr``, and ``NetconfServer`` with ``management`` (default true): the lab then
        starts its NETCONF server, whose part for the router the fault freezes."""
        return self.needs + ((NetconfServer,) if bool(spec.params.get("management", True)) else ())

    def draw(self, rng: random.Random, scenario: Any, variant: Any) -> tuple[dict, dict] | None:
        router = pick_router(rng, scenario, variant)
        return None if router is None else ({"router": router}, {"management": True})

    # -- inject / remove ---------------------------------------------------------------------

    def _where(self, spec: FaultSpec) -> str:
        return f"frozen_router {spec.target.get('router')}"

    def inject(self, lab: Lab, spec: FaultSpec) -> dict[str, Any]:
        router = spec.target.get("router")
        if not isinstance(router, str):
            raise FaultError(f"{self._where(spec)}: target needs 'router' (a router name), got {spec.target!r}")
        try:
            pids = lab.daemon_pids(router)
        except AniError as exc:
            raise FaultError(f"{self._where(spec)}: {exc}") from exc
        if not pids:
            raise FaultError(f"{self._where(spec)}: no FRR daemon of {router} runs")
        management = bool(spec.params.get("management", True)) and provides(lab, NetconfServer) and bool(lab.netconf)
        handle: dict[str, Any] = {"router": router, "management": management,
                                  "daemons": {d: [p, start_time(p)] for d, p in pids.items()}}
        try:
            if management:  # first: a datastore operation in progress still needs FRR
                lab.freeze_netconf(router, True)
            for d, (pid, _start) in handle["daemons"].items():
                os.kill(pid, signal.SIGSTOP)
            # the kernel stops a process when it next runs: wait (bounded) until all have
            _wait(lambda: all(s in ("T", None) for s in self._states(handle).values()), STOP_WAIT_S)
        except (OSError, AniError) as exc:
            try:
                self.remove(lab, spec, handle)
            except FaultError:
                pass
            raise FaultError(f"{self._where(spec)}: could not freeze: {exc}") from exc
        return handle

    def remove(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> None:
        errors = []
        for d, (pid, start) in handle["daemons"].items():
            if start_time(pid) != start:
                continue  # gone (or the PID was reused): nothing of ours to resume
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            except OSError as exc:
                errors.append(f"SIGCONT {d} ({pid}): {exc}")
        _wait(lambda: all(s != "T" for s in self._states(handle).values()), STOP_WAIT_S)
        if handle["management"]:
            # always withdraw the request (also when the server that froze it is gone: a later
            # server must not freeze the router again on someone else's request)
            try:
                lab.freeze_netconf(handle["router"], False)
            except AniError as exc:
                if handle["router"] in lab.netconf_frozen():
                    errors.append(f"resuming its NETCONF part: {exc}")
        if errors:
            raise FaultError(f"{self._where(spec)}: " + "; ".join(errors))

    # -- checks ------------------------------------------------------------------------------

    def _states(self, handle: dict[str, Any]) -> dict[str, str | None]:
        """``{daemon: state letter}`` (None: that process is gone or its PID was reused)."""
        out: dict[str, str | None] = {}
        for d, (pid, start) in handle["daemons"].items():
            out[d] = proc_state(pid) if start_time(pid) == start else None
        return out

    def verify(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str]:
        router = handle["router"]
        states = self._states(handle)
        bad = [f"{d} {s or 'gone'}" for d, s in states.items() if s != "T"]
        parts = [f"{router}: {len(states) - len(bad)}/{len(states)} FRR daemons stopped (state T)"]
        if bad:
            parts.append("not stopped: " + ", ".join(bad))
        ok = not bad
        if handle["management"]:
            frozen = router in lab.netconf_frozen()
            ok = ok and frozen
            parts.append("its NETCONF part frozen" if frozen else "its NETCONF part NOT frozen")
        return ok, "; ".join(parts)

    def removed(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str]:
        router = handle["router"]
        states = self._states(handle)
        stopped = [d for d, s in states.items() if s == "T"]
        gone = [d for d, s in states.items() if s is None]
        parts = [f"{router}: FRR daemons running again ({', '.join(f'{d} {s}' for d, s in states.items())})"]
        ok = not stopped
        if stopped:
            parts[0] = f"{router}: still stopped: {', '.join(stopped)}"
        if gone:
            parts.append(f"gone meanwhile: {', '.join(gone)}")
        if handle["management"]:
            frozen = router in lab.netconf_frozen()
            ok = ok and not frozen
            parts.append("its NETCONF part still frozen" if frozen else "its NETCONF part resumed")
        if ok:
            try:
                res = lab.vtysh(router, "show version", timeout=10.0)
                answered = res.ok
            except AniError:
                answered = False
            ok = answered
            parts.append("vtysh answers" if answered else "vtysh does not answer")
        return ok, "; ".join(parts)
