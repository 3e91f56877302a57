"""The results folders of this machine's runs, so the A0 sandbox can hide every one of them.

    register(out_dir)      # the runner, before any agent acts: this run's folder
    known()                # the sandbox (ani.adapters.sandbox.hidden_dirs): all of them
    with lock(out_dir):    # one writer per folder (a campaign's coordinator); FolderInUse otherwise

A run's folder (``ani campaign run --out``, ``ani run --out``, or the default under
``results/``) holds records and trajectories: an agent that can read them (earlier runs'
answers, this run's own trajectory) is not the agent the benchmark measures (issue 12 §1 item 6).
Folders are kept in this process (always) and appended to a registry file that outlives it,
``$ANI_STATE_DIR/results-dirs`` (default ``/var/lib/ani/results-dirs``, one absolute path per
line), so later runs hide earlier runs' folders wherever they are. The registry's own directory
is hidden too (:func:`known` includes it). Writing the registry is best effort (a read-only
``/var/lib`` loses only the earlier-runs part; this process's folders stay hidden).
"""

from __future__ import annotations

import os
from pathlib import Path

_THIS_PROCESS: set[Path] = set()


def state_dir() -> Path:
    """``$ANI_STATE_DIR``, else ``/var/lib/ani`` (the registry's directory)."""
    return Path(os.environ.get("ANI_STATE_DIR") or "/var/lib/ani")


def registry_file() -> Path:
    return state_dir() / "results-dirs"


def _read() -> list[Path]:
    try:
        text = registry_file().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [Path(ln) for ln in text.splitlines() if ln.startswith("/")]


def register(folder: str | Path) -> Path:
    """Record ``folder`` (made absolute, symlinks resolved) as a results folder; returns it.

    Never raises for the registry file (best effort, see the module doc)."""
    real = Path(os.path.realpath(Path(folder).expanduser()))
    _THIS_PROCESS.add(real)
    if real in _read():
        return real
    try:
        state_dir().mkdir(mode=0o700, parents=True, exist_ok=True)
        with registry_file().open("a", encoding="utf-8") as fh:
            fh.write(f"{real}\n")
    except OSError:
        pass
    return real


def known() -> list[Path]:
    """Every results folder registered here or by earlier runs that exists now, plus the
    registry's directory (sorted, unique)."""
    found = {p for p in (*_THIS_PROCESS, *_read()) if p.is_dir()}
    if state_dir().is_dir():
        found.add(Path(os.path.realpath(state_dir())))
    return sorted(found)


#: the lock file of a results folder (held by the process that writes its runs)
LOCK_FILE = ".ani-lock"


class FolderLock:
    """An exclusive ``flock`` on ``<folder>/.ani-lock`` (:func:`lock`); ``release()`` or the
    end of a ``with`` block gives it up. The kernel releases it when the holder dies, however
    it dies (kill -9 included), so a lock is never stale; the file itself stays (it holds the
    last holder's PID and is no lock without a process)."""

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder, self._fd = folder, fd

    def release(self) -> None:
        """Give the lock up (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)  # closing the only descriptor releases the flock
            self._fd = -1

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock(folder: str | Path, name: str = "--resume") -> FolderLock:
    """Lock results folder ``folder`` (it must exist) for this process: a second process that
    tries the same folder is refused, naming this one's PID.

    The descriptor is not inherited by the programs a run starts (close-on-exec: labs, daemons,
    reapers), so only this process holds the lock.

    Raises:
        FolderInUse (a ConfigError): ``<name> <folder>: in use by another campaign (PID N) ...``;
            ``holder_pid`` is N (None when the holder had not written its PID yet).
        CampaignSpecError: the lock file cannot be opened (``<name> <folder>: cannot lock ...``).
    """
    import fcntl

    from ani.errors import CampaignSpecError, FolderInUse

    folder = Path(folder)
    path = folder / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise CampaignSpecError(f"{name} {folder}: cannot lock the folder ({exc.strerror or exc})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = _holder(fd)
        os.close(fd)
        who = f"PID {holder}" if holder is not None else "a process that is starting"
        raise FolderInUse(
            f"{name} {folder}: in use by another campaign ({who}) writing its runs; wait for it "
            "to end or stop it (it prints how to resume), then try again", holder) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return FolderLock(folder, fd)


def _holder(fd: int) -> int | None:
    """The PID written in the lock file (None if none is, yet)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
