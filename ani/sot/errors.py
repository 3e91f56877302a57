"""Errors of the source of truth (``ani.sot``); all derive from :class:`ani.errors.AniError`.

::

    SotError                 base
    +-- DocError             a desired-state document is invalid (``pointer``: JSON Pointer of the problem)
    +-- PatchError           a JSON Patch could not be applied (``index``, ``op``, ``path``)
    +-- Conflict             ``base_revision`` is stale, or another writer moved HEAD (``expected``, ``actual``)
    +-- SotPathError         no such file in the repository / a path outside it
    +-- SotBusy              another writer held a lock of the repository too long (``seconds``)
"""

from __future__ import annotations

from typing import Any

from ani.errors import AniError, AniTimeout


class SotError(AniError):
    """Base class of the source-of-truth errors."""

    code = "sot-error"


class DocError(SotError, ValueError):
    """A desired-state document is invalid; ``pointer`` is the JSON Pointer of the problem."""

    code = "invalid-document"

    def __init__(self, pointer: str, message: str) -> None:
        self.pointer = pointer
        self.message = message
        super().__init__(f"{pointer or '/'}: {message}")


class PatchError(SotError):
    """Operation ``index`` (0-based) of a patch failed; nothing was changed."""

    code = "patch-failed"

    def __init__(self, index: int | None, op: Any, path: str | None, message: str) -> None:
        self.index = index
        self.op = op
        self.path = path
        self.message = message
        where = f"operation {index} ({op.get('op') if isinstance(op, dict) else op!r} {path})" if index is not None else "patch"
        super().__init__(f"{where}: {message}")


class Conflict(SotError):
    """The patch (or commit) was based on ``expected`` but HEAD is at ``actual``; ``message``
    says what to do (default: read again and retry)."""

    code = "conflict"

    def __init__(self, expected: str, actual: str, message: str | None = None) -> None:
        self.expected = expected
        self.actual = actual
        super().__init__(message or f"stale base_revision: expected {expected}, repository is at {actual}; "
                                    "read again and retry")


class SotPathError(SotError):
    code = "no-such-path"


class SotBusy(SotError, AniTimeout):
    """Another writer of the repository held one of its locks for ``seconds`` (an AniTimeout:
    retrying later may work)."""

    code = "busy"

    def __init__(self, what: str, seconds: float) -> None:
        AniTimeout.__init__(self, seconds, what, f"timeout after {seconds:g} s waiting for {what} "
                                                 "(held by another writer)")
