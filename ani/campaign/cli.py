"""``ani campaign run|report`` and ``ani run`` (one variant at one level, for debugging).

Exit codes: 0 done (``ani run``: the run succeeded), 1 ``ani run`` graded a failure,
2 bad input (file, field, folder, a folder another campaign is writing) or a level that cannot
work on this machine (``ani doctor``), 3 infrastructure errors (``ani run``: its run;
``ani campaign run``: any run of the folder, rerun by ``--resume``), 130 interrupted (finished
runs are kept; ``ani campaign run``: 143 after SIGTERM, 129 after SIGHUP, also with the resume
command printed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ani.cli_help import LiteralHelpGroup
from ani.console import consoles
from rich.markup import escape

from ani.campaign import cli_options as opt
from ani.campaign.run_cli import describe_budget, run_option_error  # noqa: F401 - re-exported (tests, docs)
from ani.campaign.run_cli import print_event as _print_event
from ani.errors import AniError, CampaignSpecError

app = typer.Typer(cls=LiteralHelpGroup, no_args_is_help=True, add_completion=False, help="Run benchmark campaigns.")
console, err_console = consoles()


def _fail(msg: str, code: int = 2) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {escape(msg)}", soft_wrap=True)
    return typer.Exit(code)


@app.command("run")
def campaign_run(
    file: opt.CampaignFile,
    out: opt.CampaignOut = None,
    resume: opt.Resume = None,
    variants: opt.Variants = None,
    bound: opt.Bound = None,
    retry_infra: opt.RetryInfra = False,
    no_progress: opt.NoProgress = False,
    jobs: opt.Jobs = None,
    executor: opt.Executor = None,
    scheduler: opt.Scheduler = None,
    lab_prefix: opt.LabPrefix = None,
    agent_config: opt.CampaignAgentConfig = None,
    agent_option: opt.CampaignAgentOption = None,
    cell: opt.CampaignCell = None,
) -> None:
    """Run every variant (seed) of FILE in every cell (--cell NAME: in those cells only), each
    on a fresh lab; write plan.jsonl, runs.jsonl and summary.md. Exits 3 if runs ended as
    infrastructure errors (--resume DIR reruns them).

    --agent-config and --agent-option change the agent of every cell without editing FILE (read
    as ani run reads them); the campaign's checks, the matched budget among them, see the
    result, and the folder records it: --resume runs the folder's agent (other agent options
    are refused) and ani campaign rerun the plan's."""
    from ani.campaign.agent_block import agent_override
    from ani.campaign.loop import CampaignInterrupted, load_for_run, run_campaign

    _check_run_options(out, resume, variants, bound)
    try:
        override = agent_override(agent_config, list(agent_option or []))
        # --resume: the folder's S and agent override
        spec = load_for_run(file, resume, variants=variants, bound=bound, agent_override=override,
                            cells=list(cell or []))
        _say_spec(spec, no_progress)
        from ani.lab.state import check_prefix

        check_prefix(lab_prefix)  # before the folder is made
        runner = _executor(spec, jobs, executor, scheduler)
        try:
            result = run_campaign(
                spec,
                resume if resume is not None else out,
                resume=resume is not None,
                progress=not no_progress,
                source=file,
                console=console,
                executor=runner,
                lab_prefix=lab_prefix,  # None: the folder's (--resume), else the campaign's name
            )
        finally:
            if runner is not None:
                runner.close()  # also when the campaign was refused before its first run
    except AniError as exc:
        raise _fail(str(exc)) from None
    except CampaignInterrupted as exc:  # after the folder was taken: the runs it holds are kept
        err_console.print(exc.message(), soft_wrap=True, markup=False, highlight=False)
        raise typer.Exit(130) from None
    except KeyboardInterrupt:  # before run_campaign took the folder: no run was stored
        err_console.print("interrupted before the first run started; nothing to keep")
        raise typer.Exit(130) from None
    del retry_infra  # folded into --resume
    _exit_for(result)


def _check_run_options(out: Path | None, resume: Path | None, variants: int | None, bound: float | None) -> None:
    """Refuse (exit 2) options of ``ani campaign run`` that exclude each other or are out of range."""
    if out is not None and resume is not None and out.resolve() != resume.resolve():
        raise _fail("give either --out or --resume, not both")
    if variants is not None and bound is not None:
        raise _fail("give --variants (S) or --bound (S = ceil(3/B)), not both")
    if bound is not None and not 0 < bound < 1:
        raise _fail(f"--bound {bound:g}: a damage probability bound in (0, 1), e.g. --bound 0.05 (60 runs per cell)")


