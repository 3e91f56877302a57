"""Sizes of ``ani/``'s code only go down (issue 28 §4): a function of 80 lines or more, or a
module over 600 lines, carries a reason written down.

- A function of ``FUNCTION_LINES`` lines or more (``end_lineno - lineno + 1`` of its ``def``,
  decorators excluded, nested functions counted in their parent and on their own) must be in
  :data:`BASELINE` with a one-line reason. The baseline holds the ones left on 2026-12-05
  (23 that day, 7 after issue 28); it only shrinks: a new long function fails, and so does an
  entry whose function got shorter or went away (remove it, so it cannot grow back unseen).
- A module over ``MODULE_LINES`` lines carries ``# size: <reason>`` in its first 30 lines.

Measured with :mod:`ast`, no lab, no clock.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ANI = Path(__file__).resolve().parents[2] / "ani"
FUNCTION_LINES = 80
MODULE_LINES = 600
SIZE_COMMENT = re.compile(r"^# size: \S")

#: (module path from the repository root, qualified name) -> why it is still this long
BASELINE: dict[tuple[str, str], str] = {
    ("ani/adapters/allowlist.py", "plan_config"):
        "A1's allowlist planner: one ordered rule table over a config's lines (issue 28: H2/H3 own adapters)",
    ("ani/adapters/sandbox.py", "sandbox_argv"):
        "the bubblewrap argv of the A0 sandbox, one security boundary read top to bottom",
    ("ani/adapters/a0.py", "A0Adapter.shell"):
        "A0's one tool: sandboxed run, output capture and the harness-fault mapping in order",
    ("ani/adapters/a1.py", "A1Adapter._apply_many"):
        "A1's multi-device apply with snapshot and rollback (adapters: other owners in issue 28)",
    ("ani/agents/scripted.py", "ScriptedAgent._solve"):
        "the scripted baseline's plan-then-act loop over a task's change set (not split yet)",
    ("ani/adapters/a2.py", "A2Adapter.commit"):
        "A2's commit tool: confirmed commit, confirm and its error mapping (adapters: other owners)",
    ("ani/adapters/a1.py", "A1Adapter.update_config"):
        "A1's update tool: allowlist, apply, verify and rollback in order (adapters: other owners)",
}


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, int]]:
    """(qualified name, lines) of every function in ``tree``, nested ones included."""
    out: list[tuple[str, int]] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + node.name
            out.append((name, node.end_lineno - node.lineno + 1))
            out.extend(_functions(node, name + "."))
        elif isinstance(node, ast.ClassDef):
            out.extend(_functions(node, prefix + node.name + "."))
        else:
            out.extend(_functions(node, prefix))
    return out


@functools.cache
def _modules() -> list[tuple[str, str]]:
    root = ANI.parent
    return [(p.relative_to(root).as_posix(), p.read_text(encoding="utf-8")) for p in sorted(ANI.rglob("*.py"))]


@functools.cache
def long_functions() -> dict[tuple[str, str], int]:
    """Every function of ``FUNCTION_LINES`` lines or more in ``ani/``, with its length."""
    return {(path, name): n for path, src in _modules() for name, n in _functions(ast.parse(src))
            if n >= FUNCTION_LINES}


def test_no_new_function_of_80_lines_or_more() -> None:
    new = {k: n for k, n in long_functions().items() if k not in BASELINE}
    assert not new, (
        "functions of %d lines or more not in tests/unit/test_code_sizes.py BASELINE:\n%s\n"
        "Split each into named steps that read in order (see ServiceClass, ani/device/state.py); "
        "do not add it to the baseline." % (FUNCTION_LINES, "\n".join(
            f"  {p}: {name} ({n} lines)" for (p, name), n in sorted(new.items())))
    )


def test_the_baseline_only_shrinks() -> None:
    stale = sorted(k for k in BASELINE if k not in long_functions())
    assert not stale, (
        "shorter than %d lines now, or gone: remove from BASELINE in tests/unit/test_code_sizes.py "
        "(so it cannot grow back unseen):\n%s" % (FUNCTION_LINES, "\n".join(f"  {p}: {n}" for p, n in stale))
    )
    assert all(reason.strip() and "\n" not in reason for reason in BASELINE.values())


def test_a_module_over_600_lines_says_why() -> None:
    missing = [(path, len(src.splitlines())) for path, src in _modules()
               if len(src.splitlines()) > MODULE_LINES
               and not any(SIZE_COMMENT.match(line) for line in src.splitlines()[:30])]
    assert not missing, (
        "modules over %d lines without a '# size: <reason>' comment in their first 30 lines:\n%s\n"
        "Split the module (by what changes together), or say in that comment why it is one." % (
            MODULE_LINES, "\n".join(f"  {p} ({n} lines)" for p, n in missing))
    )


def test_the_measure_counts_what_it_says() -> None:
    src = "class C:\n    def m(self):\n        def inner():\n            pass\n        return 1\n"
    assert _functions(ast.parse(src)) == [("C.m", 4), ("C.m.inner", 2)]
