"""Fault kind ``concurrent_writer``: someone else changes a router's configuration out of band
during the run (``vtysh`` on the router, as an operator's terminal or another tool would), in
one of two variants (NMAA draft: concurrent writer, one unrelated to the task and one that
conflicts with it).

Target ``{"router": "e2"}``: the router of the task's first change (its edge; else one drawn).
Params, drawn with the schedule (part of the variant, the same at every level):

* ``{"variant": "unrelated", "interface": "lo", "description": "..."}``: the writer sets the
  description of the router's loopback, state no task, invariant or hidden test reads;
* ``{"variant": "conflicting", "prefix_list": "PL-TENANTS", "prefix": "192.0.2.0/24"}``: the
  writer adds an entry to the very object the task edits, the edge's tenant prefix-list (the one
  matched by the route-map of ``redistribute connected``; every task class adds, moves or
  removes entries there), at the sequence number anyone reading the list picks next (the largest
  + 10, what the scripted agent and the A3-T seq pool choose): an agent that read the list
  before the write and writes its own entry at that number afterwards collides with it. The
  writer's prefix is a documentation block (RFC 5737) no router has, so the entry changes no
  route by itself.

The change is an instant event, not a state: it is verified right after it was made (the line
is in the router's running configuration); *present* is always true and reads nothing (the
writer did write; whether the change is still there is the outcome being measured);
*remove* does nothing: the writer's change stays, it is the stimulus, and undoing it at the end
would hide what happened to it. *removed* says, for the run record (``FaultRecord.detail``),
whether the writer's change survived the run or what replaced it (``seq 30 now permits
198.19.7.0/24``: the agent's write replaced it, lost update).

Raises :class:`ani.errors.FaultError` when the router cannot be read or written, or (for the
conflicting variant) the prefix-list is not on the router.
"""

from __future__ import annotations

import random
from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Any

from ani.errors import FaultError
from ani.faults.base import FaultKind, FaultSpec, register
from ani.faults.targets import read_router, write_router
from ani.faults.task_targets import pick_router, primary_edge

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["ConcurrentWriter", "VARIANTS", "WRITER_PREFIXES"]

VARIANTS = ("unrelated", "conflicting")
#: RFC 5737 documentation blocks: the conflicting writer's prefix is one no scenario uses
WRITER_PREFIXES = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
SEQ_STEP = 10
DESCRIPTION = "changed out of band by another writer (ani fault concurrent_writer)"


def _tenant_list_of(text: str) -> str | None:
    """The tenant prefix-list of a router's FRR configuration text (None: none / unparsable)."""
    from ani.device.parse import parse
    from ani.intents.services.common import tenant_list

    try:
        return tenant_list(parse(text))
    except Exception:  # noqa: BLE001 - a config the model cannot read has no list for us
        return None


