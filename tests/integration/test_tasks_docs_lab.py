"""docs/tasks.md's lab example (a decommission graded before and after its reference solution)
runs as written on a real lab."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_tasks_lab_docs_example_runs(make_lab, run_doc_example):
    del make_lab  # only for its capability check (skips on hosts without a lab)
    out = run_doc_example("tasks.md", "tasks-lab", timeout=300).splitlines()
    assert out == ["hidden tests passing before: 6 of 15", "all pass after: True changed: ['e1', 'e2', 'e3', 'e4']"]
