"""The reconciler of the source of truth (A3-R): make the routers match HEAD, report drift and
non-convergence.

::

    rec = Reconciler(lab, repo)              # repo: an ani.sot.repo.SotRepo
    rec.drift()                              # {router: [DriftItem]}: HEAD vs the routers now
    st = rec.reconcile()                     # ReconcileStatus(status="converged", tries=1, ...)
    rec.status()                             # the last status (``pending`` before the first)

One :meth:`Reconciler.reconcile`:

1. ``desired = desired_fn(repo)`` (default: every ``devices/<router>.json`` at HEAD) and the
   routers' actual configuration (:func:`ani.device.apply.read`); drift per router with
   :func:`ani.sot.drift.drift` (normalised: FRR's reordering and omitted defaults are not drift).
2. No drift anywhere: ``converged`` with ``tries`` 0 and NOTHING sent to any router (no
   frr-reload, no nft, no session flap). This is what makes a repeated reconcile a no-op.
3. Otherwise the applier gets ``{router: desired}`` for the routers WITH drift only; then the
   routers are read again. The drift seen after each apply goes to
   :func:`ani.sot.drift.convergence`: empty -> ``converged``; the same drift as before the first
   apply or after an earlier one, or its inverse (something undid the apply), or drift left
   after ``max_tries`` applies -> ``non-convergent`` with the drift items and the FRR / nft lines
   involved (``lines``); else apply again (so at most ``max_tries`` applies, default 2).
4. An applier failure (``ApplierOutcome.ok`` False) stops with ``failed`` (``error``,
   ``phase``), except phase :data:`PHASE_NOT_REACHED`: the applier ran but the routers did not
   end in the desired state (and were put back); that counts as a try and its drift is judged
   as in 3 (a value FRR refuses or rewrites is ``non-convergent``, not a failure).

The default applier (:func:`device_applier`) calls :func:`ani.device.apply.apply` per router
with the desired configuration in the form FRR prints back (:func:`ani.sot.drift.normalise`: a
peer-group member's own ``remote-as`` left out when the group has one), so apply's own
verification agrees with drift. A4 plugs in a transaction applier (same signature).

Errors: reading a router (:class:`ani.device.apply.ApplyError`, :class:`ani.errors.LabError`)
and an invalid desired state (:class:`ani.sot.errors.SotError`) during :meth:`reconcile` become
status ``failed`` (phase ``read`` / ``desired``); :meth:`drift` raises them.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

import ani.device.apply as device_apply
from ani.device import firewall as fwmod
from ani.device.apply import ApplyError, frr_diff
from ani.device.model import DeviceConfig
from ani.device.render import render
from ani.errors import AniError, AniTimeout, HostFault
from ani.sot.drift import DriftItem, convergence, drift, normalise
from ani.sot.patch import pointer
from ani.sot.repo import SotRepo

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = [
    "PHASE_NOT_REACHED",
    "Applier",
    "ApplierOutcome",
    "DesiredFn",
    "ReconcileStatus",
    "Reconciler",
    "device_applier",
    "head_desired",
    "head_devices",
    "involved_lines",
]

#: ``ApplierOutcome.phase`` of an apply that ran but did not reach the desired state (the
#: routers were put back): a try whose drift the reconciler judges, not a failure
PHASE_NOT_REACHED = "not-reached"


@dataclass
class ApplierOutcome:
    """What an applier did.

    Attributes:
        ok: every router given now runs its desired configuration (as far as the applier checked).
        applied: routers a change was actually sent to (in order).
        error: why not ok (names the router / check), None if ok.
        phase: where it failed (e.g. ``apply``, ``refused``, a transaction phase), or
            :data:`PHASE_NOT_REACHED`; None if ok.
        detail: applier-specific facts (e.g. ``{"reports": {router: diff lines}}`` or a
            transaction result), JSON-serialisable.
    """

    ok: bool
    applied: list[str] = field(default_factory=list)
    error: str | None = None
    phase: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


#: ``(lab, {router: desired DeviceConfig}) -> ApplierOutcome``; only routers with drift are given
Applier = Callable[[Any, dict[str, DeviceConfig]], ApplierOutcome]
#: ``(repo) -> {router: desired DeviceConfig}`` at HEAD
DesiredFn = Callable[[SotRepo], dict[str, DeviceConfig]]


class ReconcileStatus(BaseModel):
    """The outcome of one reconcile.

    Attributes:
        revision: HEAD of the source of truth that was reconciled (full sha; None: pending).
        status: ``converged`` (no drift left), ``non-convergent`` (stopped: the same or the
            inverse drift came back, or drift left after ``max_tries`` applies), ``failed`` (the
            applier or a read failed; see ``error`` / ``phase``), ``pending`` (not reconciled yet).
        tries: applies made (0: nothing was sent to any router).
        applied: routers a change was sent to, sorted.
        drift: drift left, per router (routers without drift omitted), each item as
            ``{"pointer", "kind", "desired", "actual"}``.
        lines: per router with drift, the configuration lines involved, running -> desired
            (``- line`` only running has, ``+ line`` only desired has; FRR lines with their
            block headers as in :func:`ani.device.apply.context_lines`, nft lines as ``nft / ...``).
        reason: why the loop stopped (from :func:`ani.sot.drift.convergence`), or None.
        error: the failure, when ``failed``.
        phase: where it failed (``desired``, ``read``, an applier phase), when ``failed``.
        detail: the last applier's ``detail``.
    """

    revision: str | None = None
    status: Literal["converged", "non-convergent", "failed", "pending"] = "pending"
    tries: int = 0
    applied: list[str] = Field(default_factory=list)
    drift: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    lines: dict[str, list[str]] = Field(default_factory=dict)
    reason: str | None = None
    error: str | None = None
    phase: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)

    def summary(self) -> str:
        """One line for an agent: status, revision, tries, routers, and the first drift items."""
        rev = (self.revision or "-")[:12]
        out = f"{self.status} at {rev}: {self.tries} apply(s)"
        if self.applied:
            out += f", changed {', '.join(self.applied)}"
        else:  # an apply that was rolled back sent something, but left no router changed
            out += ", nothing sent to any router" if self.tries == 0 else ", no router left changed"
        if self.reason and self.status != "converged":
            out += f"; {self.reason}"
        if self.error:
            out += f"; error ({self.phase}): {self.error}"
        return out


def head_devices(repo: SotRepo) -> list[str]:
    """Routers with a ``devices/<router>.json`` at HEAD, sorted."""
    return sorted(Path(p).stem for p in repo._tree_files("HEAD") if p.startswith("devices/"))


def head_desired(repo: SotRepo) -> dict[str, DeviceConfig]:
    """The default desired state: ``{router: repo.desired(router)}`` for every router file at HEAD.
    Raises SotError (DocError) if a file at HEAD is invalid."""
    return {r: repo.desired(r) for r in head_devices(repo)}


def device_applier(lab: Lab, targets: dict[str, DeviceConfig]) -> ApplierOutcome:
    """The default applier: :func:`ani.device.apply.apply` per router, in name order, with the
    desired configuration as FRR prints it back (:func:`ani.sot.drift.normalise`). Stops at the
    first failure (routers before it stay applied: each apply is verified on its own).

    ``phase``: ``refused`` (apply refused before changing anything, e.g. running has lines the
    model cannot express), :data:`PHASE_NOT_REACHED` (the router did not reach the desired
    configuration; apply put the prior one back, verified), ``apply`` (anything else, e.g. the
    restore failed). ``detail``: ``{"diff": {router: apply's diff lines}, "router": failing
    router, "lines": ApplyError.lines, "restored": bool}``."""
    applied: list[str] = []
    diffs: dict[str, list[str]] = {}
    for router in sorted(targets):
        try:  # looked up per call (module attribute): a test may wrap it
            report = device_apply.apply(lab, router, normalise(targets[router]))
        except ApplyError as exc:
            refused = "nothing applied" in str(exc) or "nothing was applied" in str(exc)
            if refused:
                phase = "refused"
            elif exc.restored and "did not reach the intended one" in str(exc):
                phase = PHASE_NOT_REACHED
            else:
                phase = "apply"
            return ApplierOutcome(
                ok=False, applied=applied, error=str(exc), phase=phase,
                detail={"diff": diffs, "router": router, "lines": list(exc.lines), "restored": exc.restored,
                        **({"timed_out": True} if isinstance(exc, AniTimeout) else {})},
            )
        except HostFault:
            raise  # the host failed (a program is missing): not a failure of this change
        except (AniError, ValueError) as exc:
            return ApplierOutcome(ok=False, applied=applied, error=f"{router}: {exc}", phase="apply",
                                  detail={"diff": diffs, "router": router})
        if report.changed:
            applied.append(router)
            diffs[router] = list(report.diff)
    return ApplierOutcome(ok=True, applied=applied, detail={"diff": diffs})


def involved_lines(desired: DeviceConfig, actual: DeviceConfig) -> list[str]:
    """The configuration lines that differ, running (``actual``) -> ``desired``, both in the form
    FRR prints (normalised): ``- line`` / ``+ line`` as :func:`ani.device.apply.frr_diff`, then
    ``- <unmodelled line>`` for lines of ``actual`` the model cannot express, then the nft lines."""
    want, got = normalise(desired), normalise(actual)
    modelled = got.model_copy(update={"unmodelled": []})
    return (frr_diff(render(modelled), render(want.model_copy(update={"unmodelled": []})))
            + [f"- {u}" for u in got.unmodelled if not u.startswith("nft / ")]
            + fwmod.diff(got.firewall, want.firewall))


def _flat(per_router: dict[str, list[DriftItem]]) -> list[DriftItem]:
    """One list for :func:`convergence`: each pointer prefixed by ``/<router>``."""
    out = []
    for r in sorted(per_router):
        for i in per_router[r]:
            out.append(i.model_copy(update={"pointer": pointer(r) + i.pointer}))
    return out


class Reconciler:
    """Applies the desired state of a source-of-truth repository to a lab's routers.

    Args:
        lab: an :class:`ani.lab.Lab` (or anything :func:`ani.device.apply.read` accepts).
        repo: the :class:`SotRepo`.
        desired: ``(repo) -> {router: DeviceConfig}``; default :func:`head_desired`.
        applier: ``(lab, {router: DeviceConfig}) -> ApplierOutcome``; default
            :func:`device_applier`. It receives only routers with drift.
        max_tries: at most this many applies per :meth:`reconcile` (>= 1).
        reader: ``(lab, router) -> DeviceConfig`` of the router now; default
            :func:`ani.device.apply.read`.

    Thread-safe: one reconcile (or drift read) at a time.
    """

    def __init__(self, lab: Lab, repo: SotRepo, *, desired: DesiredFn | None = None,
                 applier: Applier | None = None, max_tries: int = 2,
                 reader: Callable[[Any, str], DeviceConfig] | None = None) -> None:
        if int(max_tries) < 1:
            raise ValueError(f"max_tries must be >= 1, got {max_tries}")
        self.lab = lab
        self.repo = repo
        self.desired_fn: DesiredFn = desired or head_desired
        self.applier: Applier = applier or device_applier
        self.max_tries = int(max_tries)
        self.reader = reader or (lambda lab_, r: device_apply.read(lab_, r))
        self._last = ReconcileStatus()
        self._lock = threading.RLock()

    # -- reading ---------------------------------------------------------------------------

    def desired(self) -> dict[str, DeviceConfig]:
        """The desired state now (HEAD), per router. Raises SotError."""
        return self.desired_fn(self.repo)

    def actual(self, routers: list[str]) -> dict[str, DeviceConfig]:
        """The routers' configuration now, read side by side (:func:`ani.device.apply.read_many`).
        Raises ApplyError / LabError if one cannot be read (the first in ``routers`` that could not)."""
        return device_apply.read_many(self.lab, routers, reader=self.reader)

    def drift(self, devices: list[str] | None = None) -> dict[str, list[DriftItem]]:
        """Desired (HEAD) vs the routers now, per router; routers without drift are omitted.
        ``devices``: only these (default: every router of the desired state; names not in it
        are ignored). Raises SotError, ApplyError, LabError."""
        with self._lock, self._pinned():
            want = self.desired()
            names = [r for r in want if devices is None or r in devices]
            return self._drift(want, self.actual(names))

    def drift_report(self, devices: list[str] | None = None) -> tuple[dict[str, list[DriftItem]], dict[str, list[str]], list[str]]:
        """``(drift, lines, checked)``: :meth:`drift`, the configuration lines involved per router
        with drift (:func:`involved_lines`), and the routers checked. Raises as :meth:`drift`."""
        with self._lock, self._pinned():
            want = self.desired()
            names = [r for r in want if devices is None or r in devices]
            have = self.actual(names)
            items = self._drift(want, have)
            return items, {r: involved_lines(want[r], have[r]) for r in items}, names

    @staticmethod
    def _drift(want: dict[str, DeviceConfig], have: dict[str, DeviceConfig]) -> dict[str, list[DriftItem]]:
        out = {}
        for r in sorted(have):
            items = drift(want[r], have[r])
            if items:
                out[r] = items
        return out

    def status(self) -> ReconcileStatus:
        """The last reconcile's status (``pending`` before the first)."""
        return self._last.model_copy(deep=True)

    # -- reconciling -----------------------------------------------------------------------

    def reconcile(self) -> ReconcileStatus:
        """Make the routers match HEAD (see the module doc); returns and keeps the status.
        Never raises for a router or applier failure (status ``failed``); raises HostFault (a program
        is missing: the host failed, not the change)."""
        with self._lock, self._pinned():
            st = self._reconcile()
            self._last = st
            return st.model_copy(deep=True)

    def _pinned(self) -> Any:
        """HEAD fixed for the block (``SotRepo.pinned``): one reconcile or drift reads ONE
        revision even when another writer of the repository commits meanwhile."""
        pin = getattr(self.repo, "pinned", None)
        return pin() if pin is not None else contextlib.nullcontext()

    def _reconcile(self) -> ReconcileStatus:
        revision = self.repo.head()
        try:
            want = self.desired()
        except HostFault:
            raise  # the host failed (a program is missing): not a failure of this change
        except (AniError, ValueError) as exc:
            return ReconcileStatus(revision=revision, status="failed", error=str(exc), phase="desired")
        routers = sorted(want)
        try:
            have = self.actual(routers)
        except HostFault:
            raise  # the host failed (a program is missing): not a failure of this change
        except (AniError, ValueError) as exc:
            return ReconcileStatus(revision=revision, status="failed", error=str(exc), phase="read",
                                   detail={"timed_out": True} if isinstance(exc, AniTimeout) else {})
        now = self._drift(want, have)
        if not now:
            return ReconcileStatus(revision=revision, status="converged", reason="no drift: nothing to apply")
        initial = _flat(now)
        history: list[list[DriftItem]] = []
        applied: list[str] = []
        tries = 0
        detail: dict[str, Any] = {}
        while True:
            outcome = self.applier(self.lab, {r: want[r] for r in now})
            tries += 1
            applied.extend(r for r in outcome.applied if r not in applied)
            detail = dict(outcome.detail)
            try:
                have = self.actual(routers)
            except HostFault:
                raise  # the host failed (a program is missing): not a failure of this change
            except (AniError, ValueError) as exc:
                return ReconcileStatus(revision=revision, status="failed", tries=tries, applied=sorted(applied),
                                       error=(outcome.error + "; then " if outcome.error else "") + str(exc),
                                       phase=outcome.phase or "read",
                                       detail={**detail, "timed_out": True} if isinstance(exc, AniTimeout) else detail)
            now = self._drift(want, have)
            left = {r: [i.model_dump() for i in items] for r, items in now.items()}
            lines = {r: involved_lines(want[r], have[r]) for r in now}
            if not outcome.ok and outcome.phase != PHASE_NOT_REACHED:
                return ReconcileStatus(revision=revision, status="failed", tries=tries, applied=sorted(applied),
                                       drift=left, lines=lines, error=outcome.error or "the applier failed",
                                       phase=outcome.phase or "apply", detail=detail)
            history.append(_flat(now))
            verdict = convergence(history, self.max_tries)
            reason = verdict.reason
            if verdict.status == "retry" and now:
                keys = {i.key() for i in history[-1]}
                if keys == {i.key() for i in initial}:
                    verdict = verdict.model_copy(update={"status": "non-convergent"})
                    reason = f"the drift after apply {tries} is the same as before the first apply"
                elif keys == {i.inverse().key() for i in initial}:
                    verdict = verdict.model_copy(update={"status": "non-convergent"})
                    reason = f"the drift after apply {tries} is the inverse of the drift before the first apply"
            if outcome.error and verdict.status != "converged":
                reason = f"{reason}; the applier said: {outcome.error}"
            if verdict.status != "retry":
                return ReconcileStatus(revision=revision, status=verdict.status, tries=tries,
                                       applied=sorted(applied), drift=left, lines=lines, reason=reason,
                                       detail=detail)
