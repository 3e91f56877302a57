"""The desired-state file of one router: a stable, readable JSON document.

Derived from :class:`ani.device.model.DeviceConfig`; every collection with a natural key is a
JSON object keyed by it, so RFC 6902 paths name things, not positions. A field that is absent
has its default (``false``, none, empty). Shape::

    {
      "hostname": "r1",                        (also the file name: devices/r1.json)
      "ip_forwarding": true, "ipv6_forwarding": true, "bgp_route_map_delay_timer": 10,
      "interfaces": {"eth0": {"description": "..", "addresses": ["10.0.0.1/30"],
                              "ospf": {"area": "0", "network": "point-to-point", "hello_interval": 5,
                                       "dead_interval": 20, "passive": true}}},
      "static_routes": {"192.0.2.0/24": {"next_hop": "198.51.100.1", "distance": 200,
                                         "more_next_hops": {"eth1": {"distance": 1}}}},
      "ospf": {"router_id": "..", "passive_default": false,
               "networks": {"10.0.0.0/30": {"area": "0"}},
               "throttle_spf": {"delay": 0, "init_hold": 50, "max_hold": 5000},
               "throttle_lsa_all": 0, "lsa_min_arrival": 0},
      "bgp": {"asn": 65000, "router_id": "..", "coalesce_time": 1000,
              "timers": {"keepalive": 3, "holdtime": 9}, "ebgp_requires_policy": false,
              "peer_groups": {"PG": {...peer...}},
              "neighbors": {"198.51.100.2": {"remote_as": 65001, "peer_group": "PG",
                                             "description": "..", "shutdown": true,
                                             "update_source": "lo",
                                             "timers": {"keepalive": 1, "holdtime": 3, "connect": 5}}},
              "ipv4_unicast": {"networks": ["192.0.2.0/24"],
                               "redistribute": {"connected": {"route_map": "RM"}, "static": {}},
                               "peers": {"198.51.100.2": {"route_reflector_client": true,
                                                          "prefix_list_in": "PL-IN", "prefix_list_out": "..",
                                                          "route_map_in": "RM-IN", "route_map_out": ".."}}}},
      "prefix_lists": {"PL": {"entries": {"10": {"action": "permit", "prefix": "192.0.2.0/24",
                                                 "ge": 25, "le": 32}}}},   ("prefix": "any" for any)
      "route_maps": {"RM": {"entries": {"10": {"action": "permit", "match_prefix_list": "PL",
                                               "set_community": ["65000:1"], "set_community_additive": true,
                                               "set_local_preference": 200, "set_metric": 5}}}},
      "firewall": {"forward_policy": "drop", "sets": {"tenant_a": {"elements": ["10.1.0.0/24"]}},
                   "forward_rules": [{"saddr_set": "tenant_a", "daddr_set": null, "action": "accept"}]},
      "unmodelled": ["..."]
    }

Static routes are keyed by prefix (a pointer escapes the ``/`` as ``~1``:
``/static_routes/192.0.2.0~124/next_hop``). A prefix with one next hop is
``{"next_hop": NH, "distance": D}``. With several next hops the first one in FRR's order (lowest
distance, then interface / address / discard, then address) is ``next_hop`` / ``distance`` and the
others are ``more_next_hops: {NH: {"distance": D}}`` (keyed by next hop: one distance per prefix
and next hop, as FRR keeps it). ``distance`` is always written (default 1 when absent).

Neighbor ``timers`` (``{"connect": N}``) exists only when set. Firewall rules stay a list: the
chain is evaluated in order. Keys are sorted in the file, so prefix-lists and route-maps are
listed by name, not in creation order (equality of DeviceConfig ignores that order).
"""

from __future__ import annotations

import json
from ipaddress import IPv4Address
from typing import Any

import jsonschema
import jsonschema.exceptions
from pydantic import BaseModel, ValidationError

from ani.device.model import (
    Bgp,
    BgpAf,
    BgpAfPeer,
    DeviceConfig,
    Firewall,
    FirewallRule,
    FirewallSet,
    Interface,
    Ospf,
    Peer,
    PrefixListEntry,
    RouteMapEntry,
    StaticRoute,
)
from ani.sot.errors import DocError

