"""FaultSession logic with a fake kind (issue 14, §1): injection at the step point, verification,
still-present checks, removal after the duration and at stop (idempotent), invalid runs (did not
take, vanished, inject raised, could not be removed, unavailable), not-reached faults, events."""

from __future__ import annotations

import pytest

from ani.errors import FaultError
from ani.faults.base import FaultKind, FaultSpec
from ani.faults.session import FaultSession
from ani.testing import FakeLab
from ani.trajectory import Trajectory


def fault_lab() -> FakeLab:
    """ani.testing's FakeLab carrying the fake kinds' bookkeeping: ``faults`` (the names in
    effect), ``log`` (``inject <name>`` / ``remove <name>``, in order)."""
    lab = FakeLab()
    lab.faults: set[str] = set()  # type: ignore[attr-defined]
    lab.log: list[str] = []  # type: ignore[attr-defined]
    return lab


class Fake(FaultKind):
    name = "fake"
    take = True          # does inject take effect?
    raise_inject = False
    stuck = False         # does remove leave it there?
    why_unavailable = None

    def unavailable(self, lab):
        return self.why_unavailable

    def inject(self, lab, spec):
        if self.raise_inject:
            raise FaultError("fake: cannot")
        key = spec.target["name"]
        lab.log.append(f"inject {key}")
        if self.take:
            lab.faults.add(key)
        return key

    def verify(self, lab, spec, handle):
        return (handle in lab.faults, f"{handle} {'on' if handle in lab.faults else 'off'}")

    def remove(self, lab, spec, handle):
        lab.log.append(f"remove {handle}")
        if not self.stuck:
            lab.faults.discard(handle)

    def removed(self, lab, spec, handle):
        return (handle not in lab.faults, f"{handle} gone" if handle not in lab.faults else f"{handle} still there")


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def make(schedule, kind=None, **kw):
    lab, clock, traj = fault_lab(), Clock(), Trajectory()
    k = kind or Fake()
    s = FaultSession(lab, schedule, traj, clock=clock, get_kind=lambda n: k, watch=False)
    return s, lab, clock, traj


def spec(name, at, dur=None):
    return FaultSpec(kind="fake", at_step=at, duration_s=dur, target={"name": name})


def events(traj):
    return [(e["event"], e["target"]["name"]) for e in traj.events]


def test_injected_at_its_step_and_removed_at_stop():
    s, lab, clock, traj = make([spec("b", 2), spec("a", 0)])
    s.start()
    assert lab.faults == {"a"}           # step 0: before the first call
    s.on_tool_call(1)
    assert lab.faults == {"a"}
    clock.t += 2.5
    s.on_tool_call(2)
    assert lab.faults == {"a", "b"}
    clock.t += 1
    s.stop()
    s.stop()                             # idempotent
    assert lab.faults == set() and lab.log.count("remove a") == 1
    recs = s.records
    assert [(r.target["name"], r.injected, r.verified, r.removed) for r in recs] == [
        ("a", True, True, True), ("b", True, True, True)]
    assert recs[1].injected_s == 2.5 and recs[1].removed_s == 3.5
    assert s.invalid_reason is None and s.ended_at == 103.5
    assert events(traj) == [("fault_injected", "a"), ("fault_verified", "a"),
                            ("fault_injected", "b"), ("fault_verified", "b"),
                            ("fault_removed", "b"), ("fault_removed", "a")]  # last injected first
    assert all(e["source"] == "harness" for e in traj.events)


def test_duration_ends_the_fault():
    s, lab, clock, _ = make([spec("a", 1, dur=3.0)])
    s.start()
    s.on_tool_call(1)
    clock.t += 2.9
    s.on_tool_call(2)
    assert lab.faults == {"a"} and s.ended_at is None
    clock.t += 0.2
    s.on_tool_call(3)
    assert lab.faults == set() and s.records[0].removed and s.ended_at == clock.t


def test_a_missed_step_still_injects():
    s, lab, _, _ = make([spec("a", 2)])
    s.start()
    s.on_tool_call(5)   # the hook saw step 5 first (e.g. a call counted elsewhere)
    assert lab.faults == {"a"}


def test_not_reached():
    s, lab, _, traj = make([spec("a", 1), spec("b", 9)])
    s.start()
    s.on_tool_call(1)
    s.stop()
    r = s.records
    assert r[1].injected is False and "not reached" in r[1].detail
    assert ("fault_not_reached", "b") in events(traj) and s.invalid_reason is None


