#!/usr/bin/env python3
"""How the time of one change grows with its size (issue 23 §1, the bounds of one call).

Usage (``frr`` needs root: it brings a lab up and always removes it)::

    .venv/bin/python benchmarks/change_size.py plan [N ...]     # default 250 500 1000 2000
    .venv/bin/python benchmarks/change_size.py frr [N ...]      # default 250 500 1000

``plan``: A3-T's compile and check of N ``prefix-list-entry`` add changes, each on the four
routers c1, c2, e1, e2 of ``scenarios/brownfield-small.yaml`` (``ani.intents.validate.plan`` on
the scenario's configs, no lab; what ``plan`` / ``apply`` do before anything is sent). Prints
seconds per N.

``frr``: FRR applying N prefix-list entries through ``ani.device.apply.apply`` (frr-reload,
verified) on r1 of ``tests/data/a1_pair.yaml``, then removing them again. Prints seconds of
each per N. The load average is printed first: other suites on the machine change every figure.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from ipaddress import IPv4Network
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def prefix(i: int) -> str:
    return f"10.{i >> 8 & 255}.{i & 255}.0/24"


def bench_plan(sizes: list[int]) -> None:
    from ani.intents.inventory import network_configs
    from ani.intents.pools import Pools
    from ani.intents.validate import plan
    from ani.scenario.manifest import load_scenario

    configs = network_configs(load_scenario(ROOT / "scenarios" / "brownfield-small.yaml"))
    routers = ["c1", "c2", "e1", "e2"]
    plan([], configs)  # imports and the YANG model, outside the figures
    for n in sizes:
        changes = [{"type": "prefix-list-entry", "action": "add", "routers": routers, "name": "PL-BIG",
                    "prefix": prefix(i)} for i in range(n)]
        t0 = time.monotonic()
        plan(changes, configs, pools=Pools.from_configs(configs))
        print(f"plan  {n:6d} changes x 4 routers: {time.monotonic() - t0:8.1f} s", flush=True)


def bench_frr(sizes: list[int]) -> None:
    from ani.device import apply as dev
    from ani.device.model import PrefixList, PrefixListEntry
    from ani.lab import Lab

    lab = Lab(ROOT / "tests" / "data" / "a1_pair.yaml", lab_id="bcs" + uuid.uuid4().hex[:4])
    lab.up()
    try:
        base = dev.read(lab, "r1")
        for n in sizes:
            want = base.model_copy(deep=True)
            want.prefix_lists["PL-BIG"] = PrefixList(entries=[
                PrefixListEntry(seq=i + 1, action="permit", prefix=IPv4Network(prefix(i))) for i in range(n)])
            t0 = time.monotonic()
            dev.apply(lab, "r1", want.canonical(), timeout=3600)
            t1 = time.monotonic()
            dev.apply(lab, "r1", base, timeout=3600)
            print(f"frr   {n:6d} entries: apply {t1 - t0:8.1f} s, remove {time.monotonic() - t1:6.1f} s", flush=True)
    finally:
        lab.down()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["plan", "frr"])
    ap.add_argument("sizes", nargs="*", type=int)
    args = ap.parse_args()
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    if args.what == "plan":
        bench_plan(args.sizes or [250, 500, 1000, 2000])
    else:
        bench_frr(args.sizes or [250, 500, 1000])


if __name__ == "__main__":
    main()
