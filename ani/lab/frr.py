"""FRR daemons of one router: directories, start, config load, stop.

A router's FRR lives in the pathspace ``P`` (``-N P``): config in ``/etc/frr/P``, sockets and PID
files in ``/var/run/frr/P``. Daemons run inside the router's netns under a private UTS namespace
whose hostname is the router's name, and a private mount namespace in which the host's file
systems are read-only to them (:func:`daemons_argv`). They listen on no vty TCP port (``-P 0``:
FRR 8.4.4 then opens only the unix vty socket), so an A0 shell inside the router's netns cannot
reach them over telnet; A0 reaches them only through its checked broker
(:mod:`ani.adapters.vtybroker`).

Disk: the daemons take commands from the agent (``log file PATH``, debug logging), run outside
the A0 sandbox's limits, and can write only their run dir and a private ``/var/tmp``. Each run
dir is its own tmpfs of :data:`RUN_DIR_BYTES` (source ``ani-frr-run-<P>``, mounted by
:func:`prepare`, unmounted by :func:`remove_dirs`, which every teardown runs, also the reaper's
after the owner died), so a daemon can fill only its router's bounded space: when it is full,
the log target's writes fail (ENOSPC) and the daemons go on routing (measured in
``tests/integration/test_frr_run_dir_bound.py``).
"""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import sys
import time
from pathlib import Path

from ani.errors import LabError
from ani.host import proc
from ani.host.programs import program
from ani.lab import memcg

# FRR's programs (the daemons, vtysh) are resolved through ani.host.program: ani/host/packages.txt
ETC_ROOT = Path("/etc/frr")
RUN_ROOT = Path("/var/run/frr")
#: size of each router's run dir (a tmpfs: PID files, vty sockets, and any ``log file`` an agent
#: points there), bytes
RUN_DIR_BYTES = 32 * 1024 * 1024


def etc_dir(pathspace: str) -> Path:
    return ETC_ROOT / pathspace


def run_dir(pathspace: str) -> Path:
    return RUN_ROOT / pathspace


def prepare(pathspace: str, config: str) -> list[str]:
    """Create the pathspace's config and run dirs (owned by ``frr``) with ``frr.conf``.

    Returns the directories created (absolute paths). Raises LabError.
    """
    try:
        pw = pwd.getpwnam("frr")
    except KeyError:
        raise LabError("user 'frr' does not exist: install the 'frr' package") from None
    made = []
    for d in (etc_dir(pathspace), run_dir(pathspace)):
        d.mkdir(parents=True, exist_ok=True)
        os.chown(d, pw.pw_uid, pw.pw_gid)
        made.append(str(d))
    rd = run_dir(pathspace)
    if not _run_mounts(pathspace):
        res = proc.run([program("mount"), "-t", "tmpfs", "-o",
                        f"size={RUN_DIR_BYTES},mode=0755,uid={pw.pw_uid},gid={pw.pw_gid},nosuid,nodev,noexec",
                        _run_source(pathspace), str(rd)], timeout=10.0)
        if not res.ok:
            raise LabError(f"FRR pathspace {pathspace}: cannot mount the run dir's "
                           f"{RUN_DIR_BYTES // 2**20} MiB tmpfs on {rd}: {(res.stderr or res.stdout).strip()}")
    etc = etc_dir(pathspace)
    text = config if config.endswith("\n") or not config else config + "\n"
    for name, content in (("frr.conf", text), ("vtysh.conf", "")):
        f = etc / name
        f.write_text(content)
        os.chown(f, pw.pw_uid, pw.pw_gid)
        f.chmod(0o640)
    return made


def set_hostname_sh(hostname: str) -> str:
    """Shell words naming the current UTS namespace ``hostname``: sethostname(2) through
    ``/proc/sys/kernel/hostname`` (per UTS namespace) with the shell's own ``printf``, not a
    ``hostname`` process (about 1 ms of CPU for every command run in a node)."""
    return f"printf %s {shlex.quote(hostname)} > /proc/sys/kernel/hostname"


def uts_argv(netns: str, hostname: str, script: str) -> list[str]:
    """argv running the shell ``script`` in ``netns`` under a private UTS namespace named ``hostname``."""
    return ["ip", "netns", "exec", netns, "unshare", "--uts", "sh", "-c", f"{set_hostname_sh(hostname)}; {script}"]


