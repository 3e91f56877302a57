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
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# GitPython checks for git at import; without git that import must not fail (the adapters are
# imported before the host check that names the missing package): git is checked at first use
os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
import git  # noqa: E402
import jsonpatch  # noqa: E402

from ani.device.model import DeviceConfig  # noqa: E402
from ani.host.programs import program  # noqa: E402
from ani.sot.errors import Conflict, DocError, SotError, SotPathError  # noqa: E402
from ani.sot.format import dumps, from_doc, loads, to_doc  # noqa: E402
from ani.sot.patch import apply_patch  # noqa: E402

__all__ = ["SotRepo", "DEFAULT_AUTHOR", "SKELETON"]

DEFAULT_AUTHOR = ("ani-sot", "sot@ani.invalid")
#: The skeleton folder of a source checkout (absent in an installed wheel: a built-in README is used).
SKELETON = Path(__file__).resolve().parents[2] / "sot"
_DIRS = ("devices", "services")
#: what GitPython's rev-parse raises for a revision it cannot resolve (``@{-1}``, ``HEAD@{1}``
#: without a reflog entry: IndexError; ``HEAD@{yesterday}``: NotImplementedError)
_BAD_REVISION = (git.BadName, ValueError, IndexError, NotImplementedError, git.GitCommandError)
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
        self._lock = threading.RLock()

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

    def close(self) -> None:
        self.repo.close()

    def __enter__(self) -> SotRepo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------

    def head(self) -> str:
        """The revision (full hex sha) of HEAD."""
        return self.repo.head.commit.hexsha

    def list(self) -> list[str]:
        """The desired-state files in the working tree (``devices/*.json``, ``services/*.json``)."""
        return sorted(str(p.relative_to(self.path)) for d in _DIRS for p in (self.path / d).glob("*.json"))

    def routers(self) -> list[str]:
        return [Path(p).stem for p in self.list() if p.startswith("devices/")]

    def read(self, path: str, revision: str | None = None) -> dict:
        """The document at ``path`` in the working tree, or at ``revision``."""
        rel = self._rel(path)
        if revision is None:
            f = self.path / rel
            if not f.is_file():
                raise SotPathError(f"no such file: {rel}")
            return loads(f.read_text())
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
            actual = self._check_base(base_revision)
            f = self.path / rel
            if f.is_file():
                old_text = f.read_text()
                doc = loads(old_text, "")
            elif rel.startswith("services/"):
                old_text, doc = None, {}
            else:
                raise SotPathError(f"no such file: {rel} (a router's file is created by init)")
            new = apply_patch(doc, ops)
            if rel.startswith("devices/"):
                # schema and references; the file is written in canonical form (defaults left out)
                text = dumps(to_doc(from_doc(new, Path(rel).stem)))
            elif isinstance(new, dict):
                text = dumps(new)
            else:
                raise DocError("", "a service file is a JSON object")
            if text != old_text:
                _atomic_write(f, text)
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
            actual = self._check_base(base_revision)
            f = self.path / rel
            if not f.is_file():
                raise SotPathError(f"no such file: {rel}")
            old = f.read_text()
            f.unlink()
            if check is not None:
                try:
                    check()
                except BaseException:
                    _atomic_write(f, old)
                    raise
            return {"path": rel, "base_revision": actual, "changed": True}

    def discard(self) -> None:
        """Drop every uncommitted change (working tree back to HEAD)."""
        with self._lock, self._guard():
            self.repo.git.reset("--hard", "-q", "HEAD")
            self.repo.git.clean("-fdq", "--", *_DIRS)

    def diff(self) -> dict:
        """The working tree against HEAD: ``{"base_revision", "files": [{"path", "status",
        "patch"}], "text"}`` (``patch``: the JSON Patch from HEAD to the working file, ``text``: a
        unified diff of all files)."""
        head = self.head()
        files, chunks = [], []
        paths = sorted(set(self.list()) | set(self._tree_files("HEAD")))
        for rel in paths:
            old = self._blob(rel, "HEAD")
            f = self.path / rel
            new = f.read_text() if f.is_file() else None
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

    def commit(self, message: str) -> str:
        """Commit every change of the working tree; returns the new revision. Raises SotError
        if there is nothing to commit (or the message is empty)."""
        if not isinstance(message, str) or not message.strip():
            raise SotError("a commit needs a message")
        with self._lock:
            if not self.diff()["files"]:
                raise SotError("nothing to commit (patch first)")
            for rel in self.list():
                if rel.startswith("devices/"):
                    from_doc(loads((self.path / rel).read_text(), ""), Path(rel).stem)
            return self._commit_all(message)

    def log(self, n: int = 20) -> list[dict]:
        """The last ``n`` commits, newest first."""
        out = []
        for c in self.repo.iter_commits("HEAD", max_count=max(1, int(n))):
            out.append({
                "revision": c.hexsha,
                "message": c.message.rstrip("\n"),
                "author": f"{c.author.name} <{c.author.email}>",
                "committer": f"{c.committer.name} <{c.committer.email}>",
                "time": c.committed_datetime.isoformat(),
                "files": sorted(c.stats.files) if c.parents else sorted(self._tree_files(c.hexsha)),
            })
        return out

    def revert(self, revision: str, message: str | None = None) -> str:
        """A new commit undoing ``revision``; returns it. Refused when the working tree has
        uncommitted changes, or when the revert does not apply cleanly (nothing changes then)."""
        with self._lock:
            if self.diff()["files"]:
                raise SotError("uncommitted changes: commit or discard them before a revert")
            try:
                c = self.repo.commit(revision)
                parents = c.parents
            except _BAD_REVISION:
                raise SotError(f"unknown revision {revision!r}") from None
            if not parents:
                raise SotError("cannot revert the initial commit")
            if not self.repo.is_ancestor(c, self.repo.head.commit):
                raise SotError(f"{revision} is not in the history of HEAD")
            with self._guard(restore=True):
                try:
                    self.repo.git.revert("--no-commit", c.hexsha)
                except git.GitCommandError as e:
                    raise SotError(f"revert of {c.hexsha[:12]} does not apply cleanly: {e.stderr.strip()}") from None
                if not self.repo.index.diff("HEAD"):
                    raise SotError(f"nothing to revert: the changes of {c.hexsha[:12]} are already undone at HEAD")
                for rel in self.list():
                    if rel.startswith("devices/"):
                        from_doc(loads((self.path / rel).read_text(), "/" + rel), Path(rel).stem)
                first = c.message.splitlines()[0] if c.message else ""
                return self._commit(message or f'Revert "{first}"\n\nThis reverts commit {c.hexsha}.\n')

    # -- internals -------------------------------------------------------------------------

    def _check_base(self, base_revision: Any) -> str:
        """HEAD (full sha) if ``base_revision`` names it (full or >= 7 hex digits), else Conflict."""
        actual = self.head()
        if not isinstance(base_revision, str) or len(base_revision) < 7 or not actual.startswith(base_revision.lower()):
            raise Conflict(str(base_revision), actual)
        return actual

    def _rel(self, path: str) -> str:
        if not isinstance(path, str) or not path:
            raise SotPathError("a path is needed (e.g. devices/r1.json)")
        p = Path(path)
        if p.is_absolute() or ".." in p.parts or len(p.parts) != 2 or p.parts[0] not in _DIRS or p.suffix != ".json":
            raise SotPathError(f"{path!r}: a file is devices/<router>.json or services/<name>.json")
        _check_name(p.stem)
        return p.as_posix()

    def _blob(self, rel: str, revision: str) -> str | None:
        try:
            return (self.repo.commit(revision).tree / rel).data_stream.read().decode()
        except KeyError:
            return None
        except _BAD_REVISION:
            raise SotError(f"unknown revision {revision!r}") from None

    def _tree_files(self, revision: str) -> list[str]:
        tree = self.repo.commit(revision).tree
        return [b.path for b in tree.traverse() if b.type == "blob" and b.path.endswith(".json")
                and b.path.split("/")[0] in _DIRS]

    def _commit_all(self, message: str) -> str:
        with self._guard(restore=False):
            self.repo.git.add("-A", "--", ".")
            return self._commit(message)

    def _commit(self, message: str) -> str:
        commit = self.repo.index.commit(message, author=self.actor, committer=self.actor, skip_hooks=True)
        return commit.hexsha

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
            raise


def _check_name(name: str) -> None:
    if (not isinstance(name, str) or not name or name.startswith(".") or "/" in name or "\\" in name
            or any(ch < " " or ch == "\x7f" for ch in name)):
        raise SotPathError(f"invalid file name {name!r}")
    if len(name.encode()) > _NAME_MAX:
        raise SotPathError(f"file name too long ({len(name.encode())} bytes, at most {_NAME_MAX}): {name[:40]!r}...")


def _atomic_write(f: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=f.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, f)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
