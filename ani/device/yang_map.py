"""DeviceConfig <-> the content of ``container frr`` of YANG module ``ani-frr`` (RFC 7951 JSON).

Pure mapping, no schema checks (:mod:`ani.device.yang` validates). Field names are the model's
with ``-`` for ``_``; dict-keyed collections become YANG lists keyed by the dict key. Defaults
are not written (with-defaults "trim" mode): ``ip-forwarding`` only when false, a static
route's ``distance`` only when not 1, booleans that default to false only when true,
``forward-policy`` only when ``drop``; empty lists and empty non-presence containers are left
out. ``hostname`` and ``unmodelled`` have no YANG counterpart.

Deviations from a one-to-one copy (documented in ``docs/device-model.md``):

- ``PrefixListEntry.prefix = None`` ("any") is the value ``any``.
- ``BgpAf.peers`` is split in two lists, ``ipv4-unicast/peer-group`` (keys that are peer-group
  names) and ``ipv4-unicast/neighbor`` (keys that are neighbor addresses), so that each key is
  a plain leafref.
- ``Firewall.forward_rules`` (an ordered list) is ``forward-rule`` keyed by ``seq``; the rules
  are evaluated by ascending seq. :func:`model_to_raw` numbers them 10, 20, 30, ...
- ``Ospf.throttle_spf`` / ``Bgp.timers`` / ``Peer.timers`` (tuples) are presence containers
  with named leaves.
- ``Bgp.ebgp_requires_policy`` (default true) is written only when false.
"""

from __future__ import annotations

from ipaddress import IPv4Address
from typing import Any

from ani.device.model import DeviceConfig, Interface, Peer

TOP = "ani-frr:frr"

_PEER_FIELDS = ("remote_as", "description", "update_source", "timers_connect")
_RM_FIELDS = ("match_prefix_list", "set_community", "set_local_preference", "set_metric")


def _y(name: str) -> str:
    return name.replace("_", "-")


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != [] and value != {}:
        out[key] = value


# -- model -> raw ------------------------------------------------------------------------------


def model_to_raw(m: DeviceConfig) -> dict[str, Any]:
    """``{"ani-frr:frr": {...}}`` for ``m`` (RFC 7951 JSON: numbers for integers up to 32 bits,
    booleans, strings)."""
    f: dict[str, Any] = {}
    if not m.ip_forwarding:
        f["ip-forwarding"] = False
    if not m.ipv6_forwarding:
        f["ipv6-forwarding"] = False
    _put(f, "bgp-route-map-delay-timer", m.bgp_route_map_delay_timer)
    _put(f, "interface", [_interface(name, i) for name, i in m.interfaces.items()])
    routes = []
    for r in m.static_routes:
        e: dict[str, Any] = {"prefix": str(r.prefix), "next-hop": r.nexthop}
        if r.distance != 1:
            e["distance"] = r.distance
        routes.append(e)
    _put(f, "static-route", routes)
    if m.ospf is not None:
        o = m.ospf
        d: dict[str, Any] = {}
        _put(d, "router-id", o.router_id and str(o.router_id))
        if o.passive_default:
            d["passive-default"] = True
        _put(d, "network", [{"prefix": str(n.prefix), "area": n.area} for n in o.networks])
        if o.throttle_spf is not None:
            d["throttle-spf"] = dict(zip(("delay", "init-hold", "max-hold"), o.throttle_spf))
        _put(d, "throttle-lsa-all", o.throttle_lsa_all)
        _put(d, "lsa-min-arrival", o.lsa_min_arrival)
        f["ospf"] = d
    if m.bgp is not None:
        f["bgp"] = _bgp(m)
    _put(f, "prefix-list", [
        {"name": name, "entry": [_pl_entry(e) for e in pl.entries]} for name, pl in m.prefix_lists.items()])
    _put(f, "route-map", [
        {"name": name, "entry": [_rm_entry(e) for e in rm.entries]} for name, rm in m.route_maps.items()])
    if m.firewall is not None:
        fw = m.firewall
        d = {}
        _put(d, "set", [{"name": n, **({"element": [str(x) for x in s.elements]} if s.elements else {})}
                        for n, s in fw.sets.items()])
        if fw.forward_policy != "accept":
            d["forward-policy"] = fw.forward_policy
        rules = []
        for i, r in enumerate(fw.forward_rules):
            e = {"seq": 10 * (i + 1)}
            _put(e, "saddr-set", r.saddr_set)
            _put(e, "daddr-set", r.daddr_set)
            e["action"] = r.action
            rules.append(e)
        _put(d, "forward-rule", rules)
        f["firewall"] = d
    return {TOP: f}


