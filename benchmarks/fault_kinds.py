#!/usr/bin/env python3
"""How long each core fault kind takes to inject, verify, remove and check removed on a real lab
(the harness time a fault adds to a run, spent between two of the agent's tool calls).

Usage (as root)::

    .venv/bin/python benchmarks/fault_kinds.py [-n 5]

One lab of ``scenarios/brownfield-small.yaml`` (no NETCONF server) is brought up and always
removed. Per kind (link_down on c1-e1 both ends, packet_loss 30 % on c1-e1, daemon_restart of
bgpd on e1 with its running config) ``n`` rounds of inject / verify / remove / removed, each
timed; figures are the median and max in milliseconds. The load average is printed first
(other labs on a shared machine slow every ``ip netns exec``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ani.faults.base import FaultSpec, get_fault_kind  # noqa: E402
from ani.lab.lab import Lab  # noqa: E402
from ani.scenario import load_scenario  # noqa: E402

SPECS = [
    FaultSpec(kind="link_down", at_step=1, target={"link": ["c1", "e1"]}, params={"ends": "both"}),
    FaultSpec(kind="packet_loss", at_step=1, target={"link": ["c1", "e1"]}, params={"loss_pct": 30}),
    FaultSpec(kind="daemon_restart", at_step=1, target={"router": "e1"}, params={"daemon": "bgpd"}),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=5)
    args = ap.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    scenario = load_scenario("scenarios/brownfield-small.yaml")
    lab = Lab(scenario.topology, lab_id="bf" + secrets.token_hex(3), netconf=False)
    try:
        lab.up()
        print(f"{'kind':16s} {'inject':>14s} {'verify':>14s} {'remove':>14s} {'removed':>14s}  (median / max ms)")
        for spec in SPECS:
            kind = get_fault_kind(spec.kind)
            times: dict[str, list[float]] = {k: [] for k in ("inject", "verify", "remove", "removed")}
            for _ in range(args.n):
                t0 = time.monotonic()
                h = kind.inject(lab, spec)
                t1 = time.monotonic()
                ok, detail = kind.verify(lab, spec, h)
                t2 = time.monotonic()
                assert ok, detail
                kind.remove(lab, spec, h)
                t3 = time.monotonic()
                ok, detail = kind.removed(lab, spec, h)
                t4 = time.monotonic()
                assert ok, detail
                for k, v in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
                    v_ms = v * 1000
                    times[k].append(v_ms)
                time.sleep(1.0)  # let routing settle between rounds
            cols = " ".join(f"{statistics.median(v):7.0f} /{max(v):5.0f}" for v in times.values())
            print(f"{spec.kind:16s} {cols}")
    finally:
        lab.down()


if __name__ == "__main__":
    main()
