"""The sampler's interval logic (pure, and on its thread with a fake observer), damage by
service class, oscillation, and Observer.sample / evaluate's "passed checks are not redone"."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass

from ani.campaign.oscillation import inverse_chain, oscillating
from ani.intents.damage import damaged_by_class, service_class_of
from ani.observer import LoopbackCheck, Observer, ReachCheck, RouteCheck
from ani.observer.evaluate import CheckResult
from ani.observer.sampler import IntervalTracker, Sampler
from ani.testing import FakeLab

# -- IntervalTracker (pure) ----------------------------------------------------------------------


def test_a_break_repaired_later_is_one_closed_interval_and_the_first_violation():
    t = IntervalTracker()
    for time_s, a_ok, b_ok in [(0.0, True, True), (1.0, False, True), (2.0, False, False), (3.0, True, False),
                               (4.0, True, True)]:
        t.observe("a", "tenant:red", time_s, a_ok)
        t.observe("b", "bgp", time_s, b_ok)
    u = t.unsafe()
    assert u is not None
    assert (u.first_violation_s, u.invariant, u.service, u.duration_s) == (1.0, "a", "tenant:red", 2.0)
    assert [(v.name, v.start_s, v.end_s) for v in u.violations] == [("a", 1.0, 3.0), ("b", 2.0, 4.0)]
    assert u.unsafe_s == 3.0  # union of [1, 3] and [2, 4]
    assert t.failing() == []


def test_an_invariant_broken_twice_has_two_intervals_and_an_open_one_has_no_end():
    t = IntervalTracker()
    for time_s, ok in [(0, False), (1, True), (2, False), (3, False)]:
        t.observe("a", None, time_s, ok)
    u = t.unsafe()
    assert [(v.start_s, v.end_s) for v in u.violations] == [(0, 1), (2, None)]
    assert u.duration_s == 1 and u.unsafe_s == 2  # the open interval counts up to the last round
    assert t.failing() == ["a"]


def test_no_failure_no_unsafe_state():
    t = IntervalTracker()
    t.observe("a", None, 0.0, True)
    t.observe("a", None, 1.0, True)
    assert t.unsafe() is None


def test_ties_take_the_invariants_order():
    t = IntervalTracker()
    t.observe("first", "underlay", 0.0, True)
    t.observe("second", "bgp", 0.0, True)
    t.observe("second", "bgp", 1.0, False)
    t.observe("first", "underlay", 1.0, False)
    assert t.unsafe().invariant == "first"


# -- Sampler on its thread, fake observer (state by round, not by time) ---------------------------


@dataclass(frozen=True)
class C:
    name: str
    service: str | None = None
    kind: str = "reach"
    expect: bool = True


class ScriptObserver:
    """``sample()`` answers from ``script``: round i -> set of failing names (the last entry
    repeats). Counts which checks each round was asked for."""

    def __init__(self, script, fail_with=None):
        self.script = script
        self.rounds: list[list[str]] = []
        self.fail_with = fail_with
        self.lock = threading.Lock()

    def sample(self, checks, gate=None):
        with self.lock:
            i = len(self.rounds)
            self.rounds.append([c.name for c in checks])
        if self.fail_with is not None and i == 1:
            raise self.fail_with
        failing = self.script[min(i, len(self.script) - 1)]
        return [CheckResult(name=c.name, kind=c.kind, passed=c.name not in failing) for c in checks]


def _until(pred, what, limit=20.0):
    end = time.monotonic() + limit
    while not pred():
        assert time.monotonic() < end, what
        time.sleep(0.005)


def test_sampler_records_a_violation_seen_between_two_passing_rounds():
    obs = ScriptObserver([set(), {"reach a"}, {"reach a"}, set()])
    s = Sampler(obs, [C("reach a", "tenant:red"), C("iso", "isolation", expect=False)], period_s=0.01,
                negative_every=2).start()
    _until(lambda: len(obs.rounds) >= 5, "five rounds")
    s.agent_ended()
    assert s.wait_recovered(since=time.monotonic(), bound_s=20)
    rep = s.stop()
    assert rep.unsafe is not None and rep.unsafe.invariant == "reach a" and rep.unsafe.service == "tenant:red"
    (v,) = rep.unsafe.violations
    assert v.end_s is not None and v.end_s > v.start_s
    assert rep.samples == len(obs.rounds) and rep.recovered is True and rep.recovery_s == 0.0
    # while the agent ran the negative check joined every 2nd round only
    assert obs.rounds[0] == ["reach a", "iso"] and obs.rounds[1] == ["reach a"]


def test_no_recovery_within_the_bound():
    obs = ScriptObserver([set(), {"reach a"}])
    s = Sampler(obs, [C("reach a")], period_s=0.01).start()
    _until(lambda: len(obs.rounds) >= 3, "three rounds")
    s.agent_ended()
    assert s.wait_recovered(since=time.monotonic(), bound_s=0.05) is False
    rep = s.stop()
    assert rep.recovered is False and rep.recovery_s is None
    assert rep.unsafe.duration_s is None and rep.unsafe.violations[0].end_s is None


def test_recovery_takes_the_rounds_it_takes():
    obs = ScriptObserver([{"reach a"}] * 4 + [set()])
    s = Sampler(obs, [C("reach a")], period_s=0.01)
    s.start()
    s.agent_ended()
    since = time.monotonic()
    assert s.wait_recovered(since=since, bound_s=20)
    rep = s.stop()
    assert rep.recovered is True and rep.recovery_s > 0  # the first rounds after 'since' still failed


def test_a_failed_round_is_kept_as_an_error_and_sampling_goes_on():
    obs = ScriptObserver([set()], fail_with=RuntimeError("vtysh hung"))
    s = Sampler(obs, [C("reach a")], period_s=0.01).start()
    _until(lambda: len(obs.rounds) >= 4, "four rounds")
    rep = s.stop()
    assert rep.errors == ["RuntimeError: vtysh hung"] and rep.samples == len(obs.rounds) - 1


def test_a_changing_call_pokes_the_sampler_at_once():
    obs = ScriptObserver([set()])
    s = Sampler(obs, [C("reach a")], period_s=3600).start()  # without pokes: one round only
    _until(lambda: len(obs.rounds) >= 1, "first round")
    s.on_event({"event": "tool_call", "changed": False})
    s.on_event({"event": "tool_call", "changed": True})
    _until(lambda: len(obs.rounds) >= 2, "the poked round")
    rep = s.stop()
    assert rep.samples == 2


class GatedObserver(ScriptObserver):
    """A :class:`ScriptObserver` whose rounds from ``hold_from`` on wait for ``release``."""

    def __init__(self, script, hold_from):
        super().__init__(script)
        self.hold_from = hold_from
        self.release = threading.Event()

    def sample(self, checks, gate=None):
        if len(self.rounds) >= self.hold_from:
            self.release.wait(20)
        return super().sample(checks, gate)


def _recovery_under_way(script):
    """A sampler (period 1 h: no round but the asked ones) whose round begun after the agent's
    end is under way when the recovery wait starts; the wait's answer once it is released."""
    obs = GatedObserver(script, hold_from=1)
    s = Sampler(obs, [C("reach a")], period_s=3600).start()
    _until(lambda: s.samples >= 1, "first round")  # over (it is cleared with the count)
    s.agent_ended()  # asks for a round, which starts and waits
    _until(lambda: s._round_started is not None, "the round after the agent's end")
    since = s._round_started
    out: list[bool] = []
    waiter = threading.Thread(target=lambda: out.append(s.wait_recovered(since=since, bound_s=20)))
    waiter.start()
    time.sleep(0.1)
    obs.release.set()
    waiter.join(20)
    return obs, s, out


