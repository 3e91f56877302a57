#!/usr/bin/env python3
"""Where the harness time of a run goes: every step of ``run_one`` timed, the part no phase
of the run record accounts for included (issue 24 §3).

Usage (as root)::

    .venv/bin/python benchmarks/harness_time.py [CAMPAIGN] [--cells a0,a1] [-n 1] [--profile FILE]
    .venv/bin/python benchmarks/harness_time.py --tree OLD --tree NEW [-n 1] [--idle-agent]
    .venv/bin/python benchmarks/harness_time.py --evaluate-ab OLD --cells a1 -n 4

CAMPAIGN is a campaign file (default ``campaigns/level-sweep-default.yaml``, the demo: generated
default brownfield, onboard-site, scripted agent). For each of ``-n`` seeds (from the file's
``seed``) and each cell (default every cell) one ``ani.campaign.runner.run_one`` runs serially,
with the real lab, observer, adapters and agent, into a temporary results folder. Each step of
the run is timed on the run's own thread by wrapping the functions
:mod:`ani.campaign.execute` calls (nothing of the run is changed): resolve (scenario, variant,
agent), lab up (build / convergence / servers), the baseline check (its positive round and its negative
pings), the adapter's open / tools / close, ``RunObservation.begin`` / ``finish`` (initial and
final configuration reads, the wait for a recovered sampling round), the measured outcomes,
the settle sleep, grading, the host-fault and dead-daemon checks, teardown and the record;
``other`` is ``wall_s`` less every timed step. The sampler's background rounds are counted
apart (they overlap the run; they cost CPU, not wall time, except where the run waits for one).

Prints one line per run, then per step the median over the runs and its share of the median
harness time (``wall_s - agent_s``). ``--json FILE`` writes every run's steps;
``--profile FILE`` writes a cProfile of the runs (``python -m pstats FILE``). ``--tree`` (twice
or more) alternates the runs between source trees, each run a process of its own with
``PYTHONPATH=TREE`` (the trees meet the same load on a shared machine), and compares their
medians; ``--idle-agent`` replaces the agent by one that makes no call (a
failed run); ``--evaluate-ab TREE`` times the baseline check alone on one lab, alternating
between TREE's observer and this one's. Every lab is removed, also on failure or Ctrl-C.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import statistics
import sys
import tempfile
import threading
import time
import types
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from lab_up_down import machine  # noqa: E402


class Spans:
    """Timed steps of the current run: ``{step: seconds}`` (a step timed twice adds up), on the
    run's thread only; nested steps are kept (``parent/child``) but only top-level steps are
    subtracted from ``wall_s``."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.steps: dict[str, float] = defaultdict(float)
        self.top: float = 0.0
        self.depth = 0
        self.background: dict[str, float] = defaultdict(float)
        self.counts: dict[str, int] = defaultdict(int)

    def reset(self) -> None:
        self.__init__()
        self.thread = threading.current_thread()

    def add(self, name: str, seconds: float) -> None:
        self.steps[name] += seconds

    def wrap(self, name: str | Callable[[], str], fn: Callable[..., Any]) -> Callable[..., Any]:
        spans = self

        def timed(*args: Any, **kwargs: Any) -> Any:
            label = name() if callable(name) else name
            if threading.current_thread() is not spans.thread:
                t0 = time.monotonic()
                try:
                    return fn(*args, **kwargs)
                finally:
                    spans.background[label] += time.monotonic() - t0
                    spans.counts[label] += 1
            spans.depth += 1
            t0 = time.monotonic()
            try:
                return fn(*args, **kwargs)
            finally:
                dt = time.monotonic() - t0
                spans.depth -= 1
                spans.steps[label] += dt
                if spans.depth == 0:
                    spans.top += dt

        timed.__wrapped__ = fn  # type: ignore[attr-defined]
        return timed


SPANS = Spans()
#: replace the agent by one that makes no call (--idle-agent)
IDLE_AGENT = False


