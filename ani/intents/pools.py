"""Resource pools that know what the brownfield already uses.

::

    pools = Pools.from_configs(configs, site_network=IPv4Network("198.19.0.0/16"), site_prefixlen=24)
    pools.seq("e2", "PL-TENANTS").allocate()      # 30: the largest used seq + 10 (e2 has 10, 20)
    pools.site_prefix("blue").allocate()          # 198.19.0.0/24: the lowest free /24
    pools.gateway(IPv4Network("198.19.0.0/24"))   # 198.19.0.1: the first address not in use
    pools.list_name("PL-SITE").allocate()         # PL-SITE-1: the first name no router uses

Every allocation is deterministic (the same used set gives the same answer) and marks the
resource used, so two allocations in one compile never collide. An empty pool raises
:class:`~ani.intents.errors.PoolExhausted` naming the pool and its size.

Pools built from configs:

- ``seq/<router>/<list>``: sequence numbers of prefix-list ``<list>`` on ``<router>``, multiples
  of ``step`` (10) up to ``seq_limit``; allocation gives max(used) + step, or the lowest free
  multiple when that passes the limit.
- ``site-prefix/<tenant>``: ``/prefixlen`` blocks of the tenant's range (``tenant_ranges``) or
  else of the shared site network, minus every network any router or service uses.
- ``gateway/<prefix>``: the addresses of a prefix not configured on any router.
- ``list-name/<stem>``: ``<stem>-1`` ... ``<stem>-<limit>`` not used by any router's
  prefix-lists or route-maps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network

from ani.device.model import DeviceConfig
from ani.intents.errors import PoolExhausted

SEQ_STEP = 10
SEQ_LIMIT = 4294967295


@dataclass
class SeqPool:
    """Sequence numbers of one list on one router (see module doc)."""

    name: str
    used: set[int] = field(default_factory=set)
    step: int = SEQ_STEP
    limit: int = SEQ_LIMIT

    @property
    def size(self) -> int:
        return self.limit // self.step

    def allocate(self) -> int:
        nxt = (max(self.used, default=0) // self.step + 1) * self.step
        if nxt > self.limit:
            nxt = next((s for s in range(self.step, self.limit + 1, self.step) if s not in self.used), None)
            if nxt is None:
                raise PoolExhausted(self.name, self.size)
        self.used.add(nxt)
        return nxt


@dataclass
class PrefixPool:
    """``/prefixlen`` blocks of ``network`` that overlap nothing in ``used``; lowest first."""

    name: str
    network: IPv4Network
    prefixlen: int
    used: list[IPv4Network] = field(default_factory=list)

    @property
    def size(self) -> int:
        return 2 ** (self.prefixlen - self.network.prefixlen)

    def allocate(self) -> IPv4Network:
        relevant = [u for u in self.used if u.overlaps(self.network)]
        for n in self.network.subnets(new_prefix=self.prefixlen):
            if not any(n.overlaps(u) for u in relevant):
                self.used.append(n)
                return n
        raise PoolExhausted(self.name, self.size)


@dataclass
class NamePool:
    """Names ``<stem>-1`` .. ``<stem>-<limit>`` not in ``used``; lowest first."""

    name: str
    stem: str
    used: set[str] = field(default_factory=set)
    limit: int = 999

    @property
    def size(self) -> int:
        return self.limit

    def allocate(self) -> str:
        for i in range(1, self.limit + 1):
            cand = f"{self.stem}-{i}"
            if cand not in self.used:
                self.used.add(cand)
                return cand
        raise PoolExhausted(self.name, self.size)


class Pools:
    """The pools of one network state (see module doc). Build with :meth:`from_configs`."""

    def __init__(
        self,
        configs: dict[str, DeviceConfig],
        *,
        site_network: IPv4Network | None = None,
        site_prefixlen: int = 24,
        tenant_ranges: dict[str, IPv4Network] | None = None,
        seq_limit: int = SEQ_LIMIT,
        extra_used: list[IPv4Network] | None = None,
    ) -> None:
        self.configs = configs
        self.site_network = site_network
        self.site_prefixlen = site_prefixlen
        self.tenant_ranges = dict(tenant_ranges or {})
        self.seq_limit = seq_limit
        self._seq: dict[tuple[str, str], SeqPool] = {}
        self._prefix: dict[str, PrefixPool] = {}
        self._names: dict[str, NamePool] = {}
        self.used_networks: list[IPv4Network] = list(extra_used or [])
        self.used_addresses: set[IPv4Address] = set()
        for cfg in configs.values():
            for iface in cfg.interfaces.values():
                for a in iface.addresses:
                    self.used_addresses.add(a.ip)
                    if a.network.prefixlen < 32:
                        self.used_networks.append(a.network)
            for lst in cfg.prefix_lists.values():
                self.used_networks += [e.prefix for e in lst.entries if e.prefix is not None and e.prefix.prefixlen > 0]
            if cfg.firewall is not None:
                for s in cfg.firewall.sets.values():
                    self.used_networks += s.elements

    @classmethod
    def from_configs(cls, configs: dict[str, DeviceConfig], **kw) -> Pools:
        return cls(configs, **kw)

    @classmethod
    def for_scenario(cls, scenario, configs: dict[str, DeviceConfig], **kw) -> Pools:
        """Pools of a scenario: the site network is its ``sites`` pool (if any); the networks of
        its host links and sites count as used."""
        pool = scenario.pools.get("sites")
        if pool is not None:
            kw.setdefault("site_network", pool.network)
            kw.setdefault("site_prefixlen", pool.prefixlen)
        return cls(configs, extra_used=scenario.used_networks(), **kw)

    def seq(self, router: str, plist: str) -> SeqPool:
        key = (router, plist)
        if key not in self._seq:
            cfg = self.configs.get(router)
            lst = cfg.prefix_lists.get(plist) if cfg is not None else None
            used = {e.seq for e in lst.entries} if lst is not None else set()
            self._seq[key] = SeqPool(f"seq/{router}/{plist}", used, limit=self.seq_limit)
        return self._seq[key]

    def has_site_pool(self, tenant: str) -> bool:
        """Whether :meth:`site_prefix` has a network to allocate from for ``tenant``."""
        return self.tenant_ranges.get(tenant, self.site_network) is not None

    def site_prefix(self, tenant: str) -> PrefixPool:
        if tenant not in self._prefix:
            net = self.tenant_ranges.get(tenant, self.site_network)
            if net is None:
                raise PoolExhausted(f"site-prefix/{tenant}", 0)
            self._prefix[tenant] = PrefixPool(f"site-prefix/{tenant}", net, self.site_prefixlen, self.used_networks)
        return self._prefix[tenant]

    def gateway(self, prefix: IPv4Network) -> IPv4Address:
        for a in prefix.hosts():
            if a not in self.used_addresses:
                self.used_addresses.add(a)
                return a
        raise PoolExhausted(f"gateway/{prefix}", max(prefix.num_addresses - 2, 1))

    def list_name(self, stem: str, limit: int = 999) -> NamePool:
        if stem not in self._names:
            used = {n for cfg in self.configs.values() for n in (*cfg.prefix_lists, *cfg.route_maps)}
            self._names[stem] = NamePool(f"list-name/{stem}", stem, used, limit)
        return self._names[stem]
