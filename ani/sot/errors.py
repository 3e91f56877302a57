"""Errors of the source of truth (``ani.sot``); all derive from :class:`ani.errors.AniError`.

::

    SotError                 base
    +-- DocError             a desired-state document is invalid (``pointer``: JSON Pointer of the problem)
    +-- PatchError           a JSON Patch could not be applied (``index``, ``op``, ``path``)
    +-- Conflict             a change overlaps what another writer committed since its base (``expected``,
    |                        ``actual``, ``paths``), or ``base_revision`` is not in the history
    +-- SotPathError         no such file in the repository / a path outside it
    +-- UnknownRevision      a well-formed revision that names no commit of the history
    +-- SotArgError          an argument of the wrong form or size (a revision naming a path, a commit
                             message too long or holding a control character): ``invalid_arguments``
    +-- SotBusy              another writer held a lock of the repository too long (``seconds``)
"""

from __future__ import annotations

from typing import Any

from ani.errors import AniError, AniTimeout


def _cut(text: str, limit: int = 1000) -> str:
    """``text`` cut to ``limit`` characters (a message never carries an agent's long value whole)."""
    text = str(text)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


class SotError(AniError):
    """Base class of the source-of-truth errors."""

    code = "sot-error"


class DocError(SotError, ValueError):
    """A desired-state document is invalid; ``pointer`` is the JSON Pointer of the problem."""

    code = "invalid-document"

    def __init__(self, pointer: str, message: str) -> None:
        self.pointer = _cut(pointer, 300)  # an agent's key can be long: never echoed whole
        self.message = _cut(message)
        super().__init__(f"{self.pointer or '/'}: {self.message}")


class PatchError(SotError):
    """Operation ``index`` (0-based) of a patch failed; nothing was changed."""

    code = "patch-failed"

    def __init__(self, index: int | None, op: Any, path: str | None, message: str) -> None:
        self.index = index
        self.op = op
        self.path = path
        self.message = message = _cut(message)
        where = f"operation {index} ({op.get('op') if isinstance(op, dict) else op!r} {path})" if index is not None else "patch"
        super().__init__(f"{where}: {message}")


class Conflict(SotError):
    """The patch (or commit) was based on ``expected`` but HEAD is at ``actual`` and the commits
    between changed ``paths`` too (empty when not known, e.g. ``expected`` is no commit of the
    history); ``message`` says what to do (default: read again and retry)."""

    code = "conflict"

    def __init__(self, expected: str, actual: str, message: str | None = None,
                 paths: list[str] | None = None) -> None:
        self.expected = expected
        self.actual = actual
        self.paths = list(paths or [])
        super().__init__(message or f"stale base_revision: expected {expected}, repository is at {actual}; "
                                    "read again and retry")


class SotPathError(SotError):
    code = "no-such-path"


class UnknownRevision(SotError):
    """A revision of the right form that names no commit of the history (``not_found``)."""

    code = "unknown-revision"


class SotArgError(SotError, ValueError):
    """An argument of the wrong form or size: a revision that is not a commit's name, a commit
    message too long or with a control character, text that is not valid Unicode
    (``invalid_arguments``: a retry with the same value cannot succeed)."""

    code = "invalid-arguments"


class SotBusy(SotError, AniTimeout):
    """Another writer of the repository held one of its locks for ``seconds`` (an AniTimeout:
    retrying later may work)."""

    code = "busy"

    def __init__(self, what: str, seconds: float) -> None:
        AniTimeout.__init__(self, seconds, what, f"timeout after {seconds:g} s waiting for {what} "
                                                 "(held by another writer)")
