"""One reader of a router's operational state: interfaces and their addresses, the IPv4 routing
table, BGP and OSPF summaries, read out of band through anything with ``exec`` / ``vtysh`` /
``vtysh_json`` (an :class:`ani.lab.Lab`, :class:`ani.testing.FakeLab`, a remote worker's lab).

The observer, the sampler's shared reads, the settle watch (:mod:`ani.lab.converge`), the fault
kinds, the NETCONF server's ``frr-state`` and the adapters' read-only views read here; what a
check or a YANG document makes of the state stays with them.

Reads (the document as its source prints it, parsed; each raises the project's errors)::

    read_addresses(lab, "r1")         # `ip -j addr show`           -> [{"ifname", "flags", "operstate", "addr_info": [...]}, ...]
    read_links(lab, "r1", "eth0")     # `ip -j [-s] link show [dev]` -> [{"ifname", "flags", "operstate", "stats64"?}, ...]
    read_routes(lab, "r1")            # `show ip route json`        -> {prefix: [entry, ...]}
    read_bgp_summary(lab, "r1")       # `show bgp summary json`     -> {"ipv4Unicast": {"peers": {addr: {...}}}, ...}
    read_bgp_prefix(lab, "r1", p)     # `show bgp ipv4 unicast P json` -> {"paths": [...]}
    read_ospf_neighbors(lab, "r1")    # `show ip ospf neighbor json` -> {"neighbors": {router-id: [entry, ...]}}
    read_show(lab, "r1", [ROUTES, BGP_SUMMARY])   # several `show ... json` in ONE vtysh: {command: document}

Typed views (pure, over those documents; what a value means and its unit in each class)::

    interfaces(doc) -> [Interface]     kernel_addresses(doc) -> {(ifname, "A/len")}
    link_state(doc) -> (admin up, operstate)
    routes(doc) -> [Route]             route_state(doc)  (what moves while nothing happens left out)
    bgp_peers(doc) -> [BgpPeer]        bgp_peer_state(doc, "192.0.2.1") -> "Established" | None
    ospf_neighbors(doc) -> [OspfNeighbor]   ospf_neighbor_states(doc) -> {ifname: best state}
    ospf_interfaces(doc) -> {ifname: info}  (OSPF-enabled, up, not passive)

Errors: a command that fails (exit status not 0, killed by its bound) or prints no JSON raises
:class:`ani.errors.StateReadError` (a ``LabError``) naming the node and the command, with what it
printed in ``detail`` (at most 300 characters); the lab's own errors (``UnknownNode``,
``LabGone``, ``ProgramMissing``) go through unchanged. ``vtysh_json`` reads raise what the lab's
``vtysh_json`` raises (``LabError`` for a failure or text that is not JSON).

What changed between two states of a router: :func:`address_changes` (the kernel's addresses);
between two configurations: :func:`ani.device.changes.config_changes`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ani.errors import StateReadError

__all__ = [
    "ADDRESSES", "BGP_IPV4_SUMMARY", "BGP_NEIGHBORS", "BGP_SUMMARY", "OSPF_INTERFACES", "OSPF_NEIGHBORS", "ROUTES",
    "BgpPeer", "Interface", "NextHop", "OspfNeighbor", "Route", "StateSource",
    "address_changes", "bgp_peer_state", "bgp_peers", "bgp_prefix_command", "interfaces", "json_documents",
    "kernel_addresses", "link_state", "ospf_interfaces", "ospf_neighbor_states", "ospf_neighbors",
    "peer_states", "read_addresses", "read_bgp_prefix", "read_bgp_summary", "read_links",
    "read_ospf_neighbors", "read_routes", "read_show", "route_state", "routes", "split_json",
]

#: the kernel's interfaces with their addresses (iproute2's JSON)
ADDRESSES: tuple[str, ...] = ("ip", "-j", "addr", "show")
#: zebra's IPv4 routing table, keyed by prefix
ROUTES = "show ip route json"
#: bgpd's peers of every address family (``{"ipv4Unicast": {"peers": {...}}, ...}``)
BGP_SUMMARY = "show bgp summary json"
#: bgpd's IPv4 unicast peers only (the same entries, one family: ``{"peers": {...}}``)
BGP_IPV4_SUMMARY = "show bgp ipv4 unicast summary json"
#: ospfd's neighbors, keyed by router id
OSPF_NEIGHBORS = "show ip ospf neighbor json"
#: ospfd's interfaces (timers, passive flag), keyed by name
OSPF_INTERFACES = "show ip ospf interface json"
#: bgpd's peers in detail (``bgpState``, ``connectRetryTimer`` seconds, ...), keyed by address
BGP_NEIGHBORS = "show bgp neighbors json"


class StateSource(Protocol):
    """What the reader needs of a lab (:class:`ani.lab.Lab`, :class:`ani.testing.FakeLab`)."""

    def exec(self, node: str, argv: Sequence[str], timeout: float = ...) -> Any: ...
    def vtysh(self, router: str, commands: list[str] | str, timeout: float = ...) -> Any: ...
    def vtysh_json(self, router: str, command: str, timeout: float = ...) -> dict | list: ...


# -- reads ---------------------------------------------------------------------------------------


def _run_json(lab: StateSource, node: str, argv: Sequence[str], timeout: float) -> Any:
    """``argv`` run on ``node``, its stdout parsed as JSON. Raises StateReadError (module doc)."""
    res = lab.exec(node, list(argv), timeout=timeout)
    what = " ".join(argv)
    if not res.ok:
        timed_out = bool(getattr(res, "timed_out", False))
        why = "timed out" if timed_out else f"exit {res.rc}"
        detail = (res.stderr or res.stdout or "").strip()[:300]
        raise StateReadError(f"{node}: {what} ({why}): {detail}", node=node, command=what, detail=detail,
                             rc=res.rc, timed_out=timed_out)
    try:
        return json.loads(res.stdout or "[]")
    except ValueError:
        detail = res.stdout.strip()[:300]
        raise StateReadError(f"{node}: {what} printed no JSON: {detail}", node=node, command=what,
                             detail=detail, rc=res.rc) from None


def read_addresses(lab: StateSource, node: str, *, timeout: float = 10.0) -> list[dict[str, Any]]:
    """``ip -j addr show`` of ``node`` (a router or a host): one entry per interface, with
    ``ifname``, ``flags`` (``UP`` = admin up), ``operstate``, ``mtu``, ``address`` (MAC) and
    ``addr_info`` (``family`` inet / inet6, ``local``, ``prefixlen``). ``timeout``: seconds.
    Raises StateReadError, the lab's errors."""
    return _run_json(lab, node, ADDRESSES, timeout)


