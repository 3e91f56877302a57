"""The diff -> commands logic of the scripted agent's push (pure): FRR remediation lines
(``ani.device.remediation``, hier-config with the FRR driver), nft commands
(``ani.agents.nft_changes``), the targeted edit-config (``ani.agents.yang_edit``, applied here
with the NETCONF server's own edit engine), and A1's batching. Configurations are
brownfield-small's real FRR texts and mutated copies."""

from __future__ import annotations

import json
from ipaddress import IPv4Interface, IPv4Network

import pytest
from lxml import etree

from ani.device.remediation import frr_commands, frr_text, frr_units
from ani.agents.nft_changes import forward_handles, nft_commands
from ani.agents.scripted import AgentFailed
from ani.agents.scripted_push import A1_MAX_COMMANDS, _push_a1, device_level, push_configs
from ani.agents.yang_edit import _schema, edit_config_xml
from ani.device.model import (
    BgpAfPeer,
    DeviceConfig,
    Firewall,
    FirewallRule,
    FirewallSet,
    Interface,
    Peer,
    PrefixList,
    PrefixListEntry,
    RouteMap,
    RouteMapEntry,
    StaticRoute,
)
from ani.device.parse import parse
from ani.device.yang import from_xml, to_xml
from ani.netconf.editconfig import edit
from ani.protocol import ToolResult
from ani.scenario import load_scenario

SCENARIO = "scenarios/brownfield-small.yaml"


def _fw() -> Firewall:
    """brownfield-small's table inet fw."""
    return Firewall(
        sets={"tenant_blue": FirewallSet(elements=[f"198.18.1{i}.0/24" for i in range(1, 5)]),
              "tenant_red": FirewallSet(elements=[f"198.18.2{i}.0/24" for i in range(1, 5)])},
        forward_rules=[FirewallRule(saddr_set="tenant_blue", daddr_set="tenant_red", action="drop"),
                       FirewallRule(saddr_set="tenant_red", daddr_set="tenant_blue", action="drop")],
    )


@pytest.fixture(scope="module")
def configs() -> dict[str, DeviceConfig]:
    sc = load_scenario(SCENARIO)
    return {r: parse(spec.config).model_copy(update={"firewall": _fw() if r.startswith("e") else None})
            for r, spec in sc.topology.routers.items()}


@pytest.fixture
def e1(configs) -> DeviceConfig:
    return configs["e1"]


def _m(cfg: DeviceConfig) -> DeviceConfig:
    return cfg.model_copy(deep=True)


# -- FRR ----------------------------------------------------------------------------------------


def test_equal_configs_need_no_command(configs):
    for cfg in configs.values():
        assert frr_commands(cfg, _m(cfg)) == []


def test_frr_text_drops_separators_and_block_ends(e1):
    text = frr_text(e1)
    assert "!" not in text.split() and "exit" not in text.split()
    assert " ip address 198.18.11.1/24" in text.splitlines()
    assert "  redistribute connected route-map RM-TENANTS-OUT" in text.splitlines()


def test_new_site_entry_before_its_address(e1):
    want = _m(e1)
    want.prefix_lists["PL-TENANTS"].entries.append(PrefixListEntry(seq=30, action="permit", prefix="198.19.4.0/24"))
    want.interfaces["to-blue1"].addresses.append(IPv4Interface("198.19.4.1/24"))
    assert frr_commands(e1, want) == [
        "ip prefix-list PL-TENANTS seq 30 permit 198.19.4.0/24",
        "interface to-blue1", "ip address 198.19.4.1/24", "exit",
    ]


def test_removed_site_address_before_its_entry_and_no_interface_deletion(e1):
    want = _m(e1)
    want.prefix_lists["PL-TENANTS"].entries = [e for e in want.prefix_lists["PL-TENANTS"].entries if e.seq != 20]
    want.interfaces["to-red1"].addresses = []  # the interface has nothing left: FRR keeps it
    assert frr_commands(e1, want) == [
        "interface to-red1", "no ip address 198.18.21.1/24", "exit",
        "no ip prefix-list PL-TENANTS seq 20 permit 198.18.21.0/24",
    ]


