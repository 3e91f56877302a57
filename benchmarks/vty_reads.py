#!/usr/bin/env python3
"""CPU of one ``Lab.vtysh`` read with and without the socket paths (issue 28 §4).

Usage (root, FRR installed)::

    .venv/bin/python benchmarks/vty_reads.py [-n 50]

On one lab of ``tests/data/tri-ospf-ibgp.yaml`` (no NETCONF / SSH server), reads router r1 ``-n``
times per kind, the two ways alternating in rounds of 10: through a vtysh process
(``ANI_VTY_FAST=0``) and the way ``Lab.vtysh`` takes by default (:mod:`ani.lab.vty` for a show
of one daemon, :mod:`ani.lab.runconf` for an unchanged ``show running-config``). The CPU counted
is the whole benchmark's (a ``cpuacct`` cgroup of its own that the lab's daemons and every
process it starts inherit): the harness, vtysh, the ``enter`` script and the daemons' answers.
Prints milliseconds of CPU per read and the ratio; both ways print the same text (checked, the
numbers masked for the JSON and text shows: counters and timers move between reads).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ani.lab import Lab, vty  # noqa: E402
from ani.lab.topology import load_topology  # noqa: E402

CPUACCT = Path("/sys/fs/cgroup/cpuacct")
KINDS = {
    "show running-config": "show running-config",
    "show ip route json (one daemon)": "show ip route json",
    "show ip ospf neighbor (text, one daemon)": "show ip ospf neighbor",
}


def _usage(cg: Path) -> float:
    return int((cg / "cpuacct.usage").read_text()) / 1e9


def _reads(lab: Lab, command: str, n: int, fast: bool) -> tuple[float, str]:
    """(CPU seconds of ``n`` reads, the last text)."""
    os.environ[vty.FAST_ENV] = "1" if fast else "0"
    t0 = _usage(CG)
    text = ""
    for _ in range(n):
        res = lab.vtysh("r1", command)
        assert res.ok, res
        text = res.stdout
    return _usage(CG) - t0, text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=50, help="reads per kind and way (default 50)")
    args = ap.parse_args()
    rounds = max(1, args.n // 10)
    with Lab(load_topology(ROOT / "tests" / "data" / "tri-ospf-ibgp.yaml"), netconf=False, ssh=False) as lab:
        print(f"{'read':42s} {'vtysh ms':>9s} {'default ms':>11s} {'ratio':>7s}")
        for label, command in KINDS.items():
            cpu = {True: 0.0, False: 0.0}
            texts: dict[bool, str] = {}
            for _ in range(rounds):
                for fast in (False, True):
                    c, texts[fast] = _reads(lab, command, 10, fast)
                    cpu[fast] += c
            same = re.sub(r"\d+", "N", texts[True]) == re.sub(r"\d+", "N", texts[False])
            if command == "show running-config":
                same = texts[True] == texts[False]
            slow_ms, fast_ms = cpu[False] / (rounds * 10) * 1e3, cpu[True] / (rounds * 10) * 1e3
            print(f"{label:42s} {slow_ms:9.2f} {fast_ms:11.2f} {slow_ms / fast_ms:6.1f}x"
                  f"{'' if same else '  OUTPUT DIFFERS'}")
    return 0


if __name__ == "__main__":
    CG = CPUACCT / f"ani-bench-vty-{os.getpid()}"
    CG.mkdir()
    (CG / "cgroup.procs").write_text(str(os.getpid()))
    try:
        sys.exit(main())
    finally:
        (CPUACCT / "cgroup.procs").write_text(str(os.getpid()))
        for pid in (CG / "cgroup.procs").read_text().split():  # daemons left by a failed down()
            try:
                (CPUACCT / "cgroup.procs").write_text(pid)
            except OSError:
                pass
        CG.rmdir()
