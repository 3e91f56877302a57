"""Convergence: which OSPF adjacencies and BGP sessions of a lab are not up yet.

Expected state, derived from the topology and the routers' own view:

* OSPF: for each router running ospfd, the OSPF-enabled non-passive interfaces
  (``show ip ospf interface json``); where the link peer is a router whose peer interface is
  OSPF-enabled and non-passive too, a Full neighbor is expected on that interface.
* BGP: every ``ipv4Unicast`` peer in ``show bgp summary json`` that is not administratively
  shut down must be Established.

:func:`pending` returns one human-readable line per missing item, e.g.
``"e1: BGP neighbor 100.64.255.1 is Active (expected Established)"``.

The documents are parsed by the one reader of operational state (:mod:`ani.device.opstate`);
they are read here on the daemons' vty sockets (no process per poll).

For settling on evidence (:mod:`ani.observer.settle`, issue 24 §3): :func:`routing_state` reads
every router's RIB and BGP / OSPF neighbor states without what moves while nothing happens
(uptimes, counters); :func:`silent_timers_s` says how long routing may stay silent before a
change still to come (OSPF hellos, BGP connect retries of sessions that are down).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ani.device import opstate
from ani.errors import LabError
from ani.host.threads import ContextPool
from ani.lab import frr, vty

if TYPE_CHECKING:
    from ani.lab.lab import Lab

OSPF_IF = opstate.OSPF_INTERFACES
OSPF_NBR = opstate.OSPF_NEIGHBORS
BGP_SUM = opstate.BGP_SUMMARY
DAEMON_OF = {OSPF_IF: "ospfd", OSPF_NBR: "ospfd", BGP_SUM: "bgpd"}


#: the parsers of these documents are the one reader's (:mod:`ani.device.opstate`); named here
#: for this module's callers and tests
parse_json_stream = opstate.json_documents
_ospf_ifaces = opstate.ospf_interfaces
_ospf_neighbor_states = opstate.ospf_neighbor_states
_route_state = opstate.route_state
_peer_states = opstate.peer_states


def _query(lab: Lab, router: str, commands: list[str]) -> dict[str, Any]:
    """``{command: parsed json or None}`` for one router, asked directly on the daemons' vty
    sockets of its pathspace (no process per poll). None: daemon did not answer / not JSON."""
    run = frr.run_dir(lab.pathspace(router))
    out: dict[str, Any] = {}
    by_daemon: dict[str, list[str]] = {}
    for c in commands:
        by_daemon.setdefault(DAEMON_OF[c], []).append(c)
    for daemon, cmds in by_daemon.items():
        try:
            answers = vty.query(run / f"{daemon}.vty", cmds)
        except LabError:
            answers = [(1, "")] * len(cmds)
        for c, (_status, text) in zip(cmds, answers, strict=True):
            docs = parse_json_stream(text)  # bgpd answers "{}" with status 1 without an instance
            out[c] = docs[0] if docs else None
    return out


def _bgp_pending(router: str, doc: Any) -> list[str]:
    if not isinstance(doc, dict):
        return []
    out = []
    for p in opstate.bgp_peers({"ipv4Unicast": doc.get("ipv4Unicast") or {}}):
        state = p.state if p.state is not None else "?"
        if p.admin_down:
            continue
        if state != "Established":
            out.append(f"{router}: BGP neighbor {p.address} is {state} (expected Established)")
    return out


def pending(lab: Lab) -> list[str]:
    """What is not converged yet in ``lab`` (empty list: converged). Queries routers concurrently."""
    topo = lab.topology
    conv = topo.convergence
    plan: dict[str, list[str]] = {}
    for r, spec in topo.routers.items():
        cmds = []
        if conv.ospf and "ospfd" in spec.daemons:
            cmds += [OSPF_IF, OSPF_NBR]
        if conv.bgp and "bgpd" in spec.daemons:
            cmds.append(BGP_SUM)
        if cmds:
            plan[r] = cmds
    if not plan:
        return []
    with ContextPool(max_workers=min(16, len(plan))) as ex:
        data = dict(zip(plan, ex.map(lambda r: _query(lab, r, plan[r]), plan), strict=True))

    out: list[str] = []
    enabled = {r: _ospf_ifaces(d.get(OSPF_IF)) for r, d in data.items() if OSPF_IF in d}
    for r in topo.routers:
        d = data.get(r, {})
        if OSPF_IF in d:
            if d.get(OSPF_IF) is None:
                out.append(f"{r}: ospfd did not answer 'show ip ospf interface json'")
            states = _ospf_neighbor_states(d.get(OSPF_NBR))
            for ifname in sorted(enabled.get(r, {})):
                peer = topo.peer_of(r, ifname)
                if peer is None or peer.node not in enabled or peer.ifname not in enabled[peer.node]:
                    continue
                state = states.get(ifname, "Down")
                if state != "Full":
                    out.append(f"{r}: OSPF adjacency on {ifname} with {peer.node} not Full (state {state})")
        if BGP_SUM in d:
            if d.get(BGP_SUM) is None:
                out.append(f"{r}: bgpd did not answer 'show bgp summary json'")
            out += _bgp_pending(r, d.get(BGP_SUM))
    return out


# --- the routing state, for settling on evidence (issue 24 §3) ------------------------------------

ROUTES = opstate.ROUTES
BGP_NBRS = opstate.BGP_NEIGHBORS
#: assumed when a daemon does not say (FRR's defaults: hello 10 s, connect retry 120 s)
DEFAULT_HELLO_S = 10.0
#: FRR's OSPF dead interval when an interface does not say (seconds): a neighbor whose
#: adjacency went stale (e.g. the other end changed its network type) leaves only then
DEFAULT_DEAD_S = 40.0
DEFAULT_CONNECT_RETRY_S = 120.0


def routing_state(lab: Lab) -> dict[str, Any]:
    """``{router: its routing state}``: the RIB (:func:`_route_state`), the BGP peers' states and
    the OSPF neighbors' states (:func:`_ospf_neighbor_states`), read on the daemons' vty sockets
    (no process; each router's daemons that run). Equal values: nothing a check can see has
    changed in the routers' control plane. A daemon that does not answer reads as None."""
    topo = lab.topology

    def one(r: str) -> Any:
        daemons = set(topo.routers[r].daemons)
        run = frr.run_dir(lab.pathspace(r))
        state: list[Any] = []
        for daemon, cmd, norm in (("zebra", ROUTES, _route_state), ("bgpd", BGP_SUM, _peer_states),
                                  ("ospfd", OSPF_NBR, lambda d: sorted(_ospf_neighbor_states(d).items()))):
            if daemon != "zebra" and daemon not in daemons:
                continue  # zebra runs on every router
            ((_status, text),) = vty.query(run / f"{daemon}.vty", [cmd])  # LabError: unknown
            docs = parse_json_stream(text)
            state.append((daemon, norm(docs[0] if docs else None)))
        return state

    routers = list(topo.routers)
    with ContextPool(max_workers=max(1, min(16, len(routers)))) as ex:
        return dict(zip(routers, ex.map(one, routers), strict=True))


def silent_timers_s(lab: Lab) -> float:
    """The longest time routing may stay silent before a change that is still to come: the
    longest OSPF dead interval of an OSPF interface facing another router (a neighbor appears
    only at a hello, and a stale adjacency -- the other end changed its network type or area --
    leaves only when its dead interval ran out: measured, a route learnt only after that) and the
    longest connect-retry timer of a BGP peer that is not Established (a session comes up only
    at a connect attempt); seconds, 0 without either. A daemon that does not say counts with
    FRR's default (:data:`DEFAULT_HELLO_S`, :data:`DEFAULT_CONNECT_RETRY_S`)."""
    topo = lab.topology
    longest = 0.0
    for r, spec in topo.routers.items():
        run = frr.run_dir(lab.pathspace(r))
        if "ospfd" in spec.daemons:
            longest = max(longest, _hello_s(lab, r, run))
        if "bgpd" in spec.daemons:
            longest = max(longest, _connect_retry_s(run))
    return longest


def _hello_s(lab: Lab, router: str, run: Any) -> float:
    """The longest hello interval of ``router``'s OSPF interfaces that face another router (a
    loopback or a host's link has no neighbor to wait for)."""
    try:
        ((_s, text),) = vty.query(run / "ospfd.vty", [OSPF_IF])
    except LabError:
        return DEFAULT_HELLO_S
    docs = parse_json_stream(text)
    hellos = []
    for name, info in _ospf_ifaces(docs[0] if docs else None).items():
        peer = lab.topology.peer_of(router, name)
        if peer is None or peer.node not in lab.topology.routers:
            continue
        t = info.get("timerMsecs")
        hellos.append(float(t) / 1000 if isinstance(t, (int, float)) else DEFAULT_HELLO_S)
        dead = info.get("timerDeadSecs")
        hellos.append(float(dead) if isinstance(dead, (int, float)) else DEFAULT_DEAD_S)
    return max(hellos, default=0.0)


def _connect_retry_s(run: Any) -> float:
    try:
        ((_s, text),) = vty.query(run / "bgpd.vty", [BGP_NBRS])
    except LabError:
        return DEFAULT_CONNECT_RETRY_S
    docs = parse_json_stream(text)
    doc = docs[0] if docs else None
    if not isinstance(doc, dict):
        return 0.0
    out = 0.0
    for info in doc.values():
        if not isinstance(info, dict) or info.get("bgpState") == "Established":
            continue
        if "Admin" in str(info.get("bgpState", "")) or info.get("adminShutDown"):
            continue
        t = info.get("connectRetryTimer")
        out = max(out, float(t) if isinstance(t, (int, float)) else DEFAULT_CONNECT_RETRY_S)
    return out


# --- a change still on its way: bgpd's and zebra's scheduled timers (issue 24 §3) ----------------

THREAD_TIMERS = "show thread timers"
#: timers that, while scheduled in a daemon, mean a routing change is still on its way (FRR 8.4.4's
#: thread names, as ``show thread timers`` prints them): bgpd's route-map update timer
#: (``bgp route-map delay-timer`` after a route-map / prefix-list change), its delayed
#: re-announcement to a peer (after a route refresh, an outbound policy change), its subgroup
#: coalesce timer (a session's first announcement) and its route-processing work queue; zebra's
#: RIB work queue. Periodic timers (hold times, hellos, refresh walkers) are not among them.
PENDING_TIMERS: dict[str, frozenset[str]] = {
    "bgpd": frozenset({"bgp_route_map_update_timer", "bgp_announce_route_timer_expired",
                       "subgroup_coalesce_timer", "work_queue_run"}),
    "zebra": frozenset({"work_queue_run"}),
}


def _timer_names(text: str) -> list[str]:
    """Thread names of ``show thread timers`` (``  (name)   00:00:01.234`` lines; the
    parentheses FRR prints around some names dropped)."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].count(":") == 2:
            out.append(parts[0].strip("()"))
    return out


def pending_timers(lab: Lab) -> list[str]:
    """``"router: daemon timer"`` for every :data:`PENDING_TIMERS` timer scheduled now in the
    lab's bgpd and zebra daemons (``show thread timers`` on their vty sockets, no process);
    empty: no routing change is waiting on a timer. Raises LabError if a daemon does not answer
    (unknown is not "nothing pending")."""
    topo = lab.topology

    def one(r: str) -> list[str]:
        run = frr.run_dir(lab.pathspace(r))
        found = []
        for daemon in ("zebra", "bgpd"):
            if daemon != "zebra" and daemon not in topo.routers[r].daemons:
                continue
            ((status, text),) = vty.query(run / f"{daemon}.vty", [THREAD_TIMERS])
            if status != 0:
                raise LabError(f"{r}: {daemon} refused {THREAD_TIMERS!r}")
            found += [f"{r}: {daemon} {n}" for n in _timer_names(text) if n in PENDING_TIMERS[daemon]]
        return found

    routers = list(topo.routers)
    with ContextPool(max_workers=max(1, min(16, len(routers)))) as ex:
        return [p for found in ex.map(one, routers) for p in found]
