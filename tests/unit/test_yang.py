"""The YANG module ``ani-frr`` and ``ani.device.yang``: pyang, round trips, validation errors.

Every refusal test asserts that the issue names the culprit (its XPath and value), since an
agent reads these messages to fix its edit.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from lxml import etree
from yangson.enumerations import ContentType

from ani.device import parse
from ani.device.model import DeviceConfig, Firewall, FirewallRule, FirewallSet
from ani.device.strategies import device_configs
from ani.device.yang import (
    MODULE,
    NS,
    YangDataError,
    data_model,
    from_json,
    from_xml,
    module_texts,
    state_to_xml,
    to_json,
    to_xml,
    validate_json,
    validate_xml,
)
from ani.scenario import load_scenario

ROOT = Path(__file__).parent.parent.parent
YANG = ROOT / "yang"
PYANG = Path(sys.executable).parent / "pyang"
F = "ani-frr:frr"


def _pyang(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(PYANG), "-p", str(YANG), *args], capture_output=True, text=True, check=False)


def _errors(issues):
    return [i for i in issues if i.severity == "error"]


def _one_error(frr: dict):
    issues = validate_json({F: frr})
    errors = _errors(issues)
    assert len(errors) == 1, issues
    return errors[0]


# -- the module --------------------------------------------------------------------------------


@pytest.mark.parametrize("module", sorted(p.name for p in YANG.glob("*.yang")))
def test_pyang_strict_and_lint_without_any_warning(module):
    for flags in (["--strict"], ["--strict", "--lint"]):
        r = _pyang(*flags, str(YANG / module))
        assert r.returncode == 0 and r.stdout == "" and r.stderr == "", (flags, r.stdout + r.stderr)


def test_tree_diagram_in_docs_is_current():
    r = _pyang("-f", "tree", str(YANG / "ani-frr.yang"))
    assert r.returncode == 0, r.stderr
    assert (ROOT / "docs" / "yang-tree.txt").read_text() == r.stdout, \
        "regenerate: .venv/bin/pyang -f tree yang/ani-frr.yang > docs/yang-tree.txt"


def test_module_texts_and_data_model():
    texts = module_texts()
    rev, text = texts[MODULE]
    assert rev == "2026-11-29"
    assert f'namespace "{NS}"' in text and f"revision {rev}" in text
    assert data_model() is data_model()  # cached
    frr = data_model().get_schema_node("/ani-frr:frr")
    assert frr is not None and "hostname" not in {c.name for c in frr.data_children()}


# -- round trips -------------------------------------------------------------------------------


@settings(derandomize=True, max_examples=120, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(device_configs(firewall=True, yang_valid=True))
def test_round_trips_and_the_data_validates(m):
    x = to_xml(m)
    wire = etree.fromstring(etree.tostring(x))  # what a client or server would see
    assert _errors(validate_xml(wire)) == []
    assert from_xml(wire, m.hostname) == m
    raw = json.loads(json.dumps(to_json(m)))
    assert _errors(validate_json(raw)) == []
    assert from_json(raw, m.hostname) == m


@pytest.mark.parametrize("router", ["c1", "c2", "e1", "e2", "e3", "e4"])
def test_brownfield_configs_validate_without_issues(router):
    routers = load_scenario(ROOT / "scenarios" / "brownfield-small.yaml").topology.routers
    m = parse(routers[router].config)
    x = to_xml(m)
    assert validate_xml(x) == []
    assert from_xml(x, router) == m


def test_xml_lists_have_their_keys_first_and_defaults_are_not_written():
    m = parse("hostname r1\nip route 10.0.0.0/8 192.0.2.1 5\nip route 11.0.0.0/8 eth0\n")
    x = to_xml(m)
    routes = x.findall(f"{{{NS}}}static-route")
    assert [[etree.QName(c).localname for c in r] for r in routes] == [
        ["prefix", "next-hop", "distance"], ["prefix", "next-hop"]]
    assert x.find(f"{{{NS}}}ip-forwarding") is None  # true, the default
    assert etree.QName(x).namespace == NS and x.nsmap == {None: NS}


def test_firewall_rules_are_keyed_by_seq_and_ordered_by_it():
    fw = Firewall(sets={"A": FirewallSet(elements=["192.0.2.0/24"])}, forward_policy="drop",
                  forward_rules=[FirewallRule(saddr_set="A", action="accept"), FirewallRule(action="drop")])
    m = DeviceConfig(hostname="r1", firewall=fw)
    raw = to_json(m)
    assert raw[F]["firewall"]["forward-rule"] == [
        {"seq": 10, "saddr-set": "A", "action": "accept"}, {"seq": 20, "action": "drop"}]
    raw[F]["firewall"]["forward-rule"] = [{"seq": 7, "action": "drop"},
                                          {"seq": 3, "saddr-set": "A", "action": "accept"}]
    assert from_json(raw, "r1").firewall.forward_rules == fw.forward_rules


def test_route_map_delay_timer_default_5_is_not_written_and_reads_as_absent():
    leaf = data_model().get_schema_node("/ani-frr:frr/bgp-route-map-delay-timer")
    assert leaf.default == 5
    assert from_json({F: {"bgp-route-map-delay-timer": 5}}, "r1") == DeviceConfig(hostname="r1")
    assert to_json(DeviceConfig(hostname="r1", bgp_route_map_delay_timer=5)) == {F: {}}
    assert to_json(DeviceConfig(hostname="r1", bgp_route_map_delay_timer=0)) == {F: {"bgp-route-map-delay-timer": 0}}


def test_coalesce_time_leaf_follows_the_router_id():
    m = parse("hostname r1\nrouter bgp 65000\n bgp router-id 10.0.0.1\n coalesce-time 50\n timers bgp 1 3\nexit\n")
    assert to_json(m)[F]["bgp"] == {"asn": 65000, "router-id": "10.0.0.1", "coalesce-time": 50,
                                    "timers": {"keepalive": 1, "holdtime": 3}}
    x = to_xml(m)
    assert [etree.QName(c).localname for c in x.find(f"{{{NS}}}bgp")] == ["asn", "router-id", "coalesce-time", "timers"]
    assert from_xml(x, "r1") == m and validate_xml(x) == []
    i = _one_error({"bgp": {"asn": 1, "coalesce-time": 4294967296}})
    assert i.tag == "invalid-value" and i.path == "/frr:frr/frr:bgp/frr:coalesce-time"


def test_yang_set_name_keywords_are_the_measured_ones():
    from ani.device.nft_names import NFT_KEYWORDS

    t = data_model().get_schema_node("/ani-frr:frr/firewall/set/name").type
    (inverted,) = [p.pattern for p in t.patterns if p.invert_match]
    assert set(inverted.split("|")) == NFT_KEYWORDS


@pytest.mark.parametrize("name,why", [("drop", "an nft keyword"), ("ip", "an nft keyword"),
                                      ("auto-merge", "an nft keyword"), ("9net", "leading digit")])
def test_set_names_nft_refuses_are_invalid_values(name, why):
    i = _one_error({"firewall": {"set": [{"name": name}]}})
    assert (i.tag, i.path) == ("invalid-value", f"/frr:frr/frr:firewall/frr:set[frr:name='{name}']/frr:name")
    assert repr(name) in i.message and why in i.message
    x = etree.fromstring(f"<frr xmlns='{NS}'><firewall><forward-rule><seq>1</seq><saddr-set>{name}</saddr-set>"
                         "<action>drop</action></forward-rule></firewall></frr>")
    (i,) = validate_xml(x)
    assert i.path.endswith("/frr:saddr-set") and why in i.message
    ok = {"firewall": {"set": [{"name": "_" + name.upper()}]}}
    assert validate_json({F: ok}) == []


def test_json_member_names_may_carry_the_module_prefix():
    assert from_json({F: {"ani-frr:bgp": {"asn": 5}}}, "r1").bgp.asn == 5
    (i,) = validate_json({F: {"other:bgp": {"asn": 5}}})
    assert i.tag == "unknown-element" and "other:bgp" in i.message


def test_empty_and_missing_top_level_container():
    assert from_json({}, "r9") == DeviceConfig(hostname="r9")
    assert from_xml(etree.Element(f"{{{NS}}}frr"), "r9") == DeviceConfig(hostname="r9")
    assert to_json(DeviceConfig(hostname="r9")) == {F: {}}


def test_xml_comments_and_whitespace_are_ignored():
    x = etree.fromstring(f"""<frr xmlns="{NS}"><!-- c -->
      <bgp>
        <asn>64500</asn>
        <neighbor><address>192.0.2.1</address><remote-as>external</remote-as></neighbor>
      </bgp>
    </frr>""")
    m = from_xml(x, "r1")
    assert m.bgp.asn == 64500 and m.bgp.neighbors["192.0.2.1"].remote_as == "external"


# -- refusals: shape and types -------------------------------------------------------------------


def test_unknown_element_and_wrong_namespace():
    x = etree.fromstring(f'<frr xmlns="{NS}"><interface><name>eth0</name><mtu>9000</mtu></interface></frr>')
    (i,) = validate_xml(x)
    assert (i.tag, i.path) == ("unknown-element", "/frr:frr/frr:interface[frr:name='eth0']/frr:mtu")
    assert "mtu" in i.message
    x = etree.fromstring(f'<frr xmlns="{NS}"><bgp xmlns="urn:other"><asn>1</asn></bgp></frr>')
    (i,) = validate_xml(x)
    assert i.tag == "unknown-namespace" and "urn:other" in i.message
    with pytest.raises(YangDataError, match="expected element frr"):
        from_xml(etree.fromstring("<frr><bgp/></frr>"), "r1")


def test_wrong_type_names_the_leaf_and_the_value():
    x = etree.fromstring(f"<frr xmlns='{NS}'><bgp><asn>sixty</asn></bgp></frr>")
    with pytest.raises(YangDataError) as e:
        from_xml(x, "r1")
    (i,) = e.value.issues
    assert (i.severity, i.tag, i.path) == ("error", "invalid-value", "/frr:frr/frr:bgp/frr:asn")
    assert "'sixty'" in i.message and "1..4294967295" in i.message
    i = _one_error({"bgp": {"asn": "64500"}})  # RFC 7951: a uint32 is a JSON number
    assert (i.tag, i.path) == ("invalid-value", "/frr:frr/frr:bgp/frr:asn")


def test_out_of_range_names_the_range():
    x = etree.fromstring(f"<frr xmlns='{NS}'><interface><name>eth0</name><ospf><hello-interval>0"
                         "</hello-interval></ospf></interface></frr>")
    (i,) = validate_xml(x)
    assert i.path == "/frr:frr/frr:interface[frr:name='eth0']/frr:ospf/frr:hello-interval"
    assert i.tag == "invalid-value" and "'0'" in i.message and "1..65535" in i.message
    i = _one_error({"static-route": [{"prefix": "10.0.0.0/8", "next-hop": "eth0", "distance": 0}]})
    assert i.path == "/frr:frr/frr:static-route[frr:prefix='10.0.0.0/8'][frr:next-hop='eth0']/frr:distance"


def test_pattern_mismatch():
    i = _one_error({"interface": [{"name": "an-interface-name-too-long"}]})
    assert i.tag == "invalid-value" and "an-interface-name-too-long" in i.message


def test_missing_mandatory_leaf_names_it():
    i = _one_error({"bgp": {"router-id": "1.1.1.1"}})
    assert (i.tag, i.path) == ("missing-element", "/frr:frr/frr:bgp")
    assert "asn" in i.message
    i = _one_error({"prefix-list": [{"name": "PL", "entry": [{"seq": 5, "prefix": "any"}]}]})
    assert i.path == "/frr:frr/frr:prefix-list[frr:name='PL']/frr:entry[frr:seq='5']" and "action" in i.message
    i = _one_error({"route-map": [{"name": "RM"}]})
    assert i.path == "/frr:frr/frr:route-map[frr:name='RM']" and "entry" in i.message


def test_list_entry_without_its_key():
    x = etree.fromstring(f"<frr xmlns='{NS}'><static-route><prefix>10.0.0.0/8</prefix></static-route></frr>")
    (i,) = validate_xml(x)
    assert i.tag == "missing-element" and "next-hop" in i.message
    assert i.path == "/frr:frr/frr:static-route[frr:prefix='10.0.0.0/8']"


# -- refusals: leafrefs ------------------------------------------------------------------------------

BGP = {"asn": 64500, "neighbor": [{"address": "192.0.2.1", "remote-as": 65001}]}


def test_neighbor_route_map_must_exist():
    bgp = copy.deepcopy(BGP)
    bgp["ipv4-unicast"] = {"neighbor": [{"address": "192.0.2.1", "route-map-in": "RM-UNDEF"}]}
    i = _one_error({"bgp": bgp})
    assert (i.tag, i.app_tag) == ("data-missing", "instance-required")
    assert i.path == "/frr:frr/frr:bgp/frr:ipv4-unicast/frr:neighbor[frr:address='192.0.2.1']/frr:route-map-in"
    assert "RM-UNDEF" in i.message and "route-map" in i.message
    rm = [{"name": "RM-UNDEF", "entry": [{"seq": 10, "action": "permit"}]}]
    assert validate_json({F: {"bgp": bgp, "route-map": rm}}) == []


def test_redistribute_route_map_peer_group_and_firewall_set_must_exist():
    bgp = copy.deepcopy(BGP)
    bgp["ipv4-unicast"] = {"redistribute": [{"source": "connected", "route-map": "RM-X"}]}
    i = _one_error({"bgp": bgp})
    assert i.path.endswith("frr:redistribute[frr:source='connected']/frr:route-map") and "RM-X" in i.message
    i = _one_error({"bgp": {"asn": 1, "neighbor": [{"address": "192.0.2.9", "peer-group": "NOPE"}]}})
    assert i.path == "/frr:frr/frr:bgp/frr:neighbor[frr:address='192.0.2.9']/frr:peer-group"
    assert i.app_tag == "instance-required" and "NOPE" in i.message
    i = _one_error({"bgp": {"asn": 1, "ipv4-unicast": {"neighbor": [{"address": "192.0.2.7"}]}}})
    assert "192.0.2.7" in i.message and i.app_tag == "instance-required"
    i = _one_error({"firewall": {"forward-rule": [{"seq": 1, "daddr-set": "GONE", "action": "drop"}]}})
    assert i.path == "/frr:frr/frr:firewall/frr:forward-rule[frr:seq='1']/frr:daddr-set" and "GONE" in i.message


def test_missing_prefix_list_of_a_route_map_is_a_warning_not_an_error():
    frr = {"route-map": [{"name": "RM", "entry": [{"seq": 10, "action": "permit", "match-prefix-list": "PL-NONE"}]}]}
    (w,) = validate_json({F: frr})
    assert w.severity == "warning" and w.app_tag == "instance-missing"
    assert w.path == "/frr:frr/frr:route-map[frr:name='RM']/frr:entry[frr:seq='10']/frr:match-prefix-list"
    assert "PL-NONE" in w.message
    m = from_json({F: frr}, "r1")  # warnings do not raise
    assert m.route_maps["RM"].entries[0].match_prefix_list == "PL-NONE"
    assert validate_xml(to_xml(m)) == [w]


# -- refusals: what FRR refuses (must) ----------------------------------------------------------------


def test_ospf_network_and_interface_area_are_exclusive():
    i = _one_error({"interface": [{"name": "eth0", "ospf": {"area": "0"}}],
                    "ospf": {"network": [{"prefix": "10.0.0.0/8", "area": "0"}]}})
    assert (i.path, i.tag, i.app_tag) == ("/frr:frr/frr:ospf", "operation-failed", "frr-refuses")
    assert "ip ospf area" in i.message


def test_discard_and_forwarding_next_hops_are_exclusive():
    i = _one_error({"static-route": [{"prefix": "10.0.0.0/8", "next-hop": "blackhole"},
                                     {"prefix": "10.0.0.0/8", "next-hop": "192.0.2.1"}]})
    assert i.path == "/frr:frr/frr:static-route[frr:prefix='10.0.0.0/8'][frr:next-hop='192.0.2.1']"
    assert i.app_tag == "frr-refuses" and "blackhole" in i.message
    ok = [{"prefix": "10.0.0.0/8", "next-hop": "Null0"}, {"prefix": "10.0.0.0/8", "next-hop": "reject", "distance": 9},
          {"prefix": "11.0.0.0/8", "next-hop": "eth0"}, {"prefix": "11.0.0.0/8", "next-hop": "192.0.2.1"}]
    assert validate_json({F: {"static-route": ok}}) == []


@pytest.mark.parametrize("neighbor,refused", [
    ({"address": "192.0.2.1", "remote-as": 65001}, True),
    ({"address": "192.0.2.1", "remote-as": "external"}, True),
    ({"address": "192.0.2.1", "peer-group": "EXT"}, True),
    ({"address": "192.0.2.1", "remote-as": 64500}, False),
    ({"address": "192.0.2.1", "remote-as": "internal"}, False),
    ({"address": "192.0.2.1", "peer-group": "INT"}, False),
])
def test_route_reflector_client_only_on_ibgp_peers(neighbor, refused):
    groups = [{"name": "EXT", "remote-as": "external"}, {"name": "INT", "remote-as": "internal"}]
    bgp = {"asn": 64500, "peer-group": groups,
           "neighbor": [neighbor],
           "ipv4-unicast": {"neighbor": [{"address": "192.0.2.1", "route-reflector-client": True}]}}
    issues = validate_json({F: {"bgp": bgp}})
    if refused:
        (i,) = issues
        assert i.path == "/frr:frr/frr:bgp/frr:ipv4-unicast/frr:neighbor[frr:address='192.0.2.1']"
        assert i.app_tag == "frr-refuses" and "Not an internal neighbor" in i.message
    else:
        assert issues == []
    bgp["ipv4-unicast"] = {"peer-group": [{"name": "EXT", "route-reflector-client": True}]}
    (i,) = validate_json({F: {"bgp": bgp}})
    assert i.path == "/frr:frr/frr:bgp/frr:ipv4-unicast/frr:peer-group[frr:name='EXT']"


def test_neighbor_needs_a_remote_as_of_its_own_or_of_its_group():
    bgp = {"asn": 1, "peer-group": [{"name": "G"}], "neighbor": [{"address": "192.0.2.1", "peer-group": "G"}]}
    i = _one_error({"bgp": bgp})
    assert i.path == "/frr:frr/frr:bgp/frr:neighbor[frr:address='192.0.2.1']" and i.app_tag == "frr-refuses"
    bgp["peer-group"][0]["remote-as"] = 65000
    assert validate_json({F: {"bgp": bgp}}) == []


def test_model_rules_beyond_yang_are_errors_with_a_path():
    i = _one_error({"prefix-list": [{"name": "P", "entry": [{"seq": 5, "action": "permit", "prefix": "10.0.0.1/8"}]}]})
    assert i.path == "/frr:frr/frr:prefix-list[frr:name='P']/frr:entry[frr:seq='5']/frr:prefix"
    assert i.app_tag == "model-rule" and "10.0.0.1/8" in i.message
    i = _one_error({"firewall": {"set": [{"name": "A", "element": ["10.0.0.0/8", "10.1.0.0/16"]}]}})
    assert i.path == "/frr:frr/frr:firewall/frr:set[frr:name='A']/frr:element" and "overlapping" in i.message
    with pytest.raises(YangDataError, match="overlapping"):
        from_json({F: {"firewall": {"set": [{"name": "A", "element": ["10.0.0.0/8", "10.1.0.0/16"]}]}}}, "r1")


# -- the device model side ---------------------------------------------------------------------------


def test_one_distance_per_static_prefix_and_next_hop():
    m = parse("hostname r1\nip route 10.0.0.0/8 192.0.2.1\nip route 10.0.0.0/8 192.0.2.1 20\n")
    assert [(str(r.prefix), r.distance) for r in m.static_routes] == [("10.0.0.0/8", 1)]
    assert m.unmodelled == ["ip route 10.0.0.0/8 192.0.2.1 20"]
    with pytest.raises(ValueError, match="duplicate static route"):
        DeviceConfig(hostname="r1", static_routes=[{"prefix": "10.0.0.0/8", "nexthop": "eth0"},
                                                   {"prefix": "10.0.0.0/8", "nexthop": "eth0", "distance": 5}])


# -- state ---------------------------------------------------------------------------------------------

STATE = {
    "interface": [{"name": "eth0", "admin-status": "up", "oper-status": "up", "address": ["10.0.0.1/24"], "mtu": 1500}],
    "route": [{"prefix": "10.0.0.0/24", "protocol": "connected", "distance": 0, "metric": 0, "selected": True,
               "next-hop": ["eth0"]},
              {"prefix": "192.0.2.0/24", "protocol": "bgp", "distance": 200, "metric": 0, "selected": True,
               "next-hop": ["10.0.0.2 via eth0", "10.0.0.3 via eth0"]}],
    "bgp-neighbor": [{"address": "10.0.0.2", "remote-as": 64500, "state": "Established", "uptime-s": 42,
                      "prefixes-received": 3}],
    "ospf-neighbor": [{"router-id": "10.255.0.2", "interface": "eth0", "address": "10.0.0.2", "state": "Full/DR"}],
}


def test_state_to_xml_validates_against_the_module():
    x = state_to_xml(STATE)
    assert etree.QName(x).localname == "frr-state" and etree.QName(x).namespace == NS
    assert state_to_xml({"ani-frr:frr-state": STATE}).findtext(f"{{{NS}}}bgp-neighbor/{{{NS}}}state") == "Established"
    hops = [e.text for e in x.findall(f"{{{NS}}}route")[1].findall(f"{{{NS}}}next-hop")]
    assert hops == ["10.0.0.2 via eth0", "10.0.0.3 via eth0"]
    inst = data_model().from_xml(etree.fromstring(f"<data>{etree.tostring(x).decode()}</data>"))
    inst.validate(ctype=ContentType.all)  # yangson's own XML reader agrees


def test_state_to_xml_refuses_state_outside_the_module():
    bad = copy.deepcopy(STATE)
    bad["interface"][0]["admin-status"] = "sideways"
    with pytest.raises(YangDataError) as e:
        state_to_xml(bad)
    assert "sideways" in str(e.value) and "admin-status" in e.value.issues[0].path


def test_docs_example_runs(capsys):
    import re

    text = (ROOT / "docs" / "device-model.md").read_text()
    code = re.search(r"## YANG.*?```python\n(.*?)```", text, re.S).group(1)
    exec(compile(code, "docs/device-model.md", "exec"), {})
    assert "prefix-list PL-NONE does not exist" in capsys.readouterr().out
