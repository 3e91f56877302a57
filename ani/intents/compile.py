"""Compile service changes into intended per-router DeviceConfigs.

::

    configs = network_configs(scenario)                       # current state
    result = compile_changes(changes, configs, pools=Pools.for_scenario(scenario, configs))
    result.configs          # {router: intended DeviceConfig}, ONLY the routers that change
    result.allocations      # {"changes.0.prefix": "198.19.0.0/24", "changes.0.seq/e2": 30, ...}
    result.changes          # the changes as models, allocated values filled in

Changes apply in order, each against the state the previous ones left; each is checked first
(:func:`ani.intents.validate.check_change`: references, conflicts), so the first refused change
raises :class:`~ani.intents.errors.IntentError` naming its field (``changes.<i>.<field>``).
The result is deterministic: the same changes on the same configs and pools give equal
results. Neither the input configs nor the pools passed in are modified (allocation works on a
copy of the pools). What each service compiles to: ``docs/intents.md``.
"""

from __future__ import annotations

import copy

from dataclasses import dataclass, field
from ipaddress import IPv4Interface, IPv4Network
from typing import Any

from ani.device.model import (
    BgpAfPeer,
    DeviceConfig,
    Firewall,
    FirewallRule,
    FirewallSet,
    Interface,
    Peer,
    PrefixList,
    PrefixListEntry,
    RouteMap,
    RouteMapEntry,
    StaticRoute,
)
from ani.intents.errors import IntentError, PoolExhausted
from ani.intents.inventory import Inventory, tenant_list, tenant_set
from ani.intents.models import parse_changes
from ani.intents.pools import Pools


@dataclass
class CompileResult:
    configs: dict[str, DeviceConfig]
    allocations: dict[str, Any] = field(default_factory=dict)
    changes: list[Any] = field(default_factory=list)

    @property
    def routers(self) -> list[str]:
        return sorted(self.configs)

    def diff(self, before: dict[str, DeviceConfig]) -> dict[str, str]:
        """``{router: unified diff}`` of the rendered FRR config and nftables table, from
        ``before`` (the configs compiled against) to the intended config, for each router that
        changes (for a dry run; lines as FRR / nft print them)."""
        import difflib

        from ani.device.firewall import render as render_nft
        from ani.device.render import render as render_frr

        def text(cfg: DeviceConfig | None) -> list[str]:
            if cfg is None:
                return []
            out = render_frr(cfg).splitlines()
            return out + (render_nft(cfg.firewall).splitlines() if cfg.firewall is not None else [])

        return {
            r: "\n".join(difflib.unified_diff(text(before.get(r)), text(self.configs[r]), f"{r}/running", f"{r}/intended", lineterm=""))
            + "\n"
            for r in self.routers
        }


def compile_changes(
    changes: list[Any], configs: dict[str, DeviceConfig], *, pools: Pools | None = None
) -> CompileResult:
    """See the module doc. ``changes``: models or mappings. Raises IntentError (incl. PoolExhausted)."""
    from ani.intents.validate import check_change

    models = parse_changes(changes)
    state = {r: c.model_copy(deep=True) for r, c in configs.items()}
    # allocate from a copy: the caller's pools are not consumed, so compiling twice gives the same result
    pools = copy.deepcopy(pools, {id(pools.configs): pools.configs}) if pools is not None else Pools.from_configs(state)
    allocations: dict[str, Any] = {}
    done = []
    for i, ch in enumerate(models):
        path = f"changes.{i}"
        check_change(ch, path, state)  # before allocating: an existing service, an unknown router ...
        try:
            ch = _allocate(ch, path, state, pools, allocations)
            check_change(ch, path, state)
            _APPLY[(ch.type, ch.action)](ch, path, state, pools, allocations)
        except PoolExhausted as exc:
            raise PoolExhausted(exc.pool, exc.size, exc.path or path) from None
        except IntentError:
            raise
        except ValueError as exc:  # a device-model rule (pydantic): the value FRR would refuse
            raise IntentError("invalid", _first_error(exc), path) from None
        for r in list(state):
            state[r] = _canonical(state[r], r, path)
        done.append(ch)
    touched = {r: c for r, c in state.items() if c != configs.get(r)}
    return CompileResult(configs=touched, allocations=allocations, changes=done)


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        e = errors()[0]
        return f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}".lstrip(": ")
    return str(exc).splitlines()[0]


