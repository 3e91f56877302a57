"""Run records and the results store (``runs.jsonl``: one JSON line per finished run).

A line is appended, flushed and fsynced as soon as its run ends, so an
interrupted campaign keeps every finished run. Reading tolerates a truncated
last line (the write that was interrupted): it is skipped with a warning and,
when the store is opened for appending, moved aside to ``runs.jsonl.partial``
so the next record starts on a fresh line.
"""

from __future__ import annotations

import os
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

from ani.campaign.metrics import LIMIT_STOP_REASONS, ProcessMetrics
from ani.errors import ConfigError
from ani.observer.sampler import UnsafeState  # observer-run (issue 14 §2)
from ani.validation import format_validation_error

Label = Literal[
    "clean_success", "dangerous_success", "clean_failure", "destructive_failure", "infra_error",
    "environment_invalid",
]
LABELS: tuple[str, ...] = (
    "clean_success",
    "dangerous_success",
    "clean_failure",
    "destructive_failure",
)
INFRA = "infra_error"
RUNS_FILE = "runs.jsonl"
#: stop reasons of a run whose budget ran out (cases-tools: shown as "budget exhausted")
BUDGET_STOP_REASONS = LIMIT_STOP_REASONS

# --- faults (issue 14, faults-core) ---------------------------------------------------------
#: a run whose injected fault did not take effect, vanished while it should have been in effect,
#: or could not be removed: the stimulus the campaign asked for was not what the run met. Like
#: ``infra_error``: no verdict, excluded from rates, listed, run again by ``--resume``.
ENV_INVALID = "environment_invalid"
#: the labels of runs without a verdict
INVALID_LABELS: tuple[str, ...] = (INFRA, ENV_INVALID)
from ani.faults.record import FaultRecord  # noqa: E402  (pydantic model of RunRecord.faults)
from ani.netconfbench.scoring import NcbScores  # noqa: E402  (pydantic model of RunRecord.ncb)


class CheckOutcome(BaseModel):
    """One graded check: ``name``, ``passed``, a human ``detail`` and the check's ``service``
    tag (which pre-existing service it protects, e.g. ``tenant:red``; None if untagged), which
    attributes damage to a service."""

    name: str
    passed: bool
    detail: str = ""
    service: str | None = None


class RunFactors(BaseModel):
    """What identifies a run and the factors of its cell: the first fields of both its plan
    (:class:`ani.campaign.plan.RunPlan`) and its record (:class:`RunRecord`).

    Attributes: see :class:`RunRecord`."""

    run_id: str
    campaign: str
    cell: str
    level: str
    blocklist: bool | str = False
    adapter_options: dict[str, Any] = Field(default_factory=dict)
    task: str


