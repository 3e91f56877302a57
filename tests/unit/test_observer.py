"""Observer evaluation against a fake lab (the real one is exercised in integration tests)."""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from ani.errors import ConfigError, ObserverError
from ani.observer import BgpSessionCheck, LoopbackCheck, Observer, ReachCheck, parse_checks
from ani.testing import FakeLab as ShippedFakeLab


@dataclass
class R:
    rc: int
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    elapsed_s: float = 0.0


def _batch(lab, node, script, timeout):
    """The observer's batched pings (``sh -c``, one ``j INDEX COUNT ARGS &`` line per check):
    each line is one ping through ``lab.exec`` (recorded as the ping it stands for), answered as
    the script's shell function prints it."""
    def one(ln):
        k, count, *args = ln.rstrip(" &").split()[1:]
        argv = ["ping", "-n", "-q", "-c", count] + (["-i", "0.05"] if count != "1" else []) + ["-W", "1", *args]
        r = lab.exec(node, argv, timeout)
        m = re.search(r"(\d+) (?:packets )?received", r.stdout + r.stderr)
        return f"{k} {m.group(1) if m else ('u' if 'nreachable' in r.stdout + r.stderr else 'x')}"

    lines = [ln for ln in script.splitlines() if ln.startswith("j ")]
    with ThreadPoolExecutor(max_workers=max(1, len(lines))) as pool:  # the script's pings run at once (&)
        out = list(pool.map(one, lines))
    return R(0, "\n".join(out) + "\n")


def _ping_out(sent, got):
    return f"--- x ping statistics ---\n{sent} packets transmitted, {got} received, {100 - 100 * got // sent}% packet loss\n"


#: routers e1 -- c1, host h1 behind e1, h2 behind c1
TOPOLOGY = {
    "name": "observed",
    "routers": {"e1": {}, "c1": {}},
    "hosts": {"h1": {"gateway": "198.18.1.1"}, "h2": {"gateway": "198.18.2.1"}},
    "links": [
        {"a": {"node": "e1", "ifname": "eth-c1"}, "b": {"node": "c1", "ifname": "eth-e1"}},
        {"a": {"node": "e1", "ifname": "eth-h1"}, "b": {"node": "h1", "ifname": "eth0", "address": "198.18.1.10/24"}},
        {"a": {"node": "c1", "ifname": "eth-h2"}, "b": {"node": "h2", "ifname": "eth0", "address": "198.18.2.10/24"}},
    ],
}


def FakeLab(up_after=0.0, blocked=(), leaky=(), ping_s=0.0):  # noqa: N802
    """ani.testing's FakeLab whose pings answer as a network would: reachability flips on after
    ``up_after`` seconds; ``blocked`` destinations never answer, ``leaky`` ones answer one ping;
    each ping takes ``ping_s``. ``lab.pings``: every ping as ``(node, argv, seconds since the
    lab was made)``; ``lab.bgp_state``: the state ``show bgp summary json`` gives 100.64.255.1."""
    lab = ShippedFakeLab(TOPOLOGY)
    lab.t0, lab.lock, lab.pings, lab.bgp_state = time.monotonic(), threading.Lock(), [], "Active"
    blocked, leaky = set(blocked), set(leaky)

    def ping(node, argv):
        if argv[0] == "sh":
            return _batch(lab, node, argv[2], 10.0)
        time.sleep(ping_s)
        with lab.lock:
            lab.pings.append((node, list(argv), time.monotonic() - lab.t0))
        dst, count = argv[-1], int(argv[argv.index("-c") + 1])
        if dst in leaky:
            return R(0, _ping_out(count, 1))
        if dst in blocked or time.monotonic() - lab.t0 < up_after:
            return R(1, _ping_out(count, 0))
        return R(0, _ping_out(count, count))

    def bgp(router, commands):
        if commands != ["show bgp summary json"]:
            return None
        return json.dumps({"ipv4Unicast": {"peers": {"100.64.255.1": {"state": lab.bgp_state}}}})

    lab.on_exec(ping)
    lab.on_vtysh(bgp)
    return lab