def _say_spec(spec: Any, no_progress: bool) -> None:
    """Say what the loaded campaign runs that its file does not: an agent override (also with
    --no-progress) and the S a --bound gave."""
    if spec.agent_override is not None:  # said also with --no-progress: what ran is not the file's agent
        console.print(f"agent: {escape(spec.agent_override.describe())} in every cell", soft_wrap=True,
                      highlight=False)
    if spec.bound is not None and not no_progress:
        console.print(f"bound {spec.bound:g}: S = {spec.variants} runs per cell (rule of three, ceil(3/B))")


def _exit_for(result: Any) -> None:
    """Exit as the campaign ended: 128 + the signal if interrupted (130 for Ctrl-C, 143 for
    SIGTERM, 129 for SIGHUP), 3 if runs ended as infrastructure errors; else return (0)."""
    if result.interrupted:  # 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP
        raise typer.Exit(128 + int(result.stopped_by or 2))
    if result.infra:
        raise typer.Exit(3)


def _executor(spec: Any, jobs: int | None, kind: str | None, scheduler: str | None) -> Any:
    """The executor the options ask for. Labs on this machine (``local``, ``dask`` with
    ``local:N``): ``--jobs`` unset is this machine's default for the campaign's largest lab,
    said in one line; more than it holds is refused (:mod:`ani.host.capacity`). A Dask
    scheduler is reached here, before the results folder is made. Raises ConfigError."""
    from ani.campaign.coordinator import check_scheduler, make_executor
    from ani.errors import ConfigError

    check_scheduler(kind, scheduler)
    if kind == "dask" and jobs is not None:
        raise ConfigError("--jobs is the local executor's; with --executor dask the cluster's workers "
                          "decide (--scheduler local:N: N at once here)")
    if kind == "dask":
        from ani.campaign.executors.dask_executor import parse_scheduler

        where, n = parse_scheduler(scheduler or "")
        if where == "local":
            _check_labs(spec, int(n), "--scheduler local:")
        ex = make_executor(kind, scheduler=scheduler)
        ex.connect()
        from ani.campaign.executors.dask_executor import RESOURCE

        console.print(f"--executor dask: {ex.slots} at once (the workers' '{RESOURCE}' resource, "
                      f"{'a LocalCluster here' if where == 'local' else scheduler})", soft_wrap=True, highlight=False)
        return ex
    if kind in (None, "local") and jobs != 1:
        jobs = _check_labs(spec, jobs, "--jobs ")
    if kind in (None, "serial") and (jobs or 1) == 1:
        return None  # run_campaign runs the plans in this process, with its deps
    return make_executor(kind, jobs=jobs or 1)


def _check_labs(spec: Any, n: int | None, option: str) -> int:
    """``n`` labs at once, checked against what this machine holds (None: the default, printed
    with its reason). Raises ConfigError (:func:`ani.host.capacity.check_jobs`)."""
    from ani.errors import ConfigError
    from ani.host import capacity

    host, need = capacity.this_host(), capacity.lab_bytes(_routers(spec))
    if n is None:
        console.print(capacity.explain_default(host, need), soft_wrap=True, highlight=False)
        return capacity.default_jobs(host.cores, need, host.available_bytes)
    try:
        capacity.check_jobs(n, need, host.available_bytes)
    except ConfigError as exc:
        raise type(exc)(str(exc).replace("--jobs ", option, 1)) from None
    return n


def _routers(spec: Any) -> int:
    """The most routers a lab of ``spec`` has (its scenarios at every density; 0: unknown)."""
    from ani.campaign.runner import RunnerDeps, design_points, scenario_for

    deps, most = RunnerDeps(), 0
    for cell, point in design_points(spec):
        try:
            scenario = scenario_for(spec, deps, spec.density_of(cell, point))
        except AniError:
            continue  # validation says why, with the field
        most = max(most, len(getattr(getattr(scenario, "topology", None), "routers", None) or {}))
    return most


