"""``ani tasks`` commands over real labs (registered on :data:`ani.netconfbench.cli.app`).

    ani tasks validate FILE|DIR ... [--json]            each task on real labs (validate_task)
    ani tasks final-cfg --lab ID                        {"configs": {router: running config}}
    ani tasks run-testcases FILE --lab ID [--bound S]   {"results": [{"name", "status", "output"}]}

``final-cfg`` and ``run-testcases`` are the draft's Task Evaluation Interface (§4.3) over a
running lab (``ani lab up``, or a run's lab), JSON on stdout; the lab is attached, never taken
down. ``run-testcases`` runs the testcases of the task file ``FILE``, in the lab's names when
the task's names are mapped (the same map the lab was built with). ``validate`` prints one line
per task (``ok`` / ``FAIL`` and why) or, with ``--json``, the reports. Exit codes: 0 ok, 1 a
task failed validation, 2 bad input (a task file, an unknown lab), 3 the host cannot run labs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ani.errors import AniError, CapabilityMissing
from ani.netconfbench.cli import _fail, _load_all, app, console


def _attach(lab_id: str):  # noqa: ANN202 - a Lab
    from ani.lab.lab import Lab

    try:
        return Lab.attach(lab_id)
    except AniError as exc:
        raise _fail(f"--lab: {exc}") from None


@app.command("validate")
def validate_cmd(
    paths: Annotated[list[Path], typer.Argument(help="task files or folders of them")],
    as_json: Annotated[bool, typer.Option("--json", help="print the validation reports as JSON")] = False,
) -> None:
    """Validate tasks on real labs (NetConfArena's template validation).

    At least one testcase must fail at the start, and after each solution (applied out of
    band, on a lab at the start) every testcase must pass."""
    from ani.netconfbench.lab import validate_task

    try:
        tasks = _load_all(paths)
    except AniError as exc:
        raise _fail(exc) from None
    reports = []
    for path, task in tasks:
        try:
            report = validate_task(task, path)
        except CapabilityMissing as exc:
            raise _fail(exc, 3) from None
        except AniError as exc:  # name the task: the paths may be a folder of them
            msg = str(exc)
            raise _fail(msg if msg.startswith(str(path)) else f"{path}: {msg}") from None
        reports.append(report)
        if not as_json:
            style = "green" if report.ok else "red"
            console.print(f"[{style}]{escape(report.summary())}[/{style}]")
    if as_json:
        console.print_json(json.dumps([r.model_dump(mode="json") for r in reports]))
    if not all(r.ok for r in reports):
        raise typer.Exit(1)


@app.command("final-cfg")
def final_cfg_cmd(lab: Annotated[str, typer.Option("--lab", help="id of a running lab (ani lab status)")]) -> None:
    """export-final-cfg (draft §4.3): every router's running configuration, as JSON."""
    from ani.netconfbench.evaluate import export_final_cfg

    try:
        configs = export_final_cfg(_attach(lab))
    except AniError as exc:
        raise _fail(exc) from None
    print(json.dumps({"configs": configs}, indent=2))


@app.command("run-testcases")
def run_testcases_cmd(
    path: Annotated[Path, typer.Argument(help="the task file whose testcases run")],
    lab: Annotated[str, typer.Option("--lab", help="id of a running lab (ani lab status)")],
    bound: Annotated[float, typer.Option("--bound", min=0, help="retry a failing testcase for this many seconds")] = 0.0,
) -> None:
    """run-testcases (draft §4.3): the task's testcases on a running lab, as JSON.

    Out of band (vtysh in the routers' namespaces); exit 1 when one fails."""
    from ani.netconfbench.evaluate import run_testcases
    from ani.netconfbench.lab import task_scenario

    try:
        (src, task), = _load_all([path])
        mapped = task_scenario(task, source=src).task
    except ValueError:
        raise _fail(f"{path}: give one task file") from None
    except AniError as exc:
        raise _fail(exc) from None
    try:
        results = run_testcases(_attach(lab), list(mapped.testcases), bound_s=bound)
    except AniError as exc:  # e.g. a testcase's device the lab does not have: another task's lab
        msg = str(exc)
        raise _fail(msg if msg.startswith(str(src)) else f"{src} on lab {lab}: {msg}") from None
    print(json.dumps({"results": results}, indent=2))
    if any(r["status"] != "pass" for r in results):
        raise typer.Exit(1)
