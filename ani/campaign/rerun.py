"""``ani campaign rerun DIR RUN_ID``: execute one plan of a campaign alone, into a new folder,
and say whether its verdict matches the recorded one (:func:`rerun`)."""

from __future__ import annotations

import shutil
import warnings
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ani.campaign.plan import PLAN_FILE, RunPlan, plan_by_id, read_plans, write_plans
from ani.campaign.results import RunRecord, RunStore, read_runs
from ani.errors import CampaignSpecError


@dataclass
class Rerun:
    """What :func:`rerun` did: the new record, the recorded one (None: the folder has none for
    the run id) and the folder written."""

    record: RunRecord
    recorded: RunRecord | None
    out: Path
    #: ``--replay``: the replay agent's ``replay_end`` event (``calls``, ``replayed``,
    #: ``differing``, ``flag_differences``, ``text_differences``); None: not a replay, or the
    #: agent never ended (the run stopped before it)
    replay: dict[str, Any] | None = None

    @property
    def matches(self) -> bool | None:
        """The verdict (label) is the recorded one; None: nothing recorded to compare."""
        return None if self.recorded is None else self.record.label == self.recorded.label


def default_rerun_dir(src: Path, run_id: str) -> Path:
    """``<src>-rerun-<run id>-<YYYYmmdd-HHMMSS>`` beside ``src`` (``-2``, ``-3``: taken)."""
    base = src.with_name(f"{src.name}-rerun-{run_id}-{datetime.now():%Y%m%d-%H%M%S}")
    out, i = base, 1
    while out.exists():
        i += 1
        out = base.with_name(f"{base.name}-{i}")
    return out


def recorded(src: Path, run_id: str) -> RunRecord | None:
    """The last record of ``run_id`` in ``src/runs.jsonl`` (None: none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = [r for r in read_runs(src) if r.run_id == run_id] if (src / "runs.jsonl").exists() else []
    return found[-1] if found else None


def prepare_folder(src: Path, plan: RunPlan, out: Path) -> None:
    """``out`` with the plan alone in ``plan.jsonl`` and the files it names relative to the
    folder (its scenario copy). Raises CampaignSpecError: ``out`` already holds runs, or the
    scenario copy is missing in ``src``."""
    if (out / "runs.jsonl").exists():
        raise CampaignSpecError(f"--out {out}: already holds runs; give a new folder")
    out.mkdir(parents=True, exist_ok=True)
    rel = plan.scenario.file
    if rel and not Path(rel).is_absolute():
        if not (src / rel).is_file() and plan.scenario.manifest is None:
            raise CampaignSpecError(f"{src}: {rel} is missing (the run's scenario)")
        if (src / rel).is_file():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, out / rel)
    write_plans(out, [plan])


def recorded_trajectory(src: Path, run_id: str, old: RunRecord | None) -> Path:
    """The trajectory of ``run_id``: ``src/trajectories/<run id>.jsonl`` (the folder's own, also
    when the folder was moved), else the path the record names if it exists.

    Raises:
        CampaignSpecError: neither exists.
    """
    here = src / "trajectories" / f"{run_id}.jsonl"
    if here.is_file():
        return here
    if old is not None and old.trajectory:
        named = Path(old.trajectory)
        named = named if named.is_absolute() else src / named
        if named.is_file():
            return named
    raise CampaignSpecError(f"run {run_id}: its trajectory is missing ({here}); nothing to replay")


def replay_plan(src: Path, plan: RunPlan, dest: Path, old: RunRecord | None,
                trajectory: Path | None = None) -> RunPlan:
    """``plan`` with the ``replay`` agent (:mod:`ani.agents.replay`) in place of its own, fed from
    a copy of the run's trajectory (``trajectory``, or :func:`recorded_trajectory`) kept in
    ``dest/replayed/``; scenario, task variant, level, fault schedule and budget unchanged.

    Raises:
        CampaignSpecError: no trajectory to replay.
    """
    path = Path(trajectory) if trajectory is not None else recorded_trajectory(src, plan.run_id, old)
    if not path.is_file():
        raise CampaignSpecError(f"--trajectory {path}: no such file")
    kept = dest / "replayed" / (f"{plan.run_id}{path.suffix}" if path.suffix else plan.run_id)
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, kept)
    agent: dict[str, Any] = {"kind": "replay", "trajectory": str(kept.resolve())}
    if old is not None and old.stop_reason:
        agent["stop_reason"] = old.stop_reason
    return plan.model_copy(update={"agent": agent})


def replay_end(dest: Path, run_id: str) -> dict[str, Any] | None:
    """The last ``replay_end`` event of ``dest/trajectories/<run id>.jsonl`` (None: none)."""
    from ani.trajectory_atif import read_events

    path = dest / "trajectories" / f"{run_id}.jsonl"
    if not path.is_file():
        return None
    ends = [e for e in read_events(path) if e.get("event") == "replay_end"]
    return ends[-1] if ends else None


def rerun(src: str | Path, run_id: str, out: str | Path | None = None, *, deps: Any = None,
          on_event: Any = None, replay: bool = False, trajectory: str | Path | None = None) -> Rerun:
    """Execute the plan ``run_id`` of the campaign folder ``src`` alone into ``out`` (default
    :func:`default_rerun_dir`), on a fresh lab, in this process; its record goes to
    ``out/runs.jsonl``. With ``replay``, the run's agent is the ``replay`` agent fed from its
    recorded trajectory (``trajectory``: another file, e.g. its ATIF export), so the run is
    re-graded without its model (:func:`replay_plan`).

    Raises:
        CampaignSpecError: ``src`` has no ``plan.jsonl``, no plan ``run_id`` (the message names
            some), ``out`` already holds runs, is a file or cannot be written, or (``replay``)
            the run's trajectory is missing.
        ConfigError: the plan's scenario, task or agent cannot be loaded here (TrajectoryError:
            the trajectory cannot be read).
    """
    from ani.campaign.execute import execute
    from ani.campaign.loop import writable_folder
    from ani.host import results_dirs

    src = Path(src)
    if not (src / PLAN_FILE).is_file():
        raise CampaignSpecError(f"{src}: no {PLAN_FILE} (not a campaign results folder, or one written "
                                "before campaigns were planned)")
    plan = plan_by_id(read_plans(src), run_id)
    old = recorded(src, run_id)
    if replay and trajectory is None:
        recorded_trajectory(src, run_id, old)  # before any folder is made
    dest = Path(out) if out is not None else default_rerun_dir(src, run_id)
    writable_folder(dest, "--out")  # a file, or a path through one: one line, not a traceback
    with results_dirs.lock(dest, "--out"):
        prepare_folder(src, plan, dest)
        if replay:
            plan = replay_plan(src, plan, dest, old, Path(trajectory) if trajectory is not None else None)
            write_plans(dest, [plan])
        results_dirs.register(dest)
        record = execute(plan, dest, deps=deps, on_event=on_event)
        RunStore(dest).append(record)
    return Rerun(record=record, recorded=old, out=dest, replay=replay_end(dest, run_id) if replay else None)