@register
class ConcurrentWriter(FaultKind):
    """See the module doc. Handle: ``{"router", "variant", "line", "seq"?, "prefix_list"?, "prefix"?}``."""

    name = "concurrent_writer"
    writes_config = True

    def draw(self, rng: random.Random, scenario: Any, variant: Any) -> tuple[dict, dict] | None:
        router = primary_edge(scenario, variant) or pick_router(rng, scenario, variant)
        if router is None:
            return None
        kind = rng.choice(VARIANTS)
        plist = None
        if kind == "conflicting":
            spec = scenario.topology.routers[router]
            plist = _tenant_list_of(getattr(spec, "config", "") or "")
        if plist is None:
            return {"router": router}, {"variant": "unrelated", "interface": "lo", "description": DESCRIPTION}
        used = list(scenario.used_networks()) if hasattr(scenario, "used_networks") else []
        free = [p for p in WRITER_PREFIXES if not any(IPv4Network(p).overlaps(u) for u in used)]
        prefix = rng.choice(free or list(WRITER_PREFIXES))
        return {"router": router}, {"variant": "conflicting", "prefix_list": plist, "prefix": prefix}

    def overlap_key(self, spec: FaultSpec) -> Any:
        """Never merged: each write is an event of its own (two writers write twice)."""
        return (self.name, spec.at_step, id(spec))

    def _where(self, spec: FaultSpec) -> str:
        return f"concurrent_writer {spec.target.get('router')}"

    def _read(self, lab: Lab, spec: FaultSpec, router: str) -> Any:
        return read_router(lab, router, self._where(spec))

    def inject(self, lab: Lab, spec: FaultSpec) -> dict[str, Any]:
        router = spec.target.get("router")
        if not isinstance(router, str):
            raise FaultError(f"{self._where(spec)}: target needs 'router' (a router name), got {spec.target!r}")
        kind = spec.params.get("variant")
        if kind not in VARIANTS:
            raise FaultError(f"{self._where(spec)}: params.variant must be one of {', '.join(VARIANTS)}, got {kind!r}")
        handle: dict[str, Any] = {"router": router, "variant": kind}
        if kind == "unrelated":
            ifname = str(spec.params.get("interface", "lo"))
            text = str(spec.params.get("description", DESCRIPTION))
            commands = ["configure terminal", f"interface {ifname}", f"description {text}"]
            handle.update(interface=ifname, description=text, line=f"interface {ifname} / description {text}")
        else:
            plist, prefix = spec.params.get("prefix_list"), spec.params.get("prefix")
            if not isinstance(plist, str) or not isinstance(prefix, str):
                raise FaultError(f"{self._where(spec)}: the conflicting variant needs params prefix_list and prefix")
            cfg = self._read(lab, spec, router)
            if plist not in cfg.prefix_lists:
                raise FaultError(f"{self._where(spec)}: {router} has no prefix-list {plist} "
                                 f"(it has: {', '.join(sorted(cfg.prefix_lists)) or 'none'})")
            seq = (max((e.seq for e in cfg.prefix_lists[plist].entries), default=0) // SEQ_STEP + 1) * SEQ_STEP
            line = f"ip prefix-list {plist} seq {seq} permit {prefix}"
            commands = ["configure terminal", line]
            handle.update(prefix_list=plist, prefix=prefix, seq=seq, line=line)
        write_router(lab, router, commands, self._where(spec))
        return handle

    def _now(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str]:
        """(is the writer's change on the router now, what is there instead)."""
        cfg = self._read(lab, spec, handle["router"])
        if handle["variant"] == "unrelated":
            iface = cfg.interfaces.get(handle["interface"])
            now = iface.description if iface is not None else None
            return now == handle["description"], f"description {now!r}" if now else "no description"
        lst = cfg.prefix_lists.get(handle["prefix_list"])
        entry = next((e for e in lst.entries if e.seq == handle["seq"]), None) if lst is not None else None
        if entry is None:
            return False, f"no seq {handle['seq']} in {handle['prefix_list']}" if lst is not None else \
                f"no prefix-list {handle['prefix_list']}"
        same = entry.action == "permit" and str(entry.prefix) == handle["prefix"] and entry.ge is None and entry.le is None
        what = f"seq {entry.seq} {entry.action} {entry.prefix or 'any'}"
        return same, what

    def verify(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str]:
        there, now = self._now(lab, spec, handle)
        if there:
            return True, f"{handle['router']}: the writer's {handle['variant']} change is in running: {handle['line']}"
        return False, f"{handle['router']}: the writer's change {handle['line']!r} is not in running ({now})"

    def present(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str]:
        """Always true, without reading the router (it is asked at every tool call): an event,
        not a state; the writer wrote (verified), what became of it is the outcome, said by
        :meth:`removed` / :meth:`outcome`."""
        return True, f"the writer made its {handle['variant']} change on {handle['router']} (an event)"

    def remove(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> None:
        """Nothing to undo: the writer's change stays (it is the stimulus; see the module doc)."""

    def removed(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str]:
        try:
            there, now = self._now(lab, spec, handle)
        except FaultError as exc:
            return True, f"nothing to undo (an instant change); {handle['router']} cannot be read now: {exc}"
        if there:
            outcome = "survived: it is still in running"
        elif handle["variant"] == "conflicting" and now.startswith("seq "):
            outcome = f"was replaced: {handle['prefix_list']} {now} (a later write took its sequence number)"
        else:
            outcome = f"is gone ({now})"
        return True, (f"nothing to undo (an instant change, it stays): the writer's {handle['variant']} "
                      f"change on {handle['router']} ({handle['line']}) {outcome}")

    # for the run record / tests: what became of the writer's change
    def outcome(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> dict[str, Any]:
        """``{"writer_survived": bool, "now": str}``: the writer's change is still in running,
        and what is there (``seq 30 permit 198.19.7.0/24``). Raises FaultError (unreadable)."""
        there, now = self._now(lab, spec, handle)
        return {"writer_survived": there, "now": now}
