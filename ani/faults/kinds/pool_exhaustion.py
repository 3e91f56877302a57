"""Fault kind ``pool_exhaustion``: a scenario's address pool has no free block for a duration,
then its blocks are free again (NMAA draft: transient pool exhaustion of the identifier pools and
address space the services share).

Target ``{"router": "e2"}`` (the router of the task's first change, else one drawn); params
``{"pool": "sites", "network": "198.19.0.0/16", "prefixlen": 24}`` (the scenario pool: the
``sites`` pool when the scenario has one, else one drawn among its pools; None without pools).

Where the pool lives: the allocation pools of the service levels (:mod:`ani.intents.pools`) are
not kept anywhere but in the routers' running configurations: a block is used when any router
configures a network overlapping it (an interface address, a prefix-list entry, a firewall set
element). So the pool is exhausted on the substrate, where every level meets it: the writer
configures on the target router an unreferenced prefix-list :data:`HOLD_LIST` with one entry
naming the whole pool network (``ip prefix-list ANI-POOL-HELD seq 10 permit 198.19.0.0/16 le
32``), as a reservation made by someone else (an IPAM hold, a change being prepared elsewhere).
Nothing references the list, so no route, policy or filter changes. Then:

* A3-T / A3-R / A4: an allocation from the pool (an onboard without ``prefix`` when the adapter
  has a site network) fails with ``resource_exhausted`` naming the pool (``PoolExhausted``).
* A0 / A1 / A2: the agent allocates by itself; the reservation is in the router's running
  configuration for an agent that looks before it takes a block.
* The shipped task classes give their site prefix in the request, so they allocate no block:
  this fault is then a stimulus the agent can notice, not an obstacle; a task that lets the
  level allocate meets the exhaustion.

Verification: the target router's configuration (read out of band) holds the reservation, and a
:class:`ani.intents.pools.Pools` built from it has no block left (``PoolExhausted``); removal:
``no ip prefix-list ANI-POOL-HELD``, verified by the list being gone and the pool allocating from
that configuration again.

Raises :class:`ani.errors.FaultError` when the router already has a list of that name (never
overwritten) or cannot be read or written.
"""

from __future__ import annotations

import random
from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Any

from ani.errors import FaultError
from ani.faults.base import FaultKind, FaultSpec, register
from ani.faults.targets import read_router, write_router
from ani.faults.task_targets import pick_router, primary_edge

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["HOLD_LIST", "PoolExhaustion"]

#: the reservation's prefix-list name (no scenario or service uses it)
HOLD_LIST = "ANI-POOL-HELD"


@register
class PoolExhaustion(FaultKind):
    """See the module doc. Handle: ``{"router", "pool", "network", "prefixlen", "line"}``."""

    name = "pool_exhaustion"
    writes_config = True

    def draw(self, rng: random.Random, scenario: Any, variant: Any) -> tuple[dict, dict] | None:
        pools = dict(getattr(scenario, "pools", None) or {})
        if not pools:
            return None
        name = "sites" if "sites" in pools else rng.choice(sorted(pools))
        router = primary_edge(scenario, variant) or pick_router(rng, scenario, variant)
        if router is None:
            return None
        pool = pools[name]
        return {"router": router}, {"pool": name, "network": str(pool.network), "prefixlen": int(pool.prefixlen)}

    def _where(self, spec: FaultSpec) -> str:
        return f"pool_exhaustion {spec.params.get('pool')} on {spec.target.get('router')}"

    def _read(self, lab: Lab, spec: FaultSpec, router: str) -> Any:
        return read_router(lab, router, self._where(spec))

    def _free_block(self, cfg: Any, router: str, network: IPv4Network, prefixlen: int) -> str | None:
        """The block a pool over ``cfg`` alone would allocate next (None: exhausted)."""
        from ani.intents.errors import PoolExhausted
        from ani.intents.pools import Pools

        try:
            return str(Pools.from_configs({router: cfg}, site_network=network,
                                          site_prefixlen=prefixlen).site_prefix("fault").allocate())
        except PoolExhausted:
            return None

    def inject(self, lab: Lab, spec: FaultSpec) -> dict[str, Any]:
        router = spec.target.get("router")
        if not isinstance(router, str):
            raise FaultError(f"{self._where(spec)}: target needs 'router' (a router name), got {spec.target!r}")
        try:
            network = IPv4Network(str(spec.params["network"]))
            prefixlen = int(spec.params.get("prefixlen", 24))
        except (KeyError, ValueError) as exc:
            raise FaultError(f"{self._where(spec)}: params need network (an IPv4 network) and prefixlen: {exc}") from exc
        cfg = self._read(lab, spec, router)
        if HOLD_LIST in cfg.prefix_lists:
            raise FaultError(f"{self._where(spec)}: {router} already has a prefix-list {HOLD_LIST}; "
                             "it is never overwritten")
        le = " le 32" if network.prefixlen < 32 else ""
        line = f"ip prefix-list {HOLD_LIST} seq 10 permit {network}{le}"
        handle = {"router": router, "pool": spec.params.get("pool"), "network": str(network),
                  "prefixlen": prefixlen, "line": line,
                  "free_before": self._free_block(cfg, router, network, prefixlen)}
        self._vtysh(lab, spec, router, ["configure terminal", line])
        return handle

    def _vtysh(self, lab: Lab, spec: FaultSpec, router: str, commands: list[str]) -> None:
        write_router(lab, router, commands, self._where(spec))

    def _state(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str | None]:
        """(the reservation is on the router, the next free block over its configuration)."""
        cfg = self._read(lab, spec, handle["router"])
        held = HOLD_LIST in cfg.prefix_lists
        return held, self._free_block(cfg, handle["router"], IPv4Network(handle["network"]), handle["prefixlen"])

    def verify(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str]:
        held, free = self._state(lab, spec, handle)
        pool = f"pool {handle['pool']} ({handle['network']}, /{handle['prefixlen']} blocks)"
        if held and free is None:
            return True, f"{pool} exhausted: {handle['router']} holds {handle['line']}"
        if not held:
            return False, f"{pool}: the reservation {HOLD_LIST} is not on {handle['router']}"
        return False, f"{pool} still allocates {free} with the reservation in place"

    def remove(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> None:
        cfg = self._read(lab, spec, handle["router"])
        if HOLD_LIST in cfg.prefix_lists:
            self._vtysh(lab, spec, handle["router"], ["configure terminal", f"no ip prefix-list {HOLD_LIST}"])

    def removed(self, lab: Lab, spec: FaultSpec, handle: dict[str, Any]) -> tuple[bool, str]:
        held, free = self._state(lab, spec, handle)
        if held:
            return False, f"{handle['router']} still holds the reservation {HOLD_LIST}"
        if free is None and handle.get("free_before") is not None:
            return False, f"pool {handle['pool']} is still exhausted on {handle['router']} without the reservation"
        return True, (f"reservation {HOLD_LIST} removed from {handle['router']}; pool {handle['pool']} "
                      f"allocates {free} again" if free else f"reservation {HOLD_LIST} removed")
