"""The topology file: routers, hosts, links, FRR daemons and startup configs.

A topology is YAML validated by pydantic; errors name the bad field, e.g.
``links.3.b.node: unknown node 'e9' (known: c1, c2, e1, ...)``.

A *scenario* file (see ``ani.scenario``) embeds a topology under the key
``topology:``; :func:`load_topology` accepts either form (of a scenario file it reads the
topology only; :func:`ani.scenario.read_topology` validates the whole file).

Example::

    name: two-routers
    routers:
      r1:
        daemons: [zebra, staticd, ospfd, bgpd]
        config: |
          frr defaults traditional
          hostname r1
          interface lo
           ip address 100.64.255.1/32
          ...
    hosts:
      h1: {gateway: 198.18.1.1}
    links:
      - a: {node: r1, ifname: eth-h1}
        b: {node: h1, ifname: eth0, address: 198.18.1.10/24}

Router interface addresses belong in the router's FRR ``config`` (FRR is the
router's truth, so ``show running-config`` shows them); a host endpoint must
carry an ``address``.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Interface
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ani import validation
from ani.errors import TopologyError

NODE_NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,9}$")
IFNAME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9_.-]{0,14}$")

Daemon = Literal["zebra", "staticd", "bgpd", "ospfd", "ospf6d", "ripd", "isisd", "bfdd", "pbrd"]

#: daemons every router runs whatever the file says (zebra owns the kernel, staticd static routes)
BASE_DAEMONS: tuple[str, ...] = ("zebra", "staticd")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RouterSpec(_Strict):
    """A router: a network namespace running FRR daemons.

    Attributes:
        daemons: FRR daemons to run; ``zebra`` and ``staticd`` are always added.
        config: FRR startup configuration (``frr.conf`` text), loaded with ``vtysh -b``.
        nftables: optional nftables ruleset (``nft -f`` text) loaded at start.
    """

    daemons: list[Daemon] = Field(default_factory=list, validate_default=True)
    config: str = ""
    nftables: str = ""

    @field_validator("daemons")
    @classmethod
    def _with_base(cls, v: list[str]) -> list[str]:
        out = list(BASE_DAEMONS)
        for d in v:
            if d not in out:
                out.append(d)
        return out


class HostSpec(_Strict):
    """A host (tenant site): a network namespace without FRR.

    Attributes:
        gateway: default route next hop, or None for no default route.
    """

    gateway: IPv4Address | None = None


class Endpoint(_Strict):
    """One end of a veth link: ``node``'s interface ``ifname`` (max 15 chars)."""

    node: str
    ifname: str
    address: IPv4Interface | None = None

    @field_validator("ifname")
    @classmethod
    def _check_ifname(cls, v: str) -> str:
        if not IFNAME_RE.match(v) or v == "lo":
            raise ValueError(f"interface name {v!r} must match {IFNAME_RE.pattern} and not be 'lo'")
        return v


class LinkSpec(_Strict):
    """A point-to-point veth link between two nodes."""

    a: Endpoint
    b: Endpoint


class ConvergenceSpec(_Strict):
    """How long ``Lab.up()`` waits for routing to converge.

    Attributes:
        timeout_s: bound on the wait, seconds.
        ospf: wait for every OSPF adjacency implied by the links to be Full.
        bgp: wait for every configured BGP neighbor to be Established.
        required: a timeout is an error (``ConvergenceTimeout``); False: ``up()`` returns after
            ``timeout_s`` with what is still pending in ``Lab.unconverged`` (an imported task
            whose startup state is broken on purpose). Left out of dumps when True.
    """

    timeout_s: float = Field(default=30.0, gt=0)
    ospf: bool = True
    bgp: bool = True
    required: bool = Field(default=True, exclude_if=lambda v: v is True)


