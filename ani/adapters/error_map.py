"""The one mapping of exceptions to tool results: which :class:`~ani.errors.ErrorCode` an
exception becomes, whether a retry may succeed, the message and the data.

Every level turns an exception its tool meets into a result here, and so does
:class:`ani.adapters.base.BaseAdapter` for the timeouts a tool lets through::

    except (SessionError, ReadError) as exc:
        return error_result(exc, device=args.device)

===============================================  ======================  =========  ===========================
exception                                        code                    retriable  message
===============================================  ======================  =========  ===========================
``AniTimeout`` (any bound), ``TimeoutExpired``   ``timeout``             yes        ``[device: ][what: ]timeout after N s (...)``
``Refused`` (A1 allowlist)                       ``not_allowed``         no         its message
``XmlArgError`` (A2 argument)                    ``invalid_arguments``   no         ``[what: ]<why>``
``PoolExhausted``                                ``resource_exhausted``  no         names the pool; ``data.errors``, ``pool``, ``size``
``IntentError``                                  ``invalid_intent``      no         ``refused (<code>) (<path>): ...``; ``data.errors``
``Conflict`` (source of truth)                   ``conflict``            yes        ``data.expected``, ``actual``, ``paths``
``PatchError``, ``DocError``                     ``invalid_intent``      no         ``patch refused, nothing changed: ...``
``SotPathError``, ``UnknownRevision``            ``not_found``           no
``SotArgError`` (a revision naming a path, a     ``invalid_arguments``   no         names the argument and its form
commit message too long / with a control char)
``SotBusy`` (another writer held a lock)         ``timeout``             yes        (an ``AniTimeout``)
another ``SotError`` (nothing to commit, a       ``invalid_arguments``   no         names the commit and why
revert no retry can make: of the initial or a
merge commit, already undone, not applying)
``RpcFailed`` (NETCONF reply)                    ``command_failed``      per tag    ``device: what failed: <each error>``
``SessionLost`` (NETCONF), ``SessionError``      ``device_unreachable``  yes [1]_   ``data.outcome_unknown`` (NETCONF), ``data.cause`` [2]_
``Unsupported`` (NETCONF hello lacks it)         ``unsupported``         no         its message; ``data.missing`` (features), its details
``ApplyError`` (``ReadError`` included),         ``device_unreachable``  yes [1]_   ``[device: ][what: ]<why>``
``LabError``, ``OSError``
``UnknownNode``                                  ``unknown_device``      no
anything else                                    ``internal``            no         ``[device: ][what: ]<Type>: <why>``
``HostFault`` (``ProgramMissing`` ...)           re-raised: ``BaseAdapter.call`` makes it ``internal`` + ``harness_fault``
===============================================  ======================  =========  ===========================

.. [1] not when the lab itself is gone (``lab <id> is not running``): a retry cannot succeed; nor
   when the session could not be opened for a cause a retry cannot change (a refused login, a
   host key not known or not the known one: the exception's ``retriable`` is False).
.. [2] an SSH session that could not be opened: ``auth_refused``, ``host_key_unknown``,
   ``host_key_mismatch``, ``connection_refused``, ``no_answer``, ... (:mod:`ani.ssh_errors`).

``device`` prefixes the message, once (an exception's own ``"<device>: "`` prefix moves in
front of ``what``); ``what`` names the operation (``"get-config running"``). ``data`` is
merged over the data of the kind; ``changed`` is passed through.
"""

from __future__ import annotations

import subprocess
from typing import Any

from ani.errors import AniError, AniTimeout, ErrorCode, HostFault, LabError, LabGone, UnknownNode
from ani.protocol import ToolResult

__all__ = ["error_result"]


def _subject(exc: BaseException, device: str | None, what: str, *, typed: bool = False) -> str:
    """``[device: ][what: ][Type: ]<message>``, the device named once (an exception's own
    ``"<device>: "`` prefix moves to the front)."""
    text = str(exc) or type(exc).__name__
    if device and text.startswith(f"{device}: "):
        text = text[len(device) + 2:]
    if typed:
        text = f"{type(exc).__name__}: {text}"
    if what:
        text = f"{what}: {text}"
    return f"{device}: {text}" if device else text


def _gone(exc: BaseException) -> bool:
    """The lab itself was removed (a retry cannot succeed)."""
    seen: BaseException | None = exc
    for _ in range(4):  # the exception, and what it was raised from
        if seen is None:
            return False
        if isinstance(seen, LabGone) or getattr(seen, "gone", False):
            return True
        seen = seen.__cause__
    return False


def _ssh_cause(exc: BaseException) -> str | None:
    """Why an SSH session could not be opened (:func:`ani.ssh_errors.classify_ssh_open`), or None."""
    return getattr(exc, "cause", None) if isinstance(getattr(exc, "cause", None), str) else None


def _retriable(exc: BaseException) -> bool:
    """False when the exception says a retry cannot succeed (``retriable=False``: a refused login,
    an unknown host key)."""
    return getattr(exc, "retriable", True) is not False