def test_a_recovery_wait_answered_by_the_round_under_way_asks_for_no_other():
    obs, s, out = _recovery_under_way([set()])
    assert out == [True]
    time.sleep(0.2)
    rep = s.stop()
    assert len(obs.rounds) == 2 and rep.samples == 2  # no round after the one that answered
    assert rep.recovered is True and rep.recovery_s == 0.0


def test_a_round_under_way_that_fails_has_the_next_asked_at_once():
    obs, s, out = _recovery_under_way([set(), {"reach a"}, set()])
    assert out == [True]  # the period is an hour: the next round came from the wait's request
    rep = s.stop()
    assert len(obs.rounds) == 3 and rep.recovered is True and rep.recovery_s > 0


# -- Observer.sample / evaluate with a fake lab --------------------------------------------------


@dataclass
class R:
    rc: int
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.timed_out


#: routers e1 -- e2, host h1 behind e1
TOPOLOGY = {
    "name": "sampled",
    "routers": {"e1": {}, "e2": {}},
    "hosts": {"h1": {"gateway": "198.18.1.1"}},
    "links": [
        {"a": {"node": "e1", "ifname": "eth-e2"}, "b": {"node": "e2", "ifname": "eth-e1"}},
        {"a": {"node": "e1", "ifname": "eth-h1"}, "b": {"node": "h1", "ifname": "eth0", "address": "198.18.1.10/24"}},
    ],
}


