# size: the A0 sandbox (bubblewrap argv, cgroups, limits, output capture) is one security boundary, read together
"""The A0 sandbox: one shell command inside one router, in bubblewrap, bounded.

A command runs as ``/bin/sh -c COMMAND`` with this process tree::

    sh -c 'echo $$ > cgroup.procs ...'    # joins the call's own memory and pids cgroups
      ip netns exec <router netns>        # the router's network namespace; /sys remounted for it
        bwrap ...                         # new mount, PID, UTS and IPC namespaces
          nsenter --user=<router's userns>  # the user namespace owning the router's netns
            setpriv --reuid frr ...       # drop to uid/gid frr (+ group frrvty), two capabilities
              prlimit --as --fsize --nproc  # per-process resource bounds
                /bin/sh -c COMMAND

What the sandbox permits (checked by ``tests/integration/test_a0_sandbox.py`` and ``test_a0.py``):

- the router's network state: interfaces, addresses, routes, rules, nftables, neighbours,
  ``/proc/sys/net`` sysctls (capabilities ``CAP_NET_ADMIN`` and ``CAP_NET_RAW`` only), ping;
- the router's FRR, only through the harness: with a broker (``vty``, what A0 uses) the
  sandbox holds no FRR socket and ``vtysh`` is the client of :mod:`ani.adapters.vtybroker`,
  which checks each line and runs it with the real vtysh of this router outside; ``/etc/frr``
  shows this router's files (``frr.conf`` writable in place unless ``config_read_only``;
  ``vtysh.conf`` read-only: the harness's vtysh reads it; no new file can be made on the
  host's disk). Without a broker (tests of the sandbox alone) ``/var/run/frr`` is this router's
  run dir, read-only;
- reading the system's programs, libraries and configuration, and nothing else of the host:
  the sandbox's root is an allowlist (:data:`VISIBLE_ROOTS`: ``/usr``, ``/bin``, ``/sbin``,
  ``/lib*``, ``/etc``, bound read-only; :func:`root_binds`); ``/var`` is an empty tmpfs, and
  no other top-level entry of the host exists in it (``/work``, ``/root``, ``/home``, ``/srv``,
  ``/opt``, ``/mnt``, the host's ``/tmp``: other checkouts and repositories, users' files,
  results folders). Inside the visible tree the harness is still hidden (an empty tmpfs over
  the source checkout, the working directory, every run's results folder, where one lies under
  ``/usr`` or ``/etc``: :func:`hidden_dirs`), so an agent cannot read task classes, hidden tests
  or earlier runs;
- scratch space: a private, empty ``/tmp`` and ``/dev/shm`` (tmpfs, gone after the call).

What it refuses:

- writing any host file other than the existing files of the router's ``/etc/frr/<pathspace>/`` (read-only root,
  uid ``frr`` without ``CAP_DAC_OVERRIDE``; ``/proc/sys`` read-only except ``/proc/sys/net``);
- acting on another router's network namespace: the two capabilities are held in the user
  namespace that owns this router's network namespace (the lab makes one per node, see
  :mod:`ani.lab.netns`), not in the host's, so every rtnetlink request naming another
  namespace by nsid (``ip link add ... link-netnsid N``, ``RTM_DELLINK`` / ``RTM_SETLINK``
  (moving a link) / ``RTM_GETLINK`` with ``IFLA_TARGET_NETNSID``) fails with EPERM or EACCES in
  the kernel's ``ns_capable(net->user_ns, CAP_NET_ADMIN)`` check (tested in
  ``tests/integration/test_a0_netns_isolation.py``); a router netns owned by the initial user
  namespace is refused before anything runs (LabError);
- seeing other routers' FRR (``/var/run/frr`` and ``/etc/frr`` show only this router's
  pathspace; ``vtysh -N other`` finds no socket) or other namespaces (``/run`` is an empty
  tmpfs, so ``/run/netns`` is hidden; no ``CAP_SYS_ADMIN`` for ``setns``/``mount``);
- seeing or signalling any process outside the call (own PID namespace and ``/proc``);
- outliving the call: when the shell exits, bwrap's PID 1 exits and the kernel kills every
  process left in the PID namespace (``sleep 100 &``, ``setsid``, double forks); on timeout
  the whole process group is SIGKILLed, and ``--die-with-parent`` covers a dying harness;
- gaining privileges: ``no_new_privs``, empty bounding set but the two net capabilities,
  clean environment (``PATH``, ``HOME=/tmp``, ``LANG``, ``TERM``, ``USER`` only), no stdin;
- exhausting the host: wall time bounded by the caller's timeout; the whole call (every process,
  and what it writes to its tmpfs mounts) at most 1 GiB of memory (:data:`CALL_MEMORY_BYTES`;
  swap included where the kernel accounts it) and 256 tasks (:data:`CALL_PIDS_MAX`): the
  call's own cgroup v1 ``memory`` and ``pids`` cgroups (:class:`CallCgroup`), made before the
  call and removed after it, also on timeout; the memory one inside the router's memory cgroup
  (:func:`router_memcg`, :mod:`ani.lab.memcg`), so the call also counts against the router's
  bound, which it shares with the router's FRR, and the kernel memory it charged (routes) stays
  the router's after the call; past the memory bound the kernel's OOM killer
  kills within the call only (``memory_exceeded`` in the result); each process at most 4 GiB of
  address space; at most 256 tasks more than user ``frr`` already has (a fork bomb fails fast);
  each tmpfs 64 MiB; each file written at most 64 MiB (``RLIMIT_FSIZE``: also bounds the
  router's config files, the only host files writable); output beyond the cap is read and dropped.

A sandbox that fails to SET UP ran nothing and is not the command's result: each recursive bind
of bwrap walks the host's mount table, and another lab torn down meanwhile (each router's run
dir is its own tmpfs ``/run/frr/ani-<lab>-<router>``) can remove a submount under the walk. So the
root is bound per visible entry, never ``/run`` (:func:`root_binds`), which keeps the labs'
mounts out of every walk; for whatever else fails a setup, bwrap's ``--json-status-fd`` tells: it reports ``exit-code`` only after its setup finished and the
command was exec'ed (:func:`setup_failed`; never decided from the command's output). Such an
attempt is retried (:func:`retry_setup`, at most :data:`SETUP_ATTEMPTS`, within the call's
timeout); if every one fails, :class:`~ani.errors.SandboxSetupFailed` (a HostFault: the run is
an infrastructure error). ``tests/integration/test_a0_mount_race.py`` churns such mounts.

Without the cgroup v1 ``memory`` and ``pids`` controllers (``/sys/fs/cgroup/memory``,
``/sys/fs/cgroup/pids``) nothing runs: :func:`check_support` and every call raise
CapabilityMissing naming what is missing.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import selectors
import signal
import secrets
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ani.errors import CapabilityMissing, LabError, SandboxSetupFailed
from ani.host import results_dirs
from ani.host.programs import program, require
from ani.lab import memcg as lab_memcg
from ani.lab import netns as lab_netns
from ani.logs import get_logger

log = get_logger(__name__)  # structlog, imported at the first event (ani.logs)

#: default bound on each captured stream, bytes
DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024
#: default bound on one command's wall time, seconds
DEFAULT_TIMEOUT_S = 30.0

#: size of each private tmpfs (/tmp, /var/tmp, /dev/shm), bytes
TMPFS_BYTES = 64 * 1024 * 1024
#: address-space limit of every process in the sandbox, bytes
ADDRESS_SPACE_BYTES = 4 * 1024**3
#: processes/threads the sandbox may add to those its user already has (fork-bomb bound)
NPROC_HEADROOM = 256
#: memory of one whole call (every process, its tmpfs pages, swap where accounted), bytes
CALL_MEMORY_BYTES = 1024**3
#: tasks (processes and threads) of one whole call, the sandbox's own wrappers included
CALL_PIDS_MAX = 256
#: where the cgroup v1 hierarchies are mounted
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: name prefix of the calls' cgroups (``ani-a0-<harness pid>-<random>``)
CGROUP_PREFIX = "ani-a0-"
#: sandbox setups one call tries before it raises SandboxSetupFailed (a failed setup ran nothing)
SETUP_ATTEMPTS = 3
#: pause before retrying a failed setup, seconds (lets a lab's teardown finish its unmounts)
SETUP_RETRY_PAUSE_S = 0.05

SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
KEEP_CAPS = ("net_admin", "net_raw")
FRR_ETC = Path("/etc/frr")
FRR_RUN = Path("/var/run/frr")


def truncation_marker(omitted: int, cap: int) -> str:
    """The line appended to a capped stream (``omitted`` bytes dropped, ``cap`` kept)."""
    return f"\n[... output truncated: {omitted} more bytes not shown (cap {cap} bytes) ...]\n"


@dataclass
class CappedOutput:
    """One captured stream: at most ``cap`` bytes kept, ``total`` counted."""

    cap: int
    kept: bytearray = field(default_factory=bytearray)
    total: int = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.kept)

    def text(self) -> str:
        """Decoded (UTF-8, invalid bytes replaced), with the marker if truncated."""
        out = bytes(self.kept).decode("utf-8", errors="replace")
        if self.truncated:
            out += truncation_marker(self.total - len(self.kept), self.cap)
        return out


@dataclass
class RunResult:
    """Outcome of :func:`run_capped`.

    Attributes:
        exit_status: the process's exit status, or None if it was killed at the timeout.
        stdout, stderr: decoded streams, each capped, with a truncation marker when cut.
        stdout_truncated, stderr_truncated: whether the marker was added.
        stdout_bytes, stderr_bytes: total bytes the command wrote to each stream.
        timed_out: the timeout was reached and the process tree was killed.
        elapsed_s: wall time, seconds.
        memory_exceeded: the call reached :data:`CALL_MEMORY_BYTES` and the kernel's OOM
            killer killed a process of it (sandboxed calls only).
        pids_exceeded: a fork or clone of the call failed at :data:`CALL_PIDS_MAX` tasks.
        memory_peak_bytes: the most memory the call's cgroup held at once, bytes (None if
            not sandboxed); never above :data:`CALL_MEMORY_BYTES`.
        setup_failed: the sandbox was not set up, so the command never ran: bwrap reported no
            ``exit-code`` on its ``--json-status-fd`` (it does only once its setup is done and
            the command was exec'ed) and the call neither timed out nor hit its memory bound
            (see :func:`setup_failed`). Sandboxed calls only; :func:`run_in_sandbox` retries
            such an attempt and never returns one.
        attempts: how many sandbox setups the call took (1 unless a setup failed and was retried).
        router_memory_bytes: the bound of the router's memory cgroup the call's was made in
            (:func:`router_memcg`; shared with the router's FRR and what earlier calls left
            charged to it), bytes; None if the call's cgroup was not nested.
    """

    exit_status: int | None
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    stdout_bytes: int
    stderr_bytes: int
    timed_out: bool
    elapsed_s: float
    memory_exceeded: bool = False
    pids_exceeded: bool = False
    memory_peak_bytes: int | None = None
    setup_failed: bool = False
    attempts: int = 1
    router_memory_bytes: int | None = None


def run_capped(
    argv: list[str],
    *,
    timeout_s: float,
    max_bytes: int,
    pass_fds: tuple[int, ...] = (),
) -> RunResult:
    """Run ``argv`` (no stdin), capturing each stream up to ``max_bytes``, killed at ``timeout_s``.

    Output beyond the cap is read and discarded (so the command never blocks on a full pipe).
    The child leads a new session; on timeout the whole process group gets SIGKILL.
    Never raises for the command's behaviour; raises ProgramMissing if ``argv[0]`` is a
    registered program that is not installed, OSError if another ``argv[0]`` cannot be started.
    """
    require(argv)
    t0 = time.monotonic()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        pass_fds=pass_fds,
        close_fds=True,
    )
    streams = {proc.stdout: CappedOutput(max_bytes), proc.stderr: CappedOutput(max_bytes)}
    sel = selectors.DefaultSelector()
    for f in streams:
        os.set_blocking(f.fileno(), False)
        sel.register(f, selectors.EVENT_READ)
    deadline = t0 + timeout_s
    timed_out = False
    try:
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            _read_ready(sel, streams, min(remaining, 0.5))
        if not timed_out:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
        if timed_out:
            _kill_group(proc)
            # everything in the sandbox is dead now; drain what is left, briefly
            end = time.monotonic() + 2.0
            while sel.get_map() and time.monotonic() < end:
                _read_ready(sel, streams, 0.1)
    finally:
        sel.close()
        if proc.poll() is None:
            _kill_group(proc)
        for f in streams:
            f.close()  # type: ignore[union-attr]
    out, err = streams[proc.stdout], streams[proc.stderr]
    return RunResult(
        exit_status=None if timed_out else proc.returncode,
        stdout=out.text(),
        stderr=err.text(),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        stdout_bytes=out.total,
        stderr_bytes=err.total,
        timed_out=timed_out,
        elapsed_s=time.monotonic() - t0,
    )


def _read_ready(sel: selectors.BaseSelector, streams: dict, timeout: float) -> None:
    """Feed the pipes ready within ``timeout`` to their CappedOutput; unregister one at EOF."""
    for key, _ in sel.select(timeout=timeout):
        try:
            chunk = os.read(key.fd, 65536)
        except BlockingIOError:
            continue
        if not chunk:
            sel.unregister(key.fileobj)
        else:
            streams[key.fileobj].feed(chunk)


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the child's process group (the child leads it) and reap the child."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL of our own child
        proc.kill()
        proc.wait()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class CallCgroup:
    """The cgroups of one sandboxed call: ``memory`` (limit :data:`CALL_MEMORY_BYTES`, and the
    same for memory+swap where ``memory.memsw.*`` exists) and ``pids`` (:data:`CALL_PIDS_MAX`),
    cgroup v1, each ``/sys/fs/cgroup/<controller>/ani-a0-<harness pid>-<random>``.

    Use as a context manager: ``__enter__`` makes both (and first removes those left by a
    harness that died: prefix ``ani-a0-``, owner pid not alive); :meth:`wrap` prefixes an argv so
    that its first process joins them before it execs; ``__exit__`` reads the counters
    (:attr:`memory_exceeded`, :attr:`pids_exceeded`, :attr:`memory_peak_bytes`), SIGKILLs every task still in them (each
    is one of this call's: nothing else joins these cgroups) and removes them.

    Raises CapabilityMissing if a controller is not mounted at :data:`CGROUP_ROOT` (naming it
    and the fix), OSError if a cgroup cannot be made.
    """

    CONTROLLERS = ("memory", "pids")

    def __init__(self, memory_bytes: int = CALL_MEMORY_BYTES, pids_max: int = CALL_PIDS_MAX,
                 memory_parent: Path | None = None) -> None:
        self.memory_bytes = memory_bytes
        self.pids_max = pids_max
        self.name = f"{CGROUP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
        self.dirs = {c: CGROUP_ROOT / c / self.name for c in self.CONTROLLERS}
        if memory_parent is not None:  # the router's memory cgroup: the call counts against it too
            self.dirs["memory"] = memory_parent / self.name
        self.memory_exceeded = False
        self.pids_exceeded = False
        self.memory_peak_bytes: int | None = None
        self.parent_limit_bytes: int | None = None
        if memory_parent is not None:
            try:
                self.parent_limit_bytes = int((memory_parent / "memory.limit_in_bytes").read_text())
            except (OSError, ValueError):
                pass

    @classmethod
    def check_support(cls) -> None:
        """Raise CapabilityMissing unless both cgroup v1 controllers are mounted and writable."""
        missing = [c for c in cls.CONTROLLERS if not (CGROUP_ROOT / c / "cgroup.procs").is_file()]
        if missing:
            raise CapabilityMissing(
                "A0 sandbox needs the cgroup v1 " + " and ".join(missing) + " controller(s) mounted at "
                + ", ".join(str(CGROUP_ROOT / c) for c in missing)
                + " (its per-call memory and task bounds); mount them "
                "(e.g. `mount -t cgroup -o memory cgroup /sys/fs/cgroup/memory`) or use a host that has them"
            )

    @classmethod
    def remove_stale(cls) -> None:
        """Remove the call cgroups of harness processes that are gone (killing what is left in
        them), at the top of each controller and inside the routers' memory cgroups."""
        parents = [CGROUP_ROOT / c for c in cls.CONTROLLERS]
        try:
            parents += [Path(e.path) for e in os.scandir(CGROUP_ROOT / "memory")
                        if e.name.startswith(lab_memcg.PREFIX) and e.is_dir(follow_symlinks=False)]
        except OSError:
            pass
        for parent in parents:
            try:
                entries = list(os.scandir(parent))
            except OSError:
                continue
            for e in entries:
                if not e.name.startswith(CGROUP_PREFIX) or not e.is_dir(follow_symlinks=False):
                    continue
                owner = e.name[len(CGROUP_PREFIX):].split("-", 1)[0]
                if owner.isdigit() and int(owner) != os.getpid() and not _pid_alive(int(owner)):
                    _remove_cgroup(Path(e.path), timeout_s=1.0)

    def __enter__(self) -> CallCgroup:
        self.check_support()
        self.remove_stale()
        made: list[Path] = []
        try:
            for d in self.dirs.values():
                d.mkdir()
                made.append(d)
            mem = self.dirs["memory"]
            (mem / "memory.limit_in_bytes").write_text(str(self.memory_bytes))
            if (mem / "memory.memsw.limit_in_bytes").exists():
                (mem / "memory.memsw.limit_in_bytes").write_text(str(self.memory_bytes))
            (self.dirs["pids"] / "pids.max").write_text(str(self.pids_max))
        except BaseException:
            for d in made:
                _remove_cgroup(d)
            raise
        return self

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run by a ``sh`` that first moves itself into both cgroups (exit 125 if it cannot)."""
        script = 'for f in "$1" "$2"; do echo $$ > "$f" || exit 125; done; shift 2; exec "$@"'
        return ["sh", "-c", script, "sh", *(str(d / "cgroup.procs") for d in self.dirs.values()), *argv]

    def __exit__(self, *exc: object) -> None:
        try:
            self.memory_exceeded = _oom_kills(self.dirs["memory"]) > 0
            self.pids_exceeded = _pids_max_events(self.dirs["pids"]) > 0
            try:
                self.memory_peak_bytes = int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text())
            except (OSError, ValueError):
                self.memory_peak_bytes = None
        finally:
            for d in self.dirs.values():
                _remove_cgroup(d)


def _oom_kills(memcg: Path) -> int:
    """OOM kills in memory cgroup ``memcg`` (``oom_kill`` of ``memory.oom_control``)."""
    return lab_memcg.counter(memcg / "memory.oom_control", "oom_kill")


def _pids_max_events(pidscg: Path) -> int:
    """Forks refused at ``pids.max`` in ``pidscg`` (``max`` of ``pids.events``)."""
    return lab_memcg.counter(pidscg / "pids.events", "max")


def _remove_cgroup(d: Path, timeout_s: float = 5.0) -> None:
    """SIGKILL every task in cgroup ``d`` until it is empty, then rmdir it (within ``timeout_s``;
    a cgroup that will not go is logged, not raised: the next call's stale sweep retries).
    :func:`ani.lab.memcg.remove`, the one remover of the lab's and the calls' cgroups."""
    lab_memcg.remove(d, timeout_s, event="a0_cgroup_not_removed")


@dataclass(frozen=True)
class SandboxSpec:
    """Where and as whom a sandboxed command runs.

    Attributes:
        netns: the router's network namespace name (``ip netns`` name).
        pathspace: the router's FRR pathspace; its dirs are ``/etc/frr/<p>`` and ``/var/run/frr/<p>``.
        hostname: what ``hostname`` prints inside (the router's name).
        user: the unprivileged user the shell runs as (``frr``: owns the router's FRR files).
        extra_groups: supplementary groups (``frrvty``: may connect to the vty sockets).
    """

    netns: str
    pathspace: str
    hostname: str
    user: str = "frr"
    extra_groups: tuple[str, ...] = ("frrvty",)

    @property
    def etc_dir(self) -> Path:
        return FRR_ETC / self.pathspace

    @property
    def run_dir(self) -> Path:
        return FRR_RUN / self.pathspace


#: PAM policy shown as ``/etc/pam.d/frr`` inside the sandbox. Debian's file only has an ``auth``
#: line, so for a non-root user vtysh prints "Failed in account validation" on every call;
#: access control stays with the vty sockets' group (``frrvty``), as the Debian file intends.
VTYSH_PAM = b"auth sufficient pam_permit.so\naccount sufficient pam_permit.so\n"


def user_task_count(uid: int) -> int:
    """Threads currently owned by ``uid`` on the host (RLIMIT_NPROC counts these)."""
    n = 0
    for p in os.scandir("/proc"):
        if not p.name.isdigit():
            continue
        try:
            with open(f"/proc/{p.name}/status", "rb") as fh:
                status = fh.read()
        except OSError:
            continue
        uid_ok = thr = None
        for line in status.splitlines():
            if line.startswith(b"Uid:"):
                uid_ok = int(line.split()[1]) == uid
            elif line.startswith(b"Threads:"):
                thr = int(line.split()[1])
        if uid_ok and thr:
            n += thr
    return n


#: what the sandbox shows of the host's file tree (an allowlist: everything else of ``/`` is
#: absent): the system's programs, libraries and configuration, bound read-only. A top-level
#: symlink (``/bin -> usr/bin`` on a merged-/usr system) is recreated as the same symlink.
#: ``/proc``, ``/dev``, ``/sys``, ``/tmp``, ``/run`` and ``/var`` are fresh mounts of the sandbox.
VISIBLE_ROOTS = ("/bin", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/sbin", "/usr")
#: the sandbox's ``/var``: an empty read-only tmpfs with these symlinks (the host's ``/var``,
#: with its logs, caches and ``/var/lib`` state, is not shown); ``/var/tmp`` is a private tmpfs
VAR_SYMLINKS = (("../run", "/var/run"), ("../run/lock", "/var/lock"))
#: size of that ``/var`` tmpfs (only its mount points and symlinks: nobody in the sandbox can
#: write it), bytes
VAR_TMPFS_BYTES = 1024 * 1024


def _visible_real() -> list[Path]:
    """The real paths of :data:`VISIBLE_ROOTS` on this host (a symlinked root: its target)."""
    return [Path(os.path.realpath(v)) for v in VISIBLE_ROOTS if os.path.lexists(v)]


def hidden_dirs(extra: tuple[str | Path, ...] = ()) -> list[Path]:
    """Directories inside the visible tree (:data:`VISIBLE_ROOTS`) replaced by an empty tmpfs in
    the sandbox: the ``ani`` package wherever it is installed and the source checkout holding it
    (task classes, hidden-test logic), the harness process's working directory (default home of campaign ``results/``), every results
    folder a run registered (``--out``; :mod:`ani.host.results_dirs`), plus ``extra``, each only
    where it lies under ``/usr``, ``/etc``, ... (e.g. a checkout in ``/usr/local/src``).
    Anywhere else (``/work``, ``/root``, ``/home``, ``/srv``, ``/opt``, ...) a directory is not
    in the sandbox at all, and covering it would show its name; a visible root itself is never
    hidden. Returns real paths, sorted, none under another.
    """
    cands: list[Path] = [Path(__file__).resolve().parents[1]]  # the ani package, e.g. in /usr/lib/python3/...
    pkg_parent = Path(__file__).resolve().parents[2]
    if (pkg_parent / "pyproject.toml").exists():  # a source checkout, not site-packages
        cands.append(pkg_parent)
    try:
        cands.append(Path.cwd().resolve())
    except OSError:
        pass
    cands += [Path(e).resolve() for e in extra]
    cands += results_dirs.known()  # every run's results folder, wherever it is (and earlier runs')
    visible = _visible_real()
    out: list[Path] = []
    for c in cands:
        real = Path(os.path.realpath(c))
        if real in visible or not any(real.is_relative_to(v) for v in visible) or not real.is_dir():
            continue
        if real.is_relative_to(FRR_ETC):  # the sandbox's /etc/frr is a tmpfs of its own
            continue
        if any(real.is_relative_to(o) for o in out):
            continue
        out = [o for o in out if not o.is_relative_to(real)] + [real]
    return sorted(out)


def root_binds(run_root: str = "/run") -> list[str]:
    """bwrap arguments building the sandbox's root from the allowlist :data:`VISIBLE_ROOTS`:
    each one that exists bound read-only (a recursive ``--ro-bind``; a symlink as the same
    ``--symlink``), and ``/var`` an empty tmpfs holding :data:`VAR_SYMLINKS`. Nothing else of the
    host's ``/`` is shown: not ``/work``, ``/root``, ``/home``, ``/srv``, ``/opt``, ``/mnt``, the
    host's ``/tmp`` or ``/var`` (other checkouts, users' files, results folders).

    Not one ``--ro-bind / /``: that binds every mount of the host, and bwrap then remounts each
    submount read-only, one by one, from a list it read before; ``/run`` holds the labs' own
    mounts (each router's run dir ``/run/frr/ani-<lab>-<router>``, each netns ``/run/netns/<ns>``),
    and one that another lab unmounts during that walk failed the setup (measured in
    docs/performance.md). ``run_root`` (``/run``) is an empty tmpfs in the sandbox; it is never
    among the visible roots.
    """
    out: list[str] = []
    for path in VISIBLE_ROOTS:
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path) and os.path.realpath(path) != os.path.realpath(run_root):
            out += ["--ro-bind", path, path]
    out += ["--perms", "0755", "--size", str(VAR_TMPFS_BYTES), "--tmpfs", "/var"]
    for target, link in VAR_SYMLINKS:
        out += ["--symlink", target, link]
    return out


def sandbox_argv(
    spec: SandboxSpec,
    command: str,
    *,
    pam_fd: int | None = None,
    nproc: int | None = None,
    userns_fd: int | None = None,
    vty: tuple[str, int] | None = None,
    config_read_only: bool = False,
    status_fd: int | None = None,
) -> list[str]:
    """Host-side argv running ``/bin/sh -c command`` sandboxed in ``spec``'s router.

    Args:
        spec: the router.
        command: shell command text (no NUL bytes).
        pam_fd: if given, an fd (inherited by the child) whose content becomes
            ``/etc/pam.d/frr`` inside the sandbox (see :data:`VTYSH_PAM`).
        nproc: RLIMIT_NPROC of the shell (None: no limit). RLIMIT_NPROC counts every thread
            of the user host-wide (FRR's daemons run as ``frr`` too), so pass the current count
            plus a headroom (see :func:`run_in_sandbox`).
        userns_fd: if given, an fd (inherited by the child) of the user namespace owning the
            router's netns (:func:`ani.lab.netns.owner_userns_fd`): the shell enters it, so its
            capabilities hold over that netns only. None: they are held in the host's user
            namespace (only for a netns the lab did not make; :func:`run_in_sandbox` refuses that).
        vty: ``(broker dir, client fd)`` of a :class:`ani.adapters.vtybroker.VtyBroker`: the
            sandbox's only way to FRR. Its ``/var/run/frr`` is then empty (no daemon socket),
            the broker dir is bound at ``/run/vtysh-broker`` and the fd's content (the broker
            client) becomes ``/usr/bin/vtysh``. None: the router's run dir is bound read-only
            at ``/var/run/frr`` (the daemons' own sockets; for tests of the sandbox alone).
        config_read_only: bind ``frr.conf`` read-only too (the blocklist ablation: writing the
            startup config is on its list). ``vtysh.conf`` is always read-only: the harness's
            vtysh reads it, so agent text there would show up as the router's config.
        status_fd: if given, an fd (inherited by the child) bwrap writes its JSON status to
            (``--json-status-fd``): ``{ "child-pid": N, ... }`` after its clone, and
            ``{ "exit-code": N }`` when the command exits, only if its setup was done and the
            command exec'ed (bubblewrap 0.8 ``report_child_exit_status``); bwrap closes it in the
            sandbox, so the command cannot write to it. See :func:`setup_failed`.
    """
    if "\x00" in command:
        raise ValueError("command contains a NUL byte")
    run_root = os.path.realpath("/run")  # /var/run is a symlink to /run on Debian
    frr_run_in = os.path.realpath(str(FRR_RUN))  # /run/frr
    argv = [
        "ip", "netns", "exec", spec.netns,
        "bwrap",
        *root_binds(run_root),
        "--dev", "/dev",
        "--size", str(TMPFS_BYTES), "--perms", "1777", "--tmpfs", "/dev/shm",
        "--unshare-pid", "--unshare-uts", "--unshare-ipc", "--unshare-cgroup-try",
        "--proc", "/proc",
        "--ro-bind", "/proc/sys", "/proc/sys",
        "--bind", "/proc/sys/net", "/proc/sys/net",
        "--ro-bind", "/sys", "/sys",
        "--hostname", spec.hostname,
        "--size", str(TMPFS_BYTES), "--perms", "1777", "--tmpfs", "/tmp",
        "--size", str(TMPFS_BYTES), "--perms", "1777", "--tmpfs", "/var/tmp",
        "--tmpfs", run_root,
        *[a for d in hidden_dirs() for a in ("--perms", "0755", "--tmpfs", str(d))],
        *(["--dir", frr_run_in] if vty is not None else ["--ro-bind", str(spec.run_dir), frr_run_in]),
        # /etc/frr: a small tmpfs (not writable by the user) holding this router's existing files,
        # each bound from /etc/frr/<pathspace> on the host's disk: vtysh.conf read-only (the
        # harness's vtysh reads it), frr.conf read-write in place unless config_read_only (no
        # new file can be created there, and RLIMIT_FSIZE bounds each file)
        "--size", str(TMPFS_BYTES), "--perms", "0755", "--tmpfs", str(FRR_ETC),
    ]
    for f in sorted(spec.etc_dir.iterdir()) if spec.etc_dir.is_dir() else []:
        if f.is_file() and not f.is_symlink():
            ro = config_read_only or f.name == "vtysh.conf"
            argv += ["--ro-bind" if ro else "--bind", str(f), str(FRR_ETC / f.name)]
    if vty is not None:
        from ani.adapters.vtybroker import SANDBOX_SOCKET_DIR

        argv += ["--bind", vty[0], SANDBOX_SOCKET_DIR, "--perms", "0755", "--ro-bind-data", str(vty[1]), "/usr/bin/vtysh"]
    if pam_fd is not None:
        argv += ["--perms", "0644", "--ro-bind-data", str(pam_fd), "/etc/pam.d/frr"]
    argv += ["--remount-ro", "/"]  # bwrap's own root tmpfs, holding the binds' mount points
    if status_fd is not None:
        argv += ["--json-status-fd", str(status_fd)]
    argv += [
        "--die-with-parent",
        "--new-session",
        "--cap-drop", "ALL",
    ]
    # setuid, setgid, setpcap only for setpriv; sys_admin only for nsenter's setns(CLONE_NEWUSER),
    # which leaves the host's user namespace (and every capability held there) behind
    for cap in (*KEEP_CAPS, "setuid", "setgid", "setpcap", *(("sys_admin",) if userns_fd is not None else ())):
        argv += ["--cap-add", f"CAP_{cap.upper()}"]
    argv += [
        "--clearenv",
        "--setenv", "PATH", SANDBOX_PATH,
        "--setenv", "HOME", "/tmp",
        "--setenv", "LANG", "C.UTF-8",
        "--setenv", "TERM", "dumb",
        "--setenv", "USER", spec.user,
        "--chdir", "/tmp",
        "--",
    ]
    if userns_fd is not None:
        argv += ["nsenter", f"--user=/proc/self/fd/{userns_fd}", "--preserve-credentials", "--"]
    argv += [
        "setpriv",
        f"--reuid={spec.user}",
        f"--regid={spec.user}",
        "--groups=" + ",".join(spec.extra_groups) if spec.extra_groups else "--clear-groups",
        "--inh-caps=-all," + ",".join("+" + c for c in KEEP_CAPS),
        "--ambient-caps=" + ",".join("+" + c for c in KEEP_CAPS),
        "--bounding-set=-all," + ",".join("+" + c for c in KEEP_CAPS),
        "--no-new-privs",
        "--",
        "prlimit",
        f"--as={ADDRESS_SPACE_BYTES}",
        f"--fsize={TMPFS_BYTES}",
    ]
    if nproc is not None:
        argv.append(f"--nproc={nproc}")
    argv += ["--", "/bin/sh", "-c", command]
    return argv


#: the programs a sandboxed command runs through, outermost first (see the module docstring)
SANDBOX_PROGRAMS = ("sh", "ip", "bwrap", "nsenter", "setpriv", "prlimit")


def check_support(spec: SandboxSpec | None = None) -> None:
    """Raise ProgramMissing (a program of :data:`SANDBOX_PROGRAMS` is not installed, naming its
    package) or CapabilityMissing (not root, no such user/group, no cgroup v1 memory/pids
    controller) if the host cannot run the sandbox."""
    for exe in SANDBOX_PROGRAMS:
        program(exe)
    if os.geteuid() != 0:
        raise CapabilityMissing("A0 sandbox needs root (ip netns exec, bwrap privileged mode)")
    CallCgroup.check_support()
    user = spec.user if spec else "frr"
    groups = spec.extra_groups if spec else ("frrvty",)
    try:
        pwd.getpwnam(user)
        for g in groups:
            grp.getgrnam(g)
    except KeyError as exc:
        raise CapabilityMissing(f"A0 sandbox: no such user/group {exc}") from None


def bwrap_exit_code(status: bytes) -> int | None:
    """The ``exit-code`` bwrap wrote to its ``--json-status-fd``, or None if it wrote none.

    ``status`` is everything bwrap wrote there: JSON objects one after another (``{ "child-pid":
    N, ... }`` after its clone, ``{ "exit-code": N }`` once the command exited). bubblewrap 0.8
    writes ``exit-code`` only if the child finished its setup (mounts, capabilities) and exec'ed
    the command: its ``setup_finished_pipe`` gets one byte just before the exec (none if the
    setup died, two if the exec failed). So None means the command never ran, or bwrap itself
    was killed (a timeout, the OOM killer).
    """
    text, dec, i, code = status.decode("utf-8", errors="replace"), json.JSONDecoder(), 0, None
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return code
        try:
            obj, i = dec.raw_decode(text, i)
        except ValueError:
            return code
        if isinstance(obj, dict) and type(obj.get("exit-code")) is int:
            code = obj["exit-code"]


def setup_failed(res: RunResult, status: bytes) -> bool:
    """Whether a sandboxed run never reached its command: bwrap reported no ``exit-code``
    (:func:`bwrap_exit_code` of its ``status``) although the run neither timed out nor hit the
    call's memory bound (the two ways bwrap can be killed without having failed). Decided from
    bwrap's status fd only, never from the command's output: a command that prints
    ``bwrap: ...`` and exits 1 is still the command's own result."""
    return not res.timed_out and not res.memory_exceeded and bwrap_exit_code(status) is None


def run_with_status(
    argv_for: Callable[[int], list[str]], *, timeout_s: float, max_bytes: int, pass_fds: tuple[int, ...] = (),
) -> tuple[RunResult, bytes]:
    """:func:`run_capped` of ``argv_for(status_fd)`` (an argv whose bwrap writes its JSON status
    to the fd ``status_fd``, inherited; see ``sandbox_argv(status_fd=...)``), and what was
    written there (bytes; for :func:`setup_failed`). Raises like :func:`run_capped`."""
    sr, sw = os.pipe()  # bwrap's status is a few hundred bytes: below the pipe buffer, never blocks
    try:
        res = run_capped(argv_for(sw), timeout_s=timeout_s, max_bytes=max_bytes, pass_fds=(*pass_fds, sw))
        os.close(sw)
        sw = -1
        return res, _read_status(sr)
    finally:
        os.close(sr)
        if sw != -1:
            os.close(sw)


def _read_status(fd: int) -> bytes:
    """What is in the pipe ``fd`` now (its writers are gone or done), without blocking."""
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def retry_setup(attempt: Callable[[float], RunResult], timeout_s: float, *, what: str) -> RunResult:
    """``attempt(seconds left)`` until one's sandbox was set up, at most :data:`SETUP_ATTEMPTS`
    times within ``timeout_s`` seconds in all (:data:`SETUP_RETRY_PAUSE_S` between tries).

    Retrying is safe: an attempt with ``setup_failed`` never ran the command (bwrap died before
    its exec; see :func:`bwrap_exit_code`), so nothing of the command happened twice. A setup
    fails for reasons outside the call, e.g. another lab's mount (``/run/frr/ani-<lab>-<router>``,
    ``/run/netns/<ns>``) vanishing while bwrap walks the mount table of its recursive ``/`` bind.

    Returns the first set-up attempt's result (``attempts`` set: 1 + the failed tries). Raises
    :class:`~ani.errors.SandboxSetupFailed` (a HostFault: the run is an infrastructure error, not
    the agent's failure) naming ``what`` and bwrap's message if every attempt failed, or if the
    time left is too short for another.
    """
    deadline = time.monotonic() + timeout_s
    n = 0
    while True:
        n += 1
        res = attempt(max(0.0, deadline - time.monotonic()))
        if not res.setup_failed:
            res.attempts = n
            if n > 1:
                log.info("a0.sandbox_setup_retried", what=what, attempts=n)
            return res
        log.warning("a0.sandbox_setup_failed", what=what, attempt=n, stderr=res.stderr.strip()[:500])
        if n >= SETUP_ATTEMPTS or deadline - time.monotonic() <= SETUP_RETRY_PAUSE_S:
            break
        time.sleep(SETUP_RETRY_PAUSE_S)
    why = next((ln.strip() for ln in res.stderr.splitlines() if ln.strip()), "no message")
    raise SandboxSetupFailed(
        f"{what}: the A0 sandbox could not be set up ({n} attempt(s)), so the command never ran "
        f"(a host fault, not the command's result): {why}",
        attempts=n, stderr=res.stderr,
    )


def run_in_sandbox(
    spec: SandboxSpec,
    command: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
    vty_dir: str | None = None,
    config_read_only: bool = False,
) -> RunResult:
    """Run ``command`` sandboxed in ``spec``'s router; see the module docstring.

    Returns a :class:`RunResult` (``timed_out`` and ``exit_status=None`` on timeout;
    ``memory_exceeded`` / ``pids_exceeded`` from the call's cgroups; the process tree is dead
    and the cgroups are gone in every case on return). A sandbox that fails to set up (bwrap's
    status fd reports no exit code, :func:`setup_failed`) ran nothing and is retried, at most
    :data:`SETUP_ATTEMPTS` setups within ``timeout_s`` (:func:`retry_setup`); ``attempts`` says
    how many it took. Raises SandboxSetupFailed (a HostFault) if none could be set up;
    ProgramMissing if a program of :data:`SANDBOX_PROGRAMS` is not installed (checked at every
    call: a sandbox that cannot start is the host's fault, not a failed command);
    CapabilityMissing without the cgroup controllers; LabError if the router's netns is missing
    or owned by the host's user namespace (a namespace not made by :func:`ani.lab.netns.create`:
    a shell there could act on other namespaces by nsid).
    """
    for exe in SANDBOX_PROGRAMS:
        program(exe)
    uid = pwd.getpwnam(spec.user).pw_uid

    def attempt(seconds: float) -> RunResult:
        return _run_once(spec, command, uid, timeout_s=seconds, max_bytes=max_bytes,
                         vty_dir=vty_dir, config_read_only=config_read_only)

    return retry_setup(attempt, timeout_s, what=f"{spec.hostname} ({spec.netns})")


def router_memcg(spec: SandboxSpec) -> Path | None:
    """The router's memory cgroup (:mod:`ani.lab.memcg`, cgroup v1) if the lab made one: a call's
    memory cgroup is made inside it, so what a call holds (its processes, and the kernel memory
    it charges: routes, nftables objects, which stay charged to the router after the call)
    counts against the router's bound as well as the call's. None: the call's cgroup is made at
    the top of the hierarchy (a lab without router cgroups)."""
    try:
        h = lab_memcg.hierarchy()
    except CapabilityMissing:
        return None
    d = lab_memcg.path(spec.pathspace, h)
    return d if h.version == 1 and d.is_dir() else None


def _run_once(
    spec: SandboxSpec, command: str, uid: int, *, timeout_s: float, max_bytes: int,
    vty_dir: str | None, config_read_only: bool,
) -> RunResult:
    """One setup and run of :func:`run_in_sandbox` (``setup_failed`` set, never retried here)."""
    try:
        userns = lab_netns.owner_userns_fd(spec.netns)
    except FileNotFoundError:
        raise LabError(f"A0 sandbox: no network namespace {spec.netns!r}") from None
    fds = [userns]
    try:
        if lab_netns.is_own_userns(userns):
            raise LabError(
                f"A0 sandbox: network namespace {spec.netns!r} is owned by the host's user namespace, "
                "so a shell in it could act on other namespaces by nsid; start the lab with "
                "ani.lab (each node gets its own user namespace)"
            )
        r, w = os.pipe()
        fds += [r, w]
        os.write(w, VTYSH_PAM)  # far below the pipe buffer: never blocks
        os.close(w)
        fds.remove(w)
        vty = None
        if vty_dir is not None:
            from ani.adapters.vtybroker import CLIENT_SOURCE

            cr, cw = os.pipe()
            fds.append(cr)
            os.write(cw, CLIENT_SOURCE.encode())  # a few KiB: below the pipe buffer
            os.close(cw)
            vty = (vty_dir, cr)
        with CallCgroup(memory_parent=router_memcg(spec)) as cg:
            res, status = run_with_status(
                lambda status_fd: cg.wrap(sandbox_argv(
                    spec, command, pam_fd=r, nproc=user_task_count(uid) + NPROC_HEADROOM, userns_fd=userns,
                    vty=vty, config_read_only=config_read_only, status_fd=status_fd,
                )),
                timeout_s=timeout_s, max_bytes=max_bytes, pass_fds=tuple(fds),
            )
        res.memory_exceeded = cg.memory_exceeded
        res.pids_exceeded = cg.pids_exceeded
        res.memory_peak_bytes = cg.memory_peak_bytes
        res.router_memory_bytes = cg.parent_limit_bytes
        res.setup_failed = setup_failed(res, status)
        return res
    finally:
        for fd in fds:
            os.close(fd)
