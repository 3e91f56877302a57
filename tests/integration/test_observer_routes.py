"""The observer's ``route`` check on real FRR 8.4 (the tri lab: r2 announces 198.18.1.0/24 over
iBGP, OSPF carries the loopbacks): a route is found by its exact prefix in ``show ip route json``
(a covering or covered prefix is not it), its best BGP path's local preference is read, and the
checks of one router share their reads (ani.observer.evaluate._Reader)."""

from __future__ import annotations

import threading

import pytest

from ani.observer import Observer
from ani.observer.checks import RouteCheck

pytestmark = pytest.mark.integration


class Counting:
    """The real lab, its ``vtysh_json`` reads counted (issue 28: a spy around a real lab, not a
    fake one, so not on ``ani.testing.FakeLab``)."""

    def __init__(self, lab):
        self._lab, self.reads, self._lock = lab, [], threading.Lock()

    def __getattr__(self, name):
        return getattr(self._lab, name)

    def vtysh_json(self, router, command, timeout=10.0):
        with self._lock:
            self.reads.append((router, command))
        return self._lab.vtysh_json(router, command, timeout=timeout)


def test_route_checks_on_real_frr(tri_lab):
    checks = [
        RouteCheck(router="r1", prefix="198.18.1.0/24"),                 # iBGP from r2
        RouteCheck(router="r3", prefix="198.18.1.0/24", local_pref=100),  # the default local preference
        RouteCheck(router="r1", prefix="10.255.0.3/32"),                 # OSPF
        RouteCheck(router="r1", prefix="198.18.0.0/16", expect=False),   # covers 198.18.1.0/24: not it
        RouteCheck(router="r1", prefix="198.18.1.0/25", expect=False),   # inside it: not it either
        RouteCheck(router="r3", prefix="198.18.1.0/24", local_pref=200),
    ]
    lab = Counting(tri_lab)
    res = Observer(lab, poll_s=0.2).evaluate(checks, bound_s=2)
    assert [r.passed for r in res] == [True, True, True, True, True, False], [(r.name, r.detail) for r in res]
    assert res[0].detail.startswith("route present (bgp")
    assert "local-pref 100" in res[5].detail
    # one whole-table read per router and round, whatever the number of its checks: r1's four
    # checks pass in round one on a quiet machine; under load one may take a second round, and
    # the reads are then the rounds r1 was evaluated in, not the sum over its checks
    tables = [r for r in lab.reads if r[1] == "show ip route json"]
    r1_rounds = max(r.attempts for r, c in zip(res, checks, strict=True) if c.router == "r1")
    assert tables.count(("r1", "show ip route json")) == r1_rounds
    assert r1_rounds < sum(r.attempts for r, c in zip(res, checks, strict=True) if c.router == "r1")
    assert len(tables) <= 2 + res[5].attempts


def test_routing_state_settles_and_a_failing_check_stops_on_evidence(tri_lab):
    """issue 24 §3 on real FRR: the converged tri lab's routing state reads the same twice
    (uptimes and counters left out), its silent timers are its 1 s OSPF hellos (every BGP
    session is up), a check that cannot pass stops once routing has been quiet for the window
    (not at its 20 s bound), and the batched looks (one ``sh`` per node, three pings per
    negative check) decide real pings."""
    import time

    from ani.lab import converge
    from ani.observer import LoopbackCheck, ReachCheck
    from ani.observer.settle import MIN_QUIET_S, SETTLE_LOOKS

    a = converge.routing_state(tri_lab)
    time.sleep(1.2)  # more than one keepalive and hello: counters and uptimes move, the state does not
    assert converge.routing_state(tri_lab) == a and set(a) == {"r1", "r2", "r3"}
    assert converge.silent_timers_s(tri_lab) == 3.0  # its OSPF dead interval (hello 1 s, dead 3 s)
    t0 = time.monotonic()
    res = Observer(tri_lab, settle_looks=SETTLE_LOOKS).evaluate([
        RouteCheck(router="r1", prefix="203.0.113.0/24"),           # never there
        ReachCheck(src="h1", dst="10.255.0.3"),                      # r3's loopback from behind r2
        LoopbackCheck(router="r2", address="10.255.0.3", source="10.255.0.2"),
        ReachCheck(src="h1", dst="203.0.113.1", expect=False),       # no route anywhere
    ], bound_s=20)
    took = time.monotonic() - t0
    assert [r.passed for r in res] == [False, True, True, True], [r.detail for r in res]
    assert "routing unchanged for" in res[0].detail and res[0].attempts >= 3
    assert MIN_QUIET_S <= res[0].elapsed_s < 15 and took < 17
    assert res[1].attempts == 1 and res[3].detail in ("0 of 5 answered", "no route")
    # the negative check's short wait (ping -c 5 -i 0.05 -W 0.25) hears a real lab's replies
    (leak,) = Observer(tri_lab).evaluate([ReachCheck(src="h1", dst="10.255.0.3", expect=False)])
    assert not leak.passed and leak.detail == "5 of 5 answered", leak.detail


def test_settle_waits_for_a_prefix_list_change_that_takes_effect_late(tri_lab):
    """issue 24 §3: a prefix-list change takes effect only when bgpd's route-map update timer
    fires (``bgp route-map delay-timer 1`` here): until then r1's routing state stays the same
    for longer than the settle's quiet window (0.5 s), with the route r2 is about to withdraw.
    Waited without a floor, the settle on evidence still ends only after r1 lost the route: the
    pending timer, not a quiet state, keeps it waiting (a stable state seen before the timer
    fired is no evidence)."""
    import time

    from ani.observer.settle import SETTLE_QUIET_S, settle_reader, wait_settled

    def has(router):
        return "198.18.1.0/24" in tri_lab.vtysh_json(router, "show ip route 198.18.1.0/24 json")

    def routed(present, bound=15.0):
        t = time.monotonic()
        while has("r1") != present and time.monotonic() - t < bound:
            time.sleep(0.1)
        return has("r1") == present

    setup = ["configure terminal", "bgp route-map delay-timer 1", "route-map RM-T deny 10",
             "match ip address prefix-list PL-T", "exit", "route-map RM-T permit 20", "exit", "router bgp 65000",
             "address-family ipv4 unicast", "neighbor 10.255.0.1 route-map RM-T out"]
    read_state, read_pending = settle_reader(tri_lab)
    try:
        tri_lab.vtysh("r2", setup)  # PL-T does not exist yet: RM-T's deny matches nothing
        assert routed(True)
        time.sleep(1.5)  # the setup's own timer has fired
        assert read_pending() == []
        tri_lab.vtysh("r2", ["configure terminal", "ip prefix-list PL-T seq 10 permit 198.18.1.0/24"])
        t0 = time.monotonic()
        assert any("r2: bgpd bgp_route_map_update_timer" == p for p in read_pending())
        by = wait_settled(read_state, read_pending, floor_at=t0, cap_at=t0 + 5.0)
        took = time.monotonic() - t0
        assert not has("r1"), f"settled by {by} after {took:.2f} s with the withdrawn route still on r1"
        assert by == "evidence" and SETTLE_QUIET_S < took < 5.0
    finally:
        tri_lab.vtysh("r2", ["configure terminal", "router bgp 65000", "address-family ipv4 unicast",
                             "no neighbor 10.255.0.1 route-map RM-T out", "exit", "exit", "no route-map RM-T",
                             "no ip prefix-list PL-T", "no bgp route-map delay-timer"])
    assert routed(True)  # the lab as the other tests of this module find it
