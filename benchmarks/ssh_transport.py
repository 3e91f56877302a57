#!/usr/bin/env python3
"""What the routers' CLIs over SSH cost: ``Lab.up()`` with and without the lab's SSH server, and
A1's calls over ``transport: local`` vs ``transport: ssh`` (a session's open, a read, an
``update_config``).

Usage (as root)::

    .venv/bin/python benchmarks/ssh_transport.py [FILE] [-n 5] [--calls 30]

FILE: a topology (default ``tests/data/a1_pair.yaml``). Prints median / min / max of each: lab up
(ssh on, ssh off: ``n`` labs each, alternated), the SSH server's CPU time while the lab came up,
A1's first call on a router (the session opens), ``execute_validation show bgp summary``,
``get_running_config`` and ``update_config`` of one prefix-list line (``--calls`` each, per
transport, alternated on one lab). Every lab is removed, also on failure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from lab_up_down import machine  # noqa: E402


def stats(xs: list[float]) -> str:
    return f"{statistics.median(xs) * 1000:.0f} ms ({min(xs) * 1000:.0f}-{max(xs) * 1000:.0f})"


def cpu_s(pid: int) -> float:
    import os

    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file", nargs="?", type=Path, default=ROOT / "tests" / "data" / "a1_pair.yaml")
    ap.add_argument("-n", "--repeat", type=int, default=5)
    ap.add_argument("--calls", type=int, default=30)
    args = ap.parse_args()

    from ani.adapters.a1 import A1Adapter
    from ani.lab import Lab

    print(machine())
    ups: dict[bool, list[float]] = {True: [], False: []}
    server_cpu: list[float] = []
    for _ in range(args.repeat):
        for ssh in (True, False):
            lab = Lab(args.file, netconf=False, ssh=ssh)
            try:
                t0 = time.monotonic()
                lab.up()
                ups[ssh].append(time.monotonic() - t0)
                if ssh:
                    server_cpu.append(cpu_s(lab._state.ssh_pid))  # noqa: SLF001
            finally:
                lab.down()
    print(f"lab up, SSH server on:  {stats(ups[True])}   (n={args.repeat})")
    print(f"lab up, SSH server off: {stats(ups[False])}")
    print(f"SSH server CPU time by the end of up(): {stats(server_cpu)}")

    with Lab(args.file, netconf=False) as lab:
        router = lab.routers[0]
        res: dict[str, dict[str, list[float]]] = {t: {"open": [], "show": [], "running": [], "update": []}
                                                  for t in ("local", "ssh")}
        for i in range(args.calls):
            for t in ("local", "ssh"):
                a1 = A1Adapter(lab, options={"transport": t})
                try:
                    t0 = time.monotonic()
                    r = a1.call("execute_validation", {"device": router, "command": "show bgp summary"})
                    res[t]["open"].append(time.monotonic() - t0)
                    assert r.ok, r.text
                    r = a1.call("execute_validation", {"device": router, "command": "show bgp summary"})
                    res[t]["show"].append(r.elapsed_s)
                    r = a1.call("get_running_config", {"device": router})
                    res[t]["running"].append(r.elapsed_s)
                    r = a1.call("update_config", {"device": router, "commands": [
                        f"ip prefix-list PL-BENCH-{t} seq {5 + i} permit 192.0.2.0/24"]})
                    assert r.ok, r.text
                    res[t]["update"].append(r.elapsed_s)
                finally:
                    a1.close()
        for what, label in (("open", "first call (session opens) "), ("show", "execute_validation         "),
                            ("running", "get_running_config         "), ("update", "update_config (1 line)     ")):
            print(f"{label} local {stats(res['local'][what])}   ssh {stats(res['ssh'][what])}   (n={args.calls})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
