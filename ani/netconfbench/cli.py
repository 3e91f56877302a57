"""``ani tasks ...``: NetConfBench task files (owned by :mod:`ani.netconfbench`).

    ani tasks import FILE|DIR ... [--into DIR] [--force]   validate; one line per task; copy into DIR
    ani tasks export [FILE|DIR ...] --out DIR [--force]    write each task as dump_task writes it
    ani tasks show FILE [--checks]                         one task: topology, solutions, testcases
    ani tasks instantiate TEMPLATE [--seed N ...] [--out FILE|DIR] [--force]
                                                           a parameterized template's instances
    ani tasks harvest RESULTS_DIR [--out DIR] [--threshold T]  validated runs -> new solutions

``import`` reads every file before it writes anything: one bad file and nothing is copied (the
errors of every bad file are printed, ``<file>: <json.path>: <message>``); a task whose startup
configs are for another platform than FRR (``platform_of``) is valid and imported, with a
warning on stderr that it cannot run here (the words of the runner's refusal). Without ``--into``
it only validates (the runner reads task files from any path, so no copy is needed to run
one); with it, each task is written to ``DIR/<file name>`` in the canonical form of
:func:`~ani.netconfbench.task.dump_task`. ``export`` without a path exports the shipped tasks
(``intents/netconfbench/*.json``). Neither overwrites a file that differs unless ``--force``
is given. ``instantiate`` renders a template (:mod:`ani.netconfbench.templates`) for each
seed (default: the template's own ``template.seeds``): one seed to stdout or to ``--out
FILE.json``, several to ``--out DIR`` as ``<template name>-seed<N>.json``. ``harvest`` (:mod:`ani.campaign.harvest`, which adds it to this app: it reads results folders) appends to each task file (in place,
or to copies in ``--out``) the runs that passed every testcase with commands unlike every
known solution (command F1 below the threshold, 0.5), one line per candidate run; running it
again adds nothing. A template given to ``import`` or ``show`` (a YAML file, or JSON with
``parameters:``) is refused saying it is one and how to instantiate it; task files are UTF-8
(a byte order mark is dropped, never written). Exit codes: 0 ok, 2 bad input (a task file, a
path, a file in the way).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ani.cli_help import LiteralHelpGroup
from ani.console import consoles
from rich.markup import escape

from ani.errors import AniError, TaskFormatError

app = typer.Typer(cls=LiteralHelpGroup, no_args_is_help=True, add_completion=False)
console, err_console = consoles(highlight=False, soft_wrap=True)

#: the shipped tasks (a folder of the source tree, ``ani/_data/intents/netconfbench`` in a wheel)
SHIPPED = "intents/netconfbench"


def _fail(exc: BaseException | str, code: int = 2) -> typer.Exit:
    for line in str(exc).splitlines() or [""]:
        err_console.print(f"[red]error:[/red] {escape(line)}")
    return typer.Exit(code)


def _load_all(paths: list[Path]):  # noqa: ANN202 - list[tuple[Path, NcbTask]]
    """Every task of ``paths`` (files or directories); one TaskFormatError listing every bad file."""
    from ani.netconfbench.task import load_tasks

    out, bad = [], []
    for p in paths:
        try:
            out += load_tasks(p)
        except TaskFormatError as exc:
            bad.append(str(exc))
    if bad:
        raise TaskFormatError("\n".join(bad))
    return out


def summary_line(path: Path, task) -> str:  # noqa: ANN001 - an NcbTask
    """``static-route.json: 'Static Routing': 2 nodes, 3 testcases (2 command, 1
    expected_result), 1 solution, platform frr``."""
    from ani.netconfbench.platform import platform_of
    from ani.netconfbench.testcases import CommandTestcase

    n_cmd = sum(isinstance(t, CommandTestcase) for t in task.testcases)
    n_res = len(task.testcases) - n_cmd
    sols = len(task.ground_truth_configs)
    nodes, cases = len(task.topology.nodes), len(task.testcases)
    return (f"{path.name}: {task.task_name!r}: {nodes} node{'' if nodes == 1 else 's'}, "
            f"{cases} testcase{'' if cases == 1 else 's'} "
            f"({n_cmd} command, {n_res} expected_result), {sols} solution{'' if sols == 1 else 's'}, "
            f"platform {platform_of(task)}")


def _ungradable(task, path: Path) -> list[str]:  # noqa: ANN001 - an NcbTask
    """Why each testcase of a valid task cannot be graded on the lab (a flooding ``ping``, a
    probe option the observer refuses), one line each: the file loads, the run would refuse it."""
    from ani.netconfbench.testcases import to_check

    out = []
    for i, tc in enumerate(task.testcases):
        try:
            to_check(tc, i, source=str(path), match=task.expected_output_match)
        except TaskFormatError as exc:
            out.append(str(exc))
    return out


def _write_all(tasks, out: Path, force: bool) -> list[Path]:  # noqa: ANN001
    """Write ``dump_task`` of each ``(path, task)`` to ``out/<path name>``; checks every
    target first (a name twice, a different file in the way without ``force``)."""
    from ani.netconfbench.task import dump_task

    plan: dict[Path, str] = {}
    sources: dict[Path, Path] = {}
    for src, task in tasks:
        target = out / src.name
        if target in plan:
            raise TaskFormatError(f"{src}: {target} is also the target of {sources[target]} (same file name)")
        plan[target], sources[target] = dump_task(task), src
    for target, text in plan.items():
        if target.exists() and not force and target.read_text(encoding="utf-8", errors="replace") != text:
            raise TaskFormatError(f"{target}: exists and differs (--force overwrites it)")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for target, text in plan.items():
            target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise TaskFormatError(f"{out}: cannot write: {exc.strerror or exc}") from None
    return list(plan)


@app.command("import")
def import_cmd(
    paths: Annotated[list[Path], typer.Argument(help="task files (*.json) or directories of them")],
    into: Annotated[Path | None, typer.Option("--into", help="copy the tasks into this directory "
                                              "(canonical form); default: validate only")] = None,
    force: Annotated[bool, typer.Option("--force", help="overwrite differing files in --into")] = False,
) -> None:
    """Validate NetConfBench task files; print one line per task; with --into, copy them there."""
    from ani.netconfbench.lab import platform_problem

    try:
        tasks = _load_all(paths)
        for path, task in tasks:
            console.print(escape(summary_line(path, task)))
        for path, task in tasks:  # valid NetConfBench, but said plainly when it cannot run here
            problem = platform_problem(task, str(path))
            if problem:
                err_console.print(f"[yellow]warning:[/yellow] {escape(problem)} (ani run --task-file "
                                  "and a campaign's tasks: refuse it)")
            else:
                for line in _ungradable(task, path):
                    err_console.print(f"[yellow]warning:[/yellow] {escape(line)} (the testcase cannot be graded here)")
        if into is not None:
            written = _write_all(tasks, into, force)
            err_console.print(f"copied {len(written)} task file{'' if len(written) == 1 else 's'} into {escape(str(into))}")
    except AniError as exc:
        raise _fail(exc) from None


@app.command("export")
def export_cmd(
    paths: Annotated[list[Path] | None, typer.Argument(help="task files or directories "
                                                       "(default: the shipped tasks, intents/netconfbench)")] = None,
    out: Annotated[Path, typer.Option("--out", help="directory to write the task files to")] = ...,  # type: ignore[assignment]
    force: Annotated[bool, typer.Option("--force", help="overwrite differing files in --out")] = False,
) -> None:
    """Write tasks as NetConfBench JSON (2-space indent, the draft's key order, testcases as written)."""
    from ani.resources import data_path

    try:
        if not paths:
            try:
                paths = [data_path(SHIPPED)]
            except FileNotFoundError as exc:
                raise TaskFormatError(str(exc)) from None
        written = _write_all(_load_all(paths), out, force)
    except AniError as exc:
        raise _fail(exc) from None
    for w in written:
        console.print(f"wrote {escape(str(w))}")


@app.command("show")
def show_cmd(
    path: Annotated[Path, typer.Argument(help="a task file")],
    checks: Annotated[bool, typer.Option("--checks", help="print the testcases as observer checks (JSON) only")] = False,
) -> None:
    """Summarise one task: intents, topology, platform, solutions, testcases and their checks."""
    from ani.netconfbench.lab import platform_problem
    from ani.netconfbench.platform import device_platforms, platform_of
    from ani.netconfbench.task import load_task
    from ani.netconfbench.testcases import testcase_name, to_check, to_checks
    from ani.observer.checks import dump_checks

    try:
        task = load_task(path)
        if checks:
            typer.echo(json.dumps(dump_checks(to_checks(task, source=str(path))), indent=2))
            for line in _resolutions(task):  # said beside the JSON, not in it
                err_console.print(escape(line))
            return
    except AniError as exc:
        raise _fail(exc) from None
    p = escape
    console.print(p(summary_line(path, task)))
    console.print("intents:")
    for i, intent in enumerate(task.intents, 1):
        console.print(p(f"  {i}. {intent}"))
    console.print(p(f"nodes: {', '.join(task.topology.nodes)}"))
    console.print("links:")
    for link in task.topology.parsed_links():
        console.print(p(f"  {link.a} {link.a_if} <-> {link.b} {link.b_if}"))
    plats = device_platforms(task)
    runnable = platform_problem(task, str(path)) is None
    console.print(p(f"platform: {platform_of(task)} ("
                    + (", ".join(f"{n} {v}" for n, v in plats.items()) or "no startup configs") + ")"
                    + ("" if runnable else ": cannot run here, the lab runs FRR routers only")))
    console.print("solutions:")
    for s in task.ground_truth_configs:
        lines = sum(len(v) for v in s.configs.values())
        console.print(p(f"  {s.solution_id} ({s.provenance}): {lines} lines on {', '.join(s.configs) or 'no device'}"))
    if not task.ground_truth_configs:
        console.print("  none")
    console.print("testcases:")
    for i, tc in enumerate(task.testcases):
        try:
            c = to_check(tc, i)
        except TaskFormatError as exc:
            console.print(p(f"  {testcase_name(tc, i)}  ->  not gradable here: {exc}"))
        else:
            console.print(p(f"  {c.name}  ->  {c.kind} check on {c.nodes[0]}"))
    for line in _resolutions(task):
        console.print(p(line))


def _resolutions(task) -> list[str]:  # noqa: ANN001 - an NcbTask
    """One line per ``expected_result`` whose device / prefix came from the task's solutions."""
    out = []
    for i, tc in enumerate(task.testcases):
        res = getattr(tc, "resolved", None)
        if res is not None:
            out.append(f"testcases[{i}].expected_result: device {res.device}, prefix {res.prefix}: resolved "
                       f"from ground_truth_configs, {res.source}")
    return out


@app.command("instantiate")
def instantiate_cmd(
    template: Annotated[Path, typer.Argument(help="a template file (YAML or JSON, ani.netconfbench.templates)")],
    seed: Annotated[list[int] | None, typer.Option("--seed", help="seed of the instance (repeatable); "
                                                   "default: the template's own seeds (template.seeds)")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="one seed: the task file to write; several: the "
                                             "directory to write <name>-seed<N>.json into; default: stdout (one seed)")] = None,
    force: Annotated[bool, typer.Option("--force", help="overwrite differing files")] = False,
) -> None:
    """Render a parameterized template into NetConfBench task files, one per seed (byte-identical per seed)."""
    from ani.netconfbench.templates import instance_file_name, load_template, render

    try:
        tpl = load_template(template)
        seeds = list(seed) if seed else tpl.seeds
        texts = {s: render(tpl, s) for s in seeds}
        if out is None:
            if len(seeds) != 1:
                raise TaskFormatError(f"{template}: {len(seeds)} seeds ({', '.join(map(str, seeds))}): "
                                      "--out DIR is needed (stdout takes one instance)")
            typer.echo(texts[seeds[0]], nl=False)
            return
        if len(seeds) == 1 and out.suffix == ".json":
            targets = {out: texts[seeds[0]]}
        else:
            targets = {out / instance_file_name(tpl, s): texts[s] for s in seeds}
        for target, text in targets.items():
            if target.exists() and not force and target.read_text(encoding="utf-8", errors="replace") != text:
                raise TaskFormatError(f"{target}: exists and differs (--force overwrites it)")
        try:
            for target, text in targets.items():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise TaskFormatError(f"{out}: cannot write: {exc.strerror or exc}") from None
    except AniError as exc:
        raise _fail(exc) from None
    for target in targets:
        console.print(f"wrote {escape(str(target))}")
