"""A1's address-family blocks follow FRR 8.4.4's node structure (issue 12 §3), on a real lab.

FRR has one node per address family (BGP_IPV4_NODE, BGP_IPV4M_NODE, BGP_IPV6_NODE,
BGP_IPV6M_NODE); a statement the open node does not take makes vtysh and the daemon walk up to
``router bgp`` (lib/command.c, ``cmd_execute_command``), leave the block, and apply it there,
i.e. to ipv4 unicast. A1 used to report ``network 10.99.0.0/16`` and ``neighbor RR weight 9``
after ``address-family ipv6 unicast`` as applied in that block while FRR put both in ipv4 unicast.

Here: (1) for every address-family rule of adapters/frr.yaml and every block, the grammar says a
line is valid in a block exactly when FRR takes it there (measured with raw vtysh: the block's
``exit-address-family`` afterwards is still taken); (2) the issue's call is refused and changes
nothing; (3) what A1 reports applied in an ipv6 block is what FRR has in that block; (2) and
(3) over both transports of A1's CLI session (local vtysh, the router's SSH).
One lab of tests/data/a1_pair.yaml for the module (r1: AS 64501).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ani.adapters.a1 import A1Adapter
from ani.adapters.platform import load_platform
from ani.errors import ErrorCode

pytestmark = pytest.mark.integration
LAB_SSH = True  # conftest's make_lab / module_lab: the tests use the lab's SSH server

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = ROOT / "tests" / "data" / "a1_pair.yaml", "a1af", False
P = load_platform("frr")
R = "r1"
BLOCKS = {"bgp-af4u": "address-family ipv4 unicast", "bgp-af4m": "address-family ipv4 multicast",
          "bgp-af6u": "address-family ipv6 unicast", "bgp-af6m": "address-family ipv6 multicast"}
#: one line per address-family rule (peer group PGX exists for the probe)
SAMPLES = [
    "neighbor PGX activate", "neighbor PGX soft-reconfiguration inbound", "neighbor PGX next-hop-self",
    "neighbor PGX prefix-list PLX in", "neighbor PGX default-originate", "neighbor PGX send-community",
    "neighbor PGX maximum-prefix 100", "neighbor PGX allowas-in", "neighbor PGX weight 9",
    "neighbor PGX unsuppress-map RMX", "network 10.99.0.0/16", "network 2001:db8:99::/48",
    "redistribute connected", "redistribute static", "aggregate-address 10.98.0.0/16",
    "aggregate-address 2001:db8:98::/48", "maximum-paths 4", "maximum-paths ibgp 4",
    "distance bgp 20 200 200",
]


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture(params=["local", "ssh"])
def a1(lab, open_adapter, request):
    return open_adapter(A1Adapter(lab, options={"transport": request.param}))


def _rule(line: str):
    found = [st for st in P.config if st.matches(line) and any(c in BLOCKS for c in st.d.ctx)]
    assert len(found) == 1, (line, [st.d.pattern for st in found])
    return found[0]


def test_every_address_family_rule_has_a_sample():
    rules = {st.d.pattern for st in P.config if any(c in BLOCKS for c in st.d.ctx)}
    assert rules == {_rule(line).d.pattern for line in SAMPLES}


def test_the_grammar_takes_a_line_in_a_block_exactly_where_frr_does(lab):
    wrong = []
    for ctx, af in BLOCKS.items():
        for line in SAMPLES:
            res = lab.vtysh(R, ["configure terminal", "router bgp 64501", "neighbor PGX peer-group", af, line,
                                "exit-address-family"])
            out = res.stdout + res.stderr
            # walked up: the block ended, so its exit-address-family is unknown afterwards;
            # "% Unknown command: <line>": no node takes it. Any other message (a route-map that
            # does not exist) is the node taking the line and refusing its value.
            frr_takes = "exit-address-family" not in out and f"Unknown command: {line}" not in out
            lab.vtysh(R, ["configure terminal", "router bgp 64501", af, f"no {line}"])
            if frr_takes != (ctx in _rule(line).d.ctx):
                wrong.append(f"{af}: {line!r}: FRR {'takes' if frr_takes else 'does not take'} it, "
                             f"the grammar says {ctx in _rule(line).d.ctx}")
    lab.vtysh(R, ["configure terminal", "router bgp 64501", "no neighbor PGX peer-group"])
    assert not wrong, "\n".join(wrong)


def _block(cfg: str, header: str) -> list[str]:
    """The lines of ``header``'s block inside ``router bgp 64501`` of a running config."""
    m = re.search(rf"^ {re.escape(header)}\n(.*?)^ exit-address-family", cfg, re.M | re.S)
    return [] if m is None else [ln.strip() for ln in m.group(1).splitlines()]


def test_the_issue_call_is_refused_and_changes_nothing(lab, a1):
    before = lab.running_config(R)
    res = a1.call("update_config", {"device": R, "commands": [
        "router bgp 64501", "neighbor RR peer-group", "address-family ipv6 unicast",
        "neighbor RR activate", "network 10.99.0.0/16", "neighbor RR weight 9"]})
    assert not res.ok and res.error.code == ErrorCode.NOT_ALLOWED, res.text
    assert "command 5 'network 10.99.0.0/16' refused" in res.error.message
    assert "'address-family ipv6 unicast' block opened by command 3 does not take" in res.error.message
    assert lab.running_config(R) == before
    # a router bgp statement that walks out of the ipv6 block: the block's next line is refused
    res = a1.call("update_config", {"device": R, "commands": [
        "router bgp 64501", "address-family ipv6 unicast", "neighbor 10.0.12.9 remote-as 64509",
        "neighbor 10.0.12.9 weight 9"]})
    assert not res.ok and "command 4 'neighbor 10.0.12.9 weight 9' refused" in res.error.message
    assert lab.running_config(R) == before


def test_what_a1_reports_applied_in_an_ipv6_block_is_what_frr_has_there(lab, a1):
    cmds = ["router bgp 64501", "neighbor RR6 peer-group", "neighbor RR6 remote-as internal",
            "address-family ipv6 unicast", "neighbor RR6 activate", "network 2001:db8:99::/48",
            "neighbor RR6 weight 9", "exit-address-family", "network 10.99.0.0/16"]
    res = a1.call("update_config", {"device": R, "commands": cmds})
    assert res.ok, res.text
    assert [r["status"] for r in res.data["results"]] == ["success"] * len(cmds)
    cfg = lab.running_config(R)
    v6 = _block(cfg, "address-family ipv6 unicast")
    assert {"neighbor RR6 activate", "network 2001:db8:99::/48", "neighbor RR6 weight 9"} <= set(v6), cfg
    v4 = _block(cfg, "address-family ipv4 unicast")
    assert "network 10.99.0.0/16" in v4 and "neighbor RR6 weight 9" not in v4, cfg
    # the same lines through the grammar: the contexts A1 planned are the blocks FRR has them in
    from ani.adapters.allowlist import plan_config

    ctx = {s.norm: s.context for s in plan_config(P, cmds)}
    assert [ctx[c] for c in cmds[4:7]] == ["bgp-af6u"] * 3 and ctx["network 10.99.0.0/16"] == "bgp"