def _interface(name: str, i: Interface) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    _put(out, "description", i.description)
    _put(out, "address", [a.with_prefixlen for a in i.addresses])
    o: dict[str, Any] = {}
    for k in ("area", "network", "hello_interval", "dead_interval"):
        _put(o, _y(k), getattr(i.ospf, k))
    if i.ospf.passive:
        o["passive"] = True
    _put(out, "ospf", o)
    return out


def _peer(key_name: str, key: str, p: Peer) -> dict[str, Any]:
    out: dict[str, Any] = {key_name: key}
    _put(out, "peer-group", p.peer_group)
    for k in _PEER_FIELDS:
        _put(out, _y(k), getattr(p, k))
    if p.shutdown:
        out["shutdown"] = True
    if p.timers is not None:
        out["timers"] = {"keepalive": p.timers[0], "holdtime": p.timers[1]}
    return out


def _bgp(m: DeviceConfig) -> dict[str, Any]:
    b = m.bgp
    assert b is not None
    out: dict[str, Any] = {"asn": b.asn}
    _put(out, "router-id", b.router_id and str(b.router_id))
    _put(out, "coalesce-time", b.coalesce_time)
    if b.timers is not None:
        out["timers"] = {"keepalive": b.timers[0], "holdtime": b.timers[1]}
    if not b.ebgp_requires_policy:
        out["ebgp-requires-policy"] = False
    _put(out, "peer-group", [_peer("name", n, p) for n, p in b.peer_groups.items()])
    _put(out, "neighbor", [_peer("address", a, p) for a, p in b.neighbors.items()])
    af = b.ipv4_unicast
    a: dict[str, Any] = {}
    _put(a, "network", [str(n) for n in af.networks])
    redist = []
    for src, rm in af.redistribute.items():
        redist.append({"source": src, **({"route-map": rm} if rm is not None else {})})
    _put(a, "redistribute", redist)
    groups, neighbors = [], []
    for key, ap in af.peers.items():
        is_group = key in b.peer_groups
        e: dict[str, Any] = {("name" if is_group else "address"): key}
        if ap.route_reflector_client:
            e["route-reflector-client"] = True
        _put(e, "prefix-list-in", ap.prefix_list_in)
        _put(e, "prefix-list-out", ap.prefix_list_out)
        _put(e, "route-map-in", ap.route_map_in)
        _put(e, "route-map-out", ap.route_map_out)
        (groups if is_group else neighbors).append(e)
    _put(a, "peer-group", groups)
    _put(a, "neighbor", neighbors)
    _put(out, "ipv4-unicast", a)
    return out


def _pl_entry(e: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"seq": e.seq, "action": e.action, "prefix": "any" if e.prefix is None else str(e.prefix)}
    _put(out, "ge", e.ge)
    _put(out, "le", e.le)
    return out


def _rm_entry(e: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"seq": e.seq, "action": e.action}
    for k in _RM_FIELDS:
        _put(out, _y(k), getattr(e, k))
    if e.set_community_additive:
        out["set-community-additive"] = True
    return out


# -- raw -> model dict -------------------------------------------------------------------------


