#!/usr/bin/env python3
"""A full run's harness overhead: variant, lab up (with convergence), baseline check, grading
and teardown, with the agent's own time separated.

Usage (as root)::

    .venv/bin/python benchmarks/run_overhead.py [CAMPAIGN] [--cell a1] [-n 3]

CAMPAIGN is a campaign file (default ``campaigns/level-sweep.yaml``: brownfield-small,
onboard-site, scripted agent); the runs are ``ani.campaign.runner.run_one`` of the cell for
seeds ``seed .. seed+n-1`` (the first variant of each), with the real lab, observer, adapter and
agent, into a temporary results folder. Prints per run the phases (``RunRecord``: lab_up_s,
baseline_s, agent_s, grading_s, teardown_s, wall_s) and the overhead ``wall_s - agent_s``, then
the medians. Every lab is removed, also on failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from lab_up_down import machine  # noqa: E402

PHASES = ("lab_up_s", "baseline_s", "agent_s", "grading_s", "teardown_s", "wall_s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("campaign", nargs="?", default=str(ROOT / "campaigns" / "level-sweep.yaml"))
    ap.add_argument("--cell", default=None, help="cell name (default: the campaign's first)")
    ap.add_argument("-n", "--repeat", type=int, default=3)
    args = ap.parse_args()

    from ani.campaign.runner import RunnerDeps, prepare, run_one
    from ani.campaign.spec import load_spec

    spec = load_spec(args.campaign)
    cell = spec.cell(args.cell) if args.cell else spec.cells[0]
    deps = RunnerDeps()
    scen, _task = prepare(spec, deps, cell)
    print(f"{args.campaign}: cell {cell.name} ({cell.level}), task {spec.task_of(cell)}, scenario "
          f"{scen.name} ({len(scen.topology.routers)} routers, {len(list(scen.invariants))} invariants)")
    print(machine())
    rows = []
    with tempfile.TemporaryDirectory(prefix="ani-bench-") as out:
        for seed in range(spec.seed, spec.seed + args.repeat):
            rec = run_one(spec, cell, seed, out, deps=deps)
            row = {p: getattr(rec, p) for p in PHASES}
            row["overhead_s"] = rec.wall_s - (rec.agent_s or 0.0)
            rows.append(row)
            print(f"  seed {seed}: {rec.label}; " + ", ".join(
                f"{k} {v:.2f}" for k, v in row.items() if v is not None))
    print("median: " + ", ".join(
        f"{k} {statistics.median(r[k] for r in rows if r[k] is not None):.2f}"
        for k in (*PHASES, "overhead_s") if any(r[k] is not None for r in rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
