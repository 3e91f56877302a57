#!/usr/bin/env python3
"""Wall time of the baseline check (every invariant of a scenario, evaluated by the observer
on a lab that is up), and where it goes.

Usage (as root)::

    .venv/bin/python benchmarks/baseline_check.py [SCENARIO] [-n 3]
    .venv/bin/python benchmarks/baseline_check.py --manifest scenarios/default.yaml --seed 7 --density 8

SCENARIO is a scenario file (default ``scenarios/brownfield-small.yaml``); ``--manifest``
generates one instead (``ani.scenario.generate.generate_scenario``). The lab is brought up once,
then the invariants are evaluated ``-n`` times (each a fresh :class:`ani.observer.Observer`, as
the campaign runner makes); prints the invariants per kind, per evaluation the wall time, the
vtysh reads and ping runs it made, the CPU time of the processes it started, and whether all
passed. ``--workers`` / ``--negative-workers`` set the observer's pools. The lab is removed
also on failure or Ctrl-C.

``--synthetic`` adds checks that hold on any converged scenario (every router pings every site
and has its route and every other loopback's, 40 absent /24 routes of the ``sites`` pool per
router, every host pings every loopback: 414 more on brownfield-small); ``--observer FILE``
evaluates with the ``Observer`` of another ``evaluate.py`` (e.g. ``git show
8096c5b:ani/observer/evaluate.py > /tmp/old_evaluate.py``), to compare.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from lab_up_down import machine  # noqa: E402


def load(args: argparse.Namespace):
    if args.manifest:
        from ani.scenario.generate import generate_scenario

        t0 = time.monotonic()
        scen = generate_scenario(args.manifest, seed=args.seed, density=args.density)
        print(f"generated {args.manifest} seed {args.seed} density {args.density}: "
              f"{time.monotonic() - t0:.2f} s, hash {scen.hash[:16]}")
        return scen
    from ani.scenario import load_scenario

    return load_scenario(args.scenario)


class Counting:
    """The lab, counting the observer's processes (vtysh reads, pings)."""

    def __init__(self, lab):
        self._lab = lab
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __getattr__(self, name):
        return getattr(self._lab, name)

    def vtysh_json(self, router, command, timeout=10.0):
        with self._lock:
            self.counts["vtysh"] += 1
        return self._lab.vtysh_json(router, command, timeout=timeout)

    def exec(self, node, argv, timeout=10.0, input=None):
        with self._lock:
            self.counts[argv[0] if argv else "?"] += 1
        return self._lab.exec(node, argv, timeout=timeout, input=input)


def synthetic(scen) -> list:
    """Checks that hold on any converged scenario (module doc)."""
    from ipaddress import IPv4Network

    from ani.observer.checks import ReachCheck, RouteCheck

    out = []
    loops = scen.loopbacks()
    pool = scen.pools.get("sites")
    used = scen.used_networks()
    free = [n for n in pool.network.subnets(new_prefix=pool.prefixlen) if not any(n.overlaps(u) for u in used)][:40] if pool else []
    for r in scen.topology.routers:
        for _t, site in scen.sites:
            out.append(ReachCheck(src=r, dst=scen.host_address(site.host), dst_node=site.host))
            out.append(RouteCheck(router=r, prefix=site.prefix))
        out += [RouteCheck(router=r, prefix=IPv4Network(f"{lo}/32")) for r2, lo in loops.items() if r2 != r]
        out += [RouteCheck(router=r, prefix=n, expect=False) for n in free]
    for _t, site in scen.sites:
        out += [ReachCheck(src=site.host, dst=lo) for lo in loops.values()]
    return out


def observer_class(path: Path | None):
    if path is None:
        from ani.observer import Observer

        return Observer
    import importlib.util

    spec = importlib.util.spec_from_file_location("other_evaluate", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Observer


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", nargs="?", type=Path, default=ROOT / "scenarios" / "brownfield-small.yaml")
    ap.add_argument("--manifest", type=Path)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--density", type=int)
    ap.add_argument("-n", "--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=32)
    ap.add_argument("--negative-workers", type=int, default=128)
    ap.add_argument("--synthetic", action="store_true", help="add the synthetic checks (module doc)")
    ap.add_argument("--observer", type=Path, help="evaluate with the Observer of this evaluate.py")
    args = ap.parse_args()

    from ani.lab import Lab
    from ani.observer.checks import ReachCheck

    Observer = observer_class(args.observer)
    scen = load(args)
    checks = list(scen.invariants) + (synthetic(scen) if args.synthetic else [])
    kinds = Counter(
        ("negative reach" if isinstance(c, ReachCheck) and not c.expect else c.kind) for c in checks
    )
    topo = scen.topology
    print(f"{scen.name}: {len(topo.routers)} routers, {len(topo.hosts)} hosts; {len(checks)} invariants: "
          + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print(machine())
    lab = Lab(topo)
    try:
        t0 = time.monotonic()
        lab.up()
        print(f"lab up (converged): {time.monotonic() - t0:.2f} s")
        walls = []
        for i in range(args.repeat):
            counted = Counting(lab)
            kw = {"negative_workers": args.negative_workers} if args.observer is None else {}
            obs = Observer(counted, workers=args.workers, **kw)
            c0, t0 = children_cpu(), time.monotonic()
            res = obs.evaluate(checks)
            wall = time.monotonic() - t0
            walls.append(wall)
            failed = [r for r in res if not r.passed]
            slowest = max(res, key=lambda r: r.elapsed_s) if res else None
            print(f"  evaluation {i + 1}: {wall:.2f} s, {len(res) - len(failed)}/{len(res)} passed; "
                  f"processes: {dict(counted.counts)}; their CPU {children_cpu() - c0:.2f} s"
                  + (f"; slowest {slowest.name} {slowest.elapsed_s:.2f} s" if slowest else ""))
            for r in failed[:5]:
                print(f"    FAIL {r.name}: {r.detail}")
        print(f"baseline check of {len(checks)} invariants: median {statistics.median(walls):.2f} s "
              f"(min {min(walls):.2f}, max {max(walls):.2f}) over {len(walls)}")
    finally:
        lab.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