class Topology(_Strict):
    """A lab topology. Node names: ``^[a-z][a-z0-9]{0,9}$``, unique across routers and hosts."""

    name: str = "lab"
    routers: dict[str, RouterSpec]
    hosts: dict[str, HostSpec] = Field(default_factory=dict)
    links: list[LinkSpec] = Field(default_factory=list)
    convergence: ConvergenceSpec = Field(default_factory=ConvergenceSpec)
    #: original names of nodes / interfaces the lab renamed (an imported NetConfBench task,
    #: :mod:`ani.netconfbench.names`): ``{node: original, "node:ifname": original}``; shown by
    #: ``get_topology``; left out of dumps when empty (scenario hashes stay as they were)
    aliases: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)

    @model_validator(mode="after")
    def _check_refs(self) -> Topology:
        errors: list[str] = []
        for name in list(self.routers) + list(self.hosts):
            if not NODE_NAME_RE.match(name):
                errors.append(f"node name {name!r} must match {NODE_NAME_RE.pattern}")
        dup = set(self.routers) & set(self.hosts)
        if dup:
            errors.append(f"names used both as router and host: {sorted(dup)}")
        known = sorted(set(self.routers) | set(self.hosts))
        seen: dict[tuple[str, str], str] = {}
        for i, link in enumerate(self.links):
            for side in ("a", "b"):
                ep: Endpoint = getattr(link, side)
                where = f"links.{i}.{side}"
                if ep.node not in self.routers and ep.node not in self.hosts:
                    errors.append(f"{where}.node: unknown node {ep.node!r} (known: {', '.join(known)})")
                    continue
                key = (ep.node, ep.ifname)
                if key in seen:
                    errors.append(f"{where}.ifname: {ep.node}:{ep.ifname} already used by {seen[key]}")
                seen[key] = where
                if ep.node in self.hosts and ep.address is None:
                    errors.append(f"{where}.address: host endpoint {ep.node}:{ep.ifname} needs an address")
            if link.a.node == link.b.node:
                errors.append(f"links.{i}: both ends on node {link.a.node!r}")
        for key in self.aliases:
            node, _, ifname = key.partition(":")
            if node not in self.routers and node not in self.hosts:
                errors.append(f"aliases.{key}: unknown node {node!r}")
            elif ifname and all(local.ifname != ifname for local, _r in self.links_of(node)):
                errors.append(f"aliases.{key}: {node} has no interface {ifname!r}")
        if errors:
            raise ValueError("; ".join(errors))
        return self

    # -- queries -------------------------------------------------------------------------------

    @property
    def nodes(self) -> list[str]:
        """Router names then host names, in file order."""
        return list(self.routers) + list(self.hosts)

    def is_router(self, node: str) -> bool:
        return node in self.routers

    def links_of(self, node: str) -> list[tuple[Endpoint, Endpoint]]:
        """``(local, remote)`` endpoint pairs of every link touching ``node``."""
        out = []
        for link in self.links:
            if link.a.node == node:
                out.append((link.a, link.b))
            elif link.b.node == node:
                out.append((link.b, link.a))
        return out

    def peer_of(self, node: str, ifname: str) -> Endpoint | None:
        """The remote endpoint of ``node``'s interface ``ifname``, or None."""
        for local, remote in self.links_of(node):
            if local.ifname == ifname:
                return remote
        return None

    def merged(self, extra: dict[str, Any], *, source: str | None = None) -> Topology:
        """A new topology with ``extra``'s routers, hosts and links added.

        Args:
            extra: ``{"routers": {...}, "hosts": {...}, "links": [...]}`` in the file's form (each
                key optional); its links may attach to nodes of this topology (e.g. a new site
                linked to an existing edge router).
            source: name used in error messages.

        Raises TopologyError on a node name already used or an invalid result (names the field).
        """
        new = set(extra.get("routers", {})) | set(extra.get("hosts", {}))
        clash = (set(self.routers) | set(self.hosts)) & new
        if clash:
            raise TopologyError(f"merged topology: node names already used: {sorted(clash)}")
        data = self.model_dump(mode="json")
        data["routers"].update(extra.get("routers", {}))
        data["hosts"].update(extra.get("hosts", {}))
        data["links"].extend(extra.get("links", []))
        return parse_topology(data, source=source or f"{self.name}+extra")


def parse_topology(data: Any, *, source: str = "<topology>") -> Topology:
    """Validate a mapping as a :class:`Topology`. Raises TopologyError naming the bad field."""
    return validation.validate_mapping(Topology, data, source=source, what="topology", error=TopologyError)


def load_yaml(path: str | Path) -> Any:
    """Read a YAML file. Raises TopologyError if it is missing or not YAML."""
    return validation.load_yaml(path, TopologyError)