def raw_to_model_dict(raw: dict[str, Any], hostname: str) -> dict[str, Any]:
    """The ``DeviceConfig.model_validate`` input for RFC 7951 JSON ``{"ani-frr:frr": {...}}``
    (already checked against the schema: every member is known and well typed). A missing
    ``ani-frr:frr`` is the empty configuration."""
    f = raw.get(TOP, {})
    d: dict[str, Any] = {"hostname": hostname}
    d["ip_forwarding"] = f.get("ip-forwarding", True)
    d["ipv6_forwarding"] = f.get("ipv6-forwarding", True)
    d["bgp_route_map_delay_timer"] = f.get("bgp-route-map-delay-timer")
    d["interfaces"] = {i["name"]: _interface_dict(i) for i in f.get("interface", [])}
    d["static_routes"] = [{"prefix": r["prefix"], "nexthop": r["next-hop"], "distance": r.get("distance", 1)}
                          for r in f.get("static-route", [])]
    if "ospf" in f:
        o = f["ospf"]
        spf = o.get("throttle-spf")
        d["ospf"] = {
            "router_id": o.get("router-id"),
            "passive_default": o.get("passive-default", False),
            "networks": [{"prefix": n["prefix"], "area": n["area"]} for n in o.get("network", [])],
            "throttle_spf": None if spf is None else (spf["delay"], spf["init-hold"], spf["max-hold"]),
            "throttle_lsa_all": o.get("throttle-lsa-all"),
            "lsa_min_arrival": o.get("lsa-min-arrival"),
        }
    if "bgp" in f:
        d["bgp"] = _bgp_dict(f["bgp"])
    d["prefix_lists"] = {p["name"]: {"entries": [_pl_dict(e) for e in p.get("entry", [])]}
                         for p in f.get("prefix-list", [])}
    d["route_maps"] = {r["name"]: {"entries": [_rm_dict(e) for e in r.get("entry", [])]}
                       for r in f.get("route-map", [])}
    if "firewall" in f:
        fw = f["firewall"]
        rules = sorted(fw.get("forward-rule", []), key=lambda r: r["seq"])
        d["firewall"] = {
            "sets": {s["name"]: {"elements": s.get("element", [])} for s in fw.get("set", [])},
            "forward_policy": fw.get("forward-policy", "accept"),
            "forward_rules": [{"saddr_set": r.get("saddr-set"), "daddr_set": r.get("daddr-set"),
                               "action": r["action"]} for r in rules],
        }
    return d


def _interface_dict(i: dict[str, Any]) -> dict[str, Any]:
    o = i.get("ospf", {})
    return {
        "description": i.get("description"),
        "addresses": i.get("address", []),
        "ospf": {"area": o.get("area"), "network": o.get("network"), "hello_interval": o.get("hello-interval"),
                 "dead_interval": o.get("dead-interval"), "passive": o.get("passive", False)},
    }


def _peer_dict(p: dict[str, Any]) -> dict[str, Any]:
    out = {k: p.get(_y(k)) for k in _PEER_FIELDS}
    out["shutdown"] = p.get("shutdown", False)
    t = p.get("timers")
    out["timers"] = None if t is None else (t["keepalive"], t["holdtime"])
    if "peer-group" in p:
        out["peer_group"] = p["peer-group"]
    return out


def _bgp_dict(b: dict[str, Any]) -> dict[str, Any]:
    t = b.get("timers")
    af = b.get("ipv4-unicast", {})
    peers = {}
    for e in af.get("peer-group", []) + af.get("neighbor", []):
        key = e["name"] if "name" in e else str(IPv4Address(e["address"]))
        peers[key] = {"route_reflector_client": e.get("route-reflector-client", False),
                      "prefix_list_in": e.get("prefix-list-in"), "prefix_list_out": e.get("prefix-list-out"),
                      "route_map_in": e.get("route-map-in"), "route_map_out": e.get("route-map-out")}
    return {
        "asn": b["asn"],
        "router_id": b.get("router-id"),
        "coalesce_time": b.get("coalesce-time"),
        "timers": None if t is None else (t["keepalive"], t["holdtime"]),
        "ebgp_requires_policy": b.get("ebgp-requires-policy", True),
        "peer_groups": {p["name"]: _peer_dict(p) for p in b.get("peer-group", [])},
        "neighbors": {p["address"]: _peer_dict(p) for p in b.get("neighbor", [])},
        "ipv4_unicast": {
            "networks": af.get("network", []),
            "redistribute": {r["source"]: r.get("route-map") for r in af.get("redistribute", [])},
            "peers": peers,
        },
    }


def _pl_dict(e: dict[str, Any]) -> dict[str, Any]:
    return {"seq": e["seq"], "action": e["action"], "prefix": None if e["prefix"] == "any" else e["prefix"],
            "ge": e.get("ge"), "le": e.get("le")}


def _rm_dict(e: dict[str, Any]) -> dict[str, Any]:
    out = {k: e.get(_y(k)) for k in _RM_FIELDS}
    out |= {"seq": e["seq"], "action": e["action"], "set_community_additive": e.get("set-community-additive", False)}
    return out
