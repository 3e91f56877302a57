"""Task class ``decommission``: remove one tenant site and everything only it used, nothing else.

Drawn from the seed (any scenario with two tenants, one of them with at least two sites): a site
``S`` of tenant ``T`` whose edge carries other sites too, so the edge's prefix-list and
route-map and the tenant's nftables set are shared with sites that stay (any site of such a
tenant if no edge is shared). The file ``decommission.yaml``::

    tenant: blue
    site: blue3
    edge: e3

The lab is the scenario's (the host stays cabled). Superseded: the baseline invariants that need
``S`` in service. Hidden tests: ``S``'s host is unreachable from every other site of ``T``;
``S``'s prefix is in no router's table (``route`` with ``expect: false``, also on its own
edge: its gateway address goes too); every other site on ``S``'s edge still reaches the sites of
its tenant (the shared list), and the other sites of ``T`` are still isolated from the other
tenants' sites on that edge (the shared set).
"""

from __future__ import annotations

from typing import Any

from ani.errors import TaskError
from ani.observer.checks import Check
from ani.scenario.manifest import Scenario
from ani.scenario.tasks import situation as sit
from ani.scenario.tasks.base import Draw, TaskClass, parse_template, register


@register
class Decommission(TaskClass):
    """Remove one site and what only it used (module doc)."""

    name = "decommission"
    intent_file = "decommission.yaml"

    def parse_ticket(self, text: str) -> dict[str, Any]:
        """``decommission.yaml``'s mapping from a ticket (see :func:`parse_ticket`)."""
        got = parse_template(self.ticket_template, text, where="intents/decommission/ticket.txt")
        return {k: got[k] for k in self.definition["files"][self.intent_file]["fields"]}

    def reference_changes(self, req: dict[str, Any], configs: dict[str, Any]) -> list[dict[str, Any]]:
        """:func:`ani.scenario.tasks.reference.decommission`."""
        from ani.scenario.tasks import reference

        return reference.decommission(req, configs)

    def draw(self, scenario: Scenario, seed: int) -> Draw:
        where = self.where(scenario)
        self.need_tenants(scenario)
        many = [(t, s) for t, s in scenario.sites if len(scenario.tenants[t].sites) >= 2]
        if not many:
            raise TaskError(f"{where} has no tenant with at least two sites (one to remove, one to test it is gone from)")
        per_edge: dict[str, int] = {}
        for _t, s in scenario.sites:
            per_edge[s.edge] = per_edge.get(s.edge, 0) + 1
        shared = [(t, s) for t, s in many if per_edge[s.edge] >= 2]
        rng = self.rng(scenario, seed)
        tenant, site = rng.choice(shared or many)
        file = {"tenant": tenant, "site": site.host, "edge": site.edge}
        return self._situation(scenario, file)

    def _situation(self, scenario: Scenario, file: dict[str, Any]) -> Draw:
        tenant, site = sit.site_of(scenario, file["site"])
        addr = scenario.host_address(site.host)
        rest = [s for s in scenario.tenants[tenant].sites if s.host != site.host]
        hidden: list[Check] = [sit.reach(s.host, site.host, addr, False) for s in rest]
        hidden += sit.routes(scenario.topology.routers, site.prefix, False)
        neighbours = [(t, s) for t, s in scenario.sites if s.edge == site.edge and s.host != site.host]
        for t, n in neighbours:
            hidden += [
                sit.reach(n.host, o.host, scenario.host_address(o.host), True)
                for o in scenario.tenants[t].sites
                if o.host not in (n.host, site.host)
            ]
        for t, n in neighbours:
            if t != tenant:
                hidden += [sit.reach(s.host, n.host, scenario.host_address(n.host), False) for s in rest]
        superseded = sit.superseded_by(scenario, lambda c: sit.requires_site(c, site.host, site.prefix))
        params = {**file, "prefix": str(site.prefix), "gateway": str(site.gateway), "host_address": str(addr)}
        return Draw(file=file, params=params, hidden_tests=sit.dedupe(hidden), superseded=superseded)


def parse_ticket(text: str) -> dict[str, Any]:
    """``decommission.yaml``'s mapping (``{tenant, site, edge}``, strings) from a decommission
    ticket. Raises TaskError."""
    return Decommission().parse_ticket(text)
