#!/usr/bin/env python3
"""The cost of the command score's frr-reload cross-check (``ani.netconfbench.reload_check``),
per router and per run, beside hier-config's diff it checks (no lab: frr-reload reads both
configurations from files).

Usage::

    .venv/bin/python benchmarks/ncb_crosscheck.py [-n 5]

For each shipped NetConfBench task (``intents/netconfbench/*.json``, in the lab's names), the
start and its first solution's end state: ``-n`` times, every router's ``frr-reload.py --test``
one at a time (per router: its wall time, the process's start and vtysh's two ``-m`` reads
included) and the task's whole cross-check (the routers in parallel, ``WORKERS`` at a time,
as the runner does it). Figures: median / min / max over all of them, milliseconds, and the
median of hier-config's diff of the same router for comparison.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ani.device.remediation import frr_text  # noqa: E402
from ani.device.parse import parse  # noqa: E402
from ani.netconfbench.command_score import applied_changes, solution_end_state  # noqa: E402
from ani.netconfbench.lab import task_scenario  # noqa: E402
from ani.netconfbench.reload_check import WORKERS, _programs, crosscheck, frr_reload_test  # noqa: E402
from ani.netconfbench.task import load_tasks  # noqa: E402
from ani.observer.changes import config_changes  # noqa: E402


def _ms(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.0f} ms (min {min(xs) * 1000:.0f}, max {max(xs) * 1000:.0f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=5, help="repetitions per task")
    args = ap.parse_args()
    fr, vt, missing = _programs()
    if fr is None or vt is None:
        sys.exit(missing)
    per_router: list[float] = []
    per_task: list[float] = []
    hier: list[float] = []
    routers = tasks = 0
    for path, task in load_tasks(ROOT / "intents" / "netconfbench"):
        mapped = task_scenario(task, source=path).task
        initial = {d: parse(t) for d, t in mapped.startup_configs.items()}
        final = {**initial, **solution_end_state(initial, mapped.ground_truth_configs[0].configs)}
        applied = applied_changes(initial, final)
        tasks += 1
        routers += len(initial)
        for _ in range(args.n):
            for r in initial:
                t0 = time.perf_counter()
                config_changes(initial[r], final[r])
                hier.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                frr_reload_test(frr_text(initial[r]), frr_text(final[r]), frr_reload=fr, vtysh=vt)
                per_router.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            checked, note = crosscheck(initial, final, applied)
            per_task.append(time.perf_counter() - t0)
            assert checked is not None and not note, (path.name, note)
    load = os.getloadavg()[0]
    print(f"{tasks} tasks, {routers} routers, {args.n} repetitions, {os.cpu_count()} cores, load {load:.1f}")
    print(f"frr-reload --test per router: {_ms(per_router)}")
    print(f"cross-check per task ({WORKERS} routers at a time): {_ms(per_task)}")
    print(f"hier-config diff per router: {statistics.median(hier) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