FAKE_PING = """#!/bin/sh
# a stand-in for ping: the last argument is the destination; $ANSWERING / $UNREACHABLE list them
for a in "$@"; do dst=$a; done
echo "ping $*" >> "$PING_LOG"
case " $UNREACHABLE " in *" $dst "*) echo "connect: Network is unreachable" >&2; exit 2;; esac
case " $ANSWERING " in *" $dst "*) echo "1 packets transmitted, 1 received, 0% packet loss"; exit 0;; esac
echo "1 packets transmitted, 0 received, 100% packet loss"; exit 1
"""


def CountingLab(tmp_path, answering=(), routes=None, unreachable=()):  # noqa: N802
    """ani.testing's FakeLab whose pings: ``sh -c SCRIPT`` (the sampler's batch) runs for real
    with a fake ``ping`` first on PATH; a single ping (``evaluate``) is answered here.
    ``show ip route json`` on a router answers ``routes[router]`` ({} by default). ``lab.pings``:
    every ping as ``(destination, count)``."""
    lab = FakeLab(TOPOLOGY)
    answering, unreachable, routes = set(answering), set(unreachable), routes or {}
    lab.pings, lab.lock = [], threading.Lock()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "ping").write_text(FAKE_PING)
    (bin_dir / "ping").chmod(0o755)
    log = tmp_path / "pings.log"

    def ping(node, argv):
        if argv[0] == "sh":
            one = log.with_name(f"pings-{node}-{threading.get_ident()}.log")  # one per exec
            env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PING_LOG": str(one),
                   "ANSWERING": " ".join(answering), "UNREACHABLE": " ".join(unreachable)}
            p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=10.0)
            for ln in one.read_text().splitlines() if one.exists() else []:
                with lab.lock:
                    lab.pings.append((ln.split()[-1], int(ln.split()[ln.split().index("-c") + 1])))
            one.unlink(missing_ok=True)
            return R(p.returncode, p.stdout, p.stderr)
        dst, count = argv[-1], int(argv[argv.index("-c") + 1])
        with lab.lock:
            lab.pings.append((dst, count))
        got = count if dst in answering else 0
        return R(0 if got else 1, f"{count} packets transmitted, {got} received\n")

    def table(router, commands):
        return json.dumps(routes.get(router, {})) if commands == ["show ip route json"] else None

    lab.on_exec(ping)
    lab.on_vtysh(table)
    return lab


def execs(lab):
    """``(node, program)`` of every exec but vtysh's."""
    return [(n, a[0]) for n, a in lab.calls if a[0] != "vtysh"]


def reads(lab):
    """``(router, command)`` of every one-command vtysh read (what ``vtysh_json`` sends)."""
    return [(r, cmds[0]) for r, cmds in lab.vtysh_calls if len(cmds) == 1]


def test_sample_is_one_look_per_check_one_process_per_node_and_one_table_read_per_router(tmp_path):
    lab = CountingLab(tmp_path, answering={"10.0.0.2", "100.64.255.2"}, unreachable={"10.0.0.5"},
                      routes={"e1": {"10.1.0.0/24": [{"protocol": "bgp"}]}})
    checks = [ReachCheck(src="h1", dst="10.0.0.2"), ReachCheck(src="h1", dst="10.0.0.3"),
              ReachCheck(src="h1", dst="10.0.0.4", expect=False), ReachCheck(src="h1", dst="10.0.0.5", expect=False),
              ReachCheck(src="h1", dst="10.0.0.5"),
              RouteCheck(router="e1", prefix="10.1.0.0/24"), RouteCheck(router="e1", prefix="10.2.0.0/24"),
              LoopbackCheck(router="e1", address="100.64.255.2", source="100.64.255.1")]
    res = Observer(lab).sample(checks)
    assert [r.passed for r in res] == [True, False, True, True, False, True, False, True]
    assert [r.detail for r in res[:5]] == ["1 of 1 answered", "0 of 1 answered", "0 of 1 answered", "no route",
                                           "no route"]
    assert all(r.attempts == 1 for r in res)
    # one ping per check (the negative ones too), one process per node, one table read per router
    assert sorted(lab.pings) == sorted([("10.0.0.2", 1), ("10.0.0.3", 1), ("10.0.0.4", 1), ("10.0.0.5", 1),
                                        ("10.0.0.5", 1), ("100.64.255.2", 1)])
    assert sorted(execs(lab)) == [("e1", "sh"), ("h1", "sh")]
    assert reads(lab) == [("e1", "show ip route json")]


