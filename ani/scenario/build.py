"""The brownfield being generated: what a generator layer reads and edits.

::

    build = Build.from_scenario(load_scenario("scenarios/brownfield-small.yaml"), seed=7)
    rng = build.rng("tenant-policy")                 # this layer's own stream (seed + name)
    edge = build.zipf_choice(rng, build.routers("edge"))   # skewed: a few edges carry most
    net = build.allocate(IPv4Network("198.18.0.0/15"), 24)  # lowest free /24 (marks it used)
    build.add_host("blue9", "e2", "to-blue9", IPv4Interface("198.18.40.10/24"), IPv4Address("198.18.40.1"))
    build.configs["e2"].prefix_lists[...]            # layers edit the device models in place
    data = build.to_scenario(name="default", description="...")   # a scenario-file mapping

A layer (:class:`Layer`) names a service class, how many instances to draw (``density``)
and how often to place a trap (``trap_rate``: adjacent or overlapping prefixes, shared
dependencies, near-miss names), plus class-specific ``options``. The generator
(``ani.scenario.generate``) calls ``get_service_class(layer.service).generate(build, layer)``
for each layer in manifest order.

Determinism: everything a layer draws comes from ``build.rng(name)``, seeded from the
manifest seed and the layer's name, so adding a layer does not change what the others draw.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ani.device.model import DeviceConfig
from ani.errors import GeneratorError
from ani.lab.topology import Endpoint, HostSpec, LinkSpec

T = TypeVar("T")

#: router roles of a generated topology
ROLES = ("core", "edge", "external")


class Layer(BaseModel):
    """One layer of a manifest: ``service`` class, ``density`` instances, ``trap_rate``."""

    model_config = ConfigDict(extra="forbid")

    service: str = Field(description="a registered service class (ani.intents.services)")
    name: str | None = Field(default=None, description="the layer's random stream (default: service); "
                             "the generator names a second layer of a class '<service>#2'")
    density: int = Field(default=1, ge=0, le=10_000, description="instances to generate")
    trap_rate: float = Field(default=0.0, ge=0.0, le=1.0, description="share of instances placed as traps")
    options: dict[str, Any] = Field(default_factory=dict, description="class-specific settings")

    @property
    def stream(self) -> str:
        """The name of the layer's random stream (``build.rng(layer.stream)``)."""
        return self.name or self.service


def zipf_weights(n: int, s: float = 1.1) -> list[float]:
    """Zipf weights ``1/k**s`` for ranks 1..n (not normalised)."""
    return [1.0 / (k**s) for k in range(1, n + 1)]


