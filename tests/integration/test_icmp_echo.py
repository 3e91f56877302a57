"""``ani.host.icmp.echo`` (the observer's in-process pings) against iputils ``ping`` on one lab:
for each kind of answer, ping run in the node (``lab.exec``, as the observer's batched look ran
it) and ``echo`` from the node's namespace read the same (replies; "could not ping", and "no
route" among those), and the observer's batched look gives the same verdict both ways.

The lab (the tri topology) gets, on r2, a blackhole, an unreachable and a prohibit route, and on
r3 an nftables rule dropping its outgoing ICMP, before the cases run.
"""

from __future__ import annotations

import re
import socket

import pytest
from conftest import TRI

from ani.host import icmp
from ani.observer import Observer
from ani.observer.checks import LoopbackCheck, ReachCheck

pytestmark = pytest.mark.integration

LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = TRI, "icmp", False

NFT_DROP_ICMP_OUT = """table inet anitest {
 chain out {
  type filter hook output priority 0; ip protocol icmp drop
 }
}
"""

#: (case, node, destination, source, count): one of each kind of answer
CASES = [
    ("neighbor", "r1", "10.0.12.2", None, 1),
    ("loopback over OSPF, from a source", "r1", "10.255.0.2", "10.255.0.1", 1),
    ("host to a far loopback", "h1", "10.255.0.1", None, 1),
    ("answers dropped by nftables on the way back", "r1", "10.255.0.3", None, 1),
    ("own address", "r1", "10.255.0.1", None, 1),
    ("IPv6 loopback", "r1", "::1", None, 1),
    ("five to a neighbor (a negative check's pings)", "r1", "10.0.13.2", None, 5),
    ("no route", "r2", "198.51.100.1", None, 1),
    ("no route, five", "r2", "198.51.100.1", None, 5),
    ("answered with unreachable by the gateway", "h1", "203.0.113.9", None, 1),
    ("blackhole route", "r2", "192.0.2.77", None, 1),
    ("unreachable route", "r2", "192.0.2.88", None, 1),
    ("prohibit route", "r2", "192.0.2.99", None, 1),
    ("broadcast address", "r1", "10.0.12.3", None, 1),
    ("outgoing ICMP dropped by nftables", "r3", "10.0.13.1", None, 1),
    ("source not an address of the node", "r1", "10.255.0.3", "10.255.0.2", 1),
    ("unused address on a link", "r2", "10.0.12.0", None, 1),
]
IDS = [c[0] for c in CASES]


@pytest.fixture(scope="module")
def lab(module_lab):
    for route in ("blackhole 192.0.2.77/32", "unreachable 192.0.2.88/32", "prohibit 192.0.2.99/32"):
        assert module_lab.exec("r2", ["ip", "route", "add", *route.split()]).ok
    assert module_lab.exec("r3", ["nft", "-f", "-"], input=NFT_DROP_ICMP_OUT).ok
    return module_lab


def _ping(lab, node: str, dst: str, source: str | None, count: int) -> icmp.Echo:
    """What iputils ping said, as an Echo (exit status 2: it could not ping; its words)."""
    timing = ["-c", "1", "-W", "1"] if count == 1 else ["-c", str(count), "-i", "0.05", "-W", "0.25"]
    res = lab.exec(node, ["ping", "-n", "-q", *timing, *(["-I", source] if source else []), dst], timeout=10)
    m = re.search(r"(\d+) (?:packets )?received", res.stdout)
    if m is not None:
        return icmp.Echo(replies=int(m.group(1)))
    assert res.rc == 2, res
    return icmp.Echo(error=res.stderr.strip(), unrouted="Network is unreachable" in res.stderr)


@pytest.mark.parametrize(("node", "dst", "source", "count"), [c[1:] for c in CASES], ids=IDS)
def test_echo_reads_as_ping(lab, node, dst, source, count):
    path = f"/run/netns/{lab.netns(node)}"
    timing = {} if count == 1 else {"interval_s": 0.05, "wait_s": 0.25}
    got = icmp.echo(path, [icmp.Probe(dst, source, count, **timing)])[0]
    want = _ping(lab, node, dst, source, count)
    assert (got.replies, bool(got.error), got.unrouted) == (want.replies, bool(want.error), want.unrouted), (got, want)
    if want.error:  # the same words: "connect: No route to host", "bind: Cannot assign ..."
        assert want.error == f"ping: {got.error}", (got, want)


def test_echo_many_at_once_keeps_each_answer(lab):
    """Probes of one look run together: each gets its own replies (a raw socket sees every ICMP
    packet of the namespace), in order."""
    path = f"/run/netns/{lab.netns('r1')}"
    probes = [icmp.Probe("10.0.12.2", count=3, interval_s=0.05, wait_s=0.5), icmp.Probe("198.51.100.1"),
              icmp.Probe("10.255.0.2", source="10.255.0.1"), icmp.Probe("10.0.12.3")]
    got = icmp.echo(path, probes)
    assert [(e.replies, e.unrouted, bool(e.error)) for e in got] == [(3, False, False), (0, True, True),
                                                                    (1, False, False), (0, False, True)]


def test_echo_outside_any_namespace_is_an_oserror(lab):
    with pytest.raises(OSError):
        icmp.echo(f"/run/netns/{lab.netns('r1')}-gone", [icmp.Probe("10.0.12.2")])
    with pytest.raises(OSError):
        icmp.socket_in("/nonexistent", socket.AF_INET, socket.IPPROTO_ICMP)


def test_observer_look_same_both_ways(lab, monkeypatch):
    """The batched look (``Observer.sample``) and a check's own ping (``Observer._ping``), from
    the namespace and through ``lab.exec``: the same verdicts and details, positive and negative
    checks, with and without a route."""
    checks = [ReachCheck(name="r1-r2", src="r1", dst="10.0.12.2"),
              LoopbackCheck(name="r1-lo2", router="r1", address="10.255.0.2", source="10.255.0.1"),
              ReachCheck(name="h1-far", src="h1", dst="10.255.0.1"),
              ReachCheck(name="r2-none", src="r2", dst="198.51.100.1"),
              ReachCheck(name="r2-none-isolated", src="r2", dst="198.51.100.1", expect=False),
              ReachCheck(name="r1-r2-isolated", src="r1", dst="10.0.12.2", expect=False),
              ReachCheck(name="r3-dropped", src="r3", dst="10.0.13.1")]
    observer = Observer(lab)
    assert observer._netns_path("r1") == f"/run/netns/{lab.netns('r1')}"
    in_netns = [(r.name, r.passed, r.detail) for r in observer.sample(checks, negative_pings=5)]
    own = [observer._ping(node, dst, count=count, source=src) for _, node, dst, src, count in CASES]
    monkeypatch.setattr(Observer, "_netns_path", lambda self, node: None)
    by_exec = [(r.name, r.passed, r.detail) for r in observer.sample(checks, negative_pings=5)]
    assert in_netns == by_exec
    # a check's own ping (evaluate's retries, a negative check's pings): same verdict and words
    assert own == [observer._ping(node, dst, count=count, source=src) for _, node, dst, src, count in CASES]
    assert [ok for _, ok, _ in in_netns] == [True, True, True, False, True, False, False]
