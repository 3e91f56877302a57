"""The scripted agent solves change-set, decommission and troubleshoot on real FRR, graded by the
campaign runner (``ani.campaign.runner.run_one``, what ``ani run`` uses): clean success, every
hidden test and every baseline invariant (but the variant's superseded ones) passing, no tool
error. The three seeds are spread over the levels (level i runs seed i % 3) so that a module run
stays a handful of labs; the full levels x classes x seeds sweep is a campaign (docs/tasks.md).
The ticket form of every class (onboard-site's too, which then goes the typed-changes way)
runs at A3-T through the same runner with the variant drawn in that form.

Every run is its own lab (the runner's, downed by it): they run three at a time in the module's
first test (:mod:`side_by_side`, issue 28 §4), each test taking its own run's outcome.
"""

from __future__ import annotations

import importlib.util
from functools import partial
from pathlib import Path

import pytest
from side_by_side import outcome, runner_deps, side_by_side

pytestmark = pytest.mark.integration

SCENARIO = "scenarios/brownfield-small.yaml"
CLASSES = ["change-set", "decommission", "troubleshoot"]
LEVELS = ["a3t", "a3r", "a4", "a0", "a1", "a1+blocklist", "a2"]


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent that is a module, not a package
        return False


def _need() -> None:
    if not _have("ani.scenario.tasks.base"):
        pytest.skip("the task classes change-set / decommission / troubleshoot have not landed")


def _spec(task: str, cell: str):
    from ani.campaign.spec import parse_spec

    level, _, bl = cell.partition("+")
    data = {"name": "scripted-tasks", "scenario": SCENARIO, "task": task, "variants": 1, "seed": 0,
            "agent": {"kind": "scripted"}, "budget": {"max_steps": 40, "wall_clock_s": 300},
            "cells": [{"name": cell, "level": level, "blocklist": bool(bl)}]}
    return parse_spec(data, "test", Path.cwd())


def _assert_clean(rec) -> None:
    failed = [(o.name, o.detail) for o in [*rec.tests, *rec.invariants] if not o.passed]
    assert rec.label == "clean_success", (rec.label, rec.agent_error, rec.infra_error_reason, failed)
    assert rec.tests and all(o.passed for o in rec.tests)
    assert rec.invariants and all(o.passed for o in rec.invariants)
    assert rec.tool_errors == 0 and rec.stop_reason == "submitted"


def _solve(task: str, cell: str, out: Path) -> None:
    _need()
    level = cell.partition("+")[0]
    if level in ("a0", "a1", "a2") and not _have("ani.agents.scripted_push"):
        pytest.skip("push_configs (ani.agents.scripted_push) has not landed")
    from ani.campaign.runner import run_one

    seed = LEVELS.index(cell) % 3
    rec = run_one(_spec(task, cell), cell, seed, out, deps=runner_deps())
    _assert_clean(rec)


TICKETS = ["onboard-site", *CLASSES]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``{("solve", task, cell) | ("ticket", task): outcome}``, the runs three at a time."""
    cases = {("solve", task, cell): partial(_solve, task, cell, tmp_path_factory.mktemp("solve"))
             for task in CLASSES for cell in LEVELS}
    cases |= {("ticket", task): partial(_ticket, task, tmp_path_factory.mktemp("ticket")) for task in TICKETS}
    return side_by_side(cases)


@pytest.mark.timeout(1200)  # the module's runs, three at a time, in the first test's setup
@pytest.mark.parametrize("cell", LEVELS)
@pytest.mark.parametrize("task", CLASSES)
def test_scripted_agent_solves_the_class(runs, task, cell):
    outcome(runs, ("solve", task, cell))


class _TicketForm:
    """A task class whose variants are drawn in the ticket form."""

    def __init__(self, cls):
        self.cls = cls

    def variant(self, scenario, seed):
        return self.cls.variant(scenario, seed, form="ticket")


def _ticket(task: str, out: Path) -> None:
    _need()
    from ani.campaign.runner import run_one
    from ani.scenario import get_task_class

    deps = runner_deps(get_task_class=lambda name: _TicketForm(get_task_class(name)))
    rec = run_one(_spec(task, "a3t"), "a3t", 1, out, deps=deps)
    assert rec.variant_id == f"{task}-ticket-s1"
    _assert_clean(rec)


@pytest.mark.timeout(1200)  # as above
@pytest.mark.parametrize("task", TICKETS)
def test_ticket_form_at_a3t(runs, task):
    outcome(runs, ("ticket", task))