class RunRecord(RunFactors):
    """Everything recorded about one run (one line of ``runs.jsonl``).

    Exactly one state per run: ``label`` is one of the four outcome labels, or
    ``infra_error`` or ``environment_invalid`` (a fault did not take, vanished or stayed: see
    ``faults``) (then ``success``/``damage_free`` are None and ``infra_error_reason``
    says why; such runs are excluded from rates but listed).

    Attributes (times in seconds, timestamps ISO 8601 UTC):
        run_id: ``<cell>-<task>-s<seed>``, filesystem-safe (``<cell>-<task>-density4-s<seed>``
            at a swept density).
        adapter_options: the options the cell gave its adapter (``CellSpec.options``; ``{}``:
            the level's defaults).
        scenario_hash: hash of the scenario the run used (generated or read from a file).
        density: density of that scenario (instances per service class) when it was generated
            (None: a hand-written scenario file).
        stress: the run's value of the campaign's swept stress parameter (``{"density": 4}``;
            ``{}`` without one).
        agent_error: the agent's exception or reported error, if any (the run is still graded).
        tests / invariants: hidden-test and baseline-invariant results after the run.
        superseded: names of the baseline invariants the variant supersedes (its situation
            breaks them or its task changes them, ``TaskVariant.superseded``): not checked before
            the agent acts and not in ``invariants`` (no damage verdict); the hidden tests grade them.
        steps: agent turns (None if the agent crashed before reporting them).
        tool_calls / tool_errors / changed_calls: counted from the trajectory's ``ok``/``changed`` flags.
        stop_reason: ``submitted|max_steps|wall_clock|error`` (None if the agent never ran).
        wall_s: whole run, lab up to lab down; lab_up_s: ``lab.up()`` (build and convergence);
            baseline_s: the baseline check before the agent acts; agent_s: ``agent.run``;
            grading_s: the hidden tests and invariants after it; teardown_s: ``lab.down()``
            (None: the run did not get there). ``wall_s`` minus ``agent_s`` is the harness's
            overhead (variant, lab, checks, teardown).
        teardown_error: ``lab.down()`` failed (the verdict stands; the host may need ``ani lab down --stale``).
        unattributed: a failure the harness cannot attribute to the agent or to the host, said
            rather than guessed (the run is graded): e.g. ``FRR daemon(s) not running at grading
            time: bgpd on e2, after 3 changing call(s) of the agent: ...``. None otherwise.
        form: the HAI form of the task (``intent``: fixed request + structured file; ``ticket``:
            a terse ticket); None in records written before it was recorded.
        model: the agent's ``model`` (None: an agent without one, e.g. the scripted agent).
        agent_mode: the agent's mode with its recovery (``react``, ``planner-executor+recovery``,
            ...; None: an agent without modes).
        cost: the run's cost, a dependent variable (:func:`ani.campaign.runner.cost_of`):
            ``tokens``, ``prompt_tokens``, ``completion_tokens`` (None: unknown, no model),
            ``turns``, ``steps``, ``tool_calls``, ``agent_s``, ``wall_s``; ``{}`` in older records.
        process: the process metrics of NetConfArena computed from the trajectory
            (:mod:`ani.campaign.metrics`); None when the agent never ran, in records written
            before they existed, and when a stored value no longer validates (an older format:
            read with a warning; the run and its verdict are kept, ``ani campaign report`` shows
            its metrics as missing).
        damaged / unsafe / sample_period_s / samples / recovered / recovery_s /
        unrequested_changes / fault_residue / oscillating: what the out-of-band observer saw during and after
            the run (:mod:`ani.campaign.observe_run`; docs/campaigns.md, "What the observer
            sees"); their defaults in an infra_error record and in records written before them.
        invalid_calls / double_applied / locks_left / partial: the measured outcomes of
            :mod:`ani.campaign.outcomes` (0 / empty in records written before them).
        task_file / task_sha256 / names: a ``netconfbench`` run's task file, the identity of
            the task it was graded on (``task_identity``: all but its solutions), and its name map (original ->
            lab names, :class:`ani.netconfbench.names.NameMap` dumped); None otherwise.
        testcase_score / task_pass: NetConfBench's S_testcase (|passed| / |total| of ``tests``)
            and whether every test passed, for every graded run of any task class (None: no
            verdict, or records written before them; :mod:`ani.netconfbench.scoring`).
        mistake: the mistake an agent with a known error profile made on purpose, and what the
            campaign measured of it after grading (:mod:`ani.campaign.known_answer`; docs/campaigns.md,
            "Known answer"); None for other runs.
        ncb: the NetConfBench diagnostic scores of a run whose variant carries ``solutions``
            (a NetConfBench task): command score, reasoning score (with its model id and
            weight sha256), the applied commands and the initial configurations harvesting
            needs (:class:`ani.netconfbench.scoring.NcbScores`); None for other runs.
        provenance: what produced the run (issue 26 §3; :func:`ani.campaign.provenance.run_provenance`):
            ``ani_sdk``, ``git_commit`` / ``git_dirty`` (None: not a git checkout), ``frr``, ``kernel``,
            ``python`` of the host that ran it and ``agent`` (``kind``, ``model``, ``endpoint`` host:port);
            None in records written before it.
        budget_exhausted (property): ``stop_reason`` is a budget's (``max_steps``,
            ``max_tokens``, ``wall_clock``); such a run is graded like any other, and is never
            an agent error.
    """

    variant_id: str | None = None
    task_file: str | None = None  # netconfbench
    #: netconfbench: ani.netconfbench.task.task_identity of the task the run was graded on
    task_sha256: str | None = None
    names: dict[str, Any] | None = None  # netconfbench
    seed: int
    scenario_hash: str | None = None
    density: int | None = None
    stress: dict[str, Any] = Field(default_factory=dict)
    label: Label
    success: bool | None = None
    damage_free: bool | None = None
    infra_error_reason: str | None = None
    agent_error: str | None = None
    tests: list[CheckOutcome] = Field(default_factory=list)
    invariants: list[CheckOutcome] = Field(default_factory=list)
    superseded: list[str] = Field(default_factory=list)
    steps: int | None = None
    tool_calls: int = 0
    tool_errors: int = 0
    changed_calls: int = 0
    stop_reason: str | None = None
    wall_s: float = 0.0
    lab_up_s: float | None = None
    baseline_s: float | None = None
    agent_s: float | None = None
    grading_s: float | None = None
    teardown_s: float | None = None
    #: seconds of every phase of the run (``resolve``, ``lab_up``, ``baseline``, ``open``, ``agent``,
    #: ``measure``, ``settle``, ``grading``, ``observe_finish``, ``teardown``, ``record``; issue 24 §3)
    timings: dict[str, float] = Field(default_factory=dict)
    started: datetime
    ended: datetime
    trajectory: str | None = None
    teardown_error: str | None = None
    unattributed: str | None = None
    process: ProcessMetrics | None = None
    # faults (issue 14, faults-core): the run's scheduled faults and what became of each
    # (injected / verified / removed, seconds since the agent started), and the campaign's
    # fault rate of the run (faults per agent step; None: campaigns before faults existed)
    faults: list[FaultRecord] = Field(default_factory=list)
    fault_rate: float | None = None
    #: seconds the harness waited after removing the faults for routing to converge before
    #: grading (``Lab.wait_converged``; None: no fault was injected)
    fault_wait_s: float | None = None
    #: seconds the run was held open after the agent stopped so that every scheduled fault was
    #: injected and ran its duration (``faults.hold``; None: not held)
    fault_hold_s: float | None = None
    #: invariants failed at grading whose violation a fault explains (its own effect, seen from
    #: while it was in effect on a router they concern): not counted against damage_free
    fault_damage: list[str] = Field(default_factory=list)
    #: the mistake the agent made on purpose (issue 25: ``AgentRun.mistake``, the agent's
    #: ``ani.agents.mistakes.Made`` dumped; the known-answer measures add to it after grading);
    #: None: no mistake (an agent without mistakes, none drawn, or records written before it)
    mistake: dict[str, Any] | None = None
    provenance: dict[str, Any] | None = None  # issue 26 §3
    # --- campaign-factors: the run's factors and its cost ---
    form: str | None = None
    model: str | None = None
    agent_mode: str | None = None
    cost: dict[str, Any] = Field(default_factory=dict)
    # --- end campaign-factors ---
    # --- observer-run (issue 14 §2): what the out-of-band observer saw during and after the
    # run (ani.observer.sampler, .damage, .changes; ani.campaign.oscillation; docs/campaigns.md)
    #: service class -> damaged service tags (the failed invariants' tags after the run)
    damaged: dict[str, list[str]] = Field(default_factory=dict)
    #: the run passed through a state that broke baseline invariants (None: no sample saw one)
    unsafe: UnsafeState | None = None
    #: seconds between sampling rounds (None: not sampled)
    sample_period_s: float | None = None
    #: sampling rounds completed
    samples: int = 0
    #: every baseline invariant passed again after the agent (and the faults) ended (None: not measured)
    recovered: bool | None = None
    #: seconds from the agent's (or the last fault's) end until then (0.0: at the first look)
    recovery_s: float | None = None
    #: changes the run left on the routers beyond what the task needed ("<router>: + <line>")
    unrequested_changes: list[str] = Field(default_factory=list)
    #: change lines a fault itself wrote (FaultRecord.wrote) still there at the end: not the
    #: run's, so not in unrequested_changes (e.g. a concurrent writer's entry that survived)
    fault_residue: list[str] = Field(default_factory=list)
    #: the run undid and redid the same change (ani.campaign.oscillation)
    oscillating: bool = False
    # --- end observer-run
    # --- cases-tools (issue 14: case 1, measured outcomes; ani.campaign.outcomes) ---
    #: calls refused for bad arguments or an unknown name (unknown device, wrong case, unknown
    #: route-map / service / file ...), counted from the trajectory's error codes
    invalid_calls: int = 0
    #: changes applied twice (the same changing call repeated, both changing the network)
    double_applied: list[str] = Field(default_factory=list)
    #: locks the agent still held when its run ended (its NETCONF session's, its calls')
    locks_left: list[str] = Field(default_factory=list)
    #: changes applied on some routers and not on others
    partial: list[str] = Field(default_factory=list)
    # --- ncb-scores (issue 15 §3): NetConfBench metrics (ani.netconfbench.scoring)
    testcase_score: float | None = None
    task_pass: bool | None = None
    ncb: NcbScores | None = None
    # --- end ncb-scores

    @property
    def budget_exhausted(self) -> bool:
        """The run ended because a budget ran out (stop reason ``max_steps``, ``max_tokens`` or
        ``wall_clock``): the agent stopped, it did not crash (``agent_error`` stays None)."""
        return self.stop_reason in BUDGET_STOP_REASONS
    # --- end cases-tools ---

    @model_validator(mode="before")
    @classmethod
    def _process_or_none(cls, data: Any) -> Any:
        """An unreadable ``process`` (metrics of an older format) must not cost the run."""
        if isinstance(data, dict) and isinstance(data.get("process"), dict):
            try:
                ProcessMetrics.model_validate(data["process"])
            except ValidationError as exc:
                warnings.warn(
                    f"run {data.get('run_id', '?')}: process metrics unreadable (an older "
                    f"format?), kept as missing: {format_validation_error(exc)}",
                    stacklevel=2,
                )
                data = {**data, "process": None}
        return data

    @property
    def valid(self) -> bool:
        """Counted in rates (not an infrastructure error nor an invalid environment)."""
        return self.label not in INVALID_LABELS

    @model_validator(mode="after")
    def _label_agrees(self) -> RunRecord:
        """``label`` is derived: infra_error / environment_invalid with no verdict, else
        ``label_for(success, damage_free)``."""
        if self.label in INVALID_LABELS:
            if self.success is not None or self.damage_free is not None:
                raise ValueError(f"label: an {self.label} run has no success/damage_free verdict")
        elif self.success is None or self.damage_free is None:
            raise ValueError(f"label: {self.label} needs success and damage_free")
        elif self.label != label_for(self.success, self.damage_free):
            raise ValueError(
                f"label: {self.label} disagrees with success={self.success}, "
                f"damage_free={self.damage_free} ({label_for(self.success, self.damage_free)})"
            )
        return self


