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


def rerun(src: str | Path, run_id: str, out: str | Path | None = None, *, deps: Any = None,
          on_event: Any = None) -> Rerun:
    """Execute the plan ``run_id`` of the campaign folder ``src`` alone into ``out`` (default
    :func:`default_rerun_dir`), on a fresh lab, in this process; its record goes to
    ``out/runs.jsonl``.

    Raises:
        CampaignSpecError: ``src`` has no ``plan.jsonl``, no plan ``run_id`` (the message names
            some), or ``out`` already holds runs, is a file or cannot be written.
        ConfigError: the plan's scenario, task or agent cannot be loaded here.
    """
    from ani.campaign.execute import execute
    from ani.campaign.loop import writable_folder
    from ani.host import results_dirs

    src = Path(src)
    if not (src / PLAN_FILE).is_file():
        raise CampaignSpecError(f"{src}: no {PLAN_FILE} (not a campaign results folder, or one written "
                                "before campaigns were planned)")
    plan = plan_by_id(read_plans(src), run_id)
    dest = Path(out) if out is not None else default_rerun_dir(src, run_id)
    writable_folder(dest, "--out")  # a file, or a path through one: one line, not a traceback
    with results_dirs.lock(dest, "--out"):
        prepare_folder(src, plan, dest)
        results_dirs.register(dest)
        record = execute(plan, dest, deps=deps, on_event=on_event)
        RunStore(dest).append(record)
    return Rerun(record=record, recorded=recorded(src, run_id), out=dest)
