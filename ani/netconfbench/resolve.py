"""An ``expected_result`` without a device or prefix, resolved from the task's own solutions.

The NetConfBench draft's own example testcase (§4.1) is ``{"name": "Static Route from NewYork
to Washington", "expected_result": {"protocol": "static", "next_hop": "192.0.2.2"}}``: no
device, no prefix. They are the task's: the route of its ground truth configuration
(``ground_truth_configs[*].configs``) that has that next hop (and protocol, distance, device or
prefix where given). :func:`resolve_target` finds it::

    resolve_target(er, task.ground_truth_configs)
        -> Resolved(device="NewYork", prefix=IPv4Network("203.0.113.0/30"),
                    source="expert-0001: NewYork 'ip route 203.0.113.0/30 192.0.2.2'")

Only static routes carry a next hop in a configuration (``ip route PREFIX [MASK] NEXT_HOP
[DISTANCE]``, the CIDR or the IOS mask form); a route is a candidate when its next hop is the
testcase's ``next_hop`` and its device, prefix and distance (default 1) are the testcase's
where given. The same route in several solutions is one candidate. Raises ``ValueError``
saying why when it cannot be resolved: no ``next_hop`` to resolve by, a protocol other than
``static``, no candidate, or several (each listed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network
from typing import Any

__all__ = ["Resolved", "resolve_target", "static_routes"]

_ROUTE = re.compile(r"^ip route (\d+\.\d+\.\d+\.\d+)(/\d+| \d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+)(?: (\d+))?\s*$")


@dataclass(frozen=True)
class Resolved:
    """The device and prefix an ``expected_result`` was resolved to, and from which line."""

    device: str
    prefix: IPv4Network
    source: str


def static_routes(solutions: list[Any]) -> list[tuple[str, IPv4Network, IPv4Address, int, str]]:
    """``(device, prefix, next hop, distance, source)`` of every next-hop static route of
    ``solutions`` (``Solution`` models), in order; ``source`` is ``"<solution_id>: <device>
    '<line>'"``. Lines that are not such a route are skipped."""
    out = []
    for sol in solutions:
        for device, lines in sol.configs.items():
            for line in lines:
                m = _ROUTE.match(" ".join(str(line).split()))
                if m is None:
                    continue
                addr, mask, hop, dist = m.groups()
                try:
                    prefix = IPv4Network(f"{addr}/{mask.strip(' /')}")
                except ValueError:
                    continue
                out.append((device, prefix, IPv4Address(hop), int(dist or 1), f"{sol.solution_id}: {device} {line!r}"))
    return out


def resolve_target(er: Any, solutions: list[Any]) -> Resolved:
    """The device and prefix of ``er`` (an ``ExpectedResult`` without one or both) from
    ``solutions`` (module doc). Raises ``ValueError`` saying why it cannot be resolved."""
    missing = " and ".join(k for k in ("device", "prefix") if getattr(er, k) is None)
    if er.next_hop is None:
        raise ValueError(f"no {missing}, and no next_hop to find them by in ground_truth_configs: give {missing}")
    if er.protocol not in (None, "static"):
        raise ValueError(f"no {missing}: only static routes name their next hop in a configuration, and "
                         f"protocol is {er.protocol!r}: give {missing}")
    found: dict[tuple[str, IPv4Network], str] = {}
    for device, prefix, hop, dist, source in static_routes(solutions):
        if hop != er.next_hop or (er.device is not None and device != er.device):
            continue
        if (er.prefix is not None and prefix != er.prefix) or (er.distance is not None and dist != er.distance):
            continue
        found.setdefault((device, prefix), source)
    want = f"a static route via {er.next_hop}" + (f" on {er.device}" if er.device else "") + (
        f" to {er.prefix}" if er.prefix else "") + (f" at distance {er.distance}" if er.distance is not None else "")
    if not found:
        where = "ground_truth_configs" if solutions else "ground_truth_configs (the task has none)"
        raise ValueError(f"no {missing}, and no solution line of {where} is {want}: give {missing}")
    if len(found) > 1:
        listed = "; ".join(f"{d} {p} ({s})" for (d, p), s in found.items())
        raise ValueError(f"no {missing}, and {len(found)} routes of ground_truth_configs are {want}: {listed}: "
                         f"give {missing}")
    (device, prefix), source = next(iter(found.items()))
    return Resolved(device=device, prefix=prefix, source=source)
