"""How many labs this machine holds at once, and how many runs ``--jobs`` runs side by side by
default (issue 24 §2).

::

    host = this_host()                                  # HostResources(cores=2, available_bytes=...)
    need = lab_bytes(routers=9)                         # one run's peak memory, bytes (estimate)
    max_labs(need, host.available_bytes)                # labs that fit in memory (>= 1)
    default_jobs(host.cores, need, host.available_bytes)   # the default --jobs (>= 1)
    check_jobs(40, need, host.available_bytes)          # ConfigError: "--jobs 40: this machine holds about ..."
    explain_default(host, need)                         # the line printed at start

Two bounds, the smaller wins:

- **Memory**: one run holds its lab (FRR daemons: :data:`ROUTER_BYTES` a router; the lab's
  NETCONF and SSH servers and reaper) and the worker running it (the Python process of the
  observer and the adapter): :func:`lab_bytes`. The machine gives what psutil reports
  *available* less :data:`RESERVE_BYTES` for the coordinator, the page cache and everyone else.
  Past this bound runs fail (the OOM killer, a daemon that cannot start), so ``--jobs`` above it is
  refused (:func:`check_jobs`).
- **CPU**: a run is mostly waiting (convergence timers, pings, an agent's model) but its lab's
  build and the observer's reads are CPU-bound; where runs per minute stop growing is measured by
  ``benchmarks/parallel_labs.py`` (docs/performance.md, "Parallel labs"):
  :data:`LABS_PER_CORE` labs per core. Past it throughput stays flat while each run gets slower, so
  more is allowed (the user's choice) but not the default.

Sources: ``benchmarks/substrate.py`` (the lab's peak PSS per router and per lab) and
``benchmarks/parallel_labs.py`` (a worker's PSS, the throughput per number of labs), both in
docs/performance.md.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import psutil

from ani.errors import ConfigError

MIB = 2**20
#: peak memory of one router's FRR daemons (zebra, staticd, ospfd, bgpd), bytes, with ~14 %
#: headroom: substrate.py measured 27.5-28 MiB PSS a router (the generated default, 9 routers: 248 MiB;
#: pilot-25, 27 routers: 759 MiB) and 28-29 MiB in the routers' memory cgroups
ROUTER_BYTES = 32 * MIB
#: peak memory of what a run holds besides its routers, bytes: the lab's NETCONF and SSH servers and
#: reaper (87-91 MiB PSS, substrate.py) and the worker process running the run (~46 MiB PSS for a
#: lab cycle without an agent, parallel_labs.py); the rest is headroom for the agent and its adapter
RUN_BASE_BYTES = 200 * MIB
#: memory left to the coordinator, the page cache and the machine's other users, bytes
RESERVE_BYTES = 1024 * MIB
#: labs per core where runs per minute stop growing: parallel_labs.py on 2 cores, lab cycles of the
#: generated default, three passes: 1.78x the one-lab throughput with 2 labs, 2.09x with 3, 2.21x
#: with 4, 2.10x with 6 (medians; 4 labs gave 2-6 % more than 3 in every pass; docs/performance.md,
#: "Parallel labs"); a cycle takes ~5 CPU seconds and one lab keeps 0.6 of a core busy, so more
#: labs only queue for the cores. The demo campaign through the executor agrees: --jobs 3 ran it
#: 2.17x as fast as --jobs 1; --jobs 4 and 6 gave 0.95x and 0.92x of --jobs 3
LABS_PER_CORE = 1.5


@dataclass(frozen=True)
class HostResources:
    """What this machine offers now: ``cores`` (CPUs this process may run on) and
    ``available_bytes`` (memory available without swapping, psutil's ``available``)."""

    cores: int
    available_bytes: int


def this_host() -> HostResources:
    """This machine now (cores from the process's CPU affinity, memory from psutil)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return HostResources(cores=max(1, cores), available_bytes=int(psutil.virtual_memory().available))


def lab_bytes(routers: int) -> int:
    """Estimated peak memory of one run on a lab of ``routers`` routers, bytes:
    :data:`RUN_BASE_BYTES` + ``routers`` x :data:`ROUTER_BYTES`. Raises ValueError if ``routers``
    is negative."""
    if routers < 0:
        raise ValueError(f"routers must be >= 0, got {routers}")
    return RUN_BASE_BYTES + routers * ROUTER_BYTES


def max_labs(lab_bytes: int, available_bytes: int, reserve_bytes: int = RESERVE_BYTES) -> int:
    """How many runs of ``lab_bytes`` each fit in ``available_bytes`` less ``reserve_bytes``;
    never below 1 (one run is always allowed: if it does not fit, the lab says so). Raises
    ValueError if ``lab_bytes`` is not positive."""
    if lab_bytes <= 0:
        raise ValueError(f"lab_bytes must be > 0, got {lab_bytes}")
    return max(1, (available_bytes - reserve_bytes) // lab_bytes)


def cpu_jobs(cores: int, labs_per_core: float = LABS_PER_CORE) -> int:
    """Labs side by side where throughput stops growing on ``cores`` cores (>= 1)."""
    return max(1, math.floor(cores * labs_per_core))


def default_jobs(cores: int, lab_bytes: int, available_bytes: int) -> int:
    """The default ``--jobs``: :func:`cpu_jobs` bounded by :func:`max_labs` (>= 1)."""
    return min(cpu_jobs(cores), max_labs(lab_bytes, available_bytes))


def check_jobs(jobs: int, lab_bytes: int, available_bytes: int) -> None:
    """Refuse ``--jobs`` values this machine cannot hold.

    Raises ConfigError: ``jobs`` below 1, or above :func:`max_labs` (the message says how many
    labs fit, each lab's memory and the memory available, in MiB)."""
    if jobs < 1:
        raise ConfigError(f"--jobs {jobs}: at least 1 run at a time")
    fit = max_labs(lab_bytes, available_bytes)
    if jobs > fit:
        raise ConfigError(
            f"--jobs {jobs}: this machine holds about {fit} lab{'s' if fit != 1 else ''} of this scenario "
            f"({lab_bytes / MIB:.0f} MiB each, {available_bytes / MIB:.0f} MiB available, "
            f"{RESERVE_BYTES / MIB:.0f} MiB kept free); give --jobs {fit} or fewer"
        )


def explain_default(host: HostResources, lab_bytes: int) -> str:
    """One line saying the default ``--jobs`` and why, e.g. ``--jobs 3 (default: 2 cores x 1.5
    labs per core; memory holds 60 labs of 488 MiB)``."""
    n = default_jobs(host.cores, lab_bytes, host.available_bytes)
    return (f"--jobs {n} (default: {host.cores} core{'s' if host.cores != 1 else ''} x {LABS_PER_CORE:g} labs per "
            f"core; memory holds {max_labs(lab_bytes, host.available_bytes)} labs of {lab_bytes / MIB:.0f} MiB)")
