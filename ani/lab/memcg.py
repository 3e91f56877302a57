"""Each router's memory bound: its FRR daemons and every vtysh run on it share one memory cgroup.

A router's FRR takes commands from agents (A0's broker, A1's CLI, NETCONF, ...) and runs outside
every per-call bound: a regular expression with nested repetition took bgpd from 22 MB to
1.16 GB and the vtysh running it to 1.1 GB; 200,000 kernel routes grew zebra by 144 MB, kept after
they were flushed. So the lab puts each router's daemons (:func:`ani.lab.frr.start`), what
runs through its ``enter`` script (:meth:`ani.lab.Lab.exec`: the router's vtysh for the
harness's reads and A1's CLI, local or over SSH) and the A0 broker's vtysh for that router
(:mod:`ani.adapters.vtybroker`, through :func:`wrap`) in one memory cgroup of its own:

    /sys/fs/cgroup/memory/ani-frr-<lab id>-<router>     (cgroup v1; memory.limit_in_bytes and,
                                                          where the kernel has it, memsw)
    /sys/fs/cgroup/ani-frr-<lab id>-<router>            (cgroup v2, when the unified hierarchy
                                                          has the memory controller; memory.max,
                                                          memory.swap.max = 0)

made by the lab before the router's daemons start (:func:`create`) and removed by every teardown,
also a stale lab's and the reaper's (:func:`remove_lab`, from :func:`ani.lab.cleanup.destroy`).
The bound is :data:`DEFAULT_ROUTER_MEMORY_BYTES` unless ``$ANI_ROUTER_MEMORY_MAX`` (bytes) or the
``Lab(router_memory_bytes=...)`` argument says otherwise (:func:`configured_bytes`). Past it the
kernel's OOM killer kills inside the router only (the largest of its processes: the daemon that
grew, or the vtysh), as a real router's daemon dies when its memory is exhausted; the machine and
the other routers are untouched, and the lab tears down as always.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from ani.errors import CapabilityMissing, LabError
from ani.logs import get_logger

log = get_logger(__name__)  # structlog, imported at the first event (ani.logs)

#: each router's memory bound (every FRR daemon of it and the vtysh runs on it together), bytes
DEFAULT_ROUTER_MEMORY_BYTES = 1024**3
#: environment variable overriding :data:`DEFAULT_ROUTER_MEMORY_BYTES` (bytes, an integer)
ENV = "ANI_ROUTER_MEMORY_MAX"
#: smallest bound accepted, bytes (below it FRR's daemons do not start)
MIN_ROUTER_MEMORY_BYTES = 16 * 1024**2
#: where cgroup hierarchies are mounted
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: name prefix of the routers' cgroups (``ani-frr-<lab id>-<router>``); never a prefix of the A0
#: calls' ``ani-a0-<pid>-...`` cgroups
PREFIX = "ani-frr-"


def configured_bytes(value: int | None = None) -> int:
    """The bound to use: ``value`` if given, else ``$ANI_ROUTER_MEMORY_MAX``, else
    :data:`DEFAULT_ROUTER_MEMORY_BYTES`. Raises LabError (naming the source) for a value that
    is not an integer of at least :data:`MIN_ROUTER_MEMORY_BYTES`."""
    source, raw = ("router_memory_bytes", value) if value is not None else (ENV, os.environ.get(ENV))
    if raw is None or raw == "":
        return DEFAULT_ROUTER_MEMORY_BYTES
    try:
        n = int(raw)
    except (TypeError, ValueError):
        raise LabError(f"{source}: must be a number of bytes (an integer), got {str(raw)[:40]!r}") from None
    if n < MIN_ROUTER_MEMORY_BYTES:
        raise LabError(f"{source}: {n} bytes is below the smallest router memory bound "
                          f"({MIN_ROUTER_MEMORY_BYTES} bytes)")
    return n


@dataclass(frozen=True)
class Hierarchy:
    """Where the memory controller is and how its files are named (cgroup v1 or v2)."""

    root: Path
    version: int

    @property
    def limit_file(self) -> str:
        return "memory.limit_in_bytes" if self.version == 1 else "memory.max"

    @property
    def peak_file(self) -> str:
        return "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"

    @property
    def usage_file(self) -> str:
        return "memory.usage_in_bytes" if self.version == 1 else "memory.current"


def hierarchy(root: Path | None = None) -> Hierarchy:
    """The memory controller's hierarchy under ``root`` (default :data:`CGROUP_ROOT`): cgroup v2
    when the unified hierarchy at ``root`` has the ``memory`` controller, else cgroup v1 at
    ``root/memory``. Raises CapabilityMissing (naming both places and the fix) if neither."""
    root = root or CGROUP_ROOT
    try:
        if "memory" in (root / "cgroup.controllers").read_text().split():
            return Hierarchy(root, 2)
    except OSError:
        pass
    if (root / "memory" / "cgroup.procs").is_file():
        return Hierarchy(root / "memory", 1)
    raise CapabilityMissing(
        f"a lab bounds each router's memory with a memory cgroup, but neither cgroup v2 with the memory "
        f"controller ({root}/cgroup.controllers) nor cgroup v1's memory controller ({root}/memory) is "
        f"mounted; mount one (e.g. `mount -t cgroup -o memory cgroup {root}/memory`) or use a host that has it"
    )


def name(pathspace: str) -> str:
    """``ani-frr-<lab id>-<router>`` for the pathspace ``ani-<lab id>-<router>``."""
    return PREFIX + pathspace.removeprefix("ani-")


def path(pathspace: str, h: Hierarchy | None = None) -> Path:
    """The router's cgroup directory (it may not exist)."""
    return (h or hierarchy()).root / name(pathspace)


