"""Task classes and active validation on a brownfield with every generated class (the default).

The richer substrate adds invariants that depend on a tenant site through other classes: a
shared service's reach from the site (admitted by the tenant's set), a tenant policy's route
of the site's prefix, an external router's route of an announced site prefix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ani.intents.inventory import network_configs
from ani.intents.services import Touched, get_service_class
from ani.intents.services.tenant_site import TenantSiteRemove, site_hosts
from ani.observer.checks import ReachCheck, RouteCheck
from ani.scenario.generate import generate_scenario
from ani.scenario.tasks import get_task_class

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "scenarios" / "default.yaml"


@pytest.fixture(scope="module")
def scenarios():
    return {seed: generate_scenario(DEFAULT, seed=seed) for seed in (3, 7)}


def test_a_missing_set_element_supersedes_the_sites_reaches_to_shared_services(scenarios):
    seen = 0
    for s in scenarios.values():
        hosts = {x.host for _t, x in s.sites}
        for seed in range(1, 13):
            v = get_task_class("troubleshoot").variant(s, seed)
            if v.params["fault"] != "firewall-set-missing":
                continue
            site = v.params["site"]
            shared = [c for c in s.invariants if isinstance(c, ReachCheck) and c.expect and c.src == site
                      and c.dst_node not in hosts]
            seen += len(shared)
            assert {c.name for c in shared} <= set(v.superseded), (seed, site)
            # and they are graded: a hidden test after the fix
            assert {c.name for c in shared} <= {c.name for c in v.hidden_tests}
            # the site's reaches to its own tenant's sites still hold (not superseded)
            own = [c for c in s.invariants if isinstance(c, ReachCheck) and c.expect and c.src == site
                   and c.dst_node in hosts]
            assert not {c.name for c in own} & set(v.superseded)
    assert seen, "no firewall-set-missing variant with a shared-service reach drawn"


@pytest.mark.parametrize("cls", ["tenant-policy", "ebgp-peering", "shared-service"])
def test_active_validation_leaves_out_what_only_a_removed_site_had(scenarios, cls):
    checked = 0
    for s in scenarios.values():
        configs = network_configs(s)
        svc = get_service_class(cls)
        every = svc.invariants(configs, s.topology)
        for site in site_hosts(configs, s.topology):
            needs = [c for c in every if (isinstance(c, RouteCheck) and c.expect and c.prefix.subnet_of(site.prefix))
                     or (isinstance(c, ReachCheck) and c.expect and (c.src == site.host or c.dst in site.prefix))]
            if not needs:
                continue
            checked += 1
            ch = TenantSiteRemove(tenant=site.tenant, site=site.site, edge=site.edge)
            kept = svc.touched_invariants(configs, s.topology, Touched(changes=(ch,)))
            assert not {c.name for c in needs} & {c.name for c in kept}, (cls, site.site)
            # every other invariant of the class is still re-checked
            assert {c.name for c in kept} == {c.name for c in every} - {c.name for c in needs}
            # without the removal, all of them are
            assert [c.name for c in svc.touched_invariants(configs, s.topology, Touched())] == [c.name for c in every]
    assert checked, f"no site with a {cls} invariant"
