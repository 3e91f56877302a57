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

from ipaddress import IPv4Network
from typing import Any

from ani.errors import GeneratorError

__all__ = ["FLOAT_AREA", "SITE_AREA", "SITE_POOL", "ZIPF", "edge_ranks", "layer_options"]

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
