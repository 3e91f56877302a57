"""The tests' lab fakes are ani.testing's (issue 28): a class in tests/ that is a lab (named
``*Lab*``, or with ``exec`` / ``vtysh`` / ``vtysh_json`` / ``dead_daemons`` methods) and is not
built on ``ani.testing.FakeLab`` is one of the few listed here, each with a comment saying why.
A new one fails this test: extend FakeLab (or ``ani.testing.fake_campaign``) instead."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
LAB_METHODS = {"exec", "vtysh", "vtysh_json", "dead_daemons"}

#: ``file:class`` of the hand-written lab fakes left, each with its reason in its docstring
ALLOWED = {
    "integration/test_observer_routes.py:Counting",       # a spy around the real lab
    "unit/test_allowlist_adapter.py:RecordingLab",        # any use at all fails the test
    "unit/test_device_apply_logic.py:FakeLab",            # a model-level router under frr-reload
    "unit/test_device_read_lab_gone.py:GoneLab",          # node entry scripts on disk
    "unit/test_device_state.py:FakeLab",                  # node entry scripts on disk
}


def _shipped_names(tree: ast.Module) -> set[str]:
    return {a.asname or a.name for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("ani.testing") for a in n.names}


def _is_lab(c: ast.ClassDef) -> bool:
    methods = {m.name for m in c.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)}
    return ("Lab" in c.name and not c.name.startswith("Test")) or bool(methods & LAB_METHODS)


def _bases(c: ast.ClassDef) -> list[str]:
    return [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in c.bases]


def hand_written_lab_fakes(root: Path = TESTS) -> list[str]:
    """``file:class`` of every hand-written lab fake under ``root`` (module doc), sorted."""
    out = []
    for f in sorted(root.rglob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        shipped = _shipped_names(tree) & {"FakeLab"}
        classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
        by_name = {c.name: c for c in classes}

        def on_shipped(c: ast.ClassDef, seen: frozenset[str] = frozenset()) -> bool:
            return any(b in shipped or (b in by_name and b not in seen and on_shipped(by_name[b], seen | {b}))
                       for b in _bases(c))

        for c in classes:
            if _is_lab(c) and not on_shipped(c) and not {"AniError", "Exception"} & set(_bases(c)):
                out.append(f"{f.relative_to(root).as_posix()}:{c.name}")
    return sorted(out)


def test_no_more_than_five_hand_written_lab_fakes_and_each_is_a_known_one():
    found = hand_written_lab_fakes()
    assert set(found) <= ALLOWED, f"new hand-written lab fakes (extend ani.testing.FakeLab): {sorted(set(found) - ALLOWED)}"
    assert len(ALLOWED) <= 5


def test_the_count_sees_a_hand_written_lab(tmp_path):
    (tmp_path / "test_x.py").write_text(
        "from ani.testing import FakeLab\n"
        "class MyLab:\n    pass\n"
        "class Dev:\n    def vtysh(self, r, c):\n        return ''\n"
        "class OnShipped(FakeLab):\n    pass\n"
        "class TestOnFakeLab:\n    pass\n")
    assert hand_written_lab_fakes(tmp_path) == ["test_x.py:Dev", "test_x.py:MyLab"]
