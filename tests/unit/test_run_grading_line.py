"""``ani run`` says when grading starts (issue 5, new-user pass: ~25 s of silence between
``agent stop:`` and ``hidden tests:``): the runner hands a ``run_phase`` event to its display hook
before the observer grades; live prints ``grading (...) ...``. Runner fakes of
test_campaign_runner.py (no lab)."""

from __future__ import annotations

from test_campaign_runner import FakeObserver, Setup, World, spec  # noqa: F401 - spec: fixture

from ani.campaign.live import event_line
from ani.campaign.runner import run_one


def test_grading_is_announced_after_the_agent_and_before_the_observer_grades(spec, tmp_path):  # noqa: F811
    seen: list = []

    class Observer(FakeObserver):
        def evaluate(self, checks, bound_s=None):
            seen.append(("evaluate", [c.name for c in checks]))
            return super().evaluate(checks, bound_s)

    s = Setup(World(), {("a1", 1): "solve"})
    deps = s.deps()
    deps.make_observer = Observer
    rec = run_one(spec, "a1", 1, tmp_path, deps=deps, on_event=lambda ev: seen.append(ev))
    assert rec.label == "clean_success"
    names = [x["event"] if isinstance(x, dict) else x[0] for x in seen]
    i = names.index("run_phase")
    assert names[i + 1] == "evaluate" and seen[i + 1][1][0] == "site-reach"  # then the grading
    assert "tool_call" in names[:i] and "tool_call" not in names[i:]
    assert names.count("evaluate") == 2  # the baseline, then the grading
    ev = seen[i]
    assert ev == {"event": "run_phase", "phase": "grading", "hidden_tests": 1, "invariants": 2}
    assert event_line(ev) == "grading (1 hidden test, 2 baseline invariants) ..."
    # not stored in the trajectory
    assert "run_phase" not in (tmp_path / "trajectories" / f"{rec.run_id}.jsonl").read_text()


def test_a_hook_that_raises_does_not_break_the_run(spec, tmp_path):  # noqa: F811
    def hook(ev):
        raise RuntimeError("display broke")

    rec = run_one(spec, "a1", 1, tmp_path, deps=Setup(World(), {("a1", 1): "solve"}).deps(), on_event=hook)
    assert rec.label == "clean_success"
