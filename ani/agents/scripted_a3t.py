"""The scripted baseline agent's ``onboard-site`` at A3-T: one typed ``tenant-site`` onboard intent.

Called by :class:`ani.agents.scripted.ScriptedAgent` when the adapter offers ``plan`` and
``apply`` (and no source of truth). Steps (tool calls):

1. ``get_topology``: the edge's interface facing the site's host (default ``to-<site>``);
2. ``list_services(type="tenant-site")``: the tenant exists (it has sites) and the site does not;
3. ``plan([onboard])``: a dry run; the edge must be among the routers that change;
4. ``apply([onboard])``: the transaction, whose active validation already checks that the new
   site reaches its tenant's other sites and nothing else broke;
5. ``get_state(other edge, "routes")`` until the prefix shows there (BGP carried it), at most
   ``validate_tries`` looks, ``validate_pause_s`` apart.

Any refusal or surprise raises :class:`ani.agents.scripted.AgentFailed` (the run's error).
"""

from __future__ import annotations

import time
from ipaddress import IPv4Network
from typing import Any

from ani.agents.scripted import AgentFailed, need, site_link


def solve(site: dict[str, Any], steps: Any, *, validate_tries: int = 6, validate_pause_s: float = 0.5) -> dict[str, Any]:
    """Onboard ``site`` (``{tenant, edge, site, prefix, gateway}``, the parsed site.yaml) through
    ``steps`` (an ``ani.agents.base.StepCounter``). Returns the ``apply`` result's data.
    Raises AgentFailed (a tool refused, or the route never showed on another edge)."""
    tenant, edge, host = str(site["tenant"]), str(site["edge"]), str(site["site"])
    prefix = IPv4Network(str(site["prefix"]))

    routers, ifname = site_link(steps, edge, host)

    sites = need(steps.call("list_services", {"type": "tenant-site"}), "list_services")["services"]
    if not any(s["spec"]["tenant"] == tenant for s in sites):
        raise AgentFailed(f"tenant {tenant} has no site yet: not a tenant of this network")
    if any(s["id"] == f"tenant-site/{tenant}/{host}" for s in sites):
        raise AgentFailed(f"tenant-site/{tenant}/{host} already exists")
    other_edges = sorted({s["spec"]["edge"] for s in sites} - {edge}) or [r for r in routers if r != edge]

    change = {"type": "tenant-site", "action": "onboard", "tenant": tenant, "site": host, "edge": edge,
              "interface": ifname, "prefix": str(prefix), "gateway": str(site["gateway"])}
    planned = need(steps.call("plan", {"changes": [change]}), "plan")
    if edge not in planned.get("routers", []):
        raise AgentFailed(f"plan does not change {edge}: {planned.get('routers')}")
    applied = need(steps.call("apply", {"changes": [change]}), "apply")

    if other_edges:
        other = other_edges[0]
        for i in range(validate_tries):
            steps.check_clock()
            routes = need(steps.call("get_state", {"device": other, "what": "routes"}), "get_state").get("state")
            if isinstance(routes, dict) and str(prefix) in routes:
                break
            if i + 1 < validate_tries:
                time.sleep(validate_pause_s)
        else:
            raise AgentFailed(f"{prefix} did not show in {other}'s routing table")
    return applied
