"""The name map of an imported task: NetConfBench names -> names the lab can use.

A NetConfBench topology names its devices and interfaces as the emulator it was written for
did (``NewYork``, ``GigabitEthernet0/0``); the lab needs node names matching
``^[a-z][a-z0-9]{0,9}$`` and Linux interface names (at most 15 characters, no ``/``, not
``lo``: :data:`ani.lab.topology.IFNAME_RE`). :func:`build_name_map` keeps every name the lab
can use as it is and maps the others::

    names = build_name_map(["NewYork", "r2"], [NcbLink("NewYork", "Gi0/0", "r2", "eth0")])
    names.nodes          # {"NewYork": "newyork", "r2": "r2"}
    names.interfaces     # {"NewYork": {"Gi0/0": "gi0-0"}, "r2": {"eth0": "eth0"}}
    names.lab_node("NewYork")             -> "newyork"
    names.rewrite("NewYork", "interface Gi0/0\\n ip address ...")   # -> "interface gi0-0 ..."
    names.aliases()      # {"newyork": "NewYork", "newyork:gi0-0": "Gi0/0"} (Topology.aliases)
    names.note()         # the lines appended to the agent's request when anything is mapped
    names.inverse()      # lab -> task names: .rewrite("newyork", lab text) speaks the task's names
    NameMap.from_aliases(lab.topology.aliases, lab.routers)   # the map a running lab was built with

Rules: a node name is lowercased and stripped to ``[a-z0-9]`` (cut to 10 characters; a
leading digit gets an ``r``); if that clashes or is empty, ``r1``, ``r2``, ... An interface
name keeps its lowercased letters (at most 2) and its digits and separators with ``/`` and
``:`` as ``-`` (``GigabitEthernet0/0`` -> ``gi0-0``, ``Serial0/1/0`` -> ``se0-1-0``); if that
is not a valid Linux name or clashes on the node, ``eth1``, ``eth2``, ... Mapping is
deterministic in the node and link order of the task.

:meth:`NameMap.rewrite` rewrites configuration and command text of one device: its interface
names wherever they stand as a whole token, and ``hostname <original>``. It is used on the
startup configs, the solutions' commands, and the testcases' commands and expected output
(regular expressions: an interface name in them is rewritten as a literal). Text already in
the lab's names is left as it is (a mapped name's lab name is never a name the task uses on
that node), so rewriting twice is rewriting once. :meth:`NameMap.inverse` is the map the other
way: what the lab prints (a running config, a testcase's output), in the task's names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ani.lab.topology import IFNAME_RE, NODE_NAME_RE

__all__ = ["NameMap", "build_name_map"]

#: characters that may continue an interface name token (so ``Gi0/0`` is not found in ``Gi0/0.10``)
_TOKEN_CHARS = r"A-Za-z0-9_./:-"


class NameMap(BaseModel):
    """Original -> lab names of one task (see the module doc).

    Attributes:
        nodes: ``{original node: lab node}``, every node of the task.
        interfaces: ``{original node: {original interface: lab interface}}``, every interface
            named by a link.
    """

    model_config = ConfigDict(frozen=True)

    nodes: dict[str, str] = Field(default_factory=dict)
    interfaces: dict[str, dict[str, str]] = Field(default_factory=dict)

    @property
    def mapped(self) -> bool:
        """Whether any name differs from the lab's."""
        return any(k != v for k, v in self.nodes.items()) or any(
            k != v for ifs in self.interfaces.values() for k, v in ifs.items()
        )

    def lab_node(self, node: str) -> str:
        """The lab's name of ``node`` (an original name; a lab name is returned as it is).
        Raises KeyError for a name that is neither."""
        if node in self.nodes:
            return self.nodes[node]
        if node in self.nodes.values():
            return node
        raise KeyError(node)

    def original_node(self, lab_node: str) -> str:
        """The original name of the lab's node ``lab_node`` (itself if unknown)."""
        for orig, lab in self.nodes.items():
            if lab == lab_node:
                return orig
        return lab_node

    def rewrite(self, node: str, text: str) -> str:
        """``text`` (config or commands of original ``node``) with the node's interface names
        and its ``hostname`` line in the lab's names."""
        ifs = {k: v for k, v in self.interfaces.get(node, {}).items() if k != v}
        if ifs:
            # longest first, so "Gi0/0" never rewrites the start of "Gi0/0/1"
            alts = "|".join(re.escape(k) for k in sorted(ifs, key=len, reverse=True))
            rx = re.compile(rf"(?<![{_TOKEN_CHARS}])({alts})(?![{_TOKEN_CHARS}])")
            text = rx.sub(lambda m: ifs[m.group(1)], text)
        lab = self.nodes.get(node)
        if lab is not None and lab != node:
            text = re.sub(rf"(?m)^(\s*hostname\s+){re.escape(node)}\s*$", rf"\g<1>{lab}", text)
        return text

    def inverse(self) -> NameMap:
        """The map lab -> task names (``nodes`` and ``interfaces`` keyed by the lab's names):
        ``inverse().rewrite(lab_node, text)`` is the lab's text of ``lab_node`` (its running
        config, a command's output) with that node's interface names and its ``hostname`` line
        in the task's names; ``inverse().nodes.get(lab_node, lab_node)`` its task name."""
        return NameMap(nodes={lab: orig for orig, lab in self.nodes.items()},
                       interfaces={self.nodes.get(n, n): {lab: orig for orig, lab in ifs.items()}
                                   for n, ifs in self.interfaces.items()})

    @classmethod
    def from_aliases(cls, aliases: dict[str, str], routers: Iterable[str]) -> NameMap:
        """The map a lab was built with, from its topology's ``aliases`` (:meth:`aliases`' form:
        ``{lab node: task name, "lab node:lab interface": task interface}``) and its
        ``routers`` (lab names). A router without an alias keeps its name; only the mapped
        interfaces are listed (the others have one name). A lab without aliases: identity."""
        nodes = {aliases.get(r, r): r for r in routers}
        interfaces: dict[str, dict[str, str]] = {}
        for key, orig_if in aliases.items():
            lab_node, sep, lab_if = key.partition(":")
            if sep:
                interfaces.setdefault(aliases.get(lab_node, lab_node), {})[orig_if] = lab_if
        return cls(nodes=nodes, interfaces=interfaces)

    def aliases(self) -> dict[str, str]:
        """``{lab node: original, "lab node:lab interface": original}`` for the names that
        differ (the form of :attr:`ani.lab.topology.Topology.aliases`)."""
        out: dict[str, str] = {}
        for orig, lab in self.nodes.items():
            if orig != lab:
                out[lab] = orig
        for node, ifs in self.interfaces.items():
            for orig, lab in ifs.items():
                if orig != lab:
                    out[f"{self.nodes.get(node, node)}:{lab}"] = orig
        return out

    def note(self) -> str:
        """The note appended to the agent's request: one line per mapped name ('' when none)."""
        if not self.mapped:
            return ""
        lines = ["Note: this lab names some devices and interfaces differently from the task "
                 "(use the lab's names in every tool call):"]
        for orig, lab in self.nodes.items():
            if orig != lab:
                lines.append(f"- device {orig} is {lab}")
        for node, ifs in self.interfaces.items():
            for orig, lab in ifs.items():
                if orig != lab:
                    lines.append(f"- interface {orig} of {node} is {lab} on {self.nodes.get(node, node)}")
        return "\n".join(lines)


