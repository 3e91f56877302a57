"""Host faults are scoped to the run that met them (issue 24 §1).

The issue's probe: 9 runs in threads of one process, one of them meeting a missing program; the
process-wide journal (``fault_mark`` / ``faults_since``) labelled 8 of the 9 infrastructure
errors. Here each run opens a :func:`ani.host.programs.fault_scope` and does its work through
the real thread-starting code (the observer's concurrent evaluation, the sampler's thread and
its round's pool) on the shipped :class:`ani.testing.FakeLab`, whose ``uninstall`` removes a
program from one run's host only.
"""

from __future__ import annotations

import threading
import time

import pytest

from ani.errors import HostFault, ProgramMissing
from ani.host import programs
from ani.host.programs import current_fault_scope, fault_mark, fault_scope, faults_since, note_fault
from ani.host.threads import ContextPool, bind, thread
from ani.observer import Observer, ReachCheck
from ani.observer.checks import CommandCheck
from ani.observer.sampler import Sampler
from ani.testing import FakeLab

RUNS = 9
PING_RUN, VTYSH_RUN = 2, 6  # the run whose host lost ping, the one whose host lost vtysh


def _cause(name: str) -> str:
    p = programs.lookup(name)
    assert p is not None
    return str(ProgramMissing(p.shown, p.package))


def _lab(missing: str | None = None) -> FakeLab:
    lab = FakeLab()
    lab.on(["ping"], stdout="1 packets transmitted, 1 received, 0% packet loss\n")
    if missing:
        lab.uninstall(missing)
    return lab


CHECKS = [ReachCheck(name=f"{s}-{d}", src=s, dst=d) for s in ("h1", "r1", "r2") for d in ("198.18.1.1", "198.18.1.10")]
SAMPLED = [CommandCheck(name="version", router="r1", commands=["show version"], expect="FRRouting")]


def _sample_once(lab: FakeLab) -> list[str]:
    """Start a sampler (its own thread; its round runs on a pool), wait for its first round, stop
    it; the errors of its report."""
    s = Sampler(Observer(lab), SAMPLED, period_s=3600).start()
    deadline = time.monotonic() + 60
    while not s.samples and not s.errors and time.monotonic() < deadline:
        time.sleep(0.01)
    return s.stop().errors


def _run(k: int, start: threading.Barrier, done: threading.Barrier, out: dict[int, dict]) -> None:
    """One run: its scope, a concurrent evaluation, a sampler round."""
    lab = _lab({PING_RUN: "ping", VTYSH_RUN: "vtysh"}.get(k))
    mark = fault_mark()
    with fault_scope() as scope:
        start.wait()  # every run's scope is open before any run works: they all overlap
        try:
            results = Observer(lab).evaluate(CHECKS, bound_s=5.0)
            raised = None
        except HostFault as exc:
            results, raised = [], str(exc)
        sampler_errors = _sample_once(lab)
        done.wait()  # every run has finished its work before any run reads its faults
        out[k] = {"scope": scope.faults(), "journal": faults_since(mark), "raised": raised,
                  "passed": sum(r.passed for r in results), "sampler_errors": sampler_errors}


def test_nine_runs_in_threads_each_fault_lands_in_its_own_run_only():
    start, done = threading.Barrier(RUNS), threading.Barrier(RUNS)
    out: dict[int, dict] = {}
    runs = [threading.Thread(target=_run, args=(k, start, done, out)) for k in range(RUNS)]
    for t in runs:
        t.start()
    for t in runs:
        t.join(120)
    assert sorted(out) == list(range(RUNS))
    ping, vtysh = _cause("ping"), _cause("vtysh")
    # met in the observer's pool threads: that run's scope only; the evaluation stopped on it
    assert out[PING_RUN]["scope"] == [ping] and out[PING_RUN]["raised"] == ping
    # met in the sampler's round (its thread, then its pool), swallowed into the report's errors
    assert out[VTYSH_RUN]["scope"] == [vtysh]
    assert out[VTYSH_RUN]["sampler_errors"] == [f"ProgramMissing: {vtysh}"]
    assert out[VTYSH_RUN]["passed"] == len(CHECKS)
    clean = [k for k in range(RUNS) if k not in (PING_RUN, VTYSH_RUN)]
    for k in clean:
        got = {key: out[k][key] for key in ("scope", "raised", "passed", "sampler_errors")}
        assert got == {"scope": [], "raised": None, "passed": len(CHECKS), "sampler_errors": []}, k
    # the process journal still has both, and it is what mislabelled the runs: every
    # run's window holds them (9 of 9 here, by the barriers)
    assert sum(1 for k in range(RUNS) if out[k]["journal"]) == RUNS
    assert all(set(out[k]["journal"]) == {ping, vtysh} for k in range(RUNS))


