"""The campaign's coordinator: it hands plans to an executor and is the only writer of
``runs.jsonl``; the executor reports back through the :class:`RunSink` interface (a run
started, an event of a run in flight, a run finished), which also drives the live display.

The display shows the campaign's bar and one line per run in flight (its cell, seed and last
event), and prints one line per finished run.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TaskID, TextColumn,
                           TimeElapsedColumn)
from rich.table import Column

from ani.campaign.plan import RunPlan
from ani.campaign.results import RunRecord, RunStore

#: a run's line in the live display is cut to this many characters
FLIGHT_CHARS = 90


class _CampaignOnly(ProgressColumn):
    """A column shown on the campaign's row only (a run in flight has no bar or count)."""

    def __init__(self, inner: ProgressColumn) -> None:
        super().__init__()
        self.inner = inner

    def render(self, task: Task) -> Any:
        return "" if task.fields.get("flight") else self.inner.render(task)


class Coordinator:
    """The :class:`RunSink` of one campaign session: stores each record (``store.append``),
    keeps ``records`` of this session, and shows progress (``progress=False``: nothing shown).

    Args:
        store: the folder's :class:`RunStore`. total / done: runs in the campaign and already
            done (the bar starts there). name: the campaign's name (the bar's label).
        line: ``RunRecord -> markup`` of a finished run's line; last: ``RunRecord -> markup`` of
            the bar's last-finished field.
    """

    def __init__(self, store: RunStore, console: Console, *, name: str, total: int, done: int,
                 progress: bool, line: Any, last: Any) -> None:
        self.store, self.console, self.progress = store, console, progress
        self.line, self.last = line, last
        self.finished_records: list[RunRecord] = []
        # the run ids are never cut (s1 and s2 of a cell must differ); the last event is
        self.bar = Progress(TextColumn("[bold]{task.description}", table_column=Column(no_wrap=True)),
                            _CampaignOnly(BarColumn(bar_width=20)), _CampaignOnly(MofNCompleteColumn()),
                            TimeElapsedColumn(), TextColumn("{task.fields[last]}", table_column=Column(
                                ratio=1, no_wrap=True, overflow="ellipsis")),
                            console=console, disable=not progress, transient=False, expand=True)
        self.main = self.bar.add_task(name, total=total, completed=done, last="")
        self.flight: dict[str, TaskID] = {}
        self.started_at: dict[str, float] = {}

    def __enter__(self) -> Coordinator:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        for tid in self.flight.values():
            self.bar.remove_task(tid)
        self.flight.clear()
        self.bar.__exit__(*exc)

    def started(self, plan: RunPlan) -> None:
        self.started_at[plan.run_id] = time.monotonic()
        if self.progress:
            self.flight[plan.run_id] = self.bar.add_task(f"  {plan.run_id}", total=None, last="lab up", flight=True)

    def event(self, run_id: str, event: dict[str, Any]) -> None:
        tid = self.flight.get(run_id)
        if tid is None:
            return
        from ani.campaign.live import event_line

        try:
            text = event_line(event)
        except Exception:  # noqa: BLE001 - a display line never breaks a run
            text = None
        if text:
            text = text.strip().splitlines()[0]
            self.bar.update(tid, last=text if len(text) <= FLIGHT_CHARS else text[: FLIGHT_CHARS - 3] + "...")

    def finished(self, plan: RunPlan, record: RunRecord) -> None:
        self.store.append(record)  # the only writer of runs.jsonl
        self.finished_records.append(record)
        tid = self.flight.pop(plan.run_id, None)
        if tid is not None:
            self.bar.remove_task(tid)
        self.bar.update(self.main, advance=1, last=self.last(record))
        if self.progress:
            self.bar.console.print(self.line(record))


def check_scheduler(kind: str | None, scheduler: str | None) -> None:
    """Raises ConfigError: a ``scheduler`` given for an executor other than ``dask``."""
    from ani.errors import ConfigError

    if scheduler and kind != "dask":
        raise ConfigError(f"--scheduler {scheduler}: give --executor dask with it")


def make_executor(kind: str | None = None, *, jobs: int = 1, scheduler: str | None = None, deps: Any = None) -> Any:
    """The executor of ``ani campaign run``: ``dask`` (with ``scheduler``: ``tcp://HOST:PORT`` or
    ``local:N``), ``local`` (``jobs`` worker processes on this machine) or ``serial`` (this
    process; ``deps`` passed through). None: ``local``
    for ``jobs`` > 1, else ``serial``.

    Raises:
        ConfigError: an unknown kind (the known ones listed), ``--scheduler`` without dask,
            ``dask`` without a scheduler, or fake ``deps`` with an executor that runs elsewhere.
    """
    from ani.campaign.executors import get_executor
    from ani.errors import ConfigError

    check_scheduler(kind, scheduler)
    kind = kind or ("local" if jobs > 1 else "serial")
    if kind == "serial":
        if jobs > 1:
            raise ConfigError(f"--jobs {jobs}: the serial executor runs one at a time (use --executor local)")
        return get_executor("serial", deps=deps)
    if deps is not None:
        raise ConfigError(f"executor {kind!r} runs the real lab and agents in other processes: no injected deps")
    if kind == "dask":
        if not scheduler:
            raise ConfigError("--executor dask needs --scheduler tcp://HOST:PORT or local:N")
        return get_executor("dask", scheduler=scheduler)
    return get_executor(kind, jobs=jobs)
