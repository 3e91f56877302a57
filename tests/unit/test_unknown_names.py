"""Issue 14, case 1: every tool of every level answers an unknown or wrong-case name with an
error naming the known ones (and the likely one), and sends nothing.

Device names are checked on stand-in labs (a topology only: any other use of the lab fails the
test), over every tool of every adapter that takes ``device`` or ``devices``; objects (route-maps,
prefix-lists, neighbors, services, service types, source-of-truth files, intent references) on
the brownfield's configurations. The same checks on real routers: tests/integration/test_unknown_names_lab.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from ani.adapters.objects import known_objects, show_target, unmatched_keys
from ani.errors import ErrorCode
from ani.intents import network_configs
from ani.names import MAX_LISTED, hint, known_list, suggest, unknown
from ani.registry import create_adapter
from ani.scenario.manifest import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = load_scenario(ROOT / "scenarios" / "brownfield-small.yaml")
CONFIGS = network_configs(SCENARIO)
ROUTERS = list(SCENARIO.topology.routers)  # c1, c2, e1, e2, e3, e4
LEVELS = ("a0", "a1", "a2", "a3t", "a3r", "a4")


class StandIn:
    """A lab with a topology only: any other use is recorded and fails."""

    def __init__(self) -> None:
        self.topology = SCENARIO.topology
        self.used: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.used.append(name)
        raise AssertionError(f"the lab was used: {name}")


# -- the message ------------------------------------------------------------------------------


def test_wrong_case_is_refused_with_the_right_spelling():
    msg = unknown("device", "R1", ["c1", "e1", "r1", "r2"])
    assert msg == "unknown device 'R1'; did you mean 'r1'? (names are case-sensitive); known: c1, e1, r1, r2"


def test_a_close_name_is_suggested_and_a_far_one_is_not():
    assert suggest("RM-TENANT-OUT", ["PL-TENANTS", "RM-TENANTS-OUT"]) == "RM-TENANTS-OUT"
    assert suggest("zz", ["c1", "e1"]) is None
    assert suggest("e1", ["c1", "e1"]) is None  # known: nothing to suggest
    assert unknown("route-map", "RM-FOO", ["RM-BAR"], where="e1") == "e1: unknown route-map 'RM-FOO'; known: RM-BAR"


def test_long_lists_are_cut_and_say_where_to_list_them():
    names = [f"s{i:03d}" for i in range(MAX_LISTED + 7)]
    text = known_list(names, listed_by="list_services")
    assert text.endswith("... and 7 more (list_services lists them)") and f"s{MAX_LISTED - 1:03d}" in text
    assert f"s{MAX_LISTED:03d}" not in text
    assert known_list([]) == "none"
    assert hint("devices/E1.json", ["devices/e1.json"]) == (
        "; did you mean 'devices/e1.json'? (names are case-sensitive); known: devices/e1.json")


# -- devices: every tool of every level ---------------------------------------------------------

FILLERS = {"command": "show ip route", "commands": ["ip route 192.0.2.0/24 Null0"], "snapshot_id": "e1-s1",
           "config": '<frr xmlns="urn:ani:yang:ani-frr"/>', "what": "routes", "target": "candidate"}


def _device_calls() -> list[tuple[str, str, str]]:
    out = []
    for level in LEVELS:
        for spec in create_adapter(level, StandIn()).tools():
            props = spec.input_schema.get("properties", {})
            for arg in ("device", "devices"):
                if arg in props:
                    out.append((level, spec.name, arg))
    return out


DEVICE_CALLS = _device_calls()


def test_every_level_has_tools_naming_devices():
    assert {lvl for lvl, _t, _a in DEVICE_CALLS} == set(LEVELS)
    assert len(DEVICE_CALLS) >= 25  # get_topology at each level, A1's and A2's per-router tools, drift, get_state


def _args(level: str, tool: str, arg: str, name: str) -> dict[str, Any]:
    spec = next(s for s in create_adapter(level, StandIn()).tools() if s.name == tool)
    args: dict[str, Any] = {k: FILLERS[k] for k in spec.input_schema.get("required", []) if k in FILLERS}
    args[arg] = name if arg == "device" else ["e1", name]  # a list: the bad one after a good one
    return args


@pytest.mark.parametrize(("level", "tool", "arg"), DEVICE_CALLS, ids=[f"{a}-{b}-{c}" for a, b, c in DEVICE_CALLS])
@pytest.mark.parametrize(("name", "suggestion"), [("E1", "e1"), ("R1", None), ("e9", None)])
def test_an_unknown_or_wrong_case_device_is_refused_naming_the_routers(level, tool, arg, name, suggestion):
    lab = StandIn()
    adapter = create_adapter(level, lab)
    r = adapter.call(tool, _args(level, tool, arg, name))
    assert r.ok is False and r.error is not None and r.error.code is ErrorCode.UNKNOWN_DEVICE, r.text
    msg = r.error.message
    assert msg.startswith(f"unknown device {name!r}") and msg.endswith("known: " + ", ".join(ROUTERS)), msg
    assert r.data == {"device": name, "suggestion": suggestion, "known": ROUTERS}
    if suggestion:
        assert f"did you mean {suggestion!r}? (names are case-sensitive)" in msg
    else:
        assert "did you mean" not in msg
    assert lab.used == [] and r.changed is False  # nothing reached the lab


def test_a_host_is_named_as_a_host_not_a_router():
    topo_hosts = list(SCENARIO.topology.hosts)
    assert topo_hosts
    r = create_adapter("a1", StandIn()).call("get_running_config", {"device": topo_hosts[0]})
    assert r.error.code is ErrorCode.UNKNOWN_DEVICE
    assert r.error.message == f"{topo_hosts[0]!r} is a host, not a router; known routers: " + ", ".join(ROUTERS)


# -- objects -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("command", "target"), [
    ("show route-map RM-FOO", ("route-map", "RM-FOO")),
    ("show  route-map   RM-FOO json", ("route-map", "RM-FOO")),
    ("show route-map", None),
    ("show route-map json", None),
    ("show ip prefix-list PL-X", ("prefix-list", "PL-X")),
    ("show ip prefix-list detail PL-X", ("prefix-list", "PL-X")),
    ("show ip prefix-list summary", None),
    ("show bgp neighbors 192.0.2.1", ("BGP neighbor", "192.0.2.1")),
    ("show ip bgp neighbors 192.0.2.1 advertised-routes", ("BGP neighbor", "192.0.2.1")),
    ("show bgp ipv4 unicast neighbors 192.0.2.1", ("BGP neighbor", "192.0.2.1")),
    ("show bgp summary", None),
    ("show ip route", None),
])
def test_which_object_a_show_command_names(command, target):
    assert show_target(command) == target


def test_known_objects_of_a_router():
    e1 = CONFIGS["e1"]
    assert known_objects(e1, "route-map") == sorted(e1.route_maps) == ["RM-TENANTS-OUT"]
    assert known_objects(e1, "prefix-list") == ["PL-TENANTS"]
    assert known_objects(e1, "BGP neighbor") == sorted(e1.bgp.neighbors)
    with pytest.raises(ValueError, match="unknown object kind"):
        known_objects(e1, "vrf")


NS = "urn:ani:yang:ani-frr"
DATA = etree.fromstring(
    f'<data xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><frr xmlns="{NS}">'
    "<route-map><name>RM-A</name><entry><seq>10</seq></entry></route-map><route-map><name>RM-B</name></route-map>"
    "<bgp><neighbor><address>10.0.0.1</address></neighbor></bgp></frr></data>")


def _flt(inner: str) -> Any:
    return etree.fromstring(f'<filter xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" type="subtree">'
                            f'<frr xmlns="{NS}">{inner}</frr></filter>')


def test_a_filter_key_that_matches_nothing_names_the_keys_that_exist():
    got = unmatched_keys(_flt("<route-map><name>RM-a</name></route-map>"), DATA)
    assert [(u.list, u.key, u.value, u.known) for u in got] == [("route-map", "name", "RM-a", ["RM-A", "RM-B"])]
    deeper = unmatched_keys(_flt("<route-map><name>RM-A</name><entry><seq>20</seq></entry></route-map>"), DATA)
    assert [(u.list, u.value, u.known) for u in deeper] == [("entry", "20", ["10"])]
    empty_list = unmatched_keys(_flt("<prefix-list><name>PL-X</name></prefix-list>"), DATA)
    assert [(u.list, u.value, u.known) for u in empty_list] == [("prefix-list", "PL-X", [])]


def test_a_filter_that_selects_something_or_names_no_key_reports_nothing():
    assert unmatched_keys(_flt("<route-map><name>RM-B</name></route-map>"), DATA) == []
    assert unmatched_keys(_flt("<route-map/>"), DATA) == []
    assert unmatched_keys(_flt("<bgp><neighbor><address>10.0.0.1</address></neighbor></bgp>"), DATA) == []
    assert unmatched_keys(_flt("<route-map><name>X</name></route-map>"), None) == []


def offline_a3t() -> Any:
    """An A3-T adapter whose service tools read the brownfield's configs (no lab)."""
    from ani.adapters.a3t import A3TAdapter

    class Offline(A3TAdapter):
        def _service_configs(self) -> dict[str, Any]:
            return {r: c.model_copy(deep=True) for r, c in CONFIGS.items()}

    return Offline(StandIn())