def create(pathspace: str, memory_bytes: int, h: Hierarchy | None = None) -> Path:
    """Make (or reuse) the router's cgroup with its bound ``memory_bytes``; swap adds nothing
    (v1: ``memory.memsw.limit_in_bytes`` where it exists; v2: ``memory.swap.max`` 0).
    Returns its directory. Raises CapabilityMissing (no memory controller), OSError."""
    h = h or hierarchy()
    if h.version == 2:
        _enable_memory_controller(h.root)
    d = h.root / name(pathspace)
    d.mkdir(exist_ok=True)
    (d / h.limit_file).write_text(str(memory_bytes))
    if h.version == 1 and (d / "memory.memsw.limit_in_bytes").exists():
        (d / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
    if h.version == 2 and (d / "memory.swap.max").exists():
        (d / "memory.swap.max").write_text("0")
    return d


def _enable_memory_controller(root: Path) -> None:
    """cgroup v2: a child gets ``memory.*`` files only if its parent delegates the controller."""
    ctl = root / "cgroup.subtree_control"
    if "memory" not in ctl.read_text().split():
        ctl.write_text("+memory")


def join_script(pathspace: str, h: Hierarchy | None = None) -> str:
    """A shell snippet (ending ``; ``) moving the running shell into the router's cgroup, so that
    everything it starts from then on is bounded with the router; exit 125 if it cannot."""
    procs = path(pathspace, h) / "cgroup.procs"
    return f"echo $$ > '{procs}' || exit 125; "


def wrap(pathspace: str, argv: list[str], h: Hierarchy | None = None) -> list[str]:
    """``argv`` run by a ``sh`` that first joins the router's cgroup (exit 125 if it cannot)."""
    procs = str(path(pathspace, h) / "cgroup.procs")
    return ["sh", "-c", 'echo $$ > "$1" || exit 125; shift; exec "$@"', "sh", procs, *argv]


@dataclass(frozen=True)
class Usage:
    """A router's memory now: ``current``, ``peak`` and ``limit`` in bytes (``current`` and
    ``peak`` include the A0 calls' cgroups inside it); ``oom_kills``: how many processes of the
    router's cgroup itself (its daemons, vtysh runs) the kernel killed; with cgroup v1 a process of
    an A0 call inside it is counted in the call's cgroup only (the call's ``memory_exceeded``)."""

    current: int
    peak: int
    limit: int
    oom_kills: int


def usage(pathspace: str, h: Hierarchy | None = None) -> Usage:
    """Read the router's cgroup counters. Raises OSError if it does not exist."""
    h = h or hierarchy()
    d = h.root / name(pathspace)
    events = "memory.oom_control" if h.version == 1 else "memory.events"
    return Usage(
        current=int((d / h.usage_file).read_text()),
        peak=_int_or_zero(d / h.peak_file),
        limit=_int_or_zero(d / h.limit_file),
        oom_kills=counter(d / events, "oom_kill"),
    )


def _int_or_zero(f: Path) -> int:
    try:
        return int(f.read_text().strip())
    except (OSError, ValueError):
        return 0


def counter(f: Path, key: str) -> int:
    """``key``'s value in a flat-keyed cgroup file (``key value`` lines: ``memory.oom_control``,
    ``pids.events``); 0 if absent or unreadable."""
    try:
        for line in f.read_text().splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
    except (OSError, ValueError):
        return 0
    return 0


def lab_cgroups(lab_id: str, h: Hierarchy | None = None) -> list[Path]:
    """The routers' cgroups of lab ``lab_id`` present now (``ani-frr-<lab id>-*``)."""
    try:
        h = h or hierarchy()
    except CapabilityMissing:
        return []
    prefix = f"{PREFIX}{lab_id}-"
    try:
        return sorted(Path(e.path) for e in os.scandir(h.root) if e.name.startswith(prefix) and e.is_dir())
    except OSError:
        return []


def lab_ids_present(h: Hierarchy | None = None) -> set[str]:
    """Lab ids that have a router cgroup now (for the sweep of stale labs)."""
    try:
        h = h or hierarchy()
        names = [e.name for e in os.scandir(h.root) if e.name.startswith(PREFIX) and e.is_dir()]
    except (CapabilityMissing, OSError):
        return set()
    return {n[len(PREFIX):].split("-", 1)[0] for n in names if "-" in n[len(PREFIX):]}


def remove_lab(lab_id: str, h: Hierarchy | None = None) -> None:
    """Remove every router cgroup of lab ``lab_id`` (SIGKILLing what still runs in one: only the
    lab's own daemons and vtysh runs ever join them). Never raises."""
    for d in lab_cgroups(lab_id, h):
        remove(d)


def remove(d: Path, timeout_s: float = 5.0, *, event: str = "router_cgroup_not_removed") -> None:
    """SIGKILL every task of cgroup ``d`` and of the cgroups inside it (an A0 call's, see
    :func:`ani.adapters.sandbox.router_memcg`) until they are empty, then rmdir them, within
    ``timeout_s`` (one that will not go is logged as ``event``, not raised: the next sweep
    retries)."""
    deadline = time.monotonic() + timeout_s
    try:
        children = [Path(e.path) for e in os.scandir(d) if e.is_dir(follow_symlinks=False)]
    except OSError:
        children = []
    for c in children:
        remove(c, max(0.1, deadline - time.monotonic()), event=event)
    while True:
        try:
            pids = [int(p) for p in (d / "cgroup.procs").read_text().split()]
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            pids = []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not pids:
            try:
                d.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                pass
        if time.monotonic() > deadline:
            log.warning(event, cgroup=str(d), tasks=len(pids))
            return
        time.sleep(0.005)