#: mount points the daemons keep writable: the kernel's views (zebra writes /proc/sys/net) and
#: the netns handles (the nsfs files under /run/netns, not the directory: it is on the host's
#: disk, and a ``log file /run/netns/x`` must not write there)
KEEP_RW_MOUNTS = ("/proc", "/sys", "/dev/pts", "/run/netns/")

#: the daemons' mount namespace in ONE process (its arguments: the run dir, the frr user's uid
#: and gid, then the mount points to keep writable), the steps of :func:`daemons_argv`'s shell
#: fallback: ``mount --make-rprivate /``; every mount point but those starting with a kept one
#: remounted read-only, keeping its other flags (nosuid, nodev, noexec, atime) as ``mount -o
#: remount,bind,ro`` does (errors ignored, as the shell loop ignores them); the run dir bound on
#: itself and made writable; a 16 MiB tmpfs on ``/var/tmp`` holding ``frr/`` (0700, the frr
#: user's). A ``mount`` run per mount point was some 50 runs per router here (every other lab's
#: run dirs are mount points too), and under load a lab's start ran out of its 15 s; the other
#: steps were six more processes per router (mount, mkdir, chown: some 11 000 ``mount`` runs in a
#: ``make test``). Run by :func:`remount_python` (stdlib only, ``-S``); exits non-zero, naming
#: the step, when a step that is not a read-only remount fails, and the shell steps run then.
#: The run dir is compared with /proc/self/mountinfo by its real path: RUN_ROOT is under
#: /var/run, a link to /run on Debian, and with the link the Python failed at every router's start
#: (the shell steps ran after it, 2026-12-07).
REMOUNT_RO_PY = r"""
import ctypes, os, re, sys
run, uid, gid, keep = os.path.realpath(sys.argv[1]).encode(), int(sys.argv[2]), int(sys.argv[3]), tuple(sys.argv[4:])
libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
kept = {"nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048, "relatime": 1 << 21,
        "nosymfollow": 256}
def must(what, rc):
    if rc != 0:
        sys.exit(f"{what}: {os.strerror(ctypes.get_errno())}")
def flags_of(opts, rw):
    flags = 32 | 4096 | (0 if rw else 1)  # MS_REMOUNT | MS_BIND | MS_RDONLY
    for o in opts:
        flags |= kept.get(o, 0)
    if "noatime" not in opts and "relatime" not in opts:
        flags |= 1 << 24  # MS_STRICTATIME: kept (the kernel would make it relatime)
    return flags
def mounts():
    for line in open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape"):
        f = line.split(" ")
        yield re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), f[4]), f[5].split(",")
must("mount --make-rprivate /", libc.mount(None, b"/", None, 16384 | (1 << 18), None))  # MS_REC | MS_PRIVATE
for target, opts in list(mounts()):
    if not target.startswith(keep):
        libc.mount(None, target.encode("utf-8", "surrogateescape"), None, flags_of(opts, False), None)
must("mount --bind run dir", libc.mount(run, run, None, 4096, None))  # MS_BIND
opts = [o for t, o in mounts() if t.encode("utf-8", "surrogateescape") == run][-1]
must("remount run dir rw", libc.mount(None, run, None, flags_of(opts, True), None))
must("mount tmpfs /var/tmp", libc.mount(b"tmpfs", b"/var/tmp", b"tmpfs", 0, b"size=16m,mode=1777"))
os.mkdir("/var/tmp/frr", 0o700)
os.chown("/var/tmp/frr", uid, gid)
"""


def remount_python() -> str:
    """The interpreter that runs :data:`REMOUNT_RO_PY` at each router's start: the harness's own
    (``sys.executable``), by absolute path. ``python3`` looked up in ``PATH`` was a pyenv shim on
    machines that have pyenv: some 34 bash runs and 90 ms of CPU before Python starts, per router
    (12 ms with the path). Falls back to the system's ``python3`` (FRR's frr-reload.py needs one)
    when the harness runs embedded, without an executable."""
    return sys.executable or "python3"


#: in the run dir, written only when :data:`REMOUNT_RO_PY` failed and the shell steps made the
#: mounts: what it said (its stderr is kept in memory while it runs: a file open for writing on a
#: mount point would keep that mount from being remounted read-only). Written after the steps,
#: when all but the run dir is read-only.
SETUP_ERRORS = "mount-setup.err"


