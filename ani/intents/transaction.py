"""A3-T cross-device transactions over the lab's per-router NETCONF servers (issue 4, section 2).

    >>> res = run_transaction(lab, {"e1": cfg1, "e2": cfg2}, checks=[...])  # doctest: +SKIP
    >>> res.ok, res.phase, res.restored_verified                           # doctest: +SKIP

Phases, in order (the first that fails is ``TransactionResult.phase``):

1. ``lock``: ``lock candidate`` on every router involved, in sorted name order (two transactions
   over overlapping routers then cannot deadlock: both ask for the lowest name first).
2. ``edit``: ``edit-config`` of the candidate with ``default-operation replace`` and the whole
   ``<frr>`` of the intended config (``ani.device.yang.to_xml``). The whole config rather than a
   computed minimal edit: the caller gives whole intended configs (``CompileResult.configs``), the
   server computes the difference itself at commit (frr-reload), and there is no diff of ours
   that could be wrong.
3. ``validate``: ``validate source=candidate`` on all.
4. ``commit``: ``commit confirmed`` (one ``confirm-timeout`` for all, NOT persistent) router by
   router. A router whose FRR refuses its part fails here (its server restores its previous
   configuration itself).
5. ``active-validation``: the checks (see :func:`run_checks`) run while every router runs the
   new config.
6. ``confirm``: a confirming ``commit`` on all. Not sent when less than
   :data:`CONFIRM_MARGIN_S` of the confirm timeout is left (counted from the first commit): a
   server that rolled back by itself would take the confirming commit as a plain commit of
   nothing and answer ok; the phase fails instead ("the confirm timeout ran out").

On a failure: ``cancel-commit`` on the routers already committed, ``discard-changes`` on the
others; then every lock is released and the sessions closed; then every router's running
configuration is read again out of band (``ani.device.apply.read``: FRR + nftables) and compared
with the one read before the transaction: ``restored_verified`` is that comparison's result
(checked, not assumed). The confirmed commits are not persistent, so a transaction interrupted
between commit and confirm (process killed, sessions closed) is rolled back by each server when
its session goes away, and at the latest when the confirm timeout expires.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lxml import etree

from ani.device.yang import to_xml
from ani.errors import AniTimeout
from ani.netconf.client import BASE_NS, NetconfSession, RpcFailed, SessionLost

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

PHASES = ("lock", "edit", "validate", "commit", "active-validation", "confirm")
#: seconds of the confirm timeout that must be left to send the confirming commits
CONFIRM_MARGIN_S = 2.0

#: a check: a callable ``(lab) -> bool | (bool, detail)`` (an exception fails it), or an
#: ``ani.observer.checks`` check (evaluated with ``ani.observer.evaluate.Observer``).
Check = Any


@dataclass
class RouterDetail:
    """What happened on one router: ``steps`` done (``lock``, ``edit``, ... ``confirm``,
    ``cancel-commit``, ``discard-changes``, ``unlock``), ``error`` of the step that failed there,
    ``warnings`` (messages of warning-severity rpc-errors), ``restored`` (running equals the
    config before, read after a failure; None when not checked)."""

    steps: list[str] = field(default_factory=list)
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    restored: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"steps": list(self.steps), "error": self.error, "warnings": list(self.warnings),
                "restored": self.restored}


@dataclass
class TransactionResult:
    """``ok``; ``phase`` that failed (None if ok); ``routers`` per-router details; ``checks``
    (name, passed, detail) of the active validation; ``restored_verified``: after a failure,
    every router's running config was read and equals the one before (False if any differs or
    could not be read; None when the transaction succeeded); ``error`` a one-line summary."""

    ok: bool
    phase: str | None
    routers: dict[str, RouterDetail]
    checks: list[dict[str, Any]] = field(default_factory=list)
    restored_verified: bool | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "phase": self.phase, "error": self.error,
                "restored_verified": self.restored_verified, "checks": list(self.checks),
                "routers": {r: d.to_dict() for r, d in self.routers.items()}}


def _config(cfg: Any) -> etree._Element:
    wrapper = etree.Element(f"{{{BASE_NS}}}config", nsmap={"nc": BASE_NS})
    wrapper.append(to_xml(cfg))
    return wrapper


def _comparable(cfg: Any) -> dict[str, Any]:
    return cfg.model_dump(mode="json")


def _comparable_or_none(lab: Any, router: str) -> dict[str, Any] | None:
    """The router's configuration now (:func:`ani.device.apply.read`) as comparable data, None
    if it cannot be read."""
    from ani.device.apply import read

    try:
        return _comparable(read(lab, router))
    except Exception:  # noqa: BLE001 - then its restoration cannot be verified
        return None


def run_checks(lab: Lab, checks: Sequence[Check], bound_s: float = 20.0) -> list[dict[str, Any]]:
    """Run ``checks`` on ``lab``: ``[{"name", "passed", "detail"}]`` in order. Callables are
    called with the lab; observer checks (``ani.observer.checks``) go to one ``Observer``
    evaluation bounded by ``bound_s`` seconds."""
    out: list[dict[str, Any] | None] = [None] * len(checks)
    observer_idx = [i for i, c in enumerate(checks) if not callable(c)]
    for i, c in enumerate(checks):
        if i in observer_idx:
            continue
        name = getattr(c, "__name__", None) or repr(c)
        try:
            r = c(lab)
            passed, detail = (bool(r[0]), str(r[1])) if isinstance(r, tuple) else (bool(r), "")
        except Exception as exc:  # noqa: BLE001 - a check that raises fails
            passed, detail = False, f"{type(exc).__name__}: {exc}"
        out[i] = {"name": name, "passed": passed, "detail": detail}
    if observer_idx:
        from ani.observer.evaluate import DELAYED_NEGATIVE_WAIT_S, Observer

        # during an agent's run, where a latency fault may delay the lab's links
        observer = Observer(lab, negative_wait_s=DELAYED_NEGATIVE_WAIT_S)
        results = observer.evaluate([checks[i] for i in observer_idx], bound_s=bound_s)
        for i, r in zip(observer_idx, results, strict=True):
            out[i] = {"name": r.name, "passed": r.passed, "detail": r.detail}
    return [o for o in out if o is not None]


def run_transaction(
    lab: Lab,
    intended: dict[str, Any],
    checks: Sequence[Check] = (),
    confirm_timeout_s: int = 60,
    *,
    check_bound_s: float = 20.0,
    rpc_timeout_s: float = 120.0,
    connect: Callable[..., Any] | None = None,
    bound_s: float | None = None,
) -> TransactionResult:
    """Apply ``intended`` (``{router: DeviceConfig}``, whole configs) to the lab's routers as one
    transaction (see the module doc). Never raises for a router's refusal or a lost session:
    those are a failed phase of the result. ``bound_s``: seconds from the start after which no
    further forward step (lock, edit, validate, commit, confirm) is started: that step's phase
    fails (``the transaction's bound of N s ran out``) and what was committed is cancelled, as
    for any failure; the active validation gets at most what is left."""
    from ani.device.apply import read_many

    deadline = None if bound_s is None else time.monotonic() + bound_s
    routers = sorted(intended)
    tx = _Transaction(routers, {
        r: NetconfSession(r, (lambda r=r: lab.netconf_endpoint(r)), rpc_timeout_s=rpc_timeout_s,
                          **({"connect": connect} if connect else {}))
        for r in routers
    }, deadline, bound_s)
    before = read_many(lab, routers, reader=_comparable_or_none)  # None: its restoration cannot be verified
    check_results: list[dict[str, Any]] = []
    try:
        phase, check_results = tx.forward(lab, intended, checks, confirm_timeout_s, check_bound_s)
        if phase is not None:
            tx.undo()
    finally:
        tx.close()

    if phase is None:
        return TransactionResult(True, None, tx.details, check_results, None, None)
    verified = True
    after = read_many(lab, routers, reader=_comparable_or_none)
    for r in routers:
        tx.details[r].restored = before[r] is not None and after[r] is not None and after[r] == before[r]
        verified = verified and bool(tx.details[r].restored)
    return TransactionResult(False, phase, tx.details, check_results, verified, tx.error)


class _Transaction:
    """One transaction's steps over its routers' NETCONF sessions, in order (:meth:`forward`:
    lock, edit, validate, confirmed commit, active validation, confirm), then, if a phase
    failed, :meth:`undo` (cancel the commits not confirmed, discard the edits) and always
    :meth:`close` (unlock what was locked, close the sessions). A failed step is recorded in
    the router's detail and the first one in :attr:`error`."""

    def __init__(self, routers: list[str], sessions: dict[str, NetconfSession], deadline: float | None,
                 bound_s: float | None) -> None:
        self.routers = routers
        self.sessions = sessions
        self.deadline = deadline
        self.bound_s = bound_s
        self.details = {r: RouterDetail() for r in routers}
        self.locked: list[str] = []
        self.edited: list[str] = []
        self.committed: list[str] = []
        self.timed_out: set[str] = set()  # routers whose last failed step got no reply: outcome unknown
        self.error: str | None = None

    def step(self, r: str, name: str, op: str, **kw: Any) -> bool:
        """RPC ``op`` on router ``r`` as step ``name``; False (the error recorded) if it failed,
        got no reply, or is a forward step past the bound."""
        if name in PHASES and self.deadline is not None and time.monotonic() > self.deadline:
            self.details[r].error = f"{name}: not started, the transaction's bound of {self.bound_s:g} s ran out"
            self.error = self.error or f"{r}: {self.details[r].error}"
            return False
        try:
            reply = self.sessions[r].call(op, **kw)
        except (RpcFailed, AniTimeout, SessionLost) as exc:
            self.details[r].error = f"{name}: {exc}"
            self.error = self.error or f"{r}: {name}: {exc}"
            if isinstance(exc, AniTimeout):
                self.timed_out.add(r)
            return False
        self.details[r].steps.append(name)
        self.details[r].warnings.extend(w.describe() for w in reply.warnings)
        return True

    def forward(self, lab: Any, intended: dict[str, Any], checks: Sequence[Check], confirm_timeout_s: int,
                check_bound_s: float) -> tuple[str | None, list[dict[str, Any]]]:
        """The forward steps, each on every router before the next; (the phase that failed or
        None, the active validation's check results)."""
        check_results: list[dict[str, Any]] = []
        phase = self._lock() or self._edit(intended) or self._validate()
        first_commit = time.monotonic()
        phase = phase or self._commit(confirm_timeout_s)
        if phase is None:
            left = (check_bound_s if self.deadline is None
                    else max(1.0, min(check_bound_s, self.deadline - time.monotonic())))
            check_results = run_checks(lab, checks, bound_s=left)
            failed = [c for c in check_results if not c["passed"]]
            if failed:
                phase = "active-validation"
                self.error = "active validation failed: " + "; ".join(f"{c['name']}: {c['detail']}" for c in failed)
        elapsed = time.monotonic() - first_commit
        if phase is None and elapsed > confirm_timeout_s - CONFIRM_MARGIN_S:
            phase = "confirm"
            self.error = (f"the confirm timeout ({int(confirm_timeout_s)} s) ran out before the confirming commits "
                          f"({elapsed:.1f} s since the first commit): not confirmed, the routers roll back by themselves")
        return phase or self._confirm(), check_results

    def _lock(self) -> str | None:
        for r in self.routers:
            if not self.step(r, "lock", "lock", target="candidate"):
                return "lock"
            self.locked.append(r)
        return None

    def _edit(self, intended: dict[str, Any]) -> str | None:
        for r in self.routers:
            self.edited.append(r)  # a failed edit may have left part of it: discard it too
            if not self.step(r, "edit", "edit_config", target="candidate", config=_config(intended[r]),
                             default_operation="replace", error_option="rollback-on-error"):
                return "edit"
        return None

    def _validate(self) -> str | None:
        for r in self.routers:
            if not self.step(r, "validate", "validate", source="candidate"):
                return "validate"
        return None

    def _commit(self, confirm_timeout_s: int) -> str | None:
        for r in self.routers:
            if not self.step(r, "commit", "commit", confirmed=True, timeout=str(int(confirm_timeout_s))):
                if r in self.timed_out:
                    self.committed.append(r)  # no reply: the commit may have been made; cancel it too
                return "commit"
            self.committed.append(r)
        return None

    def _confirm(self) -> str | None:
        for r in self.routers:
            if not self.step(r, "confirm", "commit"):
                return "confirm"
        return None

    def undo(self) -> None:
        """After a failed phase: cancel the commits not confirmed, then discard the edits."""
        confirmed = [r for r in self.routers if "confirm" in self.details[r].steps]
        for r in self.routers:
            if r in self.committed and r not in confirmed:
                self.step(r, "cancel-commit", "cancel_commit")
        for r in self.routers:
            if r in self.edited:
                self.step(r, "discard-changes", "discard_changes")

    def close(self) -> None:
        """Unlock what was locked and close every session (always)."""
        for r in self.locked:
            self.step(r, "unlock", "unlock", target="candidate")
        for s in self.sessions.values():
            s.close()
