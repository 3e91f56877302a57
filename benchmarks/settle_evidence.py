#!/usr/bin/env python3
"""The settle before grading on evidence (issue 24 §3): after a prefix-list change, when bgpd's
route-map update timer fires, how long the RIBs keep changing after it, and whether the settle
(:func:`ani.observer.settle.wait_settled`) ever ends before the last change.

Usage (as root)::

    .venv/bin/python benchmarks/settle_evidence.py [--rounds 8] [--busy 0] [--json FILE]

Brings up the demo's lab (``scenarios/default.yaml`` generated with seed 7: 9 routers) and, per
round, removes then re-adds three prefix-list entries of the border edge ``e1`` (vtysh, as an
agent would): the first entry of ``PL-TENANTS`` (the tenant prefixes redistributed to the
reflectors), of ``PL-EXT-IN`` (what the external peer may send: a route refresh to ``x1``) and of
``PL-EXT-OUT`` (what it is sent). Each change takes effect when e1's route-map update timer fires
(``bgp route-map delay-timer 1``). From the end of the vtysh call, for 3 s: every router's
pending timers (:func:`ani.lab.converge.pending_timers`) and routing state
(:func:`ani.lab.converge.routing_state`) are read in a loop, and beside it the settle runs as
the runner calls it (floor: the delay timer, cap: the old fixed settle, timer + 1 s). Per
change: when the route-map timer was last seen pending, every RIB change, the largest gap
between the timer's end and a RIB change or two RIB changes, when the settle ended and how, and
whether a RIB change came after it (a miss); how long one look (pending timers and routing state
of every router) took, median and max. ``--busy N`` runs N busy-looping processes beside it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CAP_S, FLOOR_S, WATCH_S = 2.0, 1.0, 3.0


def _busy() -> None:
    while True:
        pass


def one_change(lab, router: str, line: str) -> dict:
    from ani.lab import converge
    from ani.observer.settle import settle_reader, wait_settled

    lab.vtysh(router, ["configure terminal", line])
    t0 = time.monotonic()
    settle: dict = {}

    def run_settle() -> None:
        by = wait_settled(*settle_reader(lab), floor_at=t0 + FLOOR_S, cap_at=t0 + CAP_S)
        settle.update(by=by, at=round(time.monotonic() - t0, 3))

    th = threading.Thread(target=run_settle)
    th.start()
    last = converge.routing_state(lab)
    changes: list[float] = []
    timer_last = None
    looks: list[float] = []
    while time.monotonic() - t0 < WATCH_S:
        t1 = time.monotonic()
        pend = converge.pending_timers(lab)
        now = time.monotonic() - t0
        if any(p.endswith("bgp_route_map_update_timer") for p in pend):
            timer_last = round(now, 3)
        s = converge.routing_state(lab)
        looks.append(time.monotonic() - t1)
        if s != last:
            last = s
            changes.append(round(time.monotonic() - t0, 3))
    th.join()
    edges = ([timer_last] if timer_last is not None else []) + changes
    gaps = [round(b - a, 3) for a, b in zip(edges, edges[1:])]
    with open("/proc/loadavg") as f:
        load = float(f.read().split()[0])
    return {"change": f"{router}: {line}", "timer_last_seen_s": timer_last, "rib_changes_s": changes,
            "last_after_timer_s": round(changes[-1] - timer_last, 3) if changes and timer_last else None,
            "max_gap_s": max(gaps, default=None), "settle": settle,
            "look_s": {"median": round(statistics.median(looks), 3), "max": round(max(looks), 3)},
            "miss": bool(changes and changes[-1] > settle.get("at", 0)), "load": load}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--busy", type=int, default=0, help="busy-looping processes beside it")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from lab_up_down import machine

    from ani.lab.lab import Lab
    from ani.scenario.generate import generate_scenario

    scen = generate_scenario(ROOT / "scenarios" / "default.yaml", seed=7)
    e1 = scen.device_configs["e1"]
    lines = []
    for name in ("PL-TENANTS", "PL-EXT-IN", "PL-EXT-OUT"):
        e = e1.prefix_lists[name].entries[0]
        lines.append(f"ip prefix-list {name} seq {e.seq} {e.action} {e.prefix}")
    print(machine())
    busy = [multiprocessing.Process(target=_busy, daemon=True) for _ in range(args.busy)]
    for p in busy:
        p.start()
    rows = []
    lab = Lab(scen.topology, netconf=False, ssh=False).up()
    try:
        time.sleep(2.0)
        for _ in range(args.rounds):
            for line in lines:
                for cmd in (f"no {line}", line):
                    row = one_change(lab, "e1", cmd)
                    rows.append(row)
                    print(f"  {row['change'][:52]:52s} timer {row['timer_last_seen_s']} changes {row['rib_changes_s']} "
                          f"max gap {row['max_gap_s']} look {row['look_s']} settle {row['settle']} miss {row['miss']} load {row['load']}",
                          flush=True)
                    if args.json:
                        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    finally:
        lab.down()
        for p in busy:
            p.terminate()
    after = [r["last_after_timer_s"] for r in rows if r["last_after_timer_s"] is not None]
    gaps = [r["max_gap_s"] for r in rows if r["max_gap_s"] is not None]
    ats = [r["settle"]["at"] for r in rows if "at" in r["settle"]]
    print(f"\n{len(rows)} changes, load {min(r['load'] for r in rows)}-{max(r['load'] for r in rows)}")
    print(f"RIB changes after the timer's last sighting: median {statistics.median(after):.3f} s, max {max(after):.3f} s")
    print(f"largest gap per change: median {statistics.median(gaps):.3f} s, max {max(gaps):.3f} s")
    print(f"settle ended after: median {statistics.median(ats):.3f} s, max {max(ats):.3f} s "
          f"(by evidence {sum(r['settle'].get('by') == 'evidence' for r in rows)}, at the cap "
          f"{sum(r['settle'].get('by') == 'cap' for r in rows)}); misses {sum(r['miss'] for r in rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
