"""What a footprint does to the baseline invariants: a static reading of the configurations,
for :meth:`ani.agents.mistakes.MistakeKind.expected_breaks` (no lab).

    changed = apply_footprint(before, made.footprint)        # {router: DeviceConfig}
    broken = predicted_breaks(invariants, before, changed)   # [Check.name], invariants' order

:func:`apply_footprint` applies a footprint's ``- line`` / ``+ line`` (context lines, as
:func:`ani.agents.mistakes.config_lines`) to the routers' configurations before the run: the
mistake's difference from the correct change, without the correct change itself, so that what
the prediction finds is the mistake's own effect.

:func:`predicted_breaks` names the invariants that pass on ``base`` and fail on ``changed``,
judged from the configurations alone, for the kinds of check a configuration decides:

- ``route``: the prefix reaches the router (``expect: false``: it must not): a static route to it there, or
  it is originated (a connected interface network with ``redistribute connected``, or a BGP
  ``network`` statement) and every route-map on the way lets it through: the origin's
  redistribution route-map and its route-map towards its iBGP peers; across an eBGP session
  the sender's ``out`` and the receiver's ``in`` route-maps (:func:`route_ok`). With
  ``community`` / ``local_pref``: the set clauses on the way must give them; one with
  ``protocol`` / ``next_hop`` / ``distance`` is not predicted.
- ``reach``: both endpoints' networks reach each other's edge (as ``route``, or the same edge)
  and the ``forward`` chain of each edge on the way (``table inet fw``) accepts both directions
  (:func:`forwarded`); ``expect: false`` (isolation) breaks when the traffic becomes possible.
- every other kind (``bgp_session``, ``loopback``, ``command``): not predicted (never named).

Route-maps as FRR evaluates them: entries in sequence order, the first whose match passes
decides (a ``match ip address prefix-list`` passes when the prefix-list permits the prefix; a
missing route-map or prefix-list matches nothing); no entry matches: deny. Not read (no
generated service uses them): ``neighbor X prefix-list``, ``continue`` / ``on-match``, AS-path
and community matches, routes redistributed from static routes or OSPF into BGP.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, ip_network
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig, Firewall
    from ani.observer.checks import Check

_FW = "nft / table inet fw"
_BLOCKS = {"address-family": "exit-address-family"}


# -- applying a footprint ---------------------------------------------------------------------


def apply_footprint(before: dict[str, DeviceConfig], fp: dict[str, list[str]]) -> dict[str, DeviceConfig]:
    """``before`` with each router's footprint lines applied (``-``: the line removed, ``+``:
    added, FRR and firewall lines; unmodelled lines are left as they were). Routers without a
    footprint are ``before``'s. Raises ValueError when the result is not a valid configuration."""
    out = dict(before)
    for r, lines in fp.items():
        out[r] = _apply(before[r], lines)
    return out


def _apply(cfg: DeviceConfig, lines: list[str]) -> DeviceConfig:
    from ani.device.apply import context_lines
    from ani.device.parse import parse
    from ani.device.render import render

    frr = [ln for ln in lines if not ln[2:].startswith("nft / ")]
    fw = [ln for ln in lines if ln[2:].startswith("nft / ")]
    new = cfg
    if frr:
        have = context_lines(render(cfg.model_copy(update={"unmodelled": []})))
        minus = {ln[2:] for ln in frr if ln.startswith("- ")}
        keep = [ln for ln in have if ln not in minus]
        keep += [ln[2:] for ln in frr if ln.startswith("+ ") and ln[2:] not in keep]
        parsed = parse(_text(keep))
        new = parsed.model_copy(update={"hostname": cfg.hostname, "firewall": cfg.firewall,
                                        "unmodelled": cfg.unmodelled})
    if fw:
        new = new.model_copy(update={"firewall": _apply_fw(cfg.firewall, fw)})
    return new.canonical()


def _text(lines: list[str]) -> str:
    """Context lines -> FRR text (blocks merged in first-seen order)."""
    root: dict[str, dict] = {}
    for ln in lines:
        node = root
        for part in ln.split(" / "):
            node = node.setdefault(part, {})
    out: list[str] = []

    def emit(tree: dict[str, dict], depth: int) -> None:
        for head, kids in tree.items():
            out.append(" " * depth + head)
            if kids:
                emit(kids, depth + 1)
                out.append(" " * depth + _BLOCKS.get(head.split()[0], "exit"))
    emit(root, 0)
    return "\n".join(out) + "\n"


