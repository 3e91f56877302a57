"""A1 allowlist: sanitiser (issue case 7), grammar, static context check (case 4). Pure, no lab."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ani.adapters.allowlist import Refused, check_show, plan_config, sanitise
from ani.adapters.platform import load_platform

P = load_platform("frr")

INJECTIONS = {
    "newline": "show ip route\nconfigure terminal\nno router bgp 64501",
    "carriage return": "show ip route\rconfigure terminal\rno router bgp 64501",
    "semicolon": "show ip route; configure terminal; no router bgp 64501",
    "and-and": "show ip route && vtysh -c 'configure terminal' -c 'no router bgp 64501'",
    "line separator": "show ip route\u2028configure terminal\u2028no router bgp 64501",
    "paragraph separator": "show ip route\u2029no router bgp 64501",
    "next line (C1)": "show ip route\u0085no router bgp 64501",
    "tab": "show ip\troute",
    "nul": "show ip route\x00",
    "escape": "show ip route\x1b[2J",
    "DEL": "show ip route\x7f",
    "pipe": "show running-config | include bgp",
    "backtick": "show ip route `reboot`",
    "command substitution": "show ip route $(reboot)",
    "parameter expansion": "show ip route ${HOME}",
    "redirect": "show running-config > /etc/frr/frr.conf",
    "backslash": "show ip route \\",
    "zero width space": "show ip\u200broute",
    "bidi override": "show ip route \u202e",
    "do prefix": "do show ip route",
    "start-shell": "start-shell",
}


@pytest.mark.parametrize("name", sorted(INJECTIONS))
def test_injections_refused_by_execute_validation_check(name):
    cmd = INJECTIONS[name]
    with pytest.raises(Refused) as ei:
        check_show(P, cmd)
    msg = ei.value.message
    assert msg.startswith("command 1 ")
    assert "refused" in msg


@pytest.mark.parametrize("name", sorted(INJECTIONS))
def test_injections_refused_in_update_config_naming_the_item(name):
    cmds = ["ip prefix-list PL-X seq 5 permit 192.0.2.0/24", INJECTIONS[name]]
    with pytest.raises(Refused) as ei:
        plan_config(P, cmds)
    assert ei.value.index == 1
    assert ei.value.message.startswith("command 2 ")


def test_reasons_name_the_character():
    with pytest.raises(Refused, match="U\\+000A LINE FEED at position 13"):
        check_show(P, INJECTIONS["newline"])
    with pytest.raises(Refused, match="U\\+000D CARRIAGE RETURN"):
        check_show(P, INJECTIONS["carriage return"])
    with pytest.raises(Refused, match="U\\+2028 LINE SEPARATOR"):
        check_show(P, INJECTIONS["line separator"])
    with pytest.raises(Refused, match="';' \\(command separator\\) at position 13"):
        check_show(P, INJECTIONS["semicolon"])
    with pytest.raises(Refused, match="'&'"):
        check_show(P, INJECTIONS["and-and"])
    with pytest.raises(Refused, match="'do'"):
        check_show(P, "do show ip route")


@given(st.text(min_size=1, max_size=40).filter(lambda s: any(not (0x20 <= ord(c) <= 0x7E) for c in s)))
def test_any_non_printable_ascii_is_refused(s):
    with pytest.raises(Refused):
        sanitise(P, 0, "show ip route " + s)


@given(st.sampled_from([";", "|", "&", "`", "$(", "${", "\\", "<", ">"]), st.text(alphabet="abc ", max_size=5))
def test_metacharacters_anywhere_are_refused(meta, tail):
    with pytest.raises(Refused):
        sanitise(P, 0, "show bgp summary" + tail + meta + tail)


def test_question_mark_is_refused_naming_why():
    # interactive vtysh (the A1 session) treats '?' as its help key and never sends it: the
    # router would silently get '^65001_' for '^6500?1_'
    with pytest.raises(Refused, match="'\\?'.*help.*position 46"):
        plan_config(P, ["bgp as-path access-list AP1 seq 5 permit ^6500?1_"])
    with pytest.raises(Refused, match="help"):
        check_show(P, "show ip bgp ?")


def test_sanitise_normalises_spaces():
    assert sanitise(P, 0, "  show   ip  route ") == "show ip route"


def test_not_a_string_and_empty_and_too_long():
    with pytest.raises(Refused, match="must be a string"):
        sanitise(P, 0, 5)
    with pytest.raises(Refused, match="empty"):
        sanitise(P, 0, "   ")
    with pytest.raises(Refused, match="longer than"):
        sanitise(P, 0, "show ip route " + "x" * 600)


# -- read-only commands ---------------------------------------------------------------------

@pytest.mark.parametrize(
    "cmd,kind",
    [
        ("show running-config", "cli"),
        ("show running-config bgpd", "cli"),
        ("show ip route", "cli"),
        ("show ip route 198.19.7.0/24 json", "cli"),
        ("show bgp summary", "cli"),
        ("show bgp ipv4 unicast summary json", "cli"),
        ("show ip bgp neighbors 10.255.0.1 advertised-routes", "cli"),
        ("show ip ospf neighbor", "cli"),
        ("show interface to-nsite", "cli"),
        ("show ip prefix-list PL-TENANTS", "cli"),
        ("show route-map RM-TENANTS-OUT", "cli"),
        ("nft list ruleset", "nft"),
        ("nft list table inet fw", "nft"),
        ("nft list set inet fw tenant_blue", "nft"),
        ("nft -a list chain inet fw forward", "nft"),
    ],
)
def test_show_allowlist_accepts(cmd, kind):
    got = check_show(P, cmd)
    assert (got.command, got.kind) == (cmd, kind)


@pytest.mark.parametrize(
    "cmd,why",
    [
        ("show run", "not an allowlisted read-only command"),          # abbreviation
        ("configure terminal", "not an allowlisted"),
        ("router bgp 64500", "use update_config"),
        ("no router bgp 64500", "use update_config"),
        ("write memory", "not an allowlisted"),
        ("clear ip bgp *", "use update_config"),
        ("nft flush ruleset", "use update_config"),
        ("nft add element inet fw tenant_blue { 198.19.7.0/24 }", "use update_config"),
        ("ping 10.0.0.1", "not an allowlisted"),
        ("! comment", "comment"),
    ],
)
def test_show_allowlist_refuses(cmd, why):
    with pytest.raises(Refused, match=why):
        check_show(P, cmd)


# -- configuration plans --------------------------------------------------------------------

ONBOARD = [
    "interface to-nsite",
    "ip address 198.19.7.1/24",
    "exit",
    "ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24",
    "nft add element inet fw tenant_blue { 198.19.7.0/24 }",
]


def test_onboarding_commands_plan():
    steps = plan_config(P, ONBOARD)
    assert [(s.kind, s.context, s.nav) for s in steps] == [
        ("cli", "global", []),
        ("cli", "interface", []),
        ("cli", "interface", []),
        ("cli", "global", []),
        ("nft", "global", []),
    ]
    assert steps[4].argv == ["nft", "add", "element", "inet", "fw", "tenant_blue", "{", "198.19.7.0/24", "}"]


def test_brownfield_bgp_block_with_address_family():
    cmds = [
        "router bgp 64500",
        "neighbor RR peer-group",
        "neighbor RR remote-as 64500",
        "neighbor 10.255.0.1 peer-group RR",
        "address-family ipv4 unicast",
        "redistribute connected route-map RM-TENANTS-OUT",
        "neighbor RR next-hop-self",
        "exit-address-family",
        "neighbor RR update-source lo",
        "route-map RM-TENANTS-OUT permit 10",
        "match ip address prefix-list PL-TENANTS",
    ]
    steps = plan_config(P, cmds)
    assert [s.context for s in steps] == [
        "global", "bgp", "bgp", "bgp", "bgp", "bgp-af4u", "bgp-af4u", "bgp-af4u", "bgp", "global", "route-map",
    ]
    # the route-map line closes the bgp block: one explicit exit is sent before it
    assert steps[9].nav == ["exit"]


def test_global_line_closes_nested_blocks_with_explicit_exits():
    steps = plan_config(P, ["router bgp 1", "address-family ipv4 unicast", "network 192.0.2.0/24",
                            "ip route 10.9.0.0/16 blackhole"])
    assert steps[3].nav == ["exit", "exit"]
    assert steps[3].context == "global"


def test_case4_global_line_inside_bgp_block_refused_naming_both_lines():
    cmds = [
        "router bgp 64501",
        "neighbor 198.51.100.2 remote-as 64502",
        "ip prefix-list PL-D seq 5 permit 192.0.2.0/24",
        "neighbor 198.51.100.3 remote-as 64503",
    ]
    with pytest.raises(Refused) as ei:
        plan_config(P, cmds)
    e = ei.value
    assert e.index == 3
    assert "command 4 'neighbor 198.51.100.3 remote-as 64503'" in e.message
    assert "command 3 ('ip prefix-list PL-D seq 5 permit 192.0.2.0/24')" in e.message
    assert "command 1 ('router bgp 64501')" in e.message
    assert "nothing was applied" in e.message


def test_block_statement_without_its_block_refused():
    with pytest.raises(Refused, match="only valid inside a 'router bgp' block"):
        plan_config(P, ["neighbor 1.2.3.4 remote-as 65000"])
    with pytest.raises(Refused, match="'interface'"):
        plan_config(P, ["ip address 10.0.0.1/24"])


def test_misspelt_keyword_refused_before_sending():
    """Issue case 1's bad line is caught by the grammar (the device never sees it)."""
    cmds = [
        "ip prefix-list PL-A seq 5 permit 192.0.2.0/24",
        "ip prefix-list PL-B seq 5 permit 198.51.100.0/24",
        "router bgp 64501",
        "neighbor 198.51.100.2 route-map RM-IN inn",
        "neighbor 198.51.100.2 remote-as 64502",
    ]
    with pytest.raises(Refused) as ei:
        plan_config(P, cmds)
    assert ei.value.index == 3
    assert "not an allowlisted configuration statement" in ei.value.reason


