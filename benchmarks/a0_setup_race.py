#!/usr/bin/env python3
"""A0 sandbox setup under mount churn, and what telling a failed setup apart costs per call.

Usage (as root)::

    .venv/bin/python benchmarks/a0_setup_race.py [-n 200] [--dirs 8]

One lab (``tests/data/a0_two.yaml``, no NETCONF server) is brought up and always removed. Three
series of sandboxed ``true`` in router r1 (``sandbox._run_once``: one setup, no retry), interleaved:

- ``new``: as ``run_in_sandbox`` makes it: the root bound per top-level entry without ``/run``
  (``sandbox.root_binds``) and bwrap's ``--json-status-fd`` read after the call;
- ``old root + status fd``: ``--ro-bind / /`` instead of the per-entry binds;
- ``old``: ``--ro-bind / /`` and no status fd (the sandbox before the fix);

then, for the new and the old root, ``-n`` calls of ``sandbox.run_in_sandbox`` while a thread
mounts and unmounts ``--dirs`` tmpfs dirs ``/run/frr/ani-bench<random>-c<k>`` (mkdir, mount;
umount, rmdir: what lab up / down do to the run dirs) in a tight loop: how many setups failed
(first attempts included), how many calls needed a retry (``attempts`` > 1), how many raised
SandboxSetupFailed. Figures: median / p95 / min / max in milliseconds; the load average is
printed first.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import math
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from ani.adapters import sandbox  # noqa: E402
from ani.adapters.a0 import A0Adapter  # noqa: E402
from ani.errors import SandboxSetupFailed  # noqa: E402
from ani.lab.lab import Lab  # noqa: E402
from ani.lab.topology import load_topology  # noqa: E402
from mount_churn import churn_run_dirs  # noqa: E402 - tests/mount_churn.py


def report(name: str, times: list[float]) -> None:
    times = sorted(times)
    p95 = times[max(0, math.ceil(0.95 * len(times)) - 1)]
    print(f"{name} ms: median {statistics.median(times):.1f}  p95 {p95:.1f}  "
          f"min {times[0]:.1f}  max {times[-1]:.1f}  (n = {len(times)})")


OLD_ROOT = lambda run_root="/run": ["--ro-bind", "/", "/"]  # noqa: E731 - the sandbox before the fix


def once(spec: sandbox.SandboxSpec, uid: int, with_status: bool, old_root: bool) -> float | None:
    real, real_root = sandbox.run_with_status, sandbox.root_binds
    if old_root:
        sandbox.root_binds = OLD_ROOT
    if not with_status:
        def plain(argv_for, **kw):  # noqa: ANN001, ANN003, ANN202
            argv = argv_for(-1)
            i = argv.index("--json-status-fd")
            return sandbox.run_capped(argv[:i] + argv[i + 2:], **kw), b'{ "exit-code": 0 }'
        sandbox.run_with_status = plain
    try:
        t0 = time.monotonic()
        res = sandbox._run_once(spec, "true", uid, timeout_s=30, max_bytes=65536, vty_dir=None, config_read_only=False)
        ms = (time.monotonic() - t0) * 1000
        # a setup failed by other labs' activity (the host is shared): counted, not timed
        return None if res.exit_status != 0 and "bwrap:" in res.stderr else ms
    finally:
        sandbox.run_with_status, sandbox.root_binds = real, real_root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--dirs", type=int, default=8)
    args = ap.parse_args()
    stack = contextlib.ExitStack()  # the mount churn, once started
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    import pwd

    lab = Lab(load_topology(ROOT / "tests" / "data" / "a0_two.yaml"), lab_id="a0race" + secrets.token_hex(3), netconf=False)
    try:
        lab.up()
        spec = A0Adapter(lab).sandbox_spec("r1")
        uid = pwd.getpwnam(spec.user).pw_uid
        kinds = {"new": (True, False), "old root + status fd": (True, True), "old": (False, True)}
        series: dict[str, list[float]] = {k: [] for k in kinds}
        lost: collections.Counter[str] = collections.Counter()
        for i in range(args.n // 2 + 1):
            for name, (st, old) in kinds.items():
                ms = once(spec, uid, st, old)
                if ms is None:
                    lost[name] += 1
                elif i:  # the first round is a warm-up
                    series[name].append(ms)
        for name, ts in series.items():
            report(f"sandboxed true, {name}", ts)
        print(f"setups failed without churn of ours (other labs of the host): {dict(lost) or 0}")
        failed_setups = 0
        real = sandbox.setup_failed

        def counting(res, status):  # noqa: ANN001, ANN202
            nonlocal failed_setups
            bad = real(res, status)
            failed_setups += bad
            return bad

        sandbox.setup_failed = counting
        stack.enter_context(churn_run_dirs(args.dirs, prefix="bench"))
        real_root = sandbox.root_binds
        for label, root in (("new root", real_root), ("old root", OLD_ROOT)):
            sandbox.root_binds = root
            failed_setups = 0
            attempts: collections.Counter[int] = collections.Counter()
            raised, times = 0, []
            for _ in range(args.n):
                t0 = time.monotonic()
                try:
                    attempts[sandbox.run_in_sandbox(spec, "true").attempts] += 1
                except SandboxSetupFailed:
                    raised += 1
                times.append((time.monotonic() - t0) * 1000)
            sandbox.root_binds = real_root
            report(f"run_in_sandbox(true), {label}, under churn of {args.dirs} dirs", times)
            print(f"{label} under churn: {failed_setups} failed setups in {args.n} calls; calls by attempts "
                  f"{dict(sorted(attempts.items()))}; SandboxSetupFailed raised {raised}")
    finally:
        stack.close()
        lab.down()


if __name__ == "__main__":
    main()