def test_sample_sees_a_breach_of_isolation(tmp_path):
    lab = CountingLab(tmp_path, answering={"10.0.0.4"})
    (r,) = Observer(lab).sample([ReachCheck(src="h1", dst="10.0.0.4", expect=False)])
    assert r.passed is False and r.detail == "1 of 1 answered"


def test_grading_does_not_redo_passed_checks_while_waiting_for_the_others(tmp_path):
    lab = CountingLab(tmp_path, answering={"10.0.0.2"}, routes={"e1": {"10.1.0.0/24": [{"protocol": "bgp"}]}})
    checks = [ReachCheck(src="h1", dst="10.0.0.2"), ReachCheck(src="h1", dst="10.0.0.3"),
              RouteCheck(router="e1", prefix="10.1.0.0/24"), RouteCheck(router="e2", prefix="10.2.0.0/24")]
    # the bound leaves room for retries on a loaded machine (one attempt took 0.25 s of a 0.2 s
    # bound in a full make test): the failing checks are retried every 10 ms until it passes
    res = Observer(lab, poll_s=0.01).evaluate(checks, bound_s=1.0)
    assert [r.passed for r in res] == [True, False, True, False]
    assert res[1].attempts >= 2 and res[3].attempts >= 2  # the failing ones were retried ...
    assert res[0].attempts == 1 and res[2].attempts == 1  # ... the passed ones never again
    assert lab.pings.count(("10.0.0.2", 1)) == 1
    assert reads(lab).count(("e1", "show ip route json")) == 1
    assert reads(lab).count(("e2", "show ip route json")) == res[3].attempts


# -- damage by service class ---------------------------------------------------------------------


@dataclass
class O:
    name: str
    passed: bool
    service: str | None


def test_service_tags_map_to_their_class():
    known = {"tenant-site", "static-route", "ibgp", "underlay"}
    assert service_class_of("tenant:red", known) == "tenant-site"
    assert service_class_of("isolation", known) == "tenant-site"
    assert service_class_of("bgp", known) == "ibgp"
    assert service_class_of("underlay", known) == "underlay"
    assert service_class_of("static-route/e1/198.18.7.0/24/10.0.0.1", known) == "static-route"
    assert service_class_of("weird/thing", known) == "weird/thing"  # not a class: its own
    assert service_class_of(None, known) == "untagged"


def test_damaged_by_class_counts_failed_invariants_only_each_tag_once():
    outs = [O("reach red1 -> red2", False, "tenant:red"), O("reach red1 -> red3", False, "tenant:red"),
            O("reach blue1 -> blue2", True, "tenant:blue"), O("bgp e1 -> c1", False, "bgp"),
            O("route e2 198.18.7.0/24", False, "static-route/e1/198.18.7.0/24/10.0.0.1"),
            O("something", False, None)]
    assert damaged_by_class(outs) == {
        "ibgp": ["bgp"], "static-route": ["static-route/e1/198.18.7.0/24/10.0.0.1"],
        "tenant-site": ["tenant:red"], "untagged": ["something"]}
    assert damaged_by_class([O("x", True, "bgp")]) == {}


# -- oscillation ---------------------------------------------------------------------------------


def _upd(cmds, ok=True):
    return {"event": "tool_call", "tool": "update_config", "ok": ok, "changed": True,
            "arguments": {"device": "e1", "commands": cmds}}


READ = {"event": "tool_call", "tool": "get_running_config", "ok": True, "arguments": {"device": "e1"}}
ADD = ["ip route 10.9.0.0/24 Null0"]
DEL = ["no ip route 10.9.0.0/24 Null0"]


def test_undo_and_redo_is_oscillation_even_with_reads_between():
    events = [_upd(ADD), READ, _upd(DEL), READ, _upd(ADD)]
    assert inverse_chain(events, "a1") == 2 and oscillating(events, "a1")