def daemons_argv(netns: str, hostname: str, pathspace: str, script: str) -> list[str]:
    """Like :func:`uts_argv`, plus a private mount namespace for the daemons started by ``script``.

    The daemons run outside any A0 sandbox, yet take commands from it (``log file PATH`` makes
    them open PATH). In their mount namespace every host file system is read-only but for this
    pathspace's run dir (PID files, vty sockets: a :data:`RUN_DIR_BYTES` tmpfs, see
    :func:`prepare`) and a private 16 MiB tmpfs on ``/var/tmp`` (FRR's per-daemon crash-log
    dirs, gone with the daemons).
    The mounts are made by :data:`REMOUNT_RO_PY` in one process; where it fails the same steps
    run as processes, and what it said goes to the run dir's :data:`SETUP_ERRORS`.
    """
    pw = pwd.getpwnam("frr")
    run = shlex.quote(str(run_dir(pathspace)))
    keep = " ".join(f"-e '^{m}'" for m in KEEP_RW_MOUNTS)
    setup = (  # REMOUNT_RO_PY; if it fails, the same steps as processes
        f"err=$({shlex.quote(remount_python())} -S -c {shlex.quote(REMOUNT_RO_PY)} {run} {pw.pw_uid} {pw.pw_gid} "
        f"{' '.join(shlex.quote(m) for m in KEEP_RW_MOUNTS)} 2>&1 >/dev/null) || {{ "
        "mount --make-rprivate / && "
        f"for m in $(findmnt -rn -o TARGET | grep -v {keep}); do mount -o remount,bind,ro \"$m\" 2>/dev/null; done; "
        f"mount --bind {run} {run} && mount -o remount,bind,rw {run} && "
        f"mount -t tmpfs -o size=16m,mode=1777 tmpfs /var/tmp && "
        f"mkdir -p -m 0700 /var/tmp/frr && chown {pw.pw_uid}:{pw.pw_gid} /var/tmp/frr || exit 1; "
        f"printf '%s\\n' \"$err\" > {run}/{SETUP_ERRORS}; }}; "
    )
    return [
        "ip", "netns", "exec", netns, "unshare", "--uts", "--mount", "--propagation", "private",
        "sh", "-c", f"{set_hostname_sh(hostname)}; {setup}{script}",
    ]


def pid_file(pathspace: str, daemon: str) -> Path:
    return run_dir(pathspace) / f"{daemon}.pid"


#: how long a router's daemons may take to start and open their vty sockets (seconds). A deadline,
#: not a measurement: a start that works ends as soon as the sockets are there. 15 s ran out with
#: several labs starting side by side on a loaded 2-core host (campaign --jobs, the test suite's
#: pools); a start that has not worked in 30 s is broken.
START_TIMEOUT_S = 30.0


def start(netns: str, pathspace: str, hostname: str, daemons: list[str],
          timeout: float = START_TIMEOUT_S) -> dict[str, int]:
    """Start ``daemons`` (zebra first) and wait for their vty sockets. Returns ``{daemon: pid}``.

    They run in the router's memory cgroup (:func:`ani.lab.memcg.create` made it: the script
    exits 125 without it), so together with the vtysh runs on the router they are bounded.

    Raises LabError (with the daemon's output) if one fails to start in ``timeout`` seconds,
    ProgramMissing if a daemon is not installed.
    """
    ps = shlex.quote(pathspace)
    cmds = {
        d: f"{program(d)} -d -N {ps} -F traditional -A 127.0.0.1 -P 0 -i {shlex.quote(str(pid_file(pathspace, d)))}"
        for d in daemons
    }
    # zebra first (the others connect to it), then the rest in parallel; each `-d` returns once
    # its daemon is ready
    first = [d for d in daemons if d == "zebra"]
    rest = [d for d in daemons if d != "zebra"]
    script = "".join(f"{cmds[d]} || exit 1; " for d in first)
    script += "".join(f"{cmds[d]} & p{i}=$!; " for i, d in enumerate(rest))
    script += "rc=0; " + "".join(f"wait $p{i} || rc=1; " for i in range(len(rest))) + "exit $rc"
    # started from the router's memory cgroup (ani.lab.memcg, made by the lab), joined before
    # `ip netns exec` (which mounts a /sys of the netns, without the cgroup trees)
    proc.check(memcg.wrap(pathspace, daemons_argv(netns, hostname, pathspace, script)), timeout=timeout)
    return wait_ready(pathspace, daemons, timeout=timeout)


