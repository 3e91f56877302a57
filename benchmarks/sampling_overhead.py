#!/usr/bin/env python3
"""What the out-of-band sampler (:mod:`ani.observer.sampler`) costs the agent: the latency of
the agent's own tool calls with and without sampling of the baseline invariants.

Usage (as root)::

    .venv/bin/python benchmarks/sampling_overhead.py --manifest scenarios/default.yaml --seed 7
    .venv/bin/python benchmarks/sampling_overhead.py scenarios/brownfield-small.yaml --level a0

One lab of the scenario is brought up and its baseline invariants checked once; then the
level's adapter (``--level``, default a1) serves agent calls for ``--block-s`` seconds per block
(wrapped as the runner wraps it: no sampling process starts during a call; ``--pause``
seconds between two calls: the model's turn; default 0, back to back), the calls an
agent makes most (A1: ``get_running_config`` and ``execute_validation`` of ``show ip route``
on the routers in turn; A0: ``shell`` with ``vtysh -c 'show running-config'`` and ``ip -br
addr``). Blocks alternate ``off`` (no sampler), ``on`` (the sampler at ``--period``, default
the runner's :data:`~ani.observer.sampler.DEFAULT_PERIOD_S`) and ``poked`` (the same sampler
poked after every call, as if every call changed the network: the worst case), ``--blocks``
times each, so drift in the machine's load (other labs) spreads over all three; a block meets
its sampler at a random phase of the period (steady state, not a fresh sampler's first round). Prints per
condition the median, mean and 10%-trimmed mean call latency (the machine may be shared: the
trimmed mean drops the slowest and fastest tenth), the overhead against ``off``, and the rounds
the sampler ran. The lab is removed also on failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from lab_up_down import machine  # noqa: E402


def load(args: argparse.Namespace):
    if args.manifest:
        from ani.scenario.generate import generate_scenario

        return generate_scenario(args.manifest, seed=args.seed, density=args.density)
    from ani.scenario import load_scenario

    return load_scenario(args.scenario)


def calls_for(level: str, routers: list[str]) -> list[tuple[str, dict]]:
    out = []
    for r in routers:
        if level == "a0":
            out += [("shell", {"device": r, "command": "vtysh -c 'show running-config'"}),
                    ("shell", {"device": r, "command": "ip -br addr"})]
        else:
            out += [("get_running_config", {"device": r}),
                    ("execute_validation", {"device": r, "command": "show ip route"})]
    return out


def block(adapter, calls: list[tuple[str, dict]], seconds: float, sampler=None, poke: bool = False,
          pause_s: float = 0.0) -> dict[str, list[float]]:
    """Calls in turn for ``seconds``; ``{tool: [latency s]}``. ``pause_s`` between calls stands
    for the agent's thinking (a model turn)."""
    times: dict[str, list[float]] = {}
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        name, args = calls[i % len(calls)]
        i += 1
        t0 = time.perf_counter()
        res = adapter.call(name, args)
        times.setdefault(name, []).append(time.perf_counter() - t0)
        if not res.ok:
            raise SystemExit(f"{name} {args}: {res.text[:200]}")
        if poke and sampler is not None:
            sampler.poke()
        if pause_s:
            time.sleep(pause_s)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", nargs="?", default=str(ROOT / "scenarios" / "brownfield-small.yaml"))
    ap.add_argument("--manifest")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--density", type=int)
    ap.add_argument("--level", default="a1", choices=["a0", "a1"])
    ap.add_argument("--block-s", type=float, default=10.0, help="seconds per block")
    ap.add_argument("--blocks", type=int, default=3, help="blocks per condition")
    ap.add_argument("--period", type=float)
    ap.add_argument("--pause", type=float, default=0.0, help="seconds between two agent calls (a model turn)")
    args = ap.parse_args()

    from ani.campaign.observe_run import GatedAdapter
    from ani.lab import Lab
    from ani.observer import Observer
    from ani.observer.sampler import DEFAULT_PERIOD_S, Sampler
    from ani.registry import create_adapter
    from ani.trajectory import Trajectory

    period = args.period or DEFAULT_PERIOD_S
    scen = load(args)
    checks = list(scen.invariants)
    neg = sum(1 for c in checks if c.kind == "reach" and not c.expect)
    print(machine())
    print(f"scenario {scen.name} ({scen.hash[:16]}): {len(scen.topology.routers)} routers, "
          f"{len(checks)} invariants ({neg} negative); level {args.level}; period {period} s")
    lab = Lab(scen.topology)
    try:
        lab.up()
        bad = [r for r in Observer(lab).evaluate(checks) if not r.passed]
        if bad:
            raise SystemExit(f"baseline fails: {bad[0].name}: {bad[0].detail}")
        for what, subset in (("router reads (route, bgp_session)", [c for c in checks if c.kind in ("route", "bgp_session")]),
                             ("pings (reach, loopback)", [c for c in checks if c.kind in ("reach", "loopback") and getattr(c, "expect", True) is not False]),
                             ("positive checks", [c for c in checks if not (c.kind == "reach" and not c.expect)]),
                             ("every check", checks)):
            if not subset:
                continue
            walls, cpus = [], []
            for _ in range(3):
                r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
                p0 = time.process_time()
                Observer(lab).sample(subset)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                walls.append(time.monotonic() - t0)
                cpus.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime + time.process_time() - p0)
            print(f"one sampling round, {what} ({len(subset)}): {statistics.median(walls):.2f} s wall, "
                  f"{statistics.median(cpus):.2f} s CPU (this process and its children; median of 3)")
        adapter = create_adapter(args.level, lab, trajectory=Trajectory("bench", args.level))
        adapter.open()
        calls = calls_for(args.level, list(scen.topology.routers))
        block(adapter, calls, 1.0)  # warm up
        res: dict[str, dict[str, list[float]]] = {"off": {}, "on": {}, "poked": {}}
        rng = random.Random(1)
        rounds: dict[str, int] = {"on": 0, "poked": 0}
        for _ in range(args.blocks):
            for cond in ("off", "on", "poked"):
                sampler, agent_side = None, adapter
                if cond != "off":
                    sampler = Sampler(Observer(lab), checks, period_s=period)
                    # steady state: the block meets the sampler at a random phase of its period
                    # (a sampler's first round runs at once; every block starting with one would
                    # make a long period look as dense as a short one)
                    timer = threading.Timer(rng.uniform(0, period), sampler.start)
                    timer.start()
                    agent_side = GatedAdapter(adapter, sampler)  # as the runner hands it to the agent
                try:
                    for tool, ts in block(agent_side, calls, args.block_s, sampler, poke=cond == "poked",
                                          pause_s=args.pause).items():
                        res[cond].setdefault(tool, []).extend(ts)
                finally:
                    if sampler is not None:
                        timer.cancel()
                        timer.join()
                        rep = sampler.stop()
                        rounds[cond] += rep.samples
                        if rep.errors:
                            print(f"  sampler errors: {rep.errors}")
        adapter.close()
        def trimmed(ts: list[float]) -> float:  # mean of the middle 80%: the machine is shared
            ts = sorted(ts)
            k = len(ts) // 10
            return statistics.fmean(ts[k:len(ts) - k] or ts)

        print(f"{'condition':<9} {'tool':<20} {'calls':>5} {'median ms':>10} {'mean ms':>9} {'tmean ms':>9} "
              f"{'median +%':>10} {'mean +%':>8} {'tmean +%':>9} {'rounds':>7}")
        for cond, per in res.items():
            for tool in [*sorted(per), "all"]:
                ts = [t for v in per.values() for t in v] if tool == "all" else per[tool]
                base = [t for v in res["off"].values() for t in v] if tool == "all" else res["off"][tool]
                med, mean, tm = statistics.median(ts), statistics.fmean(ts), trimmed(ts)
                bmed, bmean, btm = statistics.median(base), statistics.fmean(base), trimmed(base)
                print(f"{cond:<9} {tool:<20} {len(ts):>5} {med * 1e3:>10.1f} {mean * 1e3:>9.1f} {tm * 1e3:>9.1f} "
                      f"{(med / bmed - 1) * 100:>+10.1f} {(mean / bmean - 1) * 100:>+8.1f} {(tm / btm - 1) * 100:>+9.1f} "
                      f"{rounds.get(cond, 0) if tool == 'all' else '':>7}")
    finally:
        lab.down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