def test_one_undo_is_not_oscillation_nor_are_refused_calls():
    assert not oscillating([_upd(ADD), READ, _upd(DEL)], "a1")
    assert not oscillating([_upd(ADD), _upd(DEL, ok=False), _upd(ADD)], "a1")
    other = ["ip route 10.8.0.0/24 Null0"]
    assert not oscillating([_upd(ADD), _upd(DEL), _upd(other)], "a1")


def test_no_sampling_process_starts_while_an_agent_call_is_in_flight():
    entered, passed = threading.Event(), threading.Event()

    class GateObserver:
        def sample(self, checks, gate=None):
            entered.set()
            gate()
            passed.set()
            return [CheckResult(name=c.name, kind=c.kind, passed=True) for c in checks]

    s = Sampler(GateObserver(), [C("reach a")], period_s=3600)
    s.call_started()  # the agent's call is under way when the round begins
    s.start()
    assert entered.wait(10)
    assert not passed.wait(0.2)  # held back ...
    s.call_ended()
    assert passed.wait(10)  # ... until the call returned
    assert s.stop().samples == 1


def test_sample_reads_a_routers_commands_with_one_vtysh(tmp_path):
    from ani.observer import BgpSessionCheck

    docs = {"show ip route json": '{"10.1.0.0/24": [{"protocol": "bgp"}]}',
            "show bgp summary json": '{"ipv4Unicast": {"peers": {"100.64.255.1": {"state": "Idle"}}}}'}
    lab = CountingLab(tmp_path)
    lab.on_vtysh(lambda router, commands: R(0, "\n".join(docs[c] for c in commands) + "\n"))
    checks = [RouteCheck(router="e1", prefix="10.1.0.0/24"), BgpSessionCheck(router="e1", neighbor="100.64.255.1"),
              RouteCheck(router="e1", prefix="10.2.0.0/24")]
    res = Observer(lab).sample(checks)
    assert [(r.passed, r.detail) for r in res] == [(True, "route present (bgp)"), (False, "state Idle"),
                                                   (False, "no route")]
    assert lab.vtysh_calls == [("e1", ["show ip route json", "show bgp summary json"])]  # one vtysh, nothing else


class KwObserver(ScriptObserver):
    """A :class:`ScriptObserver` that takes ``negative_pings`` and notes it per round."""

    def __init__(self, script):
        super().__init__(script)
        self.negative_pings: list[int] = []

    def sample(self, checks, gate=None, negative_pings=1):
        self.negative_pings.append(negative_pings)
        return super().sample(checks, gate)


def test_rounds_after_the_agents_end_give_negative_checks_the_evaluations_pings():
    from ani.observer.evaluate import NEGATIVE_PINGS

    obs = KwObserver([set()])
    s = Sampler(obs, [C("reach a"), C("iso", expect=False)], period_s=3600).start()
    _until(lambda: s.samples >= 1, "first round")
    s.agent_ended()
    _until(lambda: s.samples >= 2, "the round after the agent's end")
    s.stop()
    assert obs.negative_pings == [1, NEGATIVE_PINGS] and NEGATIVE_PINGS == 5
    s = Sampler(ScriptObserver([set()]), [C("iso", expect=False)], period_s=3600).start()  # no such keyword
    s.agent_ended()
    _until(lambda: s.samples >= 2, "two rounds")
    assert s.stop().errors == []


def test_sample_gives_negative_checks_their_own_number_of_pings(tmp_path):
    from ani.observer import Observer, ReachCheck
    from ani.testing import FakeLab

    lab = FakeLab()
    lab.on(["sh", "-c"], stdout="0 1\n1 0\n", node="h1")
    checks = [ReachCheck(src="h1", dst="10.0.0.1"), ReachCheck(src="h1", dst="10.0.0.2", expect=False)]
    res = Observer(lab).sample(checks, negative_pings=5)
    assert [r.passed for r in res] == [True, True] and res[1].detail == "0 of 5 answered"
    (script,) = [argv[2] for _n, argv in lab.calls if argv[0] == "sh"]
    assert "j 0 1 10.0.0.1 &" in script and "j 1 5 10.0.0.2 &" in script
    lab.calls.clear()
    Observer(lab).sample([ReachCheck(src="h1", dst="10.0.0.2", expect=False)])  # default: one ping
    (script,) = [argv[2] for _n, argv in lab.calls if argv[0] == "sh"]
    assert "j 0 1 10.0.0.2 &" in script
