"""Existing service instances, discovered from the routers' DeviceConfigs.

::

    configs = network_configs(scenario)           # {router: DeviceConfig incl. firewall}
    inv = Inventory(configs)
    inv.list_services()                           # every Service, sorted by id
    inv.list_services("tenant-site")              # one type
    inv.get_service("tenant-site/blue/blue2")     # a Service, or None

A :class:`Service` is ``id``, ``type``, ``spec`` (the model of the change that would create it,
e.g. a :class:`TenantSiteOnboard`) and ``routers`` (where it is configured).

How services are recognised:

- tenant-site: on a router whose ``redistribute connected`` route-map matches a prefix-list,
  each entry of that list with a prefix that an interface address of the router lies in; the
  tenant is the one whose nftables set ``tenant_<t>`` holds the prefix (on any router); the site
  name is the interface name without ``to-``.
- tenant-firewall: each set ``tenant_<t>``; ``isolate_from`` the tenants ``o`` with a drop
  rule ``@tenant_<t> -> @tenant_<o>``.
- prefix-list-entry / route-map-entry: identical entries (list, prefix / seq) grouped over routers.
- bgp-peering: each neighbor; static-route: each route; floating-address: an address of ``lo``
  other than the router's first one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network
from typing import Any

from ani.device.model import DeviceConfig, Firewall, FirewallRule, FirewallSet
from ani.intents.models import (
    BgpPeeringAdd,
    FloatingAddressAdd,
    PrefixListEntryAdd,
    RouteMapEntryAdd,
    StaticRouteAdd,
    TenantFirewallApply,
    TenantSiteOnboard,
)

SET_PREFIX = "tenant_"


def tenant_set(tenant: str) -> str:
    """The nftables set of a tenant's prefixes."""
    return f"{SET_PREFIX}{tenant}"


# -- the network's configurations ------------------------------------------------------------------

_SET_RE = re.compile(r"set\s+(\S+)\s*\{(.*?)\}", re.S)
_ELEM_RE = re.compile(r"elements\s*=\s*\{([^}]*)")
_POLICY_RE = re.compile(r"policy\s+(accept|drop)\s*;")
_RULE_RE = re.compile(r"^\s*(?:ip saddr @(\S+)\s*)?(?:ip daddr @(\S+)\s*)?(accept|drop)\s*$")


def parse_nft_text(text: str) -> Firewall | None:
    """The Firewall of an ``nft -f`` script in the form ``ani.device.firewall.render`` writes
    (``table inet fw`` with IPv4 interval sets and a ``forward`` chain); None for an empty text.
    Raises ValueError on anything else."""
    if not text.strip():
        return None
    if "table inet fw" not in text:
        raise ValueError("no 'table inet fw' in the nftables text")
    sets = {}
    for m in _SET_RE.finditer(text):
        elems = _ELEM_RE.search(m.group(2))
        items = [e.strip() for e in elems.group(1).split(",") if e.strip()] if elems else []
        sets[m.group(1)] = FirewallSet(elements=[IPv4Network(e) for e in items])
    chain = text[text.index("chain forward") :] if "chain forward" in text else ""
    policy = _POLICY_RE.search(chain)
    rules = []
    for line in chain.splitlines()[1:]:
        line = line.strip()
        if not line or line.startswith(("type ", "}")):
            continue
        m = _RULE_RE.match(line)
        if m is None:
            raise ValueError(f"unsupported nftables rule: {line!r}")
        rules.append(FirewallRule(saddr_set=m.group(1), daddr_set=m.group(2), action=m.group(3)))
    return Firewall(sets=sets, forward_policy=policy.group(1) if policy else "accept", forward_rules=rules)


def network_configs(scenario: Any) -> dict[str, DeviceConfig]:
    """``{router: DeviceConfig}`` of a scenario's startup state: the FRR config
    (``scenario.device_configs``) with the firewall of the router's ``nftables`` text."""
    out = {}
    for name, cfg in scenario.device_configs.items():
        fw = parse_nft_text(scenario.topology.routers[name].nftables)
        out[name] = cfg.model_copy(deep=True, update={"firewall": fw}) if fw is not None else cfg.model_copy(deep=True)
    return out


# -- services --------------------------------------------------------------------------------------


@dataclass
class Service:
    """One service instance: ``id``, ``type``, ``spec`` (the model that creates it), ``routers``."""

    id: str
    type: str
    spec: Any
    routers: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "routers": list(self.routers), "spec": self.spec.model_dump(mode="json")}


def tenant_list(cfg: DeviceConfig) -> str | None:
    """The prefix-list of tenant prefixes of an edge: the first one matched by the route-map
    of ``redistribute connected`` (None if there is none)."""
    if cfg.bgp is None:
        return None
    rmap = cfg.bgp.ipv4_unicast.redistribute.get("connected")
    if rmap is None or rmap not in cfg.route_maps:
        return None
    for e in cfg.route_maps[rmap].entries:
        if e.match_prefix_list:
            return e.match_prefix_list
    return None


