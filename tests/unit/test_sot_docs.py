"""docs/sot.md: the worked example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_worked_example_runs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "docs" / "sot.md").read_text()
    blocks = re.findall(r"<!-- example:sot -->\s*```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1  # the A3-R adapter's example (example:a3r) needs a lab: an integration test
    monkeypatch.chdir(ROOT)
    exec(compile(blocks[0], "docs/sot.md", "exec"), {"__name__": "sot_doc_example"})
    out = capsys.readouterr().out
    assert "['devices/r1.json']" in out
    assert "refused: operation 1" in out and "conflict:" in out
    assert "ani-sot <sot@ani.invalid>" in out
    assert "missing /static_routes/192.0.2.0~124" in out
