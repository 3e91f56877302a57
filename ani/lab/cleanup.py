"""Removing labs: by id, stale ones, and at exit of the owning process.

Only provably-owned things are removed: namespaces named ``ani-<id>-*``, FRR daemons whose
command line carries ``-N ani-<id>-<node>``, the lab's NETCONF server (its command line carries
``ani.lab.netconf_server --lab <id>``), its SSH server (``ani.lab.ssh_server --lab <id>``), the lab's reaper (``ani.lab.reaper --lab <id>``, stopped last),
processes inside those namespaces, and the lab's directories. Nothing is ever killed by name.

At exit of the owner: an owned, non-detached lab is removed at interpreter exit (atexit, which
also covers SIGINT's KeyboardInterrupt) and on SIGTERM and SIGHUP (:func:`install_signal_handlers`;
the process then dies of the signal as it would have). SIGKILL and crashes that skip all of this
are covered by the lab's reaper process (:mod:`ani.lab.reaper`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import threading
import time
from typing import TYPE_CHECKING

from ani.host import proc
from ani.host.threads import ContextPool
from ani.lab import frr, memcg, netns, reaper
from ani.lab import netconf as nc
from ani.lab import ssh as ssh_cli
from ani.lab.state import LAB_ID_RE, LabState, lab_dir, lab_ids, ns_prefix, read_state

if TYPE_CHECKING:
    from ani.lab.lab import Lab

#: an unreadable state file younger than this may be a lab being created: leave it
UNREADABLE_GRACE_S = 10.0

_owned: dict[str, Lab] = {}
_reg_lock = threading.Lock()
_atexit_installed = False
#: the signals that remove the owned labs before the process dies of them
SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_prev_handlers: dict[int, object] = {}  # signal -> the handler before ours (installed iff present)


def _ns_inodes(names: list[str]) -> dict[tuple[int, int], str]:
    out = {}
    for n in names:
        try:
            st = os.stat(netns.path(n))
        except OSError:
            continue
        out[(st.st_dev, st.st_ino)] = n
    return out


def pids_in_namespaces(names: list[str]) -> list[int]:
    """PIDs of processes whose network namespace is one of ``names`` (one scan of /proc)."""
    inodes = _ns_inodes(names)
    if not inodes:
        return []
    me = os.getpid()
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            st = os.stat(f"/proc/{entry.name}/ns/net")
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in inodes:
            out.append(int(entry.name))
    return out


def exists(lab_id: str) -> bool:
    """True if anything of lab ``lab_id`` exists (dir, namespace or FRR dir)."""
    if not LAB_ID_RE.match(lab_id):
        return False
    p = ns_prefix(lab_id)
    return (
        lab_dir(lab_id).exists()
        or any(n.startswith(p) for n in netns.list_netns())
        or any(d.name.startswith(p) for root in (frr.ETC_ROOT, frr.RUN_ROOT) if root.exists() for d in root.iterdir())
        or bool(memcg.lab_cgroups(lab_id))
    )


def destroy(lab_id: str, state: LabState | None = None) -> None:
    """Remove everything of lab ``lab_id``: daemons, processes in its namespaces, namespaces, FRR
    dirs, lab dir. Uses ``state`` (or the state file) plus a scan for ``ani-<id>-*`` names, so a
    half-created lab is removed too. Idempotent."""
    if not LAB_ID_RE.match(lab_id):
        return
    state = state or read_state(lab_id)
    p = ns_prefix(lab_id)
    nss = set(state.namespaces if state else []) | {n for n in netns.list_netns() if n.startswith(p)}
    pathspaces = set(nss)
    for root in (frr.ETC_ROOT, frr.RUN_ROOT):
        if root.exists():
            pathspaces |= {d.name for d in root.iterdir() if d.name.startswith(p)}
    pathspaces = {ps for ps in pathspaces if ps.startswith(p)}  # never anything outside the lab

    # 1. FRR daemons: PIDs from the state and the pid files, each verified to be that daemon carrying
    #    -N <pathspace> (frr.owns);
    #    the NETCONF and SSH servers (host side, not in a namespace) from the state and their info files
    pids: set[int] = set(nc.server_pids(lab_id, lab_dir(lab_id), state.netconf_pid if state else None,
                                        state.netconf_start if state else None))
    pids |= set(ssh_cli.server_pids(lab_id, lab_dir(lab_id), state.ssh_pid if state else None,
                                    state.ssh_start if state else None))
    if state:
        for node, dp in state.pids.items():
            ps = f"{p}{node}"
            pids |= {pid for d, pid in dp.items() if frr.owns(pid, ps, d)}
    for ps in pathspaces:
        rd = frr.run_dir(ps)
        daemons = [f.name[:-4] for f in rd.glob("*.pid")] if rd.exists() else []
        pids |= set(frr.read_pids(ps, daemons).values())
    # 2. anything else still running inside the lab's namespaces
    pids |= set(pids_in_namespaces(sorted(nss)))
    reapers = [p_ for p_ in reaper.pids(lab_id, state) if p_ != os.getpid()]  # stopped last, below
    proc.kill_and_wait(sorted(pids - set(reapers)))
    leftovers = pids_in_namespaces(sorted(nss))  # e.g. forked while we were killing
    if leftovers:
        proc.kill_and_wait(leftovers, timeout=0.5)
    # 3. namespaces (their veths go with them), then files
    netns.delete(sorted(nss))
    for ps in pathspaces:
        frr.remove_dirs(ps)
    memcg.remove_lab(lab_id)  # the routers' memory cgroups (ani-frr-<id>-*), empty by now
    shutil.rmtree(lab_dir(lab_id), ignore_errors=True)
    # 4. the reaper, last: had this process died half-way, the reaper would have finished the job
    if reapers:
        proc.kill_and_wait(reapers, timeout=1.0)


def stale(st: LabState) -> bool:
    """Whether the lab of ``st`` is left behind: its owner is gone and it was not handed over
    (detached and up)."""
    return (not st.detached or st.status != "up") and not st.owner_alive()


def down_stale(prefix: str | None = None) -> list[str]:
    """See ``Lab.down_stale``. Returns the removed lab ids, sorted."""
    if prefix is not None:
        return _down_stale_of(prefix)
    victims: set[str] = set()
    for i in lab_ids():
        st = read_state(i)
        if st is None:
            try:
                age = time.time() - lab_dir(i).stat().st_mtime
            except OSError:
                continue
            if age > UNREADABLE_GRACE_S:
                victims.add(i)
        elif stale(st):
            victims.add(i)  # owner gone, and the lab was not handed over (detached and up)
    # orphans: namespaces / FRR dirs named ani-<id>-* whose lab dir is gone
    known = set(lab_ids())
    names = list(netns.list_netns())
    for root in (frr.ETC_ROOT, frr.RUN_ROOT):
        if root.exists():
            names += [d.name for d in root.iterdir()]
    for n in names:
        parts = n.split("-")
        if len(parts) == 3 and parts[0] == "ani" and LAB_ID_RE.match(parts[1]) and parts[1] not in known:
            victims.add(parts[1])
    victims |= {i for i in memcg.lab_ids_present() if LAB_ID_RE.match(i) and i not in known}  # router cgroups
    return _destroy_all(sorted(victims))


def _down_stale_of(prefix: str) -> list[str]:
    """The stale labs whose state file says ``prefix``, removed (ids, sorted)."""
    ids = []
    for i in lab_ids():
        st = read_state(i)
        if st is not None and st.prefix == prefix and stale(st):
            ids.append(i)
    return _destroy_all(ids)


def _destroy_all(ids: list[str]) -> list[str]:
    if ids:
        with ContextPool(max_workers=min(8, len(ids))) as ex:
            list(ex.map(destroy, ids))
    return ids


# -- owner hooks ----------------------------------------------------------------------------------


def register(lab: Lab) -> None:
    """Remove ``lab`` at interpreter exit or on SIGTERM / SIGHUP (owned, non-detached labs).

    The signal handlers are installed the first time this runs in the main thread (or earlier by
    :func:`install_signal_handlers`)."""
    global _atexit_installed
    with _reg_lock:
        _owned[lab.id] = lab
        if not _atexit_installed:
            atexit.register(_down_all)
            _atexit_installed = True
    install_signal_handlers()


def install_signal_handlers() -> None:
    """On SIGTERM and SIGHUP: remove the owned labs, then hand the signal to the handler that was
    there before (or die of it, as by default). Idempotent; only from the main thread (elsewhere,
    and for a signal that was ignored, nothing is installed)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in SIGNALS:
        if sig in _prev_handlers:
            continue
        try:
            prev = signal.getsignal(sig)
            if prev == signal.SIG_IGN:  # nohup: the process asked not to die of it
                continue
            signal.signal(sig, _on_signal)
        except ValueError:  # pragma: no cover - not the main interpreter
            return
        _prev_handlers[sig] = prev


def unregister(lab: Lab) -> None:
    with _reg_lock:
        if _owned.get(lab.id) is lab:
            del _owned[lab.id]


def _down_all() -> None:
    labs = list(_owned.values())  # no lock: this also runs in a signal handler
    for lab in labs:
        try:
            lab.down()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


def _on_signal(signum: int, frame: object) -> None:
    _down_all()
    prev = _prev_handlers.get(signum, signal.SIG_DFL)
    if prev == signal.SIG_IGN:
        return
    if callable(prev) and prev is not _on_signal:
        prev(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
