"""The test tree collects as one pytest session: no test module basename twice.

``tests/unit`` and ``tests/integration`` are not packages, so pytest imports each test module
under its basename; a second file of the same name in the other folder stops the whole run at
collection ("import file mismatch"), which only shows when both are collected together
(``make test``), never when a folder runs alone."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_test_module_name_is_used_twice():
    where: dict[str, list[str]] = defaultdict(list)
    for p in TESTS.rglob("test_*.py"):
        if ".venv" not in p.parts and "__pycache__" not in p.parts:
            where[p.name].append(str(p.relative_to(TESTS)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not twice, f"rename one of each: {twice}"