def _canonical(cfg: DeviceConfig, router: str, path: str) -> DeviceConfig:
    try:
        return cfg.canonical()
    except ValueError as exc:
        msg = str(exc).splitlines()
        raise IntentError("invalid", f"{router}: the change makes an invalid configuration: {' '.join(msg[:3])}", path) from None


# -- allocation -------------------------------------------------------------------------------


def _allocate(ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> Any:
    """Fill in what the change leaves to the pools (site prefix, gateway, interface)."""
    upd: dict[str, Any] = {}
    if ch.type == "tenant-site" and ch.action == "onboard":
        if ch.prefix is None:
            if not pools.has_site_pool(ch.tenant):
                raise IntentError("invalid", "no prefix given and there is no site pool to allocate one from "
                                  "(adapter option site_network is not set): give the site's prefix", f"{path}.prefix")
            try:
                upd["prefix"] = pools.site_prefix(ch.tenant).allocate()
            except PoolExhausted as exc:
                raise PoolExhausted(exc.pool, exc.size, f"{path}.prefix") from None
            alloc[f"{path}.prefix"] = str(upd["prefix"])
        prefix = upd.get("prefix", ch.prefix)
        if ch.gateway is None:
            upd["gateway"] = pools.gateway(prefix)
            alloc[f"{path}.gateway"] = str(upd["gateway"])
        if ch.interface is None:
            upd["interface"] = f"to-{ch.site}"
    elif ch.type == "tenant-site" and ch.action == "move":
        if ch.interface is None:
            upd["interface"] = f"to-{ch.site}"
    return ch.model_copy(update=upd) if upd else ch


# -- per service -------------------------------------------------------------------------------


def _site_attach(state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any], path: str,
                 tenant: str, edge: str, ifname: str, prefix: IPv4Network, gateway: Any, seq: int | None = None) -> None:
    cfg = state[edge]
    plist = tenant_list(cfg)
    assert plist is not None  # checked
    lst = cfg.prefix_lists.get(plist)
    if lst is None or not any(e.prefix == prefix for e in lst.entries):
        if seq is None or (lst is not None and any(e.seq == seq for e in lst.entries)):
            seq = pools.seq(edge, plist).allocate()
        else:
            pools.seq(edge, plist).used.add(seq)
        alloc[f"{path}.seq/{edge}/{plist}"] = seq
        entry = PrefixListEntry(seq=seq, action="permit", prefix=prefix)
        cfg.prefix_lists[plist] = PrefixList(entries=[*(lst.entries if lst else []), entry])
    iface = cfg.interfaces.get(ifname, Interface())
    cfg.interfaces[ifname] = iface.model_copy(update={"addresses": [*iface.addresses, IPv4Interface(f"{gateway}/{prefix.prefixlen}")]})
    _set_element(state, tenant, prefix, add=True)


def _site_detach(state: dict[str, DeviceConfig], spec: Any, *, keep_set: bool = False) -> int | None:
    """Remove a site's entry and address from its edge; returns the seq it had."""
    cfg = state[spec.edge]
    plist = tenant_list(cfg)
    seq = None
    if plist and plist in cfg.prefix_lists:
        entries = cfg.prefix_lists[plist].entries
        seq = next((e.seq for e in entries if e.prefix == spec.prefix), None)
        rest = [e for e in entries if e.prefix != spec.prefix]
        if rest:
            cfg.prefix_lists[plist] = PrefixList(entries=rest)
        else:
            del cfg.prefix_lists[plist]
    iface = cfg.interfaces.get(spec.interface)
    if iface is not None:
        addrs = [a for a in iface.addresses if a.ip != spec.gateway]
        cfg.interfaces[spec.interface] = iface.model_copy(update={"addresses": addrs})
    if not keep_set:
        _set_element(state, spec.tenant, spec.prefix, add=False)
    return seq


