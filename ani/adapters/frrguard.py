"""What an FRR configuration change amounts to, for the blocklist ablation's judgement of effects.

The blocklist names destructive commands (``no ip prefix-list NAME``, ``no route-map NAME``,
``no router bgp N``, ``no neighbor X``, ``shutdown``, ...). The same effect can be had without
that command: removing every entry of a prefix-list or route-map one by one (``no ip
prefix-list PL seq 5``, ``no route-map RM permit 10``) removes the object as ``no ip prefix-list
PL`` does. So the ablation also judges effects: :func:`effective_commands` reads two running
configurations (before and after a call) and writes the change as the commands it amounts to,
which are then matched against the same rules (:func:`blocked_change`):

- an object present before and absent after, as the command that removes it whole: ``no ip
  prefix-list NAME``, ``no ipv6 prefix-list NAME``, ``no route-map NAME``, ``no router bgp N
  [vrf V]``, ``no router ospf``, ``no router ospf6``, ``no neighbor X`` (a BGP neighbor or peer
  group of a routing process still present);
- a state that appears: ``shutdown`` (an interface), ``neighbor X shutdown``, ``bgp
  shutdown`` (every session of the instance), ``no ip forwarding``;
- a neighbor deactivated in an address family (every route of that family withdrawn) as ``no
  neighbor X activate``: the line ``no neighbor X activate`` appears (a family active by default,
  ipv4 unicast unless ``no bgp default ipv4-unicast``), or an explicit ``neighbor X activate``
  goes while X stays a neighbor and the family is not active by default (a line that goes
  because the family became active by default is no deactivation).

Interfaces are not objects here: an interface whose last configuration line is removed leaves
the running configuration although it still exists (``no interface`` is judged by its shape).
"""

from __future__ import annotations

import re

_TOP = [
    (re.compile(r"^(ip|ipv6) prefix-list (\S+) "), lambda m: f"no {m[1]} prefix-list {m[2]}"),
    (re.compile(r"^route-map (\S+) (?:permit|deny) "), lambda m: f"no route-map {m[1]}"),
    (re.compile(r"^router (bgp \S+(?: vrf \S+)?|ospf6?)\s*$"), lambda m: f"no router {m[1]}"),
]
_NEIGHBOR_RE = re.compile(r"^ neighbor (\S+) (?:remote-as|peer-group|interface)\b")
_STATES = [
    (re.compile(r"^ shutdown$"), "interface", lambda m: "shutdown"),
    (re.compile(r"^ neighbor (\S+) shutdown\b"), "router bgp", lambda m: f"neighbor {m[1]} shutdown"),
    (re.compile(r"^ bgp shutdown\b"), "router bgp", lambda m: "bgp shutdown"),
    (re.compile(r"^  no neighbor (\S+) activate$"), "router bgp", lambda m: f"no neighbor {m[1]} activate"),
]
_ACTIVATE_RE = re.compile(r"^  neighbor (\S+) activate$")
_AF_RE = re.compile(r"^ address-family (.+?)\s*$")
#: ``bgp default ipv4-unicast`` and its siblings: the families a neighbor is active in unless
#: deactivated (FRR 8.4: ipv4 unicast on unless ``no bgp default ipv4-unicast``)
_DEFAULT_RE = re.compile(r"^ (no )?bgp default (ipv[46])-(unicast|multicast)$")


class _Reading:
    """One running configuration, read for :func:`effective_commands`."""

    def __init__(self) -> None:
        self.objects: set[str] = set()                    # removal command of every object
        self.states: set[tuple[str, str]] = set()         # (block, state command)
        self.activated: set[tuple[str, str, str]] = set()  # (block, family, neighbor) explicit
        self.defaults: dict[str, set[str]] = {}           # block -> families active by default


def _bgp_line(rd: _Reading, block: str, family: str, line: str) -> None:
    m = _ACTIVATE_RE.match(line)
    if m and family:
        rd.activated.add((block, family, m[1]))
    m = _DEFAULT_RE.match(line)
    if m:
        fams = rd.defaults.setdefault(block, {"ipv4 unicast"})
        (fams.discard if m[1] else fams.add)(f"{m[2]} {m[3]}")


def _read(text: str) -> _Reading:
    """Every object (its removal command), destructive state and explicit activation of ``text``."""
    rd = _Reading()
    block = family = ""
    for line in text.splitlines():
        line = line.rstrip()
        if line and not line.startswith(" "):
            block, family = line, ""
            if line == "no ip forwarding":
                rd.states.add(("", line))
            for rx, cmd in _TOP:
                m = rx.match(line)
                if m:
                    rd.objects.add(cmd(m))
            continue
        m = _AF_RE.match(line)
        if m or line == " exit-address-family":
            family = m[1] if m else ""
        if block.startswith("router bgp "):
            _bgp_line(rd, block, family, line)
            m = _NEIGHBOR_RE.match(line)
            if m:
                rd.objects.add(f"{block}: no neighbor {m[1]}")
        for rx, kind, cmd in _STATES:
            m = rx.match(line)
            if m and block.startswith(kind):
                rd.states.add((block, cmd(m)))
    return rd


def _was_there(r0: _Reading, block: str, cmd: str) -> bool:
    """A ``no neighbor X activate`` state counts for a neighbor that existed before (a new
    neighbor configured inactive withdraws nothing); every other state counts."""
    m = re.match(r"no neighbor (\S+) activate$", cmd)
    return m is None or f"{block}: no neighbor {m[1]}" in r0.objects


def _deactivated(r0: _Reading, r1: _Reading) -> set[tuple[str, str]]:
    """(block, ``no neighbor X activate``) of an explicit activation gone while X stays a
    neighbor and the family is not active by default after."""
    out = set()
    for block, family, peer in r0.activated - r1.activated:
        if f"{block}: no neighbor {peer}" in r1.objects and \
                family not in r1.defaults.get(block, {"ipv4 unicast"}):
            out.add((block, f"no neighbor {peer} activate"))
    return out


def effective_commands(before: str, after: str) -> list[str]:
    """The destructive commands the change of running config ``before`` -> ``after`` amounts to
    (module doc), each as FRR would take it (``no neighbor X``, not the block it is in).

    >>> effective_commands("ip prefix-list PL seq 5 permit 10.0.0.0/8\\n", "")
    ['no ip prefix-list PL']
    """
    r0, r1 = _read(before), _read(after)
    objs0, objs1 = r0.objects, r1.objects
    gone_routers = {o for o in objs0 - objs1 if o.startswith("no router ")}
    out = []
    for obj in sorted(objs0 - objs1):
        block, sep, cmd = obj.partition(": ")
        if sep and f"no {block}" in gone_routers:
            continue  # the neighbor went with its routing process (judged as that)
        out.append(cmd if sep else obj)
    out += sorted({cmd for block, cmd in (r1.states - r0.states) | _deactivated(r0, r1)
                   if _was_there(r0, block, cmd)})
    return out


def blocked_change(before: str, after: str, rules: list[tuple[re.Pattern[str], str]]) -> tuple[str, str, str] | None:
    """(command, rule pattern, reason) of the first blocklisted command the change amounts to."""
    for cmd in effective_commands(before, after):
        for rx, reason in rules:
            if rx.search(cmd):
                return cmd, rx.pattern, reason
    return None