def _apply_fw(fw: Firewall | None, lines: list[str]) -> Firewall | None:
    from ani.device.model import Firewall, FirewallRule, FirewallSet

    sets = {n: list(s.elements) for n, s in (fw.sets.items() if fw else [])}
    policy = fw.forward_policy if fw else "accept"
    rules = list(fw.forward_rules) if fw else []
    new_rules: list[FirewallRule] | None = None
    gone = False
    for ln in lines:
        sign, path = ln[:1], ln[2:]
        if path == _FW:
            gone = sign == "-"
            continue
        parts = path[len(_FW) + 3:].split(" / ")
        if parts[0].startswith("set "):
            name = parts[0][4:]
            if len(parts) == 1:
                if sign == "+":
                    sets.setdefault(name, [])
                else:
                    sets.pop(name, None)
                continue
            elem = ip_network(parts[1][len("element "):])
            if sign == "+" and elem not in sets.setdefault(name, []):
                sets[name].append(elem)
            elif sign == "-" and name in sets and elem in sets[name]:
                sets[name].remove(elem)
        elif parts[0] == "chain forward" and parts[1].startswith("policy "):
            if sign == "+":
                policy = parts[1][len("policy "):]
        elif parts[0] == "chain forward" and parts[1].startswith("rule "):
            if sign == "+":
                new_rules = (new_rules or []) + [_rule(parts[1].split(": ", 1)[1])]
            elif new_rules is None:
                new_rules = []
    if gone and not sets:
        return None
    if new_rules is not None:
        rules = new_rules
    return Firewall(sets={n: FirewallSet(elements=e) for n, e in sets.items()}, forward_policy=policy,
                    forward_rules=[FirewallRule(**r) if isinstance(r, dict) else r for r in rules])


def _rule(text: str) -> dict[str, Any]:
    words = text.split()
    out: dict[str, Any] = {"action": words[-1]}
    for i, w in enumerate(words):
        if w in ("saddr", "daddr") and i + 1 < len(words):
            out[f"{w}_set"] = words[i + 1].lstrip("@")
    return out


# -- routes -----------------------------------------------------------------------------------


def pl_permits(cfg: DeviceConfig, name: str, q: IPv4Network) -> bool:
    """Whether prefix-list ``name`` of ``cfg`` permits ``q`` (first entry in sequence order that
    matches decides; none, or no such list: deny)."""
    pl = cfg.prefix_lists.get(name)
    for e in pl.entries if pl is not None else []:
        if e.prefix is None:
            return e.action == "permit"
        if not q.subnet_of(e.prefix):
            continue
        if e.ge is None and e.le is None:
            hit = q.prefixlen == e.prefix.prefixlen
        else:
            lo = e.ge if e.ge is not None else e.prefix.prefixlen
            hi = e.le if e.le is not None else 32
            hit = lo <= q.prefixlen <= hi
        if hit:
            return e.action == "permit"
    return False


def rm_eval(cfg: DeviceConfig, name: str | None, q: IPv4Network) -> tuple[bool, dict[str, Any]]:
    """``(permitted, sets)`` of route-map ``name`` on ``q`` (None: no route-map, permitted with
    no sets); ``sets``: ``community`` (list), ``additive``, ``local_pref`` of the deciding entry."""
    if name is None:
        return True, {}
    rm = cfg.route_maps.get(name)
    for e in rm.entries if rm is not None else []:
        if e.match_prefix_list is not None and not pl_permits(cfg, e.match_prefix_list, q):
            continue
        if e.action != "permit":
            return False, {}
        return True, {"community": e.set_community, "additive": e.set_community_additive,
                      "local_pref": e.set_local_preference}
    return False, {}


def _in_ospf(cfg: DeviceConfig, net: IPv4Network) -> bool:
    """An interface network of ``cfg`` in OSPF (``ip ospf area`` on it, or a ``network``
    statement of ``router ospf`` covering it)."""
    if cfg.ospf is None:
        return False
    for i in cfg.interfaces.values():
        if any(a.network == net for a in i.addresses) and i.ospf.area is not None:
            return True
    return any(net.subnet_of(n.prefix) for n in cfg.ospf.networks)


def _ospf_ok(configs: dict[str, DeviceConfig], q: IPv4Network, r: str) -> bool:
    """``q`` is an interface network in OSPF on a router and ``r`` runs OSPF (the underlay
    carries it, no route-map on the way)."""
    return configs[r].ospf is not None and any(
        any(a.network == q for i in configs[o].interfaces.values() for a in i.addresses) and _in_ospf(configs[o], q)
        for o in configs)


def _owner(configs: dict[str, DeviceConfig], addr: IPv4Address) -> str | None:
    for r in sorted(configs):
        for i in configs[r].interfaces.values():
            if any(a.ip == addr for a in i.addresses):
                return r
    return None


