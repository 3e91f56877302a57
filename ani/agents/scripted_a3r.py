"""The scripted baseline agent's ``onboard-site`` at A3-R: JSON Patches of the routers'
desired-state files in the source of truth, one commit, reconciled.

Called by :class:`ani.agents.scripted.ScriptedAgent` when the adapter offers ``sot_commit`` and
no service tools. Steps (tool calls):

1. ``get_topology``: the routers, and the edge's interface facing the site's host (default
   ``to-<site>``);
2. ``sot_read(devices/<edge>.json)``: the route-map of ``redistribute connected``, the
   prefix-list it matches, the next free sequence number (highest + 10; none if the prefix is
   already there); HEAD is the ``base_revision`` of every patch;
3. ``sot_patch`` the edge: the prefix-list entry, the gateway address on the interface and the
   prefix in the nftables set ``tenant_<tenant>``;
4. ``sot_read`` every other router; ``sot_patch`` those having the set ``tenant_<tenant>``
   (append the prefix);
5. ``sot_commit``: the reconciler applies the routers that changed; it must report
   ``converged``;
6. ``drift([edge])``: must be empty (the edge runs what was committed).

Any refusal or surprise raises :class:`ani.agents.scripted.AgentFailed` (the run's error).
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any

from ani.agents.scripted import AgentFailed, need, site_link
from ani.sot.patch import pointer


def _set_element(doc: dict[str, Any], nset: str, prefix: str) -> list[dict[str, Any]]:
    """The patch adding ``prefix`` to set ``nset`` of ``doc`` ([] if absent or already there)."""
    sets = (doc.get("firewall") or {}).get("sets") or {}
    if nset not in sets or prefix in sets[nset].get("elements", []):
        return []
    return [{"op": "add", "path": pointer("firewall", "sets", nset, "elements", "-"), "value": prefix}]


def solve(site: dict[str, Any], steps: Any, *, validate_tries: int = 6, validate_pause_s: float = 0.5) -> dict[str, Any]:
    """Onboard ``site`` (``{tenant, edge, site, prefix, gateway}``, the parsed site.yaml) through
    ``steps`` (an ``ani.agents.base.StepCounter``). Returns ``sot_commit``'s data (revision,
    reconcile). ``validate_tries`` / ``validate_pause_s`` are accepted for the common signature
    (the reconciler verifies the routers itself). Raises AgentFailed."""
    tenant, edge, host = str(site["tenant"]), str(site["edge"]), str(site["site"])
    prefix = IPv4Network(str(site["prefix"]))
    address = f"{site['gateway']}/{prefix.prefixlen}"
    nset = f"tenant_{tenant}"

    routers, ifname = site_link(steps, edge, host)

    path = f"devices/{edge}.json"
    read = need(steps.call("sot_read", {"path": path}), f"sot_read {path}")
    doc, base = read["document"], read["head"]
    rmap = (((doc.get("bgp") or {}).get("ipv4_unicast") or {}).get("redistribute") or {}).get("connected") or {}
    rm = (doc.get("route_maps") or {}).get(rmap.get("route_map") or "")
    plists = [e["match_prefix_list"] for _s, e in sorted((rm or {}).get("entries", {}).items(), key=lambda kv: int(kv[0]))
              if e.get("match_prefix_list")]
    if not plists:
        raise AgentFailed(f"{edge}: no prefix-list behind 'redistribute connected route-map'")
    plist = plists[0]
    entries = ((doc.get("prefix_lists") or {}).get(plist) or {}).get("entries", {})

    ops: list[dict[str, Any]] = []
    if not any(e.get("prefix") == str(prefix) for e in entries.values()):
        seq = max((int(s) for s in entries), default=0) + 10
        entry = {"action": "permit", "prefix": str(prefix)}
        if entries:
            ops.append({"op": "add", "path": pointer("prefix_lists", plist, "entries", str(seq)), "value": entry})
        else:
            ops.append({"op": "add", "path": pointer("prefix_lists", plist), "value": {"entries": {str(seq): entry}}})
    iface = (doc.get("interfaces") or {}).get(ifname)
    if iface is None:
        ops.append({"op": "add", "path": pointer("interfaces", ifname), "value": {"addresses": [address]}})
    elif address not in iface.get("addresses", []):
        ops.append({"op": "add", "path": pointer("interfaces", ifname, "addresses", "-"), "value": address})
    elem = _set_element(doc, nset, str(prefix))
    if nset not in ((doc.get("firewall") or {}).get("sets") or {}):
        raise AgentFailed(f"{edge}: no nftables set {nset}")
    ops += elem
    if ops:
        need(steps.call("sot_patch", {"path": path, "patch": ops, "base_revision": base}), f"sot_patch {path}")

    for r in routers:
        if r == edge:
            continue
        p = f"devices/{r}.json"
        other = need(steps.call("sot_read", {"path": p}), f"sot_read {p}")["document"]
        elem = _set_element(other, nset, str(prefix))
        if elem:
            need(steps.call("sot_patch", {"path": p, "patch": elem, "base_revision": base}), f"sot_patch {p}")

    res = steps.call("sot_commit", {"message": f"onboard site {host} of tenant {tenant} on {edge}: {prefix}"})
    out = need(res, "sot_commit")
    status = (out.get("reconcile") or {}).get("status")
    if status != "converged":
        raise AgentFailed(f"sot_commit: reconcile {status}: {res.text[:300]}")
    left = need(steps.call("drift", {"devices": [edge]}), "drift").get("drift")
    if left:
        raise AgentFailed(f"{edge} drifted right after the commit: {left}")
    return out
