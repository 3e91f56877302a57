"""The Task Evaluation Interface of the NetConfBench draft (§4.3), over a running lab.

::

    export_final_cfg(lab)                 -> {"r1": "frr version 8.4...\\nhostname r1\\n...", ...}
    run_testcases(lab, testcases)         -> [{"name": "...", "status": "pass", "output": "..."}, ...]
    run_testcases(lab, testcases, bound_s=30)   # each failing testcase retried for 30 s

Both work out of band, never through an adapter: ``show running-config`` and the testcases'
commands run with vtysh in the router's namespace (:meth:`ani.lab.Lab.vtysh`), so the result
is the same at every level. CLI: ``ani tasks final-cfg --lab ID`` and ``ani tasks
run-testcases FILE --lab ID`` (JSON on stdout).

**They speak the task's names.** A lab built from a task whose names are mapped
(:mod:`ani.netconfbench.names`: ``NewYork`` -> ``newyork``, ``GigabitEthernet0/0`` ->
``gi0-0``) records the map in its topology (``Topology.aliases``); what these functions give
back is in the task's names: ``export_final_cfg`` keys each configuration by the task's device
name and writes its interface names and ``hostname`` line as the task does; a testcase's
``output`` and every error name the task's devices and interfaces. ``names`` (a
:class:`~ani.netconfbench.names.NameMap`) overrides the lab's map (``ani tasks
run-testcases`` gives the task file's own). Testcases may be given in the task's names (as the
task file has them) or in the lab's (:func:`ani.netconfbench.lab.lab_task`): they are mapped
into the lab's names first (:func:`ani.netconfbench.lab.lab_testcase`; text already in the
lab's names stays as it is).

Every testcase runs as the runner grades it: normalised to its observer check
(:func:`ani.netconfbench.testcases.to_check`: a ``command`` check runs one ``vtysh -c c1 -c c2
...`` on ``device`` (a ``ping`` / ``traceroute`` bounded in its namespace) and finds
``expected_output`` in it as the task's ``expected_output_match`` says; an ``expected_result``
testcase is a ``route`` check, on the device and prefix the task resolved when it gives none) and evaluated by
:class:`ani.observer.Observer`, one code path with the grading. ``output`` is what the observer
saw last (the match, or the first lines of the output that did not match). ``bound_s``
(seconds, default 0: one look) retries a failing testcase until it passes or the bound is over
(routing converging after a change); the testcases run concurrently.

Errors: a testcase naming a device that is not a router of the lab, or a testcase of neither
shape, raises :class:`~ani.errors.TaskFormatError` naming ``testcases[i]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ani.errors import TaskFormatError

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["export_final_cfg", "lab_names", "run_testcases"]


def lab_names(lab: Lab) -> Any:
    """The :class:`~ani.netconfbench.names.NameMap` ``lab`` was built with, from its topology's
    ``aliases`` (identity for a lab without: every name is the task's)."""
    from ani.netconfbench.names import NameMap

    aliases = lab.topology.aliases or {}
    return NameMap.from_aliases(dict(aliases), list(lab.routers))


def export_final_cfg(lab: Lab, names: Any = None) -> dict[str, str]:
    """``{device: its running configuration}`` for every router of ``lab`` (text as
    :meth:`ani.lab.Lab.running_config` reads it), in the task's names (module doc; ``names``:
    default :func:`lab_names`). Raises what that raises (ReadError when a router's FRR is not
    running)."""
    back = (names or lab_names(lab)).inverse()
    return {back.nodes.get(r, r): back.rewrite(r, lab.running_config(r)) for r in lab.routers}


def _testcase(tc: Any, where: str, names: Any) -> Any:
    """A testcase model in the lab's names from a model or a raw mapping (either names);
    TaskFormatError naming ``where``."""
    from pydantic import TypeAdapter, ValidationError

    from ani.netconfbench.lab import lab_testcase
    from ani.netconfbench.problems import validation_problems
    from ani.netconfbench.testcases import SHAPE_TAGS, Testcase

    raw = tc.graded_raw() if hasattr(tc, "graded_raw") else tc  # what the task resolved, kept
    if not isinstance(raw, dict):
        raise TaskFormatError(f"{where}: a testcase must be a JSON object")
    try:
        return TypeAdapter(Testcase).validate_python(lab_testcase(raw, names))
    except ValidationError as exc:
        raise TaskFormatError("; ".join(validation_problems(exc, prefix=where, drop=SHAPE_TAGS))) from None


def run_testcases(lab: Lab, testcases: list[Any], *, bound_s: float = 0.0, where: str = "testcases",
                  names: Any = None) -> list[dict[str, Any]]:
    """Run ``testcases`` (testcase models or raw mappings as a task file has them, either
    shape, in the task's or the lab's names) on ``lab``; one ``{"name", "status": "pass" |
    "fail", "output"}`` each, in order, ``output`` in the task's names (see the module doc;
    ``names``: default :func:`lab_names`). Raises TaskFormatError (a device that is not a router
    of the lab, a malformed testcase) before running any."""
    from ani.netconfbench.testcases import to_check
    from ani.observer import Observer

    names = names or lab_names(lab)
    back = names.inverse()
    checks = []
    for i, tc in enumerate(testcases):
        check = to_check(_testcase(tc, f"{where}[{i}]", names), i)
        if check.router not in lab.routers:
            raw = tc.raw if hasattr(tc, "raw") else tc
            field = "device" if "device" in raw else "expected_result.device"
            routers = ", ".join(back.nodes.get(r, r) for r in lab.routers)
            raise TaskFormatError(f"{where}[{i}].{field}: {back.nodes.get(check.router, check.router)!r} is not "
                                  f"a router of the lab (routers: {routers})")
        checks.append(check)
    if not checks:
        return []
    results = Observer(lab).evaluate(checks, bound_s=bound_s)
    return [{"name": r.name, "status": "pass" if r.passed else "fail", "output": _task_output(c, r, back)}
            for c, r in zip(checks, results, strict=True)]


def _task_output(check: Any, result: Any, back: Any) -> str:
    """The observer's detail of ``check`` in the task's names (``back``: the inverse name map).
    A command check's detail quotes its pattern between slashes (``no match of /.../ in:``):
    the pattern is put back on its own, as a token boundary would keep ``gi0-0/`` as it is."""
    out = str(result.detail or "")
    expect = getattr(check, "expect", None)
    if isinstance(expect, str) and expect:
        out = out.replace(f"/{expect}/", f"/{back.rewrite(check.router, expect)}/")
    return back.rewrite(check.router, out)
