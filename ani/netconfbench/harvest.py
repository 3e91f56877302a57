"""Validated-run harvesting (NetConfBench draft §3.2 step 7): a run that passed every testcase
with commands unlike every known solution of its task becomes a new solution of that task.

    from ani.campaign.harvest import harvest                # a results folder's runs (campaign layer)
    decisions = harvest("results/ncb-levels")                 # the task files updated in place
    decisions = harvest("results/ncb-levels", out="harvested")  # or copies written to out/
    decisions = harvest_records(records)                      # the records themselves (this module)
    [d.line() for d in decisions]
    # ["harvested a1-netconfbench-static-backup-s1 as harvested-3f9c01ab into .../static-backup.json (best F1 0.00 against expert-0001)",
    #  "skipped a2-netconfbench-static-backup-s1: like expert-0001 (F1 1.00 >= 0.5)"]

A run is a candidate when it has a verdict, its record carries NetConfBench scores
(``RunRecord.ncb``) and a ``task_file``, and ``task_pass`` (every testcase passed). A run whose
task file no longer holds the task it was graded on (``RunRecord.task_sha256`` against
:func:`ani.netconfbench.task.task_identity`: intents, topology, startup configs, testcases;
solutions added since do not count) is skipped, said. It is
harvested when its command F1 (:mod:`ani.netconfbench.command_score`: the diff of its final
against its initial configurations, wildcards for free identifiers) against *every* solution
the task has at that moment, those harvested earlier in the same pass included, is below
:data:`HARVEST_F1_THRESHOLD` = 0.5.

Why 0.5: names and sequence numbers are already wildcards, so what still differs is the
approach. F1 < 0.5 means fewer than half of the commands, in the harmonic mean of both
sides, are shared: a different way to reach the intents (exit-interface instead of next-hop
static routes, a route-map deny instead of a prefix-list, two lines of four in common at best).
A run that adds the solution's commands plus one unrelated line (two of two and one extra:
F1 0.8), or changes one value of two (F1 0.5), is the same solution with noise, and would only
add near-duplicates that inflate every later run's best command score.

The new solution (:class:`ani.netconfbench.task.Solution`): ``solution_id`` =
``harvested-<8 hex of sha256(campaign/run_id/started)>``, ``provenance`` =
``harvested-from-validated-run``, ``configs`` = the run's applied commands in the task's
device and interface names (``NcbScores.applied_commands``: the vtysh lines from its initial to
its final configuration), ``reasoning`` = the agent's reasoning as scored
(``NcbScores.reasoning_text``: a multi-turn run's summary; '' for an agent without one), and ``run_id``, ``campaign``, ``model``, ``level`` (kept as the solution's extra keys).

Idempotent: a run whose ``solution_id`` (or ``run_id`` with the same campaign) the task
already has adds nothing, so harvesting the same results twice, or into ``out`` where an
earlier harvest wrote, changes no file. The task files are written with
:func:`ani.netconfbench.task.dump_task` (and only when something was added); the solutions
already there are scored against the run's own initial configurations
(``NcbScores.initial_configs``), so a solution added after the run is compared too.

Errors (:func:`ani.campaign.harvest.harvest`: a results folder without ``runs.jsonl`` or ``run.json`` raises ConfigError); a task file that is
missing or invalid is a ``skipped`` decision naming it (TaskFormatError's message), never a
half-written file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ani.errors import TaskFormatError

__all__ = ["HARVEST_F1_THRESHOLD", "PROVENANCE", "HarvestDecision", "harvest_records",
           "solution_id_of"]

#: a validated run becomes a solution when its command F1 against every known one is below this
HARVEST_F1_THRESHOLD = 0.5
#: the ``provenance`` of a harvested solution (the draft's term)
PROVENANCE = "harvested-from-validated-run"


@dataclass(frozen=True)
class HarvestDecision:
    """What became of one candidate run: ``harvested`` (then ``solution_id`` and the file
    written), else ``reason``; ``best_f1`` / ``best_solution``: its closest known solution."""

    run_id: str
    task_file: str
    harvested: bool
    solution_id: str | None = None
    reason: str = ""
    best_f1: float | None = None
    best_solution: str | None = None
    written: str | None = None

    def line(self) -> str:
        """One line for the terminal."""
        if self.harvested:
            against = ("" if self.best_solution is None
                       else f" (best F1 {self.best_f1:.2f} against {self.best_solution})")
            return f"harvested {self.run_id} as {self.solution_id} into {self.written}{against}"
        return f"skipped {self.run_id}: {self.reason}"


def solution_id_of(record: Any) -> str:
    """``harvested-<8 hex>`` of a run record (module doc): the same record, the same id."""
    key = f"{record.campaign}/{record.run_id}/{record.started.isoformat()}"
    return "harvested-" + hashlib.sha256(key.encode()).hexdigest()[:8]


def _candidate(r: Any) -> bool:
    return r.valid and r.ncb is not None and bool(r.task_file) and r.task_pass is True


def _applied(record: Any) -> dict[str, list[str]]:
    """``{router: [change]}`` of the record's command score (``"r1: + ..."`` split)."""
    out: dict[str, list[str]] = {}
    for item in record.ncb.command.applied:
        router, _, change = item.partition(": ")
        out.setdefault(router, []).append(change)
    return out