def test_changed_values_are_set_without_negating_the_old_ones(e1):
    want = _m(e1)
    want.prefix_lists["PL-TENANTS"].entries[0].prefix = IPv4Network("198.18.15.0/24")  # same seq
    want.route_maps["RM-TENANTS-OUT"].entries[0].set_local_preference = 70
    want.bgp.ipv4_unicast.redistribute["connected"] = "RM-NEW"
    want.route_maps["RM-NEW"] = RouteMap(entries=[RouteMapEntry(seq=10, action="permit", match_prefix_list="PL-TENANTS")])
    want.bgp_route_map_delay_timer = 2
    want.interfaces["to-blue1"].description = "blue site 1"
    got = frr_commands(e1, want)
    assert got == [
        "bgp route-map delay-timer 2",
        "ip prefix-list PL-TENANTS seq 10 permit 198.18.15.0/24",
        "route-map RM-TENANTS-OUT permit 10", "set local-preference 70", "exit",
        "route-map RM-NEW permit 10", "match ip address prefix-list PL-TENANTS", "exit",
        "interface to-blue1", "description blue site 1", "exit",
        "router bgp 64500", "address-family ipv4 unicast", "redistribute connected route-map RM-NEW",
        "exit-address-family", "exit",
    ]
    assert not any(ln.startswith("no ") for ln in got)


def test_removed_route_map_and_prefix_list_go_after_their_users(e1):
    want = _m(e1)
    want.bgp.ipv4_unicast.redistribute["connected"] = None
    del want.route_maps["RM-TENANTS-OUT"]
    del want.prefix_lists["PL-TENANTS"]
    got = frr_commands(e1, want)
    assert got == [
        "router bgp 64500", "address-family ipv4 unicast", "redistribute connected",
        "exit-address-family", "exit",
        "no route-map RM-TENANTS-OUT permit 10",
        "no ip prefix-list PL-TENANTS seq 10 permit 198.18.11.0/24",
        "no ip prefix-list PL-TENANTS seq 20 permit 198.18.21.0/24",
    ]


def test_description_removed_with_the_short_form(e1):
    before = _m(e1)
    before.interfaces["to-red1"].description = "red site 1"
    assert frr_commands(before, e1) == ["interface to-red1", "no description", "exit"]


def test_static_routes(e1):
    want = _m(e1)
    want.static_routes = [StaticRoute(prefix="192.0.2.0/24", nexthop="Null0", distance=200)]
    assert frr_commands(e1, want) == ["ip route 192.0.2.0/24 Null0 200"]
    moved = _m(want)
    moved.static_routes = [StaticRoute(prefix="192.0.2.0/24", nexthop="Null0", distance=10)]
    assert frr_commands(want, moved) == ["no ip route 192.0.2.0/24 Null0 200", "ip route 192.0.2.0/24 Null0 10"]
    assert frr_commands(want, e1) == ["no ip route 192.0.2.0/24 Null0 200"]


def test_bgp_neighbors_added_and_removed_whole(e1):
    want = _m(e1)
    want.bgp.neighbors["192.0.2.9"] = Peer(remote_as=64999, description="test peer", timers_connect=5)
    assert frr_commands(e1, want) == [
        "router bgp 64500", "neighbor 192.0.2.9 remote-as 64999", "neighbor 192.0.2.9 description test peer",
        "neighbor 192.0.2.9 timers connect 5", "exit",
    ]
    # one 'no neighbor' (its first 'no neighbor X ...' would delete it; the others then fail)
    want.bgp.ipv4_unicast.peers["192.0.2.9"] = BgpAfPeer(route_map_in="RM-TENANTS-OUT")
    want = want.canonical()
    assert frr_commands(want, e1) == ["router bgp 64500", "no neighbor 192.0.2.9", "exit"]
    # a peer-group and its members: the members first
    gone = _m(e1)
    gone.bgp.neighbors = {}
    gone.bgp.peer_groups = {}
    assert frr_commands(e1, gone.canonical()) == [
        "router bgp 64500", "no neighbor 100.64.255.1", "no neighbor 100.64.255.2", "no neighbor RR", "exit",
    ]


