"""Settling on evidence (ani.observer.settle): the wait after the agent's last change, and a
failing check that stops before its bound only once routing has been quiet long enough."""

from __future__ import annotations

import itertools

import pytest

from ani.observer import Observer, ReachCheck
from ani.observer import settle as settle_mod
from ani.observer.settle import NetworkWatch, network_watch, settle_left, settled
from ani.testing import FakeLab


def test_settle_left_counts_from_the_latest_change():
    # 2 s settle, the agent's last change at t=10, now t=11.5: half a second still to wait
    assert settle_left(2.0, 11.5, 10.0) == pytest.approx(0.5)
    # the faults ended later than the agent's change: they count
    assert settle_left(2.0, 11.5, 10.0, 11.0) == pytest.approx(1.5)
    assert settle_left(2.0, 13.0, 10.0) == 0.0  # long past
    assert settle_left(2.0, 11.0, None, None) == 0.0  # nothing changed: nothing to settle
    assert settle_left(0.0, 11.0, 10.9) == 0.0  # no BGP: no settle


def test_settled_needs_every_recent_look_in_the_quiet_and_the_window_after_it():
    fails = [10.0, 10.2, 10.4, 10.6, 10.8, 12.1]
    assert settled(fails, quiet_since=10.0, window_s=2.0, looks=5)  # 12.1 - 10.0 >= 2
    assert not settled(fails, quiet_since=10.0, window_s=2.5, looks=5)  # window not over yet
    assert not settled(fails, quiet_since=10.5, window_s=1.0, looks=5)  # 10.4 looked before the quiet
    assert settled(fails, quiet_since=10.5, window_s=1.0, looks=3)
    assert not settled(fails[:2], quiet_since=9.0, window_s=0.0, looks=5)  # too few looks
    assert not settled(fails, quiet_since=None, window_s=0.0, looks=1)  # never quiet
    assert not settled(fails, quiet_since=9.0, window_s=None, looks=1)  # window unknown


def test_watch_quiet_since_is_the_first_look_of_the_current_state():
    w = NetworkWatch(lambda: None, lambda: 0.0)
    w.observe("a", 1.0)
    w.observe("a", 1.25)
    assert w.quiet_since == 1.0
    w.observe("b", 1.5)  # changed by the end of this look
    assert w.quiet_since == 1.5
    w.observe(None, 1.75)  # unreadable: not quiet
    assert w.quiet_since is None
    w.observe("b", 2.0)  # the same as before the gap, but nothing is known of the gap
    assert w.quiet_since == 2.0


def test_watch_window_is_at_least_the_minimum_and_unknown_when_it_cannot_be_read():
    def boom():
        raise RuntimeError("no vty")

    w = NetworkWatch(lambda: "s", lambda: 3.5, period_s=60).start()
    w.stop()
    assert w.window_s == 3.5 and w.quiet_since is not None
    w = NetworkWatch(lambda: "s", lambda: 0.0, period_s=60).start()
    w.stop()
    assert w.window_s == settle_mod.MIN_QUIET_S
    w = NetworkWatch(lambda: "s", boom, period_s=60).start()
    w.stop()
    assert w.window_s is None and not w.settled([w.quiet_since or 0.0] * 9, looks=1)
    w = NetworkWatch(boom, lambda: 0.0, period_s=60).start()  # an unreadable state is not quiet
    w.stop()
    assert w.quiet_since is None


def _failing_lab():
    """h1's pings never answered, batched or one by one."""
    lab = FakeLab()
    lab.on(["sh", "-c"], stdout="0 0\n")  # the batched first look: check 0, no reply
    lab.on(["ping"], stdout="1 packets transmitted, 0 received, 100% packet loss\n", rc=1)
    return lab


def _observer(lab, read, looks=3):
    return Observer(lab, poll_s=0.01, settle_looks=looks,
                    make_watch=lambda _lab: NetworkWatch(read, lambda: 0.0, period_s=0.01))


def test_a_failing_check_in_a_quiet_network_stops_before_its_bound(monkeypatch):
    monkeypatch.setattr(settle_mod, "MIN_QUIET_S", 0.1)
    lab = _failing_lab()
    (r,) = _observer(lab, lambda: "same").evaluate([ReachCheck(src="h1", dst="10.0.0.2")], bound_s=60)
    assert not r.passed and "routing unchanged for" in r.detail and r.detail.startswith("0 of 1 answered")
    assert r.attempts >= 3  # never fewer than settle_looks looks (3 here)