def test_parse_checks_discriminates_and_names_bad_field():
    cs = parse_checks([{"kind": "reach", "src": "h1", "dst": "10.0.0.1"}, {"kind": "bgp_session", "router": "e1", "neighbor": "1.1.1.1"}])
    assert isinstance(cs[0], ReachCheck) and cs[0].expect and cs[0].name == "reach h1 -> 10.0.0.1"
    assert isinstance(cs[1], BgpSessionCheck)
    with pytest.raises(ConfigError, match=r"checks\.1\.loopback\.address"):
        parse_checks([cs[0].model_dump(mode="json"), {"kind": "loopback", "router": "e1", "address": "x"}])
    with pytest.raises(ConfigError, match=r"checks\.0"):
        parse_checks([{"kind": "teleport"}])


def test_positive_retried_until_converged():
    lab = FakeLab(up_after=0.5)
    (r,) = Observer(lab, poll_s=0.05).evaluate([ReachCheck(src="h1", dst="10.0.0.2")], bound_s=5)
    assert r.passed and r.attempts > 1 and r.elapsed_s > 0.4  # it waited for convergence
    assert r.detail == "1 of 1 answered"


def test_positive_fails_at_bound():
    lab = FakeLab(blocked={"10.0.0.2"})
    # a bound with room for a second attempt on a loaded machine (one attempt took 0.25 s there)
    (r,) = Observer(lab, poll_s=0.05).evaluate([ReachCheck(src="h1", dst="10.0.0.2")], bound_s=1.0)
    assert not r.passed and r.attempts >= 2 and "0 of 1 answered" in r.detail and r.elapsed_s >= 1.0


def test_negative_runs_after_positives_and_needs_silence():
    lab = FakeLab(up_after=0.3, blocked={"10.0.0.9"}, leaky={"10.0.0.8"})
    checks = [
        ReachCheck(src="h1", dst="10.0.0.9", expect=False),
        ReachCheck(src="h1", dst="10.0.0.2"),
        ReachCheck(src="h2", dst="10.0.0.8", expect=False),
    ]
    res = Observer(lab, poll_s=0.05).evaluate(checks, bound_s=5)
    assert [r.name for r in res] == [c.name for c in checks]
    assert [r.passed for r in res] == [True, True, False]
    assert res[2].detail == "1 of 5 answered"
    last_positive = max(t for _n, a, t in lab.pings if a[-1] == "10.0.0.2")
    first_negative = min(t for _n, a, t in lab.pings if a[-1] in ("10.0.0.9", "10.0.0.8"))
    assert first_negative >= last_positive
    neg_argv = next(a for _n, a, _t in lab.pings if a[-1] == "10.0.0.9")
    assert neg_argv[neg_argv.index("-c") + 1] == "5"


def test_negative_fails_when_ping_cannot_run():
    lab = FakeLab()
    lab.on_exec(lambda node, argv: R(127, "", "ping: not found"))
    (r,) = Observer(lab).evaluate([ReachCheck(src="h1", dst="10.0.0.9", expect=False)])
    assert not r.passed and "could not run ping" in r.detail


def test_no_route_counts_as_unreachable():
    lab = FakeLab()
    lab.on_exec(lambda node, argv: R(2, "", "connect: Network is unreachable"))
    (r,) = Observer(lab).evaluate([ReachCheck(src="h1", dst="10.0.0.9", expect=False)])
    assert r.passed and "no route" in r.detail


def test_loopback_uses_source():
    lab = FakeLab()
    (r,) = Observer(lab).evaluate([LoopbackCheck(router="e1", address="100.64.255.1", source="100.64.255.11")])
    assert r.passed
    argv = lab.pings[0][1]
    assert argv[argv.index("-I") + 1] == "100.64.255.11" and argv[0] == "ping" and lab.pings[0][0] == "e1"


def test_bgp_session_states():
    lab = FakeLab()
    obs = Observer(lab, poll_s=0.05)
    ok, missing = obs.evaluate(
        [BgpSessionCheck(router="e1", neighbor="100.64.255.1"), BgpSessionCheck(router="e1", neighbor="100.64.255.2")],
        bound_s=0.2,
    )
    assert not ok.passed and ok.detail.startswith("state Active")
    assert not missing.passed and missing.detail.startswith("neighbor not configured")
    lab.bgp_state = "Established"
    (ok,) = obs.evaluate([BgpSessionCheck(router="e1", neighbor="100.64.255.1")], bound_s=0.2)
    assert ok.passed and ok.attempts == 1 and ok.detail == "state Established"