def test_unmodelled_lines_are_kept_and_removable():
    run = parse("hostname e1\n!\nrouter bgp 64500\n neighbor 192.0.2.7 remote-as 1\n "
                "neighbor 192.0.2.7 bfd\nexit\n!\nline vty\n exec-timeout 0 0\nexit\n")
    assert run.unmodelled == ["router bgp 64500 / neighbor 192.0.2.7 bfd", "line vty", "line vty / exec-timeout 0 0"]
    assert frr_text(run).splitlines()[-3:] == [" neighbor 192.0.2.7 bfd", "line vty", " exec-timeout 0 0"]
    assert frr_commands(run, _m(run)) == []
    want = run.model_copy(update={"unmodelled": ["line vty", "line vty / exec-timeout 0 0"]})
    assert frr_commands(run, want) == ["router bgp 64500", "no neighbor 192.0.2.7 bfd", "exit"]


def test_units_are_whole_blocks(e1):
    want = _m(e1)
    want.prefix_lists["PL-TENANTS"].entries.append(PrefixListEntry(seq=30, action="permit", prefix="198.19.4.0/24"))
    want.interfaces["to-blue1"].addresses.append(IPv4Interface("198.19.4.1/24"))
    assert frr_units(e1, want) == [["ip prefix-list PL-TENANTS seq 30 permit 198.19.4.0/24"],
                                   ["interface to-blue1", "ip address 198.19.4.1/24", "exit"]]


# -- nftables -----------------------------------------------------------------------------------


BLUE_RED = "ip saddr @tenant_blue ip daddr @tenant_red"


def test_set_elements_added_and_removed():
    a = _fw()
    b = a.model_copy(deep=True)
    b.sets["tenant_blue"].elements.append(IPv4Network("198.19.4.0/24"))
    b.sets["tenant_red"].elements = b.sets["tenant_red"].elements[1:]
    assert nft_commands(a, Firewall.model_validate(b.model_dump())) == [
        "delete element inet fw tenant_red { 198.18.21.0/24 }",
        "add element inet fw tenant_blue { 198.19.4.0/24 }",
    ]
    assert nft_commands(a, a.model_copy(deep=True)) == []


def test_rules_inserted_in_place_and_deleted_by_handle():
    a = _fw()
    mid = FirewallRule(saddr_set="tenant_blue", daddr_set="tenant_blue", action="accept")
    b = a.model_copy(update={"forward_rules": [a.forward_rules[0], mid, a.forward_rules[1]]})
    assert nft_commands(a, b, [4, 5]) == ["add rule inet fw forward position 4 ip saddr @tenant_blue ip daddr @tenant_blue accept"]
    head = a.model_copy(update={"forward_rules": [mid, mid.model_copy(update={"action": "drop"}), *a.forward_rules]})
    assert nft_commands(a, head, [4, 5]) == [
        "insert rule inet fw forward position 4 ip saddr @tenant_blue ip daddr @tenant_blue accept",
        "insert rule inet fw forward position 4 ip saddr @tenant_blue ip daddr @tenant_blue drop",
    ]
    tail = a.model_copy(update={"forward_rules": [*a.forward_rules, mid, mid.model_copy(update={"action": "drop"})]})
    assert nft_commands(a, tail, [4, 5]) == [  # each right after handle 5: the last one first
        "add rule inet fw forward position 5 ip saddr @tenant_blue ip daddr @tenant_blue drop",
        "add rule inet fw forward position 5 ip saddr @tenant_blue ip daddr @tenant_blue accept",
    ]
    assert nft_commands(b, a, [4, 9, 5]) == ["delete rule inet fw forward handle 9"]
    flipped = a.model_copy(update={"forward_rules": [a.forward_rules[0].model_copy(update={"action": "accept"})]})
    assert nft_commands(a, flipped, [4, 5]) == [  # no rule kept: deleted, then appended
        "delete rule inet fw forward handle 4", "delete rule inet fw forward handle 5",
        f"add rule inet fw forward {BLUE_RED} accept",
    ]
    with pytest.raises(ValueError, match="handles of chain forward's 2 rule"):
        nft_commands(a, b)