def test_a_failing_check_in_a_changing_network_waits_for_its_bound(monkeypatch):
    monkeypatch.setattr(settle_mod, "MIN_QUIET_S", 0.1)
    counter = itertools.count()
    (r,) = _observer(_failing_lab(), lambda: next(counter)).evaluate(
        [ReachCheck(src="h1", dst="10.0.0.2")], bound_s=0.5)
    assert not r.passed and "routing unchanged" not in r.detail and r.elapsed_s >= 0.5


def test_settling_is_off_without_a_watch_or_with_settle_looks_none(monkeypatch):
    monkeypatch.setattr(settle_mod, "MIN_QUIET_S", 0.1)
    assert network_watch(FakeLab()) is None  # a fake lab has no routing state to read
    (r,) = Observer(_failing_lab(), poll_s=0.01).evaluate([ReachCheck(src="h1", dst="10.0.0.2")], bound_s=0.3)
    assert "routing unchanged" not in r.detail and r.elapsed_s >= 0.3
    (r,) = _observer(_failing_lab(), lambda: "same", looks=None).evaluate(
        [ReachCheck(src="h1", dst="10.0.0.2")], bound_s=0.3)
    assert "routing unchanged" not in r.detail and r.elapsed_s >= 0.3


def test_a_check_that_passes_later_in_a_quiet_network_still_passes(monkeypatch):
    monkeypatch.setattr(settle_mod, "MIN_QUIET_S", 30.0)  # quiet, but the window is not over
    lab = _failing_lab()
    obs = _observer(lab, lambda: "same", looks=1)
    pings = 0
    real = lab.exec

    def exec_(node, argv, timeout=10.0, input=None):
        nonlocal pings
        if argv[0] == "ping":
            pings += 1
            if pings >= 3:
                return real(node, ["answer"], timeout)
        return real(node, argv, timeout)

    lab.on(["answer"], stdout="1 packets transmitted, 1 received, 0% packet loss\n")
    lab.exec = exec_
    (r,) = obs.evaluate([ReachCheck(src="h1", dst="10.0.0.2")], bound_s=20)
    assert r.passed and r.attempts == 4  # the batched look, two failed pings, the one that answered


def test_the_first_look_is_batched_and_a_passed_check_is_not_looked_at_again():
    lab = FakeLab()
    lab.on(["sh", "-c"], stdout="0 1\n1 0\n", node="h1")  # check 0 answered, check 1 not
    lab.on(["ping"], stdout="1 packets transmitted, 1 received, 0% packet loss\n")
    a, b = Observer(lab, poll_s=0.01).evaluate(
        [ReachCheck(src="h1", dst="10.0.0.1"), ReachCheck(src="h1", dst="10.0.0.2")], bound_s=5)
    assert a.passed and a.attempts == 1 and a.detail == "1 of 1 answered" and a.at is None
    assert b.passed and b.attempts == 2  # failed in the batch, passed on its own ping
    shells = [argv for _n, argv in lab.calls if argv[0] == "sh"]
    pings = [argv for _n, argv in lab.calls if argv[0] == "ping"]
    assert len(shells) == 1 and "j 0 1 10.0.0.1 &" in shells[0][2] and "j 1 1 10.0.0.2 &" in shells[0][2]
    assert [p[-1] for p in pings] == ["10.0.0.2"]


def test_negative_checks_are_batched_with_five_pings_and_undecided_ones_pinged_alone():
    lab = FakeLab()
    # check 0: no reply of 3; check 1: no route; check 2: the script said nothing of it
    lab.on(["sh", "-c"], stdout="0 0\n1 u\n", node="h1")
    lab.on(["ping"], stdout="5 packets transmitted, 1 received, 80% packet loss\n")
    res = Observer(lab).evaluate([ReachCheck(src="h1", dst=f"10.0.0.{i}", expect=False) for i in range(3)])
    assert [r.passed for r in res] == [True, True, False]
    assert [r.detail for r in res] == ["0 of 5 answered", "no route", "1 of 5 answered"]
    (script,) = [argv[2] for _n, argv in lab.calls if argv[0] == "sh"]
    assert "j 0 5 10.0.0.0 &" in script and "-c \"$c\" -i 0.05 -W 0.25" in script
    pings = [argv for _n, argv in lab.calls if argv[0] == "ping"]
    assert len(pings) == 1 and pings[0][-1] == "10.0.0.2"
    assert pings[0][pings[0].index("-c"):] == ["-c", "5", "-i", "0.05", "-W", "0.25", "10.0.0.2"]


