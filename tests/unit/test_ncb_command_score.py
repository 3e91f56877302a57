"""The NetConfBench command score (ani.netconfbench.command_score): wildcards, the
solution's end state, precision / recall / F1 and the best over solutions."""

from __future__ import annotations

import pytest

from ani.device.parse import parse
from ani.netconfbench.command_score import applied_changes, command_score, solution_changes, wildcard

R1 = """hostname r1
interface eth0
 ip address 10.0.0.1/30
router bgp 65001
 neighbor 10.0.0.2 remote-as 65002
 address-family ipv4 unicast
  network 10.1.0.0/24
 exit-address-family
exit
ip route 192.0.2.0/24 10.0.0.2
"""


@pytest.fixture
def initial():
    return {"r1": parse(R1)}


@pytest.mark.parametrize("a, b", [
    ("+ ip prefix-list BLOCK permit 10.0.0.0/8", "+ ip prefix-list DENY-10 permit 10.0.0.0/8"),
    ("+ route-map A deny 10 / match ip address prefix-list X", "+ route-map B deny 20 / match ip address prefix-list Y"),
    ("+ router bgp 1 / address-family ipv4 unicast / neighbor 10.0.0.2 route-map IN in",
     "+ router bgp 1 / address-family ipv4 unicast / neighbor 10.0.0.2 route-map POLICY in"),
    ("+ access-list 10 seq 5 permit 10.0.0.0/8", "+ access-list FILTER seq 10 permit 10.0.0.0/8"),
    ("+ bgp community-list standard C1 seq 5 permit 65000:1", "+ bgp community-list standard KEEP seq 10 permit 65000:1"),
])
def test_free_identifiers_are_wildcards(a, b):
    assert wildcard(a) == wildcard(b)


@pytest.mark.parametrize("a, b", [
    ("+ ip prefix-list X permit 10.0.0.0/8", "+ ip prefix-list X deny 10.0.0.0/8"),
    ("+ route-map A deny 10 / set local-preference 200", "+ route-map A deny 10 / set local-preference 150"),
    ("+ ip route 192.0.2.0/24 10.0.0.2", "+ ip route 192.0.2.0/24 10.0.0.6"),
    ("+ router bgp 1 / neighbor 10.0.0.2 remote-as 2", "+ router bgp 1 / neighbor 10.0.0.3 remote-as 2"),
])
def test_what_is_not_free_still_differs(a, b):
    assert wildcard(a) != wildcard(b)


def test_solution_changes_normalise_like_the_running_config(initial):
    got = solution_changes(initial, {"r1": [
        "router bgp 65001", "network 10.2.0.0/24",              # written under router bgp
        "ip route 203.0.113.0 255.255.255.252 10.0.0.2 100",   # Cisco mask spelling
        "no ip route 192.0.2.0/24 10.0.0.2",
        "router bgp 65001", "network 10.1.0.0/24",              # already there: no change
    ]})
    assert sorted(got["r1"]) == sorted([
        "+ router bgp 65001 / address-family ipv4 unicast / network 10.2.0.0/24",
        "+ ip route 203.0.113.0/30 10.0.0.2 100",
        "- ip route 192.0.2.0/24 10.0.0.2",
    ])


def test_solution_of_an_unknown_router_is_named(initial):
    with pytest.raises(KeyError, match="'r9' is not a router of the run"):
        solution_changes(initial, {"r9": ["ip route 1.0.0.0/8 10.0.0.2"]})


def test_applied_changes_are_the_config_diff(initial):
    final = {"r1": parse(R1 + "ip route 198.51.100.0/24 10.0.0.2\n")}
    assert applied_changes(initial, final) == {"r1": ["+ ip route 198.51.100.0/24 10.0.0.2"]}
    assert applied_changes(initial, initial) == {"r1": []}


def test_score_precision_recall_f1_and_what_is_missing():
    applied = {"r1": ["+ ip route 1.0.0.0/8 10.0.0.2", "+ ip route 2.0.0.0/8 10.0.0.2", "+ hostname x"]}
    sol = {"r1": ["+ ip route 1.0.0.0/8 10.0.0.2", "+ ip route 2.0.0.0/8 10.0.0.2",
                  "+ ip route 3.0.0.0/8 10.0.0.2", "+ ip route 4.0.0.0/8 10.0.0.2"]}
    s = command_score(applied, [("expert-0001", sol)])
    assert (s.precision, s.recall) == (2 / 3, 0.5)
    assert s.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert s.unmatched == ["r1: + hostname x"]
    assert s.missing == ["r1: + ip route 3.0.0.0/8 10.0.0.2", "r1: + ip route 4.0.0.0/8 10.0.0.2"]
    assert s.solution_id == "expert-0001"


