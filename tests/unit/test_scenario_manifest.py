"""Scenario validation (errors name the field), hash, loading by name."""

from __future__ import annotations

import copy

import pytest
import yaml

from ani.errors import TopologyError
from ani.scenario import load_scenario, parse_scenario
from ani.scenario.gen_brownfield import scenario as gen


def _data():
    return copy.deepcopy(gen())


def test_loads_by_shipped_name():
    assert load_scenario("scenarios/brownfield-small.yaml").name == "brownfield-small"


def test_missing_file():
    with pytest.raises(TopologyError, match="no such scenario file"):
        load_scenario("scenarios/nope.yaml")


def test_unknown_edge_names_field():
    d = _data()
    d["tenants"]["blue"]["sites"][2]["edge"] = "e9"
    with pytest.raises(TopologyError, match=r"tenants\.blue\.sites\.2\.edge: unknown router 'e9'"):
        parse_scenario(d)


def test_unknown_host_names_field():
    d = _data()
    d["tenants"]["red"]["sites"][0]["host"] = "green1"
    with pytest.raises(TopologyError, match=r"tenants\.red\.sites\.0\.host: unknown host 'green1'"):
        parse_scenario(d)


def test_host_address_outside_prefix():
    d = _data()
    d["tenants"]["blue"]["sites"][0]["prefix"] = "198.18.99.0/24"
    with pytest.raises(TopologyError, match=r"tenants\.blue\.sites\.0\.prefix: host address 198\.18\.11\.10/24"):
        parse_scenario(d)


def test_gateway_mismatch_with_host():
    d = _data()
    d["tenants"]["blue"]["sites"][1]["gateway"] = "198.18.12.254"
    with pytest.raises(TopologyError, match=r"tenants\.blue\.sites\.1\.gateway: host blue2 routes via 198\.18\.12\.1"):
        parse_scenario(d)


def test_pool_overlapping_a_site():
    d = _data()
    d["pools"]["sites"]["network"] = "198.18.0.0/16"
    with pytest.raises(TopologyError, match=r"pools\.sites\.network: 198\.18\.0\.0/16 overlaps"):
        parse_scenario(d)


def test_bad_tenant_name_and_unknown_key():
    d = _data()
    d["tenants"]["Blue-X"] = d["tenants"].pop("blue")
    with pytest.raises(TopologyError, match=r"tenants\.Blue-X: tenant name must match"):
        parse_scenario(d)
    d = _data()
    d["colour"] = 1
    with pytest.raises(TopologyError, match=r"colour: Extra inputs are not permitted"):
        parse_scenario(d)


def test_topology_error_is_prefixed_with_topology():
    d = _data()
    d["topology"]["links"][3]["b"]["node"] = "e9"
    with pytest.raises(TopologyError, match=r"topology\.links\.3\.b\.node: unknown node 'e9'"):
        parse_scenario(d)


def test_hash_is_stable_and_content_sensitive(tmp_path):
    a = parse_scenario(_data())
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump(_data()))
    assert load_scenario(p).hash == a.hash
    assert len(a.hash) == 64
    d = _data()
    d["topology"]["routers"]["e1"]["config"] = d["topology"]["routers"]["e1"]["config"].replace("seq 20", "seq 25")
    assert parse_scenario(d).hash != a.hash