def _set_element(state: dict[str, DeviceConfig], tenant: str, prefix: IPv4Network, *, add: bool) -> None:
    """Add / remove ``prefix`` in set ``tenant_<tenant>`` on every router that has the set."""
    name = tenant_set(tenant)
    for cfg in state.values():
        if cfg.firewall is None or name not in cfg.firewall.sets:
            continue
        elems = [e for e in cfg.firewall.sets[name].elements if e != prefix]
        if add:
            elems.append(prefix)
        cfg.firewall.sets[name] = FirewallSet(elements=elems)


def _site_onboard(ch, path, state, pools, alloc) -> None:
    _site_attach(state, pools, alloc, path, ch.tenant, ch.edge, ch.interface, ch.prefix, ch.gateway)


def _site_move(ch, path, state, pools, alloc) -> None:
    old = Inventory(state).get_service(ch.service_id()).spec
    seq = _site_detach(state, old, keep_set=True)
    prefix = ch.prefix or old.prefix
    gateway = ch.gateway or (old.gateway if prefix == old.prefix else pools.gateway(prefix))
    if prefix != old.prefix:
        _set_element(state, old.tenant, old.prefix, add=False)
    _site_attach(state, pools, alloc, path, ch.tenant, ch.edge, ch.interface, prefix, gateway, seq)


def _site_remove(ch, path, state, pools, alloc) -> None:
    _site_detach(state, Inventory(state).get_service(ch.service_id()).spec)


def _fw_routers(ch, state) -> list[str]:
    return list(ch.routers) if ch.routers is not None else [r for r, c in state.items() if c.firewall is not None]


def _fw_apply(ch, path, state, pools, alloc) -> None:
    inv = Inventory(state)
    name = tenant_set(ch.tenant)
    others = ch.isolate_from if ch.isolate_from is not None else [t for t in inv.tenants() if t != ch.tenant]
    prefixes = [s.spec.prefix for s in inv.list_services("tenant-site") if s.spec.tenant == ch.tenant]
    for r in _fw_routers(ch, state):
        cfg = state[r]
        fw = cfg.firewall.model_copy(deep=True) if cfg.firewall is not None else Firewall()
        elems = set(fw.sets[name].elements) if name in fw.sets else set()
        fw.sets[name] = FirewallSet(elements=sorted(elems | set(prefixes)))
        rules = [x for x in fw.forward_rules if not (x.action == "drop" and name in (x.saddr_set, x.daddr_set)
                                                      and {x.saddr_set, x.daddr_set} - {name} <= {tenant_set(o) for o in others})]
        for o in sorted(others):
            for s, d in ((name, tenant_set(o)), (tenant_set(o), name)):
                rule = FirewallRule(saddr_set=s, daddr_set=d, action="drop")
                if rule not in rules:
                    rules.append(rule)
        fw.forward_rules = rules
        cfg.firewall = fw


def _fw_remove(ch, path, state, pools, alloc) -> None:
    name = tenant_set(ch.tenant)
    for r in _fw_routers(ch, state):
        fw = state[r].firewall
        if fw is None:
            continue
        fw.forward_rules = [x for x in fw.forward_rules if name not in (x.saddr_set, x.daddr_set)]
        fw.sets.pop(name, None)


def _route_add(ch, path, state, pools, alloc) -> None:
    cfg = state[ch.router]
    rest = [r for r in cfg.static_routes if not (r.prefix == ch.prefix and r.nexthop == ch.next_hop)]
    cfg.static_routes = [*rest, StaticRoute(prefix=ch.prefix, nexthop=ch.next_hop, distance=ch.distance)]


def _route_remove(ch, path, state, pools, alloc) -> None:
    cfg = state[ch.router]
    cfg.static_routes = [r for r in cfg.static_routes if not (r.prefix == ch.prefix and str(r.nexthop) == ch.next_hop)]


def _drop_address(state, address) -> None:
    for cfg in state.values():
        for ifname, iface in list(cfg.interfaces.items()):
            if any(a.ip == address.ip for a in iface.addresses):
                cfg.interfaces[ifname] = iface.model_copy(update={"addresses": [a for a in iface.addresses if a.ip != address.ip]})


