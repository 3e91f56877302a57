#!/usr/bin/env python3
"""Wall time of ``Lab.up()`` (including convergence) and ``Lab.down()``.

Usage (as root)::

    .venv/bin/python benchmarks/lab_up_down.py [FILE] [-n 5]

FILE is a topology or scenario file; default ``scenarios/brownfield-small.yaml`` (falls back to
``tests/data/tri-ospf-ibgp.yaml`` if the scenario is absent). Prints per-run figures and
median / min / max of: up (total), build (namespaces, links, daemons, config), converge, down.
Every lab is removed, also on failure or Ctrl-C. ``--add-config LINE`` inserts a global FRR line
into every router's config (to measure a tuning without editing the scenario).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "scenarios" / "brownfield-small.yaml"
FALLBACK = ROOT / "tests" / "data" / "tri-ospf-ibgp.yaml"


def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.node()}: {os.cpu_count()} cpus ({cpu}), kernel {platform.release()}, Python {platform.python_version()}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT if DEFAULT.exists() else FALLBACK)
    ap.add_argument("-n", "--repeat", type=int, default=5)
    ap.add_argument("--add-config", metavar="LINE", action="append", default=[],
                    help="global FRR config line inserted after 'hostname' on every router (experiments, "
                         "e.g. 'bgp route-map delay-timer 0')")
    args = ap.parse_args()

    from ani.lab import Lab, load_topology

    topo = load_topology(args.file)
    for r, spec in topo.routers.items():
        for line in args.add_config:
            spec.config = spec.config.replace(f"hostname {r}\n", f"hostname {r}\n{line}\n", 1)
    if args.add_config:
        print(f"added to every router's config: {args.add_config}")
    print(f"{args.file} ({topo.name}): {len(topo.routers)} routers, {len(topo.hosts)} hosts, {len(topo.links)} links")
    print(machine())
    print(f"load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    rows: dict[str, list[float]] = {"up": [], "build": [], "converge": [], "down": []}
    for i in range(args.repeat):
        lab = Lab(topo)
        try:
            t0 = time.monotonic()
            lab.up()
            t_up = time.monotonic() - t0
        finally:
            lab.down()
        t_down = lab.timings["down_s"]
        rows["up"].append(t_up)
        rows["build"].append(lab.timings["build_s"])
        rows["converge"].append(lab.timings["converge_s"])
        rows["down"].append(t_down)
        print(f"run {i + 1}: up {t_up:.2f} s (build {lab.timings['build_s']:.2f} + converge "
              f"{lab.timings['converge_s']:.2f}), down {t_down:.2f} s", flush=True)
    print(f"\n{'phase':10s} {'median':>8s} {'min':>8s} {'max':>8s}   (seconds, n={args.repeat})")
    for k, v in rows.items():
        print(f"{k:10s} {statistics.median(v):8.2f} {min(v):8.2f} {max(v):8.2f}")
    print(f"load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
