"""Convergence: which OSPF adjacencies and BGP sessions of a lab are not up yet.

Expected state, derived from the topology and the routers' own view:

* OSPF: for each router running ospfd, the OSPF-enabled non-passive interfaces
  (``show ip ospf interface json``); where the link peer is a router whose peer interface is
  OSPF-enabled and non-passive too, a Full neighbor is expected on that interface.
* BGP: every ``ipv4Unicast`` peer in ``show bgp summary json`` that is not administratively
  shut down must be Established.

:func:`pending` returns one human-readable line per missing item, e.g.
``"e1: BGP neighbor 100.64.255.1 is Active (expected Established)"``.
"""

from __future__ import annotations

import json
from ani.host.threads import ContextPool
from typing import TYPE_CHECKING, Any

from ani.errors import LabError
from ani.lab import frr, vty

if TYPE_CHECKING:
    from ani.lab.lab import Lab

OSPF_IF = "show ip ospf interface json"
OSPF_NBR = "show ip ospf neighbor json"
BGP_SUM = "show bgp summary json"
DAEMON_OF = {OSPF_IF: "ospfd", OSPF_NBR: "ospfd", BGP_SUM: "bgpd"}


def parse_json_stream(text: str) -> list[Any]:
    """Parse concatenated JSON documents (vtysh prints one per ``-c``). Non-JSON text is skipped."""
    dec = json.JSONDecoder()
    out: list[Any] = []
    i, n = 0, len(text)
    while i < n:
        j = text.find("{", i)
        k = text.find("[", i)
        starts = [x for x in (j, k) if x >= 0]
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


def _ospf_ifaces(doc: Any) -> dict[str, dict[str, Any]]:
    """OSPF-enabled, non-passive interfaces from ``show ip ospf interface json``."""
    if not isinstance(doc, dict):
        return {}
    ifaces = doc.get("interfaces", doc)
    out = {}
    for name, info in ifaces.items():
        if not isinstance(info, dict):
            continue
        if info.get("ospfEnabled") is False or not info.get("ifUp", True):
            continue
        if info.get("timerPassiveIface") or info.get("passive"):
            continue
        out[name] = info
    return out


def _ospf_neighbor_states(doc: Any) -> dict[str, str]:
    """``{ifname: best state}`` from ``show ip ospf neighbor json`` (Full wins)."""
    states: dict[str, str] = {}
    if not isinstance(doc, dict):
        return states
    for entries in (doc.get("neighbors") or {}).values():
        for e in entries if isinstance(entries, list) else [entries]:
            ifname = str(e.get("ifaceName", "")).split(":")[0]
            state = str(e.get("nbrState") or e.get("state") or "").split("/")[0]
            if states.get(ifname) != "Full":
                states[ifname] = state
    return states


def _bgp_pending(router: str, doc: Any) -> list[str]:
    if not isinstance(doc, dict):
        return []
    peers = (doc.get("ipv4Unicast") or {}).get("peers") or {}
    out = []
    for addr, info in peers.items():
        state = str(info.get("state", "?"))
        if "Admin" in state or info.get("peerState") in ("Admin", "PfxCt"):
            continue
        if state != "Established":
            out.append(f"{router}: BGP neighbor {addr} is {state} (expected Established)")
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