__all__ = ["to_doc", "from_doc", "dumps", "loads", "escape", "schema", "check_schema", "SCHEMA", "DocError"]


def escape(token: str) -> str:
    """One RFC 6901 reference token: ``~`` -> ``~0`` first, then ``/`` -> ``~1``."""
    return str(token).replace("~", "~0").replace("/", "~1")


def _ptr(*parts: Any) -> str:
    return "".join("/" + escape(str(p)) for p in parts)


def _dump(m: BaseModel) -> dict:
    return m.model_dump(mode="json", exclude_defaults=True)


# -- DeviceConfig -> document ------------------------------------------------------------------


def _peer_doc(p: Peer) -> dict:
    d = _dump(p)
    t: dict[str, int] = {}
    if p.timers is not None:
        t = {"keepalive": p.timers[0], "holdtime": p.timers[1]}
    d.pop("timers", None)
    tc = d.pop("timers_connect", None)
    if tc is not None:
        t["connect"] = tc
    if t:
        d["timers"] = t
    return d


def to_doc(cfg: DeviceConfig) -> dict:
    """The desired-state document of ``cfg`` (canonicalised first)."""
    cfg = cfg.canonical()
    doc: dict[str, Any] = {
        "hostname": cfg.hostname,
        "ip_forwarding": cfg.ip_forwarding,
        "ipv6_forwarding": cfg.ipv6_forwarding,
    }
    if cfg.bgp_route_map_delay_timer is not None:
        doc["bgp_route_map_delay_timer"] = cfg.bgp_route_map_delay_timer
    doc["interfaces"] = {name: _dump(i) for name, i in cfg.interfaces.items()}
    routes: dict[str, dict] = {}
    for r in cfg.static_routes:  # FRR's order: the first per prefix is the primary
        key = str(r.prefix)
        if key not in routes:
            routes[key] = {"next_hop": r.nexthop, "distance": r.distance}
        else:
            routes[key].setdefault("more_next_hops", {})[r.nexthop] = {"distance": r.distance}
    doc["static_routes"] = routes
    if cfg.ospf is not None:
        o = cfg.ospf
        od = _dump(o)
        od["networks"] = {str(n.prefix): {"area": n.area} for n in o.networks}
        if o.throttle_spf is not None:
            od["throttle_spf"] = dict(zip(("delay", "init_hold", "max_hold"), o.throttle_spf))
        doc["ospf"] = od
    if cfg.bgp is not None:
        b = cfg.bgp
        bd: dict[str, Any] = {"asn": b.asn}
        if b.router_id is not None:
            bd["router_id"] = str(b.router_id)
        if b.coalesce_time is not None:
            bd["coalesce_time"] = b.coalesce_time
        if b.timers is not None:
            bd["timers"] = {"keepalive": b.timers[0], "holdtime": b.timers[1]}
        if not b.ebgp_requires_policy:
            bd["ebgp_requires_policy"] = False
        bd["peer_groups"] = {n: _peer_doc(p) for n, p in b.peer_groups.items()}
        bd["neighbors"] = {a: _peer_doc(p) for a, p in b.neighbors.items()}
        af = b.ipv4_unicast
        bd["ipv4_unicast"] = {
            "networks": [str(n) for n in af.networks],
            "redistribute": {s: ({"route_map": rm} if rm is not None else {}) for s, rm in af.redistribute.items()},
            "peers": {k: _dump(p) for k, p in af.peers.items()},
        }
        doc["bgp"] = bd
    doc["prefix_lists"] = {
        n: {"entries": {str(e.seq): {**_dump(e), "prefix": str(e.prefix) if e.prefix else "any"} for e in pl.entries}}
        for n, pl in cfg.prefix_lists.items()
    }
    for pl in doc["prefix_lists"].values():
        for e in pl["entries"].values():
            e.pop("seq", None)
    doc["route_maps"] = {
        n: {"entries": {str(e.seq): {k: v for k, v in _dump(e).items() if k != "seq"} | {"action": e.action}
                        for e in rm.entries}}
        for n, rm in cfg.route_maps.items()
    }
    if cfg.firewall is not None:
        f = cfg.firewall
        doc["firewall"] = {
            "forward_policy": f.forward_policy,
            "sets": {n: {"elements": [str(e) for e in s.elements]} for n, s in f.sets.items()},
            "forward_rules": [r.model_dump(mode="json") for r in f.forward_rules],
        }
    if cfg.unmodelled:
        doc["unmodelled"] = list(cfg.unmodelled)
    return doc


