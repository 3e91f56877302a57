"""Every negatable rule of A1's allowlist (adapters/frr.yaml) against real FRR 8.4.4.

A rule marked ``negatable: true`` also permits ``no <statement>``, with the statement's arguments.
FRR does not always take the arguments back (``no description hello`` under ``interface`` or
``route-map`` is "% Unknown command"; only bare ``no description`` is accepted), and then A1
accepts a line the device refuses. This module applies, on r1 of tests/data/a1_pair.yaml, a
concrete instance of every negatable rule (every alternative of its regex that could matter),
then its ``no`` form, and asserts that FRR accepts both (vtysh exit 0, no ``%`` line other than
the platform's warning patterns) and that the allowlist (plan_config) allows both. The explicit
``no ...`` rules are checked the same way, and for the rules whose full negation FRR refuses,
that FRR refuses it AND the allowlist refuses it.

CASES is the table; ``test_every_negatable_rule_has_a_case`` (no lab) fails when a negatable or
``no ...`` rule is added to the YAML without a case here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ani.adapters.allowlist import Refused, plan_config
from ani.adapters.cli_session import classify
from ani.adapters.platform import load_platform

pytestmark = pytest.mark.integration

LAB_TOPOLOGY, LAB_PREFIX = Path(__file__).parent.parent / "data" / "a1_pair.yaml", "neg"
LAB_NETCONF = False

P = load_platform("frr")
R = "r1"

IF = ["interface neg0"]
IFL = ["interface lo"]
RM = ["route-map RM-NEG permit 10"]
BGP = ["router bgp 64501"]
AF = ["router bgp 64501", "address-family ipv4 unicast"]
AF6 = ["router bgp 64501", "address-family ipv6 unicast"]
OSPF = ["router ospf"]

# objects the cases refer to, created once on r1 (each case removes what it adds)
SETUP = [
    "interface neg0",
    "exit",
    "ip prefix-list PL-NEG seq 100 permit 10.0.0.0/8",
    "ipv6 prefix-list PL6-NEG seq 100 permit 2001:db8::/32",
    "access-list ACL-NEG seq 100 permit any",
    "ipv6 access-list ACL6-NEG seq 100 permit any",
    "bgp community-list standard CL-NEG seq 100 permit 64501:100",
    "bgp as-path access-list AP-NEG seq 100 permit ^64502$",
    "route-map RM-NEG permit 10",
    "exit",
    "route-map RM-CALLED permit 10",
    "exit",
    "router bgp 64501",
    "neighbor 192.0.2.1 remote-as 64999",           # eBGP peer for neighbor statements
    "neighbor 192.0.2.5 remote-as internal",        # iBGP peer (route-reflector-client)
    "neighbor PG-NEG peer-group",
    "neighbor PG-NEG remote-as external",
    "exit",
]

N = "192.0.2.1"   # eBGP neighbor
NI = "192.0.2.5"  # iBGP neighbor

# restore r1's OSPF network statement (an interface `ip ospf area` needs it gone)
OSPF_NET = ["router ospf", "network 10.255.0.1/32 area 0"]


@dataclass
class Case:
    rule: str                     # the exact pattern of the rule in adapters/frr.yaml
    ctx: list[str]                # lines that open the statement's block (empty: global)
    pos: str | None               # the positive statement (None: an explicit `no` rule only)
    neg: str | None = None        # the negation sent; default "no " + pos
    pre: list[str] = field(default_factory=list)    # run (configure terminal) before pos
    post: list[str] = field(default_factory=list)   # run after neg, to restore r1
    rejected: str | None = None   # a negation FRR refuses and the allowlist must refuse too
    router: str = R

    @property
    def negation(self) -> str:
        return self.neg if self.neg is not None else "no " + str(self.pos)


def _id(c: Case) -> str:
    return (c.pos or c.negation).replace(" ", "_")


#: A1's rule for IPv4 static routes: the prefix or, as FRR takes it too, ADDRESS MASK
IP_ROUTE = "ip route (?:<prefix4>|<ipv4> <ipv4>) (?:<ipv4>|blackhole|reject|Null0|<ifname>)( <ifname>)?( tag <int>)?( <int>)?"

CASES: list[Case] = [
    # ---- global ----
    Case(IP_ROUTE, [],
         "ip route 203.0.113.0/24 blackhole"),
    Case(IP_ROUTE, [],
         "ip route 203.0.113.0/25 reject"),
    Case(IP_ROUTE, [],
         "ip route 203.0.113.128/25 Null0"),
    Case(IP_ROUTE, [],
         "ip route 203.0.113.0/24 10.0.12.2 tag 7 200"),
    Case(IP_ROUTE, [],
         "ip route 203.0.113.64/26 10.0.12.2 eth-r2"),
    Case(IP_ROUTE, [],
         "ip route 203.0.113.32/27 eth-r2"),
    Case(IP_ROUTE, [],
         "ip route 203.0.113.0 255.255.255.252 10.0.12.2"),
    Case("ipv6 route <prefix6> (?:<ipv6>|blackhole|reject|Null0|<ifname>)( <ifname>)?( tag <int>)?( <int>)?", [],
         "ipv6 route 2001:db8:1::/48 blackhole"),
    Case("ipv6 route <prefix6> (?:<ipv6>|blackhole|reject|Null0|<ifname>)( <ifname>)?( tag <int>)?( <int>)?", [],
         "ipv6 route 2001:db8:2::/48 eth-r2 tag 5 100"),
    Case("ip prefix-list <name>( seq <int>)? <action> (?:<prefix4>|any)( ge <int>)?( le <int>)?", [],
         "ip prefix-list PL-NEG seq 5 permit 10.0.0.0/8 ge 16 le 24"),
    Case("ip prefix-list <name>( seq <int>)? <action> (?:<prefix4>|any)( ge <int>)?( le <int>)?", [],
         "ip prefix-list PL-NEG seq 6 deny any"),
    Case("ip prefix-list <name>( seq <int>)? <action> (?:<prefix4>|any)( ge <int>)?( le <int>)?", [],
         "ip prefix-list PL-NEG deny 172.16.0.0/12 le 32"),
    Case("ip prefix-list <name> description <text>", [], "ip prefix-list PL-NEG description hello world"),
    Case("ipv6 prefix-list <name>( seq <int>)? <action> (?:<prefix6>|any)( ge <int>)?( le <int>)?", [],
         "ipv6 prefix-list PL6-NEG seq 5 permit 2001:db8::/32 ge 48 le 64"),
    Case("ipv6 prefix-list <name>( seq <int>)? <action> (?:<prefix6>|any)( ge <int>)?( le <int>)?", [],
         "ipv6 prefix-list PL6-NEG deny any"),
    Case("access-list <name>( seq <int>)? <action> (?:<prefix4>|any|host <ipv4>)( exact-match)?", [],
         "access-list ACL-NEG seq 5 permit 10.0.0.0/8 exact-match"),
    Case("access-list <name>( seq <int>)? <action> (?:<prefix4>|any|host <ipv4>)( exact-match)?", [],
         "access-list ACL-NEG deny host 192.0.2.9"),
    Case("access-list <name>( seq <int>)? <action> (?:<prefix4>|any|host <ipv4>)( exact-match)?", [],
         "access-list ACL-NEG seq 7 deny any"),
    Case("bgp community-list (?:standard|expanded) <name>( seq <int>)? <action>( <community>)+", [],
         "bgp community-list standard CL-NEG seq 5 permit 64501:1 no-export"),
    Case("bgp community-list (?:standard|expanded) <name>( seq <int>)? <action>( <community>)+", [],
         "bgp community-list expanded CLX-NEG deny 64501:2"),
    Case("bgp as-path access-list <name>( seq <int>)? <action> [A-Za-z0-9_^.*+\\[\\]()\\-:]{1,80}", [],
         "bgp as-path access-list AP-NEG seq 5 permit ^64501_"),
    Case("bgp as-path access-list <name>( seq <int>)? <action> [A-Za-z0-9_^.*+\\[\\]()\\-:]{1,80}", [],
         "bgp as-path access-list AP-NEG deny .*"),
    Case("ip forwarding", [], "ip forwarding", post=["ip forwarding"]),
    Case("ipv6 forwarding", [], "ipv6 forwarding", post=["ipv6 forwarding"]),
    # explicit `no` rules of the global block
    Case("no router bgp( <asn>)?", [], None, "no router bgp 64502", router="r2",
         post=["router bgp 64502", "bgp router-id 10.255.0.2", "timers bgp 1 3",
               "neighbor 10.0.12.1 remote-as 64501", "neighbor 10.0.12.1 timers connect 1"]),
    Case("no router bgp( <asn>)?", [], None, "no router bgp", router="r2",
         post=["router bgp 64502", "bgp router-id 10.255.0.2", "timers bgp 1 3",
               "neighbor 10.0.12.1 remote-as 64501", "neighbor 10.0.12.1 timers connect 1"]),
    Case("no router ospf", [], None, "no router ospf",
         post=["router ospf", "ospf router-id 10.255.0.1", "network 10.255.0.1/32 area 0"]),
    Case("no interface <ifname>", [], None, "no interface neg9", pre=["interface neg9"]),
    Case("no route-map <name>( <action> <int>)?", [], None, "no route-map RM-DEL permit 10",
         pre=["route-map RM-DEL permit 10"]),
    Case("no route-map <name>( <action> <int>)?", [], None, "no route-map RM-DEL", pre=["route-map RM-DEL deny 20"]),
    Case("no ip prefix-list <name>( seq <int>)?", [], None, "no ip prefix-list PL-DEL seq 5",
         pre=["ip prefix-list PL-DEL seq 5 permit 10.0.0.0/8"]),
    Case("no ip prefix-list <name>( seq <int>)?", [], None, "no ip prefix-list PL-DEL",
         pre=["ip prefix-list PL-DEL seq 5 permit 10.0.0.0/8"]),
    Case("no ipv6 prefix-list <name>( seq <int>)?", [], None, "no ipv6 prefix-list PL6-DEL seq 5",
         pre=["ipv6 prefix-list PL6-DEL seq 5 permit 2001:db8::/32"]),
    Case("no ipv6 prefix-list <name>( seq <int>)?", [], None, "no ipv6 prefix-list PL6-DEL",
         pre=["ipv6 prefix-list PL6-DEL seq 5 permit 2001:db8::/32"]),
    Case("no access-list <name>", [], None, "no access-list ACL-DEL", pre=["access-list ACL-DEL permit any"]),

    # ---- interface ----
    # on an interface the kernel does not have (neg0), FRR 8.4 takes `ip address` silently and
    # then refuses `no ip address` (exit 1, no message): addresses are checked on lo
    Case("ip address <prefix4>( label <name>)?", IFL, "ip address 192.0.2.33/28"),
    Case("ip address <prefix4>( label <name>)?", IFL, "ip address 192.0.2.49/28 label lbl1"),
    Case("ipv6 address <prefix6>", IFL, "ipv6 address 2001:db8:99::1/64"),
    Case("description <text>", IF, "description hello world", "no description",
         rejected="no description hello world"),
    Case("no description", IF, None, "no description", pre=IF + ["description hello world"]),
    Case("no description", RM, None, "no description", pre=RM + ["description tenants out"]),
    Case("shutdown", IF, "shutdown"),
    Case("bandwidth <int>", IF, "bandwidth 1000"),
    Case("ip ospf area <area>", IF, "ip ospf area 0", pre=["router ospf", "no network 10.255.0.1/32 area 0"],
         post=OSPF_NET),
    Case("ip ospf area <area>", IF, "ip ospf area 0.0.0.1", pre=["router ospf", "no network 10.255.0.1/32 area 0"],
         post=OSPF_NET),
    *[Case("ip ospf (?:cost|hello-interval|dead-interval|priority|retransmit-interval|transmit-delay) <int>", IF,
           f"ip ospf {k} {v}")
      for k, v in [("cost", 10), ("hello-interval", 5), ("dead-interval", 20), ("priority", 5),
                   ("retransmit-interval", 6), ("transmit-delay", 2)]],
    *[Case("no ip ospf (?:cost|hello-interval|dead-interval|priority|retransmit-interval|transmit-delay)", IF, None,
           f"no ip ospf {k}", pre=IF + [f"ip ospf {k} {v}"])
      for k, v in [("cost", 10), ("hello-interval", 5), ("dead-interval", 20), ("priority", 5),
                   ("retransmit-interval", 6), ("transmit-delay", 2)]],
    *[Case("ip ospf network (?:point-to-point|broadcast|non-broadcast|point-to-multipoint)", IF, f"ip ospf network {t}")
      for t in ["point-to-point", "broadcast", "non-broadcast", "point-to-multipoint"]],
    Case("no ip ospf network", IF, None, "no ip ospf network", pre=IF + ["ip ospf network point-to-point"]),
    Case("ip ospf passive", IF, "ip ospf passive"),
    Case("ip ospf authentication( message-digest| null)?", IF, "ip ospf authentication"),
    Case("ip ospf authentication( message-digest| null)?", IF, "ip ospf authentication message-digest"),
    Case("ip ospf authentication( message-digest| null)?", IF, "ip ospf authentication null"),
    Case("ip ospf message-digest-key <int> md5 [A-Za-z0-9_.\\-]{1,16}", IF, "ip ospf message-digest-key 1 md5 secret1"),

    # ---- route-map ----
    Case("match ip address( prefix-list)? <name>", RM, "match ip address ACL-NEG"),
    Case("match ip address( prefix-list)? <name>", RM, "match ip address prefix-list PL-NEG"),
    Case("match ip next-hop( prefix-list)? <name>", RM, "match ip next-hop ACL-NEG"),
    Case("match ip next-hop( prefix-list)? <name>", RM, "match ip next-hop prefix-list PL-NEG"),
    Case("match ipv6 address( prefix-list)? <name>", RM, "match ipv6 address ACL6-NEG"),
    Case("match ipv6 address( prefix-list)? <name>", RM, "match ipv6 address prefix-list PL6-NEG"),
    Case("match community <name>( exact-match)?", RM, "match community CL-NEG"),
    Case("match community <name>( exact-match)?", RM, "match community CL-NEG exact-match"),
    Case("match as-path <name>", RM, "match as-path AP-NEG"),
    Case("match interface <ifname>", RM, "match interface eth-r2"),
    Case("match (?:metric|tag) <int>", RM, "match metric 10"),
    Case("match (?:metric|tag) <int>", RM, "match tag 5"),
    *[Case("match source-protocol (?:bgp|ospf|connected|static|kernel)", RM, f"match source-protocol {p}")
      for p in ["bgp", "ospf", "connected", "static", "kernel"]],
    Case("set local-preference <signed>", RM, "set local-preference 200"),
    Case("set (?:metric|weight|tag) <signed>", RM, "set metric 100"),
    Case("set (?:metric|weight|tag) <signed>", RM, "set weight 100"),
    Case("set (?:metric|weight|tag) <signed>", RM, "set tag 5"),
    Case("set as-path prepend( <asn>)+", RM, "set as-path prepend 64501 64501", "no set as-path prepend",
         rejected="no set as-path prepend 64501 64501"),
    Case("set as-path prepend( <asn>)+", RM, "set as-path prepend 64501", "no set as-path prepend"),
    Case("no set as-path prepend( <asn>)?", RM, None, "no set as-path prepend 64501",
         pre=RM + ["set as-path prepend 64501 64501"]),
    Case("no set as-path prepend( <asn>)?", RM, None, "no set as-path prepend", pre=RM + ["set as-path prepend 64501"]),
    Case("set community( <community>)+( additive)?", RM, "set community 64501:1 no-export additive"),
    Case("set community( <community>)+( additive)?", RM, "set community 64501:2"),
    *[Case("set ip next-hop (?:<ipv4>|peer-address|unchanged)", RM, f"set ip next-hop {h}")
      for h in ["10.0.12.2", "peer-address", "unchanged"]],
    *[Case("set origin (?:igp|egp|incomplete)", RM, f"set origin {o}") for o in ["igp", "egp", "incomplete"]],
    Case("set src <ipv4>", RM, "set src 10.255.0.1"),
    Case("on-match (?:next|goto <int>)", RM, "on-match next", "no on-match next"),
    Case("on-match (?:next|goto <int>)", RM, "on-match goto 20", "no on-match goto", rejected="no on-match goto 20"),
    Case("no on-match (?:next|goto)", RM, None, "no on-match next", pre=RM + ["on-match next"]),
    Case("no on-match (?:next|goto)", RM, None, "no on-match goto", pre=RM + ["on-match goto 30"]),
    Case("call <name>", RM, "call RM-CALLED"),
    Case("description <text>", RM, "description tenants out", "no description", rejected="no description tenants out"),

    # ---- router bgp ----
    Case("bgp router-id <ipv4>", BGP, "bgp router-id 10.255.0.9", post=BGP + ["bgp router-id 10.255.0.1"]),
    Case("no bgp router-id", BGP, None, "no bgp router-id", post=BGP + ["bgp router-id 10.255.0.1"]),
    Case("bgp cluster-id <ipv4>", BGP, "bgp cluster-id 10.255.0.9"),
    *[Case("bgp (?:log-neighbor-changes|deterministic-med|always-compare-med|default ipv4-unicast|"
           "ebgp-requires-policy|network import-check|graceful-restart|bestpath as-path multipath-relax|"
           "bestpath compare-routerid|bestpath med missing-as-worst|suppress-duplicates)", BGP, f"bgp {k}")
      for k in ["log-neighbor-changes", "deterministic-med", "always-compare-med", "default ipv4-unicast",
                "ebgp-requires-policy", "network import-check", "graceful-restart",
                "bestpath as-path multipath-relax", "bestpath compare-routerid", "bestpath med missing-as-worst",
                "suppress-duplicates"]],
    Case("timers bgp <int> <int>", BGP, "timers bgp 10 30", post=BGP + ["timers bgp 1 3"]),
    Case("no timers bgp", BGP, None, "no timers bgp", post=BGP + ["timers bgp 1 3"]),
    Case("neighbor <peer> remote-as (?:<asn>|internal|external)", BGP, "neighbor 192.0.2.2 remote-as 64998"),
    Case("neighbor <peer> remote-as (?:<asn>|internal|external)", BGP, "neighbor 192.0.2.3 remote-as internal"),
    Case("neighbor <peer> remote-as (?:<asn>|internal|external)", BGP, "neighbor 192.0.2.3 remote-as external"),
    Case("neighbor <name> peer-group", BGP, "neighbor PG-NEG2 peer-group"),
    Case("neighbor <peer> interface peer-group <name>", BGP, "neighbor neg0 interface peer-group PG-NEG"),
    Case("neighbor <peer> peer-group <name>", BGP, "neighbor 192.0.2.4 peer-group PG-NEG"),
    Case("neighbor <peer> description <text>", BGP, f"neighbor {N} description hello peer"),
    Case("neighbor <peer> update-source (?:<ipv4>|<ifname>)", BGP, f"neighbor {N} update-source 10.255.0.1"),
    Case("neighbor <peer> update-source (?:<ipv4>|<ifname>)", BGP, f"neighbor {N} update-source lo"),
    Case("neighbor <peer> ebgp-multihop( <int>)?", BGP, f"neighbor {N} ebgp-multihop"),
    Case("neighbor <peer> ebgp-multihop( <int>)?", BGP, f"neighbor {N} ebgp-multihop 5"),
    Case("neighbor <peer> timers <int> <int>", BGP, f"neighbor {N} timers 10 30"),
    Case("neighbor <peer> timers connect <int>", BGP, f"neighbor {N} timers connect 10"),
    *[Case("neighbor <peer> (?:shutdown|passive|bfd|solo|disable-connected-check|enforce-first-as|"
           "capability extended-nexthop)", BGP, f"neighbor {N} {k}")
      for k in ["shutdown", "passive", "bfd", "solo", "disable-connected-check", "enforce-first-as",
                "capability extended-nexthop"]],
    Case("neighbor <peer> password [A-Za-z0-9_.\\-]{1,80}", BGP, f"neighbor {N} password secret1"),
    Case("neighbor <peer> (?:port|advertisement-interval) <int>", BGP, f"neighbor {N} port 1179"),
    Case("neighbor <peer> (?:port|advertisement-interval) <int>", BGP, f"neighbor {N} advertisement-interval 5"),
    Case("neighbor <peer> ttl-security hops <int>", BGP, f"neighbor {N} ttl-security hops 2"),
    Case("neighbor <peer> local-as <asn>( no-prepend)?( replace-as)?", BGP, f"neighbor {N} local-as 64777"),
    Case("neighbor <peer> local-as <asn>( no-prepend)?( replace-as)?", BGP, f"neighbor {N} local-as 64777 no-prepend"),
    Case("neighbor <peer> local-as <asn>( no-prepend)?( replace-as)?", BGP,
         f"neighbor {N} local-as 64777 no-prepend replace-as"),
    Case("no neighbor <peer>", BGP, None, "no neighbor 192.0.2.6", pre=BGP + ["neighbor 192.0.2.6 remote-as 64996"]),

    # ---- router bgp / address-family ----
    Case("neighbor <peer> (?:activate|route-reflector-client|soft-reconfiguration inbound|as-override|"
         "addpath-tx-all-paths|remove-private-AS( all)?( replace-AS)?)", AF, f"neighbor {N} activate",
         post=AF + [f"neighbor {N} activate"]),
    Case("neighbor <peer> (?:activate|route-reflector-client|soft-reconfiguration inbound|as-override|"
         "addpath-tx-all-paths|remove-private-AS( all)?( replace-AS)?)", AF, f"neighbor {NI} route-reflector-client"),
    *[Case("neighbor <peer> (?:activate|route-reflector-client|soft-reconfiguration inbound|as-override|"
           "addpath-tx-all-paths|remove-private-AS( all)?( replace-AS)?)", AF, f"neighbor {N} {k}")
      for k in ["soft-reconfiguration inbound", "as-override", "addpath-tx-all-paths", "remove-private-AS",
                "remove-private-AS all", "remove-private-AS all replace-AS", "remove-private-AS replace-AS"]],
    Case("neighbor <peer> (?:activate|route-reflector-client|soft-reconfiguration inbound|as-override|"
         "addpath-tx-all-paths|remove-private-AS( all)?( replace-AS)?)", BGP, f"neighbor {N} soft-reconfiguration inbound"),
    Case("neighbor <peer> next-hop-self( force)?", AF, f"neighbor {N} next-hop-self"),
    Case("neighbor <peer> next-hop-self( force)?", AF, f"neighbor {N} next-hop-self force"),
    Case("neighbor <peer> (?:route-map|prefix-list|filter-list|distribute-list) <name> (?:in|out)", AF,
         f"neighbor {N} route-map RM-NEG in"),
    Case("neighbor <peer> (?:route-map|prefix-list|filter-list|distribute-list) <name> (?:in|out)", AF,
         f"neighbor {N} prefix-list PL-NEG out"),
    Case("neighbor <peer> (?:route-map|prefix-list|filter-list|distribute-list) <name> (?:in|out)", AF,
         f"neighbor {N} filter-list AP-NEG in"),
    Case("neighbor <peer> (?:route-map|prefix-list|filter-list|distribute-list) <name> (?:in|out)", AF,
         f"neighbor {N} distribute-list ACL-NEG out"),
    Case("neighbor <peer> (?:route-map|prefix-list|filter-list|distribute-list) <name> (?:in|out)", BGP,
         f"neighbor {N} route-map RM-NEG out"),
    Case("neighbor <peer> default-originate( route-map <name>)?", AF, f"neighbor {N} default-originate"),
    Case("neighbor <peer> default-originate( route-map <name>)?", AF, f"neighbor {N} default-originate route-map RM-NEG"),
    *[Case("neighbor <peer> send-community( all| both| standard| extended| large)?", AF,
           f"neighbor {N} send-community{k}", post=AF + [f"neighbor {N} send-community all"])
      for k in ["", " all", " both", " standard", " extended", " large"]],
    *[Case("neighbor <peer> maximum-prefix <int>( <int>)?( restart <int>| warning-only)?", AF,
           f"neighbor {N} maximum-prefix {k}")
      for k in ["100", "100 90", "100 90 restart 5", "100 warning-only"]],
    *[Case("neighbor <peer> allowas-in( <int>| origin)?", AF, f"neighbor {N} allowas-in{k}")
      for k in ["", " 3", " origin"]],
    Case("neighbor <peer> weight <int>", AF, f"neighbor {N} weight 100"),
    Case("neighbor <peer> unsuppress-map <name>", AF, f"neighbor {N} unsuppress-map RM-NEG"),
    Case("network <prefix4>( route-map <name>)?( backdoor)?", AF, "network 203.0.113.0/24"),
    Case("network <prefix4>( route-map <name>)?( backdoor)?", AF, "network 203.0.113.0/24 route-map RM-NEG"),
    Case("network <prefix4>( route-map <name>)?( backdoor)?", AF, "network 203.0.113.0/24 backdoor"),
    Case("network <prefix4>( route-map <name>)?( backdoor)?", BGP, "network 198.51.100.0/24"),
    Case("network <prefix6>( route-map <name>)?", AF6, "network 2001:db8:5::/48"),
    Case("redistribute (?:connected|static|ospf|kernel)( metric <int>)?( route-map <name>)?", AF,
         "redistribute static"),
    Case("redistribute (?:connected|static|ospf|kernel)( metric <int>)?( route-map <name>)?", AF,
         "redistribute ospf metric 10 route-map RM-NEG"),
    Case("redistribute (?:connected|static|ospf|kernel)( metric <int>)?( route-map <name>)?", AF,
         "redistribute kernel metric 5"),
    Case("redistribute (?:connected|static|ospf|kernel)( metric <int>)?( route-map <name>)?", AF,
         "redistribute connected route-map RM-NEG",
         post=AF + ["redistribute connected route-map RM-TENANTS-OUT"]),
    Case("aggregate-address <prefix4>( as-set)?( summary-only)?( route-map <name>)?", AF,
         "aggregate-address 203.0.113.0/24"),
    Case("aggregate-address <prefix4>( as-set)?( summary-only)?( route-map <name>)?", AF,
         "aggregate-address 203.0.113.0/24 as-set summary-only route-map RM-NEG"),
    Case("aggregate-address <prefix6>( as-set)?( summary-only)?( route-map <name>)?", AF6,
         "aggregate-address 2001:db8:6::/48 summary-only"),
    Case("maximum-paths( ibgp)? <int>", AF, "maximum-paths 4"),
    Case("maximum-paths( ibgp)? <int>", AF, "maximum-paths ibgp 4"),
    Case("distance bgp <int> <int> <int>", AF, "distance bgp 20 200 200"),

    # ---- router ospf ----
    Case("(?:ospf )?router-id <ipv4>", OSPF, "ospf router-id 10.255.0.9", post=OSPF + ["ospf router-id 10.255.0.1"]),
    Case("(?:ospf )?router-id <ipv4>", OSPF, "router-id 10.255.0.9", post=OSPF + ["ospf router-id 10.255.0.1"]),
    Case("no ospf router-id", OSPF, None, "no ospf router-id", rejected="no router-id",
         post=OSPF + ["ospf router-id 10.255.0.1"]),
    Case("network <prefix4> area <area>", OSPF, "network 10.99.0.0/24 area 0"),
    Case("network <prefix4> area <area>", OSPF, "network 10.99.1.0/24 area 0.0.0.3"),
    *[Case("area <area> (?:stub( no-summary)?|nssa( no-summary)?|authentication( message-digest)?|"
           "default-cost <int>|range <prefix4>( not-advertise| cost <int>)?)", OSPF, f"area 1 {k}", pre=pre)
      for k, pre in [("stub", []), ("stub no-summary", []), ("nssa", []), ("nssa no-summary", []),
                     ("authentication", []), ("authentication message-digest", []),
                     ("default-cost 10", OSPF + ["area 1 stub"]), ("range 10.1.0.0/16", []),
                     ("range 10.1.0.0/16 not-advertise", []), ("range 10.1.0.0/16 cost 10", [])]],
    Case("passive-interface (?:default|<ifname>)", OSPF, "passive-interface default"),
    Case("passive-interface (?:default|<ifname>)", OSPF, "passive-interface eth-r2"),
    Case("redistribute (?:connected|static|bgp|kernel)( metric <int>)?( metric-type [12])?( route-map <name>)?", OSPF,
         "redistribute static"),
    Case("redistribute (?:connected|static|bgp|kernel)( metric <int>)?( metric-type [12])?( route-map <name>)?", OSPF,
         "redistribute connected metric 10 metric-type 1 route-map RM-NEG"),
    Case("redistribute (?:connected|static|bgp|kernel)( metric <int>)?( metric-type [12])?( route-map <name>)?", OSPF,
         "redistribute bgp metric-type 2"),
    Case("redistribute (?:connected|static|bgp|kernel)( metric <int>)?( metric-type [12])?( route-map <name>)?", OSPF,
         "redistribute kernel route-map RM-NEG"),
    Case("default-information originate( always)?( metric <int>)?( metric-type [12])?( route-map <name>)?", OSPF,
         "default-information originate"),
    Case("default-information originate( always)?( metric <int>)?( metric-type [12])?( route-map <name>)?", OSPF,
         "default-information originate always metric 10 metric-type 2 route-map RM-NEG"),
    Case("timers throttle spf <int> <int> <int>", OSPF, "timers throttle spf 10 100 1000"),
    Case("timers throttle lsa all <int>", OSPF, "timers throttle lsa all 100"),
    Case("timers lsa min-arrival <int>", OSPF, "timers lsa min-arrival 100"),
    Case("auto-cost reference-bandwidth <int>", OSPF, "auto-cost reference-bandwidth 1000"),
    Case("log-adjacency-changes( detail)?", OSPF, "log-adjacency-changes"),
    Case("log-adjacency-changes( detail)?", OSPF, "log-adjacency-changes detail"),
    Case("distance <int>", OSPF, "distance 100"),
    Case("maximum-paths <int>", OSPF, "maximum-paths 4", "no maximum-paths", rejected="no maximum-paths 4"),
    Case("no maximum-paths", OSPF, None, "no maximum-paths", pre=OSPF + ["maximum-paths 8"]),
    Case("max-metric router-lsa administrative", OSPF, "max-metric router-lsa administrative"),
]


def _statement(pattern: str, line: str, ctx: list[str]):
    """The rule with this pattern that ``line`` uses after ``ctx`` (the block plan_config puts it in)."""
    block = plan_config(P, [*ctx, line])[-1].context
    found = [st for st in P.config if st.d.pattern == pattern and block in st.d.ctx]
    assert len(found) == 1, (pattern, block, len(found))
    return found[0]


def _key(st) -> tuple[str, tuple[str, ...]]:
    return st.d.pattern, tuple(st.d.ctx)


def _checked_rules() -> set[tuple[str, tuple[str, ...]]]:
    """The rules this module must cover: every negatable one, every one naming a shorter
    ``negation`` and every explicit ``no ...`` one."""
    return {_key(st) for st in P.config
            if st.d.negatable or st.d.negation is not None or st.d.pattern.startswith("no ")}


def _case_rule(c: Case):
    return _statement(c.rule, c.pos if c.pos is not None else c.negation, c.ctx)


def test_every_negatable_rule_has_a_case() -> None:
    covered = {_key(_case_rule(c)) for c in CASES}
    missing = sorted(_checked_rules() - covered)
    assert not missing, f"negatable / `no` rules of adapters/frr.yaml without a case here: {missing}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_case_matches_its_rule(case: Case) -> None:
    st = _case_rule(case)
    if case.pos is None:
        assert st.regex.fullmatch(case.negation), (case.negation, case.rule)
    elif st.d.negatable:
        assert case.neg is None and st.neg.fullmatch(case.negation), (case.negation, case.rule)
    else:
        # a rule with a shorter negation: the case sends an allowed negation (another rule's)
        # and, where FRR refuses "no <statement>", checks that the allowlist refuses it too
        assert st.d.negation is not None and case.neg is not None, case
        assert not st.regex.fullmatch(case.negation), case
        plan_config(P, [*case.ctx, case.negation])
    if case.rejected is not None:
        with pytest.raises(Refused) as exc:
            plan_config(P, [*case.ctx, case.rejected])
        if st.d.negation is not None:
            assert f"the negation it accepts is {st.d.negation!r}" in exc.value.reason


# -- against FRR ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lab(module_lab):
    err = _apply(module_lab, R, SETUP)
    assert err is None, err
    return module_lab


def _failure(res) -> str | None:
    """None when vtysh applied every line: exit 0 and A1's own verdict on the output is success
    (no failure indicator, no ``%`` line but the platform's warnings)."""
    out = (res.stdout + "\n" + res.stderr).strip()
    if res.rc != 0 or res.timed_out or classify(P, out, False).status != "success":
        return f"exit {res.rc}: {out[:600]}"
    return None


def _apply(lab, router: str, lines: list[str]) -> str | None:
    return _failure(lab.vtysh(router, ["configure terminal", *lines], timeout=20))


def _allowed(lines: list[str]) -> str | None:
    try:
        plan_config(P, lines)
    except Refused as exc:
        return exc.message
    return None


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_frr_and_allowlist_agree_on_negation(lab, case: Case) -> None:
    try:
        if case.pre:
            err = _apply(lab, case.router, case.pre)
            assert err is None, f"prerequisite {case.pre}: {err}"
        if case.pos is not None:
            lines = [*case.ctx, case.pos]
            assert _allowed(lines) is None, _allowed(lines)
            err = _apply(lab, case.router, lines)
            assert err is None, f"FRR refused the positive form {case.pos!r}: {err}"
        lines = [*case.ctx, case.negation]
        assert _allowed(lines) is None, _allowed(lines)
        err = _apply(lab, case.router, lines)
        assert err is None, f"FRR refused {case.negation!r} (the allowlist accepts it): {err}"
        if case.rejected is not None:
            lines = [*case.ctx, case.rejected]
            assert _apply(lab, case.router, lines) is not None, f"FRR accepted {case.rejected!r}"
            assert _allowed(lines) is not None, f"the allowlist accepts {case.rejected!r}, which FRR refuses"
    finally:
        if case.post:
            assert _apply(lab, case.router, case.post) is None, ("restore", case.post)


# -- through A1 itself --------------------------------------------------------------------------


def test_a1_applies_the_accepted_negations_and_refuses_the_others(lab, open_adapter) -> None:
    """The same verdicts end to end: A1 applies the shorter negations (no rollback) and the
    `no auto-cost reference-bandwidth` whose `%` notice is a warning, and refuses the long
    negations before sending anything (the running config is unchanged)."""
    from ani.adapters.a1 import A1Adapter
    from ani.errors import ErrorCode

    a1 = open_adapter(A1Adapter(lab))
    res = a1.call("update_config", {"device": R, "commands": [
        "interface neg0", "description to be removed", "exit",
        "route-map RM-NEG permit 10", "description tenants out", "set as-path prepend 64501 64501",
        "on-match goto 20", "exit",
        "router ospf", "auto-cost reference-bandwidth 1000", "maximum-paths 4"]})
    assert res.ok, res.text
    before = lab.running_config(R)
    for ctx, rejected, accepted in [
        (IF, "no description to be removed", "no description"),
        (RM, "no description tenants out", "no description"),
        (RM, "no set as-path prepend 64501 64501", "no set as-path prepend"),
        (RM, "no on-match goto 20", "no on-match goto"),
        (OSPF, "no maximum-paths 4", "no maximum-paths"),
    ]:
        res = a1.call("update_config", {"device": R, "commands": [*ctx, rejected]})
        assert not res.ok and res.error.code == ErrorCode.NOT_ALLOWED, res.text
        assert f"the negation it accepts is {accepted!r}" in res.text, res.text
    assert lab.running_config(R) == before
    res = a1.call("update_config", {"device": R, "commands": [
        "interface neg0", "no description", "exit",
        "route-map RM-NEG permit 10", "no description", "no set as-path prepend", "no on-match goto", "exit",
        "router ospf", "no auto-cost reference-bandwidth 1000", "no maximum-paths"]})
    assert res.ok, res.text
    # FRR printed its `%` notice for that line, and A1 classed it as a warning (applied)
    notice = [r for r in res.data["results"] if "% OSPF: Reference bandwidth is changed" in str(r.get("message"))]
    assert notice and notice[0]["status"] == "success", res.data["results"]
    after = lab.running_config(R)
    for gone in ["to be removed", "tenants out", "set as-path prepend", "on-match goto",
                 "auto-cost reference-bandwidth", "maximum-paths 4"]:
        assert gone not in after, (gone, after)
