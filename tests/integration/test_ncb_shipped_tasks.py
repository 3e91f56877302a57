"""Every shipped NetConfBench task (``intents/netconfbench/*.json``, whatever is there when the
test runs) validates on real FRR the way NetConfArena validates its templates, through
:func:`ani.netconfbench.lab.validate_task`: on a fresh lab the testcases are run (at least one
fails at the start), then each solution of ``ground_truth_configs`` is applied out of band on a
lab at the start (the first on the lab the testcases just read) and every testcase passes.

The tasks of issue 15's part 3 (the ones listed in :data:`ALL_FAIL_AT_START`) are written so
that *every* testcase fails at the start, not only one: a testcase that already passes would
grade nothing the agent did. For the name-map task the report's name map must hold the
mapped names (``NewYork``, ``Gi0/0``).
"""

from __future__ import annotations

import secrets
from functools import partial
from pathlib import Path

import pytest
from side_by_side import outcome, side_by_side

from ani.netconfbench.lab import validate_task
from ani.netconfbench.task import load_task

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TASK_DIR = ROOT / "intents" / "netconfbench"
TASKS = sorted(TASK_DIR.glob("*.json"))

#: part 3's tasks: every testcase fails before the expert solution
ALL_FAIL_AT_START = {
    "bgp-bogon-filter", "bgp-community-tagging", "bgp-local-preference", "bgp-prefix-length-filter",
    "ebgp-upstream-peering", "ospf-passive-stub", "ospf-two-links-names", "shared-prefix-anycast",
    "tenant-site-onboard",
}
#: the task that exercises the name map
NAME_MAP_TASK = "ospf-two-links-names"


def test_the_catalogue_holds_part_3s_tasks():
    assert ALL_FAIL_AT_START <= {p.stem for p in TASKS}


@pytest.fixture(scope="module")
def reports():
    """``{task file: its validate_task report, or the exception it raised}``, the tasks validated
    three at a time (issue 28 §4: each holds a lab for 30-55 s, mostly waiting on FRR; one after
    the other they took seven minutes of a worker). Labs have ids of this module (``ncbs`` + 6 hex
    digits), each taken down by validate_task; any left up at the end is downed here."""
    from conftest import _require_lab_host

    from ani.lab.lab import Lab

    _require_lab_host()
    made: list[Lab] = []

    def make(topology):
        lab = Lab(topology, lab_id="ncbs" + secrets.token_hex(3), netconf=False, ssh=False)
        made.append(lab)
        return lab

    def one(path):
        return validate_task(load_task(path), path, make_lab=make)

    try:
        yield side_by_side({path: partial(one, path) for path in TASKS})
    finally:
        for lab in made:
            lab.down()


@pytest.mark.timeout(1200)  # the module's tasks, three at a time, in the first test's setup
@pytest.mark.parametrize("path", TASKS, ids=[p.stem for p in TASKS])
def test_shipped_task_validates(reports, path):
    task = load_task(path)
    report = outcome(reports, path)
    assert report.ok, report.summary()
    assert len(report.solutions) == len(task.ground_truth_configs) >= 1
    for sol in report.solutions:
        assert [r["status"] for r in sol.results] == ["pass"] * len(task.testcases), sol
    if path.stem in ALL_FAIL_AT_START:
        assert report.passing_at_start == [], report.summary()
        assert [r["status"] for r in report.initial] == ["fail"] * len(task.testcases), report.initial
    if path.stem == NAME_MAP_TASK:  # NetConfBench's own names, mapped to ones the lab can use
        assert report.names.mapped
        assert set(report.names.nodes) == {"NewYork", "Washington"}
        assert all(v != k for k, v in report.names.nodes.items()), report.names
        assert set(report.names.interfaces["NewYork"]) == {"Gi0/0", "Gi0/1"}
        assert all("/" not in v for v in report.names.interfaces["NewYork"].values()), report.names

