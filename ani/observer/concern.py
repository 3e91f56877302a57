"""Which routers an invariant depends on, and which observed violations a fault explains
(issue 23 §2: a fault's own effect is not the agent's damage).

A violation the sampler records (:class:`ani.observer.sampler.Violation`) is *explained by a
fault* when it was first seen while a fault was in effect on a router the invariant concerns,
or within :data:`FAULT_GRACE_S` seconds after that fault's removal (routing reconverging):
``fault.start - FAULT_SLACK_S <= violation.start_s <= fault.end + FAULT_GRACE_S``. A violation
first seen before the fault (the agent's own break that the fault then met) is not explained.

The routers a check concerns (:func:`check_routers`): the nodes it runs on and its far end, and
every router on a shortest path between them in the lab's topology; a check whose far end the
topology does not name (a BGP neighbour or a loopback address no router carries, a route
learned from anywhere) concerns every router (None). A ``command`` check concerns its router.

    >>> from ani.observer.checks import parse_checks
    >>> from ani.testing import FakeLab
    >>> topo = FakeLab().topology            # r1 -- r2, host h1 behind r1
    >>> [c] = parse_checks([{"kind": "command", "router": "r2", "commands": ["show version"], "expect": "FRR"}])
    >>> sorted(check_routers(c, topo))
    ['r2']
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FAULT_GRACE_S", "FAULT_SLACK_S", "FaultInterval", "check_routers", "explain_violations"]

#: seconds after a fault's removal during which a newly seen violation is still its effect:
#: routing reconverges (the brownfield's BGP timers 1/3 s, connect 1 s; OSPF hello 1 s) and the
#: sampler looks every 5 s (DEFAULT_PERIOD_S)
FAULT_GRACE_S = 10.0
#: seconds before a fault's recorded injection a violation may be seen and still be its effect
#: (the record's time is taken once the injection returned; a check may run during it)
FAULT_SLACK_S = 1.0


@dataclass(frozen=True)
class FaultInterval:
    """One fault in effect: ``label`` (for the record), the ``routers`` it acts on, from
    ``start_s`` to ``end_s`` (seconds on the violations' clock; ``end_s`` None: until the end)."""

    label: str
    routers: frozenset[str]
    start_s: float
    end_s: float | None


def _owner(topology: Any, address: str) -> str | None:
    """The router (or host) whose link endpoint or FRR configuration carries ``address``."""
    for link in getattr(topology, "links", None) or []:
        for ep in (link.a, link.b):
            if ep.address is not None and str(ep.address.ip) == address:
                return ep.node
    pat = re.compile(rf"\bip address {re.escape(address)}/")
    for name, spec in (getattr(topology, "routers", None) or {}).items():
        if pat.search(getattr(spec, "config", "") or ""):
            return name
    return None


def _distances(topology: Any, src: str) -> dict[str, int]:
    adj: dict[str, set[str]] = {}
    for link in topology.links:
        adj.setdefault(link.a.node, set()).add(link.b.node)
        adj.setdefault(link.b.node, set()).add(link.a.node)
    dist, todo = {src: 0}, deque([src])
    while todo:
        n = todo.popleft()
        for m in adj.get(n, ()):
            if m not in dist:
                dist[m] = dist[n] + 1
                todo.append(m)
    return dist


def _path_routers(topology: Any, a: str, b: str) -> set[str] | None:
    """Routers on any shortest path from node ``a`` to node ``b`` (None: not connected)."""
    da, db = _distances(topology, a), _distances(topology, b)
    if b not in da:
        return None
    return {n for n in da if n in db and da[n] + db[n] == da[b] and topology.is_router(n)}


def check_routers(check: Any, topology: Any) -> set[str] | None:
    """The routers ``check`` concerns (module doc); None: every router (or no topology)."""
    kind = getattr(check, "kind", None)
    nodes = list(getattr(check, "nodes", []) or [])
    if kind == "command":
        return set(nodes)
    if topology is None:
        return None
    if kind == "reach":
        far = getattr(check, "dst_node", None) or _owner(topology, str(check.dst))
    elif kind == "bgp_session":
        far = _owner(topology, str(check.neighbor))
    elif kind == "loopback":
        far = _owner(topology, str(check.address))
    else:  # a route may be learned from any router
        return None
    if not far or not nodes:
        return None
    out: set[str] = set()
    for n in nodes:
        path = _path_routers(topology, n, far)
        if path is None:
            return None
        out |= path
    return out


def explain_violations(violations: Sequence[Any], concerned: dict[str, set[str] | None],
                       faults: Iterable[FaultInterval], *, grace_s: float = FAULT_GRACE_S,
                       slack_s: float = FAULT_SLACK_S) -> list[Any]:
    """Copies of ``violations`` (``Violation``) with ``faults`` set to the labels of the faults
    that explain each (module doc) and ``fault_explained`` to whether any does.
    ``concerned``: invariant name -> :func:`check_routers` (a name not in it concerns every
    router)."""
    faults = list(faults)
    out = []
    for v in violations:
        routers = concerned.get(v.name)
        hits = [f.label for f in faults
                if (routers is None or routers & f.routers)
                and f.start_s - slack_s <= v.start_s
                and (f.end_s is None or v.start_s <= f.end_s + grace_s)]
        out.append(v.model_copy(update={"faults": hits, "fault_explained": bool(hits)}))
    return out
