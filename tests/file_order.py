"""The order in which ``make test`` (``pytest -n 4 --dist loadfile``) hands test files to its
workers: the longest first (issue 28 §4).

pytest-xdist's ``loadfile`` gives one file to one worker (a module's lab starts once) and, by
default, hands the files out by number of tests, most first. The many short unit-test files went
first and the integration files of one to three tests, each a campaign or a lab of minutes, last:
the run ended with one worker on a 300 s file while the others idled. Handing out the longest
first (the LPT rule) ends it on short files instead.

The seconds per file come from a recorded run (``tests/data/file-durations.json``: ``{"path":
seconds}``, the sum of the file's test times, setup and teardown included; written by
``benchmarks/suite_durations.py`` from a ``--junitxml`` report). A file the record does not know
weighs :data:`UNKNOWN_INTEGRATION_S` under ``tests/integration/`` (a new lab test, somewhere in
the middle), else 0 (after every known one, in xdist's own order). The record only orders: a
stale one costs wall time, never a test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xdist.scheduler import LoadFileScheduling

DURATIONS = Path(__file__).parent / "data" / "file-durations.json"
UNKNOWN_INTEGRATION_S = 60.0


def file_weights(path: Path = DURATIONS) -> dict[str, float]:
    """``{test file path relative to the repository root: seconds}`` of the record; ``{}`` when
    it is missing or unreadable (xdist's order then, integration files first)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def weight(scope: str, weights: dict[str, float]) -> float:
    """Seconds expected of the test file ``scope`` (a node id's file part, e.g.
    ``tests/unit/test_x.py``)."""
    if scope in weights:
        return weights[scope]
    return UNKNOWN_INTEGRATION_S if "integration/" in scope else 0.0


class LongestFileFirst(LoadFileScheduling):
    """``--dist loadfile``, each free worker given the longest file left (see the module
    docstring); everything else is xdist's."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self.weights = file_weights()

    def _assign_work_unit(self, node: Any) -> None:
        # xdist pops the first unit of its (ordered) work queue: move the longest there first
        scope = max(self.workqueue, key=lambda s: weight(s, self.weights))
        self.workqueue.move_to_end(scope, last=False)
        super()._assign_work_unit(node)