#: the files ``ani lab up`` is given that hold no topology of their own to start as they are
NCB_TASK, NCB_TEMPLATE, CAMPAIGN = "netconfbench task", "netconfbench template", "campaign"


def other_kind(data: Any) -> str | None:
    """What a parsed file is when it is none of a topology, a scenario file or a manifest:
    :data:`NCB_TASK` (a mapping with ``topology`` and ``startup_configs``, draft §4.1),
    :data:`NCB_TEMPLATE` (a task template: ``parameters``), :data:`CAMPAIGN` (``cells``), else
    None. Keys only: nothing of the file's content is repeated anywhere."""
    if not isinstance(data, dict):
        return None
    if "parameters" in data and ("startup_configs" in data or "testcases" in data):
        return NCB_TEMPLATE
    if "startup_configs" in data and "topology" in data:
        return NCB_TASK
    if "cells" in data and "routers" not in data:
        return CAMPAIGN
    return None


def not_a_topology(kind: str, path: str | Path) -> str:
    """What to do with a file of ``kind`` (:func:`other_kind`) given where a topology is read."""
    if kind == NCB_TASK:
        return ("this is a NetConfBench task, not a topology or scenario file: start its lab with "
                f"'ani lab up {path}' (in Python: ani.netconfbench.lab.task_scenario(load_task(path)).topology)")
    if kind == NCB_TEMPLATE:
        return ("this is a NetConfBench task template, not a topology: instantiate it first "
                f"(ani tasks instantiate {path} --seed 1 --out task.json), then start that task's lab "
                "with 'ani lab up task.json'")
    return (f"this is a campaign file, not a topology or scenario file: run it with 'ani campaign run {path}' "
            "(each run starts its own lab); to start its scenario's lab, give that scenario file to ani lab up")


def is_manifest(data: Any) -> bool:
    """Whether a parsed YAML document is a scenario manifest (``layers:``, or a ``topology:`` of
    counts) rather than a scenario file (a ``topology:`` with ``routers:``)."""
    if not isinstance(data, dict):
        return False
    topo = data.get("topology")
    return "layers" in data or (isinstance(topo, dict) and "routers" not in topo)


def read_topology_document(path: str | Path) -> tuple[str | Path, Any]:
    """The parsed YAML of a topology or scenario file and the path it was read from (a path that
    does not exist is looked up among the shipped data files, as for scenarios).

    Raises TopologyError (file missing or not YAML; a NetConfBench task or template, a campaign
    file or a scenario manifest: says what it is and the command that takes it,
    :func:`other_kind`)."""
    from ani.resources import resolve

    try:
        path = resolve(path)
    except FileNotFoundError:
        pass  # load_yaml names the file it cannot read
    data = load_yaml(path)
    if (kind := other_kind(data)) is not None:
        raise TopologyError(f"{path}: {not_a_topology(kind, path)}")
    if is_manifest(data):
        raise TopologyError(f"{path}: this is a scenario manifest, not a scenario file: generate one first "
                            f"(ani scenario generate {path} --seed N) and start that")
    return path, data


def load_topology(path: str | Path) -> Topology:
    """Load a topology file, or the topology of a scenario file (its ``topology:`` mapping).

    Only the topology is read and validated: the lab needs nothing else of a scenario file, and
    the lab layer does not read scenarios (docs/architecture.md, "Layers"). To refuse a scenario
    file whose tenants or pools are wrong as well, as ``ani lab up``, ``ani run`` and ``ani
    campaign run`` do, read it with :func:`ani.scenario.read_topology`.

    Raises TopologyError (:func:`read_topology_document`; the topology invalid: names the bad
    field).
    """
    path, data = read_topology_document(path)
    if isinstance(data, dict) and "topology" in data:
        # errors named as in the file (``topology.links.0.a.node``), as the whole file's would be
        return validation.validate_mapping(_TopologySection, data, source=str(path), what="scenario",
                                           error=TopologyError, split_nested=True).topology
    return parse_topology(data, source=str(path))


class _TopologySection(BaseModel):
    """The ``topology:`` of a scenario file; its other keys are the scenario's, not read here."""

    model_config = ConfigDict(extra="ignore")

    topology: Topology