def test_unknown_node_is_observer_error():
    with pytest.raises(ObserverError, match="node 'x9' is not in the lab"):
        Observer(FakeLab()).evaluate([ReachCheck(src="x9", dst="10.0.0.1")])


def test_runs_concurrently():
    checks = [ReachCheck(src="h1", dst=f"10.0.0.{i}") for i in range(1, 33)]
    t0 = time.monotonic()
    res = Observer(FakeLab(ping_s=0.2), workers=16).evaluate(checks)
    assert all(r.passed for r in res) and time.monotonic() - t0 < 1.5


def RouteLab(present=True, lp=200, comms="64500:101 64500:900", prefix="198.18.11.0/24"):  # noqa: N802
    """A FakeLab answering ``show ip route json`` (the whole table: a covering /16 and, if
    ``present``, the prefix) and ``show bgp ipv4 unicast PREFIX json``, as FRR 8.4 prints them."""
    lab = ShippedFakeLab(TOPOLOGY)

    def answer(router, commands):
        (command,) = commands
        if command == "show ip route json":
            table = {"198.18.0.0/16": [{"prefix": "198.18.0.0/16", "protocol": "static"}]}
            if present:
                table[prefix] = [{"prefix": prefix, "protocol": "bgp"}]
            return json.dumps(table)
        assert command == f"show bgp ipv4 unicast {prefix} json", command
        return json.dumps({"paths": [{"bestpath": {"overall": True}, "locPrf": lp, "community": {"string": comms}},
                                     {"locPrf": 999}]})

    lab.on_vtysh(answer)
    return lab


def test_route_check_presence_absence_and_best_path_attributes():
    from ani.observer.checks import RouteCheck

    c = RouteCheck(router="e1", prefix="198.18.11.0/24", local_pref=200, community="64500:101")
    assert c.name == "route e1 198.18.11.0/24 local-pref 200 community 64500:101"
    (r,) = Observer(RouteLab(), poll_s=0.01).evaluate([c], bound_s=0.05)
    assert r.passed and r.kind == "route" and "local-pref 200" in r.detail
    # the best path's local preference decides, not another path's
    (r,) = Observer(RouteLab(lp=100), poll_s=0.01).evaluate([c], bound_s=0.05)
    assert not r.passed and "local-pref 100" in r.detail
    (r,) = Observer(RouteLab(comms="64500:102"), poll_s=0.01).evaluate([c], bound_s=0.05)
    assert not r.passed
    gone = RouteCheck(router="e1", prefix="198.18.11.0/24", expect=False)
    assert gone.name == "no route e1 198.18.11.0/24"
    (r,) = Observer(RouteLab(present=False), poll_s=0.01).evaluate([gone], bound_s=0.05)
    assert r.passed and r.detail == "no route"
    (r,) = Observer(RouteLab(present=True), poll_s=0.01).evaluate([gone], bound_s=0.05)
    assert not r.passed and r.attempts > 1  # retried until the bound: a withdrawal converges too
    with pytest.raises(ValueError, match="present route"):
        RouteCheck(router="e1", prefix="10.0.0.0/8", expect=False, local_pref=5)
    assert parse_checks([c.model_dump(mode="json")]) == [c]


def test_route_check_wants_the_exact_prefix_not_a_covering_route():
    from ani.observer.checks import RouteCheck

    (r,) = Observer(RouteLab(present=False), poll_s=0.01).evaluate(
        [RouteCheck(router="e1", prefix="198.18.11.0/24")], bound_s=0.05)
    assert not r.passed and r.detail.startswith("no route")  # 198.18.0.0/16 covers it: not the route
    (r,) = Observer(RouteLab(present=False), poll_s=0.01).evaluate(
        [RouteCheck(router="e1", prefix="198.18.0.0/16")], bound_s=0.05)
    assert r.passed and r.detail == "route present (static)"