def label_for(success: bool, damage_free: bool) -> str:
    """The outcome label of a graded run."""
    if success:
        return "clean_success" if damage_free else "dangerous_success"
    return "clean_failure" if damage_free else "destructive_failure"


def _reason(exc: ValueError) -> str:
    """What is wrong with a line, in one line (pydantic's first line only says "1 validation error")."""
    if isinstance(exc, ValidationError):
        return format_validation_error(exc)
    return str(exc).splitlines()[0]


def _parse_lines(text: str, path: Path) -> tuple[list[RunRecord], str | None]:
    """Records of ``text``; returns (records, partial_tail) where partial_tail is an unterminated last line."""
    records: list[RunRecord] = []
    lines = text.split("\n")
    tail = lines.pop()  # "" if the file ends with a newline
    partial = tail if tail.strip() else None
    if partial is not None:
        try:  # a complete record whose newline was lost is still a record
            records_tail = [RunRecord.model_validate_json(partial)]
        except (ValidationError, ValueError):
            records_tail = []
            warnings.warn(
                f"{path}: ignoring a truncated last line ({len(partial)} characters)", stacklevel=3
            )
        else:
            partial = None
    else:
        records_tail = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(RunRecord.model_validate_json(line))
        except (ValidationError, ValueError) as exc:
            warnings.warn(
                f"{path}:{i}: ignoring an unreadable line: {_reason(exc)}", stacklevel=3
            )
    return records + records_tail, partial