def test_sets_tables_and_policy():
    a = _fw()
    green = a.model_copy(deep=True)
    green.sets["tenant_green"] = FirewallSet(elements=["198.19.9.0/24"])
    assert nft_commands(a, green) == [
        "add set inet fw tenant_green { type ipv4_addr; flags interval; }",
        "add element inet fw tenant_green { 198.19.9.0/24 }",
    ]
    no_red = Firewall(sets={"tenant_blue": a.sets["tenant_blue"]})
    assert nft_commands(a, no_red, [4, 5]) == [  # the rules using the set go first
        "delete rule inet fw forward handle 4", "delete rule inet fw forward handle 5", "delete set inet fw tenant_red",
    ]
    drop = a.model_copy(update={"forward_policy": "drop"})
    assert nft_commands(a, drop) == ["chain inet fw forward { policy drop; }"]
    assert nft_commands(a, None) == ["delete table inet fw"]
    made = nft_commands(None, a)
    assert made[0] == "add table inet fw" and made[-2:] == [f"add rule inet fw forward {BLUE_RED} drop",
                                                            "add rule inet fw forward ip saddr @tenant_red ip daddr @tenant_blue drop"]
    assert "add chain inet fw forward { type filter hook forward priority 0; policy accept; }" in made


def test_forward_handles_from_nft_json():
    doc = {"nftables": [
        {"metainfo": {"json_schema_version": 1}},
        {"table": {"family": "inet", "name": "fw", "handle": 1}},
        {"rule": {"family": "inet", "table": "fw", "chain": "forward", "handle": 7, "expr": []}},
        {"rule": {"family": "inet", "table": "other", "chain": "forward", "handle": 8, "expr": []}},
        {"rule": {"family": "inet", "table": "fw", "chain": "forward", "handle": 3, "expr": []}},
    ]}
    assert forward_handles(json.dumps(doc)) == [7, 3]
    with pytest.raises(ValueError):
        forward_handles("[]")


# -- A2: the edit-config ------------------------------------------------------------------------


def _apply_edit(before: DeviceConfig, after: DeviceConfig) -> DeviceConfig:
    xml = edit_config_xml(before, after)
    assert xml is not None
    ds = etree.Element("data")
    ds.append(to_xml(before))
    res = edit(_schema(), ds, etree.fromstring(f"<config>{xml}</config>"), default_operation="merge",
               error_option="rollback-on-error")
    assert res.errors == []
    return from_xml(res.tree.find("{urn:ani:yang:ani-frr}frr"), before.hostname)


def _mutations(e1: DeviceConfig) -> list[DeviceConfig]:
    out = []
    m = _m(e1)
    m.prefix_lists["PL-TENANTS"].entries.append(PrefixListEntry(seq=30, action="permit", prefix="198.19.4.0/24"))
    m.interfaces["to-blue1"].addresses.append(IPv4Interface("198.19.4.1/24"))
    m.firewall.sets["tenant_blue"].elements.append(IPv4Network("198.19.4.0/24"))
    out.append(m)
    m = _m(e1)
    m.prefix_lists["PL-TENANTS"].entries.pop()
    m.interfaces["to-red1"].addresses = []
    m.firewall.sets["tenant_red"].elements = []
    m.firewall.forward_rules.insert(1, FirewallRule(saddr_set="tenant_red", action="accept"))
    out.append(m)
    m = _m(e1)
    m.static_routes.append(StaticRoute(prefix="192.0.2.0/24", nexthop="Null0", distance=200))
    m.route_maps["RM-TENANTS-OUT"].entries[0].set_local_preference = 70
    m.prefix_lists["PL-X"] = PrefixList(entries=[PrefixListEntry(seq=5, action="deny", prefix=None)])
    del m.bgp.neighbors["100.64.255.2"]
    m.bgp.neighbors["192.0.2.9"] = Peer(remote_as=64999)
    m.bgp_route_map_delay_timer = None
    m.firewall.forward_policy = "drop"
    out.append(m)
    m = _m(e1)
    m.firewall = None
    m.bgp = None
    m.route_maps = {}
    out.append(m)
    return [x.canonical() for x in out]