def dumps(doc: dict) -> str:
    """The file text: sorted keys, 2-space indent, trailing newline (byte-stable)."""
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def loads(text: str, pointer_prefix: str = "") -> dict:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise DocError(pointer_prefix, f"not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise DocError(pointer_prefix, "the document must be a JSON object")
    return doc


# -- document -> DeviceConfig ------------------------------------------------------------------


def _obj(v: Any, where: str) -> dict:
    if not isinstance(v, dict):
        raise DocError(where, f"expected an object, got {_jtype(v)}")
    return v


def _jtype(v: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            int: "a number", float: "a number", type(None): "null"}.get(type(v), type(v).__name__)


def _pop(d: dict, key: str, where: str, kind: type | tuple, default: Any = None) -> Any:
    if key not in d:
        return default
    v = d[key]
    if isinstance(v, bool) and kind is not bool and not (isinstance(kind, tuple) and bool in kind):
        raise DocError(_ptr_join(where, key), f"expected {_kname(kind)}, got a boolean")
    if not isinstance(v, kind):
        raise DocError(_ptr_join(where, key), f"expected {_kname(kind)}, got {_jtype(v)}")
    return v


def _kname(kind: type | tuple) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({dict: "an object", list: "an array", str: "a string", bool: "a boolean",
                        int: "an integer", type(None): "null"}.get(k, k.__name__) for k in kinds)


def _ptr_join(base: str, *parts: Any) -> str:
    return base + _ptr(*parts)


def _no_extra(d: dict, allowed: set[str], where: str) -> None:
    for k in d:
        if k not in allowed:
            raise DocError(_ptr_join(where, k), f"unknown field {k!r} (allowed: {', '.join(sorted(allowed))})")


_FIELD_MAP: dict[str, str] = {"timers_connect": "timers/connect"}


_UNION_TAGS = {"constrained-int", "int", "str", "bool", "float", "none", "list", "dict", "tuple"}


def _loc(loc: tuple) -> list[str]:
    """A pydantic error location without the union-member tags pydantic inserts."""
    return [str(p) for p in loc if not (isinstance(p, str) and (p in _UNION_TAGS or "[" in p))]


def _model(cls: type[BaseModel], data: dict, where: str) -> Any:
    """``cls.model_validate(data)``; a validation error names the pointer of the bad field."""
    try:
        return cls.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = _loc(err["loc"])
        if loc and loc[0] in _FIELD_MAP:
            loc = _FIELD_MAP[loc[0]].split("/") + loc[1:]
        raise DocError(_ptr_join(where, *loc), err["msg"]) from None


def _peer(d: Any, where: str) -> dict:
    d = dict(_obj(d, where))
    _no_extra(d, {"remote_as", "peer_group", "description", "shutdown", "update_source", "timers"}, where)
    if "timers" in d:
        t = _obj(d.pop("timers"), _ptr_join(where, "timers"))
        _no_extra(t, {"connect", "keepalive", "holdtime"}, _ptr_join(where, "timers"))
        if "connect" in t:
            d["timers_connect"] = t["connect"]
        if "keepalive" in t:  # with holdtime: the schema's dependentRequired, checked first
            d["timers"] = (t["keepalive"], t["holdtime"])
    return _model(Peer, d, where).model_dump()


def from_doc(doc: Any, hostname: str | None = None) -> DeviceConfig:
    """The DeviceConfig of a document. ``hostname`` (the file's router) must match the
    document's own if both are given. Raises :class:`DocError` naming the JSON Pointer."""
    doc = _obj(doc, "")
    check_schema(doc)  # JSON types and shape first: lax pydantic would take "200" or true for a number
    _no_extra(doc, {"hostname", "ip_forwarding", "ipv6_forwarding", "bgp_route_map_delay_timer", "interfaces",
                    "static_routes", "ospf", "bgp", "prefix_lists", "route_maps", "firewall", "unmodelled"}, "")
    name = _pop(doc, "hostname", "", str, hostname)
    if name is None:
        raise DocError("/hostname", "missing")
    if hostname is not None and name != hostname:
        raise DocError("/hostname", f"{name!r} does not match the router of this file ({hostname!r})")
    out: dict[str, Any] = {"hostname": name}
    for k in ("ip_forwarding", "ipv6_forwarding"):
        out[k] = _pop(doc, k, "", bool, True)
    out["bgp_route_map_delay_timer"] = _pop(doc, "bgp_route_map_delay_timer", "", (int, type(None)))
    out["unmodelled"] = _pop(doc, "unmodelled", "", list, [])

    ifs = _obj(doc.get("interfaces", {}), "/interfaces")
    out["interfaces"] = {n: _model(Interface, _obj(i, _ptr("interfaces", n)), _ptr("interfaces", n)).model_dump()
                         for n, i in ifs.items()}

    out["static_routes"] = _static_routes(doc)
    if doc.get("ospf") is not None:
        out["ospf"] = _ospf(doc["ospf"])
    if doc.get("bgp") is not None:
        out["bgp"] = _bgp(doc["bgp"])
    for section, entry_cls in (("prefix_lists", PrefixListEntry), ("route_maps", RouteMapEntry)):
        out[section] = _entry_lists(doc, section, entry_cls)
    if doc.get("firewall") is not None:
        out["firewall"] = _firewall(doc["firewall"])
    try:
        return DeviceConfig.model_validate(out)
    except ValidationError as e:
        err = e.errors()[0]
        loc = _loc(err["loc"])
        raise DocError(_ptr(*loc[:1]) if loc else "", f"{err['msg']} (at {'.'.join(loc)})") from None


def _static_routes(doc: dict) -> list[dict]:
    """``/static_routes``: one route per (prefix, next hop), the first next hop and the
    ``more_next_hops``, each checked; a next hop listed twice for a prefix is refused."""
    routes: list[dict] = []
    for prefix, r in _obj(doc.get("static_routes", {}), "/static_routes").items():
        w = _ptr("static_routes", prefix)
        r = _obj(r, w)
        _no_extra(r, {"next_hop", "distance", "more_next_hops"}, w)
        if "next_hop" not in r:
            raise DocError(_ptr_join(w, "next_hop"), "missing")
        hops = [(r["next_hop"], r.get("distance", 1), w)]
        for nh, extra in _obj(r.get("more_next_hops", {}), _ptr_join(w, "more_next_hops")).items():
            we = _ptr_join(w, "more_next_hops", nh)
            extra = _obj(extra, we)
            _no_extra(extra, {"distance"}, we)
            hops.append((nh, extra.get("distance", 1), we))
        for nh, dist, wh in hops:
            if isinstance(dist, bool) or not isinstance(dist, int):
                raise DocError(_ptr_join(wh, "distance"), f"expected an integer, got {_jtype(dist)}")
            try:
                sr = StaticRoute(prefix=prefix, nexthop=nh, distance=dist)
            except ValidationError as e:
                err = e.errors()[0]
                field = {"prefix": "", "nexthop": "next_hop", "distance": "distance"}.get(str(err["loc"][0]), "")
                if field == "next_hop" and wh != w:  # a more_next_hops key
                    field = ""
                raise DocError(_ptr_join(wh, field) if field else wh, err["msg"]) from None
            if str(sr.prefix) != prefix:
                raise DocError(w, f"not the canonical prefix (write {sr.prefix})")
            routes.append(sr.model_dump())
    keys = [(r["prefix"], r["nexthop"]) for r in routes]
    if len(set(keys)) != len(keys):
        raise DocError("/static_routes", "a next hop is listed twice for one prefix")
    return routes


def _ospf(value: Any) -> dict:
    """``/ospf``: its networks keyed by prefix, ``throttle_spf`` as its three values."""
    o = dict(_obj(value, "/ospf"))
    nets = _obj(o.pop("networks", {}), "/ospf/networks")
    o["networks"] = [{"prefix": p, **_obj(v, _ptr("ospf", "networks", p))} for p, v in nets.items()]
    if o.get("throttle_spf") is not None:
        t = _obj(o["throttle_spf"], "/ospf/throttle_spf")
        _no_extra(t, {"delay", "init_hold", "max_hold"}, "/ospf/throttle_spf")
        for k in ("delay", "init_hold", "max_hold"):
            if k not in t:
                raise DocError(_ptr("ospf", "throttle_spf", k), "missing")
        o["throttle_spf"] = (t["delay"], t["init_hold"], t["max_hold"])
    try:
        return Ospf.model_validate(o).model_dump()
    except ValidationError as e:
        loc = _loc(e.errors()[0]["loc"])
        if loc[:1] == ["networks"] and len(loc) > 1 and loc[1].isdigit() and int(loc[1]) < len(o["networks"]):
            loc = ["networks", o["networks"][int(loc[1])]["prefix"]] + loc[2:]
        raise DocError(_ptr("ospf", *loc), e.errors()[0]["msg"]) from None


def _bgp(value: Any) -> dict:
    """``/bgp``: timers, peer groups, neighbors keyed by canonical IPv4 address, and the IPv4
    unicast address family (networks, redistribution with its route map, per-peer settings)."""
    b = dict(_obj(value, "/bgp"))
    _no_extra(b, {"asn", "router_id", "coalesce_time", "timers", "ebgp_requires_policy", "peer_groups", "neighbors",
                  "ipv4_unicast"}, "/bgp")
    if b.get("timers") is not None:
        t = _obj(b["timers"], "/bgp/timers")
        _no_extra(t, {"keepalive", "holdtime"}, "/bgp/timers")
        for k in ("keepalive", "holdtime"):
            if k not in t:
                raise DocError(_ptr("bgp", "timers", k), "missing")
        b["timers"] = (t["keepalive"], t["holdtime"])
    b["peer_groups"] = {n: _peer(p, _ptr("bgp", "peer_groups", n))
                        for n, p in _obj(b.get("peer_groups", {}), "/bgp/peer_groups").items()}
    neighbors = _obj(b.get("neighbors", {}), "/bgp/neighbors")
    for a in neighbors:
        try:
            if str(IPv4Address(a)) != a:
                raise ValueError
        except ValueError:
            raise DocError(_ptr("bgp", "neighbors", a), "a neighbor key is an IPv4 address (canonical form)") from None
    b["neighbors"] = {a: _peer(p, _ptr("bgp", "neighbors", a)) for a, p in neighbors.items()}
    af = dict(_obj(b.get("ipv4_unicast", {}), "/bgp/ipv4_unicast"))
    _no_extra(af, {"networks", "redistribute", "peers"}, "/bgp/ipv4_unicast")
    red = {}
    for s, v in _obj(af.get("redistribute", {}), "/bgp/ipv4_unicast/redistribute").items():
        w = _ptr("bgp", "ipv4_unicast", "redistribute", s)
        v = _obj(v, w)
        _no_extra(v, {"route_map"}, w)
        red[s] = v.get("route_map")
    af["redistribute"] = red
    af["peers"] = {k: _model(BgpAfPeer, _obj(p, _ptr("bgp", "ipv4_unicast", "peers", k)),
                             _ptr("bgp", "ipv4_unicast", "peers", k)).model_dump()
                   for k, p in _obj(af.get("peers", {}), "/bgp/ipv4_unicast/peers").items()}
    af = _model(BgpAf, af, "/bgp/ipv4_unicast").model_dump()
    b["ipv4_unicast"] = af
    try:
        return Bgp.model_validate(b).model_dump()
    except ValidationError as e:
        err = e.errors()[0]
        raise DocError(_ptr("bgp", *_loc(err["loc"])), err["msg"]) from None


def _entry_lists(doc: dict, section: str, entry_cls: type[BaseModel]) -> dict:
    """``/prefix_lists`` or ``/route_maps``: each list's entries keyed by sequence number
    (digits, no leading zero; at least one)."""
    lists = {}
    for n, pl in _obj(doc.get(section, {}), "/" + section).items():
        w = _ptr(section, n)
        pl = _obj(pl, w)
        _no_extra(pl, {"entries"}, w)
        entries = _obj(pl.get("entries", {}), _ptr_join(w, "entries"))
        if not entries:
            raise DocError(_ptr_join(w, "entries"), "at least one entry")
        es = []
        for seq, e in entries.items():
            we = _ptr_join(w, "entries", seq)
            if not seq.isdigit() or str(int(seq)) != seq:
                raise DocError(we, "an entry key is its sequence number (digits, no leading zero)")
            e = dict(_obj(e, we))
            if "seq" in e:
                raise DocError(_ptr_join(we, "seq"), "the sequence number is the key, not a field")
            if section == "prefix_lists" and e.get("prefix") == "any":
                e["prefix"] = None
            es.append(_model(entry_cls, {"seq": int(seq), **e}, we).model_dump())
        lists[n] = {"entries": es}
    return lists


def _firewall(value: Any) -> dict:
    """``/firewall``: its named sets and forward rules, each a model."""
    f = dict(_obj(value, "/firewall"))
    _no_extra(f, {"forward_policy", "sets", "forward_rules"}, "/firewall")
    f["sets"] = {n: _model(FirewallSet, _obj(s, _ptr("firewall", "sets", n)), _ptr("firewall", "sets", n)).model_dump()
                 for n, s in _obj(f.get("sets", {}), "/firewall/sets").items()}
    rules = _pop(f, "forward_rules", "/firewall", list, [])
    f["forward_rules"] = [_model(FirewallRule, _obj(r, _ptr("firewall", "forward_rules", i)),
                                 _ptr("firewall", "forward_rules", i)).model_dump() for i, r in enumerate(rules)]
    return _model(Firewall, f, "/firewall").model_dump()


# -- JSON Schema ---------------------------------------------------------------------------------
#
# The document's structure for agents and tools (draft 2020-12). from_doc is the validator the
# repository uses (it also checks value ranges, references and canonical keys, which the schema
# only partly expresses); the schema is kept in step with it by a test.

_INT = {"type": "integer"}
_STR = {"type": "string"}
_BOOL = {"type": "boolean"}


def _object(props: dict, required: tuple[str, ...] = ()) -> dict:
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    return out


def _map(value: dict, key_pattern: str | None = None) -> dict:
    out: dict[str, Any] = {"type": "object", "additionalProperties": value}
    if key_pattern:
        out["propertyNames"] = {"pattern": key_pattern}
    return out


_NULLABLE_STR = {"type": ["string", "null"]}
_PEER = _object({"remote_as": {"oneOf": [{"type": "integer", "minimum": 1, "maximum": 4294967295},
                                         {"enum": ["internal", "external"]}]},
                 "peer_group": _STR, "description": _STR, "shutdown": _BOOL, "update_source": _STR,
                 "timers": {**_object({"connect": {"type": "integer", "minimum": 1, "maximum": 65535},
                                       "keepalive": _INT, "holdtime": _INT}),
                            "dependentRequired": {"keepalive": ["holdtime"], "holdtime": ["keepalive"]}}})
_IPV4 = r"^[0-9]{1,3}(\.[0-9]{1,3}){3}$"
_PREFIX = r"^[0-9]{1,3}(\.[0-9]{1,3}){3}/[0-9]{1,2}$"
_SEQ = r"^[1-9][0-9]*$"

SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "ani desired state of one router (devices/<router>.json)",
    **_object({
        "hostname": _STR,
        "ip_forwarding": _BOOL,
        "ipv6_forwarding": _BOOL,
        "bgp_route_map_delay_timer": {"type": ["integer", "null"], "minimum": 0, "maximum": 600},
        "interfaces": _map(_object({
            "description": _STR,
            "addresses": {"type": "array", "items": _STR},
            "ospf": _object({"area": _STR, "network": {"enum": ["point-to-point", "point-to-multipoint",
                                                               "non-broadcast", "broadcast"]},
                             "hello_interval": _INT, "dead_interval": _INT, "passive": _BOOL}),
        })),
        "static_routes": _map(_object({
            "next_hop": _STR,
            "distance": {"type": "integer", "minimum": 1, "maximum": 255},
            "more_next_hops": _map(_object({"distance": {"type": "integer", "minimum": 1, "maximum": 255}})),
        }, ("next_hop",)), _PREFIX),
        "ospf": {"oneOf": [{"type": "null"}, _object({
            "router_id": _STR, "passive_default": _BOOL,
            "networks": _map(_object({"area": _STR}, ("area",)), _PREFIX),
            "throttle_spf": _object({"delay": _INT, "init_hold": _INT, "max_hold": _INT},
                                    ("delay", "init_hold", "max_hold")),
            "throttle_lsa_all": _INT, "lsa_min_arrival": _INT,
        })]},
        "bgp": {"oneOf": [{"type": "null"}, _object({
            "asn": {"type": "integer", "minimum": 1, "maximum": 4294967295},
            "router_id": _STR,
            "coalesce_time": _INT,
            "timers": _object({"keepalive": _INT, "holdtime": _INT}, ("keepalive", "holdtime")),
            "ebgp_requires_policy": _BOOL,
            "peer_groups": _map(_PEER),
            "neighbors": _map(_PEER, _IPV4),
            "ipv4_unicast": _object({
                "networks": {"type": "array", "items": _STR},
                "redistribute": _object({s: _object({"route_map": _STR})
                                         for s in ("kernel", "connected", "static", "ospf")}),
                "peers": _map(_object({"route_reflector_client": _BOOL, "prefix_list_in": _STR,
                                       "prefix_list_out": _STR, "route_map_in": _STR, "route_map_out": _STR})),
            }),
        }, ("asn",))]},
        "prefix_lists": _map(_object({"entries": {**_map(_object({
            "action": {"enum": ["permit", "deny"]}, "prefix": _STR,
            "ge": {"type": "integer", "minimum": 1, "maximum": 32},
            "le": {"type": "integer", "minimum": 1, "maximum": 32},
        }, ("action",)), _SEQ), "minProperties": 1}}, ("entries",))),
        "route_maps": _map(_object({"entries": {**_map(_object({
            "action": {"enum": ["permit", "deny"]}, "match_prefix_list": _STR,
            "set_community": {"type": "array", "items": _STR}, "set_community_additive": _BOOL,
            "set_local_preference": _INT, "set_metric": _INT,
        }, ("action",)), _SEQ), "minProperties": 1}}, ("entries",))),
        "firewall": {"oneOf": [{"type": "null"}, _object({
            "forward_policy": {"enum": ["accept", "drop"]},
            "sets": _map(_object({"elements": {"type": "array", "items": _STR}})),
            "forward_rules": {"type": "array", "items": _object({
                "saddr_set": _NULLABLE_STR, "daddr_set": _NULLABLE_STR,
                "action": {"enum": ["accept", "drop"]}}, ("action",))},
        })]},
        "unmodelled": {"type": "array", "items": _STR},
    }, ("hostname",)),
}


