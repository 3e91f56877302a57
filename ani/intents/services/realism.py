"""What the generators of the service classes share (not a class): the generated brownfield's
address plan, the Zipf rank order of the edges and the checking of layer options.

::

    opts = layer_options(layer, {"zipf": float})   # {} / {"zipf": 1.3}; GeneratorError on a bad key
    edges = edge_ranks(build, rng)                 # the edges in a seeded rank order (Zipf: first = most loaded)
    edge = build.zipf_choice(rng, edges, opts.get("zipf", ZIPF))

Address plan (docs/scenarios.md): tenant sites in :data:`SITE_AREA` (198.18.0.0/16), the free
pool tasks take new sites from :data:`SITE_POOL` (198.19.0.0/16, no layer allocates there),
floating addresses in :data:`FLOAT_AREA` (198.51.100.0/24). A class's generator is its
``generate`` (``ani.intents.services.base.ServiceClass``); ``build`` is an
``ani.scenario.build.Build``, ``layer`` an ``ani.scenario.build.Layer``.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from typing import Any

from ani.errors import GeneratorError

__all__ = ["FLOAT_AREA", "SITE_AREA", "SITE_POOL", "ZIPF", "SitePicker", "edge_ranks", "layer_options"]

#: where tenant sites live: 198.18.0.0/15 without the free pool 198.19.0.0/16 (kept for tasks)
SITE_AREA = IPv4Network("198.18.0.0/16")
#: the free pool new sites get their prefix from (tasks); no layer allocates in it
SITE_POOL = IPv4Network("198.19.0.0/16")
#: floating (service) addresses: /32s on the loopback of edges
FLOAT_AREA = IPv4Network("198.51.100.0/24")
#: the default Zipf exponent of the skewed draws (layer option ``zipf``)
ZIPF = 1.1


def layer_options(layer: Any, known: dict[str, type]) -> dict[str, Any]:
    """``layer.options`` checked against ``known`` ({name: type}; a bool is never a number).
    Raises GeneratorError naming the option (``options.zipf: must be a float, got 'x'``)."""
    for k, v in layer.options.items():
        if k not in known:
            raise GeneratorError(f"options.{k}: unknown option (known: {', '.join(known) or 'none'})")
        if not isinstance(v, known[k]) or isinstance(v, bool):
            raise GeneratorError(f"options.{k}: must be a {known[k].__name__}, got {v!r}")
    return dict(layer.options)


def edge_ranks(build: Any, rng: Any) -> list[str]:
    """The edge routers of ``build`` in a rank order shuffled by ``rng`` (the first is the most
    loaded under ``build.zipf_choice``), so which edges are loaded changes with the seed.
    Raises GeneratorError if there is no edge router."""
    edges = build.routers("edge")
    if not edges:
        raise GeneratorError("needs edge routers (topology.edges)")
    ranked = list(edges)
    rng.shuffle(ranked)
    return ranked


class SitePicker:
    """Where a new site goes and what it is called: a free /24 of the tenant's share of
    :data:`SITE_AREA` not next to another tenant's site (a trap: next to one), and the tenant's
    next free host name (a trap: one extending a name of its sites) of at most ``max_node``
    characters. ``build`` is an ``ani.scenario.build.Build``, ``rng`` its layer's random stream;
    :attr:`owner` (prefix -> tenant) is the caller's to extend with each site placed."""

    def __init__(self, build: Any, rng: Any, tenants: list[str], max_node: int) -> None:
        self.build, self.rng, self.max_node = build, rng, max_node
        slots = list(SITE_AREA.subnets(new_prefix=24))
        share = len(slots) // len(tenants)
        self.region = {t: slots[i * share : (i + 1) * share] for i, t in enumerate(tenants)}
        self.owner: dict[IPv4Network, str] = {IPv4Network(x["prefix"]): t for t, sites in build.tenants.items()
                                              for x in sites}
        self.blocked = {n for n in slots if not build.is_free(n)}  # once: is_free scans every used network

    def free(self, net: IPv4Network) -> bool:
        return net not in self.owner and net not in self.blocked

    @staticmethod
    def neighbours(net: IPv4Network) -> list[IPv4Network]:
        out = []
        for delta in (-256, 256):
            addr = int(net.network_address) + delta
            cand = IPv4Network(f"{IPv4Address(addr)}/24")
            if cand.subnet_of(SITE_AREA):
                out.append(cand)
        return out

    def next_to_other(self, net: IPv4Network, tenant: str) -> bool:
        return any(self.owner.get(n, tenant) != tenant for n in self.neighbours(net))

    def prefix(self, tenant: str, trap: bool) -> IPv4Network:
        """The site's /24. Raises GeneratorError: none free in the tenant's share."""
        if trap:
            cands = sorted({n for p, t in self.owner.items() if t != tenant for n in self.neighbours(p)
                            if self.free(n)}, key=lambda n: int(n.network_address))
            if cands:
                return self.rng.choice(cands)
        cands = [n for n in self.region[tenant] if self.free(n) and not self.next_to_other(n, tenant)]
        if not cands:
            raise GeneratorError(f"no free /24 left for tenant {tenant} in {SITE_AREA} "
                                 f"({len(self.region[tenant])} per tenant): lower the density")
        return self.rng.choice(cands)

    def name(self, tenant: str, trap: bool) -> str:
        """The site's host name. Raises GeneratorError: longer than ``max_node``."""
        taken = self.build.nodes()
        mine = sorted(int(x["host"][len(tenant):]) for x in self.build.tenants[tenant])
        if trap:
            cands = [f"{tenant}{m * 10 + d}" for m in mine for d in range(10)]
            cands = [c for c in cands if len(c) <= self.max_node and c not in taken]
            if cands:
                return self.rng.choice(cands)
        n = 1
        while f"{tenant}{n}" in taken:
            n += 1
        name = f"{tenant}{n}"
        if len(name) > self.max_node:
            raise GeneratorError(f"site name {name!r} is longer than {self.max_node} characters: use a shorter tenant name")
        return name