def test_did_not_take_is_invalid_and_stops_further_faults():
    k = Fake()
    k.take = False
    s, lab, _, traj = make([spec("a", 0), spec("b", 1)], kind=k)
    s.start()
    s.on_tool_call(1)
    assert s.invalid_reason and "did not take effect: a off" in s.invalid_reason
    assert lab.log == ["inject a", "remove a"]   # b never injected
    assert s.records[1].injected is False and "already environment_invalid" in s.records[1].detail
    assert ("fault_invalid", "a") in events(traj)


def test_vanished_is_invalid():
    s, lab, clock, traj = make([spec("a", 0)])
    s.start()
    s.on_tool_call(1)
    assert s.invalid_reason is None
    lab.faults.discard("a")   # behind the session's back
    s.on_tool_call(2)
    assert "vanished while it should be in effect: a off" in s.invalid_reason
    s.stop()
    assert s.records[0].invalid.startswith("vanished")


def test_vanished_before_stop_is_seen_at_stop():
    s, lab, _, _ = make([spec("a", 0)])
    s.start()
    lab.faults.clear()
    s.stop()
    assert s.invalid_reason and "vanished" in s.invalid_reason


def test_inject_raises_and_unavailable_are_invalid():
    k = Fake()
    k.raise_inject = True
    s, *_ = make([spec("a", 0)], kind=k)
    s.start()
    assert "inject failed: FaultError: fake: cannot" in s.invalid_reason
    k2 = Fake()
    k2.why_unavailable = "needs netem"
    s2, lab2, *_ = make([spec("a", 0)], kind=k2)
    s2.start()
    assert "unavailable on this host: needs netem" in s2.invalid_reason and lab2.log == []


def test_not_removed_is_invalid():
    k = Fake()
    k.stuck = True
    s, lab, _, _ = make([spec("a", 0)], kind=k)
    s.start()
    s.stop()
    assert "could not be removed: a still there" in s.invalid_reason
    assert s.records[0].removed is False


def test_calls_before_start_or_after_stop_do_nothing():
    s, lab, _, traj = make([spec("a", 1)])
    s.on_tool_call(1)
    assert lab.log == []
    s.start()
    s.stop()
    s.on_tool_call(1)
    assert lab.log == [] and s.ended_at is None


@pytest.mark.parametrize("n", [0, 3])
def test_empty_or_unreached_schedule_has_no_end_time(n):
    s, *_ = make([spec(f"x{i}", 50) for i in range(n)])
    s.start()
    s.stop()
    assert s.ended_at is None and s.invalid_reason is None and len(s.records) == n


def test_a_fault_due_on_a_target_already_under_fault_is_merged():
    """Two faults of one kind on one target: the second is not injected again (removing the
    first would undo it); the first lasts until the later end."""
    s, lab, clock, traj = make([spec("a", 0, dur=5.0), spec("a", 1, dur=5.0), spec("b", 1, dur=1.0)])
    s.start()
    clock.t += 2.0
    s.on_tool_call(1)
    assert lab.log == ["inject a", "inject b"]
    r = s.records
    assert r[1].merged_into == 0 and r[1].injected is False and "merged" in r[1].detail
    clock.t += 4.0      # 6 s: the first's own end (5 s) passed, the merged one's (2 + 5 = 7 s) not
    s.on_tool_call(2)
    assert lab.faults == {"a"} and s.invalid_reason is None   # b (1 s) ended, a still in effect
    clock.t += 1.5
    s.on_tool_call(3)
    assert lab.faults == set() and lab.log.count("remove a") == 1 and s.invalid_reason is None
    assert ("fault_merged", "a") in events(traj)


def test_a_stop_interrupted_during_a_removal_is_finished_by_the_next():
    class Interrupted(Fake):
        calls = 0

        def remove(self, lab, spec, handle):
            Interrupted.calls += 1
            if Interrupted.calls == 1:
                raise KeyboardInterrupt  # Ctrl-C in the middle of the first removal
            super().remove(lab, spec, handle)

    s, lab, _, traj = make([spec("a", 0), spec("b", 0), spec("c", 9)], kind=Interrupted())
    s.start()
    with pytest.raises(KeyboardInterrupt):
        s.stop()
    assert lab.faults == {"a", "b"}
    s.stop()   # run_one's finally
    assert lab.faults == set() and s.invalid_reason is None
    assert [e["event"] for e in traj.events].count("fault_not_reached") == 1


