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
- a state that appears: ``shutdown`` (an interface), ``neighbor X shutdown``, ``no ip
  forwarding``.

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
]


def _read(text: str) -> tuple[set[str], set[tuple[str, str]]]:
    """(removal command of every object, (block, state command) of every destructive state)."""
    objects: set[str] = set()
    states: set[tuple[str, str]] = set()
    block = ""
    for line in text.splitlines():
        line = line.rstrip()
        if line and not line.startswith(" "):
            block = line
            if line == "no ip forwarding":
                states.add(("", line))
            for rx, cmd in _TOP:
                m = rx.match(line)
                if m:
                    objects.add(cmd(m))
            continue
        m = _NEIGHBOR_RE.match(line)
        if m and block.startswith("router bgp "):
            objects.add(f"{block}: no neighbor {m[1]}")
        for rx, kind, cmd in _STATES:
            m = rx.match(line)
            if m and block.startswith(kind):
                states.add((block, cmd(m)))
    return objects, states


def effective_commands(before: str, after: str) -> list[str]:
    """The destructive commands the change of running config ``before`` -> ``after`` amounts to
    (module doc), each as FRR would take it (``no neighbor X``, not the block it is in).

    >>> effective_commands("ip prefix-list PL seq 5 permit 10.0.0.0/8\\n", "")
    ['no ip prefix-list PL']
    """
    objs0, states0 = _read(before)
    objs1, states1 = _read(after)
    gone_routers = {o for o in objs0 - objs1 if o.startswith("no router ")}
    out = []
    for obj in sorted(objs0 - objs1):
        block, sep, cmd = obj.partition(": ")
        if sep and f"no {block}" in gone_routers:
            continue  # the neighbor went with its routing process (judged as that)
        out.append(cmd if sep else obj)
    out += sorted(cmd for _, cmd in states1 - states0)
    return out


def blocked_change(before: str, after: str, rules: list[tuple[re.Pattern[str], str]]) -> tuple[str, str, str] | None:
    """(command, rule pattern, reason) of the first blocklisted command the change amounts to."""
    for cmd in effective_commands(before, after):
        for rx, reason in rules:
            if rx.search(cmd):
                return cmd, rx.pattern, reason
    return None
