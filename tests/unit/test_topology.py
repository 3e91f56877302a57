"""The topology model: valid files load, and every error names the bad field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ani.errors import TopologyError
from ani.lab.topology import load_topology, parse_topology

TRI = Path(__file__).parent.parent / "data" / "tri-ospf-ibgp.yaml"


def base() -> dict:
    return {
        "name": "t",
        "routers": {"r1": {"daemons": ["bgpd"]}, "r2": {}},
        "hosts": {"h1": {"gateway": "198.18.1.1"}},
        "links": [
            {"a": {"node": "r1", "ifname": "eth-r2"}, "b": {"node": "r2", "ifname": "eth-r1"}},
            {"a": {"node": "r1", "ifname": "eth-h1"}, "b": {"node": "h1", "ifname": "eth0", "address": "198.18.1.10/24"}},
        ],
    }


def test_valid_topology_and_queries():
    t = parse_topology(base())
    assert t.nodes == ["r1", "r2", "h1"]
    assert t.routers["r1"].daemons == ["zebra", "staticd", "bgpd"]
    assert t.routers["r2"].daemons == ["zebra", "staticd"]
    assert t.is_router("r2") and not t.is_router("h1")
    peer = t.peer_of("r1", "eth-h1")
    assert peer is not None and (peer.node, peer.ifname, str(peer.address)) == ("h1", "eth0", "198.18.1.10/24")
    assert t.peer_of("r1", "nope") is None
    assert [(a.ifname, b.node) for a, b in t.links_of("r1")] == [("eth-r2", "r2"), ("eth-h1", "h1")]
    assert t.convergence.timeout_s == 30.0


def test_the_test_topology_file_loads():
    t = load_topology(TRI)
    assert t.name == "tri-ospf-ibgp"
    assert set(t.routers) == {"r1", "r2", "r3"} and set(t.hosts) == {"h1", "h2"}
    assert all("hostname " + r in spec.config for r, spec in t.routers.items())


def test_unknown_node_in_link_is_named():
    d = base()
    d["links"][0]["b"]["node"] = "r9"
    with pytest.raises(TopologyError, match=r"links\.0\.b\.node: unknown node 'r9' \(known: h1, r1, r2\)"):
        parse_topology(d)


def test_host_endpoint_without_address_is_named():
    d = base()
    del d["links"][1]["b"]["address"]
    with pytest.raises(TopologyError, match=r"links\.1\.b\.address: host endpoint h1:eth0 needs an address"):
        parse_topology(d)


def test_duplicate_ifname_is_named():
    d = base()
    d["links"][1]["a"]["ifname"] = "eth-r2"
    with pytest.raises(TopologyError, match=r"links\.1\.a\.ifname: r1:eth-r2 already used by links\.0\.a"):
        parse_topology(d)


@pytest.mark.parametrize("name", ["R1", "1r", "r_1", "averyverylongname"])
def test_bad_node_name_is_named(name):
    d = base()
    d["routers"][name] = {}
    with pytest.raises(TopologyError, match=f"node name '{name}' must match"):
        parse_topology(d)


def test_bad_ifname_is_named():
    d = base()
    d["links"][0]["a"]["ifname"] = "x" * 16
    with pytest.raises(TopologyError, match=r"links\.0\.a\.ifname: .*interface name"):
        parse_topology(d)


def test_unknown_daemon_and_unknown_key_are_named():
    d = base()
    d["routers"]["r1"]["daemons"] = ["bgpd", "nosuchd"]
    with pytest.raises(TopologyError, match=r"routers\.r1\.daemons\.1"):
        parse_topology(d)
    d = base()
    d["routers"]["r1"]["confg"] = "typo"
    with pytest.raises(TopologyError, match=r"routers\.r1\.confg"):
        parse_topology(d)


def test_bad_address_and_gateway_are_named():
    d = base()
    d["links"][1]["b"]["address"] = "198.18.1.300/24"
    with pytest.raises(TopologyError, match=r"links\.1\.b\.address"):
        parse_topology(d)
    d = base()
    d["hosts"]["h1"]["gateway"] = "not-an-ip"
    with pytest.raises(TopologyError, match=r"hosts\.h1\.gateway"):
        parse_topology(d)


def test_link_to_itself_and_router_host_clash():
    d = base()
    d["links"][0]["b"] = {"node": "r1", "ifname": "eth-x"}
    with pytest.raises(TopologyError, match=r"links\.0: both ends on node 'r1'"):
        parse_topology(d)
    d = base()
    d["hosts"]["r2"] = {}
    with pytest.raises(TopologyError, match=r"both as router and host: \['r2'\]"):
        parse_topology(d)


def test_malformed_yaml_names_the_file(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("routers:\n  r1: {daemons: [bgpd\n")
    with pytest.raises(TopologyError, match=r"broken\.yaml: not valid YAML"):
        load_topology(p)
    p.write_text("- just\n- a list\n")
    with pytest.raises(TopologyError, match=r"broken\.yaml: a topology must be a mapping, got list"):
        load_topology(p)
    with pytest.raises(TopologyError, match="cannot read"):
        load_topology(tmp_path / "absent.yaml")


def test_scenario_file_topology_section(tmp_path):
    p = tmp_path / "scen.yaml"
    p.write_text(yaml.safe_dump({"name": "scen", "tenants": {}, "topology": base()}))
    assert load_topology(p).nodes == ["r1", "r2", "h1"]
    d = base()
    d["links"][0]["a"]["node"] = "zz"
    p.write_text(yaml.safe_dump({"name": "scen", "tenants": {}, "topology": d}))
    with pytest.raises(TopologyError, match=r"scen\.yaml: invalid scenario: topology\.links\.0\.a\.node"):
        load_topology(p)


def test_merged_adds_nodes_and_refuses_clashes():
    t = parse_topology(base())
    extra = {
        "routers": {"r9": {"daemons": ["ospfd"]}},
        "hosts": {"h9": {"gateway": "198.18.9.1"}, "h8": {"gateway": "198.18.8.1"}},
        "links": [
            {"a": {"node": "r9", "ifname": "eth-h9"}, "b": {"node": "h9", "ifname": "eth0", "address": "198.18.9.10/24"}},
            # a new host attached to a router that was already there
            {"a": {"node": "r1", "ifname": "eth-h8"}, "b": {"node": "h8", "ifname": "eth0", "address": "198.18.8.10/24"}},
        ],
    }
    m = t.merged(extra)
    assert m.nodes == ["r1", "r2", "r9", "h1", "h9", "h8"]
    assert m.routers["r9"].daemons == ["zebra", "staticd", "ospfd"]
    assert m.peer_of("h9", "eth0").node == "r9" and m.peer_of("r1", "eth-h8").node == "h8"
    with pytest.raises(TopologyError, match=r"node names already used: \['h1', 'r1', 'r2'\]"):
        t.merged(t.model_dump(mode="json"))
    with pytest.raises(TopologyError, match=r"links\.\d+\.a\.node: unknown node 'r7'"):
        t.merged({"hosts": {"h7": {}}, "links": [{"a": {"node": "r7", "ifname": "x"}, "b": {"node": "h7", "ifname": "eth0", "address": "198.18.7.10/24"}}]})


def test_topology_round_trips_through_json():
    t = load_topology(TRI)
    assert parse_topology(t.model_dump(mode="json")) == t