def _best(record: Any, solutions: Sequence[Any]) -> tuple[float | None, str | None]:
    """The run's best command F1 over ``solutions`` (Solution models, task names), computed on
    its own initial configurations. Raises ValueError / KeyError when a solution cannot be put
    on them."""
    from ani.device.parse import parse
    from ani.netconfbench.command_score import command_score, solution_changes
    from ani.netconfbench.scoring import lab_solutions

    if not solutions:
        return None, None
    initial = {r: parse(t) for r, t in record.ncb.initial_configs.items()}
    sols = lab_solutions({"solutions": [s.model_dump() for s in solutions], "names": record.names or {}})
    wanted = [(s["solution_id"], solution_changes(initial, s["configs"])) for s in sols]
    score = command_score(_applied(record), wanted)
    return (score.f1, score.solution_id) if score is not None else (None, None)


def _decide(record: Any, task: Any, threshold: float) -> tuple[Any | None, HarvestDecision]:
    from ani.netconfbench.task import Solution

    from ani.netconfbench.task import task_identity

    sid = solution_id_of(record)
    base = {"run_id": record.run_id, "task_file": str(record.task_file)}
    want = getattr(record, "task_sha256", None)
    if want and task_identity(task) != want:
        return None, HarvestDecision(**base, harvested=False, reason=(
            "the task file changed since the run (its intents, topology, startup configs or testcases: "
            "the run was not validated against these)"))
    for s in task.ground_truth_configs:
        extra = s.model_extra or {}
        if s.solution_id == sid or (extra.get("run_id") == record.run_id and extra.get("campaign") == record.campaign):
            return None, HarvestDecision(**base, harvested=False, reason=f"already harvested as {s.solution_id}")
    if record.ncb.command is None:
        why = "; ".join(n for n in record.ncb.notes if n.startswith("command:")) or "no command score"
        return None, HarvestDecision(**base, harvested=False, reason=f"no command score to compare ({why})")
    if not any(record.ncb.applied_commands.values()):
        return None, HarvestDecision(**base, harvested=False, reason="the run applied no command")
    try:
        best, best_sid = _best(record, task.ground_truth_configs)
    except (KeyError, ValueError) as exc:
        return None, HarvestDecision(**base, harvested=False, reason=f"cannot compare with the task's solutions: {exc}")
    if best is not None and best >= threshold:
        return None, HarvestDecision(**base, harvested=False, best_f1=best, best_solution=best_sid,
                                     reason=f"like {best_sid} (F1 {best:.2f} >= {threshold:g})")
    sol = Solution.model_validate({
        "solution_id": sid, "configs": {d: list(v) for d, v in record.ncb.applied_commands.items() if v},
        "reasoning": record.ncb.reasoning_text or "", "provenance": PROVENANCE,
        "run_id": record.run_id, "campaign": record.campaign, "model": record.model, "level": record.level,
    })
    return sol, HarvestDecision(**base, harvested=True, solution_id=sid, best_f1=best, best_solution=best_sid)


def harvest_records(records: Sequence[Any], out: str | Path | None = None,
                    threshold: float = HARVEST_F1_THRESHOLD) -> list[HarvestDecision]:
    """Harvest ``records`` (RunRecords; module doc). ``out``: write the updated task files
    there (same file names; a file already there is the starting point) instead of in place.
    Returns one decision per candidate run, in run id order per task file."""
    from ani.netconfbench.task import dump_task, load_task

    by_file: dict[str, list[Any]] = {}
    for r in records:
        if _candidate(r):
            by_file.setdefault(str(r.task_file), []).append(r)
    decisions: list[HarvestDecision] = []
    for task_file, runs in sorted(by_file.items()):
        src = Path(task_file)
        dest = src if out is None else Path(out) / src.name
        try:
            task = load_task(dest if dest.exists() else src)
        except (TaskFormatError, OSError) as exc:
            decisions += [HarvestDecision(r.run_id, task_file, False, reason=f"task file unreadable: {exc}")
                          for r in sorted(runs, key=lambda r: r.run_id)]
            continue
        here: list[HarvestDecision] = []
        for r in sorted(runs, key=lambda r: r.run_id):
            sol, d = _decide(r, task, threshold)
            if sol is not None:
                task = task.model_copy(update={"ground_truth_configs": [*task.ground_truth_configs, sol]})
            here.append(d)
        if any(d.harvested for d in here):
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(dest.name + ".tmp")
            tmp.write_text(dump_task(task), encoding="utf-8")
            tmp.replace(dest)
            here = [replace(d, written=str(dest)) if d.harvested else d for d in here]
        decisions += here
    return decisions