def origin(configs: dict[str, DeviceConfig], q: IPv4Network) -> tuple[str, str | None] | None:
    """``(router, its redistribution route-map or None)`` that originates ``q`` into BGP: a BGP
    ``network q`` (no route-map), else an interface network ``q`` with ``redistribute
    connected``; None when no router does."""
    for r in sorted(configs):
        b = configs[r].bgp
        if b is not None and q in b.ipv4_unicast.networks:
            return r, None
    for r in sorted(configs):
        cfg = configs[r]
        if cfg.bgp is None or "connected" not in cfg.bgp.ipv4_unicast.redistribute:
            continue
        if any(a.network == q for i in cfg.interfaces.values() for a in i.addresses):
            return r, cfg.bgp.ipv4_unicast.redistribute["connected"]
    return None


def _af_rm(cfg: DeviceConfig, peer: str, way: str) -> str | None:
    """The ``in`` / ``out`` route-map of neighbor ``peer`` (or its peer-group)."""
    assert cfg.bgp is not None
    af = cfg.bgp.ipv4_unicast.peers
    key = "route_map_in" if way == "in" else "route_map_out"
    got = getattr(af[peer], key) if peer in af else None
    group = cfg.bgp.neighbors[peer].peer_group if peer in cfg.bgp.neighbors else None
    if got is None and group is not None and group in af:
        got = getattr(af[group], key)
    return got


def _ibgp_out(cfg: DeviceConfig) -> str | None:
    """The ``out`` route-map of ``cfg``'s iBGP neighbors (the first that has one)."""
    b = cfg.bgp
    assert b is not None
    for addr in sorted(b.neighbors):
        p = b.neighbors[addr]
        ras = p.remote_as or (b.peer_groups[p.peer_group].remote_as if p.peer_group in b.peer_groups else None)
        if str(ras) in (str(b.asn), "internal"):
            rm = _af_rm(cfg, addr, "out")
            if rm is not None:
                return rm
    return None


def _ebgp_link(configs: dict[str, DeviceConfig], a: str, b: str) -> tuple[str, str] | None:
    """``(a's neighbor address for b, b's neighbor address for a)`` of an eBGP session."""
    ca, cb = configs[a].bgp, configs[b].bgp
    if ca is None or cb is None:
        return None
    for x in ca.neighbors:
        if _owner(configs, IPv4Address(x)) == b:
            for y in cb.neighbors:
                if _owner(configs, IPv4Address(y)) == a:
                    return x, y
    return None


def _as_of(configs: dict[str, DeviceConfig], asn: int) -> list[str]:
    return [x for x in sorted(configs) if configs[x].bgp is not None and configs[x].bgp.asn == asn]


def _steps(configs: dict[str, DeviceConfig], o: str, r: str) -> list[tuple[str, str | None]] | None:
    """The ``(router, route-map)`` steps a route originated on ``o`` takes to ``r`` after the
    origin's redistribution: iBGP (the origin's route-map towards its iBGP peers), or one eBGP
    session between an edge of one AS and a router of the other (the sender's ``out``, the
    receiver's ``in``); None: no path the configurations show."""
    co, cr = configs[o].bgp, configs[r].bgp
    if co is None or cr is None:
        return None
    if co.asn == cr.asn:
        return [(o, _ibgp_out(configs[o]))]
    for e in _as_of(configs, cr.asn):  # into r's AS through its edge e
        link = _ebgp_link(configs, o, e)
        if link is not None:
            steps = [(o, _af_rm(configs[o], link[0], "out")), (e, _af_rm(configs[e], link[1], "in"))]
            return steps + ([(e, _ibgp_out(configs[e]))] if e != r else [])
    for e in _as_of(configs, co.asn):  # out of o's AS through its edge e
        link = _ebgp_link(configs, e, r)
        if link is not None:
            steps = [] if e == o else [(o, _ibgp_out(configs[o]))]
            return steps + [(e, _af_rm(configs[e], link[0], "out")), (r, _af_rm(configs[r], link[1], "in"))]
    return None


def route_ok(configs: dict[str, DeviceConfig], q: IPv4Network, r: str, community: str | None = None,
             local_pref: int | None = None) -> bool:
    """Whether ``r``'s routing table holds ``q`` (with that community / local preference) as
    the configurations say (module doc)."""
    if r not in configs:
        return False
    if community is None and local_pref is None and any(s.prefix == q for s in configs[r].static_routes):
        return True
    if community is None and local_pref is None and _ospf_ok(configs, q, r):
        return True
    found = origin(configs, q)
    if found is None:
        return False
    o, redist = found
    if o == r:
        return community is None and local_pref is None
    more = _steps(configs, o, r)
    if more is None:
        return False
    steps = [(o, redist), *more]
    comms: list[str] = []
    lp = 100
    for router, rm in steps:
        ok, sets = rm_eval(configs[router], rm, q)
        if not ok:
            return False
        if sets.get("community") is not None:
            new = [] if sets["community"] == ["none"] else list(sets["community"])
            comms = sorted(set(comms) | set(new)) if sets.get("additive") else new
        if sets.get("local_pref") is not None:
            lp = sets["local_pref"]
    return (community is None or community in comms) and (local_pref is None or lp == local_pref)