def test_edit_config_reaches_the_intended_config(e1):
    for want in _mutations(e1):
        assert _apply_edit(e1, want) == want.model_copy(update={"unmodelled": []})
        assert _apply_edit(want, e1) == e1  # and back
    assert edit_config_xml(e1, _m(e1)) is None


def test_edit_config_is_targeted(e1):
    want = _mutations(e1)[0]
    root = etree.fromstring(edit_config_xml(e1, want))
    ns = "{urn:ani:yang:ani-frr}"
    assert [i.findtext(f"{ns}name") for i in root.findall(f"{ns}interface")] == ["to-blue1"]
    assert [x.text for x in root.iter(f"{ns}address")] == ["198.19.4.1/24"]
    assert root.find(f"{ns}bgp") is None and root.find(f"{ns}route-map") is None
    gone = etree.fromstring(edit_config_xml(e1, _mutations(e1)[1]))
    entry = gone.find(f"{ns}prefix-list/{ns}entry")
    assert entry.get("{urn:ietf:params:xml:ns:netconf:base:1.0}operation") == "delete"
    assert [c.tag for c in entry] == [f"{ns}seq"]  # by its key alone


# -- levels and A1 batching ---------------------------------------------------------------------


def test_device_level():
    assert device_level({"shell", "get_topology"}) == "a0"
    assert device_level({"update_config"}) == "a1"
    assert device_level({"edit_config", "commit"}) == "a2"
    with pytest.raises(AgentFailed, match="no device-level configuration tool"):
        device_level({"plan", "apply"})


class _Steps:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def call(self, name, args):  # type: ignore[no-untyped-def]
        self.calls.append((name, args))
        return ToolResult.success("ok", {})


def test_a1_batches_cut_between_blocks(e1):
    want = _m(e1)
    for i in range(150):  # 150 one-line units, then 60 interface blocks of 3 lines
        want.prefix_lists["PL-TENANTS"].entries.append(
            PrefixListEntry(seq=100 + i, action="permit", prefix=f"198.19.{i}.0/24"))
    for i in range(60):
        want.interfaces[f"to-x{i}"] = Interface(addresses=[f"10.{i}.0.1/24"])
    want = want.canonical()
    steps = _Steps()
    _push_a1(steps, "e1", e1, want)
    batches = [args["commands"] for name, args in steps.calls]
    assert all(name == "update_config" for name, _ in steps.calls) and len(batches) == 2
    assert all(len(b) <= A1_MAX_COMMANDS for b in batches)
    assert [ln for b in batches for ln in b] == frr_commands(e1, want)
    assert batches[1][0].startswith("interface ")  # never cut inside a block


def test_push_refuses_a_wrong_hostname_before_any_call(e1):
    steps = _Steps()
    with pytest.raises(AgentFailed, match="e2: the intended configuration is for hostname 'e1'"):
        push_configs(steps, {"update_config"}, {"e2": e1}, {"e2": e1})
    assert steps.calls == []


# -- reading past the output cap ----------------------------------------------------------------


class _Device:
    """A fake level serving ``cfg`` the way the adapters answer, every answer past ``cap``
    bytes marked truncated (and cut) as the adapters do."""

    def __init__(self, cfg: DeviceConfig, cap: int) -> None:
        from ani.device.render import render

        self.cfg, self.cap = cfg, cap
        self.frr = "Building configuration...\n\nCurrent configuration:\n!\n" + render(cfg) + "end\n"
        self.nft = json.dumps({"nftables": [{"metainfo": {"json_schema_version": 1}}]})
        self.calls: list[tuple[str, dict]] = []

    def _cut(self, text: str) -> tuple[str, bool]:
        return text[: self.cap], len(text) > self.cap

    def call(self, name, args):  # type: ignore[no-untyped-def]
        self.calls.append((name, args))
        if name == "shell":
            cmd = args["command"]
            out = (self.frr if "show running-config" in cmd else "") + ("@@ani-nft-ruleset@@\n" if "@@" in cmd else "")
            out += self.nft if "nft -j" in cmd else ""
            text, cut = self._cut(out)
            return ToolResult.success(text, {"exit_status": 0, "stdout": text, "stdout_truncated": cut})
        if name == "get_running_config":
            return ToolResult.success(self.frr, {"running_config": self.frr, "truncated": False})
        if name == "execute_validation":
            return ToolResult.success(self.nft, {"output": self.nft, "truncated": False})
        if name == "get_config":
            frr = to_xml(self.cfg)
            if args.get("filter"):
                want = etree.fromstring(args["filter"])[0].tag
                for child in list(frr):
                    if child.tag != want:
                        frr.remove(child)
            text, cut = self._cut(etree.tostring(frr, encoding="unicode"))
            return ToolResult.success(text, {"xml": text, "truncated": cut})
        raise AssertionError(name)


