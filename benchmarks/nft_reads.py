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
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ani.host import nft  # noqa: E402
from ani.lab import Lab  # noqa: E402
from ani.lab.topology import load_topology  # noqa: E402

CPUACCT = Path("/sys/fs/cgroup/cpuacct")
KINDS = {
    "nft -s list ruleset (text)": ["nft", "-s", "list", "ruleset"],
    "nft -j list ruleset (JSON)": ["nft", "-j", "list", "ruleset"],
}


def _usage(cg: Path) -> float:
    return int((cg / "cpuacct.usage").read_text()) / 1e9


def _reads(lab: Lab, argv: list[str], n: int, fast: bool) -> tuple[float, str]:
    """(CPU seconds of ``n`` reads, the last text)."""
    os.environ[nft.FAST_ENV] = "1" if fast else "0"
    t0 = _usage(CG)
    text = ""
    for _ in range(n):
        res = lab.exec("r1", argv)
        assert res.ok, res
        text = res.stdout
    return _usage(CG) - t0, text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=100, help="reads per kind and way (default 100)")
    args = ap.parse_args()
    rounds = max(1, args.n // 10)
    with Lab(load_topology(ROOT / "tests" / "data" / "a1_pair.yaml"), netconf=False, ssh=False) as lab:
        print(f"{'read':30s} {'nft ms':>8s} {'default ms':>11s} {'ratio':>7s}")
        for label, argv in KINDS.items():
            cpu = {True: 0.0, False: 0.0}
            texts: dict[bool, str] = {}
            for _ in range(rounds):
                for fast in (False, True):
                    c, texts[fast] = _reads(lab, argv, 10, fast)
                    cpu[fast] += c
            slow_ms, fast_ms = cpu[False] / (rounds * 10) * 1e3, cpu[True] / (rounds * 10) * 1e3
            print(f"{label:30s} {slow_ms:8.2f} {fast_ms:11.2f} {slow_ms / fast_ms:6.1f}x"
                  f"{'' if texts[True] == texts[False] else '  OUTPUT DIFFERS'}")
    return 0


if __name__ == "__main__":
    CG = CPUACCT / f"ani-bench-nft-{os.getpid()}"
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
