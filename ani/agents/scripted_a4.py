"""The scripted baseline agent's ``onboard-site`` at A4: one service file in the source of truth,
one commit, reconciled as a transaction.

Called by :class:`ani.agents.scripted.ScriptedAgent` when the adapter offers ``sot_commit`` and
the service tools (``list_service_types``). Steps (tool calls):

1. ``get_topology``: the edge must be a router; the edge's interface facing the site's host
   (default ``to-<site>``);
2. ``sot_list``: HEAD (the ``base_revision``), and whether the service file exists already;
3. ``sot_patch`` of ``services/tenant-site-<tenant>-<site>.json`` (a new file): the
   ``tenant-site`` ``onboard`` change with the prefix and gateway of ``site.yaml`` (one ``add``
   per field; the adapter validates it against every router and service);
4. ``sot_commit``: the reconciler applies it as one transaction over the edge and every router
   with the tenant's set, with active validation (the site reaching its tenant's other sites, the
   baseline invariants of the tenant); it must report ``converged``;
5. ``get_service(tenant-site/<tenant>/<site>)``: the desired state has the service on the edge.

Any refusal or surprise raises :class:`ani.agents.scripted.AgentFailed` (the run's error).
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from typing import Any

from ani.agents.scripted import AgentFailed, need, site_link
from ani.sot.patch import pointer


def service_path(tenant: str, site: str) -> str:
    """The service file of a tenant site: ``services/tenant-site-<tenant>-<site>.json``."""
    return f"services/tenant-site-{tenant}-{site}.json"


def solve(site: dict[str, Any], steps: Any, *, validate_tries: int = 6, validate_pause_s: float = 0.5) -> dict[str, Any]:
    """Onboard ``site`` (``{tenant, edge, site, prefix, gateway}``, the parsed site.yaml) through
    ``steps`` (an ``ani.agents.base.StepCounter``). Returns ``sot_commit``'s data (revision,
    reconcile). ``validate_tries`` / ``validate_pause_s`` are accepted for the common signature
    (the transaction's active validation checks the routes itself). Raises AgentFailed."""
    tenant, edge, host = str(site["tenant"]), str(site["edge"]), str(site["site"])
    prefix = IPv4Network(str(site["prefix"]))
    gateway = IPv4Address(str(site["gateway"]))

    routers, ifname = site_link(steps, edge, host)

    path = service_path(tenant, host)
    listing = need(steps.call("sot_list", {}), "sot_list")
    if path in listing.get("files", []):
        raise AgentFailed(f"{path} exists already")
    change = {"type": "tenant-site", "action": "onboard", "tenant": tenant, "site": host, "edge": edge,
              "interface": ifname, "prefix": str(prefix), "gateway": str(gateway)}
    ops = [{"op": "add", "path": pointer(k), "value": v} for k, v in change.items()]
    need(steps.call("sot_patch", {"path": path, "patch": ops, "base_revision": listing["revision"]}), f"sot_patch {path}")

    res = steps.call("sot_commit", {"message": f"onboard site {host} of tenant {tenant} on {edge}: {prefix}"})
    out = need(res, "sot_commit")
    status = (out.get("reconcile") or {}).get("status")
    if status != "converged":
        raise AgentFailed(f"sot_commit: reconcile {status}: {res.text[:300]}")

    sid = f"tenant-site/{tenant}/{host}"
    svc = need(steps.call("get_service", {"id": sid}), f"get_service {sid}").get("service") or {}
    spec = svc.get("spec") or {}
    if spec.get("edge") != edge or spec.get("prefix") != str(prefix):
        raise AgentFailed(f"{sid} is not as committed: {svc}")
    return out