def _float_add(ch, path, state, pools, alloc) -> None:
    _drop_address(state, ch.address)
    cfg = state[ch.router]
    iface = cfg.interfaces.get(ch.interface, Interface())
    cfg.interfaces[ch.interface] = iface.model_copy(update={"addresses": [*iface.addresses, ch.address]})


def _float_remove(ch, path, state, pools, alloc) -> None:
    _drop_address(state, ch.address)


def _bgp_add(ch, path, state, pools, alloc) -> None:
    bgp = state[ch.router].bgp
    bgp.neighbors[str(ch.neighbor)] = Peer(remote_as=ch.remote_as, peer_group=ch.peer_group,
                                           description=ch.description, update_source=ch.update_source)
    af = BgpAfPeer(route_map_in=ch.route_map_in, route_map_out=ch.route_map_out)
    if not af.is_empty():
        bgp.ipv4_unicast.peers[str(ch.neighbor)] = af


def _bgp_remove(ch, path, state, pools, alloc) -> None:
    bgp = state[ch.router].bgp
    bgp.neighbors.pop(str(ch.neighbor), None)
    bgp.ipv4_unicast.peers.pop(str(ch.neighbor), None)


def _pl_add(ch, path, state, pools, alloc) -> None:
    seq = ch.seq
    if seq is None:  # one seq for every router: the largest of what each router's pool offers
        seq = max(pools.seq(r, ch.name).allocate() for r in ch.routers)
        alloc[f"{path}.seq"] = seq
    for r in ch.routers:
        pools.seq(r, ch.name).used.add(seq)
        cfg = state[r]
        lst = cfg.prefix_lists.get(ch.name)
        entry = PrefixListEntry(seq=seq, action=ch.entry_action, prefix=ch.prefix, ge=ch.ge, le=ch.le)
        cfg.prefix_lists[ch.name] = PrefixList(entries=[*(lst.entries if lst else []), entry])


def _drop_entries(lists: dict, name: str, keep, make) -> None:
    """Keep the entries of ``lists[name]`` for which ``keep(entry)`` holds (``make(entries=...)``
    rebuilds the list); a list left empty goes. No list of that name: nothing to do."""
    lst = lists.get(name)
    if lst is None:
        return
    rest = [e for e in lst.entries if keep(e)]
    if rest:
        lists[name] = make(entries=rest)
    else:
        del lists[name]


def _pl_remove(ch, path, state, pools, alloc) -> None:
    for r in ch.routers:
        _drop_entries(state[r].prefix_lists, ch.name, lambda e: e.prefix != ch.prefix, PrefixList)


def _rm_add(ch, path, state, pools, alloc) -> None:
    for r in ch.routers:
        cfg = state[r]
        rm = cfg.route_maps.get(ch.name)
        entry = RouteMapEntry(seq=ch.seq, action=ch.entry_action, match_prefix_list=ch.match_prefix_list,
                              set_local_preference=ch.set_local_preference, set_metric=ch.set_metric,
                              set_community=ch.set_community)
        cfg.route_maps[ch.name] = RouteMap(entries=[*(rm.entries if rm else []), entry])


def _rm_remove(ch, path, state, pools, alloc) -> None:
    for r in ch.routers:
        _drop_entries(state[r].route_maps, ch.name, lambda e: e.seq != ch.seq, RouteMap)


_APPLY = {
    ("tenant-site", "onboard"): _site_onboard,
    ("tenant-site", "move"): _site_move,
    ("tenant-site", "remove"): _site_remove,
    ("tenant-firewall", "apply"): _fw_apply,
    ("tenant-firewall", "remove"): _fw_remove,
    ("static-route", "add"): _route_add,
    ("static-route", "remove"): _route_remove,
    ("floating-address", "add"): _float_add,
    ("floating-address", "remove"): _float_remove,
    ("bgp-peering", "add"): _bgp_add,
    ("bgp-peering", "remove"): _bgp_remove,
    ("prefix-list-entry", "add"): _pl_add,
    ("prefix-list-entry", "remove"): _pl_remove,
    ("route-map-entry", "add"): _rm_add,
    ("route-map-entry", "remove"): _rm_remove,
}
