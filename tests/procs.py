"""Process look-ups for tests, read from /proc (never by a broad name: by lab id or parent pid).

    mcp_server_pids(lab_id) -> [pid]     ``... mcp serve ... <lab_id> ...`` processes
    vtysh_below(pid) -> [pid]            vtysh processes below ``pid`` (any depth)
    vtysh_below(pid, direct=True)        only its children (an adapter's open sessions)
    alive(pid) -> bool                   running and not a zombie
    footprint(lab_id) -> {kind: [...]}   what of a lab is still on the host (EMPTY when nothing):
                                         namespaces, FRR dirs, processes, lab dir, tmpfs mounts
    owner(pid) -> (pid, start)           a process as a lab state names its owner
    labs_owned_by({owner}) -> {id: st}   labs whose owner is one of those (PID and start time)
    owned_labs(pid[, start]) -> {lab id} labs whose state names that process as their owner
    lab_gone(lab_id) -> bool             neither its namespaces nor its lab dir are left
    ani_cli(args, env, timeout)          ``python -m ani.cli ARGS`` from the repository root:
                                         (CompletedProcess, ids of the labs it owned while it ran)

Importable from any test module (``tests/`` is on ``sys.path`` through the rootdir conftest).
"""

from __future__ import annotations

import functools
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ani.lab import frr, memcg
from ani.lab.netns import list_netns
from ani.lab.proc import cmdline
from ani.lab.state import lab_dir


def _procs() -> dict[int, tuple[int, bytes]]:
    """pid -> (parent pid, raw argv) of every process readable now."""
    out: dict[int, tuple[int, bytes]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            argv = (d / "cmdline").read_bytes()
        except OSError:
            continue
        out[int(d.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), argv)
    return out


def mcp_server_pids(lab_id: str) -> list[int]:
    """Pids of processes whose command line is ``... mcp serve ... <lab_id> ...``."""
    return [
        pid for pid, (_, raw) in _procs().items()
        if {b"serve", b"mcp", lab_id.encode()} <= set(raw.split(b"\0"))
    ]


def vtysh_below(pid: int, direct: bool = False) -> list[int]:
    """Pids of vtysh processes below ``pid``: its children only with ``direct``, else any depth."""
    procs = _procs()
    below, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, (pp, _) in procs.items() if pp in frontier} - below
        below |= frontier
        if direct:
            break
    return sorted(p for p in below if b"vtysh" in procs[p][1])


def alive(pid: int) -> bool:
    """True if ``pid`` runs and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def footprint(lab_id: str) -> dict[str, list[str]]:
    """Everything of lab ``lab_id`` still on the host (namespaces, FRR dirs, processes, lab dir)."""
    p = f"ani-{lab_id}-"
    procs = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            argv = cmdline(int(d.name))
            if any(p in a for a in argv) or ("--lab" in argv and lab_id in argv):
                procs.append(" ".join(argv)[:120])
    return {
        "netns": [n for n in list_netns() if n.startswith(p)],
        "frr": sorted(d.name for root in (frr.ETC_ROOT, frr.RUN_ROOT) if root.exists()
                      for d in root.iterdir() if d.name.startswith(p)),
        "procs": procs,
        "dir": [str(lab_dir(lab_id))] if lab_dir(lab_id).exists() else [],
        # each router's run-dir tmpfs (ani.lab.frr.prepare): unmounted by every teardown
        "mounts": [ln.split(" - ")[1].split()[1] for ln in Path("/proc/self/mountinfo").read_text().splitlines()
                   if " - " in ln and ln.split(" - ")[1].split()[1].startswith(f"ani-frr-run-{p}")],
        # each router's memory cgroup (ani.lab.memcg): removed by every teardown
        "cgroups": [str(c) for c in memcg.lab_cgroups(lab_id)],
    }


EMPTY = {"netns": [], "frr": [], "procs": [], "dir": [], "mounts": [], "cgroups": []}


def track_labs(deps: Any) -> list[Any]:
    """Wrap ``deps.make_lab`` (a :class:`ani.campaign.runner.RunnerDeps`) so every lab it makes
    is appended to the returned list (in order): a test reaches the run's lab, and checks its
    footprint after the run."""
    labs: list[Any] = []
    real = deps.make_lab

    @functools.wraps(real)  # its signature: lab_options passes it what ``real`` takes (prefix, servers)
    def make_lab(topology: Any, **kw: Any) -> Any:
        labs.append(real(topology, **kw))
        return labs[-1]

    deps.make_lab = make_lab
    return labs


def owner(pid: int) -> tuple[int, int | None]:
    """``(pid, start time)``: a process as a lab's state names its owner (``owner_pid``,
    ``owner_start``). Take it while the process runs; a dead one's start time is None."""
    from ani.lab.proc import start_time

    return pid, start_time(pid)


def labs_owned_by(owners: set[tuple[int, int | None]]) -> dict[str, str]:
    """``{lab id: status}`` of the labs whose owner is one of ``owners`` (:func:`owner`): the
    PID *and* its start time, so another person's lab whose dead owner's PID was reused by one
    of ours (a detached ``ani lab up`` lab) is never taken for ours."""
    from ani.lab.state import lab_ids, read_state

    found = {}
    for lab_id in lab_ids():
        st = read_state(lab_id)
        if st is not None and st.owner_start is not None and (st.owner_pid, st.owner_start) in owners:
            found[lab_id] = st.status
    return found


def owned_labs(pid: int, start: int | None = None) -> set[str]:
    """Ids of the labs whose state names ``pid`` (started at ``start``; default: the running
    process's start time) as their owner, now (:func:`labs_owned_by`)."""
    who = (pid, start) if start is not None else owner(pid)
    return set(labs_owned_by({who}))


def _descendants(pid: int) -> set[tuple[int, int | None]]:
    """:func:`owner` of every live descendant of ``pid``."""
    import psutil

    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return set()
    return {owner(k.pid) for k in kids}


def ani_cli(args: list[str], env: dict[str, str], timeout: float) -> tuple[subprocess.CompletedProcess, set[str]]:
    """``python -m ani.cli ARGS`` in the repository root; returns the result and the ids of the
    labs it or one of its descendants (a campaign's workers) owned (seen while it ran). On a timeout it gets SIGINT (a runner takes its lab down;
    killed if that takes over 180 s) and the calling test fails with the end of its output."""
    import pytest

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "ani.cli", *args], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    labs: set[str] = set()
    owners = {owner(proc.pid)}
    deadline = time.monotonic() + timeout
    while True:
        owners |= _descendants(proc.pid)  # a campaign's runs live in its worker processes (--jobs)
        labs |= set(labs_owned_by(owners))
        try:
            out, err = proc.communicate(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            if time.monotonic() < deadline:
                continue
            proc.send_signal(signal.SIGINT)
            try:
                out, err = proc.communicate(timeout=180)
            except subprocess.TimeoutExpired:  # the lab may be left: `ani lab down --stale`
                proc.kill()
                out, err = proc.communicate()
            pytest.fail(f"ani {' '.join(args[:1])} did not finish in {timeout} s:\n{out[-2000:]}\n{err[-2000:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), labs


def interrupt(proc: subprocess.Popen, timeout_s: float = 30.0) -> None:
    """Stop a server started by a test as Ctrl-C would (SIGINT), SIGKILL after ``timeout_s``
    seconds; returns once it exited (its ``returncode`` set)."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def lab_gone(lab_id: str) -> bool:
    """Neither a namespace of the lab nor its lab directory is left."""
    from ani.lab.state import ns_prefix

    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return ns_prefix(lab_id) not in netns and not lab_dir(lab_id).exists()
