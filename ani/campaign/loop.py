# size: the campaign loop and its results folder (resume, lock, signals, provenance, summary) keep one folder's invariants
"""The campaign loop: every seed in every cell (paired), a fresh lab per run, resumable.

Results folder (default ``results/<name>-<YYYYmmdd-HHMMSS>/``)::

    campaign.yaml        verbatim copy of the campaign file (when run from a file)
    spec.json            the resolved spec (absolute paths), checked on --resume, which takes
                         its S (variants / bound) unless --variants or --bound is given
    .ani-lock            flock'd by the process writing the folder (one at a time; the
                         kernel releases it when that process dies, kill -9 included)
    provenance.json      what produced the runs, one entry per session (a --resume adds one): ani-sdk
                         version and git commit, FRR, kernel and Python versions, each cell's
                         agent kind, model and endpoint host (ani.campaign.provenance)
    plan.jsonl           one RunPlan per run (ani.campaign.plan), written before the first run;
                         --resume runs what it says, ``ani campaign rerun`` one of them
    runs.jsonl           one RunRecord per finished run, appended + fsynced as it ends
                         (--resume runs again what is missing there or ended as infra_error or
                         environment_invalid)
    scenarios/           the generated scenario files of a campaign with a manifest, one per
                         density (``default-s7-d4.yaml``; ``ani lab up`` takes them)
    trajectories/        one JSONL trajectory per run
    summary.md           written after the loop (also after Ctrl-C, SIGTERM, SIGHUP)
    report.html          the report with plots, written after summary.md (ani.campaign.html_report)
"""

from __future__ import annotations

import json
import shutil
import signal
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape

from ani.campaign.results import ENV_INVALID, INFRA, INVALID_LABELS, RunRecord, RunStore, read_runs
from ani.campaign.runner import (
    RunnerDeps,
    check_host,
    design_points,
    preflight,
    scenario_for,
    validate,
)
from ani.campaign.plan import RunPlan
from ani.campaign.spec import CampaignSpec, RunPoint, safe_component
from ani.console import FullWidthConsole
from ani.errors import CampaignSpecError, ConfigError
from ani.host import results_dirs, vtysh_cache

SPEC_JSON = "spec.json"
SPEC_COPY = "campaign.yaml"
#: fields allowed to differ between a results folder's spec and the spec given on --resume (more seeds)
RESUME_MAY_CHANGE = {"variants", "bound", "reference"}  # campaign-factors: --bound sets variants; the
# report's reference cell (issue 26 §3) changes no run

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
    #: the signal that stopped the loop (SIGINT for Ctrl-C, SIGTERM, SIGHUP); None: not stopped
    stopped_by: int | None = None

    @property
    def infra(self) -> list[RunRecord]:
        return [r for r in self.records if r.label in INVALID_LABELS]


class CampaignInterrupted(KeyboardInterrupt):
    """A Ctrl-C that escaped the campaign loop's own handling after the results folder was taken
    (a second Ctrl-C while the loop handled the first, or one while the summary was written):
    :func:`run_campaign` raises it in place of the bare KeyboardInterrupt, with what the
    interrupted message needs (issue 23 §3: the message counted none where runs.jsonl held 2).

    Attributes:
        out: the results folder.
        ran: the records this session stored in ``runs.jsonl`` (read back from the file).
        again: the command that resumes the campaign.
    """

    def __init__(self, out: Path, ran: list[RunRecord], again: str) -> None:
        super().__init__(str(out))
        self.out, self.ran, self.again = out, ran, again

    def message(self) -> str:
        """One line: ``interrupted: N runs finished in this session and kept in OUT; resume
        with: CMD`` (plain text, no markup)."""
        return interrupted_line("", len(self.ran), self.out, self.again)


