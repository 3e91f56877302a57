"""docs/scenarios.md: the example of the scripted agent's planner runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "scenarios.md"


def test_planner_example_runs(monkeypatch):
    section = re.split(r"\n#{2,3} ", DOC.read_text().split("### Every other task class", 1)[1], maxsplit=1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "no python block under '### Every other task class'"
    monkeypatch.chdir(ROOT)
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), {"__name__": "docs_scripted_tasks"})