def error_result(exc: BaseException, *, device: str | None = None, what: str = "",
                 data: dict[str, Any] | None = None, changed: bool = False) -> ToolResult:
    """The ToolResult of ``exc`` (see the module docstring for the table).

    Raises:
        HostFault: ``exc`` itself when it is one (a program missing, a harness helper down): a
            fault of the host is never mapped to a code the agent would read as its own failure;
            :meth:`ani.adapters.base.BaseAdapter.call` turns it into ``internal`` and a
            ``harness_fault`` event, which makes the run an infrastructure error.
    """
    if isinstance(exc, HostFault):
        raise exc
    from ani.adapters.allowlist import Refused
    from ani.adapters.cli_session import SessionError
    from ani.adapters.netconf_xml import XmlArgError
    from ani.device.outcome import ApplyError
    from ani.intents.errors import IntentError, PoolExhausted
    from ani.netconf.client import RETRIABLE_TAGS, RpcFailed, SessionLost, Unsupported, warning_lines
    from ani.sot.errors import Conflict, DocError, PatchError, SotError, SotPathError, UnknownRevision

    def fail(code: ErrorCode, message: str, retriable: bool = False, extra: dict[str, Any] | None = None) -> ToolResult:
        merged = {**(extra or {}), **(data or {})} or None
        return ToolResult.failure(code, message, retriable=retriable, data=merged, changed=changed)

    if isinstance(exc, AniTimeout):
        return fail(ErrorCode.TIMEOUT, _subject(exc, device, what), True)
    if isinstance(exc, subprocess.TimeoutExpired):
        return fail(ErrorCode.TIMEOUT, _subject(AniTimeout(float(exc.timeout or 0)), device, what), True)
    if isinstance(exc, Refused):
        return fail(ErrorCode.NOT_ALLOWED, exc.message)
    if isinstance(exc, XmlArgError):
        return fail(ErrorCode.INVALID_ARGUMENTS, f"{what}: {exc}" if what else str(exc))
    if isinstance(exc, IntentError):
        where = f" ({exc.path})" if exc.path else ""
        if isinstance(exc, PoolExhausted):
            return fail(ErrorCode.RESOURCE_EXHAUSTED, f"{exc.message}{where}; nothing was sent to any router",
                        extra={"errors": [exc.to_dict()], "pool": exc.pool, "size": exc.size})
        return fail(ErrorCode.INVALID_INTENT,
                    f"refused ({exc.code}){where}: {exc.message}; nothing was sent to any router",
                    extra={"errors": [exc.to_dict()]})
    if isinstance(exc, SotError):
        return _sot(exc, fail, (Conflict, PatchError, DocError, (SotPathError, UnknownRevision)))
    if isinstance(exc, RpcFailed):
        return fail(ErrorCode.COMMAND_FAILED,
                    f"{device or '?'}: {what or exc.op} failed: " + "; ".join(e.describe() for e in exc.errors)
                    + warning_lines(exc.warnings),
                    any(t in RETRIABLE_TAGS for t in exc.tags),
                    extra={"device": device, "errors": [e.to_dict() for e in exc.errors],
                           "warnings": [w.to_dict() for w in exc.warnings]})
    if isinstance(exc, Unsupported):
        return fail(ErrorCode.UNSUPPORTED, _subject(exc, device, ""), extra={"device": device, "missing": exc.missing, **exc.details})
    if isinstance(exc, SessionLost):
        cause = _ssh_cause(exc)
        return fail(ErrorCode.DEVICE_UNREACHABLE, _subject(exc, device, ""), not _gone(exc) and _retriable(exc),
                    extra={"device": device, "outcome_unknown": exc.outcome_unknown, **({"cause": cause} if cause else {})})
    if isinstance(exc, UnknownNode):
        return fail(ErrorCode.UNKNOWN_DEVICE, str(exc))
    if isinstance(exc, (SessionError, ApplyError, LabError, OSError)):
        cause = _ssh_cause(exc)
        return fail(ErrorCode.DEVICE_UNREACHABLE, _subject(exc, device, what), not _gone(exc) and _retriable(exc),
                    extra={"cause": cause} if cause else None)
    return fail(ErrorCode.INTERNAL, _subject(exc, device, what, typed=not isinstance(exc, (AniError, ValueError))))


def _sot(exc: Any, fail: Any, kinds: tuple[type, ...]) -> ToolResult:
    """A source-of-truth error (``ani.sot.errors``)."""
    conflict, patch, doc, path = kinds
    if isinstance(exc, conflict):
        paths = {"paths": exc.paths} if getattr(exc, "paths", None) else {}
        return fail(ErrorCode.CONFLICT, str(exc), True, extra={"expected": exc.expected, "actual": exc.actual, **paths})
    if isinstance(exc, patch):
        return fail(ErrorCode.INVALID_INTENT, f"patch refused, nothing changed: {exc}",
                    extra={"index": exc.index, "op": exc.op, "path": exc.path, "reason": exc.message})
    if isinstance(exc, doc):
        return fail(ErrorCode.INVALID_INTENT, f"document refused, nothing changed: {exc}",
                    extra={"pointer": exc.pointer, "reason": exc.message})
    if isinstance(exc, path):
        return fail(ErrorCode.NOT_FOUND, str(exc))
    msg = str(exc)
    if msg.startswith("unknown revision") or "is not in the history of HEAD" in msg:
        return fail(ErrorCode.NOT_FOUND, msg)
    return fail(ErrorCode.INVALID_ARGUMENTS, msg)  # a retry cannot make it work (not a conflict)