def interrupted_line(how: str, n: int, out: Path, again: str) -> str:
    """The interrupted-campaign line (plain text): ``how`` names a signal other than Ctrl-C
    (``SIGTERM``) or is ''; ``n`` is the number of runs this session stored."""
    return (
        f"interrupted{f' ({how})' if how else ''}: {n} run{'' if n == 1 else 's'} "
        f"finished in this session and kept in {out}; resume with: {again}"
    )


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
        path = out_dir / "scenarios" / f"{generated_name(spec, scenario_for(spec, deps, density), density)}.yaml"
        if path.exists():
            continue
        text = deps.render_scenario(spec.manifest_path, seed=int(spec.scenario_seed or 0), density=density)
        if text is None:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def generated_name(spec: CampaignSpec, scenario: Any, density: int | None) -> str:
    """The file name (without ``.yaml``) of a generated scenario's copy: its own name
    (``default-s7-d4``), else ``<manifest stem>-s<seed>[-d<density>]``."""
    return safe_component(str(getattr(scenario, "name", "") or "")) or (
        f"{Path(str(spec.manifest_path)).stem}-s{spec.scenario_seed}" + (f"-d{density}" if density is not None else ""))


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
    if isinstance(saved.get("variants"), int) and spec.variants < saved["variants"]:
        raise CampaignSpecError(
            f"--resume {out_dir}: this folder's campaign has S = {saved['variants']} runs per cell; "
            f"--resume can keep S (give neither --variants nor --bound) or grow it, not shrink it "
            f"to {spec.variants} (start a new results folder instead)"
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


def _write_provenance(spec: CampaignSpec, out: Path, console: Console) -> None:
    """Add this session to ``provenance.json`` (:func:`ani.campaign.provenance.write_provenance`):
    versions, git commit and each cell's agent identity; a folder that refuses it costs a warning,
    not the campaign (every record carries its own provenance too)."""
    from ani.campaign.provenance import write_provenance

    try:
        write_provenance(out, {c.name: spec.agent_of(c) for c in spec.cells})
    except OSError as exc:
        console.print(f"[yellow]warning:[/yellow] provenance.json not written: {escape(str(exc))}", soft_wrap=True)


def resume_command(spec: CampaignSpec, source: str | Path | None, out: Path) -> str:
    """The command that continues ``spec`` in ``out``: ``ani campaign run FILE --resume OUT``.

    No ``--variants`` / ``--bound``: ``--resume`` takes S from the folder (:func:`folder_size`),
    so the command resumes exactly the campaign that was started, whatever S it was given."""
    del spec  # S comes from the folder
    src = source if source is not None else "<campaign file>"
    return f"ani campaign run {src} --resume {out}"


def folder_size(out_dir: str | Path) -> tuple[int | None, float | None]:
    """``(variants, bound)`` of the campaign a results folder was started with (its
    ``spec.json``): ``(None, bound)`` when S came from a damage bound (``--bound``, or the
    file's ``bound:``), else ``(variants, None)``; ``(None, None)`` when the folder has no
    readable ``spec.json`` (:func:`check_resume` then says what is wrong)."""
    try:
        saved = json.loads((Path(out_dir) / SPEC_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(saved, dict):
        return None, None
    bound, variants = saved.get("bound"), saved.get("variants")
    if isinstance(bound, (int, float)) and not isinstance(bound, bool):
        return None, float(bound)
    if isinstance(variants, int) and not isinstance(variants, bool):
        return variants, None
    return None, None


def load_for_run(
    file: str | Path, resume: str | Path | None = None, variants: int | None = None, bound: float | None = None,
    agent_override: dict[str, Any] | None = None, cells: list[str] | None = None,
) -> CampaignSpec:
    """The campaign ``ani campaign run FILE`` runs: FILE with ``--variants`` / ``--bound`` and
    the agent override (``--agent-config`` / ``--agent-option``,
    :class:`ani.campaign.spec.AgentOverride`) applied; with ``--resume DIR`` and neither of
    them, S is the folder's (the ``--variants`` or ``--bound`` it was started with,
    :func:`folder_size`), never the file's: a campaign started with ``--variants 1`` and
    resumed stays at 1 run per cell. Growing it takes an explicit ``--variants`` (or
    ``--bound``). Likewise the agent: ``--resume`` without agent options runs the folder's
    (:func:`folder_agent_override`); with them, they must be the folder's. And the cells
    (``--cell``, :func:`ani.campaign.spec.select_cells`): ``--resume`` runs the folder's
    (:func:`resumed_cells`).

    Raises:
        CampaignSpecError: the file (as :func:`ani.campaign.spec.load_spec`), a ``--cell`` that
            is not one of its cells; ``--resume`` with agent options or cells other than the
            folder's (naming both).
    """
    from ani.campaign.spec import load_spec

    if resume is not None and variants is None and bound is None:
        variants, bound = folder_size(resume)
    if resume is not None:
        agent_override = resumed_agent_override(Path(resume), agent_override)
        cells = resumed_cells(Path(resume), cells)
    return load_spec(file, variants=variants, bound=bound, agent_override=agent_override, cells=cells)


def resumed_cells(out_dir: Path, given: list[str] | None) -> list[str] | None:
    """The cells ``--resume out_dir`` runs: the folder's ``--cell`` filter (its ``spec.json``'s
    ``cell_filter``; None: every cell) when no ``--cell`` is given, else ``given`` if it names
    the same cells (in any order). A folder keeps the cells it was started with: its plans,
    summary and pairing are those cells'.

    Raises:
        CampaignSpecError: ``given`` names other cells than the folder's, naming both; a
            ``cell_filter`` in ``spec.json`` that is not a list of names.
    """
    try:
        saved = json.loads((out_dir / SPEC_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return given  # check_resume says what is wrong with the folder
    found = saved.get("cell_filter") if isinstance(saved, dict) else None
    if found is not None and not (isinstance(found, list) and all(isinstance(n, str) for n in found)):
        raise CampaignSpecError(f"--resume {out_dir}: {SPEC_JSON}: cell_filter is not a list of cell names "
                                "(edited by hand?); start a new results folder")
    if not given:
        return found
    if found is None or set(found) != set(given):
        from ani.names import shown

        was = " ".join(f"--cell {shown(n)}" for n in found) if found else "every cell (no --cell)"
        raise CampaignSpecError(
            f"--resume {out_dir}: this folder's campaign was started with {was}, not "
            f"{' '.join('--cell ' + shown(n) for n in given)}; --resume runs the folder's cells (give the same "
            "--cell options, or none), or start a new results folder for other cells")
    return given


def folder_agent_override(out_dir: str | Path) -> dict[str, Any] | None:
    """The agent override (``--agent-config`` / ``--agent-option``) a results folder was started
    with (its ``spec.json``), or None (none given, or no readable ``spec.json``).

    Raises:
        CampaignSpecError: ``spec.json`` holds an ``agent_override`` that is not one."""
    try:
        saved = json.loads((Path(out_dir) / SPEC_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = saved.get("agent_override") if isinstance(saved, dict) else None
    if found is None:
        return None
    from ani.campaign.spec import AgentOverride

    try:
        return AgentOverride.model_validate(found).model_dump()
    except (ValidationError, ValueError, TypeError):
        raise CampaignSpecError(f"--resume {out_dir}: {SPEC_JSON}: agent_override is not an agent override "
                                "(edited by hand?); start a new results folder") from None


def resumed_agent_override(out_dir: Path, given: dict[str, Any] | None) -> dict[str, Any] | None:
    """The agent override ``--resume out_dir`` runs with: the folder's when none is given, else
    ``given`` if it is the folder's (the same block and options, however spelt).

    Raises:
        CampaignSpecError: ``given`` differs from the folder's (a resumed folder's runs would
            not all have the same agent), naming both.
    """
    from ani.campaign.spec import AgentOverride

    saved = folder_agent_override(out_dir)
    if given is None:
        return saved
    old = AgentOverride.model_validate(saved) if saved is not None else None
    new = AgentOverride.model_validate(given)
    if old is None or old.model_dump() != new.model_dump():
        was = old.describe() if old is not None else "no --agent-config / --agent-option"
        raise CampaignSpecError(
            f"--resume {out_dir}: this folder's campaign was started with {was}, not {new.describe()}; "
            "--resume runs the folder's agent (give the same agent options, or none), or start a new "
            "results folder for another agent")
    return given


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
    executor: Any = None,
    lab_prefix: str | None = None,
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
        executor: what runs the plans (:mod:`ani.campaign.executors`; default: this process,
            one run at a time, with ``deps``); closed at the end.
        lab_prefix: what each run's lab carries (``ani lab status``); None: none.

    Returns:
        :class:`CampaignResult`. Ctrl-C, SIGTERM and SIGHUP (in the main thread; a signal
        that was ignored stays ignored) stop after taking the current lab down; the finished
        runs are kept, the summary is written, the resume command printed, ``interrupted`` is
        True and ``stopped_by`` names the signal. The folder is locked while the loop writes it
        (:func:`ani.host.results_dirs.lock`).

    Raises:
        CampaignSpecError: ``out_dir`` is not resumable (or already holds runs without
            ``resume``), or cannot be created or written (a file, no permission), naming
            ``--out`` -- before any lab starts.
        FolderInUse (a ConfigError): another process (a second ``ani campaign run``) holds the
            folder's lock; the message and ``holder_pid`` name its PID -- before any lab starts.
        ConfigError: the scenario, task, a variant or the agent config is bad, or the agent's
            preflight check says no run could work (the LLM agent: its endpoint refuses
            connections, is not found or rejects the key) -- all checked before any lab
            starts; RegistryError: an adapter cannot be loaded.
        CapabilityMissing: a cell with runs to do has a level that cannot work on this machine
            (:func:`ani.campaign.runner.check_host`: one line naming the cells, what is missing
            and its package) -- before any lab starts.
        CampaignInterrupted (a KeyboardInterrupt): a Ctrl-C escaped the loop's own handling
            (a second one, or one while the summary was written); it carries the records this
            session stored and the resume command.
    """
    deps = deps or RunnerDeps()
    console = console or FullWidthConsole()
    out = _results_folder(spec, out_dir, resume)
    validate(spec, deps)  # scenario, task, variants, agent, adapters: before any lab starts
    _check_before_labs(spec, out, resume, deps, console)
    name = "--resume" if resume else "--out" if out_dir is not None else "results folder"
    writable_folder(out, name)
    with results_dirs.lock(out, name):  # one coordinator per folder (FolderInUse names the other)
        if not resume and (out / "runs.jsonl").exists() and (out / "runs.jsonl").stat().st_size > 0:
            raise CampaignSpecError(f"{out} already holds runs; continue it with --resume {out}")
        results_dirs.register(out)  # hidden from every A0 shell, now and in later runs
        _write_spec(spec, out, source)
        _write_provenance(spec, out, console)  # issue 26 §3
        write_generated(spec, deps, out)
        session = RunStore(out)  # where this session's records begin (a cut-short line moved aside)
        try:
            # the campaign's labs share what vtysh printed (ani.host.vtysh_cache)
            with _stop_signals_as_ctrl_c() as stopped_by, vtysh_cache.scoped():
                result = _run_loop(spec, out, resume, progress, deps, console, executor, lab_prefix)
            result.stopped_by = stopped_by[0] if stopped_by else (signal.SIGINT if result.interrupted else None)
            return _finish(spec, out, result, source, console)
        except KeyboardInterrupt:  # one that escaped the loop's handling: count what is stored
            raise CampaignInterrupted(out, session.appended(), resume_command(spec, source, out)) from None


def _results_folder(spec: CampaignSpec, out_dir: str | Path | None, resume: bool) -> Path:
    """The folder the campaign writes: ``out_dir`` resumable (``resume``), else ``out_dir`` (or
    :func:`default_out_dir`) holding no runs yet. Raises CampaignSpecError."""
    if resume:
        if out_dir is None:
            raise CampaignSpecError("resume needs the results folder")
        out = Path(out_dir)
        check_resume(spec, out)
    else:
        out = Path(out_dir) if out_dir is not None else default_out_dir(spec)
        if (out / "runs.jsonl").exists() and (out / "runs.jsonl").stat().st_size > 0:
            raise CampaignSpecError(f"{out} already holds runs; continue it with --resume {out}")
    return out


def _check_before_labs(spec: CampaignSpec, out: Path, resume: bool, deps: RunnerDeps, console: Console) -> None:
    """What is checked before any lab starts, after the spec's validation: a resumed folder's
    runs were made on the scenario as it is now (CampaignSpecError), the levels of the cells
    with runs left to do work here (CapabilityMissing), and the agent's endpoint answers (a
    warning printed, or the preflight's ConfigError)."""
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


def _run_loop(
    spec: CampaignSpec, out: Path, resume: bool, progress: bool, deps: RunnerDeps, console: Console,
    executor: Any = None, lab_prefix: str | None = None,
) -> CampaignResult:
    """Plan (``plan.jsonl``), then hand what ``out`` is missing to ``executor`` (default: this
    process, one run at a time); the coordinator appends each record as it ends (the folder is
    locked). Ctrl-C (or SIGTERM / SIGHUP, :func:`_stop_signals_as_ctrl_c`) sets ``interrupted``;
    ``ran`` is what this call stored in ``runs.jsonl``, read back from the file, so a record
    whose write was interrupted after it landed is counted."""
    from ani.campaign.coordinator import Coordinator, make_executor
    from ani.campaign.report import write_report

    store = RunStore(out)  # moves a truncated last line aside
    existing = store.records()
    done = {r.run_id for r in existing if r.label not in INVALID_LABELS}
    result = CampaignResult(out_dir=out)
    plans = planned(spec, deps, out, lab_prefix)
    todo = []
    for p in plans:
        (result.skipped.append(p.run_id) if p.run_id in done else todo.append(p))
    if progress and resume:
        again = sum(1 for r in existing if r.label in INVALID_LABELS)
        console.print(f"resuming {out}: {len(result.skipped)} of {len(plans)} runs already done"
                      + (f"; running again {again} that ended as infrastructure errors" if again else ""))
    executor = executor or make_executor(deps=deps)
    coordinator = Coordinator(store, console, name=spec.name, total=len(plans), done=len(result.skipped),
                              progress=progress, line=_run_line, last=lambda r: _last(r, r.cell, _at(r.stress)))
    try:
        with coordinator:
            executor.run(todo, out, coordinator)
    except KeyboardInterrupt:
        result.interrupted = True
    except BaseException:
        write_report(out)  # keep the report of what finished, then surface the harness fault
        raise
    finally:
        executor.close()
    result.records = store.records()
    result.ran = store.appended()  # what this call stored (the file says)
    return result


def planned(spec: CampaignSpec, deps: RunnerDeps, out: Path, lab_prefix: str | None = None) -> list[RunPlan]:
    """The campaign's plans, written to ``out/plan.jsonl`` before the first run. A folder that
    has one keeps its plans (``--resume`` runs what they say): each must be the plan the
    campaign file makes for its run id (a hand-edited or foreign plan would put a run in the
    wrong cell or break the pairing); run ids it lacks (a grown S) are planned now and added.
    The lab prefix: ``lab_prefix`` if given, else the one the folder's plans carry, else the
    campaign's name.

    Raises:
        CampaignSpecError: ``plan.jsonl`` has a malformed line, a run id twice, or a plan that
            differs from the campaign file's (naming the run and the fields); a scenario copy
            the plans name is missing or changed since planning. Nothing is run or written.
    """
    from ani.campaign.plan import PLAN_FILE, read_plans, write_plans
    from ani.campaign.planning import plan_campaign

    fresh = plan_campaign(spec, deps, out, lab_prefix=lab_prefix or spec.name)
    if not (out / PLAN_FILE).is_file():
        check_scenario_copies(fresh, out, deps)
        write_plans(out, fresh)
        return fresh
    kept = kept_plans(out, read_plans(out))
    prefix = lab_prefix or next((p.lab_prefix for p in kept.values() if p.lab_prefix), None) or spec.name
    plans = [p.model_copy(update={"lab_prefix": prefix}) for p in fresh]
    for p in plans:
        if p.run_id in kept:
            _same_plan(out, kept[p.run_id], p)
    check_scenario_copies(plans, out, deps)
    if any(p.run_id not in kept for p in plans) or lab_prefix:
        ids = {p.run_id for p in plans}
        write_plans(out, [*plans, *(p for rid, p in kept.items() if rid not in ids)])
    return plans


def kept_plans(out: Path, plans: list[RunPlan]) -> dict[str, RunPlan]:
    """``{run id: plan}`` of a folder's plans. Raises CampaignSpecError: a run id twice."""
    kept: dict[str, RunPlan] = {}
    for p in plans:
        if p.run_id in kept:
            raise CampaignSpecError(f"{out}/plan.jsonl: run {p.run_id} is planned twice (edited by hand?); "
                                    "start a new results folder")
        kept[p.run_id] = p
    return kept


def _same_plan(out: Path, kept: RunPlan, fresh: RunPlan) -> None:
    """Raise CampaignSpecError naming the fields where the folder's plan of a run differs from
    the campaign file's (the lab prefix and the plug-in folders aside: where the agent's module
    is found does not change what runs)."""
    skip = {"lab_prefix", "agent_folders"}
    a, b = kept.model_dump(exclude=skip), fresh.model_dump(exclude=skip)
    diff = [k for k in b if a.get(k) != b.get(k)]
    if diff:
        raise CampaignSpecError(
            f"{out}/plan.jsonl: the plan of run {fresh.run_id} differs from what the campaign file plans "
            f"({', '.join(diff)}): paired runs would not be comparable; start a new results folder")


def check_scenario_copies(plans: list[RunPlan], out: Path, deps: RunnerDeps) -> None:
    """Each scenario file the plans name in the folder exists and has the plans' hash.
    Raises CampaignSpecError naming the file."""
    from ani.campaign.execute import scenario_of

    seen: set[tuple[str | None, str | None]] = set()
    for p in plans:
        key = (p.scenario.file, p.scenario.hash)
        if p.scenario.file is None or key in seen:
            continue
        seen.add(key)
        try:
            scenario_of(p, out, deps)
        except ConfigError as exc:
            raise CampaignSpecError(f"{out}: {exc}; start a new results folder") from None


def _at(stress: dict[str, Any]) -> str:
    return "".join(f" {k}={v}" for k, v in stress.items())


def _last(rec: RunRecord, cell: str, at: str) -> str:
    """The progress bar's ``last`` field: ``a1 s2: clean_success`` (styled)."""
    style = LABEL_STYLE.get(rec.label, "")
    return f"{cell}{at} s{rec.seed}: [{style}]{rec.label}[/{style}]" if style else f"{cell}{at} s{rec.seed}: {rec.label}"


def _run_line(rec: RunRecord) -> str:
    """One finished run's line: ``  <run id>: <label> in 12.3s (<reason>) ...`` (markup)."""
    from ani.campaign.observer_report import observer_line  # observer-run (issue 14 §2)

    style = LABEL_STYLE.get(rec.label, "")
    extra = f" ({rec.infra_error_reason})" if rec.infra_error_reason else ""
    extra += f" agent error: {rec.agent_error}" if rec.agent_error else ""
    extra += f" [yellow]unattributed[/yellow]: {escape(rec.unattributed)}" if rec.unattributed else ""
    seen = observer_line(rec)
    extra += f" [yellow]observer[/yellow]: {escape(seen)}" if seen else ""
    return f"  {rec.run_id}: [{style}]{rec.label}[/{style}] in {rec.wall_s:.1f}s{extra}"


#: the signals that stop a campaign as Ctrl-C does (the current lab down, the summary, the
#: resume command); a second one of them acts as it would without the campaign (ani.lab.cleanup)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextmanager
def _stop_signals_as_ctrl_c() -> Iterator[list[int]]:
    """Within the block, SIGTERM and SIGHUP act as Ctrl-C: the current SIGINT handler is called
    (Python's raises KeyboardInterrupt; the runner's teardown holds it until the lab is down).
    Yields a list that gets the signal's number. The first such signal puts the handlers that
    were there before back, so a second one does what it did before (remove the labs, die of
    it). A signal that was ignored (``nohup``) stays ignored; nothing outside the main thread."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return
    from ani.lab.cleanup import install_signal_handlers

    install_signal_handlers()  # the labs' handlers first (idempotent), so ours sit above them
    before: dict[int, Any] = {}

    def restore() -> None:
        for sig, handler in before.items():
            signal.signal(sig, handler)
        before.clear()

    def on_stop(signum: int, frame: Any) -> None:
        got.append(signum)
        restore()
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored or default: still stop as Ctrl-C would
            raise KeyboardInterrupt

    for sig in STOP_SIGNALS:
        previous = signal.getsignal(sig)
        if previous == signal.SIG_IGN:
            continue
        before[sig] = previous
        signal.signal(sig, on_stop)
    try:
        yield got
    finally:
        restore()


def _finish(
    spec: CampaignSpec, out: Path, result: CampaignResult, source: str | Path | None, console: Console
) -> CampaignResult:
    """Write summary.md and report.html, print the summary and what to do next."""
    from ani.campaign.report import print_summary, write_report

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
        how = signal.Signals(result.stopped_by).name if result.stopped_by not in (None, signal.SIGINT) else ""
        line = escape(interrupted_line(how, len(result.ran), out, again))
        console.print(
            line.replace("interrupted", "[yellow]interrupted[/yellow]", 1),
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
