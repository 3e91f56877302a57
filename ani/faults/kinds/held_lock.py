"""Fault kind ``held_lock``: another management session holds a router's configuration lock for a
duration (RFC 6241 §7.5: "a lock held by another session", e.g. an operator's or a controller's).

Target ``{"router": "e2"}`` (drawn among the routers the task changes, else any router);
params ``{"datastores": ["running", "candidate"]}`` (the datastores locked, in that order).

Effect: a NETCONF session of its own (ncclient over SSH to the lab's server, as any client)
sends ``<lock>`` for each datastore and keeps the session open for the duration. What each
level meets is the substrate's own rule for that lock, nothing added in the adapters:

* A2 (NETCONF): ``<lock>`` is ``lock-denied`` naming the holder's session-id;
  ``<edit-config>`` on a locked candidate and ``<commit>`` while running or candidate is locked
  are ``in-use`` (RFC 6241 §7.2, §8.3.4.1).
* A1 (CLI): ``update_config`` and ``rollback`` refuse with ``locked`` while running is locked:
  the lab's CLI path honours the NETCONF running lock (``Lab.netconf_lock``; the adapter's
  in-process call locks, :mod:`ani.adapters.locking`, only serialise its own threads and are no
  substrate lock, so there is nothing else to hold).
* A3-T and A4 write through NETCONF transactions (:func:`ani.intents.transaction.run_transaction`
  locks every candidate first): the transaction fails at its ``lock`` phase (``lock-denied``).
* A0 (raw shell) and A3-R (its reconciler writes FRR directly, :mod:`ani.sot.reconcile`) do not
  look at NETCONF locks: like a person with a root shell they write through it; the lock is held
  all the same (the run record shows it was), so what they did is measured, not prevented.

Verification: ``lab.netconf_lock(router, target)`` names this session for each datastore (the
server publishes its locks); present: the same, and the session is still connected (a NETCONF
server restart ends it: the lock vanished, the run is ``environment_invalid``). Removal:
``<unlock>`` each datastore, ``<close-session>``; verified by no lock of this session left.

Raises :class:`ani.errors.FaultError` when the session cannot be opened or a lock is refused
for another reason, and :class:`ani.errors.FaultNotApplicable` when a ``<lock>`` is
``lock-denied`` (RFC 6241 §7.5: another session, in a run the agent's own, already holds it, or
the candidate has its uncommitted changes): the agent's situation, recorded as not injected,
not an invalid run. What was locked is released first.
"""

from __future__ import annotations

import random
from typing import Any

from ani.errors import FaultError, FaultNotApplicable
from ani.faults.base import FaultKind, FaultSpec, register
from ani.faults.task_targets import pick_router
from ani.lab.protocol import Lab, NetconfServer, missing, provides

__all__ = ["HeldLock"]

DATASTORES = ("running", "candidate")
#: bounds of the holder's NETCONF session (seconds)
CONNECT_TIMEOUT_S = 15.0
RPC_TIMEOUT_S = 30.0


def _one_line(text: Any, n: int = 300) -> str:
    return " ".join(str(text).split())[:n]


def _refusal(xml: str) -> tuple[str, bool]:
    """``("lock-denied: <message> (session-id 3)", True)`` for a ``<lock>`` reply refused with
    ``lock-denied`` (RFC 6241 §7.5: another session holds the lock, or the candidate has
    uncommitted changes), the tag and message of any other error with False, or the reply cut
    to one line when it cannot be read."""
    from ani.errors import AniError
    from ani.netconf.client import check_reply

    try:
        check_reply("lock", xml)
    except AniError as exc:
        errors = getattr(exc, "errors", None) or []
        if errors:
            e = errors[0]
            holder = e.info.get("session-id") if isinstance(e.info, dict) else None
            text = f"{e.tag}: {_one_line(e.message) or 'refused'}" + (f" (session-id {holder})" if holder else "")
            return text, e.tag == "lock-denied"
    return _one_line(xml), False


