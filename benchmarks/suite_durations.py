#!/usr/bin/env python3
"""Where ``make test``'s time goes, from a ``--junitxml`` report, and the wall time the
``--dist loadfile`` schedule gives it (issue 28 §4).

Usage::

    .venv/bin/python -m pytest -n 3 --dist loadfile --junitxml=REPORT.xml   # (make test's run)
    .venv/bin/python benchmarks/suite_durations.py REPORT.xml [--top 30] [--workers 3]
    .venv/bin/python benchmarks/suite_durations.py REPORT.xml --write   # tests/data/file-durations.json

Prints the worker time (the sum of the tests' times: setup, call and teardown), the files that
take the most, and the wall time of the files handed out to ``--workers`` workers (a simulation
of xdist's ``loadfile``: one file to one worker, a worker given the next file when two or fewer
of its tests are left) in two orders: xdist's own (most tests first) and the longest file first
(``tests/file_order.py``, what ``make test`` does). The simulation has no load: it splits the
recorded times, it does not know that three workers on two cores slow each other.

``--write`` records the seconds per file in ``tests/data/file-durations.json``, which
``tests/file_order.py`` orders by.
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = ROOT / "tests" / "data" / "file-durations.json"


def test_file(classname: str) -> str:
    """The test file of a junit ``classname`` (``tests.unit.test_x`` or ``tests.unit.test_x.
    TestY``): the longest dotted prefix that names a file under the repository."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        path = "/".join(parts[:n]) + ".py"
        if (ROOT / path).is_file():
            return path
    return "/".join(parts) + ".py"


def read_report(path: Path) -> dict[str, list[float]]:
    """``{test file: [seconds of each test, in the report's order]}``."""
    files: dict[str, list[float]] = defaultdict(list)
    for case in ET.parse(path).getroot().iter("testcase"):
        files[test_file(case.get("classname", ""))].append(float(case.get("time") or 0.0))
    return dict(files)


def simulate(files: dict[str, list[float]], order: Callable[[list[str]], str], workers: int) -> float:
    """Wall seconds of xdist's ``loadfile`` with ``workers`` workers, each free worker given
    ``order(files left)``."""
    left = dict(files)
    queue: list[list[float]] = [[] for _ in range(workers)]
    clock = [0.0] * workers

    def give(w: int) -> None:
        while left and len(queue[w]) <= 2:
            queue[w].extend(left.pop(order(list(left))))
            if len(queue[w]) > 2:
                break

    for w in range(workers):
        if left:
            queue[w].extend(left.pop(order(list(left))))
    for w in range(workers):
        give(w)
    while any(queue):
        w = min((w for w in range(workers) if queue[w]), key=lambda w: clock[w] + queue[w][0])
        clock[w] += queue[w].pop(0)
        give(w)
    return max(clock)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--write", action="store_true", help=f"record the seconds per file in {RECORD}")
    args = ap.parse_args()
    files = read_report(args.report)
    total = {f: sum(t) for f, t in files.items()}
    print(f"{sum(len(t) for t in files.values())} tests in {len(files)} files, "
          f"{sum(total.values()):.0f} s of worker time")
    for name, s in sorted(total.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"  {s:8.1f} s  {len(files[name]):4d} tests  {name}")
    collected = sorted(files)  # pytest collects tests/integration before tests/unit, by name
    by_count = sorted(collected, key=lambda f: -len(files[f]))
    print(f"wall, {args.workers} workers, xdist's order (most tests first): "
          f"{simulate(files, lambda left: next(f for f in by_count if f in left), args.workers):.0f} s")
    print(f"wall, {args.workers} workers, longest file first: "
          f"{simulate(files, lambda left: max(left, key=total.__getitem__), args.workers):.0f} s")
    print(f"lower bound: {max(sum(total.values()) / args.workers, max(total.values())):.0f} s")
    if args.write:
        RECORD.write_text(json.dumps({f: round(s, 1) for f, s in sorted(total.items())}, indent=0) + "\n")
        print(f"wrote {RECORD.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
