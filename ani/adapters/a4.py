"""A4: service intents kept in the git source of truth and reconciled through A3-T transactions
(NMAA level A4; issue 4, section 4).

The source of truth is A3-R's repository (``devices/<router>.json``: each router's own desired
state, the brownfield at the start) plus ``services/<name>.json``: each file ONE service change
with a creating action (``ani.sot.services``; catalogue: ``docs/intents.md``). The desired
state is the device files with every service file compiled on top, in sorted path order
(:func:`ani.sot.services.desired_with_services`): declarative, so deleting a service file, or
reverting the commit that added it, removes the service from the routers at the next reconcile.

Reconciling (on ``sot_commit``, ``sot_revert``, ``reconcile``) is A3-R's
:class:`ani.sot.reconcile.Reconciler` with this level's desired state and a *transaction
applier* (:meth:`A4Adapter._transaction_applier`): the routers with drift get their desired
config as ONE A3-T transaction (:func:`ani.intents.transaction.run_transaction`: lock, edit,
validate, confirmed commit, active validation, confirm, or roll back all and verify). The
active validation checks are :func:`ani.intents.checks.active_checks` of the services the
reconcile adds, changes or removes (found by comparing the service inventories of the routers
now and of the desired state), so the service's own checks and the baseline invariants of
what it touches run before anything is confirmed.

Tools (``data`` keys as in A3-R / A3-T):

- ``get_topology``; every A3-R tool: ``sot_list``, ``sot_read``, ``sot_patch``, ``sot_diff``,
  ``sot_commit``, ``sot_log``, ``sot_revert``, ``drift``, ``reconcile_status``, ``reconcile``;
- the read-only A3-T tools (:class:`ani.adapters.service_tools.ServiceReadTools`):
  ``list_service_types``, ``get_service_schema``, ``list_services``, ``get_service``, ``plan``,
  ``get_state`` - working on the desired state at HEAD (``plan`` shows what a change would do
  on top of it; write it as a service file to make it happen). There is no ``apply``.
- ``sot_delete(path, base_revision)``: delete a service file in the working tree (commit to
  remove the service).

Service validation: ``sot_patch`` of a ``services/`` file, ``sot_delete`` and ``sot_commit``
compile every service file of the working tree on the device files; a refusal is
``invalid_intent`` naming the file and the field (``data.errors`` [{code, path, file, field,
message}]) and nothing changes (the patched / deleted file is put back; nothing is committed).
Values the pools choose for fields a service file leaves out (a site's ``prefix`` and
``gateway``, a prefix-list entry's ``seq``) are written into the file by ``sot_patch`` (``data.pinned``), so
the service keeps them whatever other services come and go.

A commit whose transaction fails (a router refuses its part, a check of the active validation
fails) reconciles to ``failed``: every router was rolled back (verified), the commit stays in
the history (``sot_revert`` it, or fix it and commit again). ``sot_commit`` / ``sot_revert`` /
``reconcile`` then answer ``rolled_back`` (``rollback_failed`` when a router could not be
verified back); ``data.reconcile.detail.transaction`` is the transaction's result.

Options: A3-R's, plus ``confirm_timeout_s`` (60), ``site_network`` (None), ``site_prefixlen``
(24), ``seq_limit`` (None), ``check_bound_s`` (20) and the change-set bounds ``max_changes``
(200), ``max_router_lines`` (1000), ``plan_bound_s`` (60), ``apply_bound_s`` (300, the
transaction) as in A3-T.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ani.adapters.a3r import A3RAdapter
from ani.adapters.a3r_args import CommitArgs, PatchArgs, RevertArgs
from ani.adapters.a4_args import SERVICES_WORKFLOW, A4Options, SotDeleteArgs
from ani.adapters.base import tool
from ani.adapters.error_map import error_result
from ani.adapters.options import Options
from ani.adapters.service_tools import ServiceReadTools
from ani.errors import AniError, AniTimeout, ErrorCode, HostFault
from ani.protocol import Level, ToolResult

from ani.lab.protocol import NetconfCapable

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["A4Adapter", "service_delta", "service_failure"]


def _desc(name: str) -> str:
    """The description of A3-R's tool ``name``."""
    return getattr(A3RAdapter, name).__ani_tool__["description"]