# --- one router carries one fault at a time (deferral) ------------------------------------------


class FakeOther(Fake):
    name = "other"


class Freezer(Fake):  # like frozen_router: nothing else acts on its router meanwhile
    blocks_router = True


def on_router(kind, name, router, at, dur=None, link=None):
    target = {"name": name, **({"link": link} if link else {"router": router})}
    return FaultSpec(kind=kind, at_step=at, duration_s=dur, target=target)


def make_two(schedule):
    lab, clock, traj = fault_lab(), Clock(), Trajectory()
    kinds = {"fake": Freezer(), "other": FakeOther()}
    s = FaultSession(lab, schedule, traj, clock=clock, get_kind=kinds.__getitem__, watch=False)
    return s, lab, clock, traj


def test_a_fault_of_another_kind_on_the_same_router_waits_until_the_first_is_removed():
    # a frozen e4 (fake) is in effect when a held lock on e4 (other) comes due: the lock waits
    s, lab, clock, traj = make_two([on_router("fake", "frozen", "e4", 1, dur=5.0),
                                    on_router("other", "lock", "e4", 2, dur=5.0)])
    s.start()
    s.on_tool_call(1)
    clock.t += 1.0
    s.on_tool_call(2)
    assert lab.faults == {"frozen"}                       # the lock is not attempted
    assert ("fault_deferred", "lock") in events(traj)
    clock.t += 4.5                                        # the frozen router's 5 s are over
    s.on_tool_call(3)
    assert lab.faults == {"lock"}                         # injected as soon as e4 is free
    rec = s.records[1]
    assert rec.injected and rec.verified and rec.deferred_s == 4.5
    assert s.invalid_reason is None
    assert s.ended_at is None                             # the lock is still in effect
    s.stop()
    assert lab.faults == set() and s.invalid_reason is None


def test_a_link_fault_waits_for_a_fault_on_either_end():
    s, lab, clock, _ = make_two([on_router("fake", "frozen", "e4", 0, dur=3.0),
                                 on_router("other", "down", None, 1, link=["c2", "e4"])])
    s.start()
    s.on_tool_call(1)
    assert lab.faults == {"frozen"}
    clock.t += 3.0
    s.on_tool_call(2)
    assert lab.faults == {"down"}


def test_faults_on_other_routers_do_not_wait():
    s, lab, _, traj = make_two([on_router("fake", "frozen", "e4", 0, dur=3.0),
                                on_router("other", "lock", "e1", 1)])
    s.start()
    s.on_tool_call(1)
    assert lab.faults == {"frozen", "lock"}
    assert not [e for e in traj.events if e["event"] == "fault_deferred"]
    assert s.records[1].deferred_s is None


def test_a_fault_still_deferred_when_the_run_ends_is_not_injected_and_not_invalid():
    s, lab, _, _ = make_two([on_router("fake", "frozen", "e4", 0),
                             on_router("other", "lock", "e4", 1)])
    s.start()
    s.on_tool_call(1)
    s.stop()
    rec = s.records[1]
    assert not rec.injected and rec.invalid is None
    assert "not injected: the agent's run ended first" in rec.detail
    assert s.invalid_reason is None and lab.log == ["inject frozen", "remove frozen"]


def test_failed_calls_after_a_fault_say_whether_the_level_noticed():
    from ani.faults.record import FaultRecord, note_failed_calls

    w = {"kind": "concurrent_writer", "at_step": 2, "target": {"router": "e1"}}
    events = [
        {"event": "tool_call", "tool": "get_config", "ok": False, "error_code": "timeout"},  # before
        {"event": "fault_injected", **w},
        {"event": "tool_call", "tool": "edit_config", "ok": True, "error_code": None},
        {"event": "tool_call", "tool": "commit", "ok": False, "error_code": "conflict"},
    ]
    recs = note_failed_calls([FaultRecord(injected=True, **w),
                              FaultRecord(kind="link_down", at_step=9, target={"link": ["a", "b"]})], events)
    assert recs[0].failed_after == ["commit: conflict"]  # not the failure before the write
    assert recs[1].failed_after == []                      # never injected


