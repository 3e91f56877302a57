"""NetConfBench / NetConfArena metrics of a run and of a campaign's cells (draft §3.1, §3.2 step 6).

Every run (a NetConfBench task or any other task class):

- ``testcase_score`` = |passed| / |total| of the run's graded hidden tests (S_testcase, the
  primary score; a NetConfBench task's hidden tests are its testcases), ``task_pass`` = all
  of them passed. Both are fields of :class:`ani.campaign.results.RunRecord` (None for a run
  without a verdict: ``infra_error`` / ``environment_invalid``).

A run of a variant whose ``params`` has ``"solutions"`` (a NetConfBench task) also gets
``RunRecord.ncb`` (:class:`NcbScores`), computed by the runner after grading:

- ``command`` (S_command, diagnostic): :mod:`ani.netconfbench.command_score`, the run's applied
  changes against each solution's, best F1 (the solutions in the lab's names:
  ``params["lab_solutions"]``, else ``params["solutions"]`` rewritten with ``params["names"]``),
  with ``command.crosscheck``: FRR's ``frr-reload.py --test`` on the same configurations per
  router against hier-config's diff (:mod:`ani.netconfbench.reload_check`);
- ``reasoning`` (S_reasoning, diagnostic): :mod:`ani.netconfbench.reasoning` of the text
  :mod:`ani.netconfbench.reasoning_summary` gives (one model turn as is; more than one
  summarised by a chat-completions request, by default to the run's own endpoint and model,
  else the extractive summary), ``reasoning.summary`` saying which;
- ``applied_commands``: the vtysh lines that take the initial configuration to the final one
  per router (:func:`ani.device.remediation.frr_commands`), in the task's names: what
  harvesting writes as a new solution's ``configs``; like the command score, without the lines
  the run's faults wrote (a concurrent writer's ``description``: not the agent's);
- ``initial_configs``: the routers' initial FRR configuration text (lab names), so that a
  solution added to the task later is scored against this run without a lab
  (:mod:`ani.netconfbench.harvest`);
- efficiency (optional in the draft) is the record's ``cost`` (wall time, prompt and
  completion tokens, tool calls, turns): :func:`efficiency` reads it, nothing is copied.

A part that cannot be measured is None with the reason in ``notes`` (``"command: initial
configs unreadable"``); nothing here fails a run.

Per cell (:func:`cell_scores`, in ``summary.md`` and the HTML report): the mean testcase score,
the task pass rate with its 95% Wilson interval, the mean command F1 and reasoning score over
the runs that have one (with their count), per task and over tasks.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ani.netconfbench.command_score import CommandScore
from ani.netconfbench.reasoning import ReasoningScore

__all__ = ["CellScores", "NcbScores", "cell_scores", "efficiency", "lab_solutions", "score_run",
           "task_names", "task_pass", "testcase_score"]


class NcbScores(BaseModel):
    """The NetConfBench scores of one run (``RunRecord.ncb``; module doc).

    The run's task file and name map are the record's own ``task_file`` / ``names``.

    Attributes:
        command: S_command against the best-matching solution (None: see ``notes``).
        reasoning: S_reasoning (None: the scorer could not run; ``reasoning.score`` None: no text).
        reasoning_text: the agent's reasoning as scored (None: it wrote none): its text as is
            (one model turn) or its summary (``reasoning.summary`` says which).
        applied_commands: ``{task device: [vtysh line, ...]}`` initial -> final (task names).
        initial_configs: ``{lab router: FRR text}`` of the initial configurations.
        notes: why a part is missing (``"command: ..."``, ``"reasoning: ..."``).
    """

    command: CommandScore | None = None
    reasoning: ReasoningScore | None = None
    reasoning_text: str | None = None
    applied_commands: dict[str, list[str]] = Field(default_factory=dict)
    initial_configs: dict[str, str] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


def testcase_score(tests: Sequence[Any]) -> float | None:
    """|passed| / |total| of graded checks (objects with ``passed``); None when there are none."""
    return sum(1 for t in tests if t.passed) / len(tests) if tests else None


def task_pass(tests: Sequence[Any]) -> bool | None:
    """Every graded check passed; None when there are none."""
    return all(t.passed for t in tests) if tests else None


# -- names -------------------------------------------------------------------------------------

def lab_solutions(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The variant's solutions with ``configs`` in the lab's names: ``params["lab_solutions"]``
    when the variant has them, else ``params["solutions"]`` with each device and its interface
    names rewritten by the name map ``params["names"]`` (:class:`ani.netconfbench.names.NameMap`
    dumped; none: as written)."""
    if params.get("lab_solutions"):
        return [dict(s) for s in params["lab_solutions"]]
    from ani.netconfbench.names import NameMap

    names = NameMap.model_validate(params.get("names") or {})
    return [{**s, "configs": {names.nodes.get(d, d): [names.rewrite(d, str(ln)) for ln in lines]
                              for d, lines in (s.get("configs") or {}).items()}}
            for s in params.get("solutions") or []]