def service_delta(before: dict[str, Any], after: dict[str, Any]) -> list[Any]:
    """The service changes that turn ``before`` into ``after`` (``{router: DeviceConfig}``),
    as far as the service inventory (``ani.intents.Inventory``) sees them: the creating change
    of each service that is new or different in ``after`` (its spec), then a ``remove`` of each
    service of ``before`` that is gone. In id order; for the choice of active-validation checks."""
    from ani.intents.inventory import Inventory
    from ani.intents.models import parse_change

    inv_b, inv_a = Inventory(before), Inventory(after)
    old = {s.id: s for s in inv_b.list_services()}
    new = {s.id: s for s in inv_a.list_services()}
    out: list[Any] = [s.spec for i, s in sorted(new.items()) if i not in old or old[i].spec != s.spec]
    for i, s in sorted(old.items()):
        if i in new:
            continue
        try:
            out.append(parse_change({**s.spec.model_dump(mode="json", exclude_none=True), "action": "remove"}))
        except ValueError:  # a type without a remove of the same fields: no checks of its own
            continue
    return out


class A4Adapter(ServiceReadTools, A3RAdapter):
    """Service files in the git source of truth, reconciled through transactions (module doc).

    Hooks of :class:`A3RAdapter` used: ``_make_reconciler`` (desired state with services,
    transaction applier), ``self.repo``, ``self.reconciler``; of ``ServiceReadTools``:
    ``_service_configs`` (the desired state at HEAD) and ``_service_pools``.
    """

    level: ClassVar[Level] = Level.A4
    needs: ClassVar[tuple[type, ...] | None] = (NetconfCapable,)  # its applier: an A3-T transaction
    options_model: ClassVar[type[Options]] = A4Options

    def __init__(self, lab: Lab, *, trajectory: Any = None, options: dict | None = None) -> None:
        super().__init__(lab, trajectory=trajectory, options=options)  # options -> attributes
        self._service_errors: list[Any] = []  # of the last refused patch / delete / commit / revert

    # -- the desired state and the applier -------------------------------------------------------

    def _desired(self, repo: Any) -> dict[str, Any]:
        """The desired state at HEAD: device files + every service file (``ani.sot.services``)."""
        from ani.sot.services import desired_with_services

        return desired_with_services(repo, pools=self._service_pools)

    def _service_configs(self) -> dict[str, Any]:
        """What the read-only service tools work on: the desired state at HEAD."""
        return self._desired(self._repo())

    def _make_reconciler(self) -> Any:
        from ani.sot.reconcile import Reconciler

        assert self.repo is not None
        return Reconciler(self.lab, self.repo, desired=self._desired, applier=self._transaction_applier,
                          max_tries=self.max_tries)

    def _transaction_applier(self, lab: Lab, targets: dict[str, Any]) -> Any:
        """The Reconciler's applier: ``targets`` (the routers with drift, their desired config)
        as ONE transaction, active validation = :func:`ani.intents.checks.active_checks` of
        :func:`service_delta` (the routers now -> desired). ``ApplierOutcome``: ``phase`` the
        transaction's failed phase (or ``read``), ``applied`` the routers when it committed and
        confirmed (none after a rollback), ``detail``: ``transaction`` (its result),
        ``services`` (ids added / changed / removed), ``checks`` (names), ``restored_verified``
        / ``restored`` (after a failure), ``committed`` (routers that had committed before the
        rollback)."""
        from ani.device.apply import read_many
        from ani.intents.checks import active_checks
        from ani.intents.compile import CompileResult
        from ani.intents.transaction import run_transaction
        from ani.sot.drift import normalise
        from ani.sot.reconcile import ApplierOutcome

        intended = {r: normalise(c) for r, c in targets.items()}
        try:
            before = read_many(lab, list(lab.topology.routers))
            changes = service_delta(before, {**before, **intended})
            checks = active_checks(changes, before, CompileResult(configs=intended, changes=changes), lab.topology)
        except HostFault:
            raise  # the host failed (a program is missing): not a failure of this change
        except (AniError, ValueError) as exc:
            return ApplierOutcome(ok=False, error=f"cannot prepare the transaction: {exc}", phase="read",
                                  detail={"timed_out": True} if isinstance(exc, AniTimeout) else {})
        services = [c.service_id() if c.action != "remove" else f"-{c.service_id()}" for c in changes]
        tx = run_transaction(lab, intended, checks=checks, confirm_timeout_s=self.confirm_timeout_s,
                             check_bound_s=self.check_bound_s, bound_s=self.apply_bound_s)
        detail: dict[str, Any] = {"transaction": tx.to_dict(), "services": services, "checks": [c.name for c in checks]}
        if tx.ok:
            return ApplierOutcome(ok=True, applied=sorted(intended), detail=detail)
        committed = [r for r, d in tx.routers.items() if "commit" in d.steps]
        detail.update(restored_verified=tx.restored_verified, restored=tx.restored_verified, committed=committed)
        if tx.restored_verified:
            what = f"rolled back, every router ({', '.join(sorted(intended))}) verified back to its prior config"
        else:
            bad = [r for r, d in tx.routers.items() if not d.restored]
            what = f"rollback could not be verified on {', '.join(bad)}"
        return ApplierOutcome(ok=False, applied=[], phase=tx.phase,
                              error=f"transaction failed in phase {tx.phase}: {tx.error}; {what}", detail=detail)

    # -- service validation (A3-R's repository hooks) ---------------------------------------------

    def _refuse(self, errors: list[Any]) -> Any:
        """Remember ``errors`` (ServiceFileErrors) for the tool's result and return the first to raise."""
        self._service_errors = list(errors)
        return errors[0]

    def _patch(self, path: str, ops: list[dict[str, Any]], base_revision: str) -> dict:
        """A3-R's patch; a ``services/`` file is then compiled with every other service file of
        the working tree (refused: the file is put back, ServiceFileError raised) and the values
        the pools chose for fields it leaves out are written into it (``pinned``)."""
        from ani.sot.services import check_services, compile_repo

        repo = self._repo()
        rel = repo._rel(path)  # SotPathError for a bad name; "./services/x.json" is services/x.json
        if not rel.startswith("services/"):
            return super()._patch(path, ops, base_revision)
        with repo._lock:
            f = repo.path / rel
            old = f.read_text() if f.is_file() else None
            res = super()._patch(path, ops, base_revision)  # Conflict / PatchError: nothing changed
            errors = check_services(repo, None, pools=self._service_pools)
            if errors:
                self._restore(rel, old)
                raise self._refuse(errors)
            pins = compile_repo(repo, None, pools=self._service_pools).pins.get(rel)
            if pins:
                repo.patch(rel, [{"op": "add", "path": f"/{k}", "value": v} for k, v in pins.items()], res["base_revision"])
                res = {**res, "changed": True, "pinned": pins}
            return res

    def _restore(self, rel: str, text: str | None) -> None:
        f = self._repo().path / rel
        if text is None:
            f.unlink(missing_ok=True)
        else:
            f.write_text(text)

    def _check_tree(self) -> None:
        """A commit is refused (nothing committed) unless every service file of the working tree
        compiles on its device files: run by the repository on the tree it is about to record,
        after any rebase onto another writer's commits (so two writers' services are compiled
        together)."""
        from ani.sot.services import check_services

        errors = check_services(self._repo(), None, pools=self._service_pools)
        if errors:
            raise self._refuse(errors)

    def _revert(self, revision: str) -> str:
        """A3-R's revert, refused (nothing committed, the tree as before) when the services of
        the reverted tree do not compile (e.g. reverting the route-map a later peering uses)."""
        from ani.sot.services import check_services

        repo = self._repo()

        def services_compile() -> None:
            errors = check_services(repo, None, pools=self._service_pools)
            if errors:
                raise self._refuse(errors)

        return repo.revert(revision, check=services_compile)

    # -- tools -------------------------------------------------------------------------------------

    def _service_result(self, res: ToolResult, what: str) -> ToolResult:
        """``res``, or the service refusal behind it (``invalid_intent`` / ``resource_exhausted``
        with ``data.errors`` naming file and field)."""
        errors, self._service_errors = self._service_errors, []
        if res.ok or not errors:
            return res
        return service_failure(errors, what)

    @tool(args=PatchArgs, description=_desc("sot_patch") + " " + SERVICES_WORKFLOW
          + " A service file is validated with all the others (refused: invalid_intent naming file and field); "
          "values the pools allocate for fields it leaves out are written into it (data.pinned).")
    def sot_patch(self, args: PatchArgs) -> ToolResult:
        self._service_errors = []
        return self._service_result(super().sot_patch(args), "patch")

    @tool(args=CommitArgs, destructive=True, description=_desc("sot_commit")
          + " At A4 the routers are changed as ONE transaction with active validation (the services' own "
          "checks and the baseline invariants of what they touch) and rolled back if anything fails "
          "(rolled_back). Refused (invalid_intent, nothing committed) if a service file does not validate.")
    def sot_commit(self, args: CommitArgs) -> ToolResult:
        self._service_errors = []
        return self._service_result(super().sot_commit(args), "commit")

    @tool(args=RevertArgs, destructive=True, description=_desc("sot_revert")
          + " Reverting the commit that added a service file removes the service from the routers.")
    def sot_revert(self, args: RevertArgs) -> ToolResult:
        self._service_errors = []
        return self._service_result(super().sot_revert(args), "revert")

    @tool(args=SotDeleteArgs,
          description="Delete a service file (services/<name>.json) in the working tree; sot_commit then "
          "removes the service from the routers (declarative desired state). Refused with conflict if HEAD "
          "moved since base_revision, not_found if there is no such file, invalid_intent if another service "
          "needs it (the file stays). Router files (devices/) cannot be deleted.")
    def sot_delete(self, args: SotDeleteArgs) -> ToolResult:
        from ani.sot.errors import SotError
        from ani.sot.services import check_services

        repo = self._repo()

        def others_still_compile() -> None:
            errors = check_services(repo, None, pools=self._service_pools)
            if errors:
                raise self._refuse(errors)

        self._service_errors = []
        try:
            res = repo.delete(args.path, args.base_revision, check=others_still_compile)
        except SotError as exc:
            if self._service_errors:
                return service_failure(self._service_errors, "delete")
            return error_result(exc)
        return ToolResult.success(f"{res['path']}: deleted in the working tree (base {res['base_revision'][:12]}); "
                                  "sot_commit to remove the service from the routers", res)


def service_failure(errors: list[Any], what: str) -> ToolResult:
    """The ToolResult of refused service files (``ServiceFileError``): ``resource_exhausted``
    when the first is an empty pool, else ``invalid_intent``; ``data.errors`` [{code, path,
    file, field, message}]."""
    first = errors[0]
    more = f" (and {len(errors) - 1} more, see data.errors)" if len(errors) > 1 else ""
    code = ErrorCode.RESOURCE_EXHAUSTED if first.intent_code == "pool-exhausted" else ErrorCode.INVALID_INTENT
    return ToolResult.failure(code, f"{what} refused, nothing changed: {first}{more}",
                              data={"errors": [e.to_dict() for e in errors]})
