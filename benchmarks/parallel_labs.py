#!/usr/bin/env python3
"""Throughput of N labs side by side on this machine (issue 24 §4): lab cycles per minute for N
in ``--jobs`` (default 1 2 3 4 6), CPU and memory per lab, and where throughput stops growing.

Usage (as root)::

    .venv/bin/python benchmarks/parallel_labs.py [--jobs 1,2,3,4,6] [--cycles 4] [--scenario default:7]
                                                 [--json FILE]
    .venv/bin/python benchmarks/parallel_labs.py --combine PASS1.jsonl PASS2.jsonl    # medians per N
    .venv/bin/python benchmarks/parallel_labs.py --campaign campaigns/level-sweep-default.yaml --variants 3
                                                 [--jobs 1,2,3,4,6]

Without ``--campaign``: for each N, N worker processes each run ``--cycles`` lab cycles close to
a campaign run without an agent: ``Lab(topology).up()`` of the generated scenario (the default
brownfield, seed 7, its manifest's density; the NETCONF and SSH servers as in a run), which
returns once routing has converged; the baseline check (``Observer(lab).evaluate`` of every
invariant, as the runner's baseline phase); ``lab.down()``. Each worker generates the scenario
before the clock starts (a campaign plans before it runs) and the workers start together.
Per N: cycles per minute (all workers' cycles over the time from the start to the last worker's
end), the median cycle and its phases, CPU seconds per cycle (each worker in a cpuacct cgroup of
its own: the worker, its lab's daemons and servers, every ``ip``/``vtysh``/``ping``), the peak
memory of one run (PSS of the worker process and its lab's processes, psutil; and the routers'
memory cgroups), the machine's lowest available memory, and the speed-up over N = 1. A lab that does not start
(``up()`` raises, e.g. a step timing out on a loaded machine) is reported and counted as no cycle
(a campaign would record that run as an infrastructure error). Throughput
"stops growing" at the first N whose cycles per minute are less than 10 % above the previous N's.

With ``--campaign FILE``: for each N, ``ani campaign run FILE --jobs N --variants K --out TMP
--no-progress`` (the real executor), timed; runs per minute from its ``runs.jsonl``, and whether
every run id has the same label as with the first N (results folders in ``--results-in DIR``,
default the system's temporary directory). Said unavailable (exit 2) where ``ani campaign run``
has no ``--jobs``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lab_up_down import machine  # noqa: E402
from labmeter import CpuAccount, MemorySampler, ani_lab_pids, loadavg, mib  # noqa: E402

#: a throughput less than this much above the previous N's has stopped growing
GROWTH = 0.10


# --- worker -------------------------------------------------------------------------------------

def worker(spec: str, cycles: int) -> int:
    """Run ``cycles`` lab cycles; print JSON lines (``ready``, one per cycle, ``done``)."""
    from ani.errors import AniError
    from ani.lab import Lab, memcg
    from ani.observer import Observer
    from substrate import scenario_of

    scenario = scenario_of(spec)
    print(json.dumps({"ready": True}), flush=True)
    if not sys.stdin.readline():  # the go signal: every worker starts together
        return 1  # the coordinator is gone
    current: list = []
    pids = lambda: [os.getpid()] + (ani_lab_pids(current[0]) if current else [])  # noqa: E731
    cgroups = lambda: memcg.lab_cgroups(current[0].id) if current else []  # noqa: E731
    with CpuAccount() as cpu, MemorySampler(pids, cgroups, interval_s=0.5) as mem:
        for i in range(cycles):
            lab = Lab(scenario.topology)
            current[:] = [lab]
            t0 = time.monotonic()
            try:
                lab.up()
                t1 = time.monotonic()
                results = Observer(lab).evaluate(scenario.invariants)
                t2 = time.monotonic()
            except AniError as exc:  # a lab that did not start: an infrastructure error of a run
                print(json.dumps({"cycle": i, "error": f"{type(exc).__name__}: {str(exc)[:300]}",
                                  "wall_s": time.monotonic() - t0}), flush=True)
                continue
            finally:
                lab.down()
            t3 = time.monotonic()
            failed = sum(1 for r in results if not r.passed)
            print(json.dumps({"cycle": i, "wall_s": t3 - t0, "up_s": t1 - t0, "check_s": t2 - t1,
                              "down_s": t3 - t2, "invariants": len(results), "failed": failed}), flush=True)
        mem._stop.set()
    print(json.dumps({"done": True, "cpu_s": cpu.seconds() - mem.cpu_s, "pss_mib": mib(mem.peak_pss),
                      "rss_mib": mib(mem.peak_rss), "cgroup_mib": mib(mem.peak_cgroup)}), flush=True)
    return 0


# --- coordinator --------------------------------------------------------------------------------

class Available:
    """The machine's lowest available memory (psutil) while a sweep point runs."""

    def __init__(self) -> None:
        import psutil

        self._vm = psutil.virtual_memory
        self.low = self._vm().available
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.low = min(self.low, self._vm().available)

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        return self.low


