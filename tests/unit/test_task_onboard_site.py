"""The onboard-site task class: deterministic variants, files, hidden tests, lab topology."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest
import yaml

from ani.errors import TaskError
from ani.observer import ReachCheck
from ani.scenario import get_task_class, load_scenario, parse_scenario
from ani.scenario.gen_brownfield import scenario as gen


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("scenarios/brownfield-small.yaml")


@pytest.fixture(scope="module")
def tc():
    return get_task_class("onboard-site")


def test_unknown_class_lists_known():
    with pytest.raises(TaskError, match=r"unknown task class 'nope'; known: onboard-site"):
        get_task_class("nope")


def test_deterministic_in_scenario_and_seed(scenario, tc):
    a, b = tc.variant(scenario, 3), tc.variant(load_scenario("scenarios/brownfield-small.yaml"), 3)
    assert a == b
    assert a.variant_id == "onboard-site-s3" and a.seed == 3


def test_variants_differ_and_cover_choices(scenario, tc):
    vs = [tc.variant(scenario, s) for s in range(40)]
    assert len({v.params["prefix"] for v in vs}) >= 30
    assert {v.params["tenant"] for v in vs} == {"blue", "red"}
    assert {v.params["edge"] for v in vs} == {"e1", "e2", "e3", "e4"}


def test_prefix_from_pool_and_free(scenario, tc):
    used = scenario.used_networks()
    for s in range(50):
        p = tc.variant(scenario, s).params
        net = IPv4Network(p["prefix"])
        assert net.subnet_of(IPv4Network("198.19.0.0/16")) and net.prefixlen == 24
        assert not any(net.overlaps(u) for u in used)
        assert p["gateway"] == str(net.network_address + 1)
        assert p["host_address"] == f"{net.network_address + 10}/24"


def test_pool_exhaustion_is_a_task_error(tc):
    d = gen()
    d["pools"]["sites"] = {"network": "198.19.0.0/24", "prefixlen": 24}
    d["topology"]["routers"]["e1"]["config"] += "interface to-x\n ip address 198.19.0.1/24\nexit\n"
    with pytest.raises(TaskError, match="no free /24"):
        tc.variant(parse_scenario(d), 0)


def test_request_is_identical_across_variants_and_mentions_the_file(scenario, tc):
    reqs = {tc.variant(scenario, s).request for s in range(10)}
    assert len(reqs) == 1
    (req,) = reqs
    assert "site.yaml" in req
    assert "198.19" not in req  # the concrete values are only in the file


def test_site_file(scenario, tc):
    v = tc.variant(scenario, 7)
    assert list(v.files) == ["site.yaml"]
    data = yaml.safe_load(v.files["site.yaml"])
    assert list(data) == ["tenant", "edge", "site", "prefix", "gateway"]
    assert data == {k: v.params[k] for k in data}
    assert data["site"] == "nsite"


def test_hidden_tests(scenario, tc):
    v = tc.variant(scenario, 1)
    tenant = v.params["tenant"]
    other = "red" if tenant == "blue" else "blue"
    pos = [c for c in v.hidden_tests if c.expect]
    neg = [c for c in v.hidden_tests if not c.expect]
    assert all(isinstance(c, ReachCheck) and c.src == "nsite" for c in v.hidden_tests)
    assert sorted(c.dst_node for c in pos) == [f"{tenant}{k}" for k in range(1, 5)]
    assert sorted(c.dst_node for c in neg) == [f"{other}{k}" for k in range(1, 5)]


def test_agent_view_has_no_hidden_tests(scenario, tc):
    v = tc.variant(scenario, 2)
    view = v.agent_view()
    assert view.model_dump().keys() == {"task_class", "variant_id", "request", "files"}
    assert view.files == v.files and view.request == v.request and view.variant_id == v.variant_id
    dumped = view.model_dump_json()
    for c in v.hidden_tests:
        assert c.name not in dumped and str(c.dst) not in dumped


def test_lab_topology_adds_the_site(scenario, tc):
    v = tc.variant(scenario, 5)
    topo = v.lab_topology(scenario)
    assert set(topo.nodes) == set(scenario.topology.nodes) | {"nsite"}
    assert str(topo.hosts["nsite"].gateway) == v.params["gateway"]
    peer = topo.peer_of("nsite", "eth0")
    assert peer.node == v.params["edge"] and peer.ifname == "to-nsite" and peer.address is None
    assert str(topo.peer_of(v.params["edge"], "to-nsite").address) == v.params["host_address"]
    assert "to-nsite" not in topo.routers[v.params["edge"]].config  # left for the agent
    assert "nsite" not in scenario.topology.nodes  # the scenario is not mutated


def test_a_partly_used_pool_yields_only_the_free_prefix(tc):
    # 198.19.0.0/22 holds four /24s; the brownfield already uses three of them on e1
    d = gen()
    d["pools"]["sites"] = {"network": "198.19.0.0/22", "prefixlen": 24}
    d["topology"]["routers"]["e1"]["config"] += (
        "interface to-x\n ip address 198.19.0.1/24\n ip address 198.19.1.1/24\n ip address 198.19.3.1/24\nexit\n"
    )
    scen = parse_scenario(d)
    assert {tc.variant(scen, s).params["prefix"] for s in range(20)} == {"198.19.2.0/24"}
