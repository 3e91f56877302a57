"""The runs of a results folder, one by one: ``ani campaign list DIR`` and ``ani campaign show
DIR RUN_ID`` (:func:`run_rows`, :func:`find_run`).

A results folder is a campaign's (``ani campaign run``) or one run's (``ani run``): both hold
``plan.jsonl`` (every planned run, in order) and ``runs.jsonl`` (the record of each finished
one). A run id (``<cell>-<task>-s<seed>``) is stable: the plan gives it before the run starts,
and ``ani campaign rerun DIR RUN_ID`` takes it.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ani.campaign.plan import PLAN_FILE, RunPlan, read_plans
from ani.campaign.results import RUNS_FILE, RunRecord, read_runs
from ani.errors import CampaignSpecError

#: the label of a planned run that has no record yet (not run, or interrupted)
NOT_RUN = "not_run"


@dataclass(frozen=True)
class RunRow:
    """One line of ``ani campaign list``.

    Attributes:
        run_id / cell / level / task / seed: the run's identity (its plan's).
        variant: the task variant's id (``onboard-site-s1``; None: not recorded).
        label: the verdict (an outcome label, ``infra_error``, ``environment_invalid``) or
            ``not_run`` (planned, no record).
        failed: the number of failed hidden tests and invariants (None: no record).
        steps / tool_calls / tokens: the run's cost (tokens None: no model reported usage).
        wall_s: seconds, lab up to lab down.
        trajectory: the trajectory file (None: none was written, e.g. the lab did not start).
    """

    run_id: str
    cell: str
    level: str
    task: str
    seed: int
    variant: str | None
    label: str
    failed: int | None
    steps: int | None
    tool_calls: int | None
    tokens: int | None
    wall_s: float | None
    trajectory: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_folder(folder: str | Path) -> tuple[list[RunPlan], list[RunRecord]]:
    """``(plans, records)`` of a results folder (plans ``[]`` for a folder written before
    campaigns were planned; records: the last of each run id).

    Raises:
        CampaignSpecError: not a results folder (neither ``plan.jsonl`` nor ``runs.jsonl``), or
            a plan line that is not a plan.
    """
    d = Path(folder)
    if not d.is_dir():
        raise CampaignSpecError(f"{d}: no such folder")
    has_plan, has_runs = (d / PLAN_FILE).is_file(), (d / RUNS_FILE).is_file()
    if not has_plan and not has_runs:
        raise CampaignSpecError(f"{d}: not a results folder of 'ani campaign run' or 'ani run' "
                                f"(no {PLAN_FILE}, no {RUNS_FILE})")
    plans = read_plans(d) if has_plan else []
    records = read_runs(d)  # an unreadable line is said (a warning naming it), as by `report`
    return plans, records


def trajectory_path(folder: str | Path, run_id: str) -> Path | None:
    """The run's trajectory file, the folder's ``trajectories/<run id>.jsonl`` where every run
    writes it (:attr:`ani.campaign.execute.RunContext.traj_path`; the record names it as it was
    written, which a moved or copied folder no longer is); None: there is none (the run ended
    before its adapter opened)."""
    own = Path(folder) / "trajectories" / f"{run_id}.jsonl"
    return own if own.is_file() else None


def failed_checks(record: RunRecord) -> list[tuple[str, str, str]]:
    """``(kind, name, detail)`` of every failed hidden test (``test``) and invariant (``invariant``)."""
    return ([("test", c.name, c.detail) for c in record.tests if not c.passed]
            + [("invariant", c.name, c.detail) for c in record.invariants if not c.passed])


def run_rows(folder: str | Path) -> list[RunRow]:
    """One row per run of the folder: the planned runs in plan order (a planned run with no
    record is ``not_run``), then records whose run the plan does not hold. Raises
    CampaignSpecError (:func:`load_folder`)."""
    plans, records = load_folder(folder)
    by_id = {r.run_id: r for r in records}
    rows = [_row(folder, p, by_id.get(p.run_id)) for p in plans]
    planned = {p.run_id for p in plans}
    rows += [_row(folder, None, r) for r in records if r.run_id not in planned]
    return rows


def _row(folder: str | Path, plan: RunPlan | None, rec: RunRecord | None) -> RunRow:
    src: Any = rec if rec is not None else plan
    path = trajectory_path(folder, src.run_id)
    cost = rec.cost if rec is not None else {}
    return RunRow(
        run_id=src.run_id, cell=src.cell, level=src.level, task=src.task, seed=src.seed,
        variant=rec.variant_id if rec is not None else None,
        label=rec.label if rec is not None else NOT_RUN,
        failed=len(failed_checks(rec)) if rec is not None else None,
        steps=rec.steps if rec is not None else None,
        tool_calls=rec.tool_calls if rec is not None else None,
        tokens=cost.get("tokens") if isinstance(cost.get("tokens"), int) else None,
        wall_s=rec.wall_s if rec is not None else None,
        trajectory=str(path) if path is not None else None,
    )


def find_run(folder: str | Path, run_id: str) -> tuple[RunPlan | None, RunRecord | None]:
    """``(plan, record)`` of ``run_id`` (either may be None, not both).

    Raises:
        CampaignSpecError: not a results folder, or no run ``run_id`` there; the message names
            the nearest run ids (or the first ones).
    """
    plans, records = load_folder(folder)
    plan = next((p for p in plans if p.run_id == run_id), None)
    rec = next((r for r in records if r.run_id == run_id), None)
    if plan is None and rec is None:
        known = list(dict.fromkeys([p.run_id for p in plans] + [r.run_id for r in records]))
        raise CampaignSpecError(f"no run {run_id!r} in {folder}: {near(run_id, known)}")
    return plan, rec


def near(run_id: str, known: list[str]) -> str:
    """``"nearest: a, b, c"`` (difflib's close matches), else ``"runs: <the first 5>, ..."``."""
    if not known:
        return "it holds no run"
    close = difflib.get_close_matches(run_id, known, n=5, cutoff=0.6)
    if close:
        return "nearest: " + ", ".join(close)
    return "runs: " + ", ".join(known[:5]) + (f", ... ({len(known)} in all)" if len(known) > 5 else "")
