"""Service class ``shared-service``: a service host (DNS / NTP-like) several tenants reach, with
SHARED firewall state.

The host hangs off a core or an edge router (interface ``to-<name>``, the prefix's first
address; the host has the second), its prefix comes from a shared range and is carried by OSPF
(the interface is in area 0, passive). On every router with the firewall (``table inet fw``)::

    set shared_dns1 { type ipv4_addr; flags interval; elements = { 198.18.240.0/28 } }
    chain forward {
      ip saddr @tenant_blue ip daddr @shared_dns1 accept      (one per subscribed tenant)
      ip daddr @shared_dns1 drop                              (isolate: the others may not)
      ... the inter-tenant drops of tenant-firewall ...
    }

What tenant isolation does not protect: the service's rules are in the one ``forward`` chain
every tenant shares, they name the tenants' own sets (``tenant_<t>``), and the ``drop`` that
isolates the service is a rule for all tenants: a drop for one tenant written too broadly (no
``saddr``) or placed above the accept rules, a flushed or rebuilt chain, a set rewritten for one
tenant, cuts the other subscribers off.

Changes (``type: shared-service``)::

    {action: add, name: dns1, router: c1, prefix: 198.18.240.0/28, clients: [blue, red], isolate: true}
    {action: remove, name: dns1}

Service id ``shared-service/<name>``. Baseline invariants (service ``shared-service/<name>``):
``reach`` from each subscribed tenant's sites to the host (at most ``SAMPLE`` sites per tenant,
one per edge first), and with ``isolate`` ``reach expect: false`` from the other tenants' sites
(same sample). Only sites whose host is a node of the topology, and a host that is one.
"""

from __future__ import annotations

from ipaddress import IPv4Interface, IPv4Network
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ani.names import unknown
from ani.device.model import Firewall, FirewallRule, FirewallSet, Interface, InterfaceOspf
from ani.errors import GeneratorError
from ani.intents.errors import IntentError
from ani.intents.services.common import MAX_LIST_ITEMS, SET_PREFIX, Service, tenant_set
from ani.intents.services._shared import InstanceClass, host_address, known_tenants, tenant_prefixes
from ani.intents.services.base import register
from ani.intents.services.tenant_site import site_hosts
from ani.observer.checks import ReachCheck

SET_PREFIX_SHARED = "shared_"
#: sites per tenant the invariants sample
SAMPLE = 3
#: where the generator takes service prefixes from (``options.range``) and their length
DEFAULT_RANGE = "198.18.240.0/20"
DEFAULT_PREFIXLEN = 28
KINDS = ("dns", "ntp", "log", "auth")


def shared_set(name: str) -> str:
    return f"{SET_PREFIX_SHARED}{name}"


def interface_of(name: str) -> str:
    return f"to-{name}"