def test_a_fault_met_in_a_worker_thread_of_the_run_lands_in_its_scope():
    lab = _lab("ping")
    with fault_scope() as scope:
        with pytest.raises(ProgramMissing):
            Observer(lab).evaluate(CHECKS[:2], bound_s=5.0)
    assert scope.faults() == [_cause("ping")]
    # only the batched first look's shell ran (ping inside it answered nothing: undecided); the
    # check's own ping was the missing program, which raised in the pool's thread
    assert [argv[0] for _, argv in lab.calls] == ["sh"]


def test_outside_any_scope_a_fault_still_reaches_the_process_journal():
    assert current_fault_scope() is None
    mark = fault_mark()
    assert _sample_once(_lab("vtysh")) == [f"ProgramMissing: {_cause('vtysh')}"]
    assert faults_since(mark) == [_cause("vtysh")]


def test_scopes_nest_and_mark():
    with fault_scope() as outer:
        note_fault(HostFault("a"))
        with fault_scope() as inner:
            assert current_fault_scope() is inner and inner.parent is outer
            m = inner.mark()
            note_fault(HostFault("b"))
            note_fault(HostFault("b"))
        assert current_fault_scope() is outer
        note_fault(HostFault("c"))
    assert current_fault_scope() is None
    assert outer.faults() == ["a", "b", "c"]  # a sub-scope's fault is the enclosing run's too
    assert inner.faults() == ["b"] and inner.faults(since=m) == ["b"] and inner.faults(since=inner.mark()) == []


def test_the_thread_helpers_carry_the_scope_and_plain_threads_do_not():
    seen: dict[str, object] = {}

    def look(key: str) -> None:
        seen[key] = current_fault_scope()

    with fault_scope() as scope:
        t = thread(look, "thread")
        t.start()
        t.join()
        with ContextPool(max_workers=2) as pool:
            list(pool.map(look, ["pool-a", "pool-b"]))
        timer = threading.Timer(0, bind(look), args=("timer",))
        timer.start()
        timer.join()
        plain = threading.Thread(target=look, args=("plain",))
        plain.start()
        plain.join()
    assert {k: v is scope for k, v in seen.items()} == {
        "thread": True, "pool-a": True, "pool-b": True, "timer": True, "plain": False}


def test_a_pool_made_before_a_scope_runs_each_task_in_its_submitter_s_scope():
    with ContextPool(max_workers=1) as pool:  # one thread, shared by two runs in turn
        with fault_scope() as a:
            pool.submit(note_fault, HostFault("in a")).result()
        with fault_scope() as b:
            pool.submit(note_fault, HostFault("in b")).result()
    assert a.faults() == ["in a"] and b.faults() == ["in b"]


def test_fakelab_uninstall_names_only_registered_programs():
    lab = FakeLab()
    with pytest.raises(HostFault, match="'no-such-tool' is not registered"):
        lab.uninstall("no-such-tool")
    lab.uninstall("/usr/bin/vtysh")  # by its path too
    with pytest.raises(ProgramMissing, match="vtysh is missing"):
        lab.vtysh("r1", "show version")
    assert lab.exec("h1", ["ip", "-j", "addr"]).rc == 127  # other programs are not touched
