"""Task class ``onboard-site``: attach a new site ``nsite`` of an existing tenant to an edge router.

A variant picks (from ``seed``) a tenant, an edge carrying sites, and a free ``/24`` of the
scenario's ``sites`` pool that overlaps nothing in the scenario; the gateway is ``.1``, the
host ``.10``. The lab is the scenario plus the host ``nsite`` cabled to ``<edge>:to-nsite``
(unconfigured). Hidden tests: ``nsite`` reaches every site of its tenant and no other site.

Intent form: ``site.yaml`` (``tenant, edge, site, prefix, gateway``); ticket form:
``intents/onboard-site/ticket.txt``; :func:`parse_ticket` gives ``site.yaml``'s mapping back.
"""

from __future__ import annotations

from ipaddress import IPv4Interface, IPv4Network
from typing import Any

from ani.errors import TaskError
from ani.lab.topology import Endpoint, HostSpec, LinkSpec
from ani.observer.checks import Check, ReachCheck
from ani.scenario.manifest import Scenario
from ani.scenario.tasks.base import Draw, TaskClass, parse_template, register

SITE_NAME = "nsite"
SITE_IFNAME = "eth0"
HOST_OFFSET = 10  # the site's host is .10 of its prefix


@register
class OnboardSite(TaskClass):
    """Attach a new site ``nsite`` of an existing tenant to an edge router (module doc)."""

    name = "onboard-site"
    intent_file = "site.yaml"

    def render_intent(self, data: dict[str, Any]) -> str:
        return self.render_file(self.intent_file, data)

    def parse_ticket(self, text: str) -> dict[str, Any]:
        """``site.yaml``'s mapping from a ticket (see :func:`parse_ticket`)."""
        got = parse_template(self.ticket_template, text, where="intents/onboard-site/ticket.txt")
        return {k: got[k] for k in self.definition["files"][self.intent_file]["fields"]}

    def reference_changes(self, req: dict[str, Any], configs: dict[str, Any]) -> list[dict[str, Any]]:
        """:func:`ani.scenario.tasks.reference.onboard_site`."""
        from ani.scenario.tasks import reference

        return reference.onboard_site(req, configs)

    def draw(self, scenario: Scenario, seed: int) -> Draw:
        pool = scenario.pools.get("sites")
        if pool is None:
            raise TaskError(f"{self.name}: scenario {scenario.name!r} has no 'sites' pool")
        if len(scenario.tenants) < 2:
            raise TaskError(f"{self.name}: scenario {scenario.name!r} needs at least two tenants")
        if SITE_NAME in scenario.topology.nodes:
            raise TaskError(f"{self.name}: scenario already has a node named {SITE_NAME!r}")
        rng = self.rng(scenario, seed)
        tenant = rng.choice(sorted(scenario.tenants))
        edge = rng.choice(scenario.edges)
        used = [u for u in scenario.used_networks() if u.overlaps(pool.network)]
        free = [n for n in pool.network.subnets(new_prefix=pool.prefixlen) if not any(n.overlaps(u) for u in used)]
        if not free:
            raise TaskError(f"{self.name}: pool {pool.network} has no free /{pool.prefixlen}")
        prefix: IPv4Network = rng.choice(free)
        gateway = prefix.network_address + 1
        host_addr = IPv4Interface(f"{prefix.network_address + HOST_OFFSET}/{prefix.prefixlen}")
        params = {
            "tenant": tenant,
            "edge": edge,
            "site": SITE_NAME,
            "prefix": str(prefix),
            "gateway": str(gateway),
            "host_address": str(host_addr),
            "edge_ifname": f"to-{SITE_NAME}",
        }
        hidden: list[Check] = []
        for t, site in scenario.sites:
            same = t == tenant
            hidden.append(
                ReachCheck(
                    src=SITE_NAME,
                    dst=scenario.host_address(site.host),
                    dst_node=site.host,
                    expect=same,
                    service="task",
                )
            )
        extra = {
            "hosts": {SITE_NAME: HostSpec(gateway=gateway).model_dump(mode="json")},
            "links": [
                LinkSpec(
                    a=Endpoint(node=edge, ifname=params["edge_ifname"]),
                    b=Endpoint(node=SITE_NAME, ifname=SITE_IFNAME, address=host_addr),
                ).model_dump(mode="json")
            ],
        }
        file = {k: params[k] for k in self.definition["files"][self.intent_file]["fields"]}
        return Draw(file=file, params=params, hidden_tests=hidden, extra_topology=extra)


def parse_ticket(text: str) -> dict[str, Any]:
    """``site.yaml``'s mapping (``{tenant, edge, site, prefix, gateway}``, strings, as
    ``yaml.safe_load`` reads the file) from an onboard-site ticket. Raises TaskError."""
    return OnboardSite().parse_ticket(text)