def stream(seed: int, name: str) -> random.Random:
    """A random stream fixed by ``seed`` and ``name``: seeded by the first 8 bytes of
    ``sha256("<seed>/<name>")``, so it is the same on every machine and independent of every
    other name's stream (a scenario layer's, a template parameter's)."""
    digest = hashlib.sha256(f"{seed}/{name}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


@dataclass
class Build:
    """A brownfield under construction (see the module doc).

    Attributes:
        seed: the manifest seed.
        asn: the provider's AS number (iBGP).
        configs: ``{router: DeviceConfig}``, firewall included; layers edit them in place.
        roles: ``{router: "core" | "edge" | "external"}``.
        route_reflectors: routers acting as iBGP route reflectors.
        hosts / links: topology nodes without FRR and veth links (``ani.lab.topology`` models).
        tenants: ``{tenant: [site mapping {host, edge, prefix, gateway}]}`` (scenario form).
        pools: ``{name: {network, prefixlen}}`` (scenario form; ``sites`` is where new sites go).
        used: every network already in use (allocation avoids them).
        daemons: ``{router: [FRR daemons]}``.
        invariants: baseline invariants the layers emitted for their instances
            (``ani.observer.checks`` models), beyond those computed from the scenario's content.
        instances: ``{service class: [service id]}`` the layers generated (what the generator
            verifies against the inventory discovered from the configs).
    """

    seed: int
    asn: int = 64500
    configs: dict[str, DeviceConfig] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    route_reflectors: list[str] = field(default_factory=list)
    hosts: dict[str, HostSpec] = field(default_factory=dict)
    links: list[LinkSpec] = field(default_factory=list)
    tenants: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    pools: dict[str, dict[str, Any]] = field(default_factory=dict)
    used: list[IPv4Network] = field(default_factory=list)
    daemons: dict[str, list[str]] = field(default_factory=dict)
    invariants: list[Any] = field(default_factory=list)
    instances: dict[str, list[str]] = field(default_factory=dict)

    # -- randomness ---------------------------------------------------------------------------

    def rng(self, name: str) -> random.Random:
        """A random stream for ``name`` (a layer), fixed by the seed and the name (:func:`stream`)."""
        return stream(self.seed, name)

    @staticmethod
    def zipf_choice(rng: random.Random, items: Sequence[T], s: float = 1.1) -> T:
        """One of ``items``, rank-weighted by Zipf(``s``): the first items are drawn most.
        Raises GeneratorError for an empty sequence."""
        if not items:
            raise GeneratorError("nothing to choose from")
        return rng.choices(list(items), weights=zipf_weights(len(items), s))[0]

    # -- reading ------------------------------------------------------------------------------

    def routers(self, role: str | None = None) -> list[str]:
        """Routers (of ``role``), in creation order."""
        return [r for r in self.configs if role is None or self.roles.get(r) == role]

    def nodes(self) -> set[str]:
        return set(self.configs) | set(self.hosts)

    # -- allocation ---------------------------------------------------------------------------

    def is_free(self, net: IPv4Network) -> bool:
        return not any(net.overlaps(u) for u in self.used)

    def allocate(self, within: IPv4Network, prefixlen: int, *, rng: random.Random | None = None) -> IPv4Network:
        """A free ``/prefixlen`` of ``within`` (the lowest, or a random one with ``rng``),
        marked used. Raises GeneratorError when ``within`` is full.

        Only the used networks overlapping ``within`` are compared with each candidate (the
        build may hold thousands of networks elsewhere: a 25-router build spent seconds here)."""
        relevant = [u for u in self.used if u.overlaps(within)]

        def free(n: IPv4Network) -> bool:
            return not any(n.overlaps(u) for u in relevant)

        if rng is None:
            for n in within.subnets(new_prefix=prefixlen):
                if free(n):
                    self.used.append(n)
                    return n
            raise GeneratorError(f"no free /{prefixlen} left in {within}")
        cands = [n for n in within.subnets(new_prefix=prefixlen) if free(n)]
        if not cands:
            raise GeneratorError(f"no free /{prefixlen} left in {within}")
        n = rng.choice(cands)
        self.used.append(n)
        return n

    def claim(self, net: IPv4Network) -> None:
        """Mark ``net`` used (e.g. a deliberately adjacent trap prefix). Raises GeneratorError
        if it overlaps something already used."""
        if not self.is_free(net):
            raise GeneratorError(f"{net} is already in use")
        self.used.append(net)

    # -- adding nodes -------------------------------------------------------------------------

    def add_router(self, name: str, role: str, config: DeviceConfig, daemons: Sequence[str] = ("zebra", "staticd")) -> None:
        """Add a router. Raises GeneratorError for a name already used or an unknown role."""
        if name in self.nodes():
            raise GeneratorError(f"node {name!r} already exists")
        if role not in ROLES:
            raise GeneratorError(f"unknown role {role!r}; roles: {', '.join(ROLES)}")
        self.configs[name] = config
        self.roles[name] = role
        self.daemons[name] = list(daemons)

    def add_link(self, a: str, a_if: str, b: str, b_if: str, *, b_address: IPv4Interface | None = None) -> None:
        """A veth link ``a:a_if`` -- ``b:b_if`` (a host end carries its address in the link)."""
        self.links.append(LinkSpec(a=Endpoint(node=a, ifname=a_if), b=Endpoint(node=b, ifname=b_if, address=b_address)))

    def add_host(self, name: str, router: str, router_ifname: str, address: IPv4Interface, gateway: IPv4Address) -> None:
        """A host ``name`` linked to ``router``'s ``router_ifname`` (eth0 = ``address``, default
        route via ``gateway``). The router's interface address is the layer's to configure.
        Raises GeneratorError for a name already used or an unknown router."""
        if name in self.nodes():
            raise GeneratorError(f"node {name!r} already exists")
        if router not in self.configs:
            raise GeneratorError(f"unknown router {router!r}")
        self.hosts[name] = HostSpec(gateway=gateway)
        self.add_link(router, router_ifname, name, "eth0", b_address=address)

    # -- in and out ---------------------------------------------------------------------------

    @classmethod
    def from_scenario(cls, scenario: Any, seed: int = 0) -> Build:
        """A build holding an existing scenario (``ani.scenario.Scenario``); roles are guessed
        (routers with a site are edges, the others cores)."""
        from ani.intents.inventory import network_configs

        configs = network_configs(scenario)
        edges = set(scenario.edges)
        b = cls(seed=seed)
        for r, cfg in configs.items():
            b.configs[r] = cfg
            b.roles[r] = "edge" if r in edges else "core"
            b.daemons[r] = list(scenario.topology.routers[r].daemons)
        b.asn = next((c.bgp.asn for c in configs.values() if c.bgp is not None), b.asn)
        b.route_reflectors = [
            r for r, c in configs.items() if c.bgp and any(p.route_reflector_client for p in c.bgp.ipv4_unicast.peers.values())
        ]
        b.hosts = dict(scenario.topology.hosts)
        b.links = list(scenario.topology.links)
        b.tenants = {t: [s.model_dump(mode="json") for s in ten.sites] for t, ten in scenario.tenants.items()}
        b.pools = {k: p.model_dump(mode="json") for k, p in scenario.pools.items()}
        b.used = list(scenario.used_networks())
        b.used += [IPv4Network(p["network"]) for p in b.pools.values()]
        return b

    def to_scenario(self, *, name: str, description: str = "", convergence: dict[str, Any] | None = None) -> dict[str, Any]:
        """The scenario-file mapping of the build (FRR text rendered from the device models)."""
        from ani.device.firewall import render as render_nft
        from ani.device.render import render as render_frr

        routers: dict[str, Any] = {}
        for r, cfg in self.configs.items():
            spec: dict[str, Any] = {"daemons": self.daemons.get(r, ["zebra", "staticd"]), "config": render_frr(cfg)}
            if cfg.firewall is not None:
                spec["nftables"] = render_nft(cfg.firewall)
            routers[r] = spec
        return {
            "name": name,
            "description": description,
            "topology": {
                "name": name,
                "routers": routers,
                "hosts": {h: s.model_dump(mode="json") for h, s in self.hosts.items()},
                "links": [ln.model_dump(mode="json", exclude_none=True) for ln in self.links],
                "convergence": convergence or {"timeout_s": 30.0, "ospf": True, "bgp": True},
            },
            "tenants": {t: {"sites": sites} for t, sites in self.tenants.items() if sites},
            "pools": dict(self.pools),
        }
