"""The Task Evaluation Interface of the NetConfBench draft (§4.3), over a running lab.

::

    export_final_cfg(lab)                 -> {"r1": "frr version 8.4...\\nhostname r1\\n...", ...}
    run_testcases(lab, testcases)         -> [{"name": "...", "status": "pass", "output": "..."}, ...]
    run_testcases(lab, testcases, bound_s=30)   # each failing testcase retried for 30 s

Both work out of band, never through an adapter: ``show running-config`` and the testcases'
commands run with vtysh in the router's namespace (:meth:`ani.lab.Lab.vtysh`), so the result
is the same at every level. CLI: ``ani tasks final-cfg --lab ID`` and ``ani tasks
run-testcases FILE --lab ID`` (JSON on stdout).

A testcase of the command shape (``{name?, device, commands: [...], expected_output: regex}``)
passes when ``re.search(expected_output, output, re.MULTILINE)`` matches the output of one
``vtysh -c c1 -c c2 ...`` on ``device``; its ``output`` is that text. A testcase of the
``expected_result`` shape is normalised to a check (:mod:`ani.netconfbench.testcases`) and run by
the observer; its ``output`` is what the observer saw. ``bound_s`` (seconds, default 0: one
look) retries a failing testcase until it passes or the bound is over (routing converging
after a change); the testcases run concurrently. Device names are the lab's: a task whose names
are mapped is run with its testcases rewritten (:meth:`ani.netconfbench.names.NameMap.rewrite`).

Errors: a testcase naming a device that is not a router of the lab, or a testcase of neither
shape, raises :class:`~ani.errors.TaskFormatError` naming ``testcases[i]``.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ani.errors import TaskFormatError

__all__ = ["POLL_S", "export_final_cfg", "run_testcases", "testcase_name"]

#: pause between two looks at a failing testcase, seconds
POLL_S = 1.0
#: at most this many vtysh processes at once
WORKERS = 8


def export_final_cfg(lab: Any) -> dict[str, str]:
    """``{router: its running configuration}`` for every router of ``lab`` (text as
    :meth:`ani.lab.Lab.running_config` reads it). Raises what that raises (ReadError when a
    router's FRR is not running)."""
    return {r: lab.running_config(r) for r in lab.routers}


def testcase_name(tc: dict[str, Any], i: int) -> str:
    """A testcase's ``name``, else ``"testcase <i> on <device>"``."""
    name = tc.get("name")
    if isinstance(name, str) and name:
        return name
    return f"testcase {i} on {tc.get('device', '?')}"


def _raw(tc: Any) -> dict[str, Any]:
    if isinstance(tc, dict):
        return tc
    dump = getattr(tc, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True)
    raise TaskFormatError(f"testcases: not a testcase object: {tc!r}")


def run_testcases(lab: Any, testcases: list[Any], *, bound_s: float = 0.0, where: str = "testcases") -> list[dict[str, Any]]:
    """Run ``testcases`` (raw dicts as the task file has them, either shape) on ``lab``; one
    ``{"name", "status": "pass" | "fail", "output"}`` each, in order (see the module doc).
    Raises TaskFormatError (an unknown device, a testcase of neither shape) before running any."""
    raws = [_raw(tc) for tc in testcases]
    jobs = []
    for i, tc in enumerate(raws):
        if "commands" in tc or "expected_output" in tc:
            device = tc.get("device")
            if device not in lab.routers:
                raise TaskFormatError(f"{where}[{i}].device: {device!r} is not a router of the lab "
                                      f"(routers: {', '.join(lab.routers)})")
            cmds = tc.get("commands") or []
            if isinstance(cmds, str):
                cmds = [cmds]
            try:
                rx = re.compile(str(tc.get("expected_output", "")), re.MULTILINE)
            except re.error as exc:
                raise TaskFormatError(f"{where}[{i}].expected_output: not a valid regular expression: {exc}") from None
            jobs.append(("command", i, (device, [str(c) for c in cmds], rx)))
        elif "expected_result" in tc:
            jobs.append(("check", i, _check_of(tc, i, where)))
        else:
            raise TaskFormatError(f"{where}[{i}]: a testcase needs commands + expected_output or expected_result")
    results: list[dict[str, Any] | None] = [None] * len(raws)
    if not jobs:
        return []

    def job(kind: str, i: int, what: Any) -> dict[str, Any]:
        if kind == "command":
            ok, out = _command(lab, *what, bound_s=bound_s)
        else:
            ok, out = _observe(lab, what, bound_s)
        return {"name": testcase_name(raws[i], i), "status": "pass" if ok else "fail", "output": out}

    with ThreadPoolExecutor(max_workers=max(1, min(WORKERS, len(jobs)))) as pool:
        futs = {i: pool.submit(job, kind, i, what) for kind, i, what in jobs}
        for i, f in futs.items():
            results[i] = f.result()
    return [r for r in results if r is not None]


def _command(lab: Any, device: str, commands: list[str], rx: re.Pattern[str], *, bound_s: float) -> tuple[bool, str]:
    deadline = time.monotonic() + bound_s
    while True:
        res = lab.vtysh(device, commands, timeout=15.0)
        out = res.stdout if res.stdout.strip() else res.stdout + res.stderr
        if rx.search(out):
            return True, out
        if time.monotonic() + POLL_S > deadline:
            return False, out
        time.sleep(POLL_S)


def _check_of(tc: dict[str, Any], i: int, where: str) -> Any:
    """The observer check of an ``expected_result`` testcase (part of the task format's
    normalisation, :func:`ani.netconfbench.testcases.testcase_check`)."""
    from ani.netconfbench.testcases import testcase_check

    return testcase_check(tc, f"{where}[{i}]")


def _observe(lab: Any, check: Any, bound_s: float) -> tuple[bool, str]:
    from ani.observer import Observer

    res = Observer(lab).evaluate([check], bound_s=max(bound_s, 0.1))[0]
    return bool(res.passed), str(res.detail or "")
