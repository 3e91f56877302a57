"""Measured outcomes of a run, not injected (issue 14, section 1 and case 1): what the harness
can see of invalid calls, partial application, double application and locks left held.

::

    out = measure(trajectory.events, lab, adapter)    # after agent.run, BEFORE adapter.close()
    out.invalid_calls, out.double_applied, out.partial, out.locks_left

Each is computed from the run's trajectory (:mod:`ani.trajectory`: the ``tool_call`` events,
their ``error_code``, ``changed``, ``refusal``, ``devices``, ``not_restored``), except the
locks, which are read from the live lab and adapter. Definitions (each testable on events):

- ``invalid_calls`` (int): calls refused for bad arguments or an unknown name, nothing done:
  error codes :data:`INVALID_CODES` (``unknown_tool``, ``invalid_arguments``,
  ``unknown_device``, ``unknown_snapshot``, ``not_found``), and ``invalid_intent`` refusals
  whose intent error code is one of :data:`INVALID_REFUSALS` (``schema``, ``unknown-router``,
  ``unknown-reference``, ``service-not-found``: the same mistakes at A3-T/A4; a conflict with
  the network, such as ``seq-conflict``, is not an invalid call). Policy refusals
  (``not_allowed``, ``blocked``) and device failures are not counted.
- ``double_applied`` (list of str): a change applied twice: two calls with the same tool and
  the same arguments that both changed the network (``changed`` True) with no other changing
  call between them (a read, or the attempt that timed out and changed nothing, may come
  between). A repeated call whose change was idempotent reports ``changed`` False and is not
  counted; an undo in between (a rollback, the inverse edit) is a changing call, so re-applying
  after it is not counted either. One entry per repetition:
  ``"update_config {...} applied twice (calls 3 and 5)"``.
- ``partial`` (list of str): a change that was applied on some routers and not on others: a
  multi-device call whose per-device results (``devices``) say some applied (``ok`` and
  ``changed`` and not ``cancelled``; for ``confirm_commit``, ``ok``: the change became
  permanent there) and some failed; a transaction or an all-or-nothing change whose rollback
  could not be verified (``rollback_failed``, naming ``not_restored``). Recorded when it
  happened, even if a later call evened it out (the record of the process, not the end state).
- ``locks_left`` (list of str): locks the agent still held when its run ended: a NETCONF lock
  (RFC 6241 §7.5) on a router's ``running`` or ``candidate`` datastore held by one of the
  adapter's own sessions (``lab.netconf_lock`` against ``adapter.netconf_session_ids()``, A2:
  the lock goes away only when the adapter closes its session, which the harness does, not the
  agent); a lock held by another session (an injected held-lock fault, another writer) is not
  the agent's and is not listed; and the adapter's call locks (:mod:`ani.adapters.locking`)
  still held by a call running after the agent returned.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ani.lab.protocol import Lab, NetconfLocks, provides
from ani.trajectory import TOOL_CALL_EVENT

__all__ = ["INVALID_CODES", "INVALID_REFUSALS", "Outcomes", "double_applied", "invalid_calls",
           "is_invalid", "locks_left", "measure", "partial"]

#: error codes of a call refused for bad arguments or an unknown name
INVALID_CODES = frozenset({"unknown_tool", "invalid_arguments", "unknown_device", "unknown_snapshot", "not_found"})
#: intent error codes (``ani.intents.errors.CODES``) of an ``invalid_intent`` that is an invalid call
INVALID_REFUSALS = frozenset({"schema", "unknown-router", "unknown-reference", "service-not-found"})
#: NETCONF datastores that can be locked (RFC 6241 §7.5)
LOCK_TARGETS = ("running", "candidate")


@dataclass
class Outcomes:
    """The measured outcomes of one run (see the module doc)."""

    invalid_calls: int = 0
    double_applied: list[str] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)
    locks_left: list[str] = field(default_factory=list)


def _calls(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [e for e in events if e.get("event") == TOOL_CALL_EVENT]


def is_invalid(call: Mapping[str, Any]) -> bool:
    """The ``tool_call`` event was refused for bad arguments or an unknown name."""
    if call.get("ok") is not False:
        return False
    code = call.get("error_code")
    return code in INVALID_CODES or (code == "invalid_intent" and call.get("refusal") in INVALID_REFUSALS)


def invalid_calls(events: Iterable[Mapping[str, Any]]) -> int:
    """How many calls were refused for bad arguments or an unknown name (module doc)."""
    return sum(1 for c in _calls(events) if is_invalid(c))


def _key(call: Mapping[str, Any]) -> str:
    return json.dumps([call.get("tool"), call.get("arguments")], sort_keys=True, default=str)


def _short(call: Mapping[str, Any], limit: int = 160) -> str:
    text = f"{call.get('tool')} {json.dumps(call.get('arguments'), sort_keys=True, default=str)}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def double_applied(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """Changes applied twice (module doc), in the order they happened."""
    out: list[str] = []
    last: tuple[int, Mapping[str, Any]] | None = None  # the last changing call (1-based number)
    for n, c in enumerate(_calls(events), 1):
        if c.get("changed") is not True:
            continue
        if last is not None and _key(last[1]) == _key(c):
            out.append(f"{_short(c)} applied twice (calls {last[0]} and {n})")
        last = (n, c)
    return out


def partial(events: Iterable[Mapping[str, Any]]) -> list[str]:
    """Changes applied on some routers and not on others (module doc)."""
    out: list[str] = []
    for n, c in enumerate(_calls(events), 1):
        tool = str(c.get("tool"))
        devices = c.get("devices")
        if isinstance(devices, Mapping) and devices:
            applied, failed = [], []
            for d, v in devices.items():
                if not isinstance(v, Mapping):
                    continue
                if not v.get("ok"):
                    failed.append(str(d))
                elif not v.get("cancelled") and (v.get("changed") is not False or tool == "confirm_commit"):
                    applied.append(str(d))
            if applied and failed:
                out.append(f"{tool} (call {n}): applied on {', '.join(applied)}, failed on {', '.join(failed)}")
                continue
        if c.get("error_code") == "rollback_failed":
            bad = c.get("not_restored") or []
            where = f" on {', '.join(bad)}" if bad else ""
            dev = (c.get("arguments") or {}).get("device") if isinstance(c.get("arguments"), Mapping) else None
            subject = f"{tool} on {dev}" if dev and not bad else tool
            out.append(f"{subject} (call {n}): the failed change could not be rolled back{where}")
    return out


def locks_left(lab: Lab, adapter: Any) -> list[str]:
    """Locks the agent left held (module doc), e.g.
    ``"e1 candidate: NETCONF session 7 (the agent's session)"``, ``"call lock r1: update_config"``.
    Reads the lab's published NETCONF locks; a router that cannot be read is skipped."""
    out: list[str] = []
    probe = lab.netconf_lock if provides(lab, NetconfLocks) else None
    ids_of = getattr(adapter, "netconf_session_ids", None)
    own: dict[str, str] = {}
    if callable(ids_of):
        try:
            own = {str(k): str(v) for k, v in dict(ids_of()).items()}
        except Exception:  # noqa: BLE001 - an adapter that cannot say has no session of its own to blame
            own = {}
    if probe is not None and own:
        for r in lab.topology.routers:
            if r not in own:
                continue
            for target in LOCK_TARGETS:
                try:
                    held = probe(r, target)
                except Exception:  # noqa: BLE001 - the lab could not say; nothing to record
                    continue
                if held is not None and str(held.session_id) == own[r]:
                    out.append(f"{r} {target}: NETCONF session {held.session_id} (the agent's session)")
    in_flight = getattr(adapter, "calls_in_flight", None)
    if callable(in_flight):
        try:
            for key, tool in sorted(dict(in_flight()).items()):
                out.append(f"call lock {'the adapter' if key == '*' else key}: {tool} (still running)")
        except Exception:  # noqa: BLE001
            pass
    return out


def measure(events: Iterable[Mapping[str, Any]], lab: Lab | None = None, adapter: Any = None) -> Outcomes:
    """Every outcome of the run (module doc); ``lab`` and ``adapter`` (still open) for the locks."""
    evs = list(events)
    return Outcomes(
        invalid_calls=invalid_calls(evs),
        double_applied=double_applied(evs),
        partial=partial(evs),
        locks_left=locks_left(lab, adapter) if lab is not None and adapter is not None else [],
    )
