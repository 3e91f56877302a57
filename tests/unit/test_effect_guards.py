"""The blocklist ablation's judgement of effects (issue 23): what an FRR or nftables change
amounts to (ani.adapters.frrguard, ani.adapters.nftguard), judged by identity, not names."""

from __future__ import annotations

from ani.adapters import frrguard, nftguard
from ani.adapters.blocklist import BlockRules

RUNNING = """frr version 8.4.4
hostname r1
ip prefix-list PL seq 5 permit 10.0.0.0/8
ip prefix-list PL seq 10 permit 192.0.2.0/24
ip prefix-list OTHER seq 5 permit 0.0.0.0/0
route-map RM permit 10
 match ip address prefix-list PL
exit
route-map RM deny 20
exit
interface eth-r2
 ip address 10.1.12.1/30
exit
router bgp 64501
 neighbor 10.1.12.2 remote-as 64502
exit
"""


def _without(text: str, *lines: str) -> str:
    out, skip = [], False
    for ln in text.splitlines():
        if ln in lines:
            skip = ln.startswith("route-map")
            continue
        if skip and ln.startswith((" ", "exit")):
            continue
        skip = False
        out.append(ln)
    return "\n".join(out) + "\n"


def test_a_prefix_list_emptied_entry_by_entry_is_its_removal() -> None:
    after = _without(RUNNING, "ip prefix-list PL seq 5 permit 10.0.0.0/8", "ip prefix-list PL seq 10 permit 192.0.2.0/24")
    assert frrguard.effective_commands(RUNNING, after) == ["no ip prefix-list PL"]
    hit = frrguard.blocked_change(RUNNING, after, BlockRules.load().rules)
    assert hit is not None and hit[0] == "no ip prefix-list PL" and "prefix-list" in hit[2]
    # one entry of two: not a removal
    assert frrguard.effective_commands(RUNNING, _without(RUNNING, "ip prefix-list PL seq 5 permit 10.0.0.0/8")) == []


def test_a_route_map_emptied_entry_by_entry_is_its_removal() -> None:
    after = _without(RUNNING, "route-map RM permit 10", "route-map RM deny 20")
    assert frrguard.effective_commands(RUNNING, after) == ["no route-map RM"]
    assert frrguard.effective_commands(RUNNING, _without(RUNNING, "route-map RM deny 20")) == []


def test_processes_neighbors_and_states() -> None:
    no_bgp = _without(RUNNING, "router bgp 64501", " neighbor 10.1.12.2 remote-as 64502")
    assert frrguard.effective_commands(RUNNING, no_bgp) == ["no router bgp 64501"]  # not also the neighbor
    no_nei = _without(RUNNING, " neighbor 10.1.12.2 remote-as 64502")
    assert frrguard.effective_commands(RUNNING, no_nei) == ["no neighbor 10.1.12.2"]
    shut = RUNNING.replace(" ip address 10.1.12.1/30\n", " ip address 10.1.12.1/30\n shutdown\n")
    assert frrguard.effective_commands(RUNNING, shut) == ["shutdown"]
    assert frrguard.effective_commands(RUNNING, RUNNING + "no ip forwarding\n") == ["no ip forwarding"]
    # an interface that leaves the running config is not judged removed (it still exists)
    assert frrguard.effective_commands(RUNNING, _without(RUNNING, "interface eth-r2", " ip address 10.1.12.1/30")) == []
    assert frrguard.effective_commands(RUNNING, RUNNING + "ip prefix-list NEW seq 5 permit 10.0.0.0/8\n") == []


def _rs(items: list[dict], text: str = "") -> nftguard.Ruleset:
    return nftguard.Ruleset(text, items)


TABLE = {"table": {"family": "inet", "name": "fw", "handle": 1}}
CHAIN = {"chain": {"family": "inet", "table": "fw", "name": "input", "handle": 1}}
RULE = {"rule": {"family": "inet", "table": "fw", "chain": "input", "handle": 3}}
SET = {"set": {"family": "inet", "table": "fw", "name": "ok", "handle": 2, "elem": ["10.0.0.1", "10.0.0.2"]}}
BEFORE = _rs([TABLE, CHAIN, RULE, SET], "table inet fw {\n\tset ok {\n")


def test_a_table_deleted_and_recreated_under_the_same_names_is_deleted() -> None:
    again = _rs([{"table": {**TABLE["table"], "handle": 7}}, CHAIN, RULE, SET], BEFORE.text)
    assert nftguard.effective_commands(BEFORE, again) == ["nft delete table inet fw"]
    assert nftguard.effective_commands(BEFORE, BEFORE) == []


def test_a_chain_or_set_refilled_after_a_flush_was_flushed() -> None:
    refilled = _rs([TABLE, CHAIN, {"rule": {**RULE["rule"], "handle": 9}},
                    {"set": {**SET["set"], "elem": [f"10.1.{i // 256}.{i % 256}" for i in range(5000)]}}], BEFORE.text)
    assert nftguard.effective_commands(BEFORE, refilled) == ["nft flush chain inet fw input", "nft flush set inet fw ok"]


def test_a_dormant_table_is_judged_and_blocked() -> None:
    # nft 1.0.6's JSON prints the table's name as its flags: the text listing is read
    dormant = _rs([TABLE, CHAIN, RULE, SET], "table inet fw {\n\tflags dormant\n\n\tset ok {\n")
    assert nftguard.effective_commands(BEFORE, dormant) == ["nft add table inet fw { flags dormant; }"]
    nft_rules = [(rx, r) for rx, r in BlockRules.load().rules if "nft" in rx.pattern]
    hit = nftguard.blocked_change(BEFORE, dormant, nft_rules)
    assert hit is not None and "dormant" in hit[2]


def test_an_unreadable_ruleset_after_the_call_is_blocked() -> None:
    hit = nftguard.blocked_change(BEFORE, None, [])
    assert hit is not None and hit[1] == nftguard.UNREADABLE_RULE and "could not be read" in hit[2]