@app.command("rerun")
def campaign_rerun(
    results: Annotated[Path, typer.Argument(help="a campaign results folder (holds plan.jsonl)")],
    run_id: Annotated[str, typer.Argument(help="the run id to execute again (see runs.jsonl or the report)")],
    out: Annotated[
        Path | None, typer.Option("--out", help="new results folder (default <folder>-rerun-<run id>-<time>)")
    ] = None,
    replay: Annotated[
        bool, typer.Option("--replay", help="replay the run's recorded tool calls (no model) instead of its agent")
    ] = False,
    trajectory: Annotated[
        Path | None, typer.Option("--trajectory", help="with --replay: the trajectory to replay (ani JSONL or "
                                  "ATIF; default the folder's trajectories/<run id>.jsonl)")
    ] = None,
) -> None:
    """Execute one planned run of a campaign alone, on a fresh lab, into a new folder, and say
    whether its verdict matches the recorded one (exit 0: it matches; 1: it differs; 3: an
    infrastructure error; 130: interrupted). With --replay the agent is the replay agent: the
    recorded tool calls, in order, against the fresh lab (the same plan: scenario hash, task
    variant, level, fault schedule); calls answered differently are counted and written to the
    new trajectory as replay_diff events."""
    from ani.campaign.rerun import rerun

    if not results.is_dir():
        raise _fail(f"{results}: no such folder")
    if trajectory is not None and not replay:
        raise _fail("--trajectory: only with --replay")
    try:
        done = rerun(results, run_id, out, on_event=_print_event, replay=replay, trajectory=trajectory)
    except AniError as exc:
        raise _fail(str(exc)) from None
    except KeyboardInterrupt:  # the run took its lab down on the way out; its record was not written
        err_console.print("interrupted (the lab was taken down); no record written", soft_wrap=True)
        raise typer.Exit(130) from None
    rec, old = done.record, done.recorded
    reason = f" ({rec.infra_error_reason})" if rec.infra_error_reason else ""
    console.print(f"{rec.run_id}: {rec.label}{reason} in {rec.wall_s:.1f}s; folder {done.out}", soft_wrap=True,
                  markup=False, highlight=False)
    if old is None:
        console.print("recorded: none (the folder has no record of this run)")
    else:
        console.print(f"recorded: {old.label}: {'matches' if done.matches else 'DIFFERS'}", highlight=False)
    if done.replay is not None:
        r = done.replay
        console.print(f"replay: {r.get('replayed')} of {r.get('calls')} recorded calls issued; "
                      f"{r.get('differing')} answered differently ({r.get('flag_differences')} flag, "
                      f"{r.get('text_differences')} text differences; replay_diff events in the trajectory)",
                      soft_wrap=True, markup=False, highlight=False)
    elif replay:
        console.print("replay: the agent did not run (see the record)")
    if rec.label in ("infra_error", "environment_invalid"):
        raise typer.Exit(3)
    if done.matches is False:
        raise typer.Exit(1)


@app.command("report")
def campaign_report(
    results: Annotated[Path, typer.Argument(help="a campaign results folder (holds runs.jsonl)")],
    html: Annotated[
        bool, typer.Option("--html", help="also (re)write report.html: the report with plots")
    ] = False,
    reference: Annotated[
        str | None,
        typer.Option("--reference", metavar="CELL",
                     help="compare every cell with this one (default: the campaign file's reference:, else the first cell)"),
    ] = None,
) -> None:
    """Re-render summary.md of a results folder from its runs.jsonl and print the table and the
    paired comparisons (against --reference); with --html also report.html (one self-contained
    page: plots next to the tables)."""
    from ani.campaign.report import print_summary, write_report

    if not results.is_dir():
        raise _fail(f"{results}: no such folder")
    if not (results / "runs.jsonl").exists():
        raise _fail(f"{results}: not a campaign results folder (no runs.jsonl)")
    try:
        path = write_report(results, reference)
    except CampaignSpecError as exc:  # an unknown --reference (or reference: in spec.json): nothing written
        raise _fail(str(exc)) from None
    print_summary(results, console=console, reference=reference)
    console.print(f"report: {path}", soft_wrap=True)
    # --- HTML report (issue 14 §4, report-html) ---
    if html:
        from ani.campaign.html_report import write_html_report

        try:
            page = write_html_report(results, reference)
        except OSError as exc:
            raise _fail(f"{results}: cannot write report.html: {exc}") from None
        console.print(f"html report: {page}", soft_wrap=True)



# --- issue 27 §4: two campaigns over the same plans, paired (ani.campaign.compare)


