"""``ani run``: one task variant at one level on a fresh lab, printed as it goes (the command's
options are in :func:`ani.campaign.cli.run_one`; this module does the work).

    run(RunArgs(level="a1", seed=2, ...))    # raises typer.Exit with the command's exit code

The options become a one-cell, one-variant campaign (:func:`spec_data`), checked as a campaign
file is (its errors said in the options' words, :func:`run_option_error`), then run the
campaign's way (:func:`ani.campaign.single.run_single`) and the record printed
(:func:`print_record`). Exit codes: 0 success, 1 a graded failure, 2 bad input, 3 an
infrastructure error, 130 interrupted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from ani.console import consoles
from ani.errors import AniError
from ani.host import results_dirs

console, err_console = consoles()

#: the budget keys ``ani run`` sets, with their options
BUDGET_OPTIONS = (("max_steps", "--max-steps"), ("max_tokens", "--max-tokens"), ("wall_clock_s", "--wall-clock"))


@dataclass
class RunArgs:
    """The options of ``ani run`` as given (None: not given)."""

    scenario: Path | None = None
    manifest: Path | None = None
    scenario_seed: int | None = None
    density: int | None = None
    task: str | None = None
    task_file: Path | None = None
    seed: int | None = None
    level: str = "a1"
    blocklist: bool = False
    adapter_option: list[str] = field(default_factory=list)
    agent: str | None = None
    agent_config: Path | None = None
    agent_option: list[str] = field(default_factory=list)
    max_steps: int | None = None
    max_tokens: int | None = None
    wall_clock_s: float | None = None
    out: Path | None = None
    reasoning_summary: str | None = None


def _fail(msg: str, code: int = 2) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {escape(msg)}", soft_wrap=True)
    return typer.Exit(code)


def print_event(ev: dict[str, Any]) -> None:
    """Print one trajectory event as it is logged (tool calls and the agent's own events)."""
    from ani.campaign.live import event_line

    line = event_line(ev)
    if line is not None:
        console.print(line, soft_wrap=True, highlight=False)


def _writable_folder(folder: Path) -> None:
    """Create ``folder`` and check it is writable; ConfigError naming ``--out`` otherwise
    (:func:`ani.campaign.loop.writable_folder`)."""
    from ani.campaign.loop import writable_folder

    writable_folder(folder, "--out")


def describe_budget(budget: Any) -> str:
    """``40 steps, 300 s wall clock, no token cap`` (a :class:`ani.agents.base.Budget`)."""
    from ani.campaign.live import count

    tokens = "no token cap" if budget.max_tokens is None else count(budget.max_tokens, "token")
    return f"{count(budget.max_steps, 'step')}, {budget.wall_clock_s:g} s wall clock, {tokens}"


def _budget_source(config: Path | None, file_budget: dict[str, Any] | None, given: list[str]) -> str:
    """Where the budget in effect came from, e.g. ``from --agent-config c.yaml; --max-steps``."""
    parts = []
    if file_budget is not None and config is not None:
        parts.append(f"from --agent-config {config}" + ("" if file_budget else " (no budget block: defaults)"))
    elif not given:
        parts.append("defaults")
    if given:
        parts.append(", ".join(given) + " given")
    return "; ".join(parts)


DEFAULT_SCENARIO = Path("scenarios/brownfield-small.yaml")

#: pydantic's bounds, said the way an option's value is checked
_BOUNDS = (
    (re.compile(r"Input should be greater than or equal to (-?\d+(?:\.\d+)?)"), r"must be \1 or more"),
    (re.compile(r"Input should be greater than (-?\d+(?:\.\d+)?)"), r"must be more than \1"),
    (re.compile(r"Input should be less than or equal to (-?\d+(?:\.\d+)?)"), r"must be \1 or less"),
    (re.compile(r"Input should be less than (-?\d+(?:\.\d+)?)"), r"must be less than \1"),
)


def run_option_error(msg: str, fields: dict[str, tuple[str, Any]]) -> str:
    """An error of ``ani run``'s one-cell campaign (source ``command line``) in the words of
    ``ani run``: each ``FIELD: `` the campaign check names (``seed``, ``cells[0](a3t).level``,
    ``budget.wall_clock_s``) becomes the option that set it (``--seed -1: ``), the value repeated
    after it (``'a3t': ``) is dropped and pydantic's bounds read as ``must be 0 or more``.

    Args:
        msg: the error, e.g. ``command line: invalid campaign: seed: Input should be ...``;
            any other message is returned as it is.
        fields: ``{field: (option as given, value or None)}``.
    """
    head = "command line: "
    if not msg.startswith(head):
        return msg
    body = msg[len(head):].removeprefix("invalid campaign: ")
    for field in sorted(fields, key=len, reverse=True):  # cells[0](x).level before cells[0](x)
        option, value = fields[field]
        again = "" if value is None else rf"(?:{re.escape(repr(value))}: )?"
        body = re.sub(rf"(^|; ){re.escape(field)}: {again}", lambda m, o=option: f"{m.group(1)}{o}: ", body)
    for pattern, said in _BOUNDS:
        body = pattern.sub(said, body)
    return body


def _adapter_options(level: str, texts: list[str]) -> dict[str, Any]:
    """``ani run --option KEY=VALUE ...`` as the cell's adapter options, checked by the options
    model of ``level``'s adapter (a later option of one key wins). Raises typer.Exit(2) with
    one line naming the ``--option`` (the text as given) and what is wrong."""
    from ani.campaign.agent_block import parse_key_value
    from ani.campaign.runner import check_adapter_options

    options: dict[str, Any] = {}
    given: dict[str, str] = {}
    try:
        for text in texts:
            key, value = parse_key_value(text, "--option", example="apply_config_shape=netconfarena",
                                         collections=True)
            options[key], given[key] = value, text
        check_adapter_options(level, options)
    except AniError as exc:
        msg = str(exc)
        if not msg.startswith("--option"):
            named = [t for k, t in given.items() if re.search(rf"(^|[ ;]){re.escape(k)}[:.\[]", msg)]
            msg = f"--option {', '.join(named) or ', '.join(given.values())}: {msg}"
        raise _fail(msg) from None
    return options


def run(a: RunArgs) -> None:
    """``ani run`` with options ``a`` (see the module doc). Raises typer.Exit (its exit code)."""
    a.level = a.level.strip().lower()
    adapter_options = _check_options(a)
    block, file_budget = _agent(a)
    budget, given = _budget(a, file_budget)
    data = spec_data(a, _source(a), block, budget, adapter_options)
    rec, out_dir = _start(a, data, budget_line=(file_budget, given))
    print_record(rec, out_dir)


def _check_options(a: RunArgs) -> dict[str, Any]:
    """The level, the adapter's options and the scenario options, checked before anything
    else; fills the defaults of ``task`` and ``seed``. Raises typer.Exit(2)."""
    from ani.registry import available, unknown_level

    known = available()
    if a.level not in known:  # say which option, not the internal one-cell campaign's field path
        raise _fail(f"--level / $ANI_LEVEL: {unknown_level(a.level, list(known))}")
    adapter_options = _adapter_options(a.level, list(a.adapter_option))
    if a.manifest is not None and a.scenario is not None:
        raise _fail("give --scenario (a scenario file) or --manifest (generated), not both")
    if a.task_file is not None and (a.scenario is not None or a.manifest is not None):
        raise _fail("--task-file: a NetConfBench task brings its own network: not with --scenario / --manifest")
    if a.task_file is not None and (a.task is not None or a.seed is not None):
        raise _fail("--task-file: a NetConfBench task file is one task with one variant: not with "
                    f"{' / '.join(f for f, v in (('--task', a.task), ('--seed', a.seed)) if v is not None)}")
    a.task = "onboard-site" if a.task is None else a.task
    a.seed = 1 if a.seed is None else a.seed
    if a.manifest is None and (a.scenario_seed is not None or a.density is not None):
        raise _fail("--scenario-seed / --density: only with --manifest (a scenario file is not generated)")
    return adapter_options


def _source(a: RunArgs) -> dict[str, Any]:
    """The campaign's scenario keys from --task-file, --manifest or --scenario (paths resolved
    against the working directory). Raises typer.Exit(2) naming the option."""
    from ani.campaign.spec import resolve_path

    try:  # name the option, not the internal one-cell campaign's "scenario" field
        if a.task_file is not None:  # netconfbench: the task file is the one variant
            return {"tasks": str(resolve_path(str(a.task_file), Path.cwd(), "--task-file"))}
        if a.manifest is not None:
            return {"manifest": str(resolve_path(str(a.manifest), Path.cwd(), "--manifest")),
                    "scenario_seed": 1 if a.scenario_seed is None else a.scenario_seed, "density": a.density}
        return {"scenario": str(resolve_path(str(a.scenario or DEFAULT_SCENARIO), Path.cwd(), "--scenario"))}
    except AniError as exc:
        raise _fail(str(exc)) from None


def _agent(a: RunArgs) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The agent block (--agent-config, then --agent, then each --agent-option) and the budget
    block of a campaign file given as --agent-config; the agent is created once to check it,
    before any lab. Raises typer.Exit(2) naming the source."""
    from ani.agents import create_agent
    from ani.campaign.agent_block import agent_block, campaign_budget, describe_sources
    from ani.campaign.spec import plugin_folders_of

    try:
        block = agent_block(a.agent_config, a.agent, a.agent_option)
        file_budget = campaign_budget(a.agent_config) if a.agent_config is not None else None
        create_agent(dict(block), folders=plugin_folders_of(None))  # bad kind, option, value: before any lab
    except AniError as exc:
        msg = str(exc)
        if not msg.startswith(("--agent-config", "--agent-option")):
            msg = f"agent ({describe_sources(a.agent_config, a.agent, a.agent_option)}): {msg}"
        raise _fail(msg) from None
    return block, file_budget


def _budget(a: RunArgs, file_budget: dict[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """The budget block (the file's, each option given overriding its key) and the options given."""
    budget: dict[str, Any] = dict(file_budget or {})
    given = []
    for key, flag in BUDGET_OPTIONS:
        value = getattr(a, key)
        if value is not None:
            budget[key] = value
            given.append(flag)
    return budget, given


def _summary_option(text: str | None) -> dict[str, Any]:
    """``{"reasoning_summary": ...}`` from --reasoning-summary (YAML), or {}. Raises typer.Exit(2)."""
    if text is None:
        return {}
    import yaml

    from ani.validation import yaml_problem

    try:
        return {"reasoning_summary": yaml.safe_load(text)}
    except yaml.YAMLError as exc:
        raise _fail(f"--reasoning-summary: not YAML: {yaml_problem(exc)}") from None


def cell_name(a: RunArgs) -> str:
    """The one cell's name: the level, ``+blocklist`` with --blocklist."""
    return a.level + ("+blocklist" if a.blocklist else "")


def spec_data(a: RunArgs, source: dict[str, Any], block: dict[str, Any], budget: dict[str, Any],
              adapter_options: dict[str, Any]) -> dict[str, Any]:
    """The one-cell, one-variant campaign the options make (a mapping for
    :func:`ani.campaign.spec.parse_spec`); a NetConfBench task file is its one variant, seed 0."""
    if a.task_file is not None:
        a.task, a.seed = "netconfbench", 0
    return {
        "name": "run",
        **source,
        **({} if a.task_file is not None else {"task": a.task, "seed": a.seed}),
        "variants": 1,
        "agent": block,
        "budget": budget,
        "cells": [{"name": cell_name(a), "level": a.level, "blocklist": a.blocklist,
                   **({"options": adapter_options} if adapter_options else {})}],
        **_summary_option(a.reasoning_summary),
    }


def option_fields(a: RunArgs, data: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """``{campaign field: (the option that set it, its value or None)}`` of the one-cell
    campaign, for :func:`run_option_error`."""
    from ani.campaign.agent_block import describe_sources

    cell = f"cells[0]({cell_name(a)})"
    fields: dict[str, tuple[str, Any]] = {
        f"{cell}.level": (f"--level {a.level}", a.level), cell: (f"--level {a.level}", None),
        f"{cell}.blocklist": ("--blocklist", None),
        f"{cell}.options": ("--option " + ", ".join(a.adapter_option), None),
        "reasoning_summary": (f"--reasoning-summary {a.reasoning_summary}", None),
        "agent": (f"agent ({describe_sources(a.agent_config, a.agent, a.agent_option)})", None),
    }
    if a.task_file is not None:
        fields["tasks"] = (f"--task-file {a.task_file}", None)
    else:
        fields |= {"seed": (f"--seed {a.seed}", a.seed), "task": (f"--task {a.task}", a.task)}
        if a.manifest is not None:
            fields |= {"manifest": (f"--manifest {a.manifest}", None),
                       "scenario_seed": (f"--scenario-seed {data['scenario_seed']}", None),
                       "density": (f"--density {a.density}", None)}
        else:
            fields["scenario"] = (f"--scenario {a.scenario}" if a.scenario is not None
                                  else f"scenario {DEFAULT_SCENARIO} (the default of --scenario)", None)
    for key, flag in BUDGET_OPTIONS:
        value = getattr(a, key)
        fields[f"budget.{key}"] = ((f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}")
                                   if value is not None else f"--agent-config {a.agent_config}: budget.{key}", None)
    return fields


def _start(a: RunArgs, data: dict[str, Any], budget_line: tuple[dict[str, Any] | None, list[str]]) -> tuple[Any, Path]:
    """Check the campaign and the host, say what starts, run it. Returns ``(record, folder)``.
    Raises typer.Exit: 2 bad input (an empty folder this call made is removed), 130 Ctrl-C."""
    from ani.campaign.runner import RunnerDeps, check_host, preflight, validate
    from ani.campaign.single import check_out, run_single
    from ani.campaign.spec import parse_spec

    fields = option_fields(a, data)
    created = False  # whether this call made the --out folder (removed again if refused before the run)
    out_dir = a.out or Path("results") / f"run-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    try:
        spec = parse_spec(data, "command line", Path.cwd())
        deps = RunnerDeps()
        validate(spec, deps)  # bad task, scenario, agent or level: fail before any lab starts
        check_host(spec, deps)  # a level that cannot work on this machine: before any lab
        created = not out_dir.exists()
        check_out(out_dir)  # an earlier run's record is never replaced
        _writable_folder(out_dir)  # the record must be writable: fail before any lab starts
        results_dirs.register(out_dir)  # hidden from every A0 shell, now and in later runs
        for warning in preflight(spec, deps):  # a dead model endpoint: fail before any lab
            err_console.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)
        _say_start(a, spec, *budget_line)
        from ani.campaign.live import live_view_logging

        with live_view_logging():  # a warning the live view prints is not logged a second time
            return run_single(spec, out_dir, deps=deps, on_event=print_event), out_dir
    except AniError as exc:
        if created and out_dir.is_dir() and not any(out_dir.iterdir()):
            out_dir.rmdir()  # refused before the run (e.g. a dead endpoint): leave no empty folder
        raise _fail(run_option_error(str(exc), fields)) from None
    except KeyboardInterrupt:
        err_console.print("interrupted (the lab was taken down)")
        raise typer.Exit(130) from None


def _say_start(a: RunArgs, spec: Any, file_budget: dict[str, Any] | None, given: list[str]) -> None:
    """The budget line and the ``run ... starting the lab ...`` line."""
    console.print(
        f"budget: {escape(describe_budget(spec.budget))} "
        f"({escape(_budget_source(a.agent_config, file_budget, given))})",
        soft_wrap=True,
    )
    what = (f"{a.task} seed {a.seed}" if a.task_file is None
            else f"netconfbench task {a.task_file.stem} (run {spec.run_id(spec.cells[0], a.seed)})")
    options = "".join(f", --option {escape(t)}" for t in a.adapter_option)
    console.print(
        f"run {cell_name(a)} {escape(what)}, agent {escape(str(spec.agent['kind']))}{options}: starting the lab ...",
        soft_wrap=True,
    )


def print_record(rec: Any, out_dir: Path) -> None:
    """Write ``run.json`` and print the record: failed checks, the verdict, the process, the
    observer's and NetConfBench's lines, where it is. Raises typer.Exit: 3 an infrastructure
    error, 1 a graded failure (returns on success)."""
    from ani.campaign.results import INVALID_LABELS

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "run.json").write_text(rec.model_dump_json(indent=2) + "\n", encoding="utf-8")
    _print_checks(rec)
    _print_verdict(rec)
    trajectory = rec.trajectory or "-"
    console.print(f"record: {out_dir / 'run.json'}; trajectory: {trajectory}", soft_wrap=True)
    if rec.label in INVALID_LABELS:  # infra_error, environment_invalid (faults)
        if (rec.infra_error_reason or "").startswith("host fault"):
            err_console.print("the host or the harness failed, not the agent: see 'ani doctor'",
                              soft_wrap=True)
        raise typer.Exit(3)
    if not rec.success:
        raise typer.Exit(1)


def _print_checks(rec: Any) -> None:
    for name, results in (("hidden tests", rec.tests), ("invariants", rec.invariants)):
        if results:
            console.print(f"{name}: {sum(r.passed for r in results)}/{len(results)} pass")
            for r in results:
                if not r.passed:
                    console.print(f"  [red]FAIL[/red] {escape(r.name)}: {escape(r.detail)}")
    if rec.superseded:
        console.print(f"superseded invariants (graded by the hidden tests): {len(rec.superseded)}")
    if rec.agent_error:
        console.print(f"agent error: {escape(rec.agent_error)}")
    if rec.unattributed:
        console.print(f"[yellow]unattributed[/yellow]: {escape(rec.unattributed)}", soft_wrap=True)


def _print_verdict(rec: Any) -> None:
    from ani.campaign.live import count
    from ani.campaign.loop import LABEL_STYLE
    from ani.campaign.observer_report import observer_line  # observer-run (issue 14 §2)
    from ani.netconfbench.report import ncb_line  # ncb-scores (issue 15 §3)

    style = LABEL_STYLE.get(rec.label, "")
    verdict = f"[{style}]{rec.label}[/{style}]" if style else rec.label
    console.print(
        f"verdict: {verdict}"
        + (f" ({escape(rec.infra_error_reason)})" if rec.infra_error_reason else "")
        + f"; {count(rec.tool_calls, 'tool call')}, {count(rec.tool_errors, 'error')}, "
        f"{rec.wall_s:.1f}s"
    )
    if rec.process is not None:
        console.print(f"process: {escape(rec.process.describe())}", soft_wrap=True)
    if (seen := observer_line(rec)) is not None:
        console.print(f"observer: {escape(seen)}", soft_wrap=True)
    if (scores := ncb_line(rec)) is not None:
        console.print(f"netconfbench: {escape(scores)}", soft_wrap=True)
    from ani.campaign.known_answer_report import mistake_line  # issue 25 §3

    if (made := mistake_line(rec)) is not None:
        console.print(f"mistake made on purpose: {escape(made)}", soft_wrap=True)
