#!/usr/bin/env python3
"""A0's vtysh through the broker (``ani.adapters.vtybroker``): one sandboxed ``vtysh -c`` run,
against the same command on the router's daemons directly (the harness's vtysh, no sandbox).

Usage (as root)::

    .venv/bin/python benchmarks/a0_vtysh_broker.py [FILE] [-n 20] [--router e1]

One lab is brought up (without its NETCONF server) and always removed. Figures in milliseconds
(median / min / max): ``sandbox_only``: ``run_in_sandbox(spec, "true")``; ``broker``:
``run_in_sandbox`` of ``vtysh -c 'show version'`` with a broker (client in the sandbox, line
check, real vtysh outside); ``direct``: ``lab.vtysh(router, 'show version')``. The line check's
command set is loaded before timing (listed once per vtysh binary, ~10 s, then cached).
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ani.adapters import sandbox, vtybroker  # noqa: E402
from ani.adapters.a0 import A0Adapter  # noqa: E402
from ani.lab.lab import Lab  # noqa: E402
from ani.scenario.manifest import load_scenario  # noqa: E402


def _ms(f, n: int) -> list[float]:  # noqa: ANN001
    out = []
    for _ in range(n):
        t0 = time.monotonic()
        f()
        out.append((time.monotonic() - t0) * 1000)
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", default=str(ROOT / "scenarios" / "brownfield-small.yaml"))
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--router", default="e1")
    args = ap.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    lab = Lab(load_scenario(args.file).topology, lab_id="a0vty" + secrets.token_hex(3), netconf=False)
    try:
        lab.up()
        spec = A0Adapter(lab).sandbox_spec(args.router)
        checker = vtybroker.checker_for((), spec.pathspace)

        def brokered() -> None:
            b = vtybroker.VtyBroker(spec.netns, spec.pathspace, args.router, checker,
                                    deadline=time.monotonic() + 30, max_bytes=1 << 20)
            try:
                r = sandbox.run_in_sandbox(spec, "vtysh -c 'show version'", vty_dir=b.dir)
                assert r.exit_status == 0 and "FRRouting" in r.stdout, r.stderr
            finally:
                b.close()

        rows = {
            "sandbox_only": _ms(lambda: sandbox.run_in_sandbox(spec, "true"), args.n),
            "broker": _ms(brokered, args.n),
            "direct": _ms(lambda: lab.vtysh(args.router, "show version"), args.n),
        }
    finally:
        lab.down()
    for name, t in rows.items():
        print(f"{name:13s} ms: median {statistics.median(t):.1f}  min {t[0]:.1f}  max {t[-1]:.1f}  (n = {len(t)})")


if __name__ == "__main__":
    main()