@app.command("compare")
def campaign_compare(
    dir_a: Annotated[Path, typer.Argument(help="campaign A's results folder (holds plan.jsonl)")],
    dir_b: Annotated[Path, typer.Argument(help="campaign B's results folder, over the same plans")],
    factor: Annotated[
        str | None,
        typer.Option("--factor", metavar="FIELD",
                     help="the one plan field allowed to differ (agent, budget, level, ..., or provenance); "
                          "default: agent if the agent blocks differ, else provenance"),
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", metavar="OUT", help="also write the comparison as one HTML page")
    ] = None,
) -> None:
    """Pair the runs of two campaigns by plan (cell, task, form, seed, stress point) and print,
    per cell, the paired statistics (both rates with their intervals, discordant pairs, exact
    McNemar p, the difference A - B with Newcombe's interval, Holm across the cells) as Markdown.
    Refused (exit 2) when the plans of a pair differ in anything but the factor, naming it."""
    from ani.campaign.compare import compare_dirs, render_markdown, write_html

    try:
        cmp = compare_dirs(dir_a, dir_b, factor)
    except AniError as exc:
        raise _fail(str(exc)) from None
    _say(render_markdown(cmp).splitlines())
    if html is not None:
        try:
            page = write_html(cmp, html)
        except OSError as exc:
            raise _fail(f"{html}: cannot write the page: {exc.strerror or exc}") from None
        console.print(f"html: {page}", soft_wrap=True, markup=False, highlight=False)


# --- issue 27 §2, §3: the runs of a folder one by one, and ATIF (ani.campaign.runs_view, export_atif)


def _say(lines: list[str]) -> None:
    for line in lines:
        console.print(line, soft_wrap=True, markup=False, highlight=False)


@app.command("list")
def campaign_list(
    results: Annotated[Path, typer.Argument(help="a results folder of 'ani campaign run' or 'ani run'")],
    as_json: Annotated[bool, typer.Option("--json", help="a JSON array of the runs instead of lines")] = False,
) -> None:
    """One line per run of the folder, in plan order: its stable run id (what 'ani campaign show'
    and 'ani campaign rerun' take), cell, task variant, verdict, failed checks, steps, tokens,
    wall seconds and trajectory file; a planned run without a record is not_run."""
    from ani.campaign.runs_cli import list_json, list_lines
    from ani.campaign.runs_view import run_rows

    try:
        rows = run_rows(results)
    except AniError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        print(list_json(rows))
    else:
        _say(list_lines(rows))


@app.command("show")
def campaign_show(
    results: Annotated[Path, typer.Argument(help="a results folder of 'ani campaign run' or 'ani run'")],
    run_id: Annotated[str, typer.Argument(help="the run id (see 'ani campaign list')")],
    as_json: Annotated[bool, typer.Option("--json", help="the record, the plan and the failed checks as JSON")] = False,
) -> None:
    """One run's record: what ran (cell, level, task variant, seed, scenario hash), its verdict,
    its cost, its trajectory file and every failed hidden test and invariant with its detail.
    An unknown run id exits 2 naming the nearest ones."""
    from ani.campaign.runs_cli import show_json, show_lines
    from ani.campaign.runs_view import find_run

    try:
        plan, rec = find_run(results, run_id)
    except AniError as exc:
        raise _fail(str(exc)) from None
    if as_json:
        print(show_json(results, plan, rec))
    else:
        _say(show_lines(results, plan, rec))


@app.command("export")
def campaign_export(
    results: Annotated[Path, typer.Argument(help="a results folder of 'ani campaign run' or 'ani run'")],
    fmt: Annotated[str, typer.Option("--format", help="the format: atif (ATIF v1.8, one document per run)")] = "atif",
    out: Annotated[Path | None, typer.Option("--out", help="a new (or empty) folder for the files "
                                             "(default <folder>-<format>)")] = None,
) -> None:
    """Write each finished run as one file of the format: atif writes OUT/<run id>.json, the run's
    trajectory as an ATIF document (request, model replies with their tokens, every tool call
    with its arguments and result) with the run's verdict, level, scenario hash, cell and task
    variant in its extra["ani"]; each is validated by the atif package's models."""
    from ani.campaign.export_atif import FORMATS, export_atif

    if fmt not in FORMATS:
        raise _fail(f"--format {fmt}: not a format ani exports (formats: {', '.join(FORMATS)})")
    dest = out if out is not None else results.resolve().with_name(f"{results.resolve().name}-{fmt}")
    try:
        files = export_atif(results, dest)
    except AniError as exc:
        raise _fail(str(exc)) from None
    console.print(f"{len(files)} run{'s' if len(files) != 1 else ''} written as ATIF to {dest}",
                  soft_wrap=True, markup=False, highlight=False)


