"""``ani run``'s one run, through the same coordinator path as a campaign: planned (its
``plan.jsonl``), handed to the serial executor, its record stored by the sink, the only
writer of ``runs.jsonl``.

    record = run_single(spec, out_dir, deps=deps, on_event=print_event)

The folder then holds what a campaign's holds for that run (``plan.jsonl``, ``runs.jsonl``,
``trajectories/<run id>.jsonl``), so ``ani campaign rerun DIR RUN_ID`` and ``ani campaign
report DIR`` take it as they take a campaign's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ani.campaign.plan import RunPlan
from ani.campaign.results import RunRecord, RunStore
from ani.errors import CampaignSpecError


class SingleRunSink:
    """The :class:`ani.campaign.executors.base.RunSink` of one run: events go to ``on_event``
    (None: nowhere), the record to ``runs.jsonl`` and :attr:`record`."""

    def __init__(self, store: RunStore, on_event: Callable[[dict[str, Any]], None] | None) -> None:
        self.store, self.on_event = store, on_event
        self.record: RunRecord | None = None

    def started(self, plan: RunPlan) -> None:
        """Nothing to show: ``ani run`` said what it starts."""

    def event(self, run_id: str, event: dict[str, Any]) -> None:
        if self.on_event is not None:
            self.on_event(event)

    def finished(self, plan: RunPlan, record: RunRecord) -> None:
        self.store.append(record)
        self.record = record


def check_out(out: Path) -> None:
    """Refuse a folder that already holds runs (an earlier run's record would be lost).

    Raises:
        CampaignSpecError: ``--out <folder>: already holds a run ...``.
    """
    runs = out / "runs.jsonl"
    if (runs.is_file() and runs.stat().st_size > 0) or (out / "run.json").exists():
        raise CampaignSpecError(f"--out {out}: already holds a run (runs.jsonl / run.json); give a new folder")


def run_single(spec: Any, out_dir: str | Path, *, deps: Any = None,
               on_event: Callable[[dict[str, Any]], None] | None = None) -> RunRecord:
    """Plan and execute the one run of ``spec`` (its first point: cell, seed, stress) into
    ``out_dir``, which is locked meanwhile (:func:`ani.host.results_dirs.lock`).

    Raises:
        CampaignSpecError: ``out_dir`` already holds a run (:func:`check_out`).
        FolderInUse: another process writes ``out_dir``.
        ConfigError: the scenario or task cannot be loaded (nothing started).
        KeyboardInterrupt: after the run's lab was taken down (nothing stored).
    """
    from ani.campaign.coordinator import make_executor
    from ani.campaign.plan import write_plans
    from ani.campaign.planning import plan_run
    from ani.host import results_dirs

    out = Path(out_dir)
    check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    with results_dirs.lock(out, "--out"):
        check_out(out)  # a second `ani run` that got here first
        first = spec.points()[0]  # the one-cell, one-variant campaign of the command line
        plan = plan_run(spec, first.cell, first.seed, first.stress, deps)
        write_plans(out, [plan])
        sink = SingleRunSink(RunStore(out), on_event)
        executor = make_executor(deps=deps)
        try:
            executor.run([plan], out, sink)
        finally:
            executor.close()
    if sink.record is None:  # pragma: no cover - the serial executor reports every plan it ran
        raise CampaignSpecError(f"{plan.run_id}: the executor reported no record")
    return sink.record
