"""Reads ``Lab.exec`` answers without the node's enter chain, against the program run in the node,
on one lab.

- ``ani.host.nft`` (nftables reads by libnftables in the node's namespace, no process): for each
  kind of ruleset the harness reads (the topology's sets, counters and quotas, a netdev ingress
  table as the packet-loss fault loads it, maps, IPv6, a set with timeouts) and each way it reads
  them (text, ``-s``, ``-j``, ``-a``, one table), and for errors, both print the same bytes and
  exit the same; ``Lab.exec`` answers those reads without starting a process, and everything else
  as before.
- ``ip`` commands run as ``ip -n <netns>`` (``ani.lab.netns.ip_argv``): the same output and exit
  status as ``ip`` in the node, reads and errors.

r1 carries the topology's ``table inet fw``; each nft case loads its own ``table ... anitest``
and deletes it after.
"""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ani.host import nft, proc
from ani.lab import netns
from ani.lab.netns import ip_argv

pytestmark = pytest.mark.integration

LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = Path(__file__).parents[1] / "data" / "a1_pair.yaml", "nftr", False

#: (case, family, ruleset of table ``anitest``)
RULESETS = [
    ("counters and quotas", "inet", """
table inet anitest {
  counter c_named { packets 7 bytes 700 }
  quota q_named { over 10 mbytes used 1 kbytes }
  chain input {
    type filter hook input priority 10; policy accept;
    tcp dport 179 counter accept
    udp dport 53 quota over 1 mbytes drop
    counter name "c_named"
  }
}"""),
    ("netdev ingress drop, as the packet-loss fault loads it", "netdev", """
table netdev anitest {
  chain ingress {
    type filter hook ingress device "eth-r2" priority -500; policy accept;
    numgen random mod 100 < 30 counter drop
  }
}"""),
    ("maps and verdict maps", "ip", """
table ip anitest {
  map ports { type inet_service : ipv4_addr; elements = { 80 : 10.0.0.1, 443 : 10.0.0.2 } }
  chain through {
    type filter hook forward priority 0; policy accept;
    iifname vmap { "eth-r2" : accept, "lo" : drop }
    ct state established,related accept
  }
}"""),
    ("IPv6 with a named set", "ip6", """
table ip6 anitest {
  set allowed { type ipv6_addr; flags interval; elements = { 2001:db8::/32, fd00::1 } }
  chain input {
    type filter hook input priority 0; policy accept;
    ip6 saddr @allowed icmpv6 type echo-request accept
    ip6 nexthdr tcp tcp flags & (syn|ack) == syn log prefix "syn " drop
  }
}"""),
    ("a set with timeouts", "inet", """
table inet anitest {
  set seen { type ipv4_addr; flags timeout; timeout 1h; elements = { 192.0.2.1 timeout 2h, 192.0.2.2 } }
  chain input { type filter hook input priority 0; policy accept; }
}"""),
]
READS = [
    ["nft", "list", "ruleset"],
    ["nft", "-s", "list", "ruleset"],
    ["nft", "-j", "list", "ruleset"],
    ["nft", "-s", "-j", "list", "ruleset"],
    ["nft", "-a", "list", "ruleset"],
]


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def by_program(lab, node: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", lab.netns(node), *argv], capture_output=True, text=True,
                          timeout=30)


def path(lab, node: str) -> str:
    return netns.path(lab.netns(node))


def same(lab, node: str, argv: list[str], volatile: str | None = None) -> None:
    """nft in the node and ani.host.nft.run print the same and exit the same (``volatile``: a
    pattern masked in both, a value that moves between the two reads, e.g. a timeout left)."""
    want = by_program(lab, node, argv)
    got = nft.run(path(lab, node), argv)
    assert got is not None, argv
    mask = (lambda s: re.sub(volatile, "<moving>", s)) if volatile else (lambda s: s)
    assert (got.rc, mask(got.stdout), got.stderr) == (want.returncode, mask(want.stdout), want.stderr), argv
    assert got.timed_out is False and got.ok is (want.returncode == 0)


@pytest.mark.parametrize("argv", READS, ids=" ".join)
def test_the_topologys_ruleset_reads_the_same(lab, argv: list[str]) -> None:
    same(lab, "r1", argv)
    assert "table inet fw" in nft.run(path(lab, "r1"), argv).stdout or "-j" in argv


@pytest.mark.parametrize("argv", READS, ids=" ".join)
def test_an_empty_ruleset_reads_the_same(lab, argv: list[str]) -> None:
    same(lab, "r2", argv)


@pytest.mark.parametrize(("case", "family", "ruleset"), RULESETS, ids=[r[0] for r in RULESETS])
def test_each_kind_of_ruleset_reads_the_same(lab, case: str, family: str, ruleset: str) -> None:
    assert lab.exec("r1", ["nft", "-f", "-"], input=ruleset).ok, case
    try:
        volatile = r"expires \S+" if "timeout" in case else None
        for argv in [*READS, ["nft", "list", "table", family, "anitest"], ["nft", "-j", "list", "table", family, "anitest"]]:
            same(lab, "r1", argv, volatile)
        assert "anitest" in nft.run(path(lab, "r1"), ["nft", "list", "ruleset"]).stdout
    finally:
        assert lab.exec("r1", ["nft", "delete", "table", family, "anitest"]).ok