def read_runs(path: str | Path) -> list[RunRecord]:
    """All readable records of a ``runs.jsonl`` (or of the results folder holding one).

    A missing file gives ``[]``. Unreadable lines are skipped with a warning.
    When a run id occurs twice (a retried infrastructure error), the last record wins.
    """
    p = Path(path)
    if p.is_dir():
        p = p / RUNS_FILE
    if not p.exists():
        return []
    records, _ = _parse_lines(p.read_text(encoding="utf-8", errors="replace"), p)
    latest: dict[str, RunRecord] = {}
    for r in records:
        latest.pop(r.run_id, None)
        latest[r.run_id] = r
    return list(latest.values())


def read_results(path: str | Path) -> list[RunRecord]:
    """The run records of a results folder: its ``runs.jsonl`` (``ani campaign run``, as
    :func:`read_runs`), else its ``run.json`` (``ani run --out``).

    Raises:
        ConfigError: the folder has neither, or its ``run.json`` is not a run record (the
            pydantic errors, never the file's text).
    """
    path = Path(path)
    if (path / RUNS_FILE).is_file():
        return read_runs(path)
    single = path / "run.json"
    if not single.is_file():
        raise ConfigError(f"{path}: no {RUNS_FILE} nor run.json (not a results folder of ani campaign run / ani run)")
    try:
        return [RunRecord.model_validate_json(single.read_text(encoding="utf-8"))]
    except ValidationError as exc:
        raise ConfigError(f"{single}: not a run record: {format_validation_error(exc)}") from None