def task_names(configs: Mapping[str, Sequence[str]], names: Mapping[str, Any]) -> dict[str, list[str]]:
    """``{lab router: [line]}`` -> ``{task device: [line]}``: the name map (a NameMap dump)
    inverted on device keys and interface names (a name the map does not have stays). Pure."""
    from ani.netconfbench.names import NameMap

    back = NameMap.model_validate(dict(names or {})).inverse()
    return {back.nodes.get(r, r): [back.rewrite(r, str(ln)) for ln in lines] for r, lines in configs.items()}


# -- one run -----------------------------------------------------------------------------------


def score_run(params: Mapping[str, Any], initial: Mapping[str, Any] | None, final: Mapping[str, Any] | None,
              events: Sequence[Mapping[str, Any]], fault_lines: Collection[str] = (), *,
              agent_config: Mapping[str, Any] | None = None, summary: Any = None,
              crosscheck: bool = True) -> NcbScores:
    """The NcbScores of a NetConfBench run: ``params`` the variant's, ``initial`` / ``final``
    the routers' DeviceConfigs read out of band before the agent acted and after grading (None:
    unreadable, said in ``notes``), ``events`` the run's trajectory events, ``fault_lines`` the
    change lines the run's faults wrote themselves (``"r1: + interface lo / description ..."``,
    :func:`ani.campaign.observe_run.fault_lines`): left out of the applied commands and of the
    command score (a concurrent writer's line is not the agent's, nor a solution to harvest;
    ``notes`` says how many), ``agent_config`` the run's agent block (the summariser's default
    endpoint), ``summary`` the campaign's ``reasoning_summary`` (a
    :class:`~ani.netconfbench.reasoning_summary.SummaryConfig` or its spec value; None: the
    default), ``crosscheck`` False: no frr-reload cross-check. Never raises for bad data: a
    part that fails is None with its reason in ``notes``."""
    from ani.device.remediation import frr_commands, frr_text
    from ani.netconfbench.command_score import applied_changes, command_score, solution_changes
    from ani.netconfbench.reasoning import reasoning_score
    from ani.netconfbench.reasoning_summary import SummaryConfig, reasoning_for_score
    from ani.netconfbench.reload_check import crosscheck as reload_crosscheck

    names = dict(params.get("names") or {})
    out = NcbScores()
    sols = lab_solutions(params)
    if initial is None or final is None:
        out.notes.append(f"command: {'initial' if initial is None else 'final'} configs unreadable")
    else:
        try:
            out.initial_configs = {r: frr_text(c) for r, c in initial.items()}
            initial, final, left_out = _without_faults(initial, final, fault_lines)
            if left_out:
                out.notes.append(f"command: {left_out} change line(s) the faults wrote left out")
            out.applied_commands = task_names(
                {r: frr_commands(initial[r], final[r]) for r in initial if r in final}, names)
            applied = applied_changes(initial, final)
            wanted = []
            for i, s in enumerate(sols):
                wanted.append((str(s.get("solution_id") or f"solution-{i}"), solution_changes(initial, s.get("configs") or {})))
            out.command = command_score(applied, wanted)
            if out.command is None:
                out.notes.append("command: the task has no solution")
            elif crosscheck:
                checked, why = reload_crosscheck(initial, final, applied)
                out.command = out.command.model_copy(update={"crosscheck": checked, "crosscheck_note": why})
                if why:
                    out.notes.append(f"command crosscheck: {why}")
        except Exception as exc:  # noqa: BLE001 - a diagnostic score never fails a run: said
            out.notes.append(f"command: {type(exc).__name__}: {exc}")
    try:
        cfg = summary if isinstance(summary, SummaryConfig) else SummaryConfig.parse(summary)
        said = reasoning_for_score(events, cfg, agent_config)
        out.reasoning_text = said.text
        out.reasoning = reasoning_score(said.text, [(str(s.get("solution_id")), s.get("reasoning") or "") for s in sols],
                                        summary=said.summary)
    except Exception as exc:  # noqa: BLE001 - e.g. a broken wordllama install: said
        out.notes.append(f"reasoning: {type(exc).__name__}: {exc}")
    if out.reasoning is not None and out.reasoning.score is None:
        out.notes.append(f"reasoning: {out.reasoning.note}")
    return out


