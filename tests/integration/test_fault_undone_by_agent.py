"""A fault the agent itself ends is the agent's doing, not an infrastructure error (issue 14, §1).

A real run at a0 on brownfield-small with a link down (60 s, so it cannot expire first): a real
agent acting through the A0 adapter reads twice, then brings the link's downed end back up
(``ip link set dev IF up`` in the router's shell), then onboards the site as the scripted
baseline does. The run is graded, not ``environment_invalid``; the fault record names the call
that undid it (``undone_by``), the trajectory holds ``fault_undone``, the harness removed the
rest of the fault (both ends up when grading starts), and ``--resume`` has nothing to rerun.
The same vanish with no call of the agent on that router (``test_campaign_faults``) stays
``environment_invalid``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from procs import EMPTY, footprint, track_labs

from ani.agents.base import AgentRun, AgentTask, Budget, StepCounter
from ani.agents.scripted import ScriptedAgent
from ani.campaign.results import ENV_INVALID
from ani.campaign.runner import RunnerDeps, run_one
from ani.campaign.spec import parse_spec
from ani.faults.campaign import schedule_for
from ani.faults.targets import link_ends, link_state

pytestmark = pytest.mark.integration


def spec_with(**extra: Any) -> Any:
    data = {
        "name": "undone-it",
        "scenario": "scenarios/brownfield-small.yaml",
        "task": "onboard-site",
        "variants": 1,
        "agent": {"kind": "scripted"},
        "budget": {"max_steps": 60, "wall_clock_s": 300},
        "cells": [{"name": "a0", "level": "a0"}],
        "fault_rate": 0.6,
        "faults": {"kinds": ["link_down"], "horizon_steps": 2, "duration_s": [60.0, 60.0]},
        **extra,
    }
    return parse_spec(data, "<test>")


def seed_with_a_fault(spec: Any, deps: Any) -> tuple[int, list[Any]]:
    from ani.campaign.runner import prepare

    cell = spec.cells[0]
    scenario, task_class = prepare(spec, deps, cell, {})
    for seed in range(1, 40):
        variant = task_class.variant(scenario, seed)
        sched = schedule_for(spec, cell, {}, scenario, variant, seed)
        if sched:
            return seed, sched
    raise AssertionError("no seed in 1..39 draws a fault at rate 0.6 over 2 steps")


class FixerAgent:
    """Reads twice (the fault is in effect by then: it is due at step 0 or 1), ups the first
    downed end of the link, then does the task as the scripted baseline does."""

    name = "fixer"

    def __init__(self, labs: list[Any], link: list[str]) -> None:
        self.labs, self.link = labs, link

    def run(self, task: AgentTask, adapter: Any, budget: Budget) -> AgentRun:
        steps = StepCounter(adapter, budget)
        a, b = self.link
        a, ai, _b, _bi = link_ends(self.labs[-1], a, b)
        for command in ("ip -br link", "ip -br addr"):
            assert steps.call("shell", {"device": a, "command": command}).ok
        res = steps.call("shell", {"device": a, "command": f"ip link set dev {ai} up"})
        assert res.ok, res.text
        return ScriptedAgent().run(task, adapter, budget)


def test_a_link_the_agent_brings_back_up_is_undone_by_the_agent_and_the_run_is_graded(lab_host, tmp_path):
    deps = RunnerDeps()
    seed, sched = seed_with_a_fault(spec_with(), deps)
    spec = spec_with(seed=seed)
    link = sched[0].target["link"]
    labs = track_labs(deps)
    deps.create_agent = lambda cfg: FixerAgent(labs, link)
    after: dict[str, Any] = {}

    def on_event(ev: dict[str, Any]) -> None:  # the link the moment grading starts
        if ev.get("event") == "run_phase":
            lab = labs[-1]
            a, ai, b, bi = link_ends(lab, *link)
            after["states"] = [link_state(lab, a, ai), link_state(lab, b, bi)]

    rec = run_one(spec, "a0", seed, tmp_path / "out", deps=deps, on_event=on_event)
    assert labs and all(footprint(lab.id) == EMPTY for lab in labs)
    assert rec.label != ENV_INVALID and rec.valid, rec.infra_error_reason
    assert rec.tests, "the run was graded"
    f = rec.faults[0]
    assert f.injected and f.verified and f.invalid is None, f
    a = link[0]
    # the third call (ip link set ... up on the link's first end) undid it
    assert f.undone_by == f"step 3: shell on {a}", f
    assert f.detail.startswith(f"undone by the agent's call (step 3: shell on {a})"), f.detail
    assert f.removed is True
    assert after["states"] == [(True, "UP"), (True, "UP")]
    events = [json.loads(x) for x in open(rec.trajectory)]
    (undone,) = [e for e in events if e["event"] == "fault_undone"]
    assert undone["source"] == "harness" and undone["by"] == f.undone_by
    idx = events.index(undone)
    assert sum(1 for e in events[:idx] if e["event"] == "tool_call") == 3
    assert not [e for e in events if e["event"] == "fault_invalid"]
