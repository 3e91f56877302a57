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


# -- issue 23 second pass: what a firewall change amounts to beyond deletions ---------------

_FW = {"family": "inet", "table": "fw"}
_DROP4 = [{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": "10.0.0.1"}},
          {"counter": None}, {"drop": None}]
_DROP5 = [{"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}}, "right": "10.0.0.2"}},
          {"drop": None}]


def _fw(forward: list[tuple[int, list]], policy: str = "accept", extra: list[dict] | None = None) -> nftguard.Ruleset:
    """table inet fw: chain forward (base, ``policy``) with rules (handle, statements), as
    ``nft -s -j list ruleset`` prints them (nft 1.0.6)."""
    items: list[dict] = [{"table": {"family": "inet", "name": "fw", "handle": 1}},
                         {"chain": {**_FW, "name": "forward", "handle": 2, "type": "filter", "hook": "forward",
                                    "prio": 0, "policy": policy}}]
    items += extra or []
    items += [{"rule": {**_FW, "chain": "forward", "handle": h, "expr": e}} for h, e in forward]
    return _rs(items, "table inet fw {\n")


FW = _fw([(4, _DROP4), (5, _DROP5)])
NFT_RULES = [(rx, r) for rx, r in BlockRules.load().rules if "nft" in rx.pattern]


def test_rules_replaced_under_their_handles_are_deleted() -> None:
    # the probe: `nft replace rule inet fw forward handle 4 accept` and `... handle 5 accept`
    replaced = _fw([(4, [{"accept": None}]), (5, [{"accept": None}])])
    assert nftguard.effective_commands(FW, replaced) == ["nft flush chain inet fw forward"]
    assert nftguard.blocked_change(FW, replaced, NFT_RULES) is not None
    # one rule replaced by another drop: a rule deleted and one added, not destructive by itself
    assert nftguard.effective_commands(FW, _fw([(4, _DROP5), (5, _DROP5)])) == []
    assert nftguard.effective_commands(FW, FW) == []


def test_an_accept_inserted_before_the_rules_is_judged() -> None:
    # the probe: `nft insert rule inet fw forward accept` (and with counter, log)
    for stmts in ([{"accept": None}], [{"counter": None}, {"accept": None}],
                  [{"log": {"prefix": "x"}}, {"counter": None}, {"accept": None}]):
        ahead = _fw([(6, stmts), (4, _DROP4), (5, _DROP5)])
        assert nftguard.effective_commands(FW, ahead) == ["nft insert rule inet fw forward accept"], stmts
        hit = nftguard.blocked_change(FW, ahead, NFT_RULES)
        assert hit is not None and "they stop" in hit[2]
    # between the rules: the rules after it stop
    assert nftguard.effective_commands(FW, _fw([(4, _DROP4), (6, [{"accept": None}]), (5, _DROP5)])) == \
        ["nft insert rule inet fw forward accept"]
    # appended after every rule, or conditional: not judged (docs: what it does not stop)
    assert nftguard.effective_commands(FW, _fw([(4, _DROP4), (5, _DROP5), (6, [{"accept": None}])])) == []
    cond = [{"match": {"op": "==", "left": {"meta": {"key": "iifname"}}, "right": "lo"}}, {"accept": None}]
    assert nftguard.effective_commands(FW, _fw([(6, cond), (4, _DROP4), (5, _DROP5)])) == []


def test_a_jump_or_goto_to_an_accepting_chain_is_an_accept() -> None:
    def chain(name: str, handle: int, rules: list[tuple[int, list]]) -> list[dict]:
        return [{"chain": {**_FW, "name": name, "handle": handle}},
                *({"rule": {**_FW, "chain": name, "handle": h, "expr": e}} for h, e in rules)]

    acc = chain("acc", 7, [(8, [{"accept": None}])])
    via = chain("via", 9, [(10, [{"counter": None}]), (11, [{"goto": {"target": "acc"}}])])
    for verb, target, extra in (("jump", "acc", acc), ("goto", "acc", acc), ("jump", "via", acc + via)):
        after = _fw([(6, [{"counter": None}, {verb: {"target": target}}]), (4, _DROP4), (5, _DROP5)], extra=extra)
        assert nftguard.effective_commands(FW, after) == ["nft insert rule inet fw forward accept"], (verb, target)
    # a chain that drops, returns, or only matches conditionally: not an accept
    for rules in ([(8, [{"drop": None}])], [(8, [{"return": None}])], [(8, _DROP5)], []):
        after = _fw([(6, [{"jump": {"target": "x"}}]), (4, _DROP4), (5, _DROP5)], extra=chain("x", 7, rules))
        assert nftguard.effective_commands(FW, after) == [], rules
    # a jump loop ends (bounded depth), not an accept
    loop = chain("a", 7, [(8, [{"jump": {"target": "b"}}])]) + chain("b", 9, [(10, [{"jump": {"target": "a"}}])])
    assert nftguard.effective_commands(FW, _fw([(6, [{"jump": {"target": "a"}}]), (4, _DROP4)], extra=loop)) == []


def test_a_chain_whose_policy_becomes_drop_is_judged() -> None:
    # the probe: `nft add chain inet fw forward '{ policy drop; }'` (all forwarding stops)
    dropping = _fw([(4, _DROP4), (5, _DROP5)], policy="drop")
    assert nftguard.effective_commands(FW, dropping) == ["nft add chain inet fw forward { policy drop; }"]
    hit = nftguard.blocked_change(FW, dropping, NFT_RULES)
    assert hit is not None and "drop every packet" in hit[2]
    assert nftguard.effective_commands(dropping, dropping) == []
    assert nftguard.effective_commands(dropping, FW) == []  # drop -> accept: not listed
    # a new base chain with policy drop is not judged (a firewall being built; docs)
    new = _fw([(4, _DROP4), (5, _DROP5)], extra=[{"chain": {**_FW, "name": "input", "handle": 9, "type": "filter",
                                                            "hook": "input", "prio": 0, "policy": "drop"}}])
    assert nftguard.effective_commands(FW, new) == []


BGP = """router bgp 64500
 neighbor RR remote-as 64500
 neighbor 2001:db8::2 remote-as 64501
 address-family ipv4 unicast
  neighbor RR route-map IN in
 exit-address-family
 address-family ipv6 unicast
  neighbor 2001:db8::2 activate
 exit-address-family
exit
"""


def test_bgp_shutdown_and_deactivated_neighbors_are_judged() -> None:
    rules = BlockRules.load().rules
    shut = BGP.replace(" neighbor RR remote-as 64500\n", " bgp shutdown\n neighbor RR remote-as 64500\n")
    assert frrguard.effective_commands(BGP, shut) == ["bgp shutdown"]
    assert frrguard.blocked_change(BGP, shut, rules) is not None
    # ipv4 unicast is active by default: `no neighbor RR activate` is a line that appears
    off4 = BGP.replace("  neighbor RR route-map IN in\n", "  no neighbor RR activate\n  neighbor RR route-map IN in\n")
    assert frrguard.effective_commands(BGP, off4) == ["no neighbor RR activate"]
    hit = frrguard.blocked_change(BGP, off4, rules)
    assert hit is not None and "withdraws" in hit[2]
    # ipv6 unicast is not: its explicit activation goes
    off6 = BGP.replace("  neighbor 2001:db8::2 activate\n", "")
    assert frrguard.effective_commands(BGP, off6) == ["no neighbor 2001:db8::2 activate"]
    # a neighbor removed whole is judged as that, not also deactivated
    gone = off6.replace(" neighbor 2001:db8::2 remote-as 64501\n", "")
    assert frrguard.effective_commands(BGP, gone) == ["no neighbor 2001:db8::2"]
    # a new neighbor configured inactive withdraws nothing
    new = off4.replace(" neighbor RR remote-as 64500\n", "")
    assert frrguard.effective_commands(new.replace("  no neighbor RR activate\n", ""), off4) == []
    # explicit ipv4 activations that go because the family became active by default again
    explicit = BGP.replace(" neighbor RR remote-as 64500\n", " no bgp default ipv4-unicast\n neighbor RR remote-as 64500\n") \
        .replace("  neighbor RR route-map IN in\n", "  neighbor RR activate\n  neighbor RR route-map IN in\n")
    assert frrguard.effective_commands(explicit, BGP) == []
    assert frrguard.effective_commands(explicit, explicit.replace("  neighbor RR activate\n", "")) == \
        ["no neighbor RR activate"]


def test_the_shape_rules_name_every_group_reset_and_session_stop() -> None:
    # FRR 8.4.4's `clear bgp` targets (list permutations): more than one peer is blocked
    rules = BlockRules.load()
    for line in ("clear bgp 64500", "clear ip bgp 64500", "clear bgp *", "clear bgp ipv4 unicast 64500 soft",
                 "clear bgp external", "clear bgp ipv6 unicast peer-group RR", "clear bgp vrf blue *",
                 "bgp shutdown", "bgp shutdown message maintenance", "no neighbor RR activate",
                 "clear ip ospf neighbor", "clear ip ospf interface", "clear ip ospf 1 process",
                 "nft insert rule inet fw forward accept", "nft insert rule fw forward counter accept",
                 "nft add rule inet fw forward position 4 accept", "nft replace rule inet fw forward handle 4 accept",
                 "nft add chain inet fw forward { policy drop; }"):
        assert rules.check(line) is not None, line
    for line in ("clear bgp 10.0.0.2", "clear bgp 10.0.0.2 soft in", "clear bgp vrf 100 10.0.0.2",
                 "clear bgp ipv6 unicast 2001:db8::2", "bgp default shutdown", "neighbor RR activate",
                 "clear ip ospf neighbor 10.0.0.2", "clear ip ospf interface eth0",
                 "nft add rule inet fw forward accept", "nft insert rule inet fw forward ip saddr 10.0.0.9 accept",
                 "nft add chain inet fw forward { policy accept; }"):
        assert rules.check(line) is None, line
