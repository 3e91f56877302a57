"""Scenario files: a topology, the tenants whose sites live on it, and address pools.

::

    name: brownfield-small
    description: ...
    topology: {routers: ..., hosts: ..., links: ...}       # an ani topology (ani.lab.topology)
    tenants:
      blue:
        sites:
          - {host: blue1, edge: e1, prefix: 198.18.11.0/24, gateway: 198.18.11.1}
    pools:
      sites: {network: 198.19.0.0/16, prefixlen: 24}       # where new sites get their prefix
    generated: {manifest: default, seed: 7, density: 4}    # optional: how it was generated
    invariants: [{kind: reach, src: blue1, ...}, ...]     # optional: its baseline invariants

``load_scenario`` validates everything (errors name the bad field, e.g.
``tenants.blue.sites.0.edge: unknown router 'e9'``) and raises TopologyError.
The baseline invariants (``scenario.invariants``) are the file's ``invariants:`` list when it
has one (a generated scenario, ``ani.scenario.generate``), else computed from the content
(``ani.scenario.invariants``).
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cached_property
from ipaddress import IPv4Address, IPv4Network
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ani.device.model import DeviceConfig
from ani.device.parse import parse as parse_frr_config
from ani.errors import TopologyError
from ani.lab.topology import Topology, load_yaml
from ani.observer.checks import Check
from ani.validation import validate_mapping

TENANT_RE = re.compile(r"^[a-z][a-z0-9_]{0,15}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Site(_Strict):
    """A tenant site: ``host`` attached to router ``edge``; ``prefix`` with ``gateway`` on the edge."""

    host: str
    edge: str
    prefix: IPv4Network
    gateway: IPv4Address


class Tenant(_Strict):
    """A tenant and its sites."""

    sites: list[Site] = Field(min_length=1)


class Pool(_Strict):
    """An address pool: ``network`` carved into ``/prefixlen`` blocks."""

    network: IPv4Network
    prefixlen: int = Field(default=24, ge=8, le=30)

    @model_validator(mode="after")
    def _fits(self) -> Pool:
        if self.prefixlen < self.network.prefixlen:
            raise ValueError(f"prefixlen {self.prefixlen} is shorter than the network /{self.network.prefixlen}")
        return self


class Generated(_Strict):
    """``generated:`` of a generated scenario: the manifest's name, the seed and the density."""

    manifest: str
    seed: int = Field(ge=0)
    density: int = Field(ge=0)


