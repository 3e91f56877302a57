"""The campaign loop: every seed in every cell (paired), a fresh lab per run, resumable.

Results folder (default ``results/<name>-<YYYYmmdd-HHMMSS>/``)::

    campaign.yaml        verbatim copy of the campaign file (when run from a file)
    spec.json            the resolved spec (absolute paths), checked on --resume
    runs.jsonl           one RunRecord per finished run, appended + fsynced as it ends
                         (--resume runs again what is missing there or ended as infra_error or
                         environment_invalid)
    scenarios/           the generated scenario files of a campaign with a manifest, one per
                         density (``default-s7-d4.yaml``; ``ani lab up`` takes them)
    trajectories/        one JSONL trajectory per run
    summary.md           written after the loop (also after Ctrl-C)
    report.html          the report with plots, written after summary.md (ani.campaign.html_report)
"""

from __future__ import annotations

import json
import shutil
import warnings
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ani.campaign.results import ENV_INVALID, INFRA, INVALID_LABELS, RunRecord, RunStore, read_runs
from ani.campaign.runner import (
    RunnerDeps,
    check_host,
    design_points,
    preflight,
    run_one,
    scenario_for,
    validate,
)
from ani.campaign.spec import CampaignSpec, RunPoint, safe_component
from ani.errors import CampaignSpecError
from ani.host import results_dirs

SPEC_JSON = "spec.json"
SPEC_COPY = "campaign.yaml"
#: fields allowed to differ between a results folder's spec and the spec given on --resume (more seeds)
RESUME_MAY_CHANGE = {"variants", "bound"}  # campaign-factors: --bound sets variants

LABEL_STYLE = {
    "clean_success": "green",
    "dangerous_success": "yellow",
    "clean_failure": "blue",
    "destructive_failure": "red",
    INFRA: "magenta",
    ENV_INVALID: "magenta",  # faults (issue 14): a fault did not take / vanished
}


@dataclass
class CampaignResult:
    """What :func:`run_campaign` did.

    Attributes:
        out_dir: the results folder.
        records: every record in ``runs.jsonl`` after the loop (earlier ones included on resume).
        ran: records of the runs executed by this call.
        skipped: run ids already present (resume).
        interrupted: Ctrl-C stopped the loop (finished runs are kept).
        report: path of ``summary.md``.
        infra: the records of ``records`` that are infrastructure errors (rerun by ``--resume``).
    """

    out_dir: Path
    records: list[RunRecord] = field(default_factory=list)
    ran: list[RunRecord] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    interrupted: bool = False
    report: Path | None = None
    html_report: Path | None = None  # report.html (issue 14 §4); None if it could not be written

    @property
    def infra(self) -> list[RunRecord]:
        return [r for r in self.records if r.label in INVALID_LABELS]


def describe_infra(records: list[RunRecord]) -> str:
    """One line about the infrastructure errors among ``records`` ('' if none): how many, per
    cell, and each distinct cause once, e.g. ``3 runs were infrastructure errors (a2: 2, a3t: 1):
    host fault during the run: ... [a2-onboard-site-s1, a2-onboard-site-s2]; ...``."""
    infra = [r for r in records if r.label in INVALID_LABELS]
    if not infra:
        return ""
    cells: dict[str, int] = {}
    causes: dict[str, list[str]] = {}
    for r in infra:
        cells[r.cell] = cells.get(r.cell, 0) + 1
        causes.setdefault(str(r.infra_error_reason), []).append(r.run_id)
    per_cell = ", ".join(f"{c}: {n}" for c, n in cells.items())
    why = "; ".join(f"{cause} [{', '.join(ids)}]" for cause, ids in causes.items())
    n = len(infra)
    return f"{n} run{'s were' if n != 1 else ' was an'} infrastructure error{'s' if n != 1 else ''} ({per_cell}): {why}"


def default_out_dir(spec: CampaignSpec, root: str | Path = "results") -> Path:
    """``<root>/<name>-<YYYYmmdd-HHMMSS>`` (a ``-2``, ``-3``... suffix if it exists)."""
    base = Path(root) / f"{spec.name}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"
    out, i = base, 1
    while out.exists():
        i += 1
        out = base.with_name(f"{base.name}-{i}")
    return out


def plan(spec: CampaignSpec) -> list[RunPoint]:
    """The runs in order (:meth:`CampaignSpec.points`): seed-major, then stress value, then
    cell, so an interrupted campaign stays paired across cells and stress values."""
    return spec.points()