def test_a_fault_not_applicable_is_recorded_not_injected_and_the_run_stays_valid():
    from ani.errors import FaultNotApplicable

    class Held(Fake):
        def inject(self, lab, spec):
            raise FaultNotApplicable("held_lock e4: <lock> of candidate was refused: lock-denied: held (session-id 1)")

    s, lab, _, traj = make([spec("a", 1), spec("b", 2)], kind=Held())
    s.start()
    s.on_tool_call(1)
    assert s.invalid_reason is None
    rec = s.records[0]
    assert not rec.injected and rec.invalid is None
    assert rec.detail.startswith("not injected: held_lock e4: <lock> of candidate was refused: lock-denied")
    assert ("fault_skipped", "a") in events(traj)
    s.on_tool_call(2)  # the next fault is still attempted (a skipped one does not end the faults)
    assert ("fault_skipped", "b") in events(traj)


def test_a_deferred_fault_is_injected_at_the_next_step_not_when_the_watcher_removes_the_first():
    s, lab, clock, traj = make_two([on_router("fake", "frozen", "e4", 1, dur=2.0),
                                    on_router("other", "lock", "e4", 2)])
    s.start()
    s.on_tool_call(1)
    s.on_tool_call(2)                      # deferred behind the frozen router
    clock.t += 2.0
    s._end_expired()                       # what the watcher thread does at the deadline
    assert lab.faults == set()             # removed, and the lock waits for a step boundary
    s.on_tool_call(3)
    assert lab.faults == {"lock"}
    (inj,) = [e for e in traj.events if e["event"] == "fault_injected" and e["target"]["name"] == "lock"]
    assert inj["step"] == 2 and inj["at_step"] == 2


def test_refused_lock_reasons_are_one_line_and_lock_denied_is_the_agents_situation():
    from ani.faults.kinds.held_lock import _refusal

    denied = ('<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="1"><rpc-error>'
              '<error-type>protocol</error-type><error-tag>lock-denied</error-tag><error-severity>error'
              '</error-severity><error-message>the candidate datastore is already locked</error-message>'
              '<error-info><session-id>1</session-id></error-info></rpc-error></rpc-reply>')
    assert _refusal(denied) == ("lock-denied: the candidate datastore is already locked (session-id 1)", True)
    other = denied.replace("lock-denied", "operation-failed").replace("<error-info><session-id>1</session-id></error-info>", "")
    assert _refusal(other) == ("operation-failed: the candidate datastore is already locked", False)
    text, denied = _refusal("not xml at all")
    assert text.startswith("malformed-message: reply is not XML") and denied is False


def test_a_fault_beside_a_kind_that_does_not_block_its_router_is_injected_at_its_step():
    # a link down on c1-e4 and a bgpd restart on e4 act side by side (neither stops the
    # router's processes): nothing waits, so what is injected never depends on timing
    lab, clock, traj = fault_lab(), Clock(), Trajectory()
    kinds = {"fake": Fake(), "other": FakeOther()}
    s = FaultSession(lab, [on_router("fake", "down", None, 1, dur=3.0, link=["c1", "e4"]),
                           on_router("other", "restart", "e4", 2, dur=3.0)], traj,
                     clock=clock, get_kind=kinds.__getitem__, watch=False)
    s.start()
    s.on_tool_call(1)
    s.on_tool_call(2)
    assert lab.faults == {"down", "restart"}
    assert not [e for e in traj.events if e["event"] == "fault_deferred"]


# --- undone by the agent: a fault the agent's own changing call ended is not an infrastructure error


def changing(ev):
    return ev.get("tool") in ("shell", "commit")


def make_attr(schedule):
    lab, clock, traj = fault_lab(), Clock(), Trajectory()
    k = Fake()
    s = FaultSession(lab, schedule, traj, clock=clock, get_kind=lambda n: k, watch=False,
                     attempted_change=changing)
    return s, lab, clock, traj


def routed(name, router, at, dur=None):
    return FaultSpec(kind="fake", at_step=at, duration_s=dur, target={"name": name, "router": router})


def call(tool, elapsed=0.1, **args):
    return {"event": "tool_call", "tool": tool, "arguments": args, "ok": True, "elapsed_s": elapsed}