def test_routers_are_part_of_the_command():
    s = command_score({"r2": ["+ ip route 1.0.0.0/8 10.0.0.2"]}, [("s", {"r1": ["+ ip route 1.0.0.0/8 10.0.0.2"]})])
    assert s.f1 == 0.0


def test_best_over_solutions_first_on_a_tie():
    applied = {"r1": ["+ ip route 1.0.0.0/8 eth0", "+ ip route 1.0.0.0/8 eth1 100"]}
    sols = [
        ("expert-0001", {"r1": ["+ ip route 1.0.0.0/8 10.0.0.2", "+ ip route 1.0.0.0/8 10.0.0.6 100"]}),
        ("harvested-0007", {"r1": ["+ ip route 1.0.0.0/8 eth0", "+ ip route 1.0.0.0/8 eth1 100"]}),
        ("harvested-0008", {"r1": ["+ ip route 1.0.0.0/8 eth0", "+ ip route 1.0.0.0/8 eth1 100"]}),
    ]
    s = command_score(applied, sols)
    assert (s.solution_id, s.f1) == ("harvested-0007", 1.0)
    assert s.per_solution == {"expert-0001": 0.0, "harvested-0007": 1.0, "harvested-0008": 1.0}
    assert command_score(applied, []) is None


def test_multiset_a_repeated_command_counts_once_per_occurrence():
    s = command_score({"r1": ["+ ip prefix-list A permit 10.0.0.0/8", "+ ip prefix-list B permit 10.0.0.0/8"]},
                      [("s", {"r1": ["+ ip prefix-list P permit 10.0.0.0/8"]})])
    assert (s.precision, s.recall) == (0.5, 1.0)


@pytest.mark.parametrize("applied, wanted, prf", [
    ([], ["+ ip route 1.0.0.0/8 10.0.0.2"], (0.0, 0.0, 0.0)),
    ([], [], (1.0, 1.0, 1.0)),
    (["+ ip route 1.0.0.0/8 10.0.0.2"], [], (0.0, 1.0, 0.0)),
    (["+ ip route 9.0.0.0/8 10.0.0.2"], ["+ ip route 1.0.0.0/8 10.0.0.2"], (0.0, 0.0, 0.0)),
])
def test_f1_edge_cases(applied, wanted, prf):
    s = command_score({"r1": applied}, [("s", {"r1": wanted})])
    assert (s.precision, s.recall, s.f1) == prf


def test_end_to_end_renamed_policy_matches(initial):
    expert = solution_changes(initial, {"r1": [
        "ip prefix-list BLOCK seq 5 deny 10.9.0.0/16", "ip prefix-list BLOCK seq 10 permit 0.0.0.0/0 le 32",
        "route-map IN permit 10", "match ip address prefix-list BLOCK",
        "router bgp 65001", "address-family ipv4 unicast", "neighbor 10.0.0.2 route-map IN in"]})
    run = solution_changes(initial, {"r1": [
        "ip prefix-list F seq 1 deny 10.9.0.0/16", "ip prefix-list F seq 2 permit 0.0.0.0/0 le 32",
        "route-map POL permit 5", " match ip address prefix-list F",
        "router bgp 65001", " address-family ipv4 unicast", "  neighbor 10.0.0.2 route-map POL in"]})
    s = command_score(run, [("expert-0001", expert)])
    assert s.f1 == 1.0 and len(s.applied) == 4


def test_a_default_switched_off_is_a_line_of_the_solution():
    # FRR prints 'no bgp ebgp-requires-policy' in its running config: a run's diff of a new
    # BGP instance has it (bgp-neighbor-network at a1 scored F1 0.91 without this)
    initial = {"r1": parse("hostname r1\n")}
    got = solution_changes(initial, {"r1": ["router bgp 65001", "no bgp ebgp-requires-policy",
                                            "neighbor 10.0.0.2 remote-as 65002", "no neighbor 10.0.0.2 shutdown"]})
    assert sorted(got["r1"]) == ["+ router bgp 65001 / neighbor 10.0.0.2 remote-as 65002",
                                 "+ router bgp 65001 / no bgp ebgp-requires-policy"]
