"""The serial executor: one run at a time, in this process (the run function called directly;
``ani run`` and ``--jobs 1``). A ``deps`` object is passed through to it (unit tests with fake
labs). Ctrl-C: the run takes its lab down and re-raises; nothing is reported for it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ani.campaign.executors.base import DEFAULT_TARGET, RunSink, call_target, load_target
from ani.campaign.plan import RunPlan


class SerialExecutor:
    """Runs plans one after the other in this process.

    Args:
        target: the run function, ``module:function``.
        deps: passed to the run function as ``deps=`` (None: its own defaults).

    Raises:
        ConfigError: ``target`` cannot be loaded.
    """

    name = "serial"
    slots = 1

    def __init__(self, *, target: str = DEFAULT_TARGET, deps: Any = None) -> None:
        self._target = load_target(target)
        self._deps = deps

    def run(self, plans: Sequence[RunPlan], out_dir: Path, sink: RunSink) -> None:
        """Run ``plans`` in order (see :class:`ani.campaign.executors.base.Executor`)."""
        for plan in plans:
            sink.started(plan)

            def on_event(event: dict[str, Any], rid: str = plan.run_id) -> None:
                sink.event(rid, event)

            record = call_target(self._target, plan, Path(out_dir), deps=self._deps, on_event=on_event)
            sink.finished(plan, record)

    def close(self) -> None:
        """Nothing to release."""
