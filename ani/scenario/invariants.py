"""Baseline invariants of a scenario, computed from its content (emitted with the scenario).

- every pair of sites of the same tenant reaches each other (``reach``, one check per unordered
  pair: a ping tests both directions), service ``tenant:<name>``;
- no pair of sites of different tenants does (``reach`` with ``expect: false``), service
  ``isolation``;
- every BGP session configured between routers of the topology is Established, seen from each
  side (``bgp_session``), service ``bgp``;
- every router reaches every other router's loopback from its own loopback (``loopback``),
  service ``underlay``.
"""

from __future__ import annotations

from ipaddress import IPv4Address
from itertools import combinations
from typing import TYPE_CHECKING

from ani.observer.checks import BgpSessionCheck, Check, LoopbackCheck, ReachCheck

if TYPE_CHECKING:
    from ani.scenario.manifest import Scenario


def baseline_invariants(scenario: Scenario) -> list[Check]:
    """The baseline invariants of ``scenario`` (deterministic order)."""
    out: list[Check] = []
    sites = scenario.sites
    for (ta, a), (tb, b) in combinations(sites, 2):
        same = ta == tb
        out.append(
            ReachCheck(
                src=a.host,
                dst=scenario.host_address(b.host),
                dst_node=b.host,
                expect=same,
                service=f"tenant:{ta}" if same else "isolation",
            )
        )
    loops = scenario.loopbacks()
    by_addr = {ip: r for r, ip in loops.items()}
    for router, cfg in scenario.device_configs.items():
        for nb in (IPv4Address(n) for n in (cfg.bgp.neighbors if cfg.bgp else {})):
            if nb in by_addr and by_addr[nb] != router:
                out.append(BgpSessionCheck(router=router, neighbor=nb, service="bgp"))
    for src, dst in ((s, d) for s in loops for d in loops if s != d):
        out.append(
            LoopbackCheck(
                router=src,
                address=loops[dst],
                source=loops[src],
                name=f"loopback {src} -> {dst} ({loops[dst]})",
                service="underlay",
            )
        )
    return out
