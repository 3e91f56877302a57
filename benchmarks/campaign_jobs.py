#!/usr/bin/env python3
"""A campaign's wall time by executor, in one benchmark run: ``--jobs 1`` against the default
``--jobs`` of this machine (or the values given), the same plans each time (issue 24 §4).

Usage (as root)::

    .venv/bin/python benchmarks/campaign_jobs.py [CAMPAIGN] [--jobs 1 default] [--variants S]

CAMPAIGN defaults to ``campaigns/level-sweep-default.yaml`` (``make demo``). Each setting runs
``ani campaign run CAMPAIGN --jobs J --out TMP/jJ --no-progress`` as a user does (the default:
no ``--jobs``), one after the other. Prints per setting the wall time (seconds), runs per minute,
the median run wall time and harness time (``wall_s - agent_s``), the ratio of each to the first
setting, and whether every run id has the same verdict (label) in every setting.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANI = str(Path(sys.executable).with_name("ani"))


def run(campaign: str, jobs: str, out: Path, variants: int | None) -> dict:
    cmd = [ANI, "campaign", "run", campaign, "--out", str(out), "--no-progress"]
    cmd += [] if jobs == "default" else ["--jobs", jobs]
    cmd += [] if variants is None else ["--variants", str(variants)]
    t0 = time.monotonic()
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.monotonic() - t0
    recs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines() if line.strip()]
    first = res.stdout.splitlines()[0] if res.stdout else ""
    return {
        "jobs": jobs, "said": first if first.startswith("--jobs") else "", "exit": res.returncode,
        "wall_s": round(wall, 1), "runs": len(recs), "per_min": round(60 * len(recs) / wall, 2),
        "run_s": round(statistics.median(r["wall_s"] for r in recs), 2),
        "harness_s": round(statistics.median(r["wall_s"] - (r["agent_s"] or 0) for r in recs), 2),
        "labels": {r["run_id"]: r["label"] for r in recs},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("campaign", nargs="?", default=str(ROOT / "campaigns" / "level-sweep-default.yaml"))
    ap.add_argument("--jobs", nargs="+", default=["1", "default"], help="settings (a number or 'default')")
    ap.add_argument("--variants", type=int, default=None)
    ap.add_argument("--json", default=None, help="also write the results here")
    args = ap.parse_args()
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[:3]
    print(f"load average before: {' '.join(load)}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="ani-bench-jobs-", dir=str(ROOT)) as tmp:
        for jobs in args.jobs:
            rows.append(run(args.campaign, jobs, Path(tmp) / f"j{jobs}", args.variants))
            r = rows[-1]
            print(f"--jobs {jobs:>7}: {r['wall_s']:7.1f} s, {r['runs']} runs, {r['per_min']:5.2f} runs/min, "
                  f"median run {r['run_s']:5.1f} s, median harness {r['harness_s']:5.2f} s, exit {r['exit']} "
                  f"{r['said']}")
    base = rows[0]
    for r in rows[1:]:
        same = r["labels"] == base["labels"]
        print(f"--jobs {r['jobs']} vs --jobs {base['jobs']}: {base['wall_s'] / r['wall_s']:.2f}x faster; "
              f"same verdict for every run id: {same}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0 if all(r["labels"] == base["labels"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
