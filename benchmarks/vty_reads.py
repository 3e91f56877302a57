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
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from ani.lab import Lab, vty  # noqa: E402
from ani.lab.topology import load_topology  # noqa: E402
from fastpath import own_cgroup, table  # noqa: E402

KINDS = {
    "show running-config": "show running-config",
    "show ip route json (one daemon)": "show ip route json",
    "show ip ospf neighbor (text, one daemon)": "show ip ospf neighbor",
}


def _read(lab: Lab, command: str) -> str:
    res = lab.vtysh("r1", command)
    assert res.ok, res
    return res.stdout


def _same(command: str, fast: str, slow: str) -> bool:
    """Both ways print the same: byte for byte for ``show running-config``, else with the numbers
    masked (counters and timers move between reads)."""
    if command == "show running-config":
        return fast == slow
    return re.sub(r"\d+", "N", fast) == re.sub(r"\d+", "N", slow)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=50, help="reads per kind and way (default 50)")
    args = ap.parse_args()
    with own_cgroup("ani-bench-vty") as cg, \
            Lab(load_topology(ROOT / "tests" / "data" / "tri-ospf-ibgp.yaml"), netconf=False, ssh=False) as lab:
        table(cg, vty.FAST_ENV, KINDS, lambda command: _read(lab, command), args.n, ("vtysh ms", "default ms"),
              same=_same)
    return 0


if __name__ == "__main__":
    sys.exit(main())