def test_exit_and_noops():
    steps = plan_config(P, ["configure terminal", "exit", "! a comment", "# another", "end"])
    assert [s.kind for s in steps] == ["noop"] * 5
    steps = plan_config(P, ["router ospf", "end", "ip route 10.0.0.0/8 blackhole"])
    assert steps[1].nav == ["exit"] and steps[1].kind == "noop"
    assert steps[2].nav == []


def test_exit_address_family_outside_af_refused():
    with pytest.raises(Refused, match="outside an address-family"):
        plan_config(P, ["router bgp 1", "exit-address-family"])


def test_statement_valid_in_two_blocks_takes_the_open_one():
    s1 = plan_config(P, ["route-map X permit 10", "description tenants out"])
    assert s1[1].context == "route-map"
    s2 = plan_config(P, ["interface eth0", "description uplink"])
    assert s2[1].context == "interface"
    s3 = plan_config(P, ["router ospf", "redistribute connected"])
    s4 = plan_config(P, ["router bgp 1", "redistribute connected"])
    assert (s3[1].context, s4[1].context) == ("ospf", "bgp")


@pytest.mark.parametrize(
    "cmd",
    [
        "no router bgp 64500",
        "no router ospf",
        "no ip prefix-list PL-TENANTS",
        "no route-map RM-TENANTS-OUT",
        "nft flush ruleset",
        "nft delete table inet fw",
        "clear ip bgp *",
        "clear bgp *",
    ],
)
def test_destructive_statements_are_permitted_by_a1(cmd):
    steps = plan_config(P, [cmd])
    assert steps[0].destructive


