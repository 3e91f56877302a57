"""ani.sot.services: service files of the A4 source of truth, on a real git repository built
from the shipped brownfield's configs."""

from __future__ import annotations

import json
from ipaddress import IPv4Network
from pathlib import Path

import pytest

from ani.intents import network_configs
from ani.scenario.manifest import load_scenario
from ani.sot.drift import drift
from ani.sot.errors import DocError
from ani.sot.repo import SotRepo
from ani.sot.services import (
    ServiceFileError,
    check_services,
    compile_repo,
    desired_with_services,
    device_configs,
    parse_service,
    service_files,
)

ROOT = Path(__file__).parent.parent.parent
SITE = {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "nsite", "edge": "e2",
        "prefix": "198.19.7.0/24", "gateway": "198.19.7.1"}
BAD_PEER = {"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9",
            "remote_as": 65001, "route_map_in": "RM-UNDEF"}


@pytest.fixture(scope="module")
def configs():
    return network_configs(load_scenario(ROOT / "scenarios" / "brownfield-small.yaml"))


@pytest.fixture
def repo(tmp_path, configs):
    r = SotRepo.init(tmp_path / "sot", configs, skeleton=ROOT / "sot")
    yield r
    r.close()


def add_file(repo: SotRepo, name: str, change: dict) -> None:
    ops = [{"op": "add", "path": f"/{k}", "value": v} for k, v in change.items()]
    repo.patch(f"services/{name}.json", ops, repo.head())


def changed(desired, configs) -> dict[str, list[str]]:
    return {r: [i.pointer for i in drift(desired[r], configs[r])] for r in sorted(configs) if drift(desired[r], configs[r])}


def test_no_services_desired_is_the_devices(repo, configs):
    desired = desired_with_services(repo)
    assert sorted(desired) == sorted(configs)
    assert changed(desired, configs) == {}
    assert service_files(repo) == [] and check_services(repo) == []


def test_site_service_compiles_on_top_of_the_devices(repo, configs):
    add_file(repo, "tenant-site-blue-nsite", SITE)
    assert check_services(repo) == []
    # the working tree has it, HEAD not yet
    assert changed(desired_with_services(repo), configs) == {}
    assert changed(desired_with_services(repo, None), configs) != {}
    rev = repo.commit("services: onboard blue/nsite")
    desired = desired_with_services(repo)
    assert changed(desired, configs) == {
        "e1": ["/firewall/sets/tenant_blue/elements"],
        "e2": ["/firewall/sets/tenant_blue/elements", "/interfaces/to-nsite", "/prefix_lists/PL-TENANTS/entries/30"],
        "e3": ["/firewall/sets/tenant_blue/elements"],
        "e4": ["/firewall/sets/tenant_blue/elements"],
    }
    e2 = desired["e2"]
    assert [str(a) for a in e2.interfaces["to-nsite"].addresses] == ["198.19.7.1/24"]
    assert IPv4Network("198.19.7.0/24") in e2.firewall.sets["tenant_blue"].elements
    # the device files themselves are untouched: the service lives in its own file
    assert device_configs(repo) == {r: repo.desired(r) for r in configs}
    assert changed(device_configs(repo), configs) == {}
    # an earlier revision has no service
    assert changed(desired_with_services(repo, repo.log(2)[1]["revision"]), configs) == {}
    # which file made which service
    c = compile_repo(repo)
    assert c.files == ["services/tenant-site-blue-nsite.json"]
    assert c.file_of("tenant-site/blue/nsite") == "services/tenant-site-blue-nsite.json"
    assert c.file_of("tenant-site/blue/blue2") is None
    assert rev == repo.head()


def test_declarative_delete_and_revert(repo, configs):
    add_file(repo, "tenant-site-blue-nsite", SITE)
    rev = repo.commit("add")
    assert changed(desired_with_services(repo), configs) != {}
    repo.revert(rev)
    assert changed(desired_with_services(repo), configs) == {}
    assert service_files(repo) == []
    # again, and this time the file is deleted in the working tree and committed
    add_file(repo, "tenant-site-blue-nsite", SITE)
    repo.commit("add again")
    (repo.path / "services" / "tenant-site-blue-nsite.json").unlink()
    repo.commit("delete")
    assert changed(desired_with_services(repo), configs) == {}