def read_links(lab: StateSource, node: str, ifname: str | None = None, *, stats: bool = False,
               timeout: float = 10.0) -> list[dict[str, Any]]:
    """``ip -j [-s] link show [dev IFNAME]`` of ``node``: ``ifname``, ``flags``, ``operstate``
    and, with ``stats``, ``stats64`` (``rx`` / ``tx``: ``packets``, ``errors``, ``dropped``,
    counters since the interface was created). Raises StateReadError (also for an interface
    that does not exist), the lab's errors."""
    argv = ["ip", "-j", *(["-s"] if stats else []), "link", "show", *(["dev", ifname] if ifname else [])]
    return _run_json(lab, node, argv, timeout)


def read_routes(lab: StateSource, router: str, *, timeout: float = 10.0) -> Any:
    """``show ip route json`` of ``router``: ``{prefix: [entry, ...]}`` (see :class:`Route`).
    Raises what ``lab.vtysh_json`` raises."""
    return lab.vtysh_json(router, ROUTES, timeout=timeout)


def read_bgp_summary(lab: StateSource, router: str, *, ipv4_unicast: bool = False, timeout: float = 10.0) -> Any:
    """``show bgp summary json`` of ``router`` (every address family, ``{"ipv4Unicast":
    {"peers": {address: peer}}}``); with ``ipv4_unicast``, ``show bgp ipv4 unicast summary
    json`` (``{"peers": {...}}``). See :class:`BgpPeer`. Raises what ``lab.vtysh_json`` raises."""
    return lab.vtysh_json(router, BGP_IPV4_SUMMARY if ipv4_unicast else BGP_SUMMARY, timeout=timeout)


def bgp_prefix_command(prefix: Any) -> str:
    """``show bgp ipv4 unicast PREFIX json``: the BGP paths of one prefix."""
    return f"show bgp ipv4 unicast {prefix} json"