def test_an_unknown_or_wrong_case_service_names_the_likely_one_and_the_known_ids():
    from ani.intents.inventory import Inventory

    a = offline_a3t()
    sites = [s.id for s in Inventory(CONFIGS).list_services("tenant-site")]
    wrong = "tenant-site/" + sites[0].split("/", 1)[1].upper()  # tenant-site/BLUE/BLUE1
    r = a.call("get_service", {"id": wrong})
    assert r.error.code is ErrorCode.NOT_FOUND
    assert r.error.message.startswith(f"unknown service {wrong!r}; did you mean {sites[0]!r}? (names are case-sensitive)")
    assert r.data["known"] == sites and r.data["suggestion"] == sites[0]
    r = a.call("get_service", {"id": "tenantsite/blue/x"})
    assert r.error.code is ErrorCode.NOT_FOUND and "did you mean 'tenant-site'?" in r.error.message
    assert "known: tenant-site, tenant-firewall" in r.error.message


def test_an_unknown_service_type_names_the_types():
    a = offline_a3t()
    for tool in ("get_service_schema", "list_services"):
        r = a.call(tool, {"type": "Tenant-Site"})
        assert r.error.code is ErrorCode.NOT_FOUND
        assert r.error.message.startswith("unknown service type 'Tenant-Site'; did you mean 'tenant-site'? (names are")
        assert "static-route" in r.data["known"]