@pytest.mark.parametrize(
    "cmd",
    [
        "ip route 10.5.0.0/16 10.1.1.2",
        "ip route 10.5.0.0/16 10.1.1.2 250",
        "no ip route 10.5.0.0/16 10.1.1.2",
        "ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24 le 32",
        "no ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24",
        "nft delete element inet fw tenant_red { 198.19.7.0/24, 198.19.8.0/24 }",
        "nft add element inet fw tenant_blue {198.19.7.0/24}",
    ],
)
def test_generic_global_statements(cmd):
    assert plan_config(P, [cmd])[0].kind in ("cli", "nft")


@pytest.mark.parametrize(
    "cmd",
    [
        "ip prefix-list PL-D seq 5 permit 192.0.2.0/33",     # prefix length out of range
        "ip route 300.1.1.0/24 10.0.0.1",
        "hostname r9",                                       # not in the grammar
        "nft add element inet fw tenant_blue { 198.19.7.0/24 ",
        "nft add table inet evil",
        "no rou bgp 64500",                                  # abbreviation
        "router bgp",
    ],
)
def test_not_in_grammar(cmd):
    with pytest.raises(Refused, match="not an allowlisted"):
        plan_config(P, [cmd])


def test_too_many_commands():
    with pytest.raises(Refused, match="more than"):
        plan_config(P, ["ip route 10.0.0.0/8 blackhole"] * 201)


def test_scrapli_definition_is_block_style_and_quoted():
    text = P.scrapli_definition()
    assert "prompt_pattern: '^[\\w\\.\\-]+#\\s*$'" in text
    assert "{" not in text  # no flow style: libscrapli's YAML reader refuses it
    assert "'is not running'" in text


