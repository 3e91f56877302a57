"""What a lab costs the machine, measured: CPU seconds (a cpuacct cgroup) and peak memory (PSS of
its processes, the routers' memory cgroups). Shared by ``substrate.py`` and ``parallel_labs.py``.

CPU: :class:`CpuAccount` makes a cgroup v1 ``cpuacct`` group ``ani-bench-<pid>-<n>`` and moves
the calling process into it; everything it starts from then on (the harness's threads, every
``ip``/``vtysh``/``ping``, the NETCONF and SSH servers, the reaper, and the FRR daemons, which
daemonize but stay in their parent's cpuacct group: the lab moves them only in the *memory*
hierarchy) is charged to it. ``cpuacct.usage`` is the sum, in nanoseconds. On leaving, the process
goes back to the group it came from and the group is removed (once empty).

Memory: :class:`MemorySampler` samples every ``interval_s`` the processes a callable names
(``pids()``) with psutil: the sum of PSS (shared pages split over their users: what the lab costs
the machine) and of RSS; and, for ani's labs, the current usage of the routers' memory cgroups
(:func:`ani.lab.memcg.lab_cgroups`: daemons, vtysh runs, the kernel memory charged to them). The
sampler's own CPU time (its thread's ``thread_time``) is returned so that callers subtract it
from a cpuacct figure.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import psutil

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def loadavg() -> str:
    """``/proc/loadavg``'s three load averages, e.g. ``"0.35 3.31 4.51"``."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _own_cpuacct() -> Path:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, rel = line.split(":", 2)
        if "cpuacct" in ctrls.split(","):
            return CPUACCT / rel.lstrip("/")
    return CPUACCT


class CpuAccount:
    """A cpuacct cgroup holding this process (and all it starts) while the ``with`` block runs.

    ``seconds()``: CPU seconds charged so far. Raises OSError if the hierarchy is missing."""

    _n = 0

    def __init__(self) -> None:
        CpuAccount._n += 1
        self.path = CPUACCT / f"ani-bench-{os.getpid()}-{CpuAccount._n}"
        self._home = _own_cpuacct()
        self.total_s: float | None = None

    def __enter__(self) -> CpuAccount:
        self.path.mkdir()
        (self.path / "cgroup.procs").write_text(str(os.getpid()))
        return self

    def seconds(self) -> float:
        """CPU seconds charged so far (after the block: in the whole block)."""
        if self.total_s is not None:
            return self.total_s
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def __exit__(self, *exc: object) -> None:
        self.total_s = self.seconds()
        (self._home / "cgroup.procs").write_text(str(os.getpid()))
        deadline = time.monotonic() + 10.0
        while True:
            try:
                self.path.rmdir()
                return
            except OSError:
                if time.monotonic() > deadline:
                    left = (self.path / "cgroup.procs").read_text().split()
                    print(f"warning: {self.path} not removed: processes {left} still in it")
                    return
                time.sleep(0.05)


def pss_rss(pids: list[int]) -> tuple[int, int, int]:
    """``(pss, rss, processes)`` summed over the live ones of ``pids``, bytes."""
    pss = rss = n = 0
    for pid in pids:
        try:
            m = psutil.Process(pid).memory_full_info()
        except (psutil.Error, OSError):
            continue
        pss += m.pss
        rss += m.rss
        n += 1
    return pss, rss, n


def cgroup_bytes(dirs: list[Path]) -> int:
    """Sum of the memory cgroups' current usage (v1 ``memory.usage_in_bytes``), bytes."""
    total = 0
    for d in dirs:
        try:
            total += int((d / "memory.usage_in_bytes").read_text())
        except (OSError, ValueError):
            pass
    return total


class MemorySampler:
    """Peak PSS / RSS of ``pids()`` and peak of ``cgroups()``'s usage, every ``interval_s``."""

    def __init__(self, pids: Callable[[], list[int]], cgroups: Callable[[], list[Path]] = list,
                 interval_s: float = 0.25) -> None:
        self.pids, self.cgroups, self.interval_s = pids, cgroups, interval_s
        self.peak_pss = self.peak_rss = self.peak_cgroup = self.procs = 0
        self.cpu_s = 0.0  # the sampler thread's own CPU time
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        pss, rss, n = pss_rss(self.pids())
        self.peak_pss, self.peak_rss = max(self.peak_pss, pss), max(self.peak_rss, rss)
        self.procs = max(self.procs, n)
        self.peak_cgroup = max(self.peak_cgroup, cgroup_bytes(self.cgroups()))

    def _run(self) -> None:
        t0 = time.thread_time()
        while not self._stop.wait(self.interval_s):
            self.sample()
        self.cpu_s = time.thread_time() - t0

    def __enter__(self) -> MemorySampler:
        self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._t.join()


def ani_lab_pids(lab) -> list[int]:  # type: ignore[no-untyped-def]
    """The processes of an ani lab: its FRR daemons, NETCONF and SSH servers, reaper."""
    st = lab._state
    if st is None:
        return []
    out = [p for d in list(st.pids.values()) for p in list(d.values())]
    out += [p for p in (st.netconf_pid, st.ssh_pid, st.reaper_pid) if p]
    return out


def mib(n: float) -> float:
    return n / 2**20