class Inventory:
    """The services configured in ``configs`` (``{router: DeviceConfig}``); see the module doc."""

    def __init__(self, configs: dict[str, DeviceConfig]) -> None:
        self.configs = configs
        self._services = {s.id: s for s in self._discover()}

    def list_services(self, service_type: str | None = None) -> list[Service]:
        """Every service (of ``service_type`` if given), sorted by id."""
        return [self._services[k] for k in sorted(self._services) if service_type in (None, self._services[k].type)]

    def get_service(self, service_id: str) -> Service | None:
        return self._services.get(service_id)

    def tenants(self) -> list[str]:
        """Tenants with a set ``tenant_<t>`` or a site, sorted."""
        names = {s.spec.tenant for s in self._services.values() if s.type in ("tenant-site", "tenant-firewall")}
        return sorted(names)

    def tenant_of(self, prefix: IPv4Network) -> str | None:
        for cfg in self.configs.values():
            if cfg.firewall is None:
                continue
            for name, s in cfg.firewall.sets.items():
                if name.startswith(SET_PREFIX) and any(prefix.overlaps(e) for e in s.elements):
                    return name[len(SET_PREFIX) :]
        return None

    # -- discovery -------------------------------------------------------------------------------

    def _discover(self) -> list[Service]:
        out: list[Service] = []
        out += self._sites()
        out += self._firewalls()
        out += self._list_entries()
        for r, cfg in self.configs.items():
            for rt in cfg.static_routes:
                spec = StaticRouteAdd(router=r, prefix=rt.prefix, next_hop=rt.nexthop, distance=rt.distance)
                out.append(Service(spec.service_id(), "static-route", spec, [r]))
            if cfg.bgp is not None:
                for addr, p in cfg.bgp.neighbors.items():
                    af = cfg.bgp.ipv4_unicast.peers.get(addr)
                    spec = BgpPeeringAdd(
                        router=r, neighbor=IPv4Address(addr), remote_as=p.remote_as, peer_group=p.peer_group,
                        description=p.description, update_source=p.update_source,
                        route_map_in=af.route_map_in if af else None, route_map_out=af.route_map_out if af else None,
                    )
                    out.append(Service(spec.service_id(), "bgp-peering", spec, [r]))
            lo = cfg.interfaces.get("lo")
            if lo is not None:
                for a in lo.addresses[1:]:
                    spec = FloatingAddressAdd(address=a, router=r, interface="lo")
                    out.append(Service(spec.service_id(), "floating-address", spec, [r]))
        return out

    def _sites(self) -> list[Service]:
        out = []
        for r, cfg in self.configs.items():
            plist = tenant_list(cfg)
            if plist is None or plist not in cfg.prefix_lists:
                continue
            for e in cfg.prefix_lists[plist].entries:
                if e.prefix is None or e.action != "permit":
                    continue
                for ifname, iface in cfg.interfaces.items():
                    addr = next((a for a in iface.addresses if a.ip in e.prefix), None)
                    if addr is None:
                        continue
                    tenant = self.tenant_of(e.prefix)
                    if tenant is None:
                        continue
                    site = ifname[3:] if ifname.startswith("to-") else ifname
                    spec = TenantSiteOnboard(
                        tenant=tenant, site=site, edge=r, interface=ifname, prefix=e.prefix, gateway=addr.ip
                    )
                    out.append(Service(spec.service_id(), "tenant-site", spec, [r]))
                    break
        return out

    def _firewalls(self) -> list[Service]:
        found: dict[str, tuple[set[str], list[str]]] = {}
        for r, cfg in self.configs.items():
            if cfg.firewall is None:
                continue
            for name in cfg.firewall.sets:
                if not name.startswith(SET_PREFIX):
                    continue
                tenant = name[len(SET_PREFIX) :]
                iso, routers = found.setdefault(tenant, (set(), []))
                routers.append(r)
                for rule in cfg.firewall.forward_rules:
                    if rule.action == "drop" and rule.saddr_set == name and rule.daddr_set and rule.daddr_set.startswith(SET_PREFIX):
                        iso.add(rule.daddr_set[len(SET_PREFIX) :])
        out = []
        for tenant, (iso, routers) in found.items():
            spec = TenantFirewallApply(tenant=tenant, isolate_from=sorted(iso), routers=routers)
            out.append(Service(spec.service_id(), "tenant-firewall", spec, routers))
        return out

    def _list_entries(self) -> list[Service]:
        pl: dict[tuple, list[str]] = {}
        rm: dict[tuple, list[str]] = {}
        for r, cfg in self.configs.items():
            for name, lst in cfg.prefix_lists.items():
                for e in lst.entries:
                    pl.setdefault((name, e.prefix, e.seq, e.action, e.ge, e.le), []).append(r)
            for name, rmap in cfg.route_maps.items():
                for e in rmap.entries:
                    key = (name, e.seq, e.action, e.match_prefix_list, e.set_local_preference, e.set_metric,
                           tuple(e.set_community) if e.set_community else None)
                    rm.setdefault(key, []).append(r)
        out = []
        by_id: dict[str, Service] = {}
        for (name, prefix, seq, action, ge, le), routers in pl.items():
            spec = PrefixListEntryAdd(routers=routers, name=name, seq=seq, entry_action=action, prefix=prefix, ge=ge, le=le)
            sid = spec.service_id()
            if sid in by_id:  # the same prefix at different seqs on different routers: one service
                old = by_id[sid]
                old.routers = old.routers + routers
                old.spec = old.spec.model_copy(update={"routers": old.routers, "seq": None})
                continue
            by_id[sid] = Service(sid, "prefix-list-entry", spec, routers)
        out += by_id.values()
        for (name, seq, action, mpl, lp, metric, comm), routers in rm.items():
            spec = RouteMapEntryAdd(routers=routers, name=name, seq=seq, entry_action=action, match_prefix_list=mpl,
                                    set_local_preference=lp, set_metric=metric, set_community=list(comm) if comm else None)
            out.append(Service(spec.service_id(), "route-map-entry", spec, routers))
        return out