@pytest.mark.parametrize("argv", [
    ["nft", "list", "table", "netdev", "nope"],
    ["nft", "-j", "list", "table", "inet", "nope"],
    ["nft", "list", "chain", "inet", "fw", "nope"],
    ["nft", "list", "set", "inet", "fw", "tenant_blue"],
    ["nft", "list", "tables"],
    ["nft", "list", "ruleset", "extra"],
], ids=" ".join)
def test_errors_and_other_lists_read_the_same(lab, argv: list[str]) -> None:
    same(lab, "r1", argv)


def test_reads_at_once_from_two_namespaces_stay_in_their_own(lab) -> None:
    want = {n: by_program(lab, n, ["nft", "-s", "list", "ruleset"]).stdout for n in ("r1", "r2")}
    assert want["r1"] != want["r2"]
    with ThreadPoolExecutor(8) as ex:
        got = list(ex.map(lambda n: (n, nft.run(path(lab, n), ["nft", "-s", "list", "ruleset"]).stdout),
                          ["r1", "r2"] * 20))
    assert all(out == want[n] for n, out in got)


def test_lab_exec_answers_reads_without_a_process_and_the_rest_as_before(lab, monkeypatch) -> None:
    started: list[list[str]] = []
    real = proc.run
    monkeypatch.setattr(proc, "run", lambda argv, **kw: started.append(argv) or real(argv, **kw))
    res = lab.exec("r1", ["nft", "-s", "list", "ruleset"])
    assert res.ok and res.stdout == by_program(lab, "r1", ["nft", "-s", "list", "ruleset"]).stdout
    assert started == []
    assert lab.exec("r1", ["nft", "-c", "-f", "-"], input="table inet x {}\n").ok  # a check: a process
    assert lab.exec("r1", ["nft", "list", "ruleset"], input="").ok  # stdin given: a process
    assert len(started) == 2 and started[0][1:] == ["nft", "-c", "-f", "-"]
    monkeypatch.setenv(nft.FAST_ENV, "0")
    assert lab.exec("r1", ["nft", "-s", "list", "ruleset"]).stdout == res.stdout
    assert len(started) == 3 and started[2][1:] == ["nft", "-s", "list", "ruleset"]


def test_a_gone_namespace_is_left_to_the_program(lab) -> None:
    assert nft.run(netns.path("ani-gone000-r1"), ["nft", "list", "ruleset"]) is None


# -- ip as `ip -n <netns>` -------------------------------------------------------------------------

IP_CASES = [
    ["ip", "-j", "addr", "show"],
    ["ip", "addr"],
    ["ip", "-j", "link", "show", "dev", "eth-r2"],
    ["ip", "-j", "route", "show", "table", "all"],
    ["ip", "-j", "-6", "route", "show", "table", "all"],
    ["ip", "-j", "rule"],
    ["ip", "-br", "link"],
    ["ip", "-j", "link", "show", "dev", "nope"],   # an error: exit status and message
    ["ip", "route", "get", "198.51.100.1"],        # no route: an error
]


@pytest.mark.parametrize("argv", IP_CASES, ids=" ".join)
def test_ip_as_ip_n_reads_the_same(lab, argv: list[str]) -> None:
    want = proc.run(lab.node_argv("r1", argv))
    got = proc.run(ip_argv(lab.netns("r1"), argv))
    assert (got.rc, got.stdout, got.stderr) == (want.rc, want.stdout, want.stderr)


def test_lab_exec_runs_ip_without_the_enter_chain(lab, monkeypatch) -> None:
    started: list[list[str]] = []
    real = proc.run
    monkeypatch.setattr(proc, "run", lambda argv, **kw: started.append(argv) or real(argv, **kw))
    assert "eth-r2" in lab.exec("r1", ["ip", "-j", "addr", "show"]).stdout
    assert started[-1][1:4] == ["-n", lab.netns("r1"), "-j"]
    assert lab.exec("r1", ["ip", "-batch", "-"], input="link show\n").ok  # its own input: the node's chain
    assert started[-1][0] == str(lab.node_dir("r1") / "enter")


@pytest.mark.parametrize(("argv", "taken"), [
    (["ip", "-j", "addr"], True),
    (["ip", "link", "set", "lo", "up"], True),
    (["ip", "-n", "other", "addr"], False),
    (["ip", "-netns", "other", "addr"], False),
    (["ip", "-batch", "-"], False),
    (["ip", "-force", "-b", "f"], False),
    (["ip", "-ne", "other", "addr"], False),       # iproute2 takes a prefix of an option
    (["ip", "--netns", "other", "addr"], False),
    (["ip", "-bat", "f"], False),
    (["ip", "-f", "inet", "addr"], False),         # -family, but also a prefix of -force: left alone
    (["ip", "-4", "-j", "addr"], True),
    (["/usr/sbin/ip", "addr"], False),
    (["sh", "-c", "ip addr"], False),
    ([], False),
], ids=repr)
def test_which_argv_ip_n_takes(argv: list[str], taken: bool) -> None:
    got = ip_argv("ani-x-r1", argv)
    assert (got is not None) is taken
    if taken:
        assert got[1:3] == ["-n", "ani-x-r1"] and got[3:] == argv[1:] and got[0].endswith("/ip")
