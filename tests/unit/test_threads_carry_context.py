"""Every thread ani/ starts carries the context of the code that starts it (issue 24 §1).

A run's fault scope (:func:`ani.host.programs.fault_scope`) is a context variable: work a run
hands to a plain ``threading.Thread`` or ``ThreadPoolExecutor`` would note its host faults
outside the run. So ani/ starts threads only through :mod:`ani.host.threads` (``thread``,
``ContextPool``, ``bind``); ``asyncio.to_thread`` and ``anyio.to_thread.run_sync`` copy the
context themselves and are allowed.
"""

from __future__ import annotations

import ast
from pathlib import Path

ANI = Path(__file__).resolve().parents[2] / "ani"
HELPER = ANI / "host" / "threads.py"

#: calls that start a thread in an empty context
PLAIN = {"Thread", "ThreadPoolExecutor", "ThreadPool", "start_new_thread"}


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _bound(arg: ast.expr | None) -> bool:
    return isinstance(arg, ast.Call) and _name(arg.func) == "bind"


def offences(text: str) -> list[str]:
    """``"line: code"`` of each call in ``text`` that starts a thread without the context:
    ``Thread(...)``, ``ThreadPoolExecutor(...)``, ``Timer(s, fn)`` with ``fn`` not ``bind(...)``,
    ``run_in_executor(None, fn, ...)`` with ``fn`` not ``bind(...)``."""
    lines = text.splitlines()
    out = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Call):
            continue
        name, args = _name(node.func), node.args
        if name == "Timer":
            ok = _bound(args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg == "function"), None))
        elif name == "run_in_executor":
            ok = not (args and isinstance(args[0], ast.Constant) and args[0].value is None) or _bound(
                args[1] if len(args) > 1 else None)
        else:
            ok = name not in PLAIN
        if not ok:
            out.append(f"{node.lineno}: {lines[node.lineno - 1].strip()}")
    return out


def test_ani_starts_threads_only_through_the_context_helpers():
    found = {}
    for p in sorted(ANI.rglob("*.py")):
        if p == HELPER:
            continue
        bad = offences(p.read_text(encoding="utf-8"))
        if bad:
            found[str(p.relative_to(ANI.parent))] = bad
    assert not found, f"start these through ani.host.threads (thread, ContextPool, bind): {found}"


def test_the_check_sees_each_forbidden_form():
    code = '''
import threading
from concurrent.futures import ThreadPoolExecutor
threading.Thread(target=f).start()
with ThreadPoolExecutor(4) as ex: pass
threading.Timer(1, cb)
loop.run_in_executor(None, f, 1)
'''
    assert sorted(b.split(":")[0] for b in offences(code)) == ["4", "5", "6", "7"]
    fine = '''
thread(f, name="x").start()
ContextThread(target=f)
with ContextPool(4) as ex: pass
threading.Timer(1, bind(cb))
loop.run_in_executor(None, bind(f), 1)
await asyncio.to_thread(f)
"""threading.Thread( in a docstring"""
'''
    assert offences(fine) == []
