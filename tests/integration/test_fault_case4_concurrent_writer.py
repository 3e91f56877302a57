"""Issue 14 case 4: a concurrent writer changes the very prefix-list the agent edits, between the
agent's read and its write, at each level. Real runs (``ani.campaign.runner.run_one``, the
scripted agent, brownfield-small, onboard-site seed 0: the agent adds ``seq 30 permit
198.19.195.0/24`` to e1's PL-TENANTS), with the writer placed by the run's fault schedule right
after the agent's read (the schedule is the only thing chosen by the test: the run draws nothing).

The writer adds ``seq 30 permit 192.0.2.0/24`` (the next number: the one the agent picked from
its read). Each case asserts what the run record says: the writer's fate in the fault record's
detail (``faults[0].detail``: survived, or replaced and by what), the agent's in the hidden tests,
and whether the level noticed (a tool call that failed after the write):

| level | writer placed | writer's entry | agent's change | noticed |
|---|---|---|---|---|
| a0 | after `show running-config` | replaced (lost update) | applied | no |
| a1 | after `get_running_config` | replaced (lost update) | applied | no |
| a2 | after `get_config` (before the candidate is edited) | replaced in the candidate, committed | applied | no |
| a2 | after `edit_config` (before commit) | survives | refused: running changed | yes (commit) |
| a3t | after `plan` (before `apply`) | survives | applied at the next free seq (40) | no need |
| a4 | after `sot_patch` (before `sot_commit`) | replaced: the reconciler applies the source of truth's desired state (seq 30 again) over the out-of-band entry (drift) | applied | no (sot_commit says only "changed e1, ...") |

The six runs go three at a time, each on its own lab, in a module fixture.

Only the fault record says the writer's entry was lost at a0, a1, a2 (read -> edit) and a4: those
levels answered every call ``ok``.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from side_by_side import outcome, side_by_side

from ani.faults import FaultSpec
from ani.trajectory import Trajectory

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]  # the fixture: six runs, three at a time

SCENARIO = "scenarios/brownfield-small.yaml"
WRITER = {"variant": "conflicting", "prefix_list": "PL-TENANTS", "prefix": "192.0.2.0/24"}
AGENT_LINE = "seq 30 permit 198.19.195.0/24"


#: the cases: (level, the agent's step the writer comes after); each run's cell is named
#: ``<level>-at<step>``, which picks its schedule
CASES = [("a0", 2), ("a1", 2), ("a2", 2), ("a2", 12), ("a3t", 3), ("a4", 3)]


def _run(level: str, at_step: int, out: Path):
    from ani.campaign.runner import run_one
    from ani.campaign.spec import parse_spec

    data = {"name": "case4", "scenario": SCENARIO, "task": "onboard-site", "variants": 1, "seed": 0,
            "agent": {"kind": "scripted"}, "budget": {"max_steps": 40, "wall_clock_s": 300},
            "cells": [{"name": f"{level}-at{at_step}", "level": level}]}
    return run_one(parse_spec(data, "test", Path.cwd()), f"{level}-at{at_step}", 0, out)


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """``{(level, at_step): the run's record, or what it raised}``: the six runs three at a time,
    each on its own lab (issue 28 §4: one after the other they took a worker 146 s, mostly
    waiting on FRR), the writer placed by each run's cell."""
    from conftest import _require_lab_host

    from ani.faults import campaign

    _require_lab_host()
    root = tmp_path_factory.mktemp("case4")

    def schedule_for(spec, cell, *a, **k):
        at_step = int(str(getattr(cell, "name", cell)).rsplit("-at", 1)[1])
        return [FaultSpec("concurrent_writer", at_step=at_step, duration_s=None, target={"router": "e1"},
                          params=WRITER)]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(campaign, "schedule_for", schedule_for)
        return side_by_side({case: partial(_run, *case, root / f"{case[0]}-at{case[1]}") for case in CASES})


def run(records, level: str, at_step: int):
    rec = outcome(records, (level, at_step))
    assert rec.trajectory is not None, (rec.label, rec.infra_error_reason)  # the lab did not start: why
    events = Trajectory.read(rec.trajectory)
    calls = [e for e in events if e.get("event") == "tool_call"]
    injected = next(i for i, e in enumerate(events) if e.get("event") == "fault_injected")
    failed_after = [f"{e['tool']}: {e.get('error_code')}: {e.get('summary')}" for e in events[injected:]
                    if e.get("event") == "tool_call" and not e.get("ok")]
    assert calls[at_step - 1]["tool"] in ("shell", "get_running_config", "get_config", "edit_config", "plan", "sot_patch")
    (fault,) = rec.faults
    assert fault.injected and fault.verified and fault.invalid is None, fault
    assert rec.label != "environment_invalid", rec.infra_error_reason
    return rec, fault, failed_after


@pytest.mark.parametrize("level", ["a0", "a1"])
def test_cli_levels_lose_the_writers_entry_without_noticing(records, level):
    rec, fault, failed_after = run(records, level, at_step=2)
    assert f"was replaced: PL-TENANTS {AGENT_LINE}" in fault.detail, fault.detail
    assert rec.success is True, (rec.label, [(t.name, t.detail) for t in rec.tests if not t.passed])
    assert failed_after == []  # the level did not notice: the record's fault detail says it


def test_a2_write_after_the_read_replaces_the_writers_entry_in_the_candidate(records):
    rec, fault, failed_after = run(records, "a2", at_step=2)
    assert f"was replaced: PL-TENANTS {AGENT_LINE}" in fault.detail, fault.detail
    assert rec.success is True, rec.label
    assert failed_after == []
    assert fault.failed_after == []  # the record says the level answered every call ok


def test_a2_write_between_edit_and_commit_is_noticed_and_nothing_is_lost(records):
    rec, fault, failed_after = run(records, "a2", at_step=12)
    assert "survived: it is still in running" in fault.detail, fault.detail
    assert rec.success is not True  # the agent's change was refused, not half applied
    assert any(f.startswith("commit:") and "running changed since the candidate was copied" in f
               for f in failed_after), failed_after
    assert any(f.startswith("commit: ") for f in fault.failed_after), fault.failed_after  # in the record


def test_a3t_compiles_against_the_state_it_applies_to(records):
    rec, fault, failed_after = run(records, "a3t", at_step=3)
    assert "survived: it is still in running" in fault.detail, fault.detail
    assert rec.success is True, rec.label
    assert failed_after == []


def test_a4_reconciler_overwrites_the_writers_entry_as_drift(records):
    rec, fault, failed_after = run(records, "a4", at_step=3)
    assert f"was replaced: PL-TENANTS {AGENT_LINE}" in fault.detail, fault.detail
    assert rec.success is True, rec.label
    assert failed_after == []