def read_bgp_prefix(lab: StateSource, router: str, prefix: Any, *, timeout: float = 10.0) -> Any:
    """``show bgp ipv4 unicast PREFIX json`` of ``router``: ``{"paths": [{"bestpath":
    {"overall": bool}, "locPrf": int, "community": {"string": "..."}}, ...]}``. Raises what
    ``lab.vtysh_json`` raises."""
    return lab.vtysh_json(router, bgp_prefix_command(prefix), timeout=timeout)


def read_ospf_neighbors(lab: StateSource, router: str, *, timeout: float = 10.0) -> Any:
    """``show ip ospf neighbor json`` of ``router`` (see :class:`OspfNeighbor`). Raises what
    ``lab.vtysh_json`` raises."""
    return lab.vtysh_json(router, OSPF_NEIGHBORS, timeout=timeout)


def read_show(lab: StateSource, router: str, commands: Sequence[str], *, timeout: float = 10.0,
              fallback: bool = True) -> dict[str, Any] | None:
    """``{command: document}`` of several ``show ... json`` commands read with ONE vtysh
    (``-c A -c B ...``; its output is one JSON document per command, in order). With
    ``fallback`` the whole output must be those documents, else each command is read on its own
    (``lab.vtysh_json``, its errors raised); without, the first ones are taken (what follows
    them is not looked at) and an output that does not start with as many documents (a daemon
    not running prints text) gives None. Raises the lab's errors of the one vtysh."""
    cmds = list(commands)
    res = lab.vtysh(router, cmds, timeout=timeout)
    docs = split_json(res.stdout, None if fallback else len(cmds)) if getattr(res, "ok", False) else None
    if docs is not None and len(docs) == len(cmds):
        return dict(zip(cmds, docs, strict=True))
    if not fallback:
        return None
    return {c: lab.vtysh_json(router, c, timeout=timeout) for c in cmds}


def split_json(text: str, count: int | None = None) -> list[Any] | None:
    """Consecutive JSON documents in ``text`` (blanks between them), or None if it is not that;
    with ``count``, the first ``count`` documents (what follows them is not looked at)."""
    dec = json.JSONDecoder()
    out: list[Any] = []
    i, n = 0, len(text)
    while count is None or len(out) < count:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return out
        try:
            doc, i = dec.raw_decode(text, i)
        except ValueError:
            return None
        out.append(doc)
    return out


def json_documents(text: str) -> list[Any]:
    """The JSON documents in ``text``, whatever text lies between them (vtysh prints one per
    ``-c``, a daemon's vty socket may add a prompt); text that is not JSON is skipped."""
    dec = json.JSONDecoder()
    out: list[Any] = []
    i, n = 0, len(text)
    while i < n:
        starts = [x for x in (text.find("{", i), text.find("[", i)) if x >= 0]
        if not starts:
            break
        i = min(starts)
        try:
            obj, end = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            i += 1
            continue
        out.append(obj)
        i = end
    return out


# -- interfaces ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Interface:
    """One kernel interface (``ip -j addr``): ``name``; ``admin_up`` (flag ``UP``); ``operstate``
    as the kernel says it (``UP``, ``DOWN``, ``LOWERLAYERDOWN``, ``UNKNOWN`` on ``lo``, None if
    absent); ``mac`` (None if absent); ``mtu`` (bytes, None if absent); ``ipv4``: its IPv4
    addresses ``"A/len"``, host bits kept, in the kernel's order."""

    name: str | None
    admin_up: bool
    operstate: str | None
    mac: str | None
    mtu: int | None
    ipv4: tuple[str, ...]


