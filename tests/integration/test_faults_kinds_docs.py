"""The example of docs/faults.md's "Kinds aimed at the task" runs and prints what the page says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

DOC = Path(__file__).parent.parent.parent / "docs" / "faults.md"


def printed(marker: str) -> str:
    text = DOC.read_text()
    tail = text[text.index(f"<!-- example:{marker} -->"):]
    m = re.search(r"\n```\n\nprints\n\n((?:    .*\n)+)", tail)
    assert m, f"no 'prints' block after example:{marker}"
    return "\n".join(line[4:] for line in m.group(1).splitlines())


def test_task_kinds_example(lab_host, run_doc_example):
    out = run_doc_example("faults.md", "task-kinds", timeout=300)
    assert out.strip() == printed("task-kinds").strip()


def test_every_kind_of_this_module_is_in_the_table():
    from ani.faults import fault_kinds

    text = DOC.read_text()
    for kind in ("frozen_router", "held_lock", "concurrent_writer", "pool_exhaustion"):
        assert kind in fault_kinds()
        assert f"| `{kind}` |" in text, kind
