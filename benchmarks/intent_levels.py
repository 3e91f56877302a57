#!/usr/bin/env python3
"""A3-T, A3-R and A4 tool calls against a real lab: plan, transactions, drift, reconcile.

Usage (as root)::

    .venv/bin/python benchmarks/intent_levels.py [FILE] [-n 5] [--variant 0]

FILE is the scenario (default ``scenarios/brownfield-small.yaml``). One lab is brought up from
the onboard-site variant's topology (``get_task_class("onboard-site").variant(scenario,
VARIANT).lab_topology(scenario)``: the brownfield plus the new site's host, cabled to its edge)
and always removed. Then, each ``-n`` times (wall time of the adapter's tool call):

1. A3-T (``create_adapter("a3t", lab)``, default options): ``plan`` of the variant's
   ``tenant-site`` onboard (site, edge, prefix and gateway from ``variant.params``); ``apply`` of
   it and ``apply`` of its ``remove``, alternately (the whole transaction: live reads, compile,
   lock, edit, validate, confirmed commit, active validation, confirm, unlock).
2. A3-R (``create_adapter("a3r", lab)``): ``drift()`` with no drift; a no-op ``reconcile()``
   (checked: nothing sent); ``sot_patch`` + ``sot_commit`` of a one-line change of
   ``devices/<edge>.json`` (``ip prefix-list PL-TENANTS seq 90 deny 192.0.2.0/24`` added, then
   removed, alternately), the commit including its reconcile.
3. A4 (``create_adapter("a4", lab)``): ``sot_patch`` + ``sot_commit`` of a service file
   (``static-route`` 192.0.2.0/24 to Null0 on the edge), then ``sot_delete`` + ``sot_commit``,
   alternately, the commit including its transaction.

For every transaction (A3-T ``apply``, A4 ``sot_commit``) the benchmark also times, in the same
process and without running anything twice, the active validation
(``ani.intents.transaction.run_checks`` as the transaction calls it; the number of checks and
how many are isolation checks, i.e. pings that must go unanswered) and the NETCONF RPCs of
the transaction by operation (``commit`` = the confirmed commits, ``confirm`` = the confirming
ones; ``other`` = lock, edit, validate, unlock). "rest" is the call minus both: live reads of
the routers (``ani.device.apply.read``), compile, check derivation, reads for the rollback
baseline.

Figures: median / p95 / min / max in milliseconds (p95 is the nearest-rank 95th percentile, as
in ``netconf_rtt.py``). The load average is printed before each part: other suites running on
the same machine change every figure here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from lab_up_down import machine  # noqa: E402
from netconf_rtt import p95  # noqa: E402

DEFAULT = ROOT / "scenarios" / "brownfield-small.yaml"
BENCH_PREFIX = "192.0.2.0/24"
PL_SEQ = "90"

#: one record per transaction, filled by the wrappers installed by :func:`instrument`
_TX: list[dict[str, Any]] = []
#: router reads (``ani.device.apply.read``): count and seconds, since the process started
_READS = {"n": 0, "s": 0.0}


class Series:
    """Wall times of one tool call, with the router reads each call made."""

    def __init__(self) -> None:
        self.t: list[float] = []
        self.reads_n: list[int] = []
        self.reads_s: list[float] = []

    def add(self, dt: float, reads: tuple[int, float]) -> None:
        self.t.append(dt)
        self.reads_n.append(reads[0])
        self.reads_s.append(reads[1])


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def row(name: str, xs: list[float] | Series) -> str:
    reads = ""
    if isinstance(xs, Series):
        n = sorted(set(xs.reads_n))
        if n != [0]:
            reads = (f"; router reads per call {'/'.join(map(str, n))}, "
                     f"median {statistics.median(xs.reads_s) * 1000:.0f} ms")
        xs = xs.t
    ms = [x * 1000 for x in xs]
    return (f"{name:44s} {statistics.median(ms):9.1f} {p95(ms):9.1f} {min(ms):9.1f} {max(ms):9.1f}"
            f"   (n={len(ms)}{reads})")


def header(what: str) -> str:
    return f"{what:44s} {'median':>9s} {'p95':>9s} {'min':>9s} {'max':>9s}   (milliseconds)"


def instrument() -> None:
    """Time the active validation and the NETCONF RPCs of every ``run_transaction``, in place.

    ``run_transaction`` looks ``run_checks`` and ``NetconfSession`` up in its module at call time,
    so replacing them there times exactly what the transaction runs (nothing runs twice)."""
    import ani.device.apply as dev
    import ani.intents.transaction as txm

    real_read = dev.read

    def timed_read(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return real_read(*a, **kw)
        finally:
            _READS["n"] += 1
            _READS["s"] += time.perf_counter() - t

    real_run_checks = txm.run_checks
    real_session = txm.NetconfSession

    def timed_run_checks(lab: Any, checks: Any, bound_s: float = 20.0) -> list[dict[str, Any]]:
        t = time.perf_counter()
        out = real_run_checks(lab, checks, bound_s=bound_s)
        rec = _TX[-1]
        rec["checks_s"] = time.perf_counter() - t
        rec["n_checks"] = len(checks)
        rec["n_isolation"] = sum(1 for c in checks if getattr(c, "kind", "") == "reach"
                                 and getattr(c, "expect", True) is False)
        rec["passed"] = all(c["passed"] for c in out)
        return out

    class TimedSession(real_session):  # type: ignore[misc, valid-type]
        def call(self, op: str, **kw: Any) -> Any:
            key = ("commit" if kw.get("confirmed") else "confirm") if op == "commit" else "other"
            t = time.perf_counter()
            try:
                return super().call(op, **kw)
            finally:
                rec = _TX[-1]
                rec[key] = rec.get(key, 0.0) + time.perf_counter() - t

    real_run_transaction = txm.run_transaction

    def timed_run_transaction(*a: Any, **kw: Any) -> Any:
        _TX.append({"checks_s": 0.0, "n_checks": 0, "n_isolation": 0})
        t = time.perf_counter()
        try:
            return real_run_transaction(*a, **kw)
        finally:
            _TX[-1]["tx_s"] = time.perf_counter() - t

    dev.read = timed_read  # every caller imports it from the module at call time
    txm.run_checks = timed_run_checks
    txm.NetconfSession = TimedSession
    txm.run_transaction = timed_run_transaction


def timed(adapter: Any, tool: str, args: dict[str, Any]) -> tuple[Any, float, tuple[int, float]]:
    """``(result, seconds, (router reads, their seconds))`` of one tool call."""
    n0, s0 = _READS["n"], _READS["s"]
    t = time.perf_counter()
    r = adapter.call(tool, args)
    dt = time.perf_counter() - t
    return r, dt, (_READS["n"] - n0, _READS["s"] - s0)


def tx_rows(name: str, series: Series, txs: list[dict[str, Any]]) -> list[str]:
    """The call, and what its transactions spent where (one transaction per call)."""
    calls = series.t
    assert len(calls) == len(txs), (name, len(calls), len(txs))
    out = [row(name, series)]
    parts = {
        "  active validation (run_checks)": [t["checks_s"] for t in txs],
        "  NETCONF commit (confirmed, all routers)": [t.get("commit", 0.0) for t in txs],
        "  NETCONF confirm (all routers)": [t.get("confirm", 0.0) for t in txs],
        "  NETCONF lock/edit/validate/unlock": [t.get("other", 0.0) for t in txs],
        "  router reads (ani.device.apply.read)": series.reads_s,
        "  rest (compile, checks derived, git, ...)": [
            c - t["checks_s"] - t.get("commit", 0.0) - t.get("confirm", 0.0) - t.get("other", 0.0) - rs
            for c, t, rs in zip(calls, txs, series.reads_s, strict=True)],
    }
    out += [row(k, v) for k, v in parts.items()]
    shares = [t["checks_s"] / c for c, t in zip(calls, txs, strict=True)]
    n = sorted({t["n_checks"] for t in txs})
    iso = sorted({t["n_isolation"] for t in txs})
    out.append(f"  active validation share of the call: median {statistics.median(shares):.0%} "
               f"(min {min(shares):.0%}, max {max(shares):.0%}); checks per transaction: {n}, of which "
               f"isolation (unanswered pings): {iso}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("-n", "--repeat", type=int, default=5)
    ap.add_argument("--variant", type=int, default=0, help="onboard-site variant index")
    args = ap.parse_args()

    from ani.lab import Lab
    from ani.registry import create_adapter
    from ani.scenario import get_task_class, load_scenario
    from ani.sot.patch import pointer

    instrument()
    scenario = load_scenario(args.file)
    variant = get_task_class("onboard-site").variant(scenario, args.variant)
    p = variant.params
    edge = p["edge"]
    onboard = {"type": "tenant-site", "action": "onboard", "tenant": p["tenant"], "site": p["site"],
               "edge": edge, "prefix": p["prefix"], "gateway": p["gateway"]}
    remove = {"type": "tenant-site", "action": "remove", "tenant": p["tenant"], "site": p["site"]}
    print(machine())
    print(f"variant {variant.variant_id}: {onboard}")
    print(f"load average before: {loadavg()}")
    results: list[str] = []
    lab = Lab(variant.lab_topology(scenario))
    try:
        t0 = time.monotonic()
        lab.up()
        print(f"lab up in {time.monotonic() - t0:.2f} s")

        # -- A3-T ---------------------------------------------------------------------------
        print(f"A3-T, load average: {loadavg()}")
        plans, ons, offs = Series(), Series(), Series()
        with create_adapter("a3t", lab) as a3t:
            for _ in range(args.repeat):
                r, dt, rd = timed(a3t, "plan", {"changes": [onboard]})
                assert r.ok, r.text
                plans.add(dt, rd)
            n_plan_checks = len(r.data["checks"])
            k0 = len(_TX)
            for _ in range(args.repeat):
                r, dt, rd = timed(a3t, "apply", {"changes": [onboard]})
                assert r.ok and r.changed, r.text
                ons.add(dt, rd)
                r, dt, rd = timed(a3t, "apply", {"changes": [remove]})
                assert r.ok and r.changed, r.text
                offs.add(dt, rd)
            txs = _TX[k0:]
        results += ["", header("A3-T"), row(f"plan (onboard; {n_plan_checks} checks listed)", plans)]
        results += tx_rows("apply onboard (transaction, e1..e4)", ons, txs[0::2])
        results += tx_rows("apply remove (transaction)", offs, txs[1::2])

        # -- A3-R ---------------------------------------------------------------------------
        print(f"A3-R, load average: {loadavg()}")
        drifts, noops, adds, dels, patches = Series(), Series(), Series(), Series(), Series()
        a3r = create_adapter("a3r", lab)
        t = time.perf_counter()
        a3r.open()
        a3r_open = time.perf_counter() - t
        try:
            for _ in range(args.repeat):
                r, dt, rd = timed(a3r, "drift", {})
                assert r.ok and r.data["drift"] == {}, r.text
                drifts.add(dt, rd)
            for _ in range(args.repeat):
                r, dt, rd = timed(a3r, "reconcile", {})
                rec = r.data["reconcile"]
                assert r.ok and not r.changed and rec["tries"] == 0 and not rec["applied"], r.text
                noops.add(dt, rd)
            path = f"devices/{edge}.json"
            where = pointer("prefix_lists", "PL-TENANTS", "entries", PL_SEQ)
            base = a3r.call("sot_list", {}).data["revision"]
            for i in range(2 * args.repeat):
                op = ({"op": "add", "path": where, "value": {"action": "deny", "prefix": BENCH_PREFIX}}
                      if i % 2 == 0 else {"op": "remove", "path": where})
                r, dp, rp = timed(a3r, "sot_patch", {"path": path, "patch": [op], "base_revision": base})
                assert r.ok and r.data["changed"], r.text
                r, dc, rc = timed(a3r, "sot_commit", {"message": f"bench {i}"})
                rec = r.data["reconcile"]
                assert r.ok and r.changed and rec["status"] == "converged" and rec["applied"] == [edge], r.text
                base = r.data["revision"]
                patches.add(dp, rp)
                (adds if i % 2 == 0 else dels).add(dp + dc, (rp[0] + rc[0], rp[1] + rc[1]))
        finally:
            a3r.close()
        results += ["", header("A3-R"), row("drift() (no drift)", drifts),
                    row("reconcile() with nothing to do", noops),
                    row("sot_patch (one op)", patches),
                    row("sot_patch + sot_commit, entry added", adds),
                    row("sot_patch + sot_commit, entry removed", dels),
                    f"(A3-R adapter open: {a3r_open * 1000:.0f} ms)"]

        # -- A4 -----------------------------------------------------------------------------
        print(f"A4, load average: {loadavg()}")
        route = {"type": "static-route", "action": "add", "router": edge, "prefix": BENCH_PREFIX,
                 "next_hop": "Null0"}
        svc = "services/discard-192.0.2.0.json"
        a4_add, a4_del, a4_patch, a4_commit_add, a4_commit_del = Series(), Series(), Series(), Series(), Series()
        a4 = create_adapter("a4", lab)
        t = time.perf_counter()
        a4.open()
        a4_open = time.perf_counter() - t
        try:
            base = a4.call("sot_list", {}).data["revision"]
            k0 = len(_TX)
            for i in range(2 * args.repeat):
                if i % 2 == 0:
                    ops = [{"op": "add", "path": f"/{k}", "value": v} for k, v in route.items()]
                    r, dp, rp = timed(a4, "sot_patch", {"path": svc, "patch": ops, "base_revision": base})
                    a4_patch.add(dp, rp)
                else:
                    r, dp, rp = timed(a4, "sot_delete", {"path": svc, "base_revision": base})
                assert r.ok, r.text
                r, dc, rc = timed(a4, "sot_commit", {"message": f"bench {i}"})
                rec = r.data["reconcile"]
                assert r.ok and r.changed and rec["status"] == "converged" and rec["applied"] == [edge], r.text
                base = r.data["revision"]
                (a4_add if i % 2 == 0 else a4_del).add(dp + dc, (rp[0] + rc[0], rp[1] + rc[1]))
                (a4_commit_add if i % 2 == 0 else a4_commit_del).add(dc, rc)
            txs = _TX[k0:]
            drift_left = a4.call("drift", {}).data["drift"]
            assert drift_left == {}, drift_left
        finally:
            a4.close()
        results += ["", header("A4"), row("sot_patch of the service file", a4_patch),
                    row("sot_patch + sot_commit, service added", a4_add),
                    row("sot_delete + sot_commit, service deleted", a4_del)]
        results += tx_rows("sot_commit adding it (transaction, e1)", a4_commit_add, txs[0::2])
        results += tx_rows("sot_commit deleting it (transaction, e1)", a4_commit_del, txs[1::2])
        results.append(f"(A4 adapter open: {a4_open * 1000:.0f} ms)")
    finally:
        lab.down()

    print("\n".join(results))
    print(f"load average after: {loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