# -- the settle before grading, from the agent's last change (ani.campaign.observe_run) ----------


def test_changing_call_is_any_call_not_known_to_only_read():
    from ani.campaign.observe_run import changing_call

    def call(tool, changed=False, **args):
        return {"event": "tool_call", "tool": tool, "changed": changed, "arguments": args}

    assert changing_call(call("update_config", True, device="e1", commands=["x"]), "a1")
    assert changing_call(call("update_config", False, device="e1", commands=["x"]), "a1")  # tried to
    assert changing_call(call("confirm_commit"), "a2")  # an update by its kind, changed or not
    assert changing_call(call("some_vendor_tool"), "a1")  # unknown: it may have changed something
    assert not changing_call(call("execute_validation", device="c1", command="show ip route"), "a1")
    assert not changing_call(call("get_running_config", device="e4"), "a1")
    assert not changing_call(call("lock", target="candidate"), "a2")  # prepares, changes nothing
    assert not changing_call(call("shell", command="ip -j route show"), "a0")
    assert changing_call(call("shell", command="ip addr flush dev eth-c1"), "a0")
    assert not changing_call({"event": "agent_turn"}, "a1")


def _observation(monkeypatch, slept):
    from ani.campaign import observe_run

    monkeypatch.setattr(observe_run.time, "sleep", slept.append)
    obs = observe_run.RunObservation(lab=None, trajectory=None, level="a1", bound_s=None)
    return obs, observe_run


def test_settle_waits_only_what_is_left_since_the_last_change(monkeypatch):
    slept: list[float] = []
    obs, observe_run = _observation(monkeypatch, slept)
    assert obs.settle(2.0) == 0.0 and slept == []  # the agent changed nothing: no wait
    obs.saw({"event": "tool_call", "tool": "execute_validation", "arguments": {"command": "show ip route"}})
    assert obs.last_change is None  # a read moves nothing
    obs.saw({"event": "tool_call", "tool": "update_config", "changed": True, "arguments": {}})
    obs.last_change -= 0.5  # the change ended half a second ago
    waited = obs.settle(2.0)
    assert waited == pytest.approx(1.5, abs=0.1) and slept and slept[0] == pytest.approx(1.5, abs=0.1)

    class Faults:  # the faults ended after the agent's change: the settle counts from them
        ended_at = observe_run.time.monotonic()

    slept.clear()
    assert obs.settle(2.0, Faults()) == pytest.approx(2.0, abs=0.1)


# -- the recovery wait, given up on evidence (ani.observer.sampler) ------------------------------


class _Rounds:
    """An observer whose sample() fails ``failing`` in every round from ``from_round`` until
    ``until_round`` (None: for ever)."""

    def __init__(self, until_round=None):
        self.until_round = until_round
        self.n = 0

    def sample(self, checks, gate=None):
        from ani.observer import CheckResult

        self.n += 1
        ok = self.until_round is not None and self.n > self.until_round
        return [CheckResult(name=c.name, kind="route", passed=ok) for c in checks]


def _sampler(obs):
    from ani.observer import RouteCheck
    from ani.observer.sampler import Sampler

    return Sampler(obs, [RouteCheck(router="r1", prefix="10.0.0.0/24")], period_s=30.0).start()


def test_recovery_wait_gives_up_on_evidence():
    import time

    s = _sampler(_Rounds())
    s.agent_ended()
    since = time.monotonic()
    asked: list[int] = []

    def give_up(fails):
        asked.append(len(fails))
        assert all(t >= since for t in fails)
        return len(fails) >= 2

    # a 30 s period and a 60 s bound: only the evidence (and the poke after each failed round) ends it
    assert s.wait_recovered(since, 60.0, give_up=give_up) is False
    rep = s.stop()
    assert asked[-1] == 2 and all(a < 2 for a in asked[:-1])  # asked as each failed round ended
    assert rep.recovered is False and rep.recovery_s is None


