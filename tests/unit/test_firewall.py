"""ani.device.firewall: render to an nft script, parse ``nft -j list ruleset`` back.

Fixtures in tests/data/nft were captured from the real nft 1.0.6 (``capture.sh``): each
``NAME.nft`` loaded into an empty network namespace, ``NAME.json`` what ``nft -j list ruleset``
printed then. So ``parse_ruleset(NAME.json) == model`` and ``render(model) == NAME.nft`` together
say that rendering, loading into nft and parsing give the model back.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from pathlib import Path

import pytest

from ani.device.firewall import diff, parse_ruleset, render, replace_script
from ani.device.model import Firewall, FirewallRule, FirewallSet

NFT = Path(__file__).parent.parent / "data" / "nft"


def fixture(name: str) -> str:
    return (NFT / name).read_text()


def nets(*xs: str) -> list[IPv4Network]:
    return [IPv4Network(x) for x in xs]


EDGE = Firewall(
    sets={
        "tenant_blue": FirewallSet(elements=nets("198.18.11.0/24", "198.18.12.0/24", "198.18.13.0/24", "198.18.14.0/24")),
        "tenant_red": FirewallSet(elements=nets("198.18.21.0/24", "198.18.22.0/24", "198.18.23.0/24", "198.18.24.0/24")),
    },
    forward_rules=[
        FirewallRule(saddr_set="tenant_blue", daddr_set="tenant_red", action="drop"),
        FirewallRule(saddr_set="tenant_red", daddr_set="tenant_blue", action="drop"),
    ],
)

FULL = Firewall(
    sets={
        "a": FirewallSet(elements=nets("10.0.0.1/32", "10.1.0.0/16", "10.2.0.0/25", "10.2.0.128/25", "0.0.0.0/8")),
        "b": FirewallSet(),
    },
    forward_policy="drop",
    forward_rules=[
        FirewallRule(saddr_set="a", action="accept"),
        FirewallRule(daddr_set="b", action="drop"),
        FirewallRule(saddr_set="a", daddr_set="b", action="accept"),
    ],
)


def test_brownfield_edge_ruleset_round_trip():
    fw, unmodelled = parse_ruleset(fixture("edge.json"))
    assert unmodelled == []
    assert fw == EDGE
    # the generator's text and ours differ only in indentation: nft reads both to the same JSON
    assert render(EDGE).split() == fixture("edge.nft").split()


def test_policy_drop_host_elements_single_matches_empty_set():
    fw, unmodelled = parse_ruleset(fixture("full.json"))
    assert unmodelled == []
    assert fw == FULL
    assert render(FULL) == fixture("full.nft")
    assert "10.0.0.1," in render(FULL)  # a /32 is written as a bare address, as nft prints it


def test_no_ruleset_is_no_firewall():
    assert parse_ruleset(fixture("empty.json")) == (None, [])


def test_table_without_forward_chain_reads_as_accept_with_no_rules():
    fw, unmodelled = parse_ruleset(fixture("nochain.json"))
    assert unmodelled == []
    assert fw == Firewall(sets={"a": FirewallSet(elements=nets("10.0.0.0/8"))})
    assert "chain forward {\n    type filter hook forward priority 0; policy accept;\n  }" in render(fw)


def test_everything_the_model_cannot_express_is_listed_not_dropped():
    fw, unmodelled = parse_ruleset(fixture("extra.json"))
    assert unmodelled == [
        "nft / table ip nat",
        "nft / table inet fw / counter cnt",
        "nft / table inet fw / set a / element 10.0.0.1-10.0.0.5",
        "nft / table inet fw / set c / flags (none)",
        "nft / table inet fw / set d / flags interval,timeout",
        "nft / table inet fw / set e / type ipv6_addr",
        "nft / table inet fw / chain input",
        "nft / table inet fw / chain forward / type filter hook forward priority 10; policy accept",
        "nft / table inet fw / chain forward / rule ip saddr @a ip daddr @c counter drop",
        "nft / table inet fw / chain forward / rule tcp dport 22 drop",
        'nft / table inet fw / chain forward / rule ip saddr @a drop comment "hello"',
        "nft / table inet fw / chain forward / rule ip daddr != @a drop",
    ]
    assert fw == Firewall()  # the table exists; none of its parts is modelled


def test_rule_naming_an_unmodelled_set_stays_unmodelled():
    doc = {"nftables": [
        {"table": {"family": "inet", "name": "fw"}},
        {"set": {"family": "inet", "table": "fw", "name": "v6", "type": "ipv6_addr", "flags": ["interval"]}},
        {"chain": {"family": "inet", "table": "fw", "name": "forward", "type": "filter", "hook": "forward",
                   "prio": 0, "policy": "accept"}},
        {"rule": {"family": "inet", "table": "fw", "chain": "forward", "expr": [
            {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": "@v6"}},
            {"drop": None}]}},
    ]}
    fw, unmodelled = parse_ruleset(doc)
    assert fw == Firewall()
    assert unmodelled == ["nft / table inet fw / set v6 / type ipv6_addr",
                          "nft / table inet fw / chain forward / rule ip saddr @v6 drop"]


def test_daddr_before_saddr_is_not_the_modelled_form():
    doc = {"nftables": [
        {"table": {"family": "inet", "name": "fw"}},
        {"set": {"family": "inet", "table": "fw", "name": "a", "type": "ipv4_addr", "flags": ["interval"]}},
        {"rule": {"family": "inet", "table": "fw", "chain": "forward", "expr": [
            {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "daddr"}}, "right": "@a"}},
            {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": "@a"}},
            {"drop": None}]}},
    ]}
    fw, unmodelled = parse_ruleset(doc)
    assert fw is not None and fw.forward_rules == []
    assert unmodelled == ["nft / table inet fw / chain forward / rule ip daddr @a ip saddr @a drop"]


def test_replace_script_replaces_only_table_inet_fw_in_one_transaction():
    # replace.json: replace.nft (table ip nat + an old inet fw) then replace-step.nft in one nft -f
    assert fixture("replace-step.nft") == replace_script(FULL)
    assert replace_script(FULL).startswith("table inet fw\ndelete table inet fw\ntable inet fw {\n")
    fw, unmodelled = parse_ruleset(fixture("replace.json"))
    assert fw == FULL
    assert unmodelled == ["nft / table ip nat"]  # other tables are kept, and still reported


def test_replace_script_none_deletes_the_table():
    assert replace_script(None) == "table inet fw\ndelete table inet fw\n"


def test_not_a_ruleset():
    with pytest.raises(ValueError):
        parse_ruleset("[]")
    with pytest.raises(ValueError):
        parse_ruleset("not json")


def test_diff_lists_elements_policy_and_rules():
    new = EDGE.model_copy(deep=True)
    new.sets["tenant_blue"] = FirewallSet(elements=[*EDGE.sets["tenant_blue"].elements, IPv4Network("192.0.2.0/24")])
    assert diff(EDGE, new) == ["+ nft / table inet fw / set tenant_blue / element 192.0.2.0/24"]
    assert diff(EDGE, EDGE) == []
    d = diff(EDGE, FULL)
    assert "- nft / table inet fw / set tenant_red" in d
    assert "+ nft / table inet fw / set a / element 10.0.0.1" in d
    assert "+ nft / table inet fw / chain forward / policy drop" in d
    assert diff(None, FULL)[0] == "+ nft / table inet fw"
    assert diff(FULL, None)[0] == "- nft / table inet fw"


def test_a_faults_substrate_table_is_not_configuration():
    """A packet-loss fault's netdev table (ani.faults.kinds.packet_loss) is below the router:
    not in the model, not an unmodelled line; another foreign table still is one."""
    from ani.device.firewall import SUBSTRATE_TABLE_PREFIX, parse_ruleset

    table = f"{SUBSTRATE_TABLE_PREFIX}loss_s3_to_c2"
    doc = {"nftables": [
        {"metainfo": {"json_schema_version": 1}},
        {"table": {"family": "netdev", "name": table, "handle": 1}},
        {"chain": {"family": "netdev", "table": table, "name": "loss", "handle": 1, "type": "filter",
                   "hook": "ingress", "dev": "to-c2", "prio": -500, "policy": "accept"}},
        {"rule": {"family": "netdev", "table": table, "chain": "loss", "handle": 2, "expr": [{"drop": None}]}},
        {"table": {"family": "netdev", "name": "mine", "handle": 2}},
    ]}
    fw, unmodelled = parse_ruleset(doc)
    assert fw is None
    assert unmodelled == ["nft / table netdev mine"]