def scenario_hashes(spec: CampaignSpec, deps: RunnerDeps) -> set[str]:
    """The hashes of every scenario ``spec`` uses (one per density of a generated one)."""
    out = set()
    for cell, point in design_points(spec):
        h = str(getattr(scenario_for(spec, deps, spec.density_of(cell, point)), "hash", "") or "")
        if h:
            out.add(h)
    return out


def write_generated(spec: CampaignSpec, deps: RunnerDeps, out_dir: Path) -> list[Path]:
    """Keep a copy of each scenario generated for ``spec`` in ``out_dir/scenarios/`` (one per
    density, named as the generated scenario is, e.g. ``default-s7-d4.yaml``, the name
    ``ani scenario generate`` gives it); nothing for a scenario file.
    Returns the paths written (an existing file is left as it is)."""
    if spec.manifest_path is None:
        return []
    written = []
    for density in dict.fromkeys(spec.density_of(c, p) for c, p in design_points(spec)):
        scenario = scenario_for(spec, deps, density)
        name = safe_component(str(getattr(scenario, "name", "") or "")) or (
            f"{Path(spec.manifest_path).stem}-s{spec.scenario_seed}" + (f"-d{density}" if density is not None else "")
        )
        path = out_dir / "scenarios" / f"{name}.yaml"
        if path.exists():
            continue
        text = deps.render_scenario(spec.manifest_path, seed=int(spec.scenario_seed or 0), density=density)
        if text is None:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _spec_dict(spec: CampaignSpec) -> dict[str, Any]:
    return json.loads(spec.model_dump_json())


