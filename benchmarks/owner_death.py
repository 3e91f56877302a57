#!/usr/bin/env python3
"""How long a lab outlives an owner killed with SIGKILL (its reaper removes it, ``ani.lab.reaper``).

Usage (as root)::

    .venv/bin/python benchmarks/owner_death.py [FILE] [-n 5]

Each run starts a script that brings up FILE (default ``scenarios/brownfield-small.yaml``) and
sleeps, kills it with SIGKILL once the lab is up, and measures the time until nothing of the lab
is left (lab dir, namespaces, FRR dirs). Prints per-run figures and median / min / max.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

OWNER = "import sys, time\nfrom ani.lab import Lab\nlab = Lab(sys.argv[1]).up()\nprint(lab.id, flush=True)\ntime.sleep(300)\n"


def left(lab_id: str) -> bool:
    from ani.lab import frr
    from ani.lab.netns import list_netns
    from ani.lab.state import lab_dir

    p = f"ani-{lab_id}-"
    return (lab_dir(lab_id).exists() or any(n.startswith(p) for n in list_netns())
            or any(d.name.startswith(p) for root in (frr.ETC_ROOT, frr.RUN_ROOT) if root.exists()
                   for d in root.iterdir()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=str(ROOT / "scenarios" / "brownfield-small.yaml"))
    ap.add_argument("-n", type=int, default=5)
    a = ap.parse_args()
    times = []
    for i in range(a.n):
        p = subprocess.Popen([sys.executable, "-c", OWNER, a.file], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        lab_id = p.stdout.readline().strip() if p.stdout else ""
        t0 = time.monotonic()
        p.kill()
        p.wait()
        while left(lab_id) and time.monotonic() - t0 < 30:
            time.sleep(0.01)
        dt = time.monotonic() - t0
        times.append(dt)
        print(f"run {i + 1}: lab {lab_id} gone {dt:.2f} s after SIGKILL of its owner" + ("" if dt < 30 else " (NOT GONE)"))
    print(f"\nmedian {statistics.median(times):.2f} s, min {min(times):.2f}, max {max(times):.2f} (n={a.n}); "
          f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