@register
class HeldLock(FaultKind):
    """See the module doc. Handle: ``{"router", "datastores", "manager", "session_id", "locked"}``."""

    name = "held_lock"
    needs = (NetconfServer,)

    def unavailable(self, lab: Lab | None) -> str | None:
        if lab is None:
            return None
        if not provides(lab, NetconfServer):
            return (f"held_lock needs the lab's NETCONF server (NetconfServer: lab {getattr(lab, 'id', '?')} lacks "
                    f"{', '.join(missing(lab, NetconfServer))})")
        if not lab.netconf:
            return "held_lock needs the lab's NETCONF server (this lab was started with netconf=False)"
        return None

    def draw(self, rng: random.Random, scenario: Any, variant: Any) -> tuple[dict, dict] | None:
        router = pick_router(rng, scenario, variant)
        return None if router is None else ({"router": router}, {"datastores": list(DATASTORES)})

    def _where(self, spec: FaultSpec) -> str:
        return f"held_lock {spec.target.get('router')}"

    def _datastores(self, spec: FaultSpec) -> list[str]:
        ds = spec.params.get("datastores", list(DATASTORES))
        if isinstance(ds, str):
            ds = [ds]
        bad = [d for d in ds if d not in DATASTORES]
        if not ds or bad:
            raise FaultError(f"{self._where(spec)}: params.datastores must name running and/or candidate, got {ds!r}")
        return [d for d in DATASTORES if d in ds]

    def inject(self, lab: Lab, spec: FaultSpec) -> dict[str, Any]:
        from ani.netconf.client import ncclient_connect

        router = spec.target.get("router")
        if not isinstance(router, str):
            raise FaultError(f"{self._where(spec)}: target needs 'router' (a router name), got {spec.target!r}")
        datastores = self._datastores(spec)  # the spec's faults first: they are the same on any lab
        why = self.unavailable(lab)
        if why:
            raise FaultError(f"{self._where(spec)}: {why}")
        try:
            m = ncclient_connect(lab.netconf_endpoint(router), connect_timeout_s=CONNECT_TIMEOUT_S,
                                 rpc_timeout_s=RPC_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - ncclient / paramiko raise many kinds
            raise FaultError(f"{self._where(spec)}: cannot open a NETCONF session: {_one_line(exc)}") from exc
        handle: dict[str, Any] = {"router": router, "datastores": datastores, "manager": m,
                                  "session_id": str(m.session_id), "locked": []}
        for ds in datastores:
            denied = False
            try:
                reply = m.lock(target=ds)
                ok, text = reply.ok, reply.xml
                if not ok:
                    text, denied = _refusal(text)
            except Exception as exc:  # noqa: BLE001
                ok, text = False, _one_line(exc)
            if not ok:
                self.remove(lab, spec, handle)
                where = f"{self._where(spec)}: <lock> of {ds} was refused: {text}"
                if denied:  # the agent's session holds it or has changes in it: its own situation
                    raise FaultNotApplicable(f"{where} (the run's own session holds the datastore)")
                raise FaultError(where)
            handle["locked"].append(ds)
        return handle

    def remove(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> None:
        m = handle.get("manager")
        if m is None:
            return
        handle["manager"] = None
        try:
            if m.connected:
                for ds in reversed(handle["locked"]):
                    m.unlock(target=ds)
                m.close_session()
        except Exception:  # noqa: BLE001 - the session may be gone: its locks went with it
            pass
        finally:
            try:
                m.close_session() if m.connected else None
            except Exception:  # noqa: BLE001
                pass

    def _held(self, lab: Lab, handle: dict[str, Any]) -> dict[str, Any]:
        return {ds: lab.netconf_lock(handle["router"], ds) for ds in handle["datastores"]}

    def verify(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str]:
        held = self._held(lab, handle)
        sid = handle["session_id"]
        ours = {ds: lk is not None and str(lk.session_id) == sid for ds, lk in held.items()}
        m = handle.get("manager")
        connected = m is not None and m.connected
        parts = [lk.describe() if lk is not None else f"no lock on {handle['router']}'s {ds} datastore"
                 for ds, lk in held.items()]
        if not connected:
            parts.append(f"the holder's session {sid} is closed")
        ok = connected and all(ours.values())
        return ok, ("held by the fault's session: " if ok else "") + "; ".join(parts)

    def removed(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str]:
        held = self._held(lab, handle)
        sid = handle["session_id"]
        left = [ds for ds, lk in held.items() if lk is not None and str(lk.session_id) == sid]
        if left:
            return False, f"session {sid} still holds {handle['router']}'s {', '.join(left)}"
        return True, (f"session {sid} released {handle['router']}'s {', '.join(handle['datastores'])} "
                      "and closed")
