#!/usr/bin/env python3
"""A0's change detection: one capture of a router's state (``A0Adapter.state_of``), which every
``shell`` call makes twice (before and after the command).

Usage (as root)::

    .venv/bin/python benchmarks/a0_capture.py [FILE] [-n 50] [--router e1]

FILE is the scenario (default ``scenarios/brownfield-small.yaml``). One lab is brought up
(without its NETCONF server) and always removed. A capture is FRR's running config and the
nftables ruleset through the device layer's reader (``ani.device.state.read_state``: two runs
inside the router, each after the lab-gone and dead-daemon checks) plus one process for the
addresses, routes, rules and forwarding sysctls. Figures: median / p95 / min / max in
milliseconds (p95: nearest rank), wall time; the load average is printed first.
"""

from __future__ import annotations

import argparse
import math
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ani.adapters.a0 import A0Adapter  # noqa: E402
from ani.lab.lab import Lab  # noqa: E402
from ani.scenario.manifest import load_scenario  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", default=str(ROOT / "scenarios" / "brownfield-small.yaml"))
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--router", default="e1")
    args = ap.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    lab = Lab(load_scenario(args.file).topology, lab_id="a0cap" + secrets.token_hex(3), netconf=False)
    try:
        lab.up()
        adapter = A0Adapter(lab)
        adapter.state_of(args.router)  # warm-up
        times = []
        for _ in range(args.n):
            t0 = time.monotonic()
            assert adapter.state_of(args.router) is not None
            times.append((time.monotonic() - t0) * 1000)
    finally:
        lab.down()
    times.sort()
    p95 = times[max(0, math.ceil(0.95 * len(times)) - 1)]
    print(f"state_of({args.router}) ms: median {statistics.median(times):.1f}  p95 {p95:.1f}  "
          f"min {times[0]:.1f}  max {times[-1]:.1f}  (n = {len(times)})")


if __name__ == "__main__":
    main()