@pytest.mark.parametrize(("change", "words"), [
    ({"type": "static-route", "action": "add", "router": "E1", "prefix": "192.0.2.0/24", "next_hop": "Null0"},
     ["unknown router 'E1'; did you mean 'e1'? (names are case-sensitive); known: " + ", ".join(ROUTERS)]),
    ({"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9", "remote_as": 65001,
      "route_map_in": "rm-tenants-out"},
     ["e1: unknown route-map 'rm-tenants-out'; did you mean 'RM-TENANTS-OUT'? (names are case-sensitive); known: RM-TENANTS-OUT"]),
    ({"type": "route-map-entry", "action": "add", "routers": ["e1"], "name": "RM-TENANTS-OUT", "seq": 77,
      "entry_action": "permit", "match_prefix_list": "PL-NOPE"},
     ["e1: unknown prefix-list 'PL-NOPE'; known: PL-TENANTS"]),
    ({"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24", "next_hop": "eth9"},
     ["e1: unknown interface 'eth9'", "(or a next-hop address, Null0, blackhole, reject)"]),
])
def test_intent_references_name_the_known_ones(change, words):
    a = offline_a3t()
    r = a.call("plan", {"changes": [change]})
    assert r.error is not None and r.error.code is ErrorCode.INVALID_INTENT, r.text
    assert r.data["errors"][0]["code"] in ("unknown-router", "unknown-reference")
    for w in words:
        assert w in r.error.message, r.error.message