def _node_candidate(name: str) -> str:
    c = re.sub(r"[^a-z0-9]", "", name.lower())
    if c and c[0].isdigit():
        c = "r" + c
    return c[:10]


def _if_candidate(name: str) -> str:
    m = re.match(r"^([A-Za-z]+)(.*)$", name)
    if not m:
        return ""
    letters, rest = m.groups()
    rest = re.sub(r"[/:]", "-", rest)
    return (letters[:2].lower() + rest) if rest else letters.lower()


def _valid_if(name: str) -> bool:
    return bool(IFNAME_RE.match(name)) and name != "lo"


def _assign(names: list[str], valid: Any, candidate: Any, prefix: str) -> dict[str, str]:
    """``{name: lab name}``: a ``valid`` name stays; another becomes its ``candidate`` if that
    is valid and free, else ``<prefix>1``, ``<prefix>2``, ... (the first free)."""
    taken = {n for n in names if valid(n)}
    out = {n: n for n in names if valid(n)}
    for n in names:
        if n in out:
            continue
        c = candidate(n)
        if not (c and valid(c) and c not in taken):
            i = 1
            while f"{prefix}{i}" in taken:
                i += 1
            c = f"{prefix}{i}"
        out[n] = c
        taken.add(c)
    return {n: out[n] for n in names}


def build_name_map(nodes: Iterable[str], links: Iterable[Any]) -> NameMap:
    """The name map of a task with ``nodes`` (original names, in order) and ``links`` (objects
    with ``a``, ``a_if``, ``b``, ``b_if``: :class:`ani.netconfbench.task.NcbLink`). A name the
    lab can use stays (see the module doc for the rules)."""
    node_map = _assign(list(nodes), lambda n: bool(NODE_NAME_RE.match(n)), _node_candidate, "r")
    ifaces: dict[str, list[str]] = {}
    for link in links:
        for node, ifname in ((link.a, link.a_if), (link.b, link.b_if)):
            lst = ifaces.setdefault(node, [])
            if ifname not in lst:
                lst.append(ifname)
    if_map = {node: _assign(names, _valid_if, _if_candidate, "eth") for node, names in ifaces.items()}
    return NameMap(nodes=node_map, interfaces=if_map)
