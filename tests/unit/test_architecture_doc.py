"""docs/architecture.md says what pyproject's layers contract is (issue 28 §1): the drawing of
"Layers" is the contract's ``layers`` line for line, its exceptions are the contract's
``ignore_imports`` (it named one after the last was removed), and every file the "Modules"
table names in its first column exists."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text()
CONTRACT = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"][0]


def _section(title: str) -> str:
    return DOC.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _drawn_layers() -> list[str]:
    drawing = _section("Layers").split("```", 2)[1].strip("\n").splitlines()
    return [re.split(r"\s{2,}", line.strip(), maxsplit=1)[0] for line in drawing]


def test_the_drawing_is_the_contract():
    contract = [" | ".join(part.strip() for part in layer.split("|")) for layer in CONTRACT["layers"]]
    assert _drawn_layers() == contract


def test_the_exceptions_named_are_the_contracts():
    text = " ".join(_section("Layers").split())
    ignored = CONTRACT.get("ignore_imports", [])
    if ignored:
        assert all(f"`{line.split(' -> ')[0]}" in text or line in text for line in ignored)
    else:
        assert "today: the" not in text and "no `ignore_imports`" in text


def test_the_module_tables_files_exist():
    missing = []
    for row in _section("Modules").splitlines():
        if not row.startswith("| `"):
            continue
        first = row.split(" | ", 1)[0]
        base = None
        for name in re.findall(r"`([^`]+)`", first):
            base = name if "/" in name else base
            path = ROOT / name if "/" in name else ROOT / Path(base).parent / name
            if not path.exists():
                missing.append(name)
    assert missing == []