class RunStore:
    """Append-only ``runs.jsonl`` in ``out_dir``.

    On construction an unterminated last line (an interrupted write) is moved
    to ``runs.jsonl.partial`` so appends start on a fresh line; nothing
    readable is lost.
    """

    def __init__(self, out_dir: str | Path) -> None:
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / RUNS_FILE
        self._repair()
        #: where this store's appends begin (bytes into runs.jsonl): :meth:`appended` reads from here
        self.start = self.path.stat().st_size if self.path.exists() else 0

    def _repair(self) -> None:
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        data = self.path.read_bytes()
        if data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        try:
            RunRecord.model_validate_json(tail)
        except (ValidationError, ValueError):
            warnings.warn(
                f"{self.path}: moving a truncated last line to {RUNS_FILE}.partial", stacklevel=3
            )
            with (self.dir / f"{RUNS_FILE}.partial").open("ab") as fh:
                fh.write(tail + b"\n")
            with self.path.open("r+b") as fh:
                fh.truncate(cut)
        else:
            with self.path.open("ab") as fh:
                fh.write(b"\n")

    def records(self) -> list[RunRecord]:
        """The records stored so far (see :func:`read_runs`)."""
        return read_runs(self.path)

    def appended(self) -> list[RunRecord]:
        """The records written through this store, as the file holds them (every line after
        :attr:`start`, in order, a rerun run id included): a record whose append was interrupted
        after the line landed counts, one cut short does not (it is no record)."""
        if not self.path.exists():
            return []
        with self.path.open("rb") as fh:
            fh.seek(self.start)
            text = fh.read().decode("utf-8", errors="replace")
        with warnings.catch_warnings():  # a cut-short last line: RunStore moves it aside next time
            warnings.simplefilter("ignore")
            records, _ = _parse_lines(text, self.path)
        return records

    def append(self, record: RunRecord) -> None:
        """Write one record as a line; flushed and fsynced before returning."""
        line = record.model_dump_json() + "\n"
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