def _without_faults(initial: Mapping[str, Any], final: Mapping[str, Any],
                    fault_lines: Collection[str]) -> tuple[dict[str, Any], dict[str, Any], int]:
    """``(initial, final, n)``: both without the lines the faults wrote
    (:func:`ani.observer.changes.without_changes`, per router), ``n`` the run's change lines
    that left out."""
    from ani.netconfbench.command_score import applied_changes
    from ani.device.changes import without_changes

    own: dict[str, list[str]] = {}
    for line in fault_lines:
        router, _, change = str(line).partition(": ")
        own.setdefault(router, []).append(change)
    if not own:
        return dict(initial), dict(final), 0
    before = sum(len(v) for v in applied_changes(initial, final).values())
    initial = {r: without_changes(c, own.get(r)) if r in own else c for r, c in initial.items()}
    final = {r: without_changes(c, own.get(r)) if r in own else c for r, c in final.items()}
    return initial, final, before - sum(len(v) for v in applied_changes(initial, final).values())


def efficiency(record: Any) -> dict[str, Any]:
    """The draft's efficiency metrics of a run, from its ``cost``: ``wall_s``, ``agent_s``,
    ``prompt_tokens``, ``completion_tokens``, ``tool_calls``, ``turns`` (None: unknown)."""
    cost = getattr(record, "cost", None) or {}
    return {k: cost.get(k) for k in ("wall_s", "agent_s", "prompt_tokens", "completion_tokens", "tool_calls", "turns")}


# -- a cell ------------------------------------------------------------------------------------


class CellScores(BaseModel):
    """The NetConfBench scores of a group of valid runs (a cell, or a cell's runs of one task).

    Attributes:
        runs: valid runs with a testcase score; testcase_score: their mean.
        passed: runs with ``task_pass``; pass_rate: passed / runs; pass_wilson: its 95% Wilson
            interval ``(lo, hi)``.
        command_f1 / command_runs: mean command F1 over the runs that have one, and their count.
        reasoning / reasoning_runs: the same for the reasoning score.
        reasoning_models: the ``model (sha256[:12])`` of the reasoning scores (one expected).
        tasks: ``{task: CellScores}`` per task (empty inside a per-task entry).
    """

    runs: int = 0
    testcase_score: float | None = None
    passed: int = 0
    pass_rate: float | None = None
    pass_wilson: tuple[float, float] | None = None
    command_f1: float | None = None
    command_runs: int = 0
    reasoning: float | None = None
    reasoning_runs: int = 0
    reasoning_models: list[str] = Field(default_factory=list)
    tasks: dict[str, CellScores] = Field(default_factory=dict)


def _task_key(r: Any) -> str:
    if getattr(r, "task_file", None):
        from pathlib import Path

        return Path(r.task_file).stem
    return str(getattr(r, "variant_id", None) or r.task)


def _scores(runs: list[Any], per_task: bool) -> CellScores:
    from ani.stats import wilson

    scored = [r for r in runs if getattr(r, "testcase_score", None) is not None]
    n = len(scored)
    k = sum(1 for r in scored if r.task_pass)
    cmd = [r.ncb.command.f1 for r in runs if r.ncb is not None and r.ncb.command is not None]
    rs = [r.ncb.reasoning for r in runs if r.ncb is not None and r.ncb.reasoning is not None]
    vals = [x.score for x in rs if x.score is not None]
    models = sorted({f"{x.model} ({x.weights_sha256[:12]})" for x in rs})
    out = CellScores(
        runs=n, testcase_score=sum(r.testcase_score for r in scored) / n if n else None,
        passed=k, pass_rate=k / n if n else None, pass_wilson=tuple(wilson(k, n)) if n else None,
        command_f1=sum(cmd) / len(cmd) if cmd else None, command_runs=len(cmd),
        reasoning=sum(vals) / len(vals) if vals else None, reasoning_runs=len(vals),
        reasoning_models=models,
    )
    if per_task:
        groups: dict[str, list[Any]] = {}
        for r in runs:
            groups.setdefault(_task_key(r), []).append(r)
        out.tasks = {t: _scores(g, False) for t, g in sorted(groups.items())}
    return out


def cell_scores(valid: Sequence[Any]) -> CellScores:
    """The scores of a cell's valid runs (``RunRecord`` objects), with a per-task breakdown
    (task = the task file's stem for NetConfBench runs, else the variant id / task class)."""
    return _scores(list(valid), True)
