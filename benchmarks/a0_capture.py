#!/usr/bin/env python3
"""A0's change detection: one capture of a router's state (``A0Adapter.state_of``), which every
``shell`` call makes twice (before and after the command).

Usage (as root)::

    .venv/bin/python benchmarks/a0_capture.py [FILE] [-n 50] [--router e1] [--sandbox]

FILE is the scenario (default ``scenarios/brownfield-small.yaml``). One lab is brought up
(without its NETCONF server) and always removed. A capture is FRR's running config and the
nftables ruleset through the device layer's reader (``ani.device.state.read_state``: two runs
inside the router, each after the lab-gone and dead-daemon checks) plus one process for the
addresses, routes, rules and forwarding sysctls. Figures: median / p95 / min / max in
milliseconds (p95: nearest rank), wall time; the load average is printed first.

``--sandbox`` also times one sandboxed ``true`` (``sandbox.run_in_sandbox``: the call's cgroups
made and removed, the router's user namespace entered), against the same sandbox without those
two (``run_capped(sandbox_argv(...))`` with no ``userns_fd`` and no cgroup wrapper: the sandbox
before issue 12), and the cgroups alone (``CallCgroup`` enter + exit), interleaved, same lab.
"""

from __future__ import annotations

import argparse
import math
import os
import pwd
import secrets
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ani.adapters import sandbox  # noqa: E402
from ani.adapters.a0 import A0Adapter  # noqa: E402
from ani.lab.lab import Lab  # noqa: E402
from ani.scenario.manifest import load_scenario  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", default=str(ROOT / "scenarios" / "brownfield-small.yaml"))
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--router", default="e1")
    ap.add_argument("--sandbox", action="store_true", help="also time one sandboxed `true`, new vs old")
    args = ap.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    lab = Lab(load_scenario(args.file).topology, lab_id="a0cap" + secrets.token_hex(3), netconf=False)
    try:
        lab.up()
        adapter = A0Adapter(lab)
        adapter.state_of(args.router)  # warm-up
        times = []
        for _ in range(args.n):
            t0 = time.monotonic()
            assert adapter.state_of(args.router) is not None
            times.append((time.monotonic() - t0) * 1000)
        extra = time_sandbox(adapter.sandbox_spec(args.router), args.n) if args.sandbox else {}
    finally:
        lab.down()
    report(f"state_of({args.router})", times)
    for name, ts in extra.items():
        report(name, ts)


def report(name: str, times: list[float]) -> None:
    times = sorted(times)
    p95 = times[max(0, math.ceil(0.95 * len(times)) - 1)]
    print(f"{name} ms: median {statistics.median(times):.1f}  p95 {p95:.1f}  "
          f"min {times[0]:.1f}  max {times[-1]:.1f}  (n = {len(times)})")


def time_sandbox(spec: sandbox.SandboxSpec, n: int) -> dict[str, list[float]]:
    """``{name: [ms, ...]}`` of the new sandbox, the old one and the cgroups alone (interleaved)."""
    out: dict[str, list[float]] = {"run_in_sandbox(true)": [], "old sandbox(true)": [], "CallCgroup only": []}
    for i in range(n + 1):
        t0 = time.monotonic()
        assert sandbox.run_in_sandbox(spec, "true").exit_status == 0
        t1 = time.monotonic()
        r, w = os.pipe()
        os.write(w, sandbox.VTYSH_PAM)
        os.close(w)
        try:
            argv = sandbox.sandbox_argv(spec, "true", pam_fd=r, nproc=sandbox.user_task_count(pwd.getpwnam(spec.user).pw_uid) + sandbox.NPROC_HEADROOM)
            assert sandbox.run_capped(argv, timeout_s=30, max_bytes=65536, pass_fds=(r,)).exit_status == 0
        finally:
            os.close(r)
        t2 = time.monotonic()
        with sandbox.CallCgroup():
            pass
        t3 = time.monotonic()
        if i:  # the first round is a warm-up
            out["run_in_sandbox(true)"].append((t1 - t0) * 1000)
            out["old sandbox(true)"].append((t2 - t1) * 1000)
            out["CallCgroup only"].append((t3 - t2) * 1000)
    return out


if __name__ == "__main__":
    main()
