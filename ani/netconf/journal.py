"""What a NETCONF server keeps on disk so that it outlives its process: per router, the pending
confirmed commit (RFC 6241 §8.4: its rollback point, persist token, deadline and owning session)
and the locks its sessions hold (RFC 6241 §7.5, published for the other management paths).

Lab-agnostic: a directory and an ``owner`` mapping that identifies the writing process (the lab
passes ``{"pid": ..., "start": ...}``; a reader uses it to tell a live server's entries from a
dead one's)::

    journal = Journal(Path("/run/ani/labs/ab12cd/netconf"), owner={"pid": 4400, "start": 98800})
    j = journal.router("r1")
    j.save_commit(record)        # PendingCommit.to_record(); None-safe reads with load_commit()
    j.load_commit() -> dict | None
    j.clear_commit()
    j.publish_locks({"running": {"session-id": 3, "since": 1764430000.0}})
    read_locks(journal_dir, "r1") -> {"owner": {...}, "locks": {...}} | None

Files (the directory is made mode 0700, every file is 0600 and written atomically: a temp file
in the same directory, flushed and fsync'ed, then renamed over the old one, so a reader or a
server killed at any instant sees either the old or the new content, never a torn one):

* ``<router>.commit.json``: ``{"version": 1, "owner": {...}, "commit": <record>}``, present
  while a confirmed commit is pending; ``<record>`` is :meth:`ani.netconf.commit.PendingCommit.to_record`.
* ``<router>.locks.json``: ``{"version": 1, "owner": {...}, "locks": {target: {"session-id":
  N, "since": unix seconds}}}``; ``locks`` is ``{}`` when nothing is locked.

Writes raise :class:`JournalError` (an ``OSError`` underneath: the directory was removed, the
disk is full). Reads of the locks never raise (a missing or unreadable file is None: a dead
server's locks are withdrawn anyway). A commit record is different, because it is the only copy
of a rollback point: :meth:`RouterJournal.load_commit` is None only when there is no record, and
raises :class:`JournalCorrupt` (naming the file and what is wrong with it) when the file is there
but unreadable (not JSON, cut short, another version, no ``commit`` object);
:meth:`RouterJournal.set_aside` then moves it to ``<router>.commit.json.unreadable-<unix s>`` so
that it is kept for a person to read and a later commit cannot overwrite it.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ani.errors import NetconfError

VERSION = 1
COMMIT_SUFFIX = ".commit.json"
LOCKS_SUFFIX = ".locks.json"


class JournalError(NetconfError):
    """A journal file could not be written (the message names the file and the OS error)."""


class JournalCorrupt(JournalError):
    """A commit record is there but cannot be read (the message names the file and why)."""


def write_json_atomic(path: Path, data: Any, mode: int = 0o600) -> None:
    """Write ``data`` as JSON to ``path`` atomically (temp file in the same directory, fsync,
    rename), with file mode ``mode``. Raises OSError."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _read(path: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and doc.get("version") == VERSION else None


class RouterJournal:
    """The journal files of one router (see the module docstring)."""

    def __init__(self, directory: Path, router: str, owner: dict[str, Any]) -> None:
        self.directory = directory
        self.router = router
        self.owner = dict(owner)
        self.commit_path = directory / f"{router}{COMMIT_SUFFIX}"
        self.locks_path = directory / f"{router}{LOCKS_SUFFIX}"

    def _write(self, path: Path, body: dict[str, Any]) -> None:
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_json_atomic(path, {"version": VERSION, "owner": self.owner, **body})
        except OSError as exc:
            raise JournalError(f"cannot write {path}: {exc.strerror or exc}") from exc

    def save_commit(self, record: dict[str, Any]) -> None:
        """Record the pending confirmed commit (replacing any earlier record). Raises JournalError."""
        self._write(self.commit_path, {"commit": record})

    def load_commit(self) -> dict[str, Any] | None:
        """The recorded pending confirmed commit (a :meth:`PendingCommit.to_record` dict), or
        None when no record exists. Raises JournalCorrupt when the file exists but is not a
        record of this version (not JSON, cut short, ...), JournalError when it cannot be read."""
        path = self.commit_path
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise JournalCorrupt(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from exc
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise JournalCorrupt(f"{path} is not JSON ({len(text)} bytes; {exc})") from exc
        if not isinstance(doc, dict):
            raise JournalCorrupt(f"{path}: expected a JSON object, got {type(doc).__name__}")
        if doc.get("version") != VERSION:
            raise JournalCorrupt(f"{path}: version {doc.get('version')!r}, this server reads version {VERSION}")
        rec = doc.get("commit")
        if not isinstance(rec, dict):
            raise JournalCorrupt(f"{path}: no 'commit' object")
        return rec

    def set_aside(self) -> Path:
        """Move an unreadable commit record out of the way, keeping it (for a person to read;
        a later commit would overwrite it): returns its new path,
        ``<router>.commit.json.unreadable-<unix s>``. Raises JournalError."""
        dest = self.commit_path.with_name(f"{self.commit_path.name}.unreadable-{int(time.time())}")
        n = 1
        while dest.exists():
            dest = dest.with_name(f"{self.commit_path.name}.unreadable-{int(time.time())}-{n}")
            n += 1
        try:
            os.replace(self.commit_path, dest)
        except OSError as exc:
            raise JournalError(f"cannot move {self.commit_path} aside: {exc.strerror or exc}") from exc
        return dest

    def clear_commit(self) -> None:
        """No confirmed commit is pending any more. Raises JournalError."""
        try:
            self.commit_path.unlink(missing_ok=True)
        except OSError as exc:
            raise JournalError(f"cannot remove {self.commit_path}: {exc.strerror or exc}") from exc

    def publish_locks(self, locks: dict[str, dict[str, Any]]) -> None:
        """Publish the locks held now (``{target: {"session-id": N, "since": unix s}}``, ``{}``
        for none). Raises JournalError."""
        self._write(self.locks_path, {"locks": locks})


class Journal:
    """The journal directory of one NETCONF server process (see the module docstring)."""

    def __init__(self, directory: Path, owner: dict[str, Any]) -> None:
        self.directory = Path(directory)
        self.owner = dict(owner)

    def router(self, name: str) -> RouterJournal:
        return RouterJournal(self.directory, name, self.owner)


def read_locks(directory: Path, router: str) -> dict[str, Any] | None:
    """``{"owner": {...}, "locks": {target: {"session-id": N, "since": s}}}`` as last published
    for ``router`` in ``directory``, or None (no file, unreadable). The caller decides whether the
    owner is still alive (a dead server's entry is no lock)."""
    doc = _read(Path(directory) / f"{router}{LOCKS_SUFFIX}")
    if doc is None or not isinstance(doc.get("locks"), dict):
        return None
    return {"owner": doc.get("owner") or {}, "locks": doc["locks"]}


__all__ = ["Journal", "JournalCorrupt", "JournalError", "RouterJournal", "read_locks", "write_json_atomic"]