def test_recovery_wait_without_evidence_keeps_its_bound_and_a_later_pass_still_recovers():
    import time

    s = _sampler(_Rounds())
    s.agent_ended()
    since = time.monotonic()
    assert s.wait_recovered(since, 0.3, give_up=lambda fails: False) is False
    s.stop()
    s = _sampler(_Rounds(until_round=3))  # fails its first rounds, then passes
    s.agent_ended()
    assert s.wait_recovered(time.monotonic(), 60.0, give_up=lambda fails: len(fails) >= 9) is True
    assert s.stop().recovered is True


# -- the initial reads, made earlier than begin() (beside the baseline check) ----------------------


class _Traj:
    def __init__(self):
        self._hook = None
        self.notes = []

    def log(self, event, **fields):
        self.notes.append((event, fields))


class _Deps:
    @staticmethod
    def make_observer(lab):
        return object()  # no sample(): not sampled


class _Spec:
    observer_bound_s = 20.0


def test_read_initial_reads_every_router_and_begin_uses_what_it_is_given():
    from ani.campaign.observe_run import RunObservation, read_initial

    lab = FakeLab()
    lab.on(["nft", "-j", "list", "ruleset"], stdout='{"nftables": [{"metainfo": {"json_schema_version": 1}}]}')
    lab.on(["ip", "-j", "addr", "show"], stdout='[{"ifname": "eth-r2", "addr_info": '
                                               '[{"family": "inet", "local": "10.0.0.1", "prefixlen": 30}]}]')
    configs, kernel = read_initial(lab)
    assert set(configs) == {"r1", "r2"} and kernel == {r: {("eth-r2", "10.0.0.1/30")} for r in ("r1", "r2")}
    before = len(lab.calls)
    obs = RunObservation.begin(_Spec(), _Deps(), lab, [], None, _Traj(), "a1", initial=(configs, kernel))
    assert obs.initial is configs and obs.kernel_initial is kernel
    assert len(lab.calls) == before  # nothing read again
    obs = RunObservation.begin(_Spec(), _Deps(), lab, [], None, _Traj(), "a1")  # none given: read now
    assert set(obs.initial) == {"r1", "r2"} and len(lab.calls) > before


def test_begin_given_a_failed_initial_read_notes_it_and_measures_no_changes():
    from ani.campaign.observe_run import RunObservation

    traj = _Traj()
    obs = RunObservation.begin(_Spec(), _Deps(), FakeLab(), [], None, traj, "a1", initial=RuntimeError("vtysh hung"))
    assert obs.initial is None
    assert traj.notes == [("observer_note", {"kind": "harness", "what": "unrequested_changes",
                                             "reason": "initial configs unreadable: RuntimeError: vtysh hung"})]


def _kernel_lab():
    lab = FakeLab()
    lab.on(["nft", "-j", "list", "ruleset"], stdout='{"nftables": [{"metainfo": {"json_schema_version": 1}}]}')
    lab.on(["ip", "-j", "addr", "show"], stdout='[{"ifname": "eth-r2", "addr_info": '
                                               '[{"family": "inet", "local": "10.0.0.1", "prefixlen": 30}]}]')
    return lab


def test_final_reads_beside_grading_are_what_the_observation_uses():
    from ani.campaign.observe_run import RunObservation

    lab = _kernel_lab()
    obs = RunObservation.begin(_Spec(), _Deps(), lab, [], None, _Traj(), "a1")
    lab.vtysh("r1", ["configure terminal", "ip prefix-list NEW seq 5 permit 10.9.0.0/16", "end"])  # the agent
    obs.read_final_beside()
    obs.read_final_beside()  # started once
    obs._final_reads.result(timeout=10)
    before = len(lab.calls)
    final = obs.final_configs()
    assert len(lab.calls) == before  # nothing read again: the reads made beside grading
    assert final["r1"] != obs.initial["r1"] and final["r2"] == obs.initial["r2"]  # read after the change
    assert obs.final_configs() is final