def schema() -> dict:
    """The JSON Schema of a desired-state document (a copy)."""
    return json.loads(json.dumps(SCHEMA))


def check_schema(value: Any, sch: dict | None = None, where: str = "") -> None:
    """Check ``value`` against :data:`SCHEMA` (or ``sch``) with ``jsonschema`` (Draft 2020-12:
    JSON types, so a boolean is not a number and ``"200"`` is not an integer). Raises
    :class:`DocError` naming the JSON Pointer (below ``where``) of the most relevant problem."""
    validator = _validator(SCHEMA if sch is None else sch)
    err = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if err is None:
        return
    at = _ptr_join(where, *err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = set(err.schema.get("properties", {}))
        extra = sorted(k for k in err.instance if k not in allowed)
        if extra:  # point at the unknown member itself, as RFC 6901 names it
            raise DocError(_ptr_join(at, extra[0]), f"unknown field {extra[0]!r} (allowed: {', '.join(sorted(allowed))})")
    if err.validator == "required" and isinstance(err.instance, dict):
        missing = [k for k in err.validator_value if k not in err.instance]
        if missing:
            raise DocError(_ptr_join(at, missing[0]), "missing")
    if err.validator == "dependentRequired" and isinstance(err.instance, dict):
        missing = [d for k, deps in err.validator_value.items() if k in err.instance
                   for d in deps if d not in err.instance]
        if missing:
            raise DocError(_ptr_join(at, missing[0]), "missing")
    if "propertyNames" in err.absolute_schema_path and isinstance(err.instance, str):
        raise DocError(_ptr_join(at, err.instance), f"invalid key {err.instance!r}")
    raise DocError(at, err.message)


_VALIDATORS: dict[int, Any] = {}


def _validator(sch: dict) -> Any:
    if id(sch) not in _VALIDATORS:
        _VALIDATORS[id(sch)] = jsonschema.Draft202012Validator(sch)
    return _VALIDATORS[id(sch)]
