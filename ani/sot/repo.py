# size: the git source of truth: read, write, commit, revert, diff and history share the repository and its lock
"""The git-backed source of truth (A3-R): one desired-state file per router in a real git repository.

Layout (copied from the skeleton folder ``sot/`` of the project, see ``sot/README.md``)::

    README.md               from the skeleton
    devices/<router>.json   desired state of one router (ani.sot.format)
    services/               service files (A4; empty until then)

Workflow: :meth:`SotRepo.patch` edits a file in the **working tree** (not staged, not committed),
:meth:`SotRepo.diff` shows the working tree against HEAD, :meth:`SotRepo.commit` stages every
change of ``devices/`` and ``services/`` and commits it (this is what triggers reconciliation, later),
:meth:`SotRepo.revert` commits the inverse of an earlier commit. Several patches may be made
before one commit; each names the ``base_revision`` (HEAD) it was based on and is refused with
:class:`Conflict` when HEAD moved since.

Guarantees: a failed operation changes nothing (files byte-identical, no commit, no staged
change, no ``index.lock`` left behind); every commit has the explicit author and committer
given to the constructor (default ``ani-sot <sot@ani.invalid>``), never the machine's identity.

Several writers (issues 11 and 23): a working tree belongs to ONE writer. Writers that share one
source of truth (two adapters on one lab, in one process or two) each get their own git
worktree of one shared bare repository (:meth:`SotRepo.writer`; its working files and its own
index), so one writer's uncommitted patch is never seen, nor committed, by another. The shared
truth is the branch ``main``: :meth:`head` is its tip, and a commit advances it with a
compare-and-swap (``git update-ref main NEW BASE``). Changes that do not overlap are merged: at
the start of each operation a writer's working tree follows the tip (:meth:`_sync`), carrying its
uncommitted changes along when the commits since its base changed other paths (a rebase: HEAD
and index to the tip, those other paths updated, its own files untouched); a commit is then
re-validated (every device file, and ``check()``) on the combined tree and made on the tip
(again, up to :data:`REBASE_TRIES` times, when another writer wins the compare-and-swap in
between). Only when the commits since its base changed a path it changed too is it refused with
:class:`Conflict` naming both revisions and the overlapping paths (``paths``); it keeps its
changes and is told to discard them and redo them on the new HEAD. A patch whose
``base_revision`` is older than HEAD is refused the same way only when its file changed since.
``HEAD`` in a revision argument always means the tip of ``main``. :meth:`exclusive` is a lock
shared by every writer of the repository (an ``flock``), for work that must not run twice at
once (a reconcile).

Bounds (:mod:`ani.sot.bounds`): a revision argument names a commit, never a path (SotArgError);
a commit message is at most 16 KiB without control characters; a file is at most 1 MiB.
"""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import json
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# GitPython checks for git at import; without git that import must not fail (the adapters are
# imported before the host check that names the missing package): git is checked at first use
os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
import git  # noqa: E402
import jsonpatch  # noqa: E402

from ani.names import hint
from ani.device.model import DeviceConfig  # noqa: E402
from ani.host.programs import program  # noqa: E402
from ani.sot.bounds import (  # noqa: E402
    MAX_FILE_BYTES,
    check_base_revision,
    check_message,
    check_revision,
    show,
    utf8,
)
from ani.sot.errors import (  # noqa: E402
    Conflict,
    DocError,
    SotBusy,
    SotError,
    SotPathError,
    UnknownRevision,
)
from ani.sot.format import dumps, from_doc, loads, to_doc  # noqa: E402
from ani.sot.patch import apply_patch  # noqa: E402

__all__ = ["SotRepo", "DEFAULT_AUTHOR", "SKELETON"]

DEFAULT_AUTHOR = ("ani-sot", "sot@ani.invalid")
#: The skeleton folder of a source checkout (absent in an installed wheel: a built-in README is used).
SKELETON = Path(__file__).resolve().parents[2] / "sot"
_DIRS = ("devices", "services")
#: the shared truth: its tip is HEAD
BRANCH = "refs/heads/main"
#: the lock file (in the repository's common git dir) behind :meth:`SotRepo.exclusive`
EXCLUSIVE_LOCK = "ani-exclusive.lock"
#: bound on joining / leaving a shared repository (another writer creating or removing it), seconds
LIFECYCLE_TIMEOUT_S = 60.0
#: what GitPython's rev-parse raises for a revision it cannot resolve (``@{-1}``, ``HEAD@{1}``
#: without a reflog entry: IndexError; ``HEAD@{yesterday}``: NotImplementedError)
_BAD_REVISION = (git.BadName, ValueError, IndexError, NotImplementedError, KeyError, git.GitCommandError)
#: how often a commit is rebased onto a tip another writer moved between its rebase and its
#: compare-and-swap before it answers Conflict (retriable)
REBASE_TRIES = 5
#: the longest file name (without ``.json``): the file system's limit is 255 bytes
_NAME_MAX = 200
_FALLBACK_README = "# Source of truth\n\n`devices/<router>.json`: desired state of one router. `services/`: service files.\n"