def _patch(obj: Any, attr: str, name: str | Callable[[], str]) -> None:
    """Wrap ``obj.attr`` (skipped if this tree has no such attribute: trees differ)."""
    fn = getattr(obj, attr, None)
    if callable(fn):
        setattr(obj, attr, SPANS.wrap(name, fn))


def instrument(deps: Any) -> None:
    """Wrap the steps of a run (:mod:`ani.campaign.execute`: module functions it calls by name,
    class methods of the observation and observer, the deps' factories)."""
    from ani.campaign import execute, observe_run, outcomes, run_record, runner
    from ani.observer import changes, evaluate, sampler
    from ani.trajectory import Trajectory

    for fn, label in [("resolve", "resolve (scenario, variant, agent)"), ("host_faults", "host-fault checks"),
                      ("dead_daemons", "dead-daemon check")]:
        _patch(execute, fn, label)
    _patch(run_record, "build_record", "record")
    _patch(outcomes, "measure", "measured outcomes")
    _patch(Trajectory, "close", "trajectory close")
    _patch(runner._TeeTrajectory, "__init__", "trajectory open")
    # a settle without an observation is execute's only time.sleep
    proxy = types.SimpleNamespace(**{k: getattr(time, k) for k in dir(time) if not k.startswith("__")})
    proxy.sleep = SPANS.wrap("settle sleep", time.sleep)
    execute.time = proxy  # type: ignore[assignment]

    obs = observe_run.RunObservation
    begin = SPANS.wrap("observation begin", obs.begin.__func__)  # type: ignore[attr-defined]
    obs.begin = classmethod(lambda cls, *a, **k: begin(cls, *a, **k))  # type: ignore[assignment]
    _patch(obs, "settle", "settle sleep")
    _patch(obs, "finish", "observation finish")
    _patch(obs, "stop", "observation stop")
    _patch(obs, "_unrequested", "observation finish/unrequested changes (config reads)")
    _patch(sampler.Sampler, "wait_recovered", "observation finish/wait recovered round")
    _patch(changes, "read_configs", "config reads (read_configs)")
    _patch(changes, "read_kernel", "kernel reads (read_kernel)")

    evals = {"n": 0}

    def eval_name() -> str:
        evals["n"] += 1
        return "baseline check" if evals["n"] == 1 else "grading"

    ev = evaluate.Observer.evaluate
    neg = evaluate.Observer._attempt_negative
    first_neg: dict[str, float] = {}

    def evaluate_split(self: Any, checks: Any, *args: Any, **kwargs: Any) -> Any:
        # the evaluation's positive part, until its first negative ping, and its negative part
        t0 = time.monotonic()
        try:
            return ev(self, checks, *args, **kwargs)
        finally:
            name = "baseline check" if evals["n"] == 1 else "grading"
            t1 = time.monotonic()
            tn = first_neg.pop(str(evals["n"]), t1)
            SPANS.add(f"{name}/positive checks", tn - t0)
            SPANS.add(f"{name}/negative checks", t1 - tn)

    evaluate.Observer.evaluate = evaluate_split  # type: ignore[method-assign]
    _patch(evaluate.Observer, "evaluate", eval_name)

    def attempt_negative(self: Any, check: Any) -> Any:
        first_neg.setdefault(str(evals["n"]), time.monotonic())
        return neg(self, check)

    evaluate.Observer._attempt_negative = attempt_negative  # type: ignore[method-assign]
    batched = evaluate.Observer._round  # the batched look (issue 24 §3)

    def round_(self: Any, checks: Any, gate: Any, workers: int, *, count: int, sure: bool, **kw: Any) -> Any:
        if count > 1 and threading.current_thread() is SPANS.thread:
            first_neg.setdefault(str(evals["n"]), time.monotonic())
        return batched(self, checks, gate, workers, count=count, sure=sure, **kw)

    evaluate.Observer._round = round_  # type: ignore[method-assign]
    _patch(evaluate.Observer, "sample", "sampler round (background)")
    SPANS.first_neg = first_neg  # type: ignore[attr-defined]
    SPANS.evals = evals  # type: ignore[attr-defined]

    make_lab, create_adapter, create_agent = deps.make_lab, deps.create_adapter, deps.create_agent

    def lab_of(topology: Any, **kwargs: Any) -> Any:
        lab = make_lab(topology, **kwargs)
        SPANS.lab = lab  # type: ignore[attr-defined]
        lab.up = SPANS.wrap("lab up", lab.up)
        lab.down = SPANS.wrap("teardown", lab.down)
        return lab

    def adapter_of(*args: Any, **kwargs: Any) -> Any:
        ad = SPANS.wrap("adapter create", create_adapter)(*args, **kwargs)
        for m in ("open", "tools", "close"):
            setattr(ad, m, SPANS.wrap(f"adapter {m}", getattr(ad, m)))
        return ad

    def agent_of(config: dict[str, Any]) -> Any:
        agent = SPANS.wrap("agent create", create_agent)(config)
        run = agent.run
        if IDLE_AGENT:  # the probe: an agent that makes no call (a failed run)
            def run(view: Any, adapter: Any, budget: Any) -> Any:
                return types.SimpleNamespace(steps=0, stop_reason="submitted", submitted=True)
        agent.run = SPANS.wrap("agent", run)
        return agent

    deps.make_lab, deps.create_adapter, deps.create_agent = lab_of, adapter_of, agent_of