def test_a_failed_read_beside_grading_is_made_again_when_needed(monkeypatch):
    from ani.campaign import observe_run
    from ani.campaign.observe_run import RunObservation

    lab = _kernel_lab()
    obs = RunObservation.begin(_Spec(), _Deps(), lab, [], None, _Traj(), "a1")
    monkeypatch.setattr(observe_run, "read_initial", lambda lab, routers: (_ for _ in ()).throw(RuntimeError("x")))
    obs.read_final_beside()
    before = len(lab.calls)
    final = obs.final_configs()
    assert set(final) == {"r1", "r2"} and len(lab.calls) > before  # read again, now


def test_no_initial_read_means_nothing_read_beside_grading():
    from ani.campaign.observe_run import RunObservation

    obs = RunObservation.begin(_Spec(), _Deps(), FakeLab(), [], None, _Traj(), "a1", initial=RuntimeError("x"))
    obs.read_final_beside()
    assert obs._final_reads is None and obs.final_configs() is None


def test_an_intent_transactions_checks_wait_as_long_as_under_a_latency_fault():
    from ani.intents.transaction import run_checks

    lab = FakeLab()
    lab.on(["sh", "-c"], stdout="", node="h1")  # the batched look says nothing: the check pings alone
    lab.on(["ping"], stdout="5 packets transmitted, 0 received, 100% packet loss\n")
    (r,) = run_checks(lab, [ReachCheck(src="h1", dst="10.0.0.9", expect=False)])
    assert r["passed"]
    (script,) = [argv[2] for _n, argv in lab.calls if argv[0] == "sh"]
    assert '-c "$c" -i 0.05 -W 1 ' in script
    (ping,) = [argv for _n, argv in lab.calls if argv[0] == "ping"]
    assert ping[ping.index("-W") + 1] == "1"


# -- the settle before grading, ended on evidence (ani.observer.settle.wait_settled) -------------


class _Clock:
    """A fake monotonic clock: sleep() moves it; every read costs ``read_s``."""

    def __init__(self, read_s=0.01):
        self.t = 0.0
        self.read_s = read_s
        self.slept = []

    def __call__(self):
        return self.t

    def sleep(self, s):
        self.slept.append(s)
        self.t += s


def _script(clock, pending_until=None, changes=(), fail_at=()):
    """read_state / read_pending of a network whose timer is pending until ``pending_until``,
    whose state changes at the times ``changes`` and whose reads raise within ``fail_at``
    intervals."""
    def state():
        clock.t += clock.read_s
        if any(a <= clock.t < b for a, b in fail_at):
            raise OSError("vty socket gone")
        return sum(1 for c in changes if c <= clock.t)

    def pending():
        return ["e1: bgpd bgp_route_map_update_timer"] if pending_until is not None and clock.t < pending_until else []

    return state, pending


def test_wait_settled_waits_for_the_floor_then_the_quiet_window():
    clock = _Clock()
    state, pending = _script(clock)
    by = settle_mod.wait_settled(state, pending, floor_at=1.0, cap_at=2.0, quiet_s=0.5, period_s=0.05,
                                 clock=clock, sleep=clock.sleep)
    assert by == "evidence"
    assert clock.slept[0] == 1.0  # nothing is looked at before the delay timer's floor
    assert 1.5 <= clock.t < 1.65  # the first look at 1.0, quiet for 0.5 s after it


def test_wait_settled_counts_the_quiet_only_from_the_timers_end():
    """A state that stays the same while the route-map timer is still pending (it fires late
    under load) is no evidence: the change it brings comes after it fires."""
    clock = _Clock()
    state, pending = _script(clock, pending_until=1.4, changes=(1.6,))
    by = settle_mod.wait_settled(state, pending, floor_at=1.0, cap_at=3.0, quiet_s=0.5, period_s=0.05,
                                 clock=clock, sleep=clock.sleep)
    assert by == "evidence"
    assert clock.t >= 1.6 + 0.5  # after the late change, a whole quiet window