class SotRepo:
    """A source-of-truth repository at ``path`` (already initialised: see :meth:`init`)."""

    def __init__(self, path: str | Path, author: tuple[str, str] = DEFAULT_AUTHOR) -> None:
        program("git")  # ProgramMissing (package git) if it is not installed
        self.path = Path(path).resolve()
        try:
            self.repo = git.Repo(self.path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as e:
            raise SotPathError(f"{self.path} is not a source-of-truth repository: {e}") from None
        self.actor = git.Actor(*author)
        self.author = author
        self._lock = threading.RLock()
        self._pin = threading.local()  # see pinned()
        self.common_dir = Path(self.repo.git.rev_parse("--git-common-dir"))
        if not self.common_dir.is_absolute():
            self.common_dir = (self.path / self.common_dir).resolve()

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def init(cls, path: str | Path, devices: dict[str, DeviceConfig], skeleton: str | Path | None = SKELETON,
             author: tuple[str, str] = DEFAULT_AUTHOR, message: str = "init: desired state from the brownfield") -> SotRepo:
        """A new repository at ``path`` (absent or empty): the skeleton's files, one
        ``devices/<router>.json`` per entry of ``devices`` (keyed by router name), an empty
        ``services/``, and one initial commit. Raises ProgramMissing if git is not installed."""
        program("git")
        path = Path(path)
        if path.exists() and any(path.iterdir()):
            raise SotError(f"{path} exists and is not empty")
        path.mkdir(parents=True, exist_ok=True)
        docs = {}
        for name, cfg in devices.items():
            _check_name(name)
            if cfg.hostname != name:
                cfg = cfg.model_copy(update={"hostname": name})
            docs[name] = dumps(to_doc(cfg))
        try:
            repo = git.Repo.init(path, initial_branch="main")
            with repo.config_writer() as cw:  # a stray git command in here uses this identity too
                cw.set_value("user", "name", author[0])
                cw.set_value("user", "email", author[1])
                cw.set_value("commit", "gpgsign", "false")
            repo.close()
            skel = Path(skeleton) if skeleton is not None else None
            if skel is not None and skel.is_dir():
                for src in sorted(skel.rglob("*")):
                    rel = src.relative_to(skel)
                    if src.is_file() and rel.parts[0] not in _DIRS:
                        (path / rel).parent.mkdir(parents=True, exist_ok=True)
                        shutil.copyfile(src, path / rel)
            if not (path / "README.md").exists():
                (path / "README.md").write_text(_FALLBACK_README)
            for d in _DIRS:
                (path / d).mkdir(exist_ok=True)
                (path / d / ".gitkeep").write_text("")
            for name, text in docs.items():
                (path / "devices" / f"{name}.json").write_text(text)
            self = cls(path, author)
            self._commit_all(message)
            return self
        except BaseException:
            shutil.rmtree(path / ".git", ignore_errors=True)
            raise

    @classmethod
    def writer(cls, shared: str | Path, path: str | Path, initial: Callable[[], dict[str, DeviceConfig]], *,
               skeleton: str | Path | None = SKELETON, author: tuple[str, str] = DEFAULT_AUTHOR,
               message: str = "init: desired state from the brownfield") -> SotRepo:
        """A new writer of the shared source of truth ``shared`` (a bare repository; made from
        ``initial()`` -> ``{router: DeviceConfig}``, as :meth:`init`, if it does not exist yet):
        its own worktree at ``path`` (absent), on the tip of ``main``. Safe against other writers
        joining, leaving or creating it at the same time, in this process or another.

        Raises SotError (``path`` exists, the repository cannot be made), SotBusy (another writer
        held the repository's lifecycle lock for :data:`LIFECYCLE_TIMEOUT_S`), and whatever
        ``initial()`` raises."""
        program("git")  # ProgramMissing (package git) if it is not installed
        shared, path = Path(shared), Path(path)
        if path.exists():
            raise SotError(f"{path} exists: a writer's worktree must be new")
        with _flock(_lifecycle_lock(shared), LIFECYCLE_TIMEOUT_S, f"the source of truth {shared}"):
            if not (shared / "HEAD").is_file():
                _make_shared(shared, initial(), skeleton, author, message)
            try:
                git.Git().execute(["git", "--git-dir", str(shared), "worktree", "add", "-q", "--detach",
                                   str(path), BRANCH])
            except git.GitCommandError as e:
                shutil.rmtree(path, ignore_errors=True)
                raise SotError(f"cannot add a worktree {path} of {shared}: {e.stderr.strip()}") from None
        return cls(path, author)

    def leave(self, keep: bool = False) -> None:
        """Close this writer; unless ``keep``, remove its worktree and, when no other writer is
        left, the shared repository. A plain repository (:meth:`init`) is only closed. Never
        raises for parts already gone."""
        self.close()
        if keep or self.common_dir == (self.path / ".git").resolve():
            return
        shared = self.common_dir
        with contextlib.suppress(SotBusy), _flock(_lifecycle_lock(shared), LIFECYCLE_TIMEOUT_S, str(shared)):
            with contextlib.suppress(git.GitCommandError):
                git.Git().execute(["git", "--git-dir", str(shared), "worktree", "remove", "--force", str(self.path)])
            shutil.rmtree(self.path, ignore_errors=True)
            with contextlib.suppress(git.GitCommandError):
                git.Git().execute(["git", "--git-dir", str(shared), "worktree", "prune"])
            admin = shared / "worktrees"
            if not admin.is_dir() or not any(admin.iterdir()):
                shutil.rmtree(shared, ignore_errors=True)
                with contextlib.suppress(FileNotFoundError):
                    _lifecycle_lock(shared).unlink()  # held: a waiter re-opens it (see _flock)

    def close(self) -> None:
        self.repo.close()

    def __enter__(self) -> SotRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------

    def head(self) -> str:
        """The revision (full hex sha) of HEAD: the tip of the shared branch ``main`` (or the
        revision :meth:`pinned` holds in this thread)."""
        pin = getattr(self._pin, "rev", None)
        return pin if pin is not None else self._tip()

    def base(self) -> str:
        """The revision this working tree's changes are based on (equal to :meth:`head` unless
        another writer committed since and this tree has uncommitted changes)."""
        return self.repo.git.rev_parse("HEAD")

    def commit_of(self, revision: str) -> git.Commit:
        """The commit ``revision`` names; ``HEAD`` (also in ``HEAD~2``, ``HEAD^``) is
        :meth:`head`. Raises SotArgError when ``revision`` does not have the form of a commit's
        name (:func:`ani.sot.bounds.check_revision`: a path ``HEAD:x``, a range ``a..b``, an option
        ``-x``, reflog syntax ``HEAD@{1}``: a reflog is one working tree's, not the shared
        history), UnknownRevision (``unknown revision ...``) when it names no commit."""
        check_revision(revision)
        asked = revision
        if revision.startswith("HEAD"):
            revision = self.head() + revision[4:]
        try:
            commit = self.repo.commit(revision)
            commit.parents  # noqa: B018 (a full sha is only looked up when the commit is read)
            return commit
        except _BAD_REVISION:
            raise UnknownRevision(f"unknown revision {asked!r} (name a commit of the history, e.g. from sot_log)") from None

    @contextlib.contextmanager
    def pinned(self, revision: str | None = None) -> Iterator[str]:
        """Within the block (in this thread), HEAD means ``revision`` (default: the tip now), so
        that one reconcile reads one revision even when another writer commits meanwhile."""
        old = getattr(self._pin, "rev", None)
        self._pin.rev = revision or self.head()
        try:
            yield self._pin.rev
        finally:
            self._pin.rev = old

    @contextlib.contextmanager
    def exclusive(self, timeout_s: float, what: str = "the source of truth") -> Iterator[None]:
        """Hold the lock every writer of this repository shares (an ``flock`` on
        ``<common git dir>/ani-exclusive.lock``) for the block, waiting at most ``timeout_s``
        seconds. Raises SotBusy naming ``what`` when another writer held it that long."""
        with _flock(self.common_dir / EXCLUSIVE_LOCK, timeout_s, what):
            yield

    def _tip(self) -> str:
        return self.repo.git.rev_parse("--verify", "-q", BRANCH)

    def list(self) -> list[str]:
        """The desired-state files in the working tree (``devices/*.json``, ``services/*.json``)."""
        self._sync()
        return sorted(str(p.relative_to(self.path)) for d in _DIRS for p in (self.path / d).glob("*.json"))

    def routers(self) -> list[str]:
        return [Path(p).stem for p in self.list() if p.startswith("devices/")]

    def read(self, path: str, revision: str | None = None) -> dict:
        """The document at ``path`` in the working tree, or at ``revision``."""
        rel = self._rel(path)
        if revision is None:
            self._sync()
            f = self.path / rel
            if not f.is_file():
                same = [p for p in self.list() if p.split("/")[0] == rel.split("/")[0]]
                raise SotPathError(f"no such file: {rel}" + hint(rel, same, listed_by="sot_list"))
            return loads(f.read_text(encoding="utf-8"))
        text = self._blob(rel, revision)
        if text is None:
            raise SotPathError(f"no such file at {revision}: {rel}")
        return loads(text)

    def desired(self, router: str) -> DeviceConfig:
        """The desired DeviceConfig of ``router`` at HEAD (committed state, not the working tree)."""
        _check_name(router)
        text = self._blob(f"devices/{router}.json", "HEAD")
        if text is None:
            raise SotPathError(f"no router {router} at HEAD")
        return from_doc(loads(text), router)

    # -- editing ---------------------------------------------------------------------------

    def patch(self, path: str, ops: Any, base_revision: str) -> dict:
        """Apply the RFC 6902 patch ``ops`` to the file ``path`` in the working tree. Atomic;
        validated (a device file through :func:`ani.sot.format.from_doc`, then written in its
        canonical form: a value equal to the default is left out). Returns
        ``{"path", "base_revision", "changed"}``. Raises Conflict, PatchError, DocError, SotPathError."""
        rel = self._rel(path)
        with self._lock:
            self._sync()
            actual = self._check_base(base_revision, rel)
            f = self.path / rel
            if f.is_file():
                old_text = f.read_text(encoding="utf-8")
                doc = loads(old_text, "")
            elif rel.startswith("services/"):
                old_text, doc = None, {}
            else:
                raise SotPathError(f"no such file: {rel} (a router's file is created by init)"
                                   + hint(rel, [p for p in self.list() if p.startswith("devices/")], listed_by="sot_list"))
            new = apply_patch(doc, ops)
            if rel.startswith("devices/"):
                # schema and references; the file is written in canonical form (defaults left out)
                text = dumps(to_doc(from_doc(new, Path(rel).stem)))
            elif isinstance(new, dict):
                text = dumps(new)
            else:
                raise DocError("", "a service file is a JSON object")
            data = utf8(text, f"the document of {rel}")
            if len(data) > MAX_FILE_BYTES:
                raise DocError("", f"{rel} would be {len(data)} bytes, over the bound of {MAX_FILE_BYTES} "
                                   "(a file of the source of truth is at most 1 MiB)")
            if text != old_text:
                _atomic_write(f, data)
            return {"path": rel, "base_revision": actual, "changed": text != old_text}

    def delete(self, path: str, base_revision: str, check: Callable[[], None] | None = None) -> dict:
        """Delete the service file ``path`` (``services/<name>.json``) in the working tree. Then
        ``check()`` runs (e.g. the other service files still validate); if it raises, the file is
        put back byte-identical and the exception propagates. Returns ``{"path", "base_revision",
        "changed": True}``. Raises Conflict (HEAD moved since ``base_revision``), SotPathError (a
        bad name, no such file), SotError (a router's file)."""
        rel = self._rel(path)
        if not rel.startswith("services/"):
            raise SotError(f"{rel}: only service files (services/<name>.json) can be deleted; "
                           "a router's desired state is edited with a patch")
        with self._lock:
            self._sync()
            actual = self._check_base(base_revision, rel)
            f = self.path / rel
            if not f.is_file():
                raise SotPathError(f"no such file: {rel}"
                                   + hint(rel, [p for p in self.list() if p.startswith("services/")], listed_by="sot_list"))
            old = f.read_text(encoding="utf-8")
            f.unlink()
            if check is not None:
                try:
                    check()
                except BaseException:
                    _atomic_write(f, old.encode())
                    raise
            return {"path": rel, "base_revision": actual, "changed": True}

    def discard(self) -> None:
        """Drop every uncommitted change (working tree back to HEAD, the tip of ``main``)."""
        with self._lock, self._guard():
            self.repo.git.reset("--hard", "-q", self._tip())
            self.repo.git.clean("-fdq", "--", *_DIRS)

    def diff(self) -> dict:
        """The working tree against HEAD: ``{"base_revision", "files": [{"path", "status",
        "patch"}], "text"}`` (``patch``: the JSON Patch from HEAD to the working file, ``text``: a
        unified diff of all files). ``base_revision`` is what the changes are based on
        (:meth:`base`)."""
        with self._lock:
            self._sync()
            return self._diff(self.base())

    def _diff(self, head: str) -> dict:
        files, chunks = [], []
        paths = sorted(set(self._files()) | set(self._tree_files(head)))
        for rel in paths:
            old = self._blob(rel, head)
            f = self.path / rel
            new = f.read_text(encoding="utf-8") if f.is_file() else None
            if old == new:
                continue
            status = "added" if old is None else "deleted" if new is None else "modified"
            try:
                ops = jsonpatch.make_patch(json.loads(old) if old else {}, json.loads(new) if new else {}).patch
            except ValueError:
                ops = []
            files.append({"path": rel, "status": status, "patch": ops})
            chunks.extend(difflib.unified_diff((old or "").splitlines(True), (new or "").splitlines(True),
                                               f"a/{rel}" if old is not None else "/dev/null",
                                               f"b/{rel}" if new is not None else "/dev/null"))
        return {"base_revision": head, "files": files, "text": "".join(chunks)}

    def commit(self, message: str, check: Callable[[], None] | None = None) -> str:
        """Commit every change of the working tree; returns the new revision. When another
        writer committed since the changes' base and touched other paths only, the changes are
        rebased onto the tip first (see the module doc); every device file is validated and
        ``check()`` runs (it raises to refuse) on the tree that will be committed. Raises
        SotArgError for a message that is empty, over 16 KiB or holds a control character;
        SotError if there is nothing to commit; Conflict (``expected`` the changes' base,
        ``actual`` the tip, ``paths`` the overlap) when the other writer's commits changed a path
        these changes touch too (nothing committed; the changes stay in the working tree)."""
        check_message(message)
        with self._lock:
            for _ in range(REBASE_TRIES):
                self._sync()
                base = self.base()
                if not self._diff(base)["files"]:
                    raise SotError("nothing to commit (patch first)")
                self._check_moved(base)
                for rel in self._files():
                    if rel.startswith("devices/"):
                        from_doc(loads((self.path / rel).read_text(encoding="utf-8"), ""), Path(rel).stem)
                if check is not None:
                    check()
                try:
                    return self._commit_all(message)
                except _Raced:
                    continue  # another writer won the compare-and-swap: rebase onto its commit
            tip = self._tip()
            raise Conflict(self.base(), tip, f"HEAD kept moving: {REBASE_TRIES} other commits landed while this "
                                             f"one was rebased (HEAD is now {tip}); nothing was committed and "
                                             "your changes are still in the working tree: retry sot_commit")

    def log(self, n: int = 20) -> list[dict]:
        """The last ``n`` commits of HEAD, newest first."""
        out = []
        for c in self.repo.iter_commits(self.head(), max_count=max(1, int(n))):
            out.append({
                "revision": c.hexsha,
                "message": c.message.rstrip("\n"),
                "author": f"{c.author.name} <{c.author.email}>",
                "committer": f"{c.committer.name} <{c.committer.email}>",
                "time": c.committed_datetime.isoformat(),
                "files": sorted(c.stats.files) if c.parents else sorted(self._tree_files(c.hexsha)),
            })
        return out

    def revert(self, revision: str, message: str | None = None,
               check: Callable[[], None] | None = None) -> str:
        """A new commit undoing ``revision``; returns it. ``check()`` runs on the reverted working
        tree before anything is committed (it raises to refuse). Refused, nothing changed, with
        SotError when the working tree has uncommitted changes, ``revision`` is unknown, not in
        the history of HEAD, the initial commit, a merge commit (two or more parents: which side
        to undo is not defined), already undone, or does not apply cleanly (later commits changed
        the same lines: the message names them); with Conflict when another writer moved HEAD
        meanwhile (retriable)."""
        check_revision(revision)
        if message is not None:
            check_message(message)
        with self._lock:
            self._sync()
            if self._diff(self.base())["files"]:
                raise SotError("uncommitted changes: commit or discard them before a revert")
            self._check_moved(self.base())
            c = self.commit_of(revision)  # SotArgError / UnknownRevision
            parents = c.parents
            tip = self.base()
            if not self.repo.is_ancestor(c, tip):
                raise UnknownRevision(f"{revision} is not in the history of HEAD")
            if not parents:
                raise SotError(f"cannot revert {c.hexsha[:12]}: it is the initial commit (the brownfield "
                               "the source of truth started from)")
            if len(parents) > 1:
                raise SotError(f"cannot revert {c.hexsha[:12]}: it is a merge commit ({len(parents)} parents: "
                               f"{', '.join(p.hexsha[:12] for p in parents)}), so which side to undo is not "
                               "defined; revert the commits it merged instead (sot_log lists them)")
            with self._guard(restore=True):
                try:
                    self.repo.git.revert("--no-commit", c.hexsha)
                except git.GitCommandError as e:
                    raise SotError(self._unclean(c, tip, e)) from None
                if not self.repo.git.diff("--cached", "--name-only", "HEAD").strip():
                    raise SotError(f"nothing to revert: the changes of {c.hexsha[:12]} are already undone at HEAD")
                for rel in self._files():
                    if rel.startswith("devices/"):
                        from_doc(loads((self.path / rel).read_text(encoding="utf-8"), "/" + rel), Path(rel).stem)
                if check is not None:
                    check()
                first = c.message.splitlines()[0][:200] if c.message else ""
                return self._commit(message or f'Revert "{first}"\n\nThis reverts commit {c.hexsha}.\n')

    def _unclean(self, c: git.Commit, tip: str, e: git.GitCommandError) -> str:
        """Why reverting ``c`` on ``tip`` does not apply: the files in conflict and the later
        commits that changed them (not git's raw output)."""
        try:
            files = [f for f in self.repo.git.diff("--name-only", "--diff-filter=U").splitlines() if f]
        except git.GitCommandError:
            files = []
        later: list[str] = []
        if files:
            with contextlib.suppress(git.GitCommandError):
                later = [ln for ln in self.repo.git.log("--format=%h %s", f"{c.hexsha}..{tip}", "--", *files)
                         .splitlines() if ln]
        what = f" in {', '.join(files)}" if files else ""
        by = f" by {'; '.join(later[:5])}" + (" ..." if len(later) > 5 else "") if later else ""
        if not files:
            why = " ".join((e.stderr or str(e)).split())[:300]
            return f"revert of {c.hexsha[:12]} does not apply cleanly ({why})"
        return (f"revert of {c.hexsha[:12]} does not apply cleanly: the same lines{what} were changed later{by}; "
                "revert those later commits first (newest first), or undo the change with sot_patch")

    # -- internals -------------------------------------------------------------------------

    def _check_base(self, base_revision: Any, rel: str) -> str:
        """HEAD (full sha) if the patch of ``rel`` based on ``base_revision`` (7 to 40 hex digits)
        may be made: ``base_revision`` is HEAD, or an earlier commit of its history after which
        no commit changed ``rel``; and this working tree is not stale (:meth:`_check_moved`).
        Raises SotArgError (not a sha), Conflict (no commit of the history; ``rel`` changed since:
        ``paths`` [rel])."""
        asked = check_base_revision(base_revision)
        actual = self._tip()
        if not actual.startswith(asked):
            try:
                since = self.repo.commit(asked).hexsha
            except _BAD_REVISION:
                since = None
            if since is None or not self.repo.is_ancestor(since, actual):
                raise Conflict(asked, actual)
            if rel in self._changed(since, actual):
                raise Conflict(since, actual, self._overlap_text(since, actual, [rel], "your patch is based on"),
                               paths=[rel])
        self._check_moved(self.base())
        return actual

    def _check_moved(self, base: str) -> None:
        """Conflict if the tip moved away from ``base`` and another writer's commits since
        ``base`` changed a path this tree's uncommitted changes touch (``paths`` names them).
        When they changed other paths only (the tip moved after :meth:`_sync`), sync again."""
        for _ in range(REBASE_TRIES):
            tip = self._tip()
            if tip == base:
                return
            overlap = sorted(set(self._dirty()) & set(self._changed(base, tip)))
            if overlap:
                raise Conflict(base, tip, self._overlap_text(base, tip, overlap,
                                                             "your uncommitted changes are based on"), paths=overlap)
            self._sync()
            base = self.base()
        raise Conflict(base, self._tip(), self._overlap_text(base, self._tip(), [], "your uncommitted changes are based on"))

    def _overlap_text(self, base: str, tip: str, paths: list[str], what: str) -> str:
        """The message of a Conflict: both revisions, the overlapping paths and the commits that
        changed them, what to do."""
        by: list[str] = []
        if paths:
            with contextlib.suppress(git.GitCommandError):
                by = [ln for ln in self.repo.git.log("--format=%h %s", f"{base}..{tip}", "--", *paths).splitlines() if ln]
        what_changed = (f"{', '.join(paths)} changed since by another writer"
                        + (f" ({'; '.join(by[:5])}{' ...' if len(by) > 5 else ''})" if by else "")
                        if paths else "another writer committed meanwhile")
        return (f"HEAD moved: {what} {base}, HEAD is now {tip}, and {what_changed}; nothing was committed and "
                "your changes are still in the working tree (sot_diff shows them): sot_discard, then read "
                f"and patch again on {tip[:12]}")

    def _sync(self) -> None:
        """Follow the tip of ``main`` (another writer's commits): a clean working tree moves to
        it; one with uncommitted changes is rebased onto it when the commits since its base
        changed other paths only (:meth:`_rebase`), else stays (:meth:`_check_moved` refuses)."""
        with self._lock:
            base, tip = self.base(), self._tip()
            if base == tip:
                return
            mine = self._dirty()
            if not mine:
                with self._guard():
                    self.repo.git.reset("--hard", "-q", tip)
                return
            theirs = self._changed(base, tip)
            if set(mine) & set(theirs):
                return
            with self._guard():
                self._rebase(tip, theirs)

    def _rebase(self, tip: str, theirs: list[str]) -> None:
        """This tree's HEAD and index to ``tip``; the files of ``theirs`` (paths the commits up
        to ``tip`` changed, none of them changed here) as at ``tip``; every other file kept."""
        self.repo.git.reset("-q", tip)  # HEAD and index; the working files are left alone
        at_tip = set(self.repo.git.ls_tree("-r", "--name-only", "-z", tip, "--", *theirs).split("\0")) - {""}
        if at_tip:
            self.repo.git.checkout("-q", "--", *sorted(at_tip))  # from the index, which is tip's
        for rel in set(theirs) - at_tip:
            with contextlib.suppress(FileNotFoundError):
                (self.path / rel).unlink()

    def _dirty(self) -> list[str]:
        """Paths with uncommitted changes in this working tree (tracked or not)."""
        out = self.repo.git.status("--porcelain=v1", "-z", "--untracked-files=all").split("\0")
        paths, skip = [], False
        for entry in out:
            if skip or not entry:
                skip = False
                continue
            paths.append(entry[3:])
            skip = entry[0] in "RC"  # a rename's source follows (only when staged)
        return paths

    def _changed(self, old: str, new: str) -> list[str]:
        """Paths that differ between the trees of ``old`` and ``new``."""
        return [p for p in self.repo.git.diff("--name-only", "-z", old, new).split("\0") if p]

    def _files(self) -> list[str]:
        return sorted(str(p.relative_to(self.path)) for d in _DIRS for p in (self.path / d).glob("*.json"))

    def _rel(self, path: str) -> str:
        if not isinstance(path, str) or not path:
            raise SotPathError("a path is needed (e.g. devices/r1.json)")
        p = Path(path)
        if p.is_absolute() or ".." in p.parts or len(p.parts) != 2 or p.parts[0] not in _DIRS or p.suffix != ".json":
            raise SotPathError(f"{show(path)}: a file is devices/<router>.json or services/<name>.json")
        _check_name(p.stem)
        return p.as_posix()

    def _blob(self, rel: str, revision: str) -> str | None:
        tree = self.commit_of(revision).tree
        try:
            return (tree / rel).data_stream.read().decode()
        except KeyError:
            return None

    def _tree_files(self, revision: str) -> list[str]:
        tree = self.commit_of(revision).tree
        return [b.path for b in tree.traverse() if b.type == "blob" and b.path.endswith(".json")
                and b.path.split("/")[0] in _DIRS]

    def _commit_all(self, message: str) -> str:
        with self._guard(restore=False):
            self.repo.git.add("-A", "--", ".")
            return self._commit(message)

    def _commit(self, message: str) -> str:
        """Commit the index on this tree's base and advance ``main`` to it with a
        compare-and-swap (:class:`_Raced` if another writer moved it); returns the new revision."""
        try:
            base: str | None = self.base()
        except git.GitCommandError:
            base = None  # the initial commit
        new = self._write_commit(message, base)
        try:
            self.repo.git.update_ref("-m", "ani-sot commit", BRANCH, new, base or "0" * 40)
        except git.GitCommandError:
            tip = self.repo.git.rev_parse("--verify", "-q", BRANCH) if base else "?"
            raise _Raced(base or "", tip, f"HEAD moved: this commit was based on {base}, but another writer "
                                          f"moved HEAD to {tip} meanwhile; nothing was committed: read again and "
                                          "retry") from None
        self.repo.git.reset("-q", "--soft", new)  # this tree's HEAD (a no-op when HEAD is main itself)
        return new

    def _write_commit(self, message: str, parent: str | None) -> str:
        """The commit object of the index with ``parent`` (the configured identity, no hooks)."""
        tree = self.repo.git.write_tree()
        name, email = self.author
        env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
               "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
        args = [tree] + (["-p", parent] if parent else []) + ["-m", message]
        return self.repo.git.commit_tree(*args, env=env).strip()

    @contextlib.contextmanager
    def _guard(self, restore: bool = False) -> Iterator[None]:
        """On an exception: remove an ``index.lock`` this operation left, unstage (the index back
        to HEAD), and with ``restore`` also the working tree back to HEAD."""
        lock = Path(self.repo.git_dir) / "index.lock"
        had_lock = lock.exists()
        head = self.repo.head.commit.hexsha if self.repo.head.is_valid() else None
        try:
            yield
        except BaseException:
            if not had_lock:
                with contextlib.suppress(FileNotFoundError):
                    lock.unlink()
            with contextlib.suppress(git.GitCommandError):
                if head is not None:
                    if self.repo.head.commit.hexsha != head:
                        self.repo.git.reset("--soft", head)
                    self.repo.git.reset("-q", *(["--hard"] if restore else []), head)
                    if restore:
                        self.repo.git.clean("-fdq", "--", *_DIRS)
                for state in ("REVERT_HEAD", "MERGE_MSG"):
                    with contextlib.suppress(FileNotFoundError):
                        (Path(self.repo.git_dir) / state).unlink()
                shutil.rmtree(Path(self.repo.git_dir) / "sequencer", ignore_errors=True)
            raise


def _lifecycle_lock(shared: Path) -> Path:
    """The lock file of joining / leaving ``shared`` (next to it: it outlives the repository)."""
    return shared.with_name(shared.name + ".lock")


@contextlib.contextmanager
def _flock(path: Path, timeout_s: float, what: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block, waiting at
    most ``timeout_s`` seconds. Raises SotBusy naming ``what``. Two holders in one process
    exclude each other too (each opens its own file description). The holder may remove the
    file (a waiter then locks the new one)."""
    deadline = time.monotonic() + timeout_s
    while True:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() >= deadline:
                raise SotBusy(what, timeout_s) from None
            time.sleep(0.02)
            continue
        try:  # the holder before may have removed the file: then this lock protects nothing
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield
    finally:
        os.close(fd)  # releases the lock


def _make_shared(shared: Path, devices: dict[str, DeviceConfig], skeleton: str | Path | None,
                 author: tuple[str, str], message: str) -> None:
    """Create the bare repository ``shared`` whose ``main`` is :meth:`SotRepo.init`'s first commit
    of ``devices`` (the caller holds its lifecycle lock)."""
    shutil.rmtree(shared, ignore_errors=True)  # what a creator that died half-way left
    seed_path = shared.parent / f".{shared.name}.init-{secrets.token_hex(3)}"
    g = git.Git()
    try:
        SotRepo.init(seed_path, devices, skeleton=skeleton, author=author, message=message).close()
        g.execute(["git", "init", "-q", "--bare", "--initial-branch=main", str(shared)])
        for key, val in (("user.name", author[0]), ("user.email", author[1]), ("commit.gpgsign", "false"),
                         ("gc.auto", "0")):  # no background gc while writers work
            g.execute(["git", "--git-dir", str(shared), "config", key, val])
        g.execute(["git", "--git-dir", str(shared), "fetch", "-q", str(seed_path), f"{BRANCH}:{BRANCH}"])
    except git.GitCommandError as e:
        shutil.rmtree(shared, ignore_errors=True)
        raise SotError(f"cannot create the source of truth {shared}: {e.stderr.strip()}") from None
    except BaseException:
        shutil.rmtree(shared, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(seed_path, ignore_errors=True)


def _check_name(name: str) -> None:
    if (not isinstance(name, str) or not name or name.startswith(".") or "/" in name or "\\" in name
            or any(ch < " " or ch == "\x7f" for ch in name)):
        raise SotPathError(f"invalid file name {show(name)}")
    try:
        size = len(name.encode())
    except UnicodeEncodeError:
        raise SotPathError(f"invalid file name {show(name)}: not valid Unicode (a lone surrogate)") from None
    if size > _NAME_MAX:
        raise SotPathError(f"file name too long ({len(name.encode())} bytes, at most {_NAME_MAX}): {name[:40]!r}...")


class _Raced(Conflict):
    """Another writer moved ``main`` between a commit's rebase and its compare-and-swap:
    :meth:`SotRepo.commit` rebases again; elsewhere it is the Conflict it is."""


def _atomic_write(f: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=f.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, f)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