def CountingLab(up_after_reads=0, broken=False):  # noqa: N802
    """Counts vtysh reads (``lab.reads``); the BGP sessions come up after ``up_after_reads`` of
    them; ``broken``: every read fails (bgpd is not running)."""
    lab = FakeLab()
    lab.reads = 0

    def read(router, commands):
        with lab.lock:
            lab.reads += 1
            n = lab.reads
        if broken:
            raise RuntimeError("vtysh: bgpd is not running")
        time.sleep(0.05)  # a read takes a while: concurrent checks meet it in flight
        peers = {f"100.64.255.{i}": {"state": "Established" if n > up_after_reads else "Active"}
                 for i in range(1, 11)}
        return json.dumps({"ipv4Unicast": {"peers": peers}})

    lab.on_vtysh(read)
    return lab


def test_checks_of_one_router_share_one_read_per_round():
    lab = CountingLab()
    checks = [BgpSessionCheck(router="e1", neighbor=f"100.64.255.{i}") for i in range(1, 11)]
    res = Observer(lab, poll_s=0.01).evaluate(checks, bound_s=2)
    assert all(r.passed for r in res) and lab.reads == 1
    # another evaluation reads again: nothing is kept between evaluations
    Observer(lab, poll_s=0.01).evaluate(checks[:1], bound_s=2)
    assert lab.reads == 2


def test_a_retried_check_never_looks_at_the_read_it_failed_on_again():
    lab = CountingLab(up_after_reads=3)
    checks = [BgpSessionCheck(router="e1", neighbor=f"100.64.255.{i}") for i in range(1, 5)]
    res = Observer(lab, poll_s=0.01).evaluate(checks, bound_s=5)
    assert all(r.passed for r in res)
    # every attempt after a failure made a new read (3 failing reads, then the one that passed),
    # shared by the checks retrying at the same time
    assert lab.reads == 4 and all(2 <= r.attempts <= 4 for r in res)


def test_a_failed_read_fails_the_attempt_of_every_check_sharing_it():
    lab = CountingLab(broken=True)
    res = Observer(lab, poll_s=0.05).evaluate(
        [BgpSessionCheck(router="e1", neighbor=f"100.64.255.{i}") for i in (1, 2)], bound_s=1.0)  # room for 2 reads
    assert [r.passed for r in res] == [False, False]
    assert all("bgpd is not running" in r.detail for r in res) and lab.reads >= 2


def test_on_negatives_is_called_once_between_the_positive_and_the_negative_checks():
    lab = FakeLab(up_after=0.2, blocked={"10.0.0.9"})
    obs = Observer(lab, poll_s=0.05)
    seen: list[int] = []
    obs.on_negatives = lambda: seen.append(len(lab.pings))
    checks = [ReachCheck(src="h1", dst="10.0.0.2"), ReachCheck(src="h1", dst="10.0.0.9", expect=False)]
    assert [r.passed for r in obs.evaluate(checks, bound_s=5)] == [True, True]
    (at,) = seen  # once; every positive ping made before it, every negative one after
    assert {a[-1] for _n, a, _t in lab.pings[:at]} == {"10.0.0.2"}
    assert {a[-1] for _n, a, _t in lab.pings[at:]} == {"10.0.0.9"}
    seen.clear()
    obs.evaluate([ReachCheck(src="h1", dst="10.0.0.2")], bound_s=5)  # no negative check: at the end
    assert seen == [len(lab.pings)]


def test_negative_wait_is_the_pings_wait_and_must_be_positive():
    from ani.observer.evaluate import DELAYED_NEGATIVE_WAIT_S, NEGATIVE_PINGS, NEGATIVE_WAIT_S

    assert NEGATIVE_PINGS >= 3 and NEGATIVE_WAIT_S < DELAYED_NEGATIVE_WAIT_S == 1.0
    obs = Observer(FakeLab(), negative_wait_s=DELAYED_NEGATIVE_WAIT_S)
    assert '-c "$c" -i 0.05 -W 1 ' in obs._ping_fn()
    lab = FakeLab(blocked={"10.0.0.9"})
    Observer(lab, negative_wait_s=DELAYED_NEGATIVE_WAIT_S)._ping("h1", "10.0.0.9", count=NEGATIVE_PINGS)
    (argv,) = [a for _n, a, _t in lab.pings]
    assert argv[argv.index("-c"):] == ["-c", "5", "-i", "0.05", "-W", "1", "10.0.0.9"]
    with pytest.raises(ValueError, match="negative_wait_s"):
        Observer(FakeLab(), negative_wait_s=0)
