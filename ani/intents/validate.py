"""Validation of service changes before apply.

::

    errors = validate_changes(changes, configs, pools=pools)   # [] or [IntentError, ...]
    result = plan(changes, configs, pools=pools)               # CompileResult, or raises the first IntentError

What is checked, in order (the first error of a change stops; later changes are not checked
against a state that could not be built):

1. schema: every change matches its model (``schema``, path ``changes.<i>.<field>``);
2. per change, against the state the earlier changes leave (:func:`check_change`):
   references (``unknown-router``; ``unknown-reference`` naming the missing route-map,
   prefix-list, peer-group, tenant or interface, e.g. ``RM-UNDEF``; ``nexthop-self``: a next hop
   that is an address of the router itself), conflicts with existing services
   (``prefix-overlap`` naming the other service, ``seq-conflict`` naming the owner of the seq,
   ``address-conflict``, ``service-exists``, ``service-not-found``);
3. allocation from the pools (``pool-exhausted``);
4. every intended configuration passes :func:`ani.device.yang.validate_json` (``yang``: errors
   only; warnings are not refusals), path ``<router>:<XPath>``.
"""

from __future__ import annotations

from ipaddress import IPv4Address
from typing import Any

from ani.device.model import DeviceConfig
from ani.intents.errors import IntentError
from ani.intents.inventory import Inventory, tenant_list, tenant_set
from ani.intents.pools import Pools


def _router(state: dict[str, DeviceConfig], name: str | None, path: str) -> DeviceConfig:
    if name is None:
        raise IntentError("invalid", "a router is required", path)
    if name not in state:
        raise IntentError("unknown-router", f"unknown router {name!r} (routers: {', '.join(sorted(state))})", path)
    return state[name]


def _own_addresses(cfg: DeviceConfig) -> set[IPv4Address]:
    return {a.ip for i in cfg.interfaces.values() for a in i.addresses}


def _prefix_owner(inv: Inventory, state: dict[str, DeviceConfig], prefix, skip: str | None = None) -> str | None:
    """The service or router interface already using a network overlapping ``prefix``."""
    for s in inv.list_services("tenant-site"):
        if s.id != skip and s.spec.prefix.overlaps(prefix):
            return f"{s.id} ({s.spec.prefix})"
    for r, cfg in state.items():
        for ifname, iface in cfg.interfaces.items():
            for a in iface.addresses:
                if a.network.prefixlen < 32 and a.network.overlaps(prefix):
                    if skip is not None and (sp := inv.get_service(skip)) and sp.spec.prefix == a.network:
                        continue
                    return f"{r} interface {ifname} ({a.network})"
    return None


def _is_remove(ch, exists: bool, path: str, missing: str, taken: str | None = None, taken_path: str | None = None) -> bool:
    """Whether ``ch`` is a remove. A remove of what does not exist is ``service-not-found``
    (``missing``, at ``path``); an add of what exists is ``service-exists`` (``taken``, at
    ``taken_path``) when ``taken`` is given."""
    if ch.action == "remove":
        if not exists:
            raise IntentError("service-not-found", missing, path)
        return True
    if exists and taken is not None:
        raise IntentError("service-exists", taken, taken_path or path)
    return False