def sweep_point(n: int, spec: str, cycles: int) -> dict:
    """N workers side by side; their figures."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", "--scenario", spec, "--cycles", str(cycles)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    procs = [subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(n)]
    try:
        for p in procs:
            line = p.stdout.readline()  # type: ignore[union-attr]
            if not line.startswith('{"ready"'):
                raise RuntimeError(f"a worker did not start (exit {p.wait()})")
        load0, avail = loadavg(), Available()
        t0 = time.monotonic()
        for p in procs:
            p.stdin.write("go\n")  # type: ignore[union-attr]
            p.stdin.flush()  # type: ignore[union-attr]
        outs = [_read_worker(p) for p in procs]
        wall = time.monotonic() - t0
        low = avail.stop()
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
            p.wait()
    errors = [c for o in outs for c in o["cycles"] if "error" in c]
    for e in errors:
        print(f"  a lab did not start (counted as no cycle): {e['error']}")
    cyc = [c for o in outs for c in o["cycles"] if "error" not in c]
    done = [o["done"] for o in outs]
    return {
        "jobs": n, "cycles": len(cyc), "lab_errors": len(errors), "wall_s": wall, "per_min": 60 * len(cyc) / wall,
        "cycle_s": statistics.median(c["wall_s"] for c in cyc),
        "up_s": statistics.median(c["up_s"] for c in cyc), "check_s": statistics.median(c["check_s"] for c in cyc),
        "down_s": statistics.median(c["down_s"] for c in cyc), "failed": sum(c["failed"] for c in cyc),
        "cpu_per_cycle_s": sum(d["cpu_s"] for d in done) / len(cyc),
        "cpu_util": sum(d["cpu_s"] for d in done) / (wall * (os.cpu_count() or 1)),
        "pss_mib": statistics.median(d["pss_mib"] for d in done), "rss_mib": statistics.median(d["rss_mib"] for d in done),
        "cgroup_mib": statistics.median(d["cgroup_mib"] for d in done),
        "low_available_mib": mib(low), "load_before": load0, "load_after": loadavg(),
    }


def _read_worker(p: subprocess.Popen) -> dict:
    out: dict = {"cycles": [], "done": None}
    for line in p.stdout:  # type: ignore[union-attr]
        try:
            d = json.loads(line)
        except json.JSONDecodeError:  # a log line of the worker's
            print(f"  worker: {line.rstrip()}")
            continue
        if "cycle" in d:
            out["cycles"].append(d)
        elif d.get("done"):
            out["done"] = d
    if p.wait() != 0 or out["done"] is None:
        raise RuntimeError(f"a worker failed (exit {p.returncode})")
    return out


def stops_growing(points: list[dict], key: str = "per_min") -> int | None:
    """Where throughput stops growing: the largest N before the first step whose throughput is
    less than :data:`GROWTH` above the previous N's (None: it grew at every step)."""
    points = sorted(points, key=lambda p: p["jobs"])
    for prev, cur in zip(points, points[1:]):
        if cur[key] < prev[key] * (1 + GROWTH):
            return prev["jobs"]
    return None


def combine(files: list[Path]) -> list[dict]:
    """Sweep points of several passes (``--json`` files): per N, the median of each figure."""
    by_n: dict[int, list[dict]] = {}
    for f in files:
        for line in f.read_text().splitlines():
            if line.strip():
                p = json.loads(line)
                by_n.setdefault(p["jobs"], []).append(p)
    out = []
    for n, ps in sorted(by_n.items()):
        m = {k: statistics.median(p[k] for p in ps) for k, v in ps[0].items() if isinstance(v, (int, float))}
        m.update(jobs=n, cycles=sum(p["cycles"] for p in ps), passes=len(ps),
                 load_before=min((p["load_before"] for p in ps), key=lambda x: float(x.split()[0])),
                 load_after=max((p["load_after"] for p in ps), key=lambda x: float(x.split()[0])))
        out.append(m)
    return out


def report(points: list[dict]) -> None:
    points = sorted(points, key=lambda p: p["jobs"])
    base = points[0]["per_min"] if points and points[0]["jobs"] == 1 else None
    print("\n| labs side by side | cycles | cycles per minute | speed-up | median cycle (up / check / down) s "
          "| CPU s per cycle | CPU used | peak memory per run, PSS (RSS; router cgroups) MiB "
          "| lowest available MiB | load before -> after |")
    print("|" + "---|" * 10)
    for p in points:
        sp = f"{p['per_min'] / base:.2f}" if base else "-"
        print(f"| {p['jobs']} | {p['cycles']} | {p['per_min']:.2f} | {sp} | {p['cycle_s']:.2f} ({p['up_s']:.2f} / "
              f"{p['check_s']:.2f} / {p['down_s']:.2f}) | {p['cpu_per_cycle_s']:.2f} | {100 * p['cpu_util']:.0f} % | "
              f"{p['pss_mib']:.0f} ({p['rss_mib']:.0f}; {p['cgroup_mib']:.0f}) | {p['low_available_mib']:.0f} | "
              f"{p['load_before'].split()[0]} -> {p['load_after'].split()[0]} |")
    at = stops_growing(points)
    print(f"\nthroughput stops growing at {at} labs side by side" if at else "\nthroughput grew at every N")
    failed = int(sum(p["failed"] for p in points))
    print(f"failed baseline invariants over all cycles: {failed}; labs that did not start: "
          + ", ".join(f"{int(p.get('lab_errors', 0))} at N={p['jobs']}" for p in points))


