"""A3TAdapter without a lab: options, tool list, the read-only tools and plan's refusals on the
brownfield's configs (a stand-in lab that records every use; plan must use none)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ani.adapters.a3t import A3TAdapter
from ani.errors import ConfigError, ErrorCode
from ani.intents import network_configs
from ani.scenario.manifest import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = load_scenario(ROOT / "scenarios" / "brownfield-small.yaml")
CONFIGS = network_configs(SCENARIO)


class StandIn:
    """A lab with a topology only: any other use is recorded (and fails)."""

    def __init__(self) -> None:
        self.topology = SCENARIO.topology
        self.used: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.used.append(name)
        raise AssertionError(f"the lab was used: {name}")


class Offline(A3TAdapter):
    def _service_configs(self) -> dict[str, Any]:
        return {r: c.model_copy(deep=True) for r, c in CONFIGS.items()}


def make(**options: Any) -> Offline:
    return Offline(StandIn(), options=options)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"confirm_timout_s": 60}, ["unknown", "confirm_timout_s"]),
        ({"confirm_timeout_s": "60"}, ["confirm_timeout_s", "valid integer"]),
        ({"confirm_timeout_s": 0}, ["confirm_timeout_s", "greater than or equal to 1"]),
        ({"seq_limit": 2.5}, ["seq_limit"]),
        ({"seq_limit": True}, ["seq_limit"]),
        ({"site_network": "10.0.0.0/33"}, ["site_network"]),
        ({"site_network": 5}, ["site_network"]),
        ({"site_prefixlen": 40}, ["site_prefixlen"]),
        ({"site_network": "198.19.0.0/16", "site_prefixlen": 12}, ["site_prefixlen", "shorter"]),
        ({"check_bound_s": -1}, ["check_bound_s"]),
    ],
)
def test_bad_options_are_refused_at_construction(options, words):
    with pytest.raises(ConfigError) as exc:
        make(**options)
    assert all(w in str(exc.value) for w in words), str(exc.value)


def test_options_and_tools():
    a = make(site_network="198.19.0.0/16", seq_limit=100, check_bound_s=5, confirm_timeout_s=30)
    assert (str(a.site_network), a.seq_limit, a.check_bound_s, a.confirm_timeout_s) == ("198.19.0.0/16", 100, 5.0, 30)
    specs = {t.name: t for t in a.tools()}
    assert set(specs) == {"get_topology", "list_service_types", "get_service_schema", "list_services",
                          "get_service", "plan", "apply", "get_state"}
    assert {n for n, t in specs.items() if t.read_only} == set(specs) - {"apply"}
    assert specs["apply"].destructive
    assert specs["get_state"].input_schema["properties"]["what"]["enum"] == [
        "interfaces", "routes", "bgp", "ospf", "firewall", "config"]


def test_read_only_catalogue_tools():
    a = make()
    types = a.call("list_service_types", {}).data["service_types"]
    assert [t["type"] for t in types][:2] == ["tenant-site", "tenant-firewall"] and len(types) == 10
    assert [t["type"] for t in types][-3:] == ["tenant-policy", "shared-service", "ebgp-peering"]
    assert types[0]["actions"] == ["onboard", "move", "remove"] and types[0]["id_format"] == "tenant-site/<tenant>/<site>"
    schema = a.call("get_service_schema", {"type": "bgp-peering"})
    assert schema.ok and "route_map_in" in schema.text and len(schema.data["schema"]["oneOf"]) == 2
    bad = a.call("get_service_schema", {"type": "vpn"})
    assert bad.error.code == ErrorCode.NOT_FOUND and "tenant-site" in bad.error.message
    sites = a.call("list_services", {"type": "tenant-site"}).data["services"]
    assert len(sites) == 8 and sites[0]["id"] == "tenant-site/blue/blue1"
    assert a.call("list_services", {"type": "nope"}).error.code == ErrorCode.NOT_FOUND
    one = a.call("get_service", {"id": "tenant-site/red/red3"})
    assert one.data["service"]["spec"]["edge"] == "e3" and one.data["service"]["spec"]["prefix"] == "198.18.23.0/24"
    missing = a.call("get_service", {"id": "tenant-site/red/red9"})
    assert missing.error.code == ErrorCode.NOT_FOUND and "red9" in missing.error.message


def test_plan_is_a_dry_run_with_diff_allocations_and_checks():
    a = make(site_network="198.19.0.0/16")
    change = {"type": "tenant-site", "action": "onboard", "tenant": "red", "site": "nsite", "edge": "e3"}
    res = a.call("plan", {"changes": [change]})
    assert res.ok, res.text
    assert res.data["routers"] == ["e1", "e2", "e3", "e4"]
    assert res.data["allocations"] == {"changes.0.prefix": "198.19.0.0/24", "changes.0.gateway": "198.19.0.1",
                                       "changes.0.seq/e3/PL-TENANTS": 30}
    assert "+ip prefix-list PL-TENANTS seq 30 permit 198.19.0.0/24" in res.data["diff"]["e3"]
    assert "reach red3 -> red4 (198.18.24.10)" in res.data["checks"]
    assert res.data["changes"][0]["prefix"] == "198.19.0.0/24"
    assert not res.changed and a.lab.used == []


def test_plan_refusals_are_structured():
    a = make()
    rm = a.call("plan", {"changes": [{"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9",
                                      "remote_as": 65001, "route_map_in": "RM-UNDEF"}]})
    assert rm.error.code == ErrorCode.INVALID_INTENT and "RM-UNDEF" in rm.error.message
    assert rm.data["errors"] == [{"code": "unknown-reference", "path": "changes.0.route_map_in",
                                  "message": "e1: unknown route-map 'RM-UNDEF'; known: RM-TENANTS-OUT"}]
    not_list = a.call("plan", {"changes": {"type": "static-route"}})
    assert not_list.error.code == ErrorCode.INVALID_ARGUMENTS and "changes" in not_list.error.message
    empty = a.call("plan", {"changes": []})
    assert empty.error.code == ErrorCode.INVALID_ARGUMENTS
    unknown = a.call("plan", {"changes": [{"type": "vpn", "action": "add"}]})
    assert unknown.error.code == ErrorCode.INVALID_INTENT and "vpn/add" in unknown.error.message
    assert unknown.data["errors"][0]["code"] == "schema"
    field = a.call("plan", {"changes": [{"type": "static-route", "action": "add", "router": "e1",
                                         "prefix": "192.0.2.0/24", "next_hop": "x", "colour": 1}]})
    assert field.error.code == ErrorCode.INVALID_INTENT and field.data["errors"][0]["path"] == "changes.0.colour"
    overlap = a.call("plan", {"changes": [{"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "x",
                                           "edge": "e2", "prefix": "198.18.11.0/25"}]})
    assert overlap.error.code == ErrorCode.INVALID_INTENT and "tenant-site/blue/blue1" in overlap.error.message
    assert a.lab.used == []


def test_seq_limit_exhausts_the_pool():
    a = make(seq_limit=20)  # e2's PL-TENANTS holds 10 and 20
    res = a.call("plan", {"changes": [{"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite",
                                       "edge": "e2", "prefix": "198.19.7.0/24"}]})
    assert res.error.code == ErrorCode.RESOURCE_EXHAUSTED
    assert "seq/e2/PL-TENANTS" in res.error.message and res.data["pool"] == "seq/e2/PL-TENANTS"
    assert res.data["size"] == 2
    ok = make(seq_limit=30).call("plan", {"changes": [{"type": "tenant-site", "action": "onboard", "tenant": "blue",
                                                       "site": "nsite", "edge": "e2", "prefix": "198.19.7.0/24"}]})
    assert ok.ok and ok.data["allocations"]["changes.0.seq/e2/PL-TENANTS"] == 30


def test_get_state_unknown_device_and_view():
    a = make()
    assert a.call("get_state", {"device": "e9", "what": "routes"}).error.code == ErrorCode.UNKNOWN_DEVICE
    assert a.call("get_state", {"device": "e1", "what": "mpls"}).error.code == ErrorCode.INVALID_ARGUMENTS
    assert a.lab.used == []


def test_unreadable_routers_are_device_unreachable():
    from ani.errors import LabError

    class Down(A3TAdapter):
        def _service_configs(self) -> dict[str, Any]:
            raise LabError("e3: show running-config failed (exit 1)")

    a = Down(StandIn())
    for tool, args in (("plan", {"changes": [{"type": "static-route", "action": "add", "router": "e1",
                                              "prefix": "192.0.2.0/24", "next_hop": "blackhole"}]}),
                       ("apply", {"changes": [{"type": "static-route", "action": "add", "router": "e1",
                                               "prefix": "192.0.2.0/24", "next_hop": "blackhole"}]}),
                       ("list_services", {}), ("get_service", {"id": "tenant-site/blue/blue1"})):
        res = a.call(tool, args)
        assert res.error.code == ErrorCode.DEVICE_UNREACHABLE and res.error.retriable, (tool, res.text)
        assert "e3" in res.error.message and not res.changed


def test_onboard_without_prefix_and_without_site_pool():
    change = {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2"}
    res = make().call("plan", {"changes": [change]})
    assert res.error.code == ErrorCode.INVALID_INTENT and "site_network" in res.error.message
    assert res.data["errors"][0]["path"] == "changes.0.prefix"
    small = make(site_network="198.19.0.0/23", site_prefixlen=24)
    two = [{**change, "site": f"n{i}"} for i in range(3)]
    res = small.call("plan", {"changes": two})  # two /24 blocks: the third onboard finds none
    assert res.error.code == ErrorCode.RESOURCE_EXHAUSTED and res.data["pool"] == "site-prefix/blue"
    assert res.data["errors"][0]["path"] == "changes.2.prefix" and res.data["size"] == 2


def test_unreadable_router_is_device_unreachable_not_an_exception():
    from ani.device.outcome import ApplyError

    class Down(Offline):
        def _service_configs(self) -> dict[str, Any]:
            raise ApplyError("e2: cannot read the running config (timed out): ", restored=True)

    a = Down(StandIn())
    change = {"type": "static-route", "action": "add", "router": "e1", "prefix": "203.0.113.0/24", "next_hop": "Null0"}
    for name, args in (("list_services", {}), ("get_service", {"id": "tenant-site/blue/blue1"}),
                       ("plan", {"changes": [change]}), ("apply", {"changes": [change]})):
        res = a.call(name, args)
        assert (res.ok, res.error.code, res.error.retriable) == (False, ErrorCode.DEVICE_UNREACHABLE, True), name
        assert "e2: cannot read the running config" in res.error.message
    assert a.lab.used == []