def one_run(spec: Any, cell: Any, seed: int, out: str, deps: Any) -> dict[str, Any]:
    from ani.campaign.runner import run_one

    SPANS.reset()
    SPANS.first_neg.clear()  # type: ignore[attr-defined]
    SPANS.evals["n"] = 0  # type: ignore[attr-defined]
    rec = run_one(spec, cell, seed, out, deps=deps)
    steps = dict(SPANS.steps)
    lab = getattr(SPANS, "lab", None)
    for k, v in (getattr(lab, "timings", None) or {}).items():
        if k in ("build_s", "converge_s", "netconf_wait_s", "ssh_wait_s"):
            steps[f"lab up/{k[:-2].replace('_', ' ')}"] = v
    row: dict[str, Any] = {"run_id": rec.run_id, "label": rec.label, "wall_s": rec.wall_s,
                           "agent_s": rec.agent_s or 0.0, "harness_s": round(rec.wall_s - (rec.agent_s or 0.0), 3),
                           "steps": {k: round(v, 3) for k, v in steps.items()},
                           "other": round(rec.wall_s - SPANS.top, 3),
                           "background": {k: round(v, 3) for k, v in SPANS.background.items()},
                           "sampler_rounds": SPANS.counts.get("sampler round (background)", 0),
                           "timings": dict(getattr(rec, "timings", None) or {}),
                           "record": {p: getattr(rec, p)
                                      for p in ("lab_up_s", "baseline_s", "grading_s", "teardown_s")}}
    return row


def report(rows: list[dict[str, Any]]) -> None:
    names: list[str] = []
    for r in rows:
        names += [k for k in r["steps"] if k not in names]
    h = statistics.median(r["harness_s"] for r in rows)
    print(f"\nmedian over {len(rows)} runs: wall {statistics.median(r['wall_s'] for r in rows):.2f} s, "
          f"agent {statistics.median(r['agent_s'] for r in rows):.2f} s, harness (wall - agent) {h:.2f} s")
    print(f"{'step':58s} {'median s':>9s} {'share':>6s}")
    top = sorted((k for k in names if k != "agent"), key=lambda k: (k.split("/")[0], "/" in k))
    for k in top:
        vals = [r["steps"].get(k, 0.0) for r in rows]
        med = statistics.median(vals)
        ind = "  " if "/" in k else ""
        print(f"{ind + k:58s} {med:9.3f} {(med / h if h else 0):6.1%}")
    med = statistics.median(r["other"] for r in rows)
    print(f"{'other (wall_s less every timed step)':58s} {med:9.3f} {(med / h if h else 0):6.1%}")
    print(f"{'sampler rounds per run (background)':58s} {statistics.median(r['sampler_rounds'] for r in rows):9.1f}")


