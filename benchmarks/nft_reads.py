#!/usr/bin/env python3
"""CPU of one ``Lab.exec`` nft read through the ``nft`` program and in-process (issue 28 §4).

Usage (root, FRR and nftables installed)::

    .venv/bin/python benchmarks/nft_reads.py [-n 100]

On one lab of ``tests/data/a1_pair.yaml`` (no NETCONF / SSH server; r1 carries the topology's
``table inet fw``), reads r1's ruleset ``-n`` times per kind, the two ways alternating in rounds
of 10: through the node's ``enter`` chain and an ``nft`` process (``ANI_NFT_FAST=0``) and the
way ``Lab.exec`` takes by default (:mod:`ani.host.nft`: libnftables in the node's namespace).
The CPU counted is the whole benchmark's (a ``cpuacct`` cgroup of its own that every process it
starts inherits). Prints milliseconds of CPU per read and the ratio; both ways print the same
text (checked).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from ani.host import nft  # noqa: E402
from ani.lab import Lab  # noqa: E402
from ani.lab.topology import load_topology  # noqa: E402
from fastpath import own_cgroup, table  # noqa: E402

KINDS = {
    "nft -s list ruleset (text)": ["nft", "-s", "list", "ruleset"],
    "nft -j list ruleset (JSON)": ["nft", "-j", "list", "ruleset"],
}


def _read(lab: Lab, argv: list[str]) -> str:
    res = lab.exec("r1", argv)
    assert res.ok, res
    return res.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=100, help="reads per kind and way (default 100)")
    args = ap.parse_args()
    with own_cgroup("ani-bench-nft") as cg, \
            Lab(load_topology(ROOT / "tests" / "data" / "a1_pair.yaml"), netconf=False, ssh=False) as lab:
        table(cg, nft.FAST_ENV, KINDS, lambda argv: _read(lab, argv), args.n, ("nft ms", "default ms"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
