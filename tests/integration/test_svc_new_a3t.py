"""The new service classes through A3-T on real FRR: a typed change of each class is planned,
applied in a transaction whose active validation runs the class's own invariants, read back as
a service, refused when it collides with another tenant's shared state, and removed again."""

from __future__ import annotations

import pytest

from ani.errors import ErrorCode

pytestmark = pytest.mark.integration

LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = "scenarios/brownfield-small.yaml", "a3tn", True

POLICY = {"type": "tenant-policy", "action": "apply", "tenant": "blue", "seq": 10, "local_pref": 250,
          "community": "64500:111"}
CLASH = {"type": "tenant-policy", "action": "apply", "tenant": "red", "seq": 10, "community": "64500:112"}


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture
def adapter(lab, open_adapter):
    from ani.adapters.a3t import A3TAdapter

    return open_adapter(A3TAdapter(lab, options={"check_bound_s": 20}))


def test_tenant_policy_through_a3t(lab, adapter):
    planned = adapter.call("plan", {"changes": [POLICY]})
    assert planned.ok, planned.text
    assert planned.data["routers"] == ["e1", "e2", "e3", "e4"]
    assert "route e2 198.18.11.0/24 local-pref 250 community 64500:111" in planned.data["checks"]
    applied = adapter.call("apply", {"changes": [POLICY]})
    assert applied.ok, applied.text
    best = lab.vtysh_json("e2", "show bgp ipv4 unicast 198.18.11.0/24")["paths"]
    assert {(p["locPrf"], p["community"]["string"]) for p in best} == {(250, "64500:111")}
    svc = adapter.call("get_service", {"id": "tenant-policy/blue/10"})
    assert svc.ok and svc.data["service"]["spec"]["local_pref"] == 250, svc.text

    refused = adapter.call("apply", {"changes": [CLASH]})
    assert not refused.ok and "seq-conflict" in refused.text and "changes.0.seq" in refused.text

    gone = adapter.call("apply", {"changes": [{"type": "tenant-policy", "action": "remove", "tenant": "blue", "seq": 10}]})
    assert gone.ok, gone.text
    assert "RM-POLICY-OUT" not in lab.running_config("e1")
    assert adapter.call("get_service", {"id": "tenant-policy/blue/10"}).error.code == ErrorCode.NOT_FOUND
