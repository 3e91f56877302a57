"""docs/intents.md: the runnable example runs, and every service type is in the catalogue."""

from __future__ import annotations

import re
from pathlib import Path

from ani.intents.models import SERVICE_TYPES

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "intents.md"


def test_runnable_example_runs(monkeypatch):
    text = DOC.read_text()
    section = text.split("## Runnable example", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "no python block under '## Runnable example'"
    monkeypatch.chdir(ROOT)
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), {"__name__": "docs_intents"})


def test_catalogue_lists_every_type_and_action():
    text = DOC.read_text()
    for t, classes in SERVICE_TYPES.items():
        actions = " | ".join(c.model_fields["action"].default for c in classes)
        assert f"### `{t}` — {actions}" in text


def test_readme_mentions_schemas():
    assert "schemas/" in (ROOT / "intents" / "README.md").read_text()
