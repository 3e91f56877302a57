#!/usr/bin/env python3
"""Generation time of each shipped manifest; bring-up, convergence, baseline check, teardown and
peak memory of generated labs.

Usage (as root)::

    .venv/bin/python benchmarks/bench_generate.py [--gen-repeat 5] [--up MANIFEST[:SEED[:DENSITY]] ...] [-n 1]

Generation: every manifest under ``scenarios/`` (files with ``layers:``), at its own density,
seeds 1..``--gen-repeat``: ``generate()`` + ``render_yaml()`` + parsing the result
(``generate_scenario`` without the file), median / max wall time.

Bring-up (default ``default:7`` and ``pilot-25:7``): ``Lab(topology).up()`` as ``ani lab up``
runs it (NETCONF server included), split into build (namespaces, links, daemons, configs) and
convergence (every OSPF adjacency Full, every BGP session Established), then the baseline check
(``Observer.evaluate`` of every invariant), then ``down()``. Peak memory: while the lab comes up
and is checked, a thread samples every 0.2 s the lab's FRR daemons (the PIDs in the lab's state)
and its NETCONF server, reading ``/proc/<pid>/smaps_rollup``: the sum of ``Pss`` (each shared
page counted once, split over its users: what the lab costs the machine) and of ``Rss``
(shared pages counted in every process). Kernel memory of namespaces and veths is not included.
Every lab is removed, also on failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lab_up_down import machine  # noqa: E402


def shipped_manifests() -> list[Path]:
    import yaml

    from ani.scenario.generate import is_manifest

    return [f for f in sorted((ROOT / "scenarios").glob("*.yaml")) if is_manifest(yaml.safe_load(f.read_text()))]


def bench_generation(repeat: int) -> None:
    from ani.scenario.generate import generate, load_manifest, render_yaml
    from ani.scenario.manifest import parse_scenario

    print(f"\ngeneration (seeds 1..{repeat}, the manifest's density): generate + render_yaml + parse")
    print(f"{'manifest':12s} {'routers':>7s} {'hosts':>5s} {'invariants':>10s} {'median s':>9s} {'max s':>7s}")
    for path in shipped_manifests():
        m = load_manifest(path)
        times = []
        for seed in range(1, repeat + 1):
            t0 = time.perf_counter()
            data = generate(m, seed=seed)
            render_yaml(data)
            parse_scenario(data)
            times.append(time.perf_counter() - t0)
        topo = data["topology"]
        print(f"{m.name:12s} {len(topo['routers']):7d} {len(topo['hosts']):5d} {len(data['invariants']):10d} "
              f"{statistics.median(times):9.3f} {max(times):7.3f}", flush=True)


class MemorySampler:
    """Peak sum of Pss / Rss (KiB) of a lab's FRR daemons and NETCONF server, sampled every 0.2 s."""

    def __init__(self, lab) -> None:  # type: ignore[no-untyped-def]
        self.lab = lab
        self.peak_pss = self.peak_rss = 0
        self.peak_netconf_pss = 0  # the NETCONF server's share (one Python process)
        self.procs = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def pids(self) -> list[int]:
        st = self.lab._state
        if st is None:
            return []
        out = [p for d in list(st.pids.values()) for p in list(d.values())]
        if st.netconf_pid:
            out.append(st.netconf_pid)
        return out

    @staticmethod
    def _rollup(pid: int) -> tuple[int, int]:
        pss = rss = 0
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1])
        except (OSError, ValueError):
            pass
        return pss, rss

    def sample(self) -> None:
        pids = self.pids()
        vals = [self._rollup(p) for p in pids]
        self.procs = max(self.procs, len(pids))
        self.peak_pss = max(self.peak_pss, sum(v[0] for v in vals))
        self.peak_rss = max(self.peak_rss, sum(v[1] for v in vals))
        st = self.lab._state
        if st is not None and st.netconf_pid:
            self.peak_netconf_pss = max(self.peak_netconf_pss, self._rollup(st.netconf_pid)[0])

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.sample()

    def __enter__(self) -> MemorySampler:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


def bench_up(spec: str, repeat: int) -> None:
    from ani.lab import Lab
    from ani.observer import Observer, summarize
    from ani.scenario.generate import generate_scenario

    name, _, rest = spec.partition(":")
    seed_s, _, dens_s = rest.partition(":")
    path = ROOT / "scenarios" / f"{name}.yaml"
    scenario = generate_scenario(path, seed=int(seed_s or 7), density=int(dens_s) if dens_s else None)
    topo = scenario.topology
    print(f"\n{scenario.name} ({path.relative_to(ROOT)}, hash {scenario.hash[:12]}): {len(topo.routers)} routers, "
          f"{len(topo.hosts)} hosts, {len(topo.links)} links, {len(scenario.invariants)} invariants", flush=True)
    for i in range(repeat):
        lab = Lab(topo)
        try:
            with MemorySampler(lab) as mem:
                t0 = time.monotonic()
                lab.up()
                t_up = time.monotonic() - t0
                mem.sample()
                t1 = time.monotonic()
                results = Observer(lab).evaluate(scenario.invariants, bound_s=20.0)
                t_check = time.monotonic() - t1
                mem.sample()
        finally:
            lab.down()
        failed = [r for r in results if not r.passed]
        tm = lab.timings
        print(f"run {i + 1}: up {t_up:.2f} s (build {tm['build_s']:.2f} + converge {tm['converge_s']:.2f}"
              f" + NETCONF wait {tm.get('netconf_wait_s', 0):.2f}); baseline check {len(results)} invariants "
              f"{t_check:.2f} s, {len(failed)} failed; down {tm['down_s']:.2f} s; peak memory of "
              f"{mem.procs} processes: PSS {mem.peak_pss / 1024:.0f} MiB (NETCONF server {mem.peak_netconf_pss / 1024:.0f}),"
              f" RSS {mem.peak_rss / 1024:.0f} MiB",
              flush=True)
        if failed:
            print(summarize(results))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gen-repeat", type=int, default=5, help="seeds per manifest for the generation time")
    ap.add_argument("--up", action="append", default=None, metavar="MANIFEST[:SEED[:DENSITY]]",
                    help="generated lab to bring up (repeatable; default default:7 and pilot-25:7)")
    ap.add_argument("-n", "--repeat", type=int, default=1, help="bring-ups per lab")
    ap.add_argument("--no-up", action="store_true", help="generation times only")
    args = ap.parse_args()
    print(machine())
    print(f"load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    bench_generation(args.gen_repeat)
    if not args.no_up:
        for spec in args.up or ["default:7", "pilot-25:7"]:
            bench_up(spec, args.repeat)
    print(f"\nload average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