@app.command("import")
def campaign_import(
    file: Annotated[Path, typer.Argument(help="a trajectory: an ATIF document (.json) or ani's JSONL")],
    out: Annotated[Path | None, typer.Option("--out", help="write the events as ani's trajectory "
                                             "JSONL to this new file")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the tool calls as a JSON array")] = False,
) -> None:
    """Read a trajectory back: print its tool calls in order (name, arguments, result); with
    --out, write its events as ani's own trajectory (trajectories/<run id>.jsonl's format). An
    ATIF document ani exported gives back every event it was made from."""
    import dataclasses
    import json

    from ani.campaign.runs_cli import call_lines
    from ani.trajectory_atif import read_events, recorded_calls

    if file.is_dir():
        raise _fail(f"{file}: is a folder; give one trajectory file (an ATIF .json of an export, "
                    "or ani's .jsonl)")
    if not file.is_file():
        raise _fail(f"{file}: no such file")
    try:
        events = read_events(file)
    except AniError as exc:
        raise _fail(str(exc)) from None
    calls = recorded_calls(events)
    if out is not None:
        if out.exists():
            raise _fail(f"--out {out}: already exists; give a new file")
        try:
            out.write_text("".join(json.dumps(e, default=str) + "\n" for e in events), encoding="utf-8")
        except OSError as exc:
            raise _fail(f"--out {out}: cannot write there ({exc.strerror or exc})") from None
    if as_json:
        print(json.dumps([{k: v for k, v in dataclasses.asdict(c).items() if k != "event"} for c in calls],
                         indent=1, default=str))
        return
    _say(call_lines(calls, len(events)))
    if out is not None:
        console.print(f"events: {out}", soft_wrap=True, markup=False, highlight=False)


def run_one(
    scenario: opt.Scenario = None,
    manifest: opt.Manifest = None,
    scenario_seed: opt.ScenarioSeed = None,
    density: opt.Density = None,
    task: opt.Task = None,
    task_file: opt.TaskFile = None,
    seed: opt.Seed = None,
    level: opt.Level = "a1",
    blocklist: opt.Blocklist = False,
    adapter_option: opt.AdapterOption = None,
    agent: opt.Agent = None,
    agent_config: opt.AgentConfig = None,
    agent_option: opt.AgentOption = None,
    max_steps: opt.MaxSteps = None,
    max_tokens: opt.MaxTokens = None,
    wall_clock_s: opt.WallClock = None,
    out: opt.RunOut = None,
    reasoning_summary: opt.ReasoningSummary = None,
    replay: opt.Replay = None,
) -> None:
    """Run one task variant at one level on a fresh lab with any agent; print the trajectory
    as it goes (tool calls, model turns, null actions, waits, submit) and the verdict.

    The agent comes from --agent-config (an agent block or a campaign file), then --agent (the
    kind), then each --agent-option KEY=VALUE; a bad file, option or value exits 2 naming it,
    before any lab starts. Each --option KEY=VALUE is an option of the level's adapter (a
    campaign cell's ``options:``, in the run record's ``adapter_options``), checked by the
    level's options model before any lab starts (exit 2 naming the option and the known ones). The budget is the campaign file's ``budget:`` block when
    --agent-config is a campaign file (else 40 steps, 300 s, no token cap), each of
    --max-steps, --max-tokens and --wall-clock overriding its key; it is printed at the start.
    """
    from ani.campaign.run_cli import RunArgs, run

    if replay is not None:
        import json

        if agent not in (None, "replay"):
            raise _fail(f"--replay: the agent is the replay agent, not --agent {agent}")
        agent = "replay"
        agent_option = [f"trajectory={json.dumps(str(replay))}", *(agent_option or [])]
    run(RunArgs(scenario=scenario, manifest=manifest, scenario_seed=scenario_seed, density=density, task=task,
                task_file=task_file, seed=seed, level=level, blocklist=blocklist,
                adapter_option=list(adapter_option or []), agent=agent, agent_config=agent_config,
                agent_option=list(agent_option or []), max_steps=max_steps, max_tokens=max_tokens,
                wall_clock_s=wall_clock_s, out=out, reasoning_summary=reasoning_summary))