def evaluate_ab(args: argparse.Namespace) -> int:
    """The baseline check of one lab, ``-n`` times, alternating between the Observer of
    ``--evaluate-ab TREE`` (its ``ani/observer/evaluate.py``) and this tree's: same lab, same load."""
    import importlib.util

    from ani.campaign.execute import superseded
    from ani.campaign.runner import RunnerDeps, prepare, variant_of
    from ani.campaign.spec import load_spec
    from ani.lab.lab import Lab
    from ani.observer import evaluate as new

    path = Path(args.evaluate_ab) / "ani" / "observer" / "evaluate.py"
    spec_ = importlib.util.spec_from_file_location("ani_observer_evaluate_other", path)
    assert spec_ is not None and spec_.loader is not None
    old = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(old)
    spec = load_spec(args.campaign)
    cell = spec.cell(args.cells.split(",")[0]) if args.cells else spec.cells[0]
    scen, task = prepare(spec, RunnerDeps(), cell)
    variant = variant_of(task, scen, spec.seed, spec.form_of(cell))
    checks, _gone = superseded(scen, variant)
    print(machine())
    print(f"{len(checks)} invariants ({sum(1 for c in checks if c.kind == 'reach' and not c.expect)} negative); "
          f"A = {path}, B = this tree")
    lab = Lab(variant.lab_topology(scen), netconf=False, ssh=False).up()
    times: dict[str, list[float]] = {"A": [], "B": []}
    try:
        new.Observer(lab).evaluate(checks)  # the first look after up() waits for the last routes
        for i in range(args.repeat):
            for name in (("A", "B") if i % 2 == 0 else ("B", "A")):
                mod = old if name == "A" else new
                with open("/proc/loadavg") as f:
                    load = f.read().split()[0]
                t0 = time.monotonic()
                res = mod.Observer(lab).evaluate(checks)
                dt = time.monotonic() - t0
                times[name].append(dt)
                print(f"  {name}: {dt:.2f} s, {sum(r.passed for r in res)}/{len(res)} passed (load {load})", flush=True)
    finally:
        lab.down()
    a, b = statistics.median(times["A"]), statistics.median(times["B"])
    print(f"median A {a:.2f} s, B {b:.2f} s: B/A = {b / a:.2f}")
    return 0