def test_a_fault_the_agents_changing_call_on_its_router_ended_is_undone_by_the_agent_not_invalid():
    s, lab, clock, traj = make_attr([routed("a", "e1", 0), routed("b", "e2", 3)])
    s.start()
    s.on_tool_call(1, call("shell", device="e1", command="ip link set dev eth1 up"))
    assert s.records[0].undone_by is None          # still there after the first call
    lab.faults.discard("a")                        # what the agent's second call does
    s.on_tool_call(2, call("shell", device="e1", command="ip link set dev eth1 up"))
    assert s.invalid_reason is None
    r = s.records[0]
    assert r.undone_by == "step 2: shell on e1" and r.invalid is None
    assert r.detail.startswith("undone by the agent's call (step 2: shell on e1): a off")
    assert r.removed is True                       # what was left of it is removed
    assert ("fault_undone", "a") in events(traj)
    s.on_tool_call(3, call("get_running_config", device="e2"))
    assert lab.faults == {"b"}                     # the run goes on: later faults are injected
    s.stop()
    assert s.invalid_reason is None and s.records[1].removed


@pytest.mark.parametrize("last", [
    call("get_running_config", device="e1"),       # a read cannot undo it
    call("shell", device="e2"),                    # a change on another router
    None,                                          # no event (a caller without the attribution)
])
def test_a_fault_that_vanished_under_a_read_or_a_change_elsewhere_stays_invalid(last):
    s, lab, clock, traj = make_attr([routed("a", "e1", 0)])
    s.start()
    lab.faults.discard("a")
    s.on_tool_call(1, last)
    assert s.invalid_reason and "vanished while it should be in effect: a off" in s.invalid_reason
    assert s.records[0].undone_by is None


def test_a_call_that_names_no_router_may_act_on_any():
    s, lab, clock, traj = make_attr([routed("a", "e1", 0)])
    s.start()
    lab.faults.discard("a")
    s.on_tool_call(1, call("commit", message="x"))    # an A3-R commit: the reconciler acts everywhere
    assert s.invalid_reason is None and s.records[0].undone_by == "step 1: commit"


def test_a_vanish_the_watcher_sees_is_decided_when_the_call_in_flight_returns():
    # in flight at the deadline: the agent's
    s, lab, clock, traj = make_attr([routed("a", "e1", 0, dur=2.0)])
    s.start()
    clock.t += 1.5                                 # the agent's call starts here ...
    lab.faults.discard("a")
    clock.t += 0.5
    s._end_expired(in_watcher=True)                # the watcher at the deadline: it vanished
    assert s.invalid_reason is None and lab.faults == set()
    clock.t += 0.3
    s.on_tool_call(1, call("shell", elapsed=0.8, device="e1"))   # ... and returns 0.8 s later
    assert s.invalid_reason is None and s.records[0].undone_by == "step 1: shell on e1"
    # a call that started after the watcher saw it: not the agent's
    s, lab, clock, traj = make_attr([routed("a", "e1", 0, dur=2.0)])
    s.start()
    lab.faults.discard("a")
    clock.t += 2.0
    s._end_expired(in_watcher=True)
    clock.t += 1.0
    s.on_tool_call(1, call("shell", elapsed=0.2, device="e1"))
    assert s.invalid_reason and "vanished" in s.invalid_reason and s.records[0].undone_by is None
    # and one no call followed before the end of the run: invalid at stop
    s, lab, clock, traj = make_attr([routed("a", "e1", 0, dur=2.0)])
    s.start()
    lab.faults.discard("a")
    clock.t += 2.0
    s._end_expired(in_watcher=True)
    s.stop()
    assert s.invalid_reason and "vanished" in s.invalid_reason


def test_fault_lines_take_a_faults_lines_both_ways():
    from ani.campaign.observe_run import fault_lines
    from ani.faults.record import FaultRecord

    recs = [FaultRecord(kind="pool_exhaustion", at_step=3,
                        wrote=["e4: + ip prefix-list ANI-POOL-HELD permit 198.19.0.0/16 le 32",
                               "e4: - ip prefix-list ANI-POOL-HELD permit 198.19.0.0/16 le 32"]),
            FaultRecord(kind="link_down", at_step=1)]
    own = fault_lines(recs)
    assert own == {"e4: + ip prefix-list ANI-POOL-HELD permit 198.19.0.0/16 le 32",
                   "e4: - ip prefix-list ANI-POOL-HELD permit 198.19.0.0/16 le 32"}
    assert "e1: + ip prefix-list ANI-POOL-HELD permit 198.19.0.0/16 le 32" not in own  # per router