def test_a0_reads_frr_and_nft_apart_when_together_they_pass_the_cap(e1):
    from ani.agents.scripted_push import read_configs

    want = e1.model_copy(update={"firewall": None})
    dev = _Device(want, cap=len(_Device(want, 0).frr) + 10)  # FRR fits, FRR + ruleset does not
    assert read_configs(dev, {"shell"}, ["e1"]) == {"e1": want}
    assert [a["command"] for _n, a in dev.calls][1:] == ["vtysh -c 'show running-config'", "nft -j list ruleset"]
    small = _Device(want, cap=100)
    with pytest.raises(AgentFailed, match="e1: the output of \"vtysh -c 'show running-config'\" was cut"):
        read_configs(small, {"shell"}, ["e1"])


def test_a2_reads_node_by_node_when_the_whole_passes_the_cap(e1):
    from ani.agents.scripted_push import read_configs

    whole = len(etree.tostring(to_xml(e1)))
    dev = _Device(e1, cap=whole - 1)
    assert read_configs(dev, {"edit_config"}, ["e1"]) == {"e1": e1}
    filters = [a.get("filter") for _n, a in dev.calls]
    assert filters[0] is None and len(filters) > 5
    assert '<frr xmlns="urn:ani:yang:ani-frr"><prefix-list/></frr>' in filters
    with pytest.raises(AgentFailed, match=r"e1: get_config running \(\S+\) was cut"):
        read_configs(_Device(e1, cap=50), {"edit_config"}, ["e1"])