def wait_ready(pathspace: str, daemons: list[str], timeout: float = START_TIMEOUT_S) -> dict[str, int]:
    """Poll (every 20 ms) until every daemon has a live PID and a ``.vty`` socket. Raises LabError."""
    deadline = time.monotonic() + timeout
    while True:
        pids = read_pids(pathspace, daemons)
        missing = [d for d in daemons if d not in pids or not (run_dir(pathspace) / f"{d}.vty").exists()]
        if not missing:
            return pids
        if time.monotonic() > deadline:
            raise LabError(f"FRR pathspace {pathspace}: daemons not ready after {timeout:.0f} s: {', '.join(missing)}")
        time.sleep(0.02)


def read_pids(pathspace: str, daemons: list[str]) -> dict[str, int]:
    """``{daemon: pid}`` for daemons whose PID file names a live process of this pathspace."""
    out = {}
    for d in daemons:
        try:
            pid = int(pid_file(pathspace, d).read_text().strip())
        except (OSError, ValueError):
            continue
        if owns(pid, pathspace, d):
            out[d] = pid
    return out


def owns(pid: int, pathspace: str, daemon: str | None = None) -> bool:
    """True if ``pid`` is a live FRR daemon started with ``-N pathspace`` (guards every kill); with
    ``daemon``, that daemon (its program's name, e.g. ``bgpd``). The router's vtysh runs carry
    ``-N pathspace`` too: with PIDs reused every few minutes under load (``pid_max`` 32768), a dead
    daemon's PID taken by a vtysh on the same router read as the daemon still running."""
    argv = proc.cmdline(pid)
    if not argv or not proc.is_alive(pid):
        return False
    if daemon is not None and Path(argv[0]).name != daemon:
        return False
    return any(argv[i] == "-N" and argv[i + 1] == pathspace for i in range(len(argv) - 1))


#: the arguments that make a vtysh run keep no history: vtysh reads ``$HOME/.history_frr`` (root's,
#: one file for the whole host) at start and appends its lines to it, and ``show history`` prints
#: it, so an A0 agent read every command the harness, the observer and other labs' agents ran
#: (issue 23). Every vtysh the harness runs takes them (the broker's, the node wrapper's, this
#: module's); what runs inside a node gets ``VTYSH_HISTFILE=/dev/null`` too (frr-reload's vtysh).
NO_HISTORY: tuple[str, str] = ("-H", "/dev/null")


def load_config(netns: str, pathspace: str, hostname: str, timeout: float = 30.0) -> None:
    """Apply ``frr.conf`` with ``vtysh -N P -b``. Raises LabError with vtysh's output on failure."""
    vtysh = program("vtysh")
    res = proc.run(uts_argv(netns, hostname, f"exec {vtysh} -N {shlex.quote(pathspace)} {' '.join(NO_HISTORY)} -b"),
                   timeout=timeout)
    if not res.ok:
        raise LabError(
            f"{hostname}: loading the startup config failed (exit {res.rc}): "
            f"{(res.stdout + res.stderr).strip()[-2000:]}"
        )


def _run_source(pathspace: str) -> str:
    return f"ani-frr-run-{pathspace}"


def _run_mounts(pathspace: str) -> int:
    """How many of this pathspace's run-dir tmpfs mounts (source ``ani-frr-run-<P>`` on the run
    dir) the host's mount table has."""
    target, source = os.path.realpath(run_dir(pathspace)), _run_source(pathspace)
    n = 0
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                left, _, right = line.partition(" - ")
                fields, tail = left.split(" "), right.split(" ")
                if len(fields) > 4 and len(tail) > 1 and fields[4] == target and tail[1] == source:
                    n += 1
    except OSError:
        return 0
    return n


def remove_dirs(pathspace: str) -> None:
    """Unmount the pathspace's run-dir tmpfs (only a mount this module made: its source names
    the pathspace; lazily if a process still holds it) and remove the config and run
    directories (if present)."""
    target = str(run_dir(pathspace))
    for _ in range(_run_mounts(pathspace)):
        if not proc.run([program("umount"), target], timeout=10.0).ok:
            proc.run([program("umount"), "--lazy", target], timeout=10.0)
    for d in (etc_dir(pathspace), run_dir(pathspace)):
        shutil.rmtree(d, ignore_errors=True)
