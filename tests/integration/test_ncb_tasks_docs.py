"""The runnable example of docs/netconfbench-tasks.md: validating one shipped task on real labs
(``validate_task``), every testcase failing at the start and passing after the solution."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_validate_task_example(lab_host, run_doc_example):
    out = run_doc_example("netconfbench-tasks.md", "validate-task")
    lines = out.splitlines()
    assert lines[0].startswith("ok   intents/netconfbench/bgp-bogon-filter.json: 3 testcases, 3 failing at start, "
                               "1 solution(s) pass"), out
    assert lines[1:] == ["fail r1 has no route to the leaked 10.66.0.0/16",
                         "fail r1 rejects the more specific 10.66.128.0/17",
                         "fail only the leaked prefixes are dropped from r2"], out