def test_files_compile_in_sorted_path_order(repo, configs):
    # b.json's peering uses the route-map a.json adds: fine in path order ...
    rm = {"type": "route-map-entry", "action": "add", "routers": ["e1"], "name": "RM-PEER-IN", "seq": 10,
          "set_local_preference": 200}
    peer = {"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9",
            "remote_as": 65001, "route_map_in": "RM-PEER-IN"}
    add_file(repo, "a-route-map", rm)
    add_file(repo, "b-peer", peer)
    assert check_services(repo) == []
    repo.commit("peer with its route-map")
    desired = desired_with_services(repo)
    assert desired["e1"].bgp.ipv4_unicast.peers["192.0.2.9"].route_map_in == "RM-PEER-IN"
    assert [e.set_local_preference for e in desired["e1"].route_maps["RM-PEER-IN"].entries] == [200]
    # ... the other way round the peering comes first and its route-map does not exist yet
    (repo.path / "services" / "b-peer.json").rename(repo.path / "services" / "0-peer.json")
    [err] = check_services(repo)
    assert (err.file, err.field, err.intent_code) == ("services/0-peer.json", "route_map_in", "unknown-reference")
    assert "RM-PEER-IN" in err.message


def test_invalid_service_names_file_and_field(repo):
    add_file(repo, "peer", BAD_PEER)
    [err] = check_services(repo)
    assert isinstance(err, ServiceFileError) and isinstance(err, DocError)
    assert err.to_dict() == {"code": "unknown-reference", "path": "services/peer.json:route_map_in",
                             "file": "services/peer.json", "field": "route_map_in",
                             "message": "e1: unknown route-map 'RM-UNDEF'; known: RM-TENANTS-OUT"}
    assert str(err).startswith("services/peer.json: route_map_in: unknown-reference:")
    assert "RM-UNDEF" in str(err)


@pytest.mark.parametrize(
    ("doc", "field", "code", "needle"),
    [
        ([SITE], "", "schema", "one change object"),
        ({**SITE, "colour": "red"}, "colour", "schema", "Extra inputs"),
        ({**SITE, "prefix": "198.19.7.0/33"}, "prefix", "schema", ""),
        ({**SITE, "action": "remove"}, "action", "schema", "delete its file"),
        ({"type": "tenant-site", "action": "fly"}, "", "schema", "unknown change"),
        ({"type": "static-route", "action": "remove", "router": "e1", "prefix": "192.0.2.0/24",
          "next_hop": "Null0"}, "action", "schema", "'add'"),
    ],
)
def test_schema_errors(doc, field, code, needle):
    with pytest.raises(ServiceFileError) as ei:
        parse_service(doc, "services/x.json")
    e = ei.value
    assert (e.file, e.field, e.intent_code) == ("services/x.json", field, code), str(e)
    assert needle in e.message


def test_conflicts_between_files_and_with_the_brownfield(repo):
    add_file(repo, "s1", SITE)
    add_file(repo, "s2", {**SITE, "site": "other", "gateway": "198.19.7.2"})
    [err] = check_services(repo)
    assert (err.file, err.field, err.intent_code) == ("services/s2.json", "prefix", "prefix-overlap")
    assert "tenant-site/blue/nsite" in err.message
    (repo.path / "services" / "s2.json").unlink()
    # a service that exists in the brownfield already
    add_file(repo, "s3", {"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "blue2",
                          "edge": "e2", "prefix": "198.19.9.0/24"})
    [err] = check_services(repo)
    assert (err.file, err.intent_code) == ("services/s3.json", "service-exists")


def test_not_json_and_yang_errors_name_the_file(repo):
    (repo.path / "services" / "broken.json").write_text("{not json")
    [err] = check_services(repo)
    assert err.file == "services/broken.json" and err.intent_code == "schema"
    (repo.path / "services" / "broken.json").unlink()
    # a YANG must-violation: a discard and a forwarding next hop for one prefix
    add_file(repo, "a-null", {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24",
                              "next_hop": "Null0"})
    add_file(repo, "b-hop", {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24",
                             "next_hop": "198.51.100.1"})
    errors = check_services(repo)
    assert [(e.file, e.intent_code) for e in errors] == [("services/b-hop.json", "yang")], errors
    assert "e1" in errors[0].message


def test_pins_name_the_allocated_values(repo, configs):
    from ani.intents import Pools

    site = {k: v for k, v in SITE.items() if k not in ("prefix", "gateway")}
    add_file(repo, "site", site)
    with pytest.raises(ServiceFileError) as ei:  # no site network: nothing to allocate from
        compile_repo(repo, None)
    assert (ei.value.field, ei.value.intent_code) == ("prefix", "invalid")
    assert "no site pool" in str(ei.value) and "site_network" in str(ei.value)
    c = compile_repo(repo, None, pools=lambda cfgs: Pools.from_configs(cfgs, site_network=IPv4Network("198.19.0.0/16")))
    assert c.pins == {"services/site.json": {"prefix": "198.19.0.0/24", "gateway": "198.19.0.1"}}
    # a file holding its values has nothing to pin
    (repo.path / "services" / "site.json").write_text(json.dumps(SITE))
    assert compile_repo(repo, None).pins == {}
