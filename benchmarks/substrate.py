#!/usr/bin/env python3
"""The substrate table (issue 24 §4), in the shape NIKA publishes: deploy time, convergence time,
cleanup time and peak memory of a lab, plus its CPU seconds, for the generated scenarios, next to
the raw netns + veth + FRR floor of the same topology.

Usage (as root)::

    .venv/bin/python benchmarks/substrate.py [--scenario default:7 --scenario pilot-25:7] [-n 5] [--idle 10]
                                             [--json FILE]

Each ``--scenario MANIFEST[:SEED[:DENSITY]]`` is generated as ``ani lab up`` / a campaign does
(:func:`ani.scenario.generate.generate_scenario`, the manifest's density unless given). For each
repetition, ani and the floor alternate (ani first in odd repetitions, the floor first in even
ones), so both see the same load; the table gives medians (min-max).

One cycle, in a cpuacct cgroup of its own (``labmeter.CpuAccount``):

- ani: ``Lab(topology).up()`` as ``ani lab up`` runs it (reaper, NETCONF and SSH servers, the
  routers' memory cgroups): *deploy* = its build (namespaces, veths, daemons, configs),
  *convergence* = until every OSPF adjacency is Full and every BGP session Established, *ready* =
  the whole ``up()`` (also waiting for the NETCONF and SSH servers to listen); idle ``--idle``
  seconds; ``down()`` = *cleanup*.
- floor (``rawfloor.RawLab``): the same topology by hand, the same convergence stopwatch.

*CPU*: CPU seconds charged to the cycle's cgroup (up + converge + idle + down; every process
involved, FRR daemons included), less the memory sampler's own thread. *Peak memory*: sampled
every 0.25 s during up, idle and until down starts: PSS (and RSS) summed over the lab's processes
(ani: FRR daemons, NETCONF and SSH servers, reaper; floor: FRR daemons) with psutil; for ani also
the routers' memory cgroups (``memory.usage_in_bytes``: daemons plus the kernel memory charged to
them). Kernel memory of namespaces and veths is in neither. The harness process (this one) is
not counted: ``parallel_labs.py`` counts a whole worker.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_up_down import machine  # noqa: E402
from labmeter import CpuAccount, MemorySampler, ani_lab_pids, loadavg, mib  # noqa: E402
from rawfloor import RawLab  # noqa: E402


def scenario_of(spec: str):  # type: ignore[no-untyped-def]
    """``MANIFEST[:SEED[:DENSITY]]`` -> the generated Scenario (``default`` -> scenarios/default.yaml)."""
    from ani.scenario.generate import generate_scenario

    name, _, rest = spec.partition(":")
    seed_s, _, dens_s = rest.partition(":")
    path = Path(name) if name.endswith(".yaml") else ROOT / "scenarios" / f"{name}.yaml"
    return generate_scenario(path, seed=int(seed_s or 7), density=int(dens_s) if dens_s else None)


def ani_cycle(topology, idle_s: float) -> dict[str, float]:  # type: ignore[no-untyped-def]
    from ani.lab import Lab, memcg

    lab = Lab(topology)
    with CpuAccount() as cpu:
        with MemorySampler(lambda: ani_lab_pids(lab), lambda: memcg.lab_cgroups(lab.id)) as mem:
            t0 = time.monotonic()
            try:
                lab.up()
                ready = time.monotonic() - t0
                time.sleep(idle_s)
                mem.sample()
            finally:
                mem._stop.set()
                lab.down()
        cpu_s = cpu.seconds() - mem.cpu_s
    tm = lab.timings
    return {"deploy_s": tm["build_s"], "converge_s": tm["converge_s"], "ready_s": ready, "cleanup_s": tm["down_s"],
            "pss_mib": mib(mem.peak_pss), "rss_mib": mib(mem.peak_rss), "cgroup_mib": mib(mem.peak_cgroup),
            "procs": mem.procs, "cpu_s": cpu_s}


def floor_cycle(topology, idle_s: float) -> dict[str, float]:  # type: ignore[no-untyped-def]
    lab = RawLab(topology)
    with CpuAccount() as cpu:
        with MemorySampler(lab.daemon_pids) as mem:
            t0 = time.monotonic()
            try:
                tm = lab.up()
                ready = time.monotonic() - t0
                time.sleep(idle_s)
                mem.sample()
            finally:
                mem._stop.set()
                tm_down = lab.down()
        cpu_s = cpu.seconds() - mem.cpu_s
    return {"deploy_s": tm["build_s"], "converge_s": tm["converge_s"], "ready_s": ready,
            "cleanup_s": tm_down["down_s"], "pss_mib": mib(mem.peak_pss), "rss_mib": mib(mem.peak_rss),
            "cgroup_mib": 0.0, "procs": mem.procs, "cpu_s": cpu_s}


COLS = [("deploy_s", "deploy s"), ("converge_s", "converge s"), ("ready_s", "ready s"), ("cleanup_s", "cleanup s"),
        ("pss_mib", "peak PSS MiB"), ("rss_mib", "peak RSS MiB"), ("cgroup_mib", "router cgroups MiB"),
        ("cpu_s", "CPU s")]


def fmt(vals: list[float]) -> str:
    return f"{statistics.median(vals):.2f} ({min(vals):.2f}-{max(vals):.2f})"


def table(rows: dict[str, list[dict[str, float]]]) -> str:
    head = "| lab | " + " | ".join(c[1] for c in COLS) + " | processes |"
    out = [head, "|" + "---|" * (len(COLS) + 2)]
    for name, runs in rows.items():
        cells = [fmt([r[k] for r in runs]) for k, _ in COLS]
        out.append(f"| {name} | " + " | ".join(cells) + f" | {int(statistics.median(r['procs'] for r in runs))} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", action="append", default=None, metavar="MANIFEST[:SEED[:DENSITY]]",
                    help="generated scenario (repeatable; default default:7 and pilot-25:7)")
    ap.add_argument("-n", "--repeat", type=int, default=5, help="cycles of each (ani and floor)")
    ap.add_argument("--idle", type=float, default=10.0, help="seconds a converged lab idles before down")
    ap.add_argument("--json", type=Path, help="append every cycle's figures here (JSON lines)")
    args = ap.parse_args()
    print(machine())
    print(f"load average before: {loadavg()}", flush=True)
    rows: dict[str, list[dict[str, float]]] = {}
    for spec in args.scenario or ["default:7", "pilot-25:7"]:
        sc = scenario_of(spec)
        topo = sc.topology
        print(f"\n{sc.name} (hash {sc.hash[:12]}): {len(topo.routers)} routers, {len(topo.hosts)} hosts, "
              f"{len(topo.links)} links", flush=True)
        for i in range(args.repeat):
            order = [("ani", ani_cycle), ("floor", floor_cycle)]
            for kind, fn in order if i % 2 == 0 else order[::-1]:
                r = fn(topo, args.idle)
                r["load1"] = float(loadavg().split()[0])
                rows.setdefault(f"{sc.name} {kind}", []).append(r)
                print(f"  {kind:5s} {i + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in r.items()), flush=True)
                if args.json:
                    with args.json.open("a") as fh:
                        fh.write(json.dumps({"scenario": sc.name, "kind": kind, **r}) + "\n")
    print(f"\nload average after: {loadavg()}\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