def check_change(ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
    """Raise IntentError if ``ch`` (a model, allocations filled) cannot apply to ``state``."""
    _CHECKS[ch.type](ch, path, state)


def _check_site(ch, path, state) -> None:
    inv = Inventory(state)
    sid = ch.service_id()
    existing = inv.get_service(sid)
    if ch.action == "onboard" and existing is not None:
        raise IntentError("service-exists", f"{sid} already exists on {existing.spec.edge}", path)
    if ch.action in ("move", "remove") and existing is None:
        raise IntentError("service-not-found", f"no service {sid}", path)
    if ch.action == "remove":
        if ch.edge is not None and ch.edge != existing.spec.edge:
            raise IntentError("invalid", f"{sid} is on {existing.spec.edge}, not {ch.edge}", f"{path}.edge")
        return
    if tenant_set(ch.tenant) not in {n for c in state.values() if c.firewall for n in c.firewall.sets} and ch.tenant not in inv.tenants():
        raise IntentError("unknown-reference", f"unknown tenant {ch.tenant!r} (no nftables set {tenant_set(ch.tenant)})", f"{path}.tenant")
    cfg = _router(state, ch.edge, f"{path}.edge")
    plist = tenant_list(cfg)
    if plist is None:
        raise IntentError("unknown-reference", f"{ch.edge} has no prefix-list behind 'redistribute connected route-map'", f"{path}.edge")
    if ch.edge not in [r for r, c in state.items() if c.firewall and tenant_set(ch.tenant) in c.firewall.sets]:
        raise IntentError("unknown-reference", f"{ch.edge} has no nftables set {tenant_set(ch.tenant)}", f"{path}.edge")
    prefix = ch.prefix if ch.prefix is not None else (existing.spec.prefix if existing else None)
    if prefix is None:  # not allocated yet: checked again once it is
        return
    if prefix.prefixlen == 32:
        raise IntentError("invalid", f"{prefix} has no room for a gateway and a host: a site prefix is /31 or shorter",
                          f"{path}.prefix")
    gateway = ch.gateway if ch.gateway is not None else (existing.spec.gateway if existing else None)
    if gateway is not None and gateway not in prefix:
        raise IntentError("invalid", f"gateway {gateway} is not in {prefix}", f"{path}.gateway")
    if gateway is not None and gateway in (prefix.network_address, prefix.broadcast_address) and prefix.prefixlen < 31:
        raise IntentError("invalid", f"gateway {gateway} is not a host address of {prefix}", f"{path}.gateway")
    owner = _prefix_owner(inv, state, prefix, skip=sid if existing else None)
    if owner is not None:
        raise IntentError("prefix-overlap", f"{prefix} overlaps {owner}", f"{path}.prefix")
    other = inv.tenant_of(prefix)
    if other is not None and other != ch.tenant:
        raise IntentError("prefix-overlap", f"{prefix} is in the nftables set of tenant {other}", f"{path}.prefix")
    iface = cfg.interfaces.get(ch.interface or f"to-{ch.site}")
    if iface is not None and iface.addresses and not (existing and existing.spec.edge == ch.edge and existing.spec.interface == ch.interface):
        raise IntentError("address-conflict", f"{ch.edge} interface {ch.interface} already has {', '.join(map(str, iface.addresses))}", f"{path}.interface")


def _check_fw(ch, path, state) -> None:
    inv = Inventory(state)
    sets = {n for c in state.values() if c.firewall for n in c.firewall.sets}
    for i, r in enumerate(ch.routers or []):
        _router(state, r, f"{path}.routers.{i}")
    if _is_remove(ch, tenant_set(ch.tenant) in sets, path, f"no service {ch.service_id()}"):
        return
    known = set(inv.tenants())  # a new tenant is allowed: apply creates its (empty) set
    for i, o in enumerate(ch.isolate_from or []):
        if o not in known or tenant_set(o) not in sets:
            raise IntentError("unknown-reference", f"unknown tenant {o!r} (no nftables set {tenant_set(o)})", f"{path}.isolate_from.{i}")
        if o == ch.tenant:
            raise IntentError("invalid", f"tenant {o} cannot be isolated from itself", f"{path}.isolate_from.{i}")
    for i, r in enumerate(ch.routers or []):
        fw = state[r].firewall
        for o in ch.isolate_from or []:
            if fw is None or tenant_set(o) not in fw.sets:
                raise IntentError("unknown-reference", f"{r} has no nftables set {tenant_set(o)}", f"{path}.routers.{i}")


def _check_route(ch, path, state) -> None:
    cfg = _router(state, ch.router, f"{path}.router")
    exists = any(r.prefix == ch.prefix and r.nexthop == ch.next_hop for r in cfg.static_routes)
    if _is_remove(ch, exists, path, f"no service {ch.service_id()}"):
        return
    try:
        hop = IPv4Address(ch.next_hop)
    except ValueError:
        hop = None
    if hop is not None and hop in _own_addresses(cfg):
        raise IntentError("nexthop-self", f"next hop {hop} is an address of {ch.router} itself", f"{path}.next_hop")
    if hop is None and ch.next_hop not in ("Null0", "blackhole", "reject") and ch.next_hop not in cfg.interfaces:
        raise IntentError("unknown-reference", f"{ch.router} has no interface {ch.next_hop!r}", f"{path}.next_hop")


def _check_float(ch, path, state) -> None:
    _router(state, ch.router, f"{path}.router")
    where = [(r, i) for r, c in state.items() for i, f in c.interfaces.items() if any(a.ip == ch.address.ip for a in f.addresses)]
    if _is_remove(ch, (ch.router, ch.interface) in where, path, f"{ch.address.ip} is not on {ch.router} {ch.interface}"):
        return
    for r, c in state.items():
        for i, f in c.interfaces.items():
            for a in f.addresses:
                if a.ip != ch.address.ip and a.network.prefixlen < 32 and ch.address.ip in a.network and (r, i) != (ch.router, ch.interface):
                    raise IntentError("address-conflict", f"{ch.address.ip} is in {a.network} of {r} interface {i}", f"{path}.address")


def _check_bgp(ch, path, state) -> None:
    cfg = _router(state, ch.router, f"{path}.router")
    if cfg.bgp is None:
        raise IntentError("unknown-reference", f"{ch.router} has no 'router bgp'", f"{path}.router")
    exists = str(ch.neighbor) in cfg.bgp.neighbors
    if _is_remove(ch, exists, path, f"no service {ch.service_id()}", f"{ch.service_id()} already exists", f"{path}.neighbor"):
        return
    if ch.neighbor in _own_addresses(cfg):
        raise IntentError("nexthop-self", f"neighbor {ch.neighbor} is an address of {ch.router} itself", f"{path}.neighbor")
    if ch.remote_as is None and ch.peer_group is None:
        raise IntentError("invalid", "remote_as or peer_group is required", f"{path}.remote_as")
    if ch.peer_group is not None and ch.peer_group not in cfg.bgp.peer_groups:
        raise IntentError("unknown-reference", f"peer-group {ch.peer_group} does not exist on {ch.router}", f"{path}.peer_group")
    for f in ("route_map_in", "route_map_out"):
        name = getattr(ch, f)
        if name is not None and name not in cfg.route_maps:
            raise IntentError("unknown-reference", f"route-map {name} does not exist on {ch.router}", f"{path}.{f}")


def _seq_owner(state, router: str, plist: str, seq: int) -> str:
    cfg = state[router]
    entry = next(e for e in cfg.prefix_lists[plist].entries if e.seq == seq)
    if entry.prefix is not None:
        t = Inventory(state).tenant_of(entry.prefix)
        if t is not None:
            return f"tenant {t} ({entry.prefix})"
    return f"{entry.action} {entry.prefix or 'any'}"


def _check_pl(ch, path, state) -> None:
    for i, r in enumerate(ch.routers):
        cfg = _router(state, r, f"{path}.routers.{i}")
        lst = cfg.prefix_lists.get(ch.name)
        entries = lst.entries if lst else []
        has = any(e.prefix == ch.prefix for e in entries)
        if _is_remove(ch, has, path, f"{r}: no entry {ch.prefix or 'any'} in prefix-list {ch.name}",
                      f"{r}: prefix-list {ch.name} already has {ch.prefix or 'any'}", f"{path}.prefix"):
            continue
        if ch.seq is not None and any(e.seq == ch.seq for e in entries):
            raise IntentError("seq-conflict", f"{r}: seq {ch.seq} of prefix-list {ch.name} is used by {_seq_owner(state, r, ch.name, ch.seq)}", f"{path}.seq")


def _check_rm(ch, path, state) -> None:
    for i, r in enumerate(ch.routers):
        cfg = _router(state, r, f"{path}.routers.{i}")
        rm = cfg.route_maps.get(ch.name)
        has = rm is not None and any(e.seq == ch.seq for e in rm.entries)
        if ch.action == "remove":
            if not has:
                raise IntentError("service-not-found", f"{r}: route-map {ch.name} has no entry {ch.seq}", path)
            if len(rm.entries) == 1 and cfg.bgp is not None:
                users = [k for k, v in cfg.bgp.ipv4_unicast.redistribute.items() if v == ch.name]
                users += [k for k, p in cfg.bgp.ipv4_unicast.peers.items() if ch.name in (p.route_map_in, p.route_map_out)]
                if users:
                    raise IntentError("invalid", f"{r}: route-map {ch.name} would disappear but is used by {', '.join(users)}", path)
            continue
        if has:
            raise IntentError("seq-conflict", f"{r}: seq {ch.seq} of route-map {ch.name} is already used", f"{path}.seq")
        if ch.match_prefix_list is not None and ch.match_prefix_list not in cfg.prefix_lists:
            raise IntentError("unknown-reference", f"prefix-list {ch.match_prefix_list} does not exist on {r}", f"{path}.match_prefix_list")


_CHECKS = {
    "tenant-site": _check_site,
    "tenant-firewall": _check_fw,
    "static-route": _check_route,
    "floating-address": _check_float,
    "bgp-peering": _check_bgp,
    "prefix-list-entry": _check_pl,
    "route-map-entry": _check_rm,
}


def yang_errors(configs: dict[str, DeviceConfig]) -> list[IntentError]:
    """``yang`` errors of the configurations (ani.device.yang; warnings are not errors)."""
    from ani.device.yang import to_json, validate_json

    out = []
    for r in sorted(configs):
        for issue in validate_json(to_json(configs[r])):
            if issue.severity == "error":
                out.append(IntentError("yang", f"{r}: {issue.message}", f"{r}:{issue.path}"))
    return out


def plan(changes: list[Any], configs: dict[str, DeviceConfig], *, pools: Pools | None = None):
    """Compile ``changes`` and check the intended configs; returns the CompileResult or raises
    the first IntentError."""
    from ani.intents.compile import compile_changes

    result = compile_changes(changes, configs, pools=pools)
    errors = yang_errors(result.configs)
    if errors:
        raise errors[0]
    return result


def validate_changes(changes: list[Any], configs: dict[str, DeviceConfig], *, pools: Pools | None = None) -> list[IntentError]:
    """Every error found (see the module doc); ``[]`` means the changes can be applied."""
    from ani.intents.compile import compile_changes

    try:
        result = compile_changes(changes, configs, pools=pools)
    except IntentError as exc:
        return [exc]
    return yang_errors(result.configs)
