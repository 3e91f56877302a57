"""A command list as FRR takes it: configuration-mode lines, their blocks, merged onto a config.

NetConfBench solutions (``ground_truth_configs[i].configs[device]``) are flat CLI command
lists, as typed at a router: ``["router bgp 65001", "neighbor 10.0.12.2 remote-as 65002",
"exit", "ip route 10.9.0.0/24 10.0.12.2"]``. :func:`config_lines` drops the mode lines the
harness enters and leaves itself (``configure terminal``, ``conf t``, ``end``, ``write ...``);
:func:`block_text` indents the list into FRR configuration text with its blocks (what
``show running-config`` prints), following vtysh's rules: ``interface``, ``router``,
``route-map``, ``key chain`` ... open a block, ``address-family`` a block inside ``router``,
``exit`` / ``exit-address-family`` close one, and a command of the top level (``ip route``,
``ip prefix-list``, ``hostname``, ...) leaves every block (vtysh falls back to the parent nodes).
:func:`merge_solution` merges such a list onto a :class:`~ani.device.model.DeviceConfig`,
:func:`frr_spellings` writes Cisco mask spellings as FRR prints them.

The device layer's (NetConfBench's task files, its scores, the scripted agent and the observer's
reference end state all use it: docs/architecture.md, "Layers"); ``ani.netconfbench.commands``
is the same module.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = ["MODE_LINES", "block_text", "config_lines", "frr_spellings", "merge_solution"]

#: lines the harness sends itself around a solution: never part of it
MODE_LINES = re.compile(r"^(configure( terminal)?|conf( t)?|end|write( memory| file)?|wr|copy running-config startup-config)$")

_OPENERS = ("interface ", "router ", "route-map ", "key chain ", "line vty", "bfd", "pbr-map ", "vrf ")
_TOP = (
    "ip route ", "ipv6 route ", "ip prefix-list ", "ipv6 prefix-list ", "access-list ", "ipv6 access-list ",
    "ip community-list ", "bgp community-list ", "bgp large-community-list ", "bgp extcommunity-list ",
    "ip as-path ", "bgp as-path ", "hostname ", "ip forwarding", "ipv6 forwarding", "log ", "service ",
    "bgp route-map delay-timer", "password ", "enable password ", "banner ", "frr ",
)


def config_lines(commands: list[str]) -> list[str]:
    """``commands`` without blank lines and the mode lines of :data:`MODE_LINES`, stripped."""
    out = []
    for c in commands:
        s = " ".join(str(c).split())
        if s and not MODE_LINES.match(s):
            out.append(s)
    return out


def _is_top(line: str) -> bool:
    body = line[3:] if line.startswith("no ") else line
    return body.startswith(_TOP) or (line.startswith("no ") and body.startswith(_OPENERS))


def block_text(commands: list[str]) -> str:
    """The configuration text of ``commands`` (see the module doc): one line each, indented
    one space per open block; ``exit`` lines are kept out (indentation ends the blocks)."""
    out: list[str] = []
    depth = 0  # 0 top, 1 in a block, 2 in an address-family
    for line in config_lines(commands):
        if line in ("exit", "quit"):
            depth = max(0, depth - 1)
            continue
        if line == "exit-address-family":
            depth = min(depth, 1)
            continue
        if _is_top(line):
            out.append(line)
            depth = 0
            continue
        if line.startswith(_OPENERS):
            out.append(line)
            depth = 1
            continue
        if line.startswith("address-family ") and depth >= 1:
            out.append(" " + line)
            depth = 2
            continue
        out.append(" " * depth + line)
    return "\n".join(out) + ("\n" if out else "")


def frr_spellings(lines: Sequence[str]) -> list[str]:
    """Cisco mask spellings FRR prints as prefixes: ``ip route A M NH`` -> ``ip route A/len NH``,
    OSPF ``network A W area X`` -> ``network A/len area X``; other lines as they are."""
    from ipaddress import IPv4Network

    def prefix(addr: str, mask: str, wild: bool) -> str | None:
        try:
            if wild:
                mask = ".".join(str(255 - int(o)) for o in mask.split("."))
            return str(IPv4Network(f"{addr}/{mask}", strict=False))
        except ValueError:
            return None

    out = []
    for raw in lines:
        line = str(raw)
        m = re.match(r"^(\s*(?:no )?ip route )(\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+) (.*)$", line)
        if m and (p := prefix(m.group(2), m.group(3), False)):
            line = f"{m.group(1)}{p} {m.group(4)}"
        m = re.match(r"^(\s*(?:no )?network )(\d+\.\d+\.\d+\.\d+) (\d+\.\d+\.\d+\.\d+) (area .*)$", line)
        if m and (p := prefix(m.group(2), m.group(3), True)):
            line = f"{m.group(1)}{p} {m.group(4)}"
        out.append(line)
    return out


#: ``no`` lines FRR prints as statements of their own (a default switched off), not removals
_PRINTED_NEGATIONS = ("no bgp ", "no ip forwarding", "no ipv6 forwarding", "no service ")
_V4_UNDER_BGP = re.compile(r"^(network \S+$|redistribute |neighbor \S+ route-reflector-client$|neighbor \S+ route-map )")


def _leaves_first(node: Any, depth: int) -> list[str]:
    """A hier-config tree as indented text, each block's own lines before its sub-blocks (FRR's
    order: a BGP neighbor a solution adds is declared before the address family that names it)."""
    kids = list(node.children)
    out: list[str] = []
    for child in [k for k in kids if not k.children] + [k for k in kids if k.children]:
        out.append(" " * depth + child.text)
        out += _leaves_first(child, depth + 1)
    return out


def merge_solution(before: Any, lines: list[str], *, router: str, strict: bool = True) -> Any:
    """``before`` (a DeviceConfig, router ``router``) with a solution's ``lines`` merged in, as
    a DeviceConfig: the lines are indented into their blocks (:func:`block_text`) and merged
    with hier-config (FRR's driver, :class:`ani.device.remediation.FrrDriver`), Cisco mask
    spellings as FRR prints them (``ip route A M NH`` -> ``ip route A/len NH``); a ``no``
    line removes the lines it names in its block, and one that removes nothing and is a
    negation FRR prints (``no bgp ebgp-requires-policy``, ``no ip forwarding``: a default
    switched off) is kept as a line. ``strict``: raise ValueError naming the
    solution lines the device model cannot hold (it keeps them as ``unmodelled``; YANG at A2
    cannot carry them); also ValueError when the result is not a valid configuration."""
    from hier_config import get_hconfig

    from ani.device.parse import parse
    from ani.device.remediation import FrrDriver, frr_text

    conf = get_hconfig(FrrDriver(), frr_text(before))
    stack: list[Any] = [conf]
    for raw in block_text(frr_spellings(lines)).splitlines():  # 'ip route A M NH' as FRR prints it
        depth = len(raw) - len(raw.lstrip(" "))
        text = raw.strip()
        del stack[depth + 1:]
        parent = stack[min(depth, len(stack) - 1)]
        if text.startswith("no "):
            target = text[3:]
            gone = [c for c in parent.children if c.text == target or c.text.startswith(target + " ")]
            for child in gone:
                child.delete()
            if not gone and text.startswith(_PRINTED_NEGATIONS) and parent.get_child(equals=text) is None:
                parent.add_child(text)  # a default turned off: FRR prints the 'no' line itself
            continue
        child = parent.get_child(equals=text) or parent.add_child(text)
        stack.append(child)
    for bgp in list(conf.get_children(startswith="router bgp ")):
        # the ipv4-unicast statements FRR accepts directly under router bgp go where FRR
        # prints them (else one already in the address family is read twice)
        movers = [c for c in bgp.children if not c.children and _V4_UNDER_BGP.match(c.text)]
        if movers:
            af = bgp.get_child(equals="address-family ipv4 unicast") or bgp.add_child("address-family ipv4 unicast")
            for c in movers:
                if af.get_child(equals=c.text) is None:
                    af.add_child(c.text)
                c.delete()
    text = "\n".join(_leaves_first(conf, 0)) + "\n"
    try:
        want = parse(text)
    except ValueError as exc:
        raise ValueError(f"{router}: the solution gives an invalid configuration: {' '.join(str(exc).split())[:300]}") from None
    new = [u for u in want.unmodelled if u not in before.unmodelled and not u.startswith("nft / ")]
    if new and strict:
        raise ValueError(f"{router}: the device model (YANG at A2) cannot carry these solution lines: {'; '.join(new[:8])}")
    return want