# -- reachability -----------------------------------------------------------------------------


def _site(configs: dict[str, DeviceConfig], addr: IPv4Address) -> tuple[str, IPv4Network] | None:
    """``(edge, network)``: the router with the longest connected network holding ``addr``."""
    best: tuple[int, str, IPv4Network] | None = None
    for r in sorted(configs):
        for i in configs[r].interfaces.values():
            for a in i.addresses:
                if addr in a.network and a.ip != addr and (best is None or a.network.prefixlen > best[0]):
                    best = (a.network.prefixlen, r, a.network)
    return None if best is None else (best[1], best[2])


def forwarded(cfg: DeviceConfig, src: IPv4Address, dst: IPv4Address) -> bool:
    """Whether ``cfg``'s ``forward`` chain accepts a packet ``src`` -> ``dst`` (no table: yes)."""
    fw = cfg.firewall
    if fw is None:
        return True
    for rule in fw.forward_rules:
        if rule.saddr_set is not None and not _in_set(fw, rule.saddr_set, src):
            continue
        if rule.daddr_set is not None and not _in_set(fw, rule.daddr_set, dst):
            continue
        return rule.action == "accept"
    return fw.forward_policy == "accept"


def _in_set(fw: Firewall, name: str, addr: IPv4Address) -> bool:
    s = fw.sets.get(name)
    return s is not None and any(addr in e for e in s.elements)


def reachable(configs: dict[str, DeviceConfig], a: IPv4Address, b: IPv4Address) -> bool | None:
    """Whether ``a`` and ``b`` (hosts behind edges) reach each other as the configurations say
    (routes both ways, each edge's forward chain both ways); None when an endpoint's edge is
    not known."""
    sa, sb = _site(configs, a), _site(configs, b)
    if sa is None or sb is None:
        return None
    (ra, na), (rb, nb) = sa, sb
    if ra != rb and not (route_ok(configs, nb, ra) and route_ok(configs, na, rb)):
        return False
    return all(forwarded(configs[r], a, b) and forwarded(configs[r], b, a) for r in {ra, rb})


def _passes(check: Any, configs: dict[str, DeviceConfig], addrs: dict[str, IPv4Address]) -> bool | None:
    if check.kind == "route":
        if check.protocol is not None or check.next_hop is not None or check.distance is not None:
            return None
        return route_ok(configs, check.prefix, check.router, check.community, check.local_pref) == check.expect
    if check.kind == "reach":
        src = addrs.get(check.src)
        if src is None:
            return None
        got = reachable(configs, src, check.dst)
        return None if got is None else got == check.expect
    return None


def node_addresses(invariants: list[Check], configs: dict[str, DeviceConfig]) -> dict[str, IPv4Address]:
    """``{node: address}``: the nodes the reach checks name as destinations (``dst_node``), and
    for any other node a host address of the network of the interface ``to-<node>`` facing it
    (the tenant-site convention; its ``.10`` when the network holds one, else its first host
    other than the router's)."""
    out = {c.dst_node: c.dst for c in invariants if c.kind == "reach" and getattr(c, "dst_node", None)}
    for c in invariants:
        if c.kind != "reach" or c.src in out:
            continue
        for r in sorted(configs):
            iface = configs[r].interfaces.get(f"to-{c.src}")
            if iface is not None and iface.addresses:
                a = iface.addresses[0]
                hosts = [h for h in (a.network.network_address + 10,) if h in a.network and h != a.ip] or \
                    [h for h in a.network.hosts() if h != a.ip][:1]
                if hosts:
                    out[c.src] = hosts[0]
                break
    return out


def predicted_breaks(invariants: list[Check], base: dict[str, DeviceConfig], changed: dict[str, DeviceConfig]) -> list[str]:
    """Names of the invariants (in their order) that pass on ``base`` and fail on ``changed``
    as the configurations say (module doc); checks it cannot judge are never named."""
    addrs = node_addresses(invariants, base)
    out = []
    for c in invariants:
        if _passes(c, base, addrs) is True and _passes(c, changed, addrs) is False:
            out.append(c.name)
    return out


def footprint_breaks(invariants: list[Check], before: dict[str, DeviceConfig], fp: dict[str, list[str]]) -> list[str]:
    """:func:`predicted_breaks` of ``before`` against ``before`` with footprint ``fp`` applied."""
    if not fp:
        return []
    return predicted_breaks(invariants, before, apply_footprint(before, fp))