class _Shared(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["shared-service"] = "shared-service"
    name: str = Field(pattern=r"^[a-z][a-z0-9]{0,9}$", description="the service host (a node name, e.g. dns1)")

    def service_id(self) -> str:
        return f"shared-service/{self.name}"


class SharedServiceAdd(_Shared):
    router: str = Field(min_length=1, max_length=63, description="the router the host hangs off (a core or an edge)")
    prefix: IPv4Network = Field(description="the service subnet: router = first address, host = second")
    clients: list[str] = Field(min_length=1, max_length=MAX_LIST_ITEMS, description="tenants that may reach the service")
    isolate: bool = Field(default=True, description="the other tenants may not reach it")
    action: Literal["add"] = "add"

    @field_validator("prefix")
    @classmethod
    def _len(cls, v: IPv4Network) -> IPv4Network:
        if v.prefixlen > 30:
            raise ValueError(f"prefix {v}: a service subnet needs two host addresses (at most /30)")
        return v

    @field_validator("clients")
    @classmethod
    def _clients(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("clients: a tenant is named twice")
        return sorted(v)

    @property
    def gateway(self) -> IPv4Interface:
        return IPv4Interface(f"{self.prefix[1]}/{self.prefix.prefixlen}")

    @property
    def host(self) -> IPv4Interface:
        return IPv4Interface(f"{self.prefix[2]}/{self.prefix.prefixlen}")


class SharedServiceRemove(_Shared):
    action: Literal["remove"] = "remove"


def _fw_routers(state: dict[str, Any]) -> list[str]:
    return sorted(r for r, c in state.items() if c.firewall is not None)


@register
class SharedService(InstanceClass):
    name = "shared-service"
    id_format = "shared-service/<name>"
    description = ("A service host (DNS/NTP-like) on a core or edge router, its subnet carried by OSPF, reachable "
                   "from the client tenants through accept rules in the shared nftables chain forward (before "
                   "the service's drop for every other tenant).")
    changes = (SharedServiceAdd, SharedServiceRemove)
    shares = ("nftables chain forward (accept per client tenant before the service's drop)",
              "nftables sets tenant_<t> (the clients are named by their tenant sets)",
              f"address range {DEFAULT_RANGE} (service subnets)")

    def check(self, ch: Any, path: str, state: dict[str, Any]) -> None:
        fw = _fw_routers(state)
        exists = any(shared_set(ch.name) in state[r].firewall.sets for r in fw)
        if isinstance(ch, SharedServiceRemove):
            if not exists:
                raise IntentError("service-not-found", f"no shared service {ch.name}", f"{path}.name")
            return
        if exists:
            raise IntentError("service-exists", f"shared service {ch.name} exists", f"{path}.name")
        if ch.router not in state:
            raise IntentError("unknown-router", unknown("router", ch.router, sorted(state)), f"{path}.router")
        if state[ch.router].ospf is None:
            raise IntentError("invalid", f"{ch.router} runs no OSPF to carry the service prefix", f"{path}.router")
        if interface_of(ch.name) in state[ch.router].interfaces:
            raise IntentError("address-conflict", f"{ch.router} already has interface {interface_of(ch.name)}", f"{path}.name")
        if not fw:
            raise IntentError("invalid", "no router has the firewall (table inet fw)", path)
        for r, cfg in state.items():
            for ifname, iface in cfg.interfaces.items():
                for a in iface.addresses:
                    if a.network.overlaps(ch.prefix):
                        raise IntentError("prefix-overlap", f"{ch.prefix} overlaps {a} on {r} {ifname}", f"{path}.prefix")
        for r in fw:
            for name, s in state[r].firewall.sets.items():
                if any(e.overlaps(ch.prefix) for e in s.elements):
                    raise IntentError("prefix-overlap", f"{ch.prefix} overlaps set {name} on {r}", f"{path}.prefix")
        for i, t in enumerate(ch.clients):
            if tenant_prefixes(state, t) is None:
                raise IntentError("unknown-reference", f"tenant {t} has no set {tenant_set(t)}; "
                                  + unknown("tenant", t, known_tenants(state)), f"{path}.clients.{i}")

    def apply(self, ch: Any, path: str, state: dict[str, Any], pools: Any, alloc: dict[str, Any]) -> None:
        sname = shared_set(ch.name)
        if isinstance(ch, SharedServiceRemove):
            for r, cfg in state.items():
                cfg.interfaces.pop(interface_of(ch.name), None)
                if cfg.firewall is not None:
                    cfg.firewall.forward_rules = [x for x in cfg.firewall.forward_rules if sname not in (x.saddr_set, x.daddr_set)]
                    cfg.firewall.sets.pop(sname, None)
            return
        state[ch.router].interfaces[interface_of(ch.name)] = Interface(
            addresses=[ch.gateway], ospf=InterfaceOspf(area="0", passive=True))
        rules = [FirewallRule(saddr_set=tenant_set(t), daddr_set=sname, action="accept") for t in ch.clients]
        if ch.isolate:
            rules.append(FirewallRule(daddr_set=sname, action="drop"))
        for r in _fw_routers(state):
            fw: Firewall = state[r].firewall.model_copy(deep=True)
            fw.sets[sname] = FirewallSet(elements=[ch.prefix])
            fw.forward_rules = rules + fw.forward_rules  # before the inter-tenant drops
            state[r].firewall = fw

    def discover(self, configs: dict[str, Any]) -> list[Service]:
        out: list[Service] = []
        fw = _fw_routers(configs)
        names = sorted({n[len(SET_PREFIX_SHARED):] for r in fw for n in configs[r].firewall.sets if n.startswith(SET_PREFIX_SHARED)})
        for name in names:
            holders = [r for r in fw if shared_set(name) in configs[r].firewall.sets]
            first = configs[holders[0]].firewall
            elems = first.sets[shared_set(name)].elements
            router = next((r for r in sorted(configs) if interface_of(name) in configs[r].interfaces), None)
            if len(elems) != 1 or router is None:
                continue
            clients = [x.saddr_set[len(SET_PREFIX):] for x in first.forward_rules
                       if x.daddr_set == shared_set(name) and x.action == "accept" and x.saddr_set
                       and x.saddr_set.startswith(SET_PREFIX)]
            isolate = FirewallRule(daddr_set=shared_set(name), action="drop") in first.forward_rules
            try:
                spec = SharedServiceAdd(name=name, router=router, prefix=elems[0], clients=clients, isolate=isolate)
            except ValueError:
                continue  # no client left: not a service this class describes
            out.append(Service(id=spec.service_id(), type=self.name, spec=spec, routers=sorted({router, *holders})))
        return out

    def invariants(self, configs: dict[str, Any], topology: Any) -> list[ReachCheck]:
        sites = site_hosts(configs, topology)
        out: list[ReachCheck] = []
        for svc in self.discover(configs):
            spec = svc.spec
            if spec.name not in topology.nodes:
                continue
            dst = host_address(topology, spec.name) or spec.host.ip
            tenants = sorted({s.tenant for s in sites})
            for t in tenants:
                expect = t in spec.clients
                if not expect and not spec.isolate:
                    continue
                for s in _sample([s for s in sites if s.tenant == t]):
                    out.append(ReachCheck(src=s.host, dst=dst, dst_node=spec.name, expect=expect, service=svc.id))
        return out

    def named_tenants(self, ch: Any, known: set[str]) -> set[str]:
        return set(ch.clients) if ch.action == "add" else set(known)

    def named_networks(self, ch: Any) -> list[IPv4Network]:
        return [ch.prefix] if ch.action == "add" else []

    def generate(self, build: Any, layer: Any) -> None:
        """``layer.density`` service hosts (``dns1``, ``ntp2``, ...) on Zipf-drawn routers
        (cores first, then edges), each subscribed by a random non-empty subset of the tenants,
        isolated from the others; subnets ``/prefixlen`` (28) from ``options.range``
        (198.18.240.0/20), a random free one, a trap's right after the previous service's
        on the same router (a too-broad set element or rule covers both). Raises GeneratorError
        when the range is full, there is no tenant or no router with the firewall."""
        rng = build.rng(layer.stream)
        rng_range = IPv4Network(layer.options.get("range", DEFAULT_RANGE))
        plen = int(layer.options.get("prefixlen", DEFAULT_PREFIXLEN))
        tenants = list(build.tenants)
        routers = build.routers("core") + build.routers("edge")
        if not tenants or not routers:
            raise GeneratorError(f"layer {self.name}: the build has no tenants or no core/edge routers")
        prev: SharedServiceAdd | None = None
        for i in range(layer.density):
            trap = prev is not None and rng.random() < layer.trap_rate
            name = _free_name(build, KINDS[i % len(KINDS)])
            router, prefix = (prev.router, _adjacent(build, prev.prefix, rng_range)) if trap else (None, None)  # type: ignore[union-attr]
            if prefix is None:  # no trap, or the neighbouring subnet is taken
                try:
                    router, prefix = build.zipf_choice(rng, routers), build.allocate(rng_range, plen, rng=rng)
                except GeneratorError as exc:
                    raise GeneratorError(f"layer {self.name}: {exc}") from None
            k = rng.randint(1, len(tenants))
            ch = SharedServiceAdd(name=name, router=router, prefix=prefix, clients=rng.sample(tenants, k))
            try:
                self.check(ch, f"layers.{self.name}.{i}", build.configs)
            except IntentError as exc:
                raise GeneratorError(f"layer {self.name}: {exc}") from None
            self.apply(ch, f"layers.{self.name}.{i}", build.configs, None, {})
            build.add_host(name, router, interface_of(name), ch.host, ch.gateway.ip)
            build.instances.setdefault(self.name, []).append(ch.service_id())
            prev = ch
        for r in build.configs:
            build.configs[r] = build.configs[r].canonical()


def _sample(sites: list[Any]) -> list[Any]:
    """At most SAMPLE sites: one per edge first (in site order), then the rest in order."""
    first, rest, edges = [], [], set()
    for s in sites:
        (rest if s.edge in edges else first).append(s)
        edges.add(s.edge)
    return (first + rest)[:SAMPLE]


def _adjacent(build: Any, prev: IPv4Network, within: IPv4Network) -> IPv4Network | None:
    """The subnet right after ``prev`` (same length), claimed, if it is free and in ``within``."""
    nxt = IPv4Network(f"{prev.broadcast_address + 1}/{prev.prefixlen}")
    if not nxt.subnet_of(within) or not build.is_free(nxt):
        return None
    build.claim(nxt)
    return nxt


def _free_name(build: Any, kind: str) -> str:
    n = 1
    while f"{kind}{n}" in build.nodes():
        n += 1
    return f"{kind}{n}"
