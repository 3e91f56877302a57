"""What ``benchmarks/vty_reads.py`` and ``benchmarks/nft_reads.py`` share: the benchmark's own
``cpuacct`` cgroup (every process it starts inherits it: the harness, the programs, the daemons'
answers) and the two ways of one read, alternating in rounds of 10, the fast path turned off and
on by its environment variable."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def usage(cg: Path) -> float:
    """CPU seconds charged to the cgroup ``cg`` so far."""
    return int((cg / "cpuacct.usage").read_text()) / 1e9


@contextlib.contextmanager
def own_cgroup(name: str) -> Iterator[Path]:
    """This process in a new cpuacct cgroup ``<name>-<pid>`` for the block; moved back (with
    anything left in it, e.g. daemons of a failed ``down()``) and the cgroup removed after."""
    cg = CPUACCT / f"{name}-{os.getpid()}"
    cg.mkdir()
    (cg / "cgroup.procs").write_text(str(os.getpid()))
    try:
        yield cg
    finally:
        (CPUACCT / "cgroup.procs").write_text(str(os.getpid()))
        for pid in (cg / "cgroup.procs").read_text().split():
            try:
                (CPUACCT / "cgroup.procs").write_text(pid)
            except OSError:
                pass
        cg.rmdir()


def both_ways(cg: Path, env: str, read: Callable[[], str], n: int) -> tuple[float, float, dict[bool, str]]:
    """``(ms of CPU per read with env=0, ms per read by default, {fast: last text})``: ``read()``
    (one read, returns its text) ``n`` times each way (at least 10), alternating in rounds of 10."""
    rounds = max(1, n // 10)
    cpu = {True: 0.0, False: 0.0}
    texts: dict[bool, str] = {}
    for _ in range(rounds):
        for fast in (False, True):
            os.environ[env] = "1" if fast else "0"
            t0 = usage(cg)
            for _ in range(10):
                texts[fast] = read()
            cpu[fast] += usage(cg) - t0
    return cpu[False] / (rounds * 10) * 1e3, cpu[True] / (rounds * 10) * 1e3, texts


def table(cg: Path, env: str, kinds: dict[str, object], read: Callable[[object], str], n: int,
          ways: tuple[str, str], same: Callable[[object, str, str], bool] = lambda _k, a, b: a == b) -> None:
    """Print one line per kind ``label: item``: ms of CPU per ``read(item)`` each way (``ways``:
    the column names of the program way and the default way), the ratio, and ``OUTPUT DIFFERS``
    unless ``same(item, fast text, slow text)``."""
    width = max(len(k) for k in kinds) + 2
    print(f"{'read':{width}s} {ways[0]:>10s} {ways[1]:>11s} {'ratio':>7s}")
    for label, item in kinds.items():
        slow_ms, fast_ms, texts = both_ways(cg, env, lambda item=item: read(item), n)
        print(f"{label:{width}s} {slow_ms:10.2f} {fast_ms:11.2f} {slow_ms / fast_ms:6.1f}x"
              f"{'' if same(item, texts[True], texts[False]) else '  OUTPUT DIFFERS'}")
