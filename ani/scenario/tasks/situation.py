"""What the task classes draw from a scenario and the checks they derive, shared by the classes.

- :func:`requires_site`: does a baseline invariant need a site to exist and work where it is?
  (those a move, a removal or a fault supersede).
- :func:`near_miss_names`: node names one edit away from an existing one (``blue11`` next to
  ``blue1``), the near-collisions the draft asks for.
- :func:`adjacent_free`: free blocks next to a used prefix (``198.18.25.0/24`` beside
  ``198.18.24.0/24``), where an aggregate or a sloppy mask catches the neighbour.
- :func:`free_blocks`: the free ``/len`` blocks of a network.
- :func:`new_host`: the hosts/links mapping that cables a new site host to an edge.
- :func:`reach`, :func:`routes`: hidden-test builders (service ``task``).
"""

from __future__ import annotations

import string
from collections.abc import Iterable
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Any

from ani.lab.topology import NODE_NAME_RE, Endpoint, HostSpec, LinkSpec
from ani.observer.checks import Check, ReachCheck, RouteCheck
from ani.scenario.manifest import Scenario, Site

HOST_OFFSET = 10  # a site's host is .10 of its prefix, the gateway .1
SITE_IFNAME = "eth0"
SERVICE = "task"


def site_of(scenario: Scenario, host: str) -> tuple[str, Site]:
    """``(tenant, site)`` of the site whose host is ``host``. Raises KeyError."""
    for t, s in scenario.sites:
        if s.host == host:
            return t, s
    raise KeyError(host)


def requires_site(check: Check, host: str, prefix: IPv4Network) -> bool:
    """True if ``check`` passes only while the site (``host`` with ``prefix``) is in service:
    a positive ``reach`` from its host or to an address of its prefix, a present ``route`` to
    its prefix (or a part of it)."""
    if isinstance(check, ReachCheck):
        return check.expect and (check.src == host or check.dst in prefix)
    if isinstance(check, RouteCheck):
        return check.expect and check.prefix.subnet_of(prefix)
    return False


def isolation_of(check: Check, host: str, prefix: IPv4Network) -> bool:
    """True if ``check`` is a negative ``reach`` with the site at one end."""
    return isinstance(check, ReachCheck) and not check.expect and (check.src == host or check.dst in prefix)


def granted_by_set(check: Check, host: str, prefix: IPv4Network, site_hosts: set[str]) -> bool:
    """True if ``check`` is a positive ``reach`` between the site and a node that is not a
    tenant site (a shared service: its firewall admits the tenant's set ``tenant_<t>``, so it
    breaks when the site's prefix is missing from the set)."""
    if not isinstance(check, ReachCheck) or not check.expect:
        return False
    if check.src == host:
        return check.dst not in prefix and (check.dst_node is None or check.dst_node not in site_hosts)
    return check.dst in prefix and check.src not in site_hosts


def superseded_by(scenario: Scenario, pred: Any) -> list[str]:
    """Names of the scenario's invariants for which ``pred(check)`` holds, in invariant order."""
    return [c.name for c in scenario.invariants if pred(c)]


def near_miss_names(base: str, taken: set[str]) -> list[str]:
    """Valid node names one edit away from ``base`` (a digit or letter appended, two letters
    swapped, the last digit doubled), none in ``taken``; deterministic order."""
    out: list[str] = []
    cands = [base + d for d in "0123456789"] + [base + "b", base + "x"]
    cands += [base[:i] + base[i + 1] + base[i] + base[i + 2 :] for i in range(len(base) - 1) if base[i] != base[i + 1]]
    cands += [base[:i] + base[i + 1 :] for i in range(1, len(base)) if base[i] in string.ascii_lowercase]
    for c in cands:
        if c != base and c not in taken and c not in out and NODE_NAME_RE.match(c) and len(f"to-{c}") <= 15:
            out.append(c)
    return out


def used_networks(scenario: Scenario) -> list[IPv4Network]:
    """Every network the scenario uses (``Scenario.used_networks``)."""
    return scenario.used_networks()


def is_free(net: IPv4Network, used: Iterable[IPv4Network]) -> bool:
    return not any(net.overlaps(u) for u in used)


def free_blocks(network: IPv4Network, prefixlen: int, used: list[IPv4Network]) -> list[IPv4Network]:
    """The ``/prefixlen`` blocks of ``network`` overlapping nothing in ``used``, in order."""
    near = [u for u in used if u.overlaps(network)]
    return [n for n in network.subnets(new_prefix=prefixlen) if is_free(n, near)]


def adjacent_free(prefix: IPv4Network, used: list[IPv4Network]) -> list[IPv4Network]:
    """The free blocks of ``prefix``'s size just below and just above it (0, 1 or 2)."""
    size = prefix.num_addresses
    out = []
    for delta in (-size, size):
        start = int(prefix.network_address) + delta
        if 0 <= start <= 2**32 - size:
            cand = IPv4Network(f"{IPv4Address(start)}/{prefix.prefixlen}")
            if is_free(cand, used):
                out.append(cand)
    return out


def gateway_of(prefix: IPv4Network) -> IPv4Address:
    return prefix.network_address + 1


def host_address_of(prefix: IPv4Network) -> IPv4Interface:
    return IPv4Interface(f"{prefix.network_address + HOST_OFFSET}/{prefix.prefixlen}")


def new_host(host: str, edge: str, prefix: IPv4Network) -> dict[str, Any]:
    """``{"hosts": {...}, "links": [...]}``: host ``host`` (``.10``, default route via ``.1``)
    cabled to ``edge``'s interface ``to-<host>`` (left unconfigured)."""
    return {
        "hosts": {host: HostSpec(gateway=gateway_of(prefix)).model_dump(mode="json")},
        "links": [
            LinkSpec(
                a=Endpoint(node=edge, ifname=f"to-{host}"),
                b=Endpoint(node=host, ifname=SITE_IFNAME, address=host_address_of(prefix)),
            ).model_dump(mode="json")
        ],
    }


def merge_extra(*parts: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"hosts": {}, "links": []}
    for p in parts:
        out["hosts"].update(p.get("hosts", {}))
        out["links"].extend(p.get("links", []))
    return out


def reach(src: str, dst_node: str, dst: IPv4Address, expect: bool) -> ReachCheck:
    """A hidden ``reach`` test from node ``src`` to ``dst`` (of node ``dst_node``)."""
    return ReachCheck(src=src, dst=dst, dst_node=dst_node, expect=expect, service=SERVICE)


def routes(routers: Iterable[str], prefix: IPv4Network, expect: bool) -> list[RouteCheck]:
    """Hidden ``route`` tests: each router has (not) exactly ``prefix``."""
    return [RouteCheck(router=r, prefix=prefix, expect=expect, service=SERVICE) for r in routers]


def dedupe(checks: Iterable[Check]) -> list[Check]:
    """``checks`` without repeats (same name), first occurrence kept; a ping tests both ways, so
    ``reach a -> b`` also drops a later ``reach b -> a`` between two hosts with the same expectation."""
    seen: set[Any] = set()
    out = []
    for c in checks:
        key: Any = c.name
        if isinstance(c, ReachCheck) and c.dst_node:
            key = ("reach", frozenset((c.src, c.dst_node)), c.expect)
        if key in seen:
            continue
        seen.add(key)
        out.append(c)
    return out
