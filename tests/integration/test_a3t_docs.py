"""docs/intents.md's A3-T worked example runs as written on a real lab (so the page cannot rot)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_a3t_docs_example_runs(make_lab, run_doc_example):
    del make_lab  # only for its capability check (skips on hosts without a lab)
    out = run_doc_example("intents.md", "a3t", timeout=300).splitlines()
    assert out == [
        "['tenant-site', 'tenant-firewall', 'static-route', 'floating-address', 'bgp-peering', "
        "'prefix-list-entry', 'route-map-entry', 'tenant-policy', 'shared-service', 'ebgp-peering']",
        "8 tenant-site/blue/blue2 198.18.12.0/24",
        "['e1', 'e2', 'e3', 'e4'] {'changes.0.prefix': '198.19.0.0/24', 'changes.0.gateway': '198.19.0.1', "
        "'changes.0.seq/e1/PL-TENANTS': 30}",
        "['+ ip address 198.19.195.1/24', '+ip prefix-list PL-TENANTS seq 30 permit 198.19.195.0/24', "
        "'+    elements = { 198.18.11.0/24, 198.18.12.0/24, 198.18.13.0/24, 198.18.14.0/24, 198.19.195.0/24 }']",
        "91 reach nsite -> blue1 (198.18.11.10) | reach e2 -> e1 (198.19.195.1)",
        "True True None 91 ['tenant-site/blue/nsite']",
        "['lock', 'edit', 'validate', 'commit', 'confirm', 'unlock']",
        "bgp",
        "False invalid_intent changes.0.route_map_in True",
        "rolled_back active-validation True ['reach red1 -> red2 (198.18.22.10)']",
        "False",
        "True False",
        "resource_exhausted seq/e1/PL-TENANTS",
    ]
