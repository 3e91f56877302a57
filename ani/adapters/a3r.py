"""A3-R: a git-backed source of truth of the routers' desired state, applied by a reconciler.

The lab has ONE source of truth per level: the bare git repository ``<lab dir>/sot-a3r.git``
(A4: ``sot-a4.git``), made (from the skeleton ``sot/``) by the first adapter that opens on the
lab, from what every router runs then (:func:`ani.device.apply.read`: FRR running config +
nftables), so HEAD equals what runs. Each adapter is one *writer* with its own git worktree of it,
``<lab dir>/sot-a3r-<hex>`` (its files and its index: :meth:`ani.sot.repo.SotRepo.writer`), so
writers on one lab (adapters in one process, ``ani mcp serve`` processes) never see nor commit
each other's uncommitted patches. A commit advances HEAD (the branch ``main``) with a
compare-and-swap. When another writer committed since the changes were based on HEAD, changes
to other files are merged: the commit is rebased onto the new HEAD, re-validated (and, at A4,
the services compiled again) and lands holding only its own changes; only when the other
writer's commits changed a file these changes touch too is it refused with ``conflict`` naming
both revisions and the files (``data.expected`` the base, ``data.actual`` HEAD, ``data.paths``),
and the changes stay in the worktree (``sot_discard`` and redo them on the new HEAD). A writer's
uncommitted changes follow HEAD the same way at each call. :meth:`close` removes the writer's worktree,
and the repository with the last writer, unless ``keep_repo`` (in any case ``Lab.down`` removes
the lab dir). The agent edits ``devices/<router>.json`` with JSON Patch and
commits; each commit (and revert) is reconciled (:class:`ani.sot.reconcile.Reconciler`: only
routers with drift get anything; at most ``max_tries`` applies; non-convergence reported).

Tools (``data`` keys in brackets):

- ``get_topology(devices=[])`` (inherited)
- ``sot_list()`` [files, revision, uncommitted] read-only
- ``sot_read(path, revision=None)`` [path, revision (None: working tree), head, document] read-only
- ``sot_patch(path, patch, base_revision)`` — the working tree only [path, base_revision, changed]
- ``sot_diff()`` [base_revision, files [{path, status, patch}], text] read-only
- ``sot_discard()`` — drop uncommitted changes [revision]
- ``sot_commit(message)`` — commit, then reconcile [revision, reconcile (ReconcileStatus)]
- ``sot_log(n=10)`` [log [{revision, message, author, committer, time, files}]] read-only
- ``sot_revert(revision)`` — a commit undoing ``revision``, then reconcile [revision, reverted, reconcile]
- ``drift(devices=[])`` [revision, drift {router: [items]}, lines {router: [...]}, checked] read-only
- ``reconcile_status()`` [reconcile] read-only
- ``reconcile()`` — reconcile HEAD now (reverts out-of-band changes) [reconcile]

Errors: a ``base_revision`` after which the patched file changed -> ``conflict`` (data
``expected``, ``actual``, ``paths``); one that is not a sha -> ``invalid_arguments``; a patch that
does not apply or a document that is invalid -> ``invalid_intent`` (data ``index``, ``op``,
``path`` / ``pointer``; the message names the operation and, e.g., the missing parent); nothing
is changed then. A revision that is not a commit's name (``HEAD:path``, ``a..b``, ``-x``,
``@{1}``), a commit message over 16 KiB or with a control character -> ``invalid_arguments``; a
patch whose document would pass 1 MiB (checked after each operation) -> ``invalid_intent``
(bounds: :mod:`ani.sot.bounds`). No such file or revision -> ``not_found``. Nothing to commit, uncommitted
changes before a revert, a revert whose changes are already undone, a revert of the initial
commit or of a merge commit (two parents: which side to undo is not defined), a revert that does
not apply cleanly (later commits changed the same lines; the message names them) ->
``invalid_arguments`` (retrying cannot help); another writer changed the same file since the
changes' base, or moved HEAD during a revert -> ``conflict`` (retriable). A commit whose reconcile did not converge stays committed (the history is the
record) and the result is ``ok=False``: ``non_convergent`` (data.reconcile lists the drift left
and the lines involved), ``rolled_back`` (the failing router was put back and no other router
was changed), ``rollback_failed`` (putting it back failed), ``command_failed`` (some routers were
changed, another failed; or the device layer refused, e.g. the router runs lines the model
cannot express: applying would delete them), ``device_unreachable`` (a router could not be read;
retriable), ``invalid_intent`` (the desired state at HEAD could not be built). Fix with
``sot_patch`` + ``sot_commit``, or ``sot_revert``.

``changed`` is exact: True iff the reconcile sent a change that the device layer verified (its
``applied`` routers), or a failed apply may have left one changed.

Concurrency: the adapter's calls run one at a time (they share one worktree); ``get_topology``
runs at any time. A reconcile (of ``sot_commit``, ``sot_revert``, ``reconcile``) holds a lock
every writer of the lab's repository shares, so two writers never apply at once. A call waits
for both at most ``busy_timeout_s`` from its start, then answers ``timeout`` (retriable) naming
what it waited for; a commit whose reconcile could not start stays committed and says so
(``reconcile`` applies it).

Options: ``max_tries`` (int, 2: applies per reconcile), ``keep_repo`` (bool, False: keep the
worktree and the repository after :meth:`close`; they still go with the lab dir),
``busy_timeout_s`` (float, 120). Unknown keys or wrong types: ConfigError.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any, ClassVar

from ani.adapters.a3r_args import (
    WORKFLOW,
    A3ROptions,
    CommitArgs,
    DriftArgs,
    LogArgs,
    PatchArgs,
    ReadArgs,
    RevertArgs,
)
from ani.adapters.base import BaseAdapter, NoArgs, tool
from ani.adapters.error_map import error_result
from ani.adapters.options import Options, parse_options
from ani.device import apply as device_apply
from ani.device.model import DeviceConfig
from ani.errors import AdapterError, AniError, ErrorCode, HostFault, LabGone
from ani.lab.protocol import Lab, LabFiles, provides, require
from ani.protocol import Level, ToolResult
from ani.sot.errors import SotBusy, SotError
from ani.sot.format import dumps
from ani.sot.reconcile import Reconciler, ReconcileStatus
from ani.sot.repo import SotRepo

__all__ = ["A3RAdapter"]


class A3RAdapter(BaseAdapter):
    """Level A3-R (see the module doc).

    Args:
        lab: a running :class:`ani.lab.Lab` (uses ``dir``, ``topology``, and the lab's routers
            through :mod:`ani.device.apply`).
        trajectory: where calls are logged.
        options: ``max_tries``, ``keep_repo``.

    Attributes (after :meth:`open`):
        repo: the :class:`SotRepo`.
        reconciler: the :class:`Reconciler` (made by :meth:`_make_reconciler`).

    Hooks a subclass (A4) overrides:

    - :meth:`_make_reconciler` -> Reconciler (its desired state and applier);
    - :meth:`_initial_devices` -> ``{router: DeviceConfig}`` the repository starts from;
    - :meth:`_patch` / :meth:`_commit` / :meth:`_revert`: the repository operations (e.g. to
      validate service files); raise a SotError to refuse (nothing changed);
    - :meth:`_check_tree`: validates the tree a commit records, after any rebase onto another
      writer's commits (raise a SotError to refuse);
    - :meth:`_reconcile_failure` -> ToolResult for a reconcile that did not converge;
    - class attribute ``options_model``: the options (an :class:`ani.adapters.options.Options`).

    Raises ConfigError for a bad option; at :meth:`open`, ApplyError / LabError if a router
    cannot be read.
    """

    level: ClassVar[Level] = Level.A3R
    needs: ClassVar[tuple[type, ...] | None] = ()  # its applier: ani.device.apply (vtysh, frr-reload)
    options_model: ClassVar[type[Options]] = A3ROptions
    max_tries: int
    keep_repo: bool
    busy_timeout_s: float

    def __init__(self, lab: Lab, *, trajectory: Any = None, options: dict | None = None) -> None:
        super().__init__(lab, trajectory=trajectory, options=options)
        self.settings = parse_options(self.options_model, self.options, str(self.level))
        self.__dict__.update(self.settings)  # each option is an attribute: self.max_tries, ...
        self.repo: SotRepo | None = None
        self.reconciler: Reconciler | None = None
        self.repo_path: Path | None = None

    # -- lifecycle -------------------------------------------------------------------------

    def open(self) -> None:
        """Join the lab's source of truth as a new writer (creating it from what the routers
        run now if no other writer has). Idempotent. After :meth:`close` it joins again: a NEW
        repository when no other writer kept the old one (its history is not carried over)."""
        if self.repo is None:
            lab_dir = Path(require(self.lab, LabFiles, f"the {self.level} adapter's source of truth").dir)
            path = lab_dir / f"sot-{self.level}-{secrets.token_hex(3)}"
            self.repo = SotRepo.writer(self.shared_path, path, self._initial_devices)
            self.repo_path = path
            self.reconciler = self._make_reconciler()
        super().open()

    @property
    def shared_path(self) -> Path:
        """The lab's source of truth of this level: ``<lab dir>/sot-<level>.git`` (bare)."""
        return Path(require(self.lab, LabFiles, f"the {self.level} adapter's source of truth").dir) \
            / f"sot-{self.level}.git"

    def close(self) -> None:
        """Leave the source of truth: remove this writer's worktree (and the repository when no
        other writer is left) unless ``keep_repo``. Waits (at most ``CLOSE_WAIT_S``) for calls
        in flight; a call still running then keeps the worktree (it goes with the lab dir).
        Idempotent."""
        with self._drain() as busy:
            if self.repo is not None:
                # a call still running uses the worktree: leave it (it goes with the lab dir)
                self.repo.leave(keep=self.keep_repo or bool(busy))
                self.repo = None
                self.reconciler = None
        super().close()  # BaseAdapter._closed: a later call is refused, _repo() too

    def call_bound_s(self, name: str, args: Any) -> float:
        return self.busy_timeout_s

    # -- hooks -----------------------------------------------------------------------------

    def _initial_devices(self) -> dict[str, DeviceConfig]:
        return device_apply.read_many(self.lab, list(self.devices))

    def _make_reconciler(self) -> Reconciler:
        assert self.repo is not None
        return Reconciler(self.lab, self.repo, max_tries=self.max_tries)

    def _patch(self, path: str, ops: list[dict[str, Any]], base_revision: str) -> dict:
        return self._repo().patch(path, ops, base_revision)

    def _commit(self, message: str) -> str:
        return self._repo().commit(message, check=self._check_tree)

    def _check_tree(self) -> None:
        """Runs on the working tree a commit is about to record (after a rebase onto another
        writer's commits too); raises a SotError to refuse. A3-R: nothing beyond the device files'
        own validation."""

    def _revert(self, revision: str) -> str:
        return self._repo().revert(revision)

    def _reconcile_failure(self, st: ReconcileStatus, text: str, data: dict) -> ToolResult:
        changed = bool(st.applied) or (st.status == "failed" and st.detail.get("restored") is False)
        retriable = False
        if st.status == "non-convergent":
            code = ErrorCode.NON_CONVERGENT
        elif st.detail.get("timed_out") and st.detail.get("restored") is not False:
            code, retriable = ErrorCode.TIMEOUT, True  # a router's read ran out of its bound
        elif st.phase == "read":
            code, retriable = ErrorCode.DEVICE_UNREACHABLE, True
        elif st.phase == "desired":
            code = ErrorCode.INVALID_INTENT
        elif st.detail.get("restored") is False or st.detail.get("restored_verified") is False:
            code = ErrorCode.ROLLBACK_FAILED
        elif st.applied or st.phase == "refused":
            code = ErrorCode.COMMAND_FAILED
        else:
            code = ErrorCode.ROLLED_BACK
        return ToolResult.failure(code, text, data=data, changed=changed, retriable=retriable,
                                  text=f"error [{code.value}]: {text}")

    # -- helpers ---------------------------------------------------------------------------

    def _dispatch(self, name: str, arguments: Any) -> ToolResult:
        """As :meth:`BaseAdapter._dispatch`; but once the repository's folder is gone (the lab
        was downed under the adapter: the repository lives in the lab's dir) every tool answers
        ``lab <id> is not running`` (device_unreachable) instead of a git error."""
        if self.repo is not None and self.repo_path is not None and not self.repo_path.exists():
            lab_dir = Path(self.lab.dir) if provides(self.lab, LabFiles) else self.repo_path.parent
            why = (str(LabGone(getattr(self.lab, "id", "?"), f"its source of truth {self.repo_path} went with it"))
                   if not lab_dir.exists() else f"the source of truth {self.repo_path} is gone")
            return ToolResult.failure(ErrorCode.DEVICE_UNREACHABLE, why, retriable=False)
        return super()._dispatch(name, arguments)

    def _repo(self) -> SotRepo:
        """The repository; opened on first use. Raises AdapterError after :meth:`close` (a tool
        would otherwise start a fresh repository and silently lose the history)."""
        if self.repo is None:
            if self._closed:
                raise AdapterError(f"the {self.level} adapter is closed: its source of truth is gone; "
                                   "open() it again to start a new one from what the routers run")
            self.open()
        assert self.repo is not None
        return self.repo

    def _rec(self) -> Reconciler:
        self._repo()
        assert self.reconciler is not None
        return self.reconciler

    def _reconciled(self, what: str, data: dict) -> ToolResult:
        """Reconcile HEAD now; the result of ``what`` (a commit / revert / plain reconcile).
        Holds the lock every writer of the lab's repository shares (see the module doc)."""
        left = self.remaining_s()
        try:
            with self._repo().exclusive(self.busy_timeout_s if left is None else max(0.0, left),
                                        f"another writer's reconcile of lab {getattr(self.lab, 'id', '?')}"):
                st = self._rec().reconcile()
        except SotBusy as exc:
            after = ("; it stays committed: call reconcile to apply it"
                     if what.startswith(("committed", "reverted")) else "")
            return ToolResult.failure(ErrorCode.TIMEOUT, f"{what}; not reconciled: {exc}{after}", retriable=True,
                                      data={**data, "reconciled": False})
        data = {**data, "reconcile": st.model_dump()}
        text = f"{what}; reconcile: {st.summary()}"
        if st.status == "converged":
            return ToolResult.success(text, data, changed=bool(st.applied))
        if st.drift:
            text += "\nstill different (running -> desired):\n" + "\n".join(
                f"  {r}: {ln}" for r, lines in st.lines.items() for ln in lines[:20])
        if what.startswith(("committed", "reverted")):
            text += "\nthe commit stays in the history: fix it with sot_patch + sot_commit, or sot_revert"
        return self._reconcile_failure(st, text, data)

    # -- tools -----------------------------------------------------------------------------

    @tool(args=NoArgs, read_only=True,
          description="List the files of the source of truth (devices/<router>.json, services/*.json), "
          "the revision of HEAD and the files with uncommitted changes. " + WORKFLOW)
    def sot_list(self, args: NoArgs) -> ToolResult:
        repo = self._repo()
        files = repo.list()
        pending = [f["path"] for f in repo.diff()["files"]]
        text = f"HEAD {repo.head()}\n" + "\n".join(files)
        if pending:
            text += "\nuncommitted changes: " + ", ".join(pending)
        return ToolResult.success(text, {"files": files, "revision": repo.head(), "uncommitted": pending})

    @tool(args=ReadArgs, read_only=True,
          description="Read one desired-state file (JSON) from the working tree, or as committed at "
          "`revision`. Also reports HEAD, the base_revision for sot_patch.")
    def sot_read(self, args: ReadArgs) -> ToolResult:
        repo = self._repo()
        try:
            doc = repo.read(args.path, args.revision)
        except SotError as exc:
            return error_result(exc)
        head = repo.head()
        where = f"at {args.revision}" if args.revision else "working tree"
        return ToolResult.success(f"{args.path} ({where}; HEAD {head})\n{dumps(doc)}",
                                  {"path": args.path, "revision": args.revision, "head": head, "document": doc})

    @tool(args=PatchArgs,
          description="Edit one desired-state file in the working tree with an RFC 6902 JSON Patch "
          "(atomic: all operations or none; the result is validated; nothing reaches a router until "
          "sot_commit). Refused with `conflict` if the file changed since base_revision, `invalid_intent` "
          "if an operation fails or the result is invalid (the message names the operation and path).")
    def sot_patch(self, args: PatchArgs) -> ToolResult:
        try:
            res = self._patch(args.path, args.patch, args.base_revision)
        except SotError as exc:
            return error_result(exc)
        text = f"{res['path']}: {'changed' if res['changed'] else 'unchanged (already so)'} in the working tree " \
               f"(base {res['base_revision'][:12]}); sot_diff to review, sot_commit to apply"
        return ToolResult.success(text, dict(res))

    @tool(args=NoArgs, read_only=True,
          description="The uncommitted changes of the working tree against HEAD: per file its status and "
          "the JSON Patch from HEAD, plus a unified diff.")
    def sot_diff(self, args: NoArgs) -> ToolResult:
        d = self._repo().diff()
        text = d["text"] or f"no uncommitted changes (HEAD {d['base_revision']})"
        return ToolResult.success(text, d)

    @tool(args=NoArgs, description="Drop every uncommitted change (the working tree back to HEAD).")
    def sot_discard(self, args: NoArgs) -> ToolResult:
        repo = self._repo()
        repo.discard()
        return ToolResult.success(f"working tree reset to HEAD {repo.head()}", {"revision": repo.head()})

    @tool(args=CommitArgs, destructive=True,
          description="Commit the working tree's changes, then reconcile: the routers are changed to "
          "match the new HEAD (only routers whose desired state differs from what they run). The result "
          "gives the revision and the reconcile status (converged / non-convergent / failed, the routers "
          "changed, any drift left with the lines involved).")
    def sot_commit(self, args: CommitArgs) -> ToolResult:
        try:
            rev = self._commit(args.message)
        except SotError as exc:
            return error_result(exc)
        return self._reconciled(f"committed {rev}", {"revision": rev})

    @tool(args=LogArgs, read_only=True, description="The history of the source of truth, newest first.")
    def sot_log(self, args: LogArgs) -> ToolResult:
        log = self._repo().log(args.n)
        text = "\n".join(f"{e['revision'][:12]} {e['time']} {e['message'].splitlines()[0] if e['message'] else ''}"
                         f" [{', '.join(e['files'])}]" for e in log)
        return ToolResult.success(text, {"log": log})

    @tool(args=RevertArgs, destructive=True,
          description="Add a commit undoing an earlier commit, then reconcile (as sot_commit). Refused "
          "with uncommitted changes (sot_discard or commit them first).")
    def sot_revert(self, args: RevertArgs) -> ToolResult:
        try:
            rev = self._revert(args.revision)
        except SotError as exc:
            return error_result(exc)
        return self._reconciled(f"reverted {args.revision} as {rev}", {"revision": rev, "reverted": args.revision})

    @tool(args=DriftArgs, read_only=True,
          description="Desired (HEAD) vs what the routers run now, per router, on the normalised device "
          "model (FRR's own reordering and defaults are not drift): each difference with its JSON "
          "Pointer, kind (changed / missing = only desired / unexpected = only running) and both values, "
          "and the configuration lines involved. Empty when the routers match HEAD.")
    def drift(self, args: DriftArgs) -> ToolResult:
        try:
            items, lines, names = self._rec().drift_report(args.devices or None)
        except SotError as exc:
            return error_result(exc)
        except HostFault:
            raise  # the host failed (a program is missing): not a failure of this change
        except (AniError, ValueError) as exc:
            return error_result(exc)
        drift = {r: [i.model_dump() for i in v] for r, v in items.items()}
        rev = self._repo().head()
        if not drift:
            text = f"no drift: {', '.join(names) or 'no router'} match(es) HEAD {rev[:12]}"
        else:
            out = [f"drift against HEAD {rev[:12]}:"]
            for r, its in drift.items():
                for i in its:
                    out.append(f"  {r} {i['pointer']} {i['kind']}: desired {i['desired']!r}, actual {i['actual']!r}")
                out.extend(f"  {r}: {ln}" for ln in lines[r][:20])
            text = "\n".join(out)
        return ToolResult.success(text, {"revision": rev, "drift": drift, "lines": lines, "checked": names})

    @tool(args=NoArgs, read_only=True, description="The status of the last reconcile (pending before the first).")
    def reconcile_status(self, args: NoArgs) -> ToolResult:
        st = self._rec().status()
        return ToolResult.success(st.summary(), {"reconcile": st.model_dump()})

    @tool(args=NoArgs, destructive=True,
          description="Reconcile now: change the routers that drifted from HEAD back to it (e.g. after an "
          "out-of-band change); routers without drift get nothing.")
    def reconcile(self, args: NoArgs) -> ToolResult:
        return self._reconciled(f"reconciled HEAD {self._repo().head()[:12]}", {})