def test_docs_example_prints_what_it_says(capsys):
    """docs/scenarios.md's lab-free example of frr_commands runs and prints its comment."""
    import re
    from pathlib import Path

    text = Path("docs/scenarios.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "print(frr_commands" in b)
    exec(compile(block, "docs/scenarios.md", "exec"), {})
    said = " ".join(ln.lstrip("# ").strip() for ln in block.splitlines() if ln.startswith("# "))
    assert capsys.readouterr().out.strip() == said


def test_ospf_area_is_negated_before_the_new_one(e1):
    """FRR 8.4 refuses a new ``ip ospf area`` over an old one ("Must remove previous area
    config before changing ospf area"): the one interface setting that is not replaced."""
    want = _m(e1)
    want.interfaces["lo"].ospf.area = "0.0.0.1"
    want.interfaces["lo"].ospf.passive = True
    assert frr_commands(e1, want) == ["interface lo", "no ip ospf area 0", "ip ospf area 0.0.0.1", "ip ospf passive", "exit"]


def test_removed_address_family_is_its_lines_negated(configs):
    c1 = configs["c1"]
    want = _m(c1)
    want.bgp.ipv4_unicast.peers = {}
    want = want.canonical()
    assert want.bgp.ipv4_unicast.is_empty()
    assert frr_commands(c1, want) == [
        "router bgp 64500", "address-family ipv4 unicast", "no neighbor EDGES route-reflector-client",
        "exit-address-family", "exit",
    ]
    # with its peer-group gone too, the one 'no neighbor' is all (the rest goes with it)
    gone = _m(c1)
    gone.bgp.neighbors = {}
    gone.bgp.peer_groups = {}
    gone.bgp.ipv4_unicast.peers = {}
    assert frr_commands(c1, gone.canonical()) == [
        "router bgp 64500", *(f"no neighbor 100.64.255.1{i}" for i in range(1, 5)), "no neighbor EDGES", "exit",
    ]


def test_a1_reads_back_only_the_part_it_changed(e1):
    from ani.agents.scripted_push import _read_back
    fw_only = _m(e1)
    fw_only.firewall.sets["tenant_blue"].elements.append(IPv4Network("198.19.4.0/24"))
    dev = _Device(fw_only, cap=10**6)
    dev.nft = json.dumps(_nft_json(fw_only.firewall))
    assert _read_back(dev, "a1", "e1", e1, fw_only) == fw_only
    assert [n for n, _a in dev.calls] == ["execute_validation"]
    frr_only = _m(e1)
    frr_only.interfaces["to-blue1"].description = "blue 1"
    dev = _Device(frr_only, cap=10**6)
    assert _read_back(dev, "a1", "e1", e1, frr_only) == frr_only
    assert [n for n, _a in dev.calls] == ["get_running_config"]
    both = _m(fw_only)
    both.interfaces["to-blue1"].description = "blue 1"
    dev = _Device(both, cap=10**6)
    dev.nft = json.dumps(_nft_json(both.firewall))
    assert _read_back(dev, "a1", "e1", e1, both) == both
    assert [n for n, _a in dev.calls] == ["get_running_config", "execute_validation"]


def _nft_json(fw: Firewall) -> dict:
    """``nft -j list ruleset`` of ``fw`` as nft prints it (the shape parse_ruleset reads)."""
    items: list[dict] = [{"metainfo": {"json_schema_version": 1}}, {"table": {"family": "inet", "name": "fw", "handle": 1}}]
    for name, s in fw.sets.items():
        elem = [{"prefix": {"addr": str(e.network_address), "len": e.prefixlen}} for e in s.elements]
        items.append({"set": {"family": "inet", "name": name, "table": "fw", "type": "ipv4_addr", "handle": 2,
                              "flags": ["interval"], **({"elem": elem} if elem else {})}})
    items.append({"chain": {"family": "inet", "table": "fw", "name": "forward", "handle": 3, "type": "filter",
                            "hook": "forward", "prio": 0, "policy": fw.forward_policy}})
    for i, r in enumerate(fw.forward_rules):
        expr = [{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": f}}, "right": f"@{v}"}}
                for f, v in (("saddr", r.saddr_set), ("daddr", r.daddr_set)) if v]
        items.append({"rule": {"family": "inet", "table": "fw", "chain": "forward", "handle": 10 + i,
                               "expr": [*expr, {r.action: None}]}})
    return {"nftables": items}


def test_a0_one_vtysh_per_block_and_nft_whatever_vtysh_says(e1):
    """vtysh -c stops at the first failing line, and FRR 8.4's vtysh exits 1 for some lines it
    applies: each top-level block gets its own vtysh, the nft transaction runs after them all."""
    from ani.agents.scripted_push import _push_a0

    want = _m(e1)
    want.prefix_lists["PL-TENANTS"].entries.pop()
    want.interfaces["to-red1"].addresses = []
    want.firewall.sets["tenant_red"].elements.pop(0)
    steps = _Steps()
    _push_a0(steps, "e1", e1, want)
    (name, args), = steps.calls
    lines = args["command"].splitlines()
    assert name == "shell" and [ln.split(" || ")[0] for ln in lines[:2]] == [
        "rc=0; vtysh -c 'configure terminal' -c 'interface to-red1' -c 'no ip address 198.18.21.1/24' -c exit -c end",
        "vtysh -c 'configure terminal' -c 'no ip prefix-list PL-TENANTS seq 20 permit 198.18.21.0/24' -c end",
    ]
    assert lines[2].startswith("nft -f - <<'ANI_NFT'") and lines[3] == "delete element inet fw tenant_red { 198.18.21.0/24 }"
    assert lines[-2:] == ["[ $rc = 0 ] || echo ANI-PUSH-FAILED", "exit 0"]  # no tool error: the read-back decides
