# size: one router's RFC 6241 datastores (locks, validation, commit, confirmed commit, journal) under one lock
"""The datastores of one router (RFC 6241 §5, §7, §8.3, §8.4): running, a shared candidate,
locks, validation, commit and confirmed commit. Transport-independent; the SSH server
(``ani.netconf.server``) calls one :class:`Device` per router from its session threads.

Datastores (as lxml trees: a ``<data>`` element, base namespace, holding ``<frr>``):

- **running** is read from the router (``Backend.read()``, converted with
  ``ani.device.yang.to_xml``) on every access: a change made out of band is visible at once.
- **candidate** is *shared* by all sessions (RFC 6241 §8.3). While nobody has changed it, it
  tracks running (reads running each time). The first change takes a copy of running;
  from then on it is that copy plus the edits, until ``commit`` or ``discard-changes`` (or the
  release of a candidate lock: RFC 6241 §8.3.5.2 discards outstanding changes when the lock is
  released, by ``unlock`` or by the end of the session).

Every method takes the calling session's id ``sid`` (a positive int), blocks, and raises
:class:`~ani.netconf.errors.RpcError` / :class:`~ani.netconf.errors.RpcErrors`; methods that
can produce warnings return them as a list of ``RpcError(severity="warning")``. One re-entrant
lock serialises all calls (and the confirm timer); lock ownership is checked before the
backend is called, so a refused request returns at once.

A confirmed commit whose timer expires is rolled back by ``Backend.apply(rollback point)``,
ignoring locks, and the committing session's locks are released.

Durability (with a :class:`ani.netconf.journal.RouterJournal`): the pending confirmed commit
(rollback point, persist token, deadline, owning session) is recorded before the confirmed
commit changes running and removed once it is confirmed, cancelled or rolled back; the locks
held are published on every change. :meth:`Device.recover` (a new server process, before its
first session) honours what an earlier process recorded and :meth:`Device.shutdown` (the
server stopping) rolls back what is pending and not persistent.

Out-of-band changes: the candidate remembers the running configuration it was copied from; a
``commit`` finds running changed since then (a CLI change, another management path) and
refuses with ``operation-failed`` (error-app-tag ``running-changed``) naming what changed,
instead of silently undoing it; the candidate keeps its edits. If a rollback (timer, session
end) fails, or a refused commit's restore of the previous configuration fails, the failure is
reported as a ``rollback-failed`` rpc-error on the next call of every session (once per
session; not to the committing session, which had it in its reply) until a later commit
succeeds; it is also logged.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lxml import etree

from ani.device.model import DeviceConfig
from ani.netconf import editconfig, subtree
from ani.netconf.backend import ApplyError, Backend
from ani.netconf.commit import PendingCommit, TimerFactory, parse_confirm_timeout, thread_timer
from ani.netconf.errors import BASE_NS, ERROR_TAGS, RpcError, RpcErrors
from ani.netconf.journal import JournalError, RouterJournal
from ani.netconf.limits import Limits

log = logging.getLogger(__name__)

TARGETS = ("running", "candidate")
TEST_OPTIONS = ("test-then-set", "set", "test-only")


@dataclass
class Codec:
    """How a Device converts between the device model and XML (default: :meth:`ani_frr`).

    ``schema``: the edit-config schema; ``to_xml(cfg)`` -> the config container element;
    ``from_xml(elem, hostname)`` -> DeviceConfig, raising ``error_type`` (with ``.issues``);
    ``validate_xml(elem)`` -> issues (``severity``, ``path``, ``message``, ``tag``,
    ``app_tag``); ``state_to_xml(raw)`` -> the state container element; ``config_tag``: Clark
    name of the config container; ``changes(a, b)`` -> what differs from ``a`` to ``b`` as
    ``- line`` / ``+ line`` strings (None: only "it differs" can be said)."""

    schema: editconfig.Schema
    to_xml: Callable[[DeviceConfig], etree._Element]
    from_xml: Callable[[etree._Element, str], DeviceConfig]
    validate_xml: Callable[[etree._Element], list[Any]]
    state_to_xml: Callable[[dict[str, Any]], etree._Element]
    config_tag: str
    error_type: type[Exception] = Exception
    changes: Callable[[DeviceConfig, DeviceConfig], list[str]] | None = None

    @classmethod
    def ani_frr(cls) -> Codec:
        """The ``ani-frr`` YANG module (``ani.device.yang``)."""
        from ani.device import yang

        return cls(
            schema=_schema_for(yang.data_model()),
            to_xml=yang.to_xml, from_xml=yang.from_xml, validate_xml=yang.validate_xml,
            state_to_xml=yang.state_to_xml, config_tag=f"{{{yang.NS}}}frr",
            error_type=yang.YangDataError, changes=_frr_changes,
        )


def _frr_changes(a: DeviceConfig, b: DeviceConfig) -> list[str]:
    """``a`` -> ``b`` as FRR context lines (``+ router bgp 64500 / neighbor ...``), lines outside
    the model, and nftables lines: :func:`ani.device.apply.mismatch` (``ani.device``'s diff forms)."""
    from ani.device.apply import mismatch

    return mismatch(a, b)


_SCHEMAS: dict[int, editconfig.Schema] = {}


def _schema_for(dm: Any) -> editconfig.Schema:
    if id(dm) not in _SCHEMAS:
        _SCHEMAS[id(dm)] = editconfig.Schema.from_datamodel(dm)
    return _SCHEMAS[id(dm)]


def issue_to_error(issue: Any) -> RpcError:
    """An ``ani.device.yang.Issue`` as an RpcError (an unknown tag becomes ``invalid-value``)."""
    tag = getattr(issue, "tag", None)
    return RpcError(
        tag if tag in ERROR_TAGS else "invalid-value", getattr(issue, "message", str(issue)),
        severity="warning" if getattr(issue, "severity", "error") == "warning" else "error",
        path=getattr(issue, "path", None) or None, app_tag=getattr(issue, "app_tag", None) or None)


def _raise(errors: list[RpcError]) -> None:
    if len(errors) == 1:
        raise errors[0]
    raise RpcErrors(errors)


def _data(*children: etree._Element) -> etree._Element:
    d = etree.Element(f"{{{BASE_NS}}}data", nsmap={None: BASE_NS})
    for c in children:
        d.append(c)
    return d


class Device:
    """The NETCONF datastores of one router (see the module docstring).

    Args:
        name: the router's name (for messages).
        backend: reads / applies the router's configuration (``ani.netconf.backend``).
        hostname: the router's hostname, given to ``from_xml`` (not part of the YANG data).
        timer: ``factory(seconds, callback) -> Timer`` for the confirm timeout (default a
            daemon ``threading.Timer``; tests inject a manual one).
        codec: model <-> XML conversions (default :meth:`Codec.ani_frr`).
        journal: where the pending confirmed commit and the locks are kept across server
            processes (:mod:`ani.netconf.journal`); None keeps them in memory only.
        limits: the size and time bounds of one edit-config / commit
            (:class:`ani.netconf.limits.Limits`; default its defaults).
    """

    def __init__(self, name: str, backend: Backend, hostname: str,
                 timer: TimerFactory | None = None, codec: Codec | None = None,
                 journal: RouterJournal | None = None, limits: Limits | None = None) -> None:
        self.name = name
        self.limits = limits or Limits()
        self.backend = backend
        self.hostname = hostname
        self.journal = journal
        self._timer = timer or thread_timer
        self._codec = codec
        self._lock = threading.RLock()
        self._candidate: etree._Element | None = None  # None: tracks running
        self._base: DeviceConfig | None = None  # running when the candidate was copied from it
        self._modified_by: int | None = None  # the last session that changed the candidate
        # the last tree validated and what it gave (warnings, errors, its DeviceConfig): a
        # datastore tree is never changed in place (an edit makes a new one), so the candidate
        # an edit-config validated is not validated again by validate and commit
        self._validated: tuple[etree._Element, list[RpcError], list[RpcError], DeviceConfig | None] | None = None
        self._locks: dict[str, int] = {}  # target -> session id
        self._lock_since: dict[str, float] = {}  # target -> Unix time the lock was taken
        self._pending: PendingCommit | None = None
        self._alerts: list[tuple[RpcError, set[int]]] = []
        self._closed = False
        # session id -> why its confirmed commit was rolled back by the confirm timeout and
        # when; told to that session's next plain commit with nothing to commit (issue 14 case 3)
        self._expired_of: dict[int, str] = {}

    @property
    def codec(self) -> Codec:
        if self._codec is None:
            self._codec = Codec.ani_frr()
        return self._codec

    # -- reading ---------------------------------------------------------------------------

    def get_config(self, sid: int, source: str, filter: etree._Element | None = None) -> etree._Element:
        """``<get-config>`` (RFC 6241 §7.1): the ``<data>`` element of ``source``
        (``running`` | ``candidate``), cut by the ``<filter>`` element of the request if
        given (subtree, RFC 6241 §6; ``type="xpath"`` is ``operation-not-supported``)."""
        with self._lock:
            self._check_alerts(sid)
            self._check_source(source)
            _check_filter(filter)
            tree = self._running_tree() if source == "running" else self._candidate_tree()
            return subtree.apply(tree, filter, self._keys)

    def get(self, sid: int, filter: etree._Element | None = None) -> etree._Element:
        """``<get>`` (RFC 6241 §7.7): running configuration plus operational state
        (``frr-state``: interfaces, routes, BGP / OSPF neighbors), cut by ``filter``."""
        with self._lock:
            self._check_alerts(sid)
            _check_filter(filter)
            want_cfg, want_state = self._wanted(filter)
            parts = []
            if want_cfg:
                parts.extend(editconfig.elements(self._running_tree()))
            if want_state:
                try:
                    raw = self.backend.state()
                except ApplyError as exc:
                    raise RpcError("operation-failed", f"{self.name}: cannot read state: {exc.message}") from exc
                parts.append(self.codec.state_to_xml(raw))
            return subtree.apply(_data(*parts), filter, self._keys)

    # -- editing ---------------------------------------------------------------------------

    def edit_config(self, sid: int, target: str, config: etree._Element,
                    default_operation: str = "merge", error_option: str = "stop-on-error",
                    test_option: str = "test-then-set") -> list[RpcError]:
        """``<edit-config>`` (RFC 6241 §7.2, §8.6.4) on the candidate; returns warnings.

        ``config``: the request's ``<config>`` element. ``target`` running is
        ``operation-not-supported`` (no ``:writable-running``). ``test-then-set`` validates the
        result and sets nothing if it has errors; ``test-only`` only validates; ``set`` does
        not validate. ``error_option`` (RFC 6241 §7.2): ``rollback-on-error`` sets nothing if
        an edit fails; ``stop-on-error`` stops at the first failing edit and keeps the edits
        before it; ``continue-on-error`` keeps every edit that succeeded. With the last two the
        edits kept are set (subject to ``test-option``) and the errors are then raised (after
        the warnings) as RpcError / RpcErrors. A request that is not well-formed for the schema
        (unknown element, bad value, ...) sets nothing whatever the error-option."""
        with self._lock:
            self._check_alerts(sid)
            if target == "running":
                raise RpcError("operation-not-supported",
                               "the running datastore is not writable (no :writable-running): "
                               "edit the candidate and commit", type="protocol")
            self._check_target(target)
            _check_choice("default-operation", default_operation, editconfig.DEFAULT_OPERATIONS)
            _check_choice("error-option", error_option, editconfig.ERROR_OPTIONS)
            _check_choice("test-option", test_option, TEST_OPTIONS)
            self._check_not_locked_by_other(sid, "candidate")
            self._check_edit_size(config)
            base: DeviceConfig | None = None
            if self._candidate is None:
                base = self._read()
                tree = _data(self.codec.to_xml(base))
            else:
                tree = copy.deepcopy(self._candidate)
            result = editconfig.edit(self.codec.schema, tree, config, default_operation, error_option)
            errors = result.errors
            if errors and error_option == "rollback-on-error":
                _raise(errors)
            warnings: list[RpcError] = []
            if test_option != "set":
                warnings, verrors = self._validate_tree(result.tree)
                if verrors:
                    _raise(warnings + errors + verrors)
            if test_option != "test-only" and result.changed:
                if self._candidate is None:
                    self._base = base
                self._candidate = result.tree
                self._modified_by = sid
            if errors:
                _raise(warnings + errors)
            return warnings

    def discard_changes(self, sid: int) -> None:
        """``<discard-changes>`` (RFC 6241 §8.3.4.2): the candidate tracks running again.
        ``in-use`` (error-info session-id) if another session holds the candidate lock."""
        with self._lock:
            self._check_alerts(sid)
            self._check_not_locked_by_other(sid, "candidate")
            self._discard()

    def validate(self, sid: int, source: str | etree._Element) -> list[RpcError]:
        """``<validate>`` (RFC 6241 §8.6): ``source`` is ``candidate``, ``running`` or a
        ``<config>`` element. Returns warnings; raises RpcErrors (warnings first) on errors."""
        with self._lock:
            self._check_alerts(sid)
            if isinstance(source, str):
                self._check_source(source)
                # the candidate itself, not a copy: validating reads it, never changes it
                tree = (self._running_tree() if source == "running" or self._candidate is None
                        else self._candidate)
            else:
                result = editconfig.edit(self.codec.schema, _data(), source, "merge", "stop-on-error")
                if result.errors:
                    _raise(result.errors)
                tree = result.tree
            warnings, errors = self._validate_tree(tree)
            if errors:
                _raise(warnings + errors)
            return warnings

    # -- locks -----------------------------------------------------------------------------

    def lock(self, sid: int, target: str) -> None:
        """``<lock>`` (RFC 6241 §7.5, §8.3.5.1). ``lock-denied`` with error-info ``session-id``
        (0 for no session) if the target is locked (also by ``sid`` itself), if it is the
        candidate and the candidate has uncommitted changes, or if it is running and another
        session's confirmed commit is pending. With a journal the lock is published for the
        other management paths (RFC 6241 §7.5: A1 refuses to write while running is locked);
        one that cannot be published is not taken (``operation-failed``)."""
        with self._lock:
            self._check_alerts(sid)
            self._check_target(target)
            holder = self._locks.get(target)
            if holder is not None:
                raise _lock_denied(f"the {target} datastore is already locked by session {holder}", holder)
            if target == "candidate" and self._candidate is not None:
                raise _lock_denied(
                    "the candidate has uncommitted changes (last by session "
                    f"{self._modified_by}): commit or discard-changes first", self._modified_by or 0)
            if target == "running" and self._pending is not None and self._pending.owner != sid:
                raise _lock_denied(
                    "a confirmed commit is pending (session "
                    f"{self._pending.owner or 0}); confirm or cancel it first", self._pending.owner or 0)
            self._locks[target] = sid
            self._lock_since[target] = time.time()
            try:
                self._publish_locks()
            except JournalError as exc:
                del self._locks[target]
                raise RpcError("operation-failed", f"{self.name}: the lock could not be published "
                               f"to the other management paths ({exc}), so it was not taken") from exc

    def unlock(self, sid: int, target: str) -> None:
        """``<unlock>`` (RFC 6241 §7.6): ``operation-failed`` unless ``sid`` holds the lock.
        Releasing the candidate lock discards its uncommitted changes (RFC 6241 §8.3.5.2)."""
        with self._lock:
            self._check_alerts(sid)
            self._check_target(target)
            holder = self._locks.get(target)
            if holder != sid:
                info = {"session-id": str(holder)} if holder is not None else None
                raise RpcError("operation-failed", f"the {target} datastore is not locked by this "
                               "session" + (f" (session {holder} holds it)" if holder else ""), info=info)
            self._release(target)

    # -- commit ----------------------------------------------------------------------------

    def commit(self, sid: int, confirmed: bool = False, confirm_timeout: str | None = None,
               persist: str | None = None, persist_id: str | None = None) -> list[RpcError]:
        """``<commit>`` (RFC 6241 §8.3.4.1, §8.4.5.1); returns validation warnings.

        Without ``confirmed``: copies the candidate to running; if a confirmed commit is
        pending this is the confirming commit (needs ``persist_id`` if it was given
        ``persist``, else must come from its session). With ``confirmed``: the same, then
        a rollback to the running configuration before the *first* confirmed commit happens
        after ``confirm_timeout`` seconds (decimal string, default 600) unless confirmed; a
        follow-up confirmed commit only restarts the timer. The timeout counts from when the
        server starts the commit (running starts changing then): applying the candidate does
        not lengthen the window, and the rollback is complete about one apply time after
        ``confirm_timeout`` (an apply longer than the timeout rolls back at once). If the
        router refuses the configuration: ``operation-failed``, running unchanged (the backend
        restored it), the candidate keeps its edits, no new pending commit. If running changed
        since the candidate was copied from it (out of band): ``operation-failed`` with
        error-app-tag ``running-changed`` naming the changes, nothing applied, the candidate
        keeps its edits. Locks held by other sessions on candidate or running: ``in-use``
        (error-info session-id). With a journal, a first confirmed commit whose rollback point
        cannot be recorded is ``operation-failed`` and changes nothing. Bounds
        (:mod:`ani.netconf.limits`): a candidate that changes more than ``limits.commit_lines``
        configuration lines is ``too-big`` (app-tag ``commit-too-large``), nothing applied, the
        candidate keeps its edits; an apply still running ``limits.commit_bound_s`` seconds
        after the commit started is stopped and running put back to what it was before
        (``operation-failed``, app-tag ``commit-bound``; no pending commit is left)."""
        with self._lock:
            self._check_alerts(sid)
            self._late_expiry("commit")
            timeout_s = parse_confirm_timeout(confirm_timeout) if confirmed else None
            self._check_commit_may_start(sid, confirmed, confirm_timeout, persist, persist_id)
            started = time.monotonic()  # the confirm timeout counts from here (see docstring)
            warnings: list[RpcError] = []
            running: DeviceConfig | None = None
            intended: DeviceConfig | None = None
            if self._candidate is not None:
                warnings, errors = self._validate_tree(self._candidate)
                if errors:
                    _raise(warnings + errors)
                intended = self._config_of(self._candidate)
                running = self._read()
                self._check_running_unchanged(running)
                self._check_commit_size(running, intended)
            elif confirmed and self._pending is None:
                running = self._read()
            first: PendingCommit | None = None
            if confirmed and self._pending is None:
                assert running is not None and timeout_s is not None
                first = PendingCommit(rollback=running, owner=sid, persist=persist,
                                      timeout_s=timeout_s, deadline=started + timeout_s)
                self._record(first)  # before running changes: a crash from here on rolls back
            if intended is not None:
                self._apply_commit(sid, intended, first, started)
            self._alerts.clear()
            self._settle_pending(sid, confirmed, first, persist, timeout_s, started)
            return warnings

    def _check_commit_may_start(self, sid: int, confirmed: bool, confirm_timeout: str | None,
                                persist: str | None, persist_id: str | None) -> None:
        """Refuse (RpcError) a commit that may not start: confirm-timeout or persist without
        confirmed, a lock of another session, a confirming commit not allowed to confirm, or a
        commit meant to confirm one the timer already rolled back (with nothing to commit)."""
        if not confirmed and (confirm_timeout is not None or persist is not None):
            raise RpcError("invalid-value", "confirm-timeout and persist need <confirmed/>",
                           type="protocol", info={"bad-element": "confirm-timeout"
                                                  if confirm_timeout is not None else "persist"})
        for target in ("candidate", "running"):
            self._check_not_locked_by_other(sid, target)
        self._check_may_confirm(sid, persist_id)
        expired = self._expired_of.pop(sid, None)
        if expired is not None and not confirmed and self._pending is None and self._candidate is None:
            # meant to confirm a commit that the timer already rolled back: a plain
            # commit of nothing would answer <ok/> and the client would believe it confirmed
            raise RpcError("operation-failed", f"{self.name}: no confirmed commit is pending: "
                           f"{expired}; this commit had nothing to commit, so nothing was "
                           "confirmed: commit the change again", app_tag="confirm-timeout-expired")

    def _apply_commit(self, sid: int, intended: DeviceConfig, first: PendingCommit | None, started: float) -> None:
        """Apply the candidate's configuration to the router (bounded from ``started``) and drop
        the candidate. Refused: the first confirmed commit's record is withdrawn, every other
        session is alerted if the restore failed too, and the RpcError raised."""
        try:
            self.backend.apply(intended, deadline=started + self.limits.commit_bound_s)
        except ApplyError as exc:
            if first is not None:
                self._record(None, quiet=True)
            if not exc.restored:
                # running is in an unknown state: every other session is told on its
                # next operation (this one's reply may never be read: its client
                # may have timed out during a long apply)
                self._alerts.append((RpcError(
                    "rollback-failed", f"{self.name}: a commit by session {sid} was "
                    f"refused and restoring the previous configuration failed: "
                    f"{exc.message}; the router's configuration is in an unknown "
                    "state"), {sid}))
                log.error("%s: commit by session %d refused, restore failed: %s",
                          self.name, sid, exc.message)
            raise _apply_failed(self.name, exc, self.limits) from exc
        self._discard()

    def _settle_pending(self, sid: int, confirmed: bool, first: PendingCommit | None, persist: str | None,
                        timeout_s: float | None, started: float) -> None:
        """After a commit: a confirmed one starts (``first``) or restarts the pending commit's
        timer from ``started`` (owner, persist and deadline recorded); a plain one confirms the
        pending commit, if any."""
        if confirmed:
            assert timeout_s is not None
            if first is not None:
                self._pending = first
            else:
                assert self._pending is not None
                self._pending.owner, self._pending.persist = sid, persist
            self._pending.restart(self._timer, timeout_s, self._expired, started=started)
            if first is None:
                self._record(self._pending, quiet=True)  # the new deadline / persist / owner
        elif self._pending is not None:
            self._pending.cancel_timer()
            self._pending = None
            self._record(None, quiet=True)

    def cancel_commit(self, sid: int, persist_id: str | None = None) -> None:
        """``<cancel-commit>`` (RFC 6241 §8.4.4.1): roll back the pending confirmed commit now.
        ``operation-failed`` if none is pending; ``persist_id`` must match a ``persist``
        commit (``invalid-value``); a commit without persist can only be cancelled by its
        session (``in-use``). A failed rollback is ``rollback-failed``."""
        with self._lock:
            self._check_alerts(sid)
            if self._pending is not None and self._pending.remaining_s() <= 0:
                self._check_may_confirm(sid, persist_id)
                self._late_expiry("cancel-commit", refuse=False)  # what cancel asks for, done
                return
            if self._pending is None:
                raise RpcError("operation-failed", "no confirmed commit is pending",
                               info={"bad-element": "cancel-commit"})
            self._check_may_confirm(sid, persist_id)
            err = self._rollback("cancel-commit")
            if err is not None:
                raise err

    def session_closed(self, sid: int) -> None:
        """The session ended (close-session, kill-session, transport loss): release its locks
        (discarding uncommitted candidate changes if it held the candidate lock) and roll back
        its pending confirmed commit unless that was given ``persist`` (RFC 6241 §8.4.1).
        Never raises; a failed rollback is kept for the next operation."""
        with self._lock:
            self._expired_of.pop(sid, None)
            if self._closed:
                return
            for target in [t for t, s in self._locks.items() if s == sid]:
                self._release(target)
            p = self._pending
            if p is not None and p.owner == sid:
                if p.persist is None:
                    err = self._rollback(f"session {sid} ended")
                    if err is not None:
                        self._alert(err)
                else:
                    p.owner = None
                    self._record(p, quiet=True)

    # -- a late confirming commit; a frozen management plane (issue 14, faults-kinds) ---------

    def _late_expiry(self, op: str, refuse: bool = True) -> None:
        """A pending confirmed commit whose deadline has passed while its timer has not run yet
        (the timer thread was held up: a frozen router's management plane, see :meth:`hold`, or
        a loaded host) is rolled back now, before ``op`` is looked at: a confirming commit that
        arrives after the confirm-timeout must not confirm (RFC 6241 §8.4.1: the server reverts
        when the confirming commit is not issued within the timeout). The committing session's
        locks go as on expiry. With ``refuse`` raises RpcError ``operation-failed`` saying the
        commit was rolled back (a failed rollback: ``rollback-failed``)."""
        p = self._pending
        if p is None or p.remaining_s() > 0:
            return
        late = time.monotonic() - p.deadline
        owner = p.owner
        err = self._rollback(f"not confirmed within {p.timeout_s} s; the {op} came {late:.1f} s late")
        for target in [t for t, s in self._locks.items() if owner is not None and s == owner]:
            self._release(target)
        if err is not None:
            self._alert(err)
            raise err
        if refuse:
            raise RpcError(
                "operation-failed",
                f"{self.name}: the confirmed commit was not confirmed within its confirm-timeout "
                f"of {p.timeout_s} s (this {op} arrived {late:.1f} s after the deadline) and has "
                "been rolled back: running is the configuration before the confirmed commit, "
                "nothing is pending and nothing was committed")

    def hold(self, release: threading.Event, held: threading.Event) -> None:
        """Freeze this Device: block until ``release`` is set, holding the lock every call and
        the confirm timer take, so nothing of this router's datastores runs meanwhile (a frozen
        router's management plane; the server's per-router freeze, :meth:`ani.netconf.server.
        NetconfServer.freeze`). ``held`` is set once the lock is held (an operation in progress
        finishes first). Run it on a thread of its own."""
        with self._lock:
            held.set()
            release.wait()

    # -- server process life -----------------------------------------------------------------

    def recover(self) -> str | None:
        """Honour what an earlier server process left in the journal; call once, before the
        first session. A dead server's published locks are withdrawn. A recorded confirmed
        commit (RFC 6241 §8.4) is rolled back if it was not given ``persist`` (the session that
        issued it ended with that process, §8.4.1) or if its deadline has passed; a persistent
        one whose deadline is ahead stays pending with its persist-id and what is left of its
        timeout (``owner`` 0 in messages: no session). Returns one line saying what was done
        (for the log), None if nothing was recorded. Never raises: a failed rollback, or a
        record that cannot be read, is reported as ``rollback-failed`` to every session."""
        with self._lock:
            self._publish_locks(quiet=True)
            if self.journal is None:
                return None
            try:
                rec = self.journal.load_commit()
                p = PendingCommit.from_record(rec) if rec is not None else None
            except (JournalError, ValueError) as exc:
                return self._unreadable_record(exc)
            if p is None:
                return None
            self._pending = p
            if p.persist is None:
                why = "its session ended with the previous server process"
            elif p.remaining_s() <= 0:
                why = f"not confirmed within {p.timeout_s} s (the deadline passed while no server ran)"
            else:
                p.restart(self._timer, p.timeout_s, self._expired, started=p.deadline - p.timeout_s)
                self._record(p, quiet=True)
                return (f"confirmed commit with persist pending from the previous server: "
                        f"{p.remaining_s():.0f} s of {p.timeout_s} s left")
            err = self._rollback(why)
            if err is not None:
                self._alert(err)
                return err.message
            return f"confirmed commit rolled back ({why})"

    def _unreadable_record(self, exc: Exception) -> str:
        """:meth:`recover` met a commit record it cannot use: nothing can be rolled back. The
        file is kept, moved aside (:meth:`RouterJournal.set_aside`: a later commit must not
        overwrite it), and every session is told once (``rollback-failed``); returns the line."""
        assert self.journal is not None
        why = " ".join(str(exc).split())[:400]  # one line (pydantic's errors span several)
        try:
            kept = f"kept as {self.journal.set_aside()}"
        except JournalError as err:
            kept = f"left in place ({err})"
        msg = (f"{self.name}: a confirmed commit may have been pending when the previous server "
               f"stopped, but its record cannot be read ({why}); it was not rolled back and running "
               f"may still hold the unconfirmed configuration; the record is {kept}")
        log.error(msg)
        self._alert(RpcError("rollback-failed", msg))
        return msg

    def shutdown(self) -> str | None:
        """The server process is stopping (SIGTERM): its sessions end with it. A pending
        confirmed commit without ``persist`` is rolled back now (RFC 6241 §8.4.1; if that fails
        it stays recorded for the next server to retry); a persistent one stays recorded, with
        its deadline, for the next server (:meth:`recover`). Locks are released and withdrawn,
        uncommitted candidate changes dropped. Afterwards every operation is
        ``operation-failed``. Returns one line saying what was done (None: nothing pending).
        Never raises."""
        with self._lock:
            self._closed = True
            msg = None
            p = self._pending
            if p is not None and p.persist is None:
                err = self._rollback("the server is stopping", keep_record_on_failure=True)
                msg = err.message if err is not None else "confirmed commit rolled back (the server is stopping)"
            elif p is not None:
                p.cancel_timer()
                p.owner = None
                self._record(p, quiet=True)
                self._pending = None
                msg = (f"confirmed commit with persist stays pending for the next server "
                       f"({p.remaining_s():.0f} s left)")
            self._locks.clear()
            self._lock_since.clear()
            self._discard()
            self._publish_locks(quiet=True)
            return msg

    # -- internals -------------------------------------------------------------------------

    def _expired(self, generation: int) -> None:
        with self._lock:
            p = self._pending
            if p is None or p.generation != generation:
                return  # confirmed / cancelled / restarted meanwhile
            owner = p.owner
            err = self._rollback(f"not confirmed within {p.timeout_s} s")
            for target in [t for t, s in self._locks.items() if owner is not None and s == owner]:
                self._release(target)
            if owner is not None and err is None:
                self._expired_of[owner] = _expired_note(p.timeout_s)
            if err is not None:
                self._alert(err)

    def _rollback(self, why: str, keep_record_on_failure: bool = False) -> RpcError | None:
        """Apply the pending rollback point; clears the pending commit (and its journal
        record, unless it failed and ``keep_record_on_failure``). Returns the
        ``rollback-failed`` error if that failed (None on success)."""
        p = self._pending
        assert p is not None
        p.cancel_timer()
        self._pending = None
        log.info("%s: rolling back confirmed commit (%s)", self.name, why)
        try:
            self.backend.apply(p.rollback)
        except Exception as exc:  # noqa: BLE001 - on the timer thread too: report, never lose it
            restored = getattr(exc, "restored", False)
            state = ("running still holds the committed configuration" if restored
                     else "the router's configuration is in an unknown state")
            msg = (f"{self.name}: rolling back the confirmed commit ({why}) failed: "
                   f"{getattr(exc, 'message', exc)}; {state}")
            log.error(msg)
            if not keep_record_on_failure:
                self._record(None, quiet=True)
            return RpcError("rollback-failed", msg)
        self._record(None, quiet=True)
        return None

    def _record(self, pending: PendingCommit | None, quiet: bool = False) -> None:
        """Keep ``pending`` in the journal (None: remove the record). Raises RpcError
        (operation-failed) if that fails, unless ``quiet`` (then it is logged)."""
        if self.journal is None:
            return
        try:
            if pending is None:
                self.journal.clear_commit()
            else:
                self.journal.save_commit(pending.to_record())
        except JournalError as exc:
            if quiet:
                log.error("%s: %s", self.name, exc)
                return
            raise RpcError("operation-failed", f"{self.name}: the rollback point of the confirmed "
                           f"commit could not be recorded ({exc}); nothing was changed") from exc

    def _publish_locks(self, quiet: bool = False) -> None:
        """Publish the locks held now. Raises JournalError unless ``quiet`` (then logged)."""
        if self.journal is None:
            return
        locks = {t: {"session-id": s, "since": self._lock_since.get(t, 0.0)}
                 for t, s in self._locks.items()}
        try:
            self.journal.publish_locks(locks)
        except JournalError as exc:
            if not quiet:
                raise
            log.error("%s: %s", self.name, exc)

    def _check_running_unchanged(self, running: DeviceConfig) -> None:
        """Refuse to commit a candidate over a running that changed since the candidate was
        copied from it: the commit would silently undo that change."""
        if self._base is None or running == self._base:
            return
        changes = self.codec.changes(self._base, running) if self.codec.changes else []
        shown = "; ".join(changes[:12]) + (f"; ... ({len(changes)} lines)" if len(changes) > 12 else "")
        raise RpcError(
            "operation-failed",
            f"{self.name}: running changed since the candidate was copied from it (by another "
            f"management path, e.g. the CLI, or a rollback): {shown or 'the configuration differs'}. "
            "Committing would silently undo that, so nothing was committed and the candidate "
            "keeps its edits: discard-changes and edit again on top of the new running (lock "
            "running first to keep other NETCONF sessions out)",
            app_tag="running-changed")

    def _check_edit_size(self, config: etree._Element) -> None:
        """``too-big`` if the edit's ``<config>`` holds more elements than the limit."""
        limit = self.limits.edit_elements
        n = sum(1 for e in config.iter() if isinstance(e.tag, str)) - 1
        if n > limit:
            raise RpcError(
                "too-big", f"{self.name}: this edit-config holds {n} elements; this server takes at most "
                f"{limit} in one edit-config and at most {self.limits.commit_lines} changed configuration "
                "lines in one commit: split the change into several edits and commits; nothing was changed",
                app_tag="edit-too-large")

    def _check_commit_size(self, running: DeviceConfig, intended: DeviceConfig) -> None:
        """``too-big`` if committing ``intended`` over ``running`` changes more lines than the
        limit (nothing is applied; the candidate keeps its edits)."""
        if self.codec.changes is None:
            return
        limit = self.limits.commit_lines
        n = len(self.codec.changes(running, intended))
        if n > limit:
            raise RpcError(
                "too-big", f"{self.name}: this commit would change {n} configuration lines; this server "
                f"applies at most {limit} in one commit (a larger change holds the router for minutes): "
                "nothing was applied and the candidate keeps its edits; discard-changes and commit the "
                f"change in parts of at most {limit} lines", app_tag="commit-too-large")

    def _alert(self, err: RpcError) -> None:
        self._alerts.append((err, set()))

    def _check_alerts(self, sid: int) -> None:
        if self._closed:
            raise RpcError("operation-failed", f"{self.name}: the NETCONF server is stopping")
        for err, told in self._alerts:
            if sid not in told:
                told.add(sid)
                raise err

    def _check_may_confirm(self, sid: int, persist_id: str | None) -> None:
        p = self._pending
        if p is None:
            if persist_id is not None:
                raise RpcError("invalid-value", f"no confirmed commit with persist-id {persist_id!r} "
                               "is pending", type="protocol", info={"bad-element": "persist-id"})
            return
        if p.persist is not None:
            if persist_id != p.persist:
                raise RpcError("invalid-value", "the pending confirmed commit was given persist: "
                               "this needs its persist-id" + (" (it does not match)" if persist_id else ""),
                               type="protocol", info={"bad-element": "persist-id"})
        elif persist_id is not None:
            raise RpcError("invalid-value", "the pending confirmed commit has no persist token",
                           type="protocol", info={"bad-element": "persist-id"})
        elif p.owner != sid:
            raise RpcError("in-use", f"a confirmed commit of session {p.owner} is pending: only that "
                           "session can confirm or cancel it", info={"session-id": str(p.owner)})

    def _check_not_locked_by_other(self, sid: int, target: str) -> None:
        holder = self._locks.get(target)
        if holder is not None and holder != sid:
            raise RpcError("in-use", f"the {target} datastore is locked by session {holder}",
                           info={"session-id": str(holder)})

    def _release(self, target: str) -> None:
        del self._locks[target]
        self._lock_since.pop(target, None)
        self._publish_locks(quiet=True)
        if target == "candidate":
            self._discard()

    def _discard(self) -> None:
        self._candidate, self._modified_by, self._base = None, None, None

    def _check_target(self, target: str) -> None:
        if target not in TARGETS:
            raise RpcError("invalid-value", f"unknown datastore {target!r} (running, candidate)",
                           type="protocol", info={"bad-element": "target"})

    def _check_source(self, source: str) -> None:
        if source not in TARGETS:
            raise RpcError("invalid-value", f"unknown datastore {source!r} (running, candidate)",
                           type="protocol", info={"bad-element": "source"})

    def _read(self) -> DeviceConfig:
        try:
            return self.backend.read()
        except ApplyError as exc:
            raise RpcError("operation-failed", f"{self.name}: cannot read the running "
                           f"configuration: {exc.message}") from exc

    def _running_tree(self) -> etree._Element:
        return _data(self.codec.to_xml(self._read()))

    def _candidate_tree(self) -> etree._Element:
        if self._candidate is None:
            return self._running_tree()
        return copy.deepcopy(self._candidate)

    def _config_elem(self, tree: etree._Element) -> etree._Element:
        elem = tree.find(self.codec.config_tag)
        return elem if elem is not None else etree.Element(self.codec.config_tag)

    def _to_config(self, tree: etree._Element) -> DeviceConfig:
        try:
            return self.codec.from_xml(self._config_elem(tree), self.hostname)
        except self.codec.error_type as exc:
            issues = getattr(exc, "issues", None)
            if issues:
                _raise([issue_to_error(i) for i in issues])
            raise RpcError("invalid-value", str(exc)) from exc

    def _validate_tree(self, tree: etree._Element) -> tuple[list[RpcError], list[RpcError]]:
        """(warnings, errors) of a datastore tree: YANG validation, then the device model. The
        tree validated last (the same object, never changed in place) is not validated again."""
        memo = self._validated
        if memo is not None and memo[0] is tree:
            return list(memo[1]), list(memo[2])
        found = [issue_to_error(i) for i in self.codec.validate_xml(self._config_elem(tree))]
        warnings = [e for e in found if e.severity == "warning"]
        errors = [e for e in found if e.severity == "error"]
        config = None
        if not errors:
            try:
                config = self._to_config(tree)
            except RpcError as exc:
                errors = [exc]
            except RpcErrors as exc:
                errors = exc.errors
        self._validated = (tree, warnings, errors, config)
        return list(warnings), list(errors)

    def _config_of(self, tree: etree._Element) -> DeviceConfig:
        """:meth:`_to_config` of ``tree``, the one :meth:`_validate_tree` made if it validated
        this tree last."""
        memo = self._validated
        if memo is not None and memo[0] is tree and memo[3] is not None:
            return memo[3]
        return self._to_config(tree)

    def _wanted(self, filter: etree._Element | None) -> tuple[bool, bool]:
        """(config, state) needed for ``filter`` (by its top-level element names)."""
        if filter is None:
            return True, True
        cfg_name = etree.QName(self.codec.config_tag).localname
        names = {etree.QName(e.tag).localname for e in editconfig.elements(filter)}
        return cfg_name in names, bool(names - {cfg_name})

    def _keys(self, elem: etree._Element) -> list[str]:
        """Clark names of the key leaves of ``elem`` if it is a list entry (for subtree)."""
        chain = []
        e: etree._Element | None = elem
        while e is not None and e.getparent() is not None:
            chain.append(e.tag)
            e = e.getparent()
        node: editconfig.SNode | None = self.codec.schema.root
        for tag in reversed(chain):
            node = node.child(tag) if node is not None else None
        if node is None or node.kind != "list":
            return []
        return [k.tag for k in node.key_nodes()]


def _expired_note(timeout_s: int) -> str:
    when = time.strftime("%H:%M:%S", time.localtime())
    return f"this session's confirmed commit was not confirmed within {timeout_s} s and was rolled back at {when}"


def _check_filter(filter: etree._Element | None) -> None:
    if filter is None:
        return
    ftype = filter.get("type") or filter.get(f"{{{BASE_NS}}}type") or "subtree"
    if ftype == "xpath":
        raise RpcError("operation-not-supported", "XPath filters are not supported (no :xpath "
                       "capability): use a subtree filter", type="protocol")
    if ftype != "subtree":
        raise RpcError("bad-attribute", f"unknown filter type {ftype!r}", type="protocol",
                       info={"bad-attribute": "type", "bad-element": "filter"})


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise RpcError("invalid-value", f"{name} {value!r} is not one of {', '.join(allowed)}",
                       type="protocol", info={"bad-element": name})


def _lock_denied(message: str, holder: int) -> RpcError:
    return RpcError("lock-denied", message, type="protocol", info={"session-id": str(holder)})


def _apply_failed(name: str, exc: ApplyError, limits: Limits) -> RpcError:
    state = ("running was restored to its previous configuration" if exc.restored
             else "restoring the previous configuration FAILED: the router is in an unknown state")
    if getattr(exc, "bound_passed", False):
        return RpcError(
            "operation-failed", f"{name}: the commit did not finish within this server's bound of "
            f"{limits.commit_bound_s:g} s and was stopped ({exc.message}); {state}; nothing is "
            "committed and the candidate keeps its changes: commit a smaller change",
            app_tag="commit-bound")
    shown = exc.lines[:20]
    lines = f" (lines: {'; '.join(shown)}{'; ...' if len(exc.lines) > 20 else ''})" if shown else ""
    return RpcError("operation-failed", f"{name} refused the configuration: {exc.message}{lines}; "
                    f"{state}; the candidate keeps its changes")
