#!/usr/bin/env python3
"""Every baseline invariant passes: consecutive seeds x three densities x each shipped manifest.

Usage (as root)::

    .venv/bin/python benchmarks/verify_baselines.py [--seeds 10] [--first-seed 1] [--manifest NAME ...]
        [--densities 2,4,8] [--jsonl FILE]

For each shipped manifest (``scenarios/*.yaml`` with ``layers:``; or the ``--manifest`` names),
each density (default: half, once and twice the manifest's density) and each seed: generate the
scenario, bring its lab up (real FRR, no NETCONF server: routing is what the invariants test),
evaluate every invariant with the observer (``bound_s`` 20), take the lab down. Prints one row
per scenario and a summary per (manifest, density); exits 1 if any invariant failed or a lab did
not come up. Every lab is removed, also on failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_generate import shipped_manifests  # noqa: E402
from lab_up_down import machine  # noqa: E402


def run_one(path: Path, seed: int, density: int) -> dict:
    from ani.errors import AniError
    from ani.lab import Lab
    from ani.observer import Observer
    from ani.scenario.generate import generate_scenario

    row: dict = {"manifest": path.stem, "density": density, "seed": seed}
    t0 = time.monotonic()
    s = generate_scenario(path, seed=seed, density=density)
    row.update(gen_s=time.monotonic() - t0, hash=s.hash, routers=len(s.topology.routers), hosts=len(s.topology.hosts),
               invariants=len(s.invariants))
    lab = Lab(s.topology, netconf=False)
    try:
        t1 = time.monotonic()
        lab.up()
        row["up_s"] = time.monotonic() - t1
        t2 = time.monotonic()
        results = Observer(lab).evaluate(s.invariants, bound_s=20.0)
        row["check_s"] = time.monotonic() - t2
        row["failed"] = [f"{r.name}: {r.detail}" for r in results if not r.passed]
    except AniError as exc:
        row["error"] = str(exc)[:500]
    finally:
        lab.down()
    row["down_s"] = lab.timings.get("down_s")
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10, help="consecutive seeds per density")
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--manifest", action="append", default=None, help="manifest name under scenarios/ (repeatable)")
    ap.add_argument("--densities", default=None, help="comma-separated densities (default: d/2, d, 2d of the manifest)")
    ap.add_argument("--jsonl", type=Path, default=None, help="also append one JSON line per scenario here")
    args = ap.parse_args()

    from ani.scenario.generate import load_manifest

    paths = [ROOT / "scenarios" / f"{n}.yaml" for n in args.manifest] if args.manifest else shipped_manifests()
    print(machine())
    print(f"load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    head = (f"{'manifest':10s} {'dens':>4s} {'seed':>4s} {'hash':12s} {'rtr':>3s} {'hosts':>5s} {'invs':>5s} "
            f"{'gen s':>6s} {'up s':>6s} {'check s':>7s} {'down s':>6s}  result")
    print(head, flush=True)
    bad = 0
    summary: dict[tuple[str, int], list[dict]] = {}
    for path in paths:
        m = load_manifest(path)
        dens = ([int(x) for x in args.densities.split(",")] if args.densities
                else sorted({max(1, m.density // 2), m.density, 2 * m.density}))
        for d in dens:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                row = run_one(path, seed, d)
                ok = "error" not in row and not row["failed"]
                bad += not ok
                summary.setdefault((m.name, d), []).append(row)
                result = ("ok" if ok else (f"LAB: {row['error']}" if "error" in row
                                           else f"{len(row['failed'])} FAILED: {'; '.join(row['failed'][:3])}"))
                print(f"{m.name:10s} {d:4d} {seed:4d} {row['hash'][:12]} {row['routers']:3d} {row['hosts']:5d} "
                      f"{row['invariants']:5d} {row['gen_s']:6.2f} {row.get('up_s', float('nan')):6.2f} "
                      f"{row.get('check_s', float('nan')):7.2f} {row['down_s'] or float('nan'):6.2f}  {result}", flush=True)
                if args.jsonl:
                    with args.jsonl.open("a") as fh:
                        fh.write(json.dumps(row) + "\n")
    print("\nsummary (max over seeds)")
    print(f"{'manifest':10s} {'dens':>4s} {'labs':>4s} {'passed':>6s} {'invariants':>10s} {'up s':>6s} {'check s':>7s}")
    for (name, d), rows in summary.items():
        passed = sum("error" not in r and not r["failed"] for r in rows)
        print(f"{name:10s} {d:4d} {len(rows):4d} {passed:6d} {max(r['invariants'] for r in rows):10d} "
              f"{max(r.get('up_s', 0) for r in rows):6.2f} {max(r.get('check_s', 0) for r in rows):7.2f}")
    print(f"load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    print("ALL BASELINES PASS" if not bad else f"{bad} scenario(s) FAILED")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
