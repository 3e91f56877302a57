"""Tiny readers of FRR configuration text (``frr.conf`` / ``show running-config``).

Only what the scenario needs: interface addresses, the loopback, BGP neighbors,
prefix-lists and the route-map behind ``redistribute connected``.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Interface

_IFACE_RE = re.compile(r"^interface (\S+)")
_ADDR_RE = re.compile(r"^\s+ip address (\d+\.\d+\.\d+\.\d+/\d+)")
_NEIGH_RE = re.compile(r"^\s+neighbor (\d+\.\d+\.\d+\.\d+) (?:remote-as|peer-group)\b")
_PL_RE = re.compile(r"^ip prefix-list (\S+) seq (\d+) (permit|deny) (\S+)")
_REDIST_RE = re.compile(r"^\s+redistribute connected route-map (\S+)")
_RM_RE = re.compile(r"^route-map (\S+) (permit|deny) (\d+)")
_MATCH_PL_RE = re.compile(r"^\s+match ip address prefix-list (\S+)")


def interface_addresses(config: str) -> dict[str, list[IPv4Interface]]:
    """``{ifname: [addresses]}`` from the ``interface`` blocks of ``config``."""
    out: dict[str, list[IPv4Interface]] = {}
    current: str | None = None
    for line in config.splitlines():
        m = _IFACE_RE.match(line)
        if m:
            current = m.group(1)
            out.setdefault(current, [])
            continue
        if line and not line[0].isspace():
            current = None
            continue
        m = _ADDR_RE.match(line)
        if m and current is not None:
            out[current].append(IPv4Interface(m.group(1)))
    return out


def loopback_address(config: str) -> IPv4Address | None:
    """The first address of ``interface lo``, or None."""
    addrs = interface_addresses(config).get("lo") or []
    return addrs[0].ip if addrs else None


def bgp_neighbors(config: str) -> list[IPv4Address]:
    """Neighbor addresses configured under ``router bgp`` (by remote-as or peer-group)."""
    out: list[IPv4Address] = []
    for line in config.splitlines():
        m = _NEIGH_RE.match(line)
        if m:
            ip = IPv4Address(m.group(1))
            if ip not in out:
                out.append(ip)
    return out


def prefix_lists(config: str) -> dict[str, list[tuple[int, str, str]]]:
    """``{name: [(seq, action, prefix), ...]}``."""
    out: dict[str, list[tuple[int, str, str]]] = {}
    for line in config.splitlines():
        m = _PL_RE.match(line)
        if m:
            out.setdefault(m.group(1), []).append((int(m.group(2)), m.group(3), m.group(4)))
    return out


def redistribution_prefix_lists(config: str) -> list[str]:
    """Prefix-lists matched by the route-map(s) filtering ``redistribute connected``."""
    maps = {m.group(1) for line in config.splitlines() if (m := _REDIST_RE.match(line))}
    out: list[str] = []
    current: str | None = None
    for line in config.splitlines():
        m = _RM_RE.match(line)
        if m:
            current = m.group(1)
            continue
        if line and not line[0].isspace():
            current = None
            continue
        m = _MATCH_PL_RE.match(line)
        if m and current in maps and m.group(1) not in out:
            out.append(m.group(1))
    return out
