"""A solution's command list as FRR takes it: configuration-mode lines, and their blocks.

NetConfBench solutions (``ground_truth_configs[i].configs[device]``) are flat CLI command
lists, as typed at a router: ``["router bgp 65001", "neighbor 10.0.12.2 remote-as 65002",
"exit", "ip route 10.9.0.0/24 10.0.12.2"]``. :func:`config_lines` drops the mode lines the
harness enters and leaves itself (``configure terminal``, ``conf t``, ``end``, ``write ...``);
:func:`block_text` indents the list into FRR configuration text with its blocks (what
``show running-config`` prints), following vtysh's rules: ``interface``, ``router``,
``route-map``, ``key chain`` ... open a block, ``address-family`` a block inside ``router``,
``exit`` / ``exit-address-family`` close one, and a command of the top level (``ip route``,
``ip prefix-list``, ``hostname``, ...) leaves every block (vtysh falls back to the parent nodes).
"""

from __future__ import annotations

import re

__all__ = ["MODE_LINES", "block_text", "config_lines"]

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