def test_an_unknown_file_of_the_source_of_truth_suggests_the_right_one(tmp_path):
    from ani.errors import AniError
    from ani.sot.repo import SotRepo

    repo = SotRepo.init(tmp_path / "sot", {r: c for r, c in CONFIGS.items()})
    with pytest.raises(AniError) as exc:
        repo.read("devices/E1.json")
    assert str(exc.value) == ("no such file: devices/E1.json; did you mean 'devices/e1.json'? (names are "
                              "case-sensitive); known: " + ", ".join(f"devices/{r}.json" for r in sorted(ROUTERS)))
    with pytest.raises(AniError) as exc:
        repo.read("services/nope.json")
    assert str(exc.value) == "no such file: services/nope.json; known: none"  # only service files are compared


def test_a1_notes_a_reference_still_undefined_after_the_call_only():
    from ani.adapters.a1 import A1Adapter

    text = "hostname e1\n!\nroute-map RM-A permit 10\nexit\n!\nip prefix-list PL-A seq 5 permit 10.0.0.0/8\n"
    results = [
        {"command": "neighbor 10.0.0.1 route-map RM-a in", "status": "success",
         "message": "The route-map 'RM-a' does not exist."},
        {"command": "neighbor 10.0.0.1 route-map RM-A out", "status": "success",
         "message": "The route-map 'RM-A' does not exist."},  # defined by a later line of the call
        {"command": "match ip address prefix-list PL-X", "status": "success",
         "message": "% Prefix-list PL-X does not exist"},
        {"command": "ip route 192.0.2.0/24 Null0", "status": "success"},
    ]
    A1Adapter._note_dangling("e1", results, text)
    assert results[0]["message"] == ("The route-map 'RM-a' does not exist. (still undefined on e1 after this call: "
                                     "unknown route-map 'RM-a'; did you mean 'RM-A'? (names are case-sensitive); known: RM-A)")
    assert results[1]["message"] == "The route-map 'RM-A' does not exist."
    assert results[2]["message"].endswith("unknown prefix-list 'PL-X'; did you mean 'PL-A'?; known: PL-A)")
    assert "message" not in results[3]


def test_a2_leafref_to_nothing_names_what_exists():
    """A2's YANG validation (ani.device.yang): a neighbor route-map that refers to nothing names
    the route-maps there are, with the likely one."""
    from ani.device.yang import validate_json

    frr = "ani-frr:frr"
    bgp = {"asn": 64500, "neighbor": [{"address": "192.0.2.1", "remote-as": 65001}],
           "ipv4-unicast": {"neighbor": [{"address": "192.0.2.1", "route-map-in": "rm-in"}]}}
    rms = [{"name": n, "entry": [{"seq": 10, "action": "permit"}]} for n in ("RM-IN", "RM-OUT")]
    (issue,) = [i for i in validate_json({frr: {"bgp": bgp, "route-map": rms}}) if i.severity == "error"]
    assert issue.app_tag == "instance-required"
    assert issue.message.endswith("; did you mean 'RM-IN'? (names are case-sensitive); known: RM-IN, RM-OUT"), issue.message
    (none,) = [i for i in validate_json({frr: {"bgp": bgp}}) if i.severity == "error"]
    assert none.message.endswith("; known: none"), none.message


def test_a_long_name_is_quoted_cut_with_its_length():
    """An agent's 100 kB device name is not repeated back to it whole (issue 23): the first
    MAX_SHOWN characters, then the length; a name at the bound is quoted whole."""
    from ani import names

    msg = names.unknown("device", "x" * 100_000, ["e1", "r1"])
    assert msg == f"unknown device {'x' * names.MAX_SHOWN!r}... (100000 characters); known: e1, r1"
    edge = "y" * names.MAX_SHOWN
    assert names.unknown("device", edge, ["e1"]) == f"unknown device {edge!r}; known: e1"