def check_resume(spec: CampaignSpec, out_dir: Path) -> None:
    """Raise CampaignSpecError if ``out_dir`` is not a results folder of a compatible spec.

    Only ``variants`` may change (to extend a campaign with more seeds). The stored spec is
    read through the current :class:`CampaignSpec` first, so a field added since the folder was
    written (absent there) counts as its default, not as a difference.
    """
    saved_path = out_dir / SPEC_JSON
    if not out_dir.is_dir():
        raise CampaignSpecError(f"--resume {out_dir}: no such folder")
    if not saved_path.exists():
        raise CampaignSpecError(
            f"--resume {out_dir}: not a campaign results folder (no {SPEC_JSON})"
        )
    try:
        saved = json.loads(saved_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CampaignSpecError(f"--resume {out_dir}: {SPEC_JSON} is unreadable: {exc}") from None
    try:  # a folder written before a field existed: its default fills the gap
        saved = _spec_dict(CampaignSpec.model_validate(saved))
    except (ValidationError, ValueError, TypeError):
        pass  # compared as stored: the differing fields are named below
    now = _spec_dict(spec)
    differ = sorted(
        k
        for k in set(saved) | set(now)
        if k not in RESUME_MAY_CHANGE and saved.get(k) != now.get(k)
    )
    if differ:
        raise CampaignSpecError(
            f"--resume {out_dir}: the campaign file differs from the one this folder was started with "
            f"in: {', '.join(differ)} (start a new results folder instead)"
        )


def _write_spec(spec: CampaignSpec, out_dir: Path, source: str | Path | None) -> None:
    (out_dir / SPEC_JSON).write_text(
        json.dumps(_spec_dict(spec), indent=2) + "\n", encoding="utf-8"
    )
    if source is not None:
        try:
            src = Path(source)
            if src.exists() and src.resolve() != (out_dir / SPEC_COPY).resolve():
                shutil.copyfile(src, out_dir / SPEC_COPY)
        except OSError:
            pass


def resume_command(spec: CampaignSpec, source: str | Path | None, out: Path) -> str:
    """The command that continues ``spec`` in ``out``: ``ani campaign run FILE --resume OUT``,
    with ``--variants S`` (or ``--bound B``) when the run's S is not the file's own (it was given
    on the command line): without it ``--resume`` takes the file's S, and a campaign started
    with ``--variants 1`` would grow to the file's ``variants: 3``."""
    from ani.campaign.spec import load_spec

    src = source if source is not None else "<campaign file>"
    cmd = f"ani campaign run {src}"
    try:
        own = load_spec(source) if source is not None else None
    except Exception:  # noqa: BLE001 - the file moved or changed: the plain command
        own = None
    if own is not None and (own.variants, own.bound) != (spec.variants, spec.bound):
        cmd += f" --bound {spec.bound:g}" if spec.bound is not None else f" --variants {spec.variants}"
    return f"{cmd} --resume {out}"


def writable_folder(folder: Path, name: str = "--out") -> None:
    """Create ``folder`` (and parents) and check a file can be written in it.

    Raises:
        CampaignSpecError (a ConfigError): ``<name> <folder>: is a file, not a folder`` or
            ``<name> <folder>: cannot write there (<cause>)`` (no permission, a file in the path,
            a read-only file system).
    """
    probe = folder / ".ani-write-check"
    if folder.exists() and not folder.is_dir():
        raise CampaignSpecError(f"{name} {folder}: is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as exc:
        raise CampaignSpecError(
            f"{name} {folder}: cannot write there ({exc.strerror or exc})"
        ) from None


def run_campaign(
    spec: CampaignSpec,
    out_dir: str | Path | None = None,
    resume: bool = False,
    progress: bool = True,
    *,
    deps: RunnerDeps | None = None,
    source: str | Path | None = None,
    console: Console | None = None,
) -> CampaignResult:
    """Run every seed of ``spec`` in every cell, each on a fresh lab; then write ``summary.md``.

    Args:
        spec: the campaign.
        out_dir: results folder; None for :func:`default_out_dir`. With ``resume`` it must exist.
        resume: skip the run ids already in ``out_dir/runs.jsonl`` with a verdict; runs that
            ended as ``infra_error`` (the host or the harness failed) or ``environment_invalid``
            (a fault did not take or vanished) run again.
        progress: show a progress bar and one line per finished run (the summary table and the
            report path are printed either way).
        deps: factories (default: the real modules).
        source: the campaign file, copied into the folder and named in the resume hint.
        console: where to print (default: a rich console on stdout).

    Returns:
        :class:`CampaignResult`. Ctrl-C stops after taking the current lab down; the
        finished runs are kept, the summary is written and ``interrupted`` is True.

    Raises:
        CampaignSpecError: ``out_dir`` is not resumable (or already holds runs without
            ``resume``), or cannot be created or written (a file, no permission), naming
            ``--out`` -- before any lab starts.
        ConfigError: the scenario, task, a variant or the agent config is bad, or the agent's
            preflight check says no run could work (the LLM agent: its endpoint refuses
            connections, is not found or rejects the key) -- all checked before any lab
            starts; RegistryError: an adapter cannot be loaded.
        CapabilityMissing: a cell with runs to do has a level that cannot work on this machine
            (:func:`ani.campaign.runner.check_host`: one line naming the cells, what is missing
            and its package) -- before any lab starts.
    """
    from ani.campaign.report import print_summary, write_report

    deps = deps or RunnerDeps()
    console = console or Console()
    if resume:
        if out_dir is None:
            raise CampaignSpecError("resume needs the results folder")
        out = Path(out_dir)
        check_resume(spec, out)
    else:
        out = Path(out_dir) if out_dir is not None else default_out_dir(spec)
        if (out / "runs.jsonl").exists() and (out / "runs.jsonl").stat().st_size > 0:
            raise CampaignSpecError(f"{out} already holds runs; continue it with --resume {out}")
    validate(spec, deps)  # scenario, task, variants, agent, adapters: before any lab starts
    # a first look (scenario hashes, what is left to do); its warnings about bad lines are
    # given once, by RunStore and store.records() below
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        existing = read_runs(out) if resume else []
    hashes = scenario_hashes(spec, deps)
    stale = sorted({r.scenario_hash for r in existing if r.scenario_hash and r.scenario_hash not in hashes})
    if hashes and stale:
        now = ", ".join(f"{h[:12]}..." for h in sorted(hashes))
        raise CampaignSpecError(
            f"--resume {out}: the {'generated scenario' if spec.manifest else 'scenario file'} changed since these runs "
            f"(hash {stale[0][:12]}..., now {now}); paired runs would not be "
            "comparable: start a new results folder"
        )
    done_before = {r.run_id for r in existing if r.label not in INVALID_LABELS}
    todo_cells = [p.cell for p in plan(spec) if spec.run_id(p.cell, p.seed, p.stress) not in done_before]
    check_host(spec, deps, list(dict.fromkeys(todo_cells)))  # a level that cannot work here: before any lab
    if todo_cells:
        # one cheap check of the agent's endpoint: a dead one fails here, not in every run
        for warning in preflight(spec, deps):
            console.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)
    writable_folder(out, "--resume" if resume else "--out" if out_dir is not None else "results folder")
    results_dirs.register(out)  # hidden from every A0 shell, now and in later runs
    _write_spec(spec, out, source)
    write_generated(spec, deps, out)
    store = RunStore(out)  # moves a truncated last line aside
    existing = store.records()
    done = {r.run_id for r in existing if r.label not in INVALID_LABELS}
    result = CampaignResult(out_dir=out)
    todo = []
    for point in plan(spec):
        rid = spec.run_id(point.cell, point.seed, point.stress)
        (result.skipped.append(rid) if rid in done else todo.append(point))

    total = len(todo) + len(result.skipped)
    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[last]}"),
        console=console,
        disable=not progress,
        transient=False,
    )
    if progress and resume:
        again = sum(1 for r in existing if r.label in INVALID_LABELS)
        console.print(f"resuming {out}: {len(result.skipped)} of {total} runs already done"
                      + (f"; running again {again} that ended as infrastructure errors" if again else ""))
    try:
        with bar:
            task_id = bar.add_task(spec.name, total=total, completed=len(result.skipped), last="")
            for seed, cell, stress in todo:
                at = "".join(f" {k}={v}" for k, v in stress.items())
                bar.update(task_id, description=f"{spec.name}: {cell}{at} seed {seed}")
                rec = run_one(spec, cell, seed, out, deps=deps, stress=stress)
                store.append(rec)
                result.ran.append(rec)
                style = LABEL_STYLE.get(rec.label, "")
                last = (
                    f"{cell}{at} s{seed}: [{style}]{rec.label}[/{style}]"
                    if style
                    else f"{cell}{at} s{seed}: {rec.label}"
                )
                bar.update(task_id, advance=1, last=last)
                if progress:
                    extra = f" ({rec.infra_error_reason})" if rec.infra_error_reason else ""
                    extra += f" agent error: {rec.agent_error}" if rec.agent_error else ""
                    extra += f" [yellow]unattributed[/yellow]: {escape(rec.unattributed)}" if rec.unattributed else ""
                    from ani.campaign.observer_report import observer_line  # observer-run (issue 14 §2)

                    seen = observer_line(rec)
                    extra += f" [yellow]observer[/yellow]: {escape(seen)}" if seen else ""
                    bar.console.print(
                        f"  {rec.run_id}: [{style}]{rec.label}[/{style}] in {rec.wall_s:.1f}s{extra}"
                    )
    except KeyboardInterrupt:
        result.interrupted = True
    except BaseException:
        write_report(out)  # keep the report of what finished, then surface the harness fault
        raise
    result.records = store.records()
    result.report = write_report(out)
    print_summary(out, console=console)
    console.print(f"report: {result.report}", soft_wrap=True)
    again = resume_command(spec, source, out)
    if result.infra and not result.interrupted:
        console.print(
            f"[magenta]infrastructure errors[/magenta]: {escape(describe_infra(result.records))}; "
            f"fix the cause (see 'ani doctor'), then rerun them with: {again}",
            soft_wrap=True,
        )
    if result.interrupted:
        console.print(
            f"[yellow]interrupted[/yellow]: {len(result.ran)} run(s) finished in this session and kept in {out}; "
            f"resume with: {again}",
            soft_wrap=True,  # one line, so the command can be copied
        )
    # --- HTML report (issue 14 §4, report-html): beside summary.md, its path the last line ---
    result.html_report = write_html_or_warn(out, console)
    return result


def write_html_or_warn(out: Path, console: Console) -> Path | None:
    """Write ``out/report.html`` and print its path; a failure to write it is a warning naming
    the command that retries it (the runs and summary.md are kept either way). Returns its path
    (None when it was not written)."""
    from ani.campaign.html_report import write_html_report

    try:
        page = write_html_report(out)
    except Exception as exc:  # noqa: BLE001 - the campaign's results stand without the page
        console.print(
            f"[yellow]warning:[/yellow] report.html not written ({type(exc).__name__}: "
            f"{escape(str(exc))}); retry with: ani campaign report {out} --html",
            soft_wrap=True,
        )
        return None
    console.print(f"html report: {page}", soft_wrap=True)
    return page
