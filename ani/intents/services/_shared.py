"""Helpers the new service classes share (not a class): reading device models the way FRR
and nftables evaluate them.

- :func:`prefix_list_permits`: FRR's first-match evaluation of a prefix-list for one prefix.
- :func:`route_map_result`: FRR's first-match evaluation of a route-map (``match ip address
  prefix-list`` only, as the device model has it) for one prefix: the entry that decides, or None
  (no entry matched: the implicit deny).
- :func:`tenant_edges`: routers carrying tenant sites (a ``redistribute connected`` route-map
  matching a prefix-list, as ``ani.intents.inventory.tenant_list`` recognises them).
- :func:`ibgp_group`: the iBGP peer-group of a router (remote-as internal or its own AS).
- :func:`tenant_prefixes`: a tenant's prefixes (the elements of its nftables set ``tenant_<t>``).
- :func:`origin_router`: the router with an interface address inside a prefix.
- :func:`host_address`: a host's address in a topology (``tenant_site``'s reader).
- :class:`InstanceClass`: a ServiceClass whose active validation is its instances' invariants
  (less those that need a tenant site the changes remove: :func:`removed_sites`, :func:`needs_site`).
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any

from ani.device.model import DeviceConfig, PrefixList, RouteMap, RouteMapEntry
from ani.intents.services.common import SET_PREFIX, tenant_list, tenant_set
from ani.intents.services.base import ServiceClass
from ani.intents.services.tenant_site import _host_address as host_address  # noqa: F401 - one reader


def prefix_list_permits(plist: PrefixList | None, prefix: IPv4Network) -> bool:
    """True if ``plist`` permits ``prefix`` (first matching entry by seq; no match: deny).
    An entry without ge/le matches the exact length; ``ge`` alone means ge..32; ``le`` alone
    the entry's length..le (FRR 8.4)."""
    if plist is None:
        return False
    for e in plist.entries:
        if e.prefix is None:
            return e.action == "permit"
        if not prefix.subnet_of(e.prefix):
            continue
        lo = e.ge if e.ge is not None else e.prefix.prefixlen
        hi = e.le if e.le is not None else (32 if e.ge is not None else e.prefix.prefixlen)
        if lo <= prefix.prefixlen <= hi:
            return e.action == "permit"
    return False


def route_map_result(cfg: DeviceConfig, rmap: RouteMap, prefix: IPv4Network) -> RouteMapEntry | None:
    """The entry of ``rmap`` (on ``cfg``) that decides ``prefix``: the first (by seq) whose
    ``match ip address prefix-list`` permits it or that has no match; None if none does. A
    match on a prefix-list that does not exist matches nothing."""
    for e in rmap.entries:
        if e.match_prefix_list is None or prefix_list_permits(cfg.prefix_lists.get(e.match_prefix_list), prefix):
            return e
    return None


def tenant_edges(configs: dict[str, DeviceConfig]) -> list[str]:
    """Routers carrying tenant sites, sorted."""
    return sorted(r for r, c in configs.items() if tenant_list(c) is not None)


def ibgp_group(cfg: DeviceConfig) -> str | None:
    """The peer-group of ``cfg``'s iBGP sessions (remote-as internal or the router's AS)."""
    if cfg.bgp is None:
        return None
    for name, p in cfg.bgp.peer_groups.items():
        if p.remote_as in ("internal", cfg.bgp.asn):
            return name
    return None


def tenant_prefixes(configs: dict[str, DeviceConfig], tenant: str) -> list[IPv4Network] | None:
    """The elements of the set ``tenant_<tenant>`` (the first router that has it), or None."""
    for r in sorted(configs):
        fw = configs[r].firewall
        if fw is not None and tenant_set(tenant) in fw.sets:
            return list(fw.sets[tenant_set(tenant)].elements)
    return None


def known_tenants(configs: dict[str, DeviceConfig]) -> list[str]:
    """The tenants some router has a set ``tenant_<tenant>`` of, sorted (for the message of an
    unknown tenant)."""
    out = set()
    for cfg in configs.values():
        fw = cfg.firewall
        for name in (fw.sets if fw is not None else {}):
            if name.startswith(SET_PREFIX):
                out.add(name[len(SET_PREFIX):])
    return sorted(out)


def origin_router(configs: dict[str, DeviceConfig], prefix: IPv4Network, among: list[str] | None = None) -> str | None:
    """The first router (sorted, of ``among``) with an interface address inside ``prefix``."""
    for r in sorted(among if among is not None else configs):
        for iface in configs[r].interfaces.values():
            if any(a.ip in prefix for a in iface.addresses):
                return r
    return None

class InstanceClass(ServiceClass):
    """A service class whose invariants are per instance (each check's ``service`` is the id of
    the instance it protects): active validation (A3-T / A4) re-checks, after a change, the
    invariants of the instances it creates or replaces (:meth:`own_checks`, on the state
    after) and those of every other instance (:meth:`touched_invariants`, on the state before;
    an instance the change removes or replaces is left out, its old invariants no longer hold
    by design)."""

    def own_checks(self, changes: list[Any], before: dict[str, Any], after: dict[str, Any], topology: Any) -> list[Any]:
        ids = {ch.service_id() for ch in changes if ch.action != "remove"}
        return [c for c in self.invariants(after, topology) if c.service in ids]

    def touched_invariants(self, configs: dict[str, Any], topology: Any, touched: Any) -> list[Any]:
        changes = getattr(touched, "changes", ()) or ()
        mine = {ch.service_id() for ch in changes if ch.type == self.name}
        gone = removed_sites(configs, topology, touched)
        return [c for c in self.invariants(configs, topology) if c.service not in mine and not needs_site(c, gone)]


def removed_sites(configs: dict[str, Any], topology: Any, touched: Any) -> list[tuple[str | None, IPv4Network]]:
    """``(host, prefix)`` of each tenant site the changes of ``touched`` remove (a
    ``tenant-site`` remove): the prefix as discovered in ``configs`` (else the change's), the
    host as the topology has it (else the site's name, the generated brownfield's convention)."""
    from ani.intents.services.common import inventory
    from ani.intents.services.tenant_site import site_hosts

    removes = [ch for ch in getattr(touched, "changes", ()) or () if ch.type == "tenant-site" and ch.action == "remove"]
    if not removes:
        return []
    sites = touched.sites if getattr(touched, "sites", None) is not None else site_hosts(configs, topology)
    hosts = {(s.tenant, s.site): (s.host, s.prefix) for s in sites}
    specs = {(s.spec.tenant, s.spec.site): s.spec.prefix for s in inventory(configs).list_services("tenant-site")}
    out = []
    for ch in removes:
        key = (ch.tenant, ch.site)
        prefix = specs.get(key) or ch.prefix or (hosts[key][1] if key in hosts else None)
        if prefix is not None:
            out.append((hosts[key][0] if key in hosts else ch.site, prefix))
    return out


def needs_site(check: Any, sites: list[tuple[str | None, IPv4Network]]) -> bool:
    """True if ``check`` can only pass while one of ``sites`` (``(host, prefix)``) exists: a
    positive ``reach`` from its host or to an address of its prefix, a present ``route`` to
    (a part of) its prefix. Such an invariant of another class is superseded by the site's
    removal (a policy entry or an eBGP announcement of the removed prefix)."""
    from ani.observer.checks import ReachCheck, RouteCheck

    for host, prefix in sites:
        if isinstance(check, ReachCheck) and check.expect and (check.src == host or check.dst in prefix):
            return True
        if isinstance(check, RouteCheck) and check.expect and check.prefix.subnet_of(prefix):
            return True
    return False
