"""docs/tasks.md's lab-free example runs as written and prints what the page says."""

from __future__ import annotations


def test_tasks_docs_example_runs(run_doc_example):
    out = run_doc_example("tasks.md", "tasks", timeout=120).splitlines()
    assert [ln.split(":")[0] for ln in out] == ["onboard-site-s3", "change-set-s3", "decommission-s3", "troubleshoot-s3"]
    assert out[1] == "change-set-s3: 52 hidden tests, 9 superseded, overrides [], recabled {'red1': 'e4', 'red2': 'e1'}"
    assert out[3] == "troubleshoot-s3: 14 hidden tests, 4 superseded, overrides ['e1'], recabled {}"