def compare(args: argparse.Namespace) -> int:
    """Runs alternating between ``args.tree`` (same load for each), then the medians side by side."""
    import os
    import subprocess

    from ani.campaign.spec import load_spec

    spec = load_spec(args.campaign)
    cells = args.cells.split(",") if args.cells else [c.name for c in spec.cells]
    first = spec.seed if args.seed is None else args.seed
    rows: dict[str, list[dict[str, Any]]] = {str(t): [] for t in args.tree}
    print("trees (runs alternate between them): " + ", ".join(map(str, args.tree)))
    print(machine())
    with tempfile.TemporaryDirectory(prefix="ani-bench-", dir="/var/tmp") as tmp:
        k = 0
        for seed in range(first, first + args.repeat):
            for cell in cells:
                order = args.tree if k % 2 == 0 else list(reversed(args.tree))
                k += 1
                for n, tree in enumerate(order):
                    out = Path(tmp) / f"{k}-{n}.json"
                    path = str(tree)
                    env = {**os.environ, "PYTHONPATH": str(Path(path).resolve())}
                    done = subprocess.run([sys.executable, __file__, args.campaign, "--cells", cell, "--seed",
                                           str(seed), "-n", "1", "--json", str(out),
                                           *(["--idle-agent"] if args.idle_agent else [])],
                                          env=env, stdout=subprocess.DEVNULL)
                    if done.returncode != 0 or not out.exists():
                        print(f"  {tree}: {cell} seed {seed}: failed (exit status {done.returncode})", flush=True)
                        continue
                    row = json.loads(out.read_text())[0]
                    rows[str(tree)].append(row)
                    print(f"  {tree}: {row['run_id']}: {row['label']}; wall {row['wall_s']:.2f}, agent "
                          f"{row['agent_s']:.2f}, harness {row['harness_s']:.2f} (load {row['load']})", flush=True)
                    if args.json:  # kept as the runs come: a long comparison can be read half-way
                        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    for tree, rs in rows.items():
        print(f"\n== {tree}")
        if rs:
            report(rs)
    meds = {t: statistics.median(r["harness_s"] for r in rs) for t, rs in rows.items() if rs}
    base = meds.get(str(args.tree[0])) or 1.0
    print("\nmedian harness time: "
          + ", ".join(f"{t} {m:.2f} s ({m / base:.2f} of the first)" for t, m in meds.items()))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("campaign", nargs="?", default=str(ROOT / "campaigns" / "level-sweep-default.yaml"))
    ap.add_argument("--cells", default=None, help="comma-separated cell names (default: every cell)")
    ap.add_argument("-n", "--repeat", type=int, default=1, help="seeds per cell (from the file's seed)")
    ap.add_argument("--json", type=Path, default=None, help="write every run's steps to this file")
    ap.add_argument("--profile", type=Path, default=None, help="write a cProfile of the runs here")
    ap.add_argument("--seed", type=int, default=None, help="first seed (default: the file's)")
    ap.add_argument("--tree", action="append", default=[], type=Path,
                    help="a source tree to run (repeat: runs alternate between the trees, each run in a "
                         "process of its own with PYTHONPATH=TREE; the medians are compared)")
    ap.add_argument("--evaluate-ab", metavar="TREE", default=None,
                    help="instead of runs: the baseline check of one lab, -n times, alternating between "
                         "TREE's observer and this tree's")
    ap.add_argument("--idle-agent", action="store_true",
                    help="an agent that makes no call: the task is not done, the hidden tests fail (the "
                         "issue's probe of a failed run's grading)")
    args = ap.parse_args()
    global IDLE_AGENT
    IDLE_AGENT = args.idle_agent
    if args.evaluate_ab:
        return evaluate_ab(args)
    if args.tree:
        return compare(args)

    from ani.campaign.runner import RunnerDeps, prepare
    from ani.campaign.spec import load_spec

    spec = load_spec(args.campaign)
    cells = [spec.cell(c) for c in args.cells.split(",")] if args.cells else list(spec.cells)
    deps = RunnerDeps()
    scen, _task = prepare(spec, deps, cells[0])
    print(f"{args.campaign}: cells {', '.join(c.name for c in cells)}, task {spec.task_of(cells[0])}, scenario "
          f"{scen.name} ({len(scen.topology.routers)} routers, {len(list(scen.invariants))} invariants)")
    print(machine())
    instrument(deps)
    rows: list[dict[str, Any]] = []
    prof = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory(prefix="ani-bench-") as out:
        first = spec.seed if args.seed is None else args.seed
        for seed in range(first, first + args.repeat):
            for cell in cells:
                with open("/proc/loadavg") as f:
                    load = f.read().split()[0]
                if prof is not None:
                    prof.enable()
                row = one_run(spec, cell, seed, out, deps)
                if prof is not None:
                    prof.disable()
                row["load"] = float(load)
                rows.append(row)
                print(f"  {row['run_id']}: {row['label']}; wall {row['wall_s']:.2f}, agent {row['agent_s']:.2f}, "
                      f"harness {row['harness_s']:.2f}, other {row['other']:.2f} (load {load})")
    report(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    if prof is not None:
        prof.dump_stats(str(args.profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