def test_wait_settled_ends_at_the_cap_if_the_state_keeps_changing_or_cannot_be_read():
    clock = _Clock()
    state, pending = _script(clock, changes=[1.0 + 0.2 * k for k in range(20)])
    assert settle_mod.wait_settled(state, pending, floor_at=1.0, cap_at=2.0, quiet_s=0.5, period_s=0.05,
                                   clock=clock, sleep=clock.sleep) == "cap"
    assert clock.t == pytest.approx(2.0, abs=0.02)  # the old fixed settle, not longer
    clock = _Clock()
    state, pending = _script(clock, fail_at=[(0.0, 9.0)])
    assert settle_mod.wait_settled(state, pending, floor_at=1.0, cap_at=2.0, quiet_s=0.5, period_s=0.05,
                                   clock=clock, sleep=clock.sleep) == "cap"
    clock = _Clock()
    state, pending = _script(clock, pending_until=9.0)
    assert settle_mod.wait_settled(state, pending, floor_at=1.0, cap_at=2.0, quiet_s=0.5, period_s=0.05,
                                   clock=clock, sleep=clock.sleep) == "cap"


def test_settle_on_evidence_only_with_a_readable_lab_and_a_floor(monkeypatch):
    slept: list[float] = []
    obs, observe_run = _observation(monkeypatch, slept)
    obs.saw({"event": "tool_call", "tool": "update_config", "changed": True, "arguments": {}})
    assert obs.settle(2.0, floor_s=1.0) == pytest.approx(2.0, abs=0.1)  # no lab to read: the fixed wait
    assert obs.settled_by == "fixed" and slept
    calls = {}

    def fake_wait(read_state, read_pending, *, floor_at, cap_at):
        calls.update(floor=floor_at - obs.last_change, cap=cap_at - obs.last_change)
        return "evidence"

    monkeypatch.setattr(settle_mod, "settle_reader", lambda lab: (lambda: 1, lambda: []))
    monkeypatch.setattr(settle_mod, "wait_settled", fake_wait)
    obs.saw({"event": "tool_call", "tool": "update_config", "changed": True, "arguments": {}})
    obs.settle(2.0, floor_s=1.0)
    assert obs.settled_by == "evidence"
    assert calls["floor"] == pytest.approx(1.0, abs=0.05) and calls["cap"] == pytest.approx(2.0, abs=0.05)


def test_pending_timers_reads_thread_names_of_show_thread_timers():
    from ani.lab.converge import PENDING_TIMERS, _timer_names

    text = ("\nShowing timers for default\n--------------------------\n"
            "  (bgp_holdtime_timer)                              00:00:02.040\n"
            "  bgp_route_map_update_timer                        00:00:00.412\n"
            "  work_queue_run                                    00:00:00.010\n"
            "\nShowing timers for BGP I/O thread\n---------------------------------\n")
    names = _timer_names(text)
    assert names == ["bgp_holdtime_timer", "bgp_route_map_update_timer", "work_queue_run"]
    assert [n for n in names if n in PENDING_TIMERS["bgpd"]] == ["bgp_route_map_update_timer", "work_queue_run"]


def test_wait_settled_does_not_wait_past_the_cap_for_a_slow_look():
    """A look still running at the cap is not waited for: the settle is never longer than the
    fixed one (a read that blocks until released; the settle returns while it still blocks)."""
    import threading
    import time

    release, done = threading.Event(), threading.Event()

    def blocked_read():
        release.wait(30)
        done.set()
        return 1

    t0 = time.monotonic()
    by = settle_mod.wait_settled(blocked_read, lambda: [], floor_at=t0, cap_at=t0 + 0.3)
    still_reading = not done.is_set()
    release.set()
    assert by == "cap" and still_reading


def test_wait_settled_widens_the_window_when_looks_are_slow():
    """Looks of 0.2 s (daemons waiting for the CPU): the quiet window is 4 x 0.2 = 0.8 s, not
    0.5 s; with 0.3 s looks it would be 1.2 s and the settle ends at its cap."""
    clock = _Clock(read_s=0.2)
    state, pending = _script(clock)
    by = settle_mod.wait_settled(state, pending, floor_at=1.0, cap_at=3.0, quiet_s=0.5, period_s=0.05,
                                 clock=clock, sleep=clock.sleep)
    assert by == "evidence" and clock.t >= 1.2 + 0.8
    clock = _Clock(read_s=0.3)
    state, pending = _script(clock)
    assert settle_mod.wait_settled(state, pending, floor_at=1.0, cap_at=2.0, quiet_s=0.5, period_s=0.05,
                                   clock=clock, sleep=clock.sleep) == "cap"
