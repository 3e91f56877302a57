#!/usr/bin/env python3
"""Reply latency of pings inside a lab (veth pairs, one host): what a negative reach check's
wait must exceed (issue 24 §3).

Usage (as root)::

    .venv/bin/python benchmarks/ping_rtt.py [CAMPAIGN] [--rounds 5] [--count 10] [--busy 0,6]
                                            [--labs-beside 0,2] [--json FILE]

Brings the demo's lab up (``campaigns/level-sweep-default.yaml``: the generated default
brownfield; NETCONF and SSH servers off) and, per condition, runs ``--rounds`` rounds in which
every reachable pair of the scenario's invariants (each positive ``reach`` check's source and
destination, each ``loopback`` check's router, source and address: the paths a negative check
would cross if the network were damaged) is pinged ``--count`` times
(``ping -n -c COUNT -i 0.05 -W 2``), all pairs of a node at once in one process started in the
node, every node at once, as the observer's batched look does. Odd rounds flush every node's
neighbour (ARP) table first, so the first probe of a pair waits for address resolution on every
hop. Conditions: ``--busy N`` busy-looping Python processes beside it (CPU load), and
``--labs-beside K`` other labs of the same scenario brought up and down in a loop beside it
(spawned processes: namespaces, daemons and BGP/OSPF convergence, what other runs do on a shared
machine). Replies slower than 2 ms are listed with their pair and probe.

Prints per condition the replies received / probes sent and the reply latency (ping's ``time=``,
ms): median, 99th percentile, 99.9th, max; then the largest of all conditions. ``--json``
writes every condition's samples.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from lab_up_down import machine  # noqa: E402

_TIME_RE = re.compile(r"^(\S+) .*icmp_seq=(\d+) .*time=([0-9.]+) ms", re.MULTILINE)
_SENT_RE = re.compile(r"^(\S+) (\d+) packets transmitted, (\d+) received", re.MULTILINE)


def topology_and_checks(campaign: str) -> tuple[Any, list[Any]]:
    from ani.campaign.execute import superseded
    from ani.campaign.runner import RunnerDeps, prepare, variant_of
    from ani.campaign.spec import load_spec

    spec = load_spec(campaign)
    cell = spec.cells[0]
    scen, task = prepare(spec, RunnerDeps(), cell)
    variant = variant_of(task, scen, spec.seed, spec.form_of(cell))
    checks, _gone = superseded(scen, variant)
    return variant.lab_topology(scen), checks


def pairs_of(checks: list[Any]) -> dict[str, list[list[str]]]:
    """``{node: [ping arguments, ...]}`` of every reachable pair."""
    from ani.observer.checks import LoopbackCheck, ReachCheck

    out: dict[str, list[list[str]]] = {}
    for c in checks:
        if isinstance(c, ReachCheck) and c.expect:
            out.setdefault(c.src, []).append([str(c.dst)])
        elif isinstance(c, LoopbackCheck):
            out.setdefault(c.router, []).append((["-I", str(c.source)] if c.source else []) + [str(c.address)])
    return out


#: replies slower than this (ms) are listed with their pair, probe and round
SLOW_MS = 2.0


def one_round(lab: Any, pairs: dict[str, list[list[str]]], count: int, flush: bool,
              slow: list[str] | None = None) -> tuple[list[float], int, int]:
    """(reply latencies in ms, probes sent, replies received) of one round; replies slower than
    :data:`SLOW_MS` go to ``slow`` as text."""
    from ani.host.threads import ContextPool

    def node_job(node: str, targets: list[list[str]]) -> str:
        lines = ["ip neigh flush all >/dev/null 2>&1"] if flush else []
        for k, args in enumerate(targets):
            lines.append(f"ping -n -c {count} -i 0.05 -W 2 {' '.join(args)} 2>&1 | sed 's/^/{k} /' &")
        lines.append("wait")
        return lab.exec(node, ["sh", "-c", "\n".join(lines)], timeout=30.0).stdout

    if flush:  # every node's table, routers' too (they resolve the next hops)
        with ContextPool(max_workers=16) as pool:
            nodes = list(lab.topology.nodes)
            list(pool.map(lambda n: lab.exec(n, ["ip", "neigh", "flush", "all"], timeout=10.0), nodes))
    with ContextPool(max_workers=len(pairs)) as pool:
        outs = list(pool.map(lambda kv: node_job(*kv), list(pairs.items())))
    rtts: list[float] = []
    sent = got = 0
    for (node, targets), text in zip(pairs.items(), outs, strict=True):
        for m in _TIME_RE.finditer(text):
            rtts.append(float(m.group(3)))
            if slow is not None and rtts[-1] > SLOW_MS:
                slow.append(f"{node} -> {' '.join(targets[int(m.group(1))])} probe {m.group(2)}: {m.group(3)} ms"
                            f"{' (neighbour tables flushed)' if flush else ''}")
        for m in _SENT_RE.finditer(text):
            sent += int(m.group(2))
            got += int(m.group(3))
    return rtts, sent, got


def labs_beside(topology: Any, stop: Any) -> None:
    """Bring a lab of ``topology`` up and down until ``stop`` is set."""
    from ani.lab.lab import Lab

    while not stop.is_set():
        lab = Lab(topology, netconf=False, ssh=False)
        try:
            lab.up()
        finally:
            lab.down()


def condition(lab: Any, topology: Any, pairs: dict[str, list[list[str]]], args: argparse.Namespace,
              n_busy: int, n_labs: int) -> dict[str, Any]:
    import subprocess

    # spawned, not forked: a forked child would inherit the lab's signal handlers (its SIGTERM
    # would take this lab down)
    mp = multiprocessing.get_context("spawn")
    stop = mp.Event()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n_busy)]
    procs = [mp.Process(target=labs_beside, args=(topology, stop), daemon=True) for _ in range(n_labs)]
    for p in procs:
        p.start()
    rtts: list[float] = []
    sent = got = 0
    loads = []
    slow: list[str] = []
    try:
        time.sleep(3.0 if procs or hogs else 0.0)
        for r in range(args.rounds):
            with open("/proc/loadavg") as f:
                loads.append(float(f.read().split()[0]))
            x, s, g = one_round(lab, pairs, args.count, flush=(r % 2 == 0), slow=slow)
            rtts += x
            sent += s
            got += g
    finally:
        stop.set()
        for h in hogs:
            h.kill()
            h.wait()
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.terminate()
    rtts.sort()
    q = statistics.quantiles(rtts, n=1000) if len(rtts) > 1 else rtts * 999
    row = {"busy": n_busy, "labs_beside": n_labs, "sent": sent, "received": got, "load": loads,
           "median_ms": statistics.median(rtts), "p99_ms": q[989], "p999_ms": q[998], "max_ms": rtts[-1]}
    print(f"busy {n_busy}, labs beside {n_labs}: {got}/{sent} replies; ms: median {row['median_ms']:.3f}, "
          f"p99 {row['p99_ms']:.3f}, p99.9 {row['p999_ms']:.3f}, max {row['max_ms']:.3f} "
          f"(load {min(loads):.1f}-{max(loads):.1f})", flush=True)
    for line in slow:
        print(f"  slow: {line}", flush=True)
    row["rtts"], row["slow"] = rtts, slow
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("campaign", nargs="?", default=str(ROOT / "campaigns" / "level-sweep-default.yaml"))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--busy", default="0,6", help="comma-separated busy-loop process counts")
    ap.add_argument("--labs-beside", default="0,2", help="comma-separated counts of labs cycling beside")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    from ani.lab.lab import Lab

    topology, checks = topology_and_checks(args.campaign)
    pairs = pairs_of(checks)
    print(machine())
    print(f"{sum(len(v) for v in pairs.values())} reachable pairs from {len(pairs)} nodes, "
          f"{args.count} probes each per round, {args.rounds} rounds per condition")
    lab = Lab(topology, netconf=False, ssh=False).up()
    rows = []
    try:
        from ani.observer.evaluate import Observer

        Observer(lab).evaluate(checks)  # routes settled
        for n_labs in [int(x) for x in args.labs_beside.split(",")]:
            for n_busy in [int(x) for x in args.busy.split(",")]:
                rows.append(condition(lab, topology, pairs, args, n_busy, n_labs))
    finally:
        lab.down()
    worst = max(rows, key=lambda r: r["max_ms"])
    print(f"largest reply latency of all conditions: {worst['max_ms']:.3f} ms "
          f"(busy {worst['busy']}, labs beside {worst['labs_beside']}); "
          f"replies {sum(r['received'] for r in rows)}/{sum(r['sent'] for r in rows)}")
    if args.json:
        args.json.write_text(json.dumps(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