class Scenario(_Strict):
    """A brownfield: topology, tenants, pools; see the module doc.

    Attributes:
        invariants: baseline invariants (list of checks): the file's ``invariants:`` if it has
            them (``listed_invariants``), else computed from the content.
        hash: sha256 hex of the canonical JSON form of the content (a file without
            ``generated:`` / ``invariants:`` hashes as it did before they existed).
    """

    model_config = ConfigDict(extra="forbid", ignored_types=(cached_property,), populate_by_name=True)

    name: str
    description: str = ""
    topology: Topology
    tenants: dict[str, Tenant]
    pools: dict[str, Pool] = Field(default_factory=dict)
    generated: Generated | None = None
    listed_invariants: list[Check] | None = Field(default=None, alias="invariants")

    @model_validator(mode="after")
    def _check_tenants(self) -> Scenario:
        errors: list[str] = []
        topo = self.topology
        seen_hosts: dict[str, str] = {}
        prefixes: list[tuple[IPv4Network, str]] = []
        for tname, tenant in self.tenants.items():
            if not TENANT_RE.match(tname):
                errors.append(f"tenants.{tname}: tenant name must match {TENANT_RE.pattern}")
            for i, site in enumerate(tenant.sites):
                where = f"tenants.{tname}.sites.{i}"
                if site.host not in topo.hosts:
                    errors.append(f"{where}.host: unknown host {site.host!r} (hosts: {', '.join(topo.hosts)})")
                    continue
                if site.host in seen_hosts:
                    errors.append(f"{where}.host: {site.host!r} already a site of {seen_hosts[site.host]}")
                seen_hosts[site.host] = where
                if site.edge not in topo.routers:
                    errors.append(f"{where}.edge: unknown router {site.edge!r} (routers: {', '.join(topo.routers)})")
                    continue
                ends = [(loc, rem) for loc, rem in topo.links_of(site.host) if rem.node == site.edge]
                if not ends:
                    errors.append(f"{where}: no link between {site.host} and {site.edge}")
                    continue
                addr = ends[0][0].address
                if addr is None or addr.ip not in site.prefix:
                    errors.append(f"{where}.prefix: host address {addr} is not in {site.prefix}")
                if site.gateway not in site.prefix:
                    errors.append(f"{where}.gateway: {site.gateway} is not in {site.prefix}")
                hgw = topo.hosts[site.host].gateway
                if hgw != site.gateway:
                    errors.append(f"{where}.gateway: host {site.host} routes via {hgw}, not {site.gateway}")
                for other, owner in prefixes:
                    if site.prefix.overlaps(other):
                        errors.append(f"{where}.prefix: {site.prefix} overlaps {other} of {owner}")
                prefixes.append((site.prefix, where))
        for pname, pool in self.pools.items():
            for other, owner in prefixes:
                if pool.network.overlaps(other):
                    errors.append(f"pools.{pname}.network: {pool.network} overlaps {other} of {owner}")
        if errors:
            raise ValueError("; ".join(errors))
        return self

    # -- derived -----------------------------------------------------------------------------

    @property
    def sites(self) -> list[tuple[str, Site]]:
        """``(tenant, site)`` for every site, in file order."""
        return [(t, s) for t, ten in self.tenants.items() for s in ten.sites]

    @property
    def edges(self) -> list[str]:
        """Routers that carry at least one tenant site, in topology order."""
        used = {s.edge for _t, s in self.sites}
        return [r for r in self.topology.routers if r in used]

    def host_address(self, host: str) -> IPv4Address:
        """Address of ``host``'s first link. Raises KeyError for an unknown host."""
        for local, _remote in self.topology.links_of(host):
            if local.address is not None:
                return local.address.ip
        raise KeyError(host)

    @cached_property
    def device_configs(self) -> dict[str, DeviceConfig]:
        """``{router: its startup config as an ani.device model}``.

        Raises TopologyError naming the router if its config has a value FRR would refuse.
        """
        out = {}
        for name, spec in self.topology.routers.items():
            try:
                out[name] = parse_frr_config(spec.config)
            except ValueError as exc:
                raise TopologyError(f"routers.{name}.config: {exc}") from None
        return out

    def loopbacks(self) -> dict[str, IPv4Address]:
        """``{router: loopback address}`` for routers whose config gives ``interface lo`` an address."""
        out = {}
        for name, cfg in self.device_configs.items():
            lo = cfg.interfaces.get("lo")
            if lo is not None and lo.addresses:
                out[name] = lo.addresses[0].ip
        return out

    def used_networks(self) -> list[IPv4Network]:
        """Every network the scenario already uses: router interfaces, host links, site prefixes."""
        nets: list[IPv4Network] = []
        for cfg in self.device_configs.values():
            for iface in cfg.interfaces.values():
                nets.extend(a.network for a in iface.addresses)
        for link in self.topology.links:
            for ep in (link.a, link.b):
                if ep.address is not None:
                    nets.append(ep.address.network)
        nets.extend(s.prefix for _t, s in self.sites)
        return nets

    @cached_property
    def invariants(self) -> list[Check]:
        if self.listed_invariants is not None:
            return list(self.listed_invariants)
        from ani.scenario.invariants import baseline_invariants

        return baseline_invariants(self)

    @cached_property
    def hash(self) -> str:
        data = self.model_dump(mode="json", by_alias=True)
        for key in ("generated", "invariants"):  # absent keys leave the hash of older files as it was
            if data.get(key) is None:
                data.pop(key, None)
        canon = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()


def parse_scenario(data: Any, *, source: str = "<scenario>") -> Scenario:
    """Validate a mapping as a :class:`Scenario`. Raises TopologyError naming the bad field."""
    # split_nested: the topology's own "links.3.b.node: ...; ..." list, under "topology."
    return validate_mapping(
        Scenario, data, source=source, what="scenario", error=TopologyError, split_nested=True
    )


def read_topology(path: str | Path) -> Topology:
    """The topology of a topology file or of a scenario file, a scenario file validated whole, as
    ``ani run`` and ``ani campaign run`` read it (:func:`load_scenario`): an unknown or misspelt
    key, a bad tenant or pool is refused too, not only the topology. What ``ani lab up`` and ``ani
    doctor --scenario`` read; :func:`ani.lab.topology.load_topology` reads the topology only.

    Raises TopologyError (:func:`ani.lab.topology.read_topology_document`; invalid: names the
    bad field).
    """
    from ani.lab.topology import parse_topology, read_topology_document

    where, data = read_topology_document(path)
    if isinstance(data, dict) and "topology" in data:
        return parse_scenario(data, source=str(where)).topology
    return parse_topology(data, source=str(where))


def load_scenario(path: str | Path) -> Scenario:
    """Load a scenario file (a path, or a name shipped under ``scenarios/``).

    Raises TopologyError (missing, not YAML, or invalid; names the bad field).
    """
    from ani.resources import resolve

    try:
        p = resolve(path)
    except FileNotFoundError:
        raise TopologyError(f"{path}: no such scenario file") from None
    return parse_scenario(load_yaml(p), source=str(path))
