"""docs/netconfbench.md, "Validating a task": the example validates a shipped task on real
labs and prints what the page says it prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "netconfbench.md").read_text()


def test_the_validate_example_prints_what_the_page_says(lab_host, run_doc_example):
    out = run_doc_example("netconfbench.md", "validate", timeout=240)
    m = re.search(r"<!-- example:validate -->.*?```\n\nprints\n\n```text\n(.*?)```", PAGE, re.S)
    assert m, "the 'prints' block after example:validate"
    assert out == m.group(1)