# --- the real executor --------------------------------------------------------------------------

def ani_argv() -> list[str]:
    return [str(Path(sys.executable).parent / "ani")]


def has_jobs_option() -> bool:
    res = subprocess.run([*ani_argv(), "campaign", "run", "--help"], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "COLUMNS": "200"})
    return "--jobs" in res.stdout


def campaign_point(file: Path, n: int, variants: int, where: Path | None = None) -> dict:
    out = Path(tempfile.mkdtemp(prefix=f"ani-parallel-j{n}-", dir=where))
    argv = [*ani_argv(), "campaign", "run", str(file), "--jobs", str(n), "--variants", str(variants),
            "--out", str(out / "results"), "--no-progress"]
    load0 = loadavg()
    t0 = time.monotonic()
    rc = subprocess.run(argv, stdout=subprocess.DEVNULL, timeout=24 * 3600).returncode
    wall = time.monotonic() - t0
    runs = [json.loads(ln) for ln in (out / "results" / "runs.jsonl").read_text().splitlines() if ln.strip()]
    labels = {r["run_id"]: r.get("label") for r in runs}
    return {"jobs": n, "rc": rc, "runs": len(runs), "wall_s": wall, "per_min": 60 * len(runs) / wall,
            "labels": labels, "out": str(out), "load_before": load0, "load_after": loadavg()}


def campaign_sweep(file: Path, jobs: list[int], variants: int, where: Path | None = None) -> int:
    if not has_jobs_option():
        print("--campaign: `ani campaign run` has no --jobs option yet: the real executor is not available; "
              "run without --campaign for the lab-cycle sweep")
        return 2
    if where is not None:
        where.mkdir(parents=True, exist_ok=True)
    points = []
    for n in jobs:
        p = campaign_point(file, n, variants, where)
        same = "" if not points else (
            "same labels as --jobs %d" % points[0]["jobs"] if p["labels"] == points[0]["labels"]
            else f"LABELS DIFFER from --jobs {points[0]['jobs']}")
        print(f"--jobs {n}: {p['runs']} runs in {p['wall_s']:.1f} s = {p['per_min']:.2f} runs/min (exit {p['rc']}, "
              f"load {p['load_before'].split()[0]} -> {p['load_after'].split()[0]}) {same}; results in {p['out']}",
              flush=True)
        points.append(p)
    at = stops_growing(points)
    print(f"throughput stops growing at --jobs {at}" if at else "throughput grew at every --jobs")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", default="1,2,3,4,6", help="numbers of labs side by side, comma-separated")
    ap.add_argument("--cycles", type=int, default=4, help="lab cycles per worker")
    ap.add_argument("--scenario", default="default:7", metavar="MANIFEST[:SEED[:DENSITY]]")
    ap.add_argument("--json", type=Path, help="append each sweep point's figures here (JSON lines)")
    ap.add_argument("--campaign", type=Path, help="time `ani campaign run FILE --jobs N` instead")
    ap.add_argument("--variants", type=int, default=3, help="--variants K of each campaign run")
    ap.add_argument("--results-in", type=Path, help="make the campaigns' results folders here (default: the "
                                                    "system's temporary directory)")
    ap.add_argument("--combine", type=Path, nargs="+", metavar="JSON",
                    help="print the table of several passes' --json files (medians per N) and exit")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.scenario, args.cycles)
    if args.combine:
        report(combine(args.combine))
        return 0
    jobs = [int(x) for x in args.jobs.split(",") if x.strip()]
    print(machine())
    print(f"load average before: {loadavg()}", flush=True)
    if args.campaign:
        return campaign_sweep(args.campaign, jobs, args.variants, args.results_in)
    points = []
    for n in jobs:
        p = sweep_point(n, args.scenario, args.cycles)
        print(f"{n} labs: {p['cycles']} cycles in {p['wall_s']:.1f} s = {p['per_min']:.2f}/min; "
              + ", ".join(f"{k} {v:.2f}" for k, v in p.items() if isinstance(v, float)), flush=True)
        if args.json:
            with args.json.open("a") as fh:
                fh.write(json.dumps(p) + "\n")
        points.append(p)
    print(f"load average after: {loadavg()}")
    report(points)
    return 0


if __name__ == "__main__":
    sys.exit(main())