def interfaces(doc: Any) -> list[Interface]:
    """The :class:`Interface` of each entry of an ``ip -j addr`` document, in its order."""
    out = []
    for link in doc if isinstance(doc, list) else []:
        mtu = link.get("mtu")
        out.append(Interface(
            name=link.get("ifname"), admin_up="UP" in (link.get("flags") or []), operstate=link.get("operstate"),
            mac=link.get("address"), mtu=mtu if isinstance(mtu, int) else None,
            ipv4=tuple(f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info") or [] if a.get("family") == "inet"),
        ))
    return out


def kernel_addresses(doc: Any) -> set[tuple[str, str]]:
    """``{(interface, "A/len")}`` of the IPv4 addresses of an ``ip -j addr`` document (or its
    text), 127/8 left out. Raises ValueError for text that is not JSON."""
    if isinstance(doc, str):
        doc = json.loads(doc or "[]")
    out: set[tuple[str, str]] = set()
    for link in doc or []:
        for a in link.get("addr_info") or []:
            if a.get("family") == "inet" and not str(a.get("local", "")).startswith("127."):
                out.add((str(link.get("ifname")), f"{a.get('local')}/{a.get('prefixlen')}"))
    return out


def link_state(doc: Any) -> tuple[bool, str]:
    """``(admin up, operstate)`` of the first interface of an ``ip -j link show dev X``
    document (``UNKNOWN`` when the kernel does not say). Raises StateReadError for an empty one."""
    if not isinstance(doc, list) or not doc:
        raise StateReadError(f"ip link show: no interface in {str(doc)[:100]}", detail=str(doc)[:300])
    info = doc[0]
    return "UP" in info.get("flags", []), str(info.get("operstate", "UNKNOWN"))


def address_changes(before: Iterable[tuple[str, str]], after: Iterable[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """What changed in a router's kernel addresses (:func:`kernel_addresses` sets):
    ``(sign, interface, "A/len")``, the lost ones (``-``) first, then the gained ones (``+``),
    each sorted."""
    b, a = set(before), set(after)
    return [("-", i, x) for i, x in sorted(b - a)] + [("+", i, x) for i, x in sorted(a - b)]


# -- routes --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NextHop:
    """One next hop of a route entry: ``ip`` (None: directly connected or a discard),
    ``interface`` (``interfaceName``), ``active``, ``fib`` (installed in the kernel),
    ``blackhole`` / ``reject`` (a discard route)."""

    ip: str | None
    interface: str | None
    active: bool
    fib: bool
    blackhole: bool = False
    reject: bool = False


@dataclass(frozen=True)
class Route:
    """One entry of ``show ip route json``: ``prefix`` (the key it is under), ``protocol``
    (``connected``, ``static``, ``ospf``, ``bgp``, ``kernel``, ... None if FRR does not say),
    ``selected`` (the best of its prefix), ``installed`` (in the FIB), ``distance``
    (administrative distance) and ``metric`` (as FRR prints them; None if absent), its
    ``nexthops`` in FRR's order."""

    prefix: str
    protocol: str | None
    selected: bool
    installed: bool
    distance: Any
    metric: Any
    nexthops: tuple[NextHop, ...]


def routes(doc: Any) -> list[Route]:
    """The :class:`Route` entries of a ``show ip route json`` document, by prefix as the
    document orders them (anything not a dict of entry lists gives [])."""
    out = []
    for prefix, entries in doc.items() if isinstance(doc, dict) else ():
        for e in entries if isinstance(entries, list) else []:
            if not isinstance(e, dict):
                continue
            hops = tuple(NextHop(ip=h.get("ip"), interface=h.get("interfaceName"), active=bool(h.get("active")),
                                 fib=bool(h.get("fib")), blackhole=bool(h.get("blackhole")),
                                 reject=bool(h.get("reject") or h.get("unreachable")))
                         for h in e.get("nexthops") or [] if isinstance(h, dict))
            out.append(Route(prefix=prefix, protocol=e.get("protocol"), selected=bool(e.get("selected")),
                             installed=bool(e.get("installed")), distance=e.get("distance"), metric=e.get("metric"),
                             nexthops=hops))
    return out


def route_state(doc: Any) -> list[Any]:
    """``show ip route json`` without what changes while nothing happens (uptimes, internal
    ids): per prefix (sorted) and entry its protocol, selection, installation, distance, metric
    and next hops (sorted ``(ip, interface, active, fib)``); ``[None]`` for a document that is
    not a table. Equal values: no route a check can see has changed."""
    if not isinstance(doc, dict):
        return [None]
    out = []
    for r in routes({p: doc[p] for p in sorted(doc)}):
        hops = sorted((str(h.ip or ""), str(h.interface or ""), h.active, h.fib) for h in r.nexthops)
        out.append((r.prefix, r.protocol, r.selected, r.installed, r.distance, r.metric, hops))
    return out


# -- BGP -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BgpPeer:
    """One peer of ``show bgp summary json``: ``family`` (``ipv4Unicast``, ...), ``address``,
    ``state`` (as FRR prints it: ``Established``, ``Active``, ``Idle (Admin)``, ... None if
    absent), ``peer_state`` (``OK``, ``Admin``, ``PfxCt``, ...), ``remote_as``,
    ``uptime_ms`` (time in the current state, milliseconds), ``prefixes_received`` (None when
    FRR does not say)."""

    family: str
    address: str
    state: str | None
    peer_state: str | None = None
    remote_as: int | None = None
    uptime_ms: int | None = None
    prefixes_received: int | None = None

    @property
    def admin_down(self) -> bool:
        """Shut down by configuration (not expected to come up)."""
        return "Admin" in str(self.state) or self.peer_state in ("Admin", "PfxCt")


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def bgp_peers(doc: Any) -> list[BgpPeer]:
    """Every :class:`BgpPeer` of a ``show bgp summary json`` document, family by family as
    the document orders them (a one-family document, ``{"peers": ...}``, gives family ``""``)."""
    if not isinstance(doc, dict):
        return []
    fams = [("", doc)] if isinstance(doc.get("peers"), dict) else [(str(k), v) for k, v in doc.items()]
    out = []
    for fam, v in fams:
        if not isinstance(v, dict):
            continue
        for addr, p in (v.get("peers") or {}).items():
            p = p if isinstance(p, dict) else {}
            state = p.get("state")
            out.append(BgpPeer(family=fam, address=str(addr), state=None if state is None else str(state),
                               peer_state=p.get("peerState"), remote_as=_int(p.get("remoteAs")),
                               uptime_ms=_int(p.get("peerUptimeMsec")), prefixes_received=_int(p.get("pfxRcd"))))
    return out


def bgp_peer_state(doc: Any, neighbor: Any) -> str | None:
    """The state of peer ``neighbor`` in the first family of a ``show bgp summary json``
    document that has it (``"?"`` when FRR prints none); None: no family has that peer."""
    want = str(neighbor)
    for p in bgp_peers(doc):
        if p.address == want:
            return p.state if p.state is not None else "?"
    return None


def peer_states(doc: Any) -> list[Any]:
    """``(family, address, state)`` of every peer of ``show bgp summary json``, sorted (no
    counters, no uptimes); ``[None]`` for a document that is not a summary."""
    if not isinstance(doc, dict):
        return [None]
    return sorted((p.family, p.address, str(p.state)) for p in bgp_peers(doc))


# -- OSPF ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OspfNeighbor:
    """One neighbor of ``show ip ospf neighbor json``: ``router_id``, ``interface`` (the local
    interface, without FRR's ``:address`` suffix), ``address`` (the neighbor's interface
    address, None if absent), ``state`` as FRR prints it (``Full/DR``, ``Init/-``, ...)."""

    router_id: str
    interface: str
    address: str | None
    state: str

    @property
    def adjacency(self) -> str:
        """The adjacency's state without the role (``Full``, ``Init``, ``2-Way``, ...)."""
        return self.state.split("/")[0]


def ospf_neighbors(doc: Any) -> list[OspfNeighbor]:
    """Every :class:`OspfNeighbor` of a ``show ip ospf neighbor json`` document, in its order
    (FRR 8.4 prints ``nbrState``; older ones ``state``)."""
    out = []
    for rid, entries in ((doc.get("neighbors") or {}).items() if isinstance(doc, dict) else ()):
        for e in entries if isinstance(entries, list) else [entries]:
            if not isinstance(e, dict):
                continue
            out.append(OspfNeighbor(router_id=str(rid), interface=str(e.get("ifaceName", "")).split(":")[0],
                                    address=e.get("address") or e.get("ifaceAddress"),
                                    state=str(e.get("nbrState") or e.get("state") or "")))
    return out


def ospf_neighbor_states(doc: Any) -> dict[str, str]:
    """``{interface: best adjacency state}`` of ``show ip ospf neighbor json`` (``Full`` wins
    over any other neighbor on the interface)."""
    states: dict[str, str] = {}
    for n in ospf_neighbors(doc):
        if states.get(n.interface) != "Full":
            states[n.interface] = n.adjacency
    return states


def ospf_interfaces(doc: Any) -> dict[str, dict[str, Any]]:
    """``{name: info}`` of the OSPF-enabled, up, non-passive interfaces of ``show ip ospf
    interface json`` (``info`` as FRR prints it: ``timerMsecs`` hello, ``timerDeadSecs``, ...)."""
    if not isinstance(doc, dict):
        return {}
    out = {}
    for name, info in doc.get("interfaces", doc).items():
        if not isinstance(info, dict):
            continue
        if info.get("ospfEnabled") is False or not info.get("ifUp", True):
            continue
        if info.get("timerPassiveIface") or info.get("passive"):
            continue
        out[name] = info
    return out