# -- address-family blocks follow FRR's nodes (issue 12 §3) -----------------------------------


@pytest.mark.parametrize("cmds, refused_at, says", [
    # the call: FRR walks up to router bgp and applies both to ipv4 unicast
    (["router bgp 1", "address-family ipv6 unicast", "network 10.99.0.0/16", "neighbor RR weight 9"], 3,
     "'address-family ipv6 unicast' block opened by command 2 does not take this statement"),
    (["router bgp 1", "address-family ipv6 multicast", "redistribute connected"], 3,
     "'address-family ipv6 multicast' block opened by command 2 does not take"),
    (["router bgp 1", "address-family ipv4 multicast", "maximum-paths 4"], 3,
     "'address-family ipv4 multicast' block opened by command 2 does not take"),
    # a router bgp statement left the ipv6 block by walking up; the block's next line would be ipv4
    (["router bgp 1", "address-family ipv6 unicast", "neighbor X remote-as 2", "neighbor X activate"], 4,
     "command 3 ('neighbor X remote-as 2') is not taken in the 'address-family ipv6 unicast' block"),
    (["router bgp 1", "address-family ipv4 unicast", "network 2001:db8::/32"], 3,
     "only valid inside a 'address-family ipv6 unicast' or 'address-family ipv6 multicast' block"),
])
def test_a_line_frr_would_apply_to_another_address_family_is_refused(cmds, refused_at, says):
    with pytest.raises(Refused) as exc:
        plan_config(P, cmds)
    assert exc.value.index == refused_at - 1 and says in exc.value.reason, exc.value.reason


@pytest.mark.parametrize("cmds, contexts", [
    (["router bgp 1", "address-family ipv6 unicast", "neighbor RR weight 9", "network 2001:db8::/32",
      "exit-address-family", "network 10.99.0.0/16"], ["global", "bgp", "bgp-af6u", "bgp-af6u", "bgp-af6u", "bgp"]),
    # leaving ipv4 unicast by walking up changes nothing: router bgp statements apply to it
    (["router bgp 1", "address-family ipv4 unicast", "neighbor X remote-as 2", "neighbor X activate"],
     ["global", "bgp", "bgp", "bgp"]),
    (["router bgp 1", "address-family ipv6 unicast", "neighbor X remote-as 2", "address-family ipv6 unicast",
      "neighbor X activate"], ["global", "bgp", "bgp", "bgp", "bgp-af6u"]),
    (["router bgp 1", "address-family ipv6 unicast", "exit", "neighbor X weight 3"],
     ["global", "bgp", "bgp-af6u", "bgp"]),
    (["router bgp 1", "address-family ipv4 multicast", "network 10.0.0.0/8", "neighbor X activate"],
     ["global", "bgp", "bgp-af4m", "bgp-af4m"]),
])
def test_address_family_lines_land_in_the_block_frr_puts_them_in(cmds, contexts):
    assert [s.context for s in plan_config(P, cmds)] == contexts


#: issue 23: FRR commands that name a host path, and regular expressions with nested counts;
#: A1's allowlist takes none of them (as an update nor as a read)
HOST_PATHS_AND_REGEXES = [
    "copy /etc/shadow running-config", "copy running-config startup-config", "write memory", "write",
    "write file", "output file /tmp/x", "banner motd file /etc/shadow", "log file /tmp/x",
    "find (((.{1,100}){1,100}){1,100})",
    "bgp as-path access-list X permit (((.{1,100}){1,100}){1,100})",
    "bgp as-path access-list X permit .{1,1000}",
    "bgp community-list expanded C permit (((.{1,100}){1,100}){1,100})",
    "bgp large-community-list expanded L permit .{1,100}",
    "show bgp regexp (((.{1,100}){1,100}){1,100})", "show bgp regexp .{1,100}",
]


@pytest.mark.parametrize("cmd", HOST_PATHS_AND_REGEXES)
def test_a1_takes_no_host_path_command_and_no_counted_regex(cmd):
    with pytest.raises(Refused) as ei:
        plan_config(P, ["ip prefix-list PL-X seq 5 permit 192.0.2.0/24", cmd])
    assert ei.value.index == 1
    with pytest.raises(Refused):
        check_show(P, cmd)
    plan_config(P, ["bgp as-path access-list X permit ^65000_[0-9]+"])  # what A1 takes instead
