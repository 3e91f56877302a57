"""The Task Evaluation Interface of the NetConfBench draft (§4.3), over a running lab.

::

    export_final_cfg(lab)                 -> {"r1": "frr version 8.4...\\nhostname r1\\n...", ...}
    run_testcases(lab, testcases)         -> [{"name": "...", "status": "pass", "output": "..."}, ...]
    run_testcases(lab, testcases, bound_s=30)   # each failing testcase retried for 30 s

Both work out of band, never through an adapter: ``show running-config`` and the testcases'
commands run with vtysh in the router's namespace (:meth:`ani.lab.Lab.vtysh`), so the result
is the same at every level. CLI: ``ani tasks final-cfg --lab ID`` and ``ani tasks
run-testcases FILE --lab ID`` (JSON on stdout).

Every testcase runs as the runner grades it: normalised to its observer check
(:func:`ani.netconfbench.testcases.to_check`: a ``command`` check runs one ``vtysh -c c1 -c c2
...`` on ``device`` and searches ``expected_output`` in it with ``re.MULTILINE``; an
``expected_result`` testcase is a ``route`` check) and evaluated by
:class:`ani.observer.Observer`, one code path with the grading. ``output`` is what the observer
saw last (the match, or the first lines of the output that did not match). ``bound_s``
(seconds, default 0: one look) retries a failing testcase until it passes or the bound is over
(routing converging after a change); the testcases run concurrently. Device names are the
lab's: a task whose names are mapped is run with its testcases rewritten
(:func:`ani.netconfbench.lab.lab_task`).

Errors: a testcase naming a device that is not a router of the lab, or a testcase of neither
shape, raises :class:`~ani.errors.TaskFormatError` naming ``testcases[i]``.
"""

from __future__ import annotations

from typing import Any

from ani.errors import TaskFormatError

__all__ = ["export_final_cfg", "run_testcases"]


def export_final_cfg(lab: Any) -> dict[str, str]:
    """``{router: its running configuration}`` for every router of ``lab`` (text as
    :meth:`ani.lab.Lab.running_config` reads it). Raises what that raises (ReadError when a
    router's FRR is not running)."""
    return {r: lab.running_config(r) for r in lab.routers}


def _testcase(tc: Any, where: str) -> Any:
    """A testcase model from a model or a raw mapping; TaskFormatError naming ``where``."""
    from pydantic import TypeAdapter, ValidationError

    from ani.netconfbench.testcases import Testcase

    if not isinstance(tc, dict):
        return tc
    try:
        return TypeAdapter(Testcase).validate_python(tc)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in err["loc"][1:])
        raise TaskFormatError(f"{where}{loc}: {err['msg']}") from None


def run_testcases(lab: Any, testcases: list[Any], *, bound_s: float = 0.0, where: str = "testcases") -> list[dict[str, Any]]:
    """Run ``testcases`` (the task's testcase models, or raw mappings as a task file has them,
    either shape) on ``lab``; one ``{"name", "status": "pass" | "fail", "output"}`` each, in
    order (see the module doc). Raises TaskFormatError (a device that is not a router of the
    lab, a malformed testcase) before running any."""
    from ani.netconfbench.testcases import to_check
    from ani.observer import Observer

    checks = []
    for i, tc in enumerate(testcases):
        check = to_check(_testcase(tc, f"{where}[{i}]"), i)
        if check.router not in lab.routers:
            field = "device" if isinstance(tc, dict) and "device" in tc else "expected_result.device"
            raise TaskFormatError(f"{where}[{i}].{field}: {check.router!r} is not a router of the lab "
                                  f"(routers: {', '.join(lab.routers)})")
        checks.append(check)
    if not checks:
        return []
    results = Observer(lab).evaluate(checks, bound_s=bound_s)
    return [{"name": r.name, "status": "pass" if r.passed else "fail", "output": str(r.detail or "")}
            for r in results]
