"""The bounds of the source of truth and the checks of agent-given values that reach git or the
file system (revisions, commit messages, the size of what a patch creates).

An agent's bad input is never a harness fault: each check raises :class:`SotArgError`
(``invalid_arguments`` in a tool's result) or, for a document that grows too large,
:class:`ani.sot.errors.PatchError` / :class:`DocError` (``invalid_intent``). No message quotes a
value longer than :data:`SHOW_MAX` characters (:func:`show`), nor a file's contents.

Bounds (documented in docs/sot.md, "Bounds"):

- :data:`MAX_FILE_BYTES` (1 MiB): a file of the source of truth as written (UTF-8); a JSON Patch
  whose document grows past it is refused at the operation that crosses it
  (:func:`ani.sot.patch.apply_patch` measures the document as compact JSON after each operation,
  so memory stays within a small multiple of the bound).
- :data:`MAX_OPS` (1000): operations in one JSON Patch.
- :data:`MAX_MESSAGE_BYTES` (16 KiB): a commit message (UTF-8); no control character but
  newline and tab.
- :data:`MAX_REVISION_CHARS` (64): a revision argument. A revision names a commit, never a path:
  ``HEAD`` or 4 to 40 hex digits, optionally followed by ``~N`` / ``^`` / ``^N`` steps
  (``HEAD~2``, ``1a2b3c4^``); anything else (``HEAD:path``, ``..``, ``-option``, ``@{...}``,
  ``:/text``) is :class:`SotArgError`.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ani.sot.errors import SotArgError

__all__ = ["MAX_FILE_BYTES", "MAX_OPS", "MAX_MESSAGE_BYTES", "MAX_REVISION_CHARS", "SHOW_MAX",
           "check_revision", "check_base_revision", "check_message", "show", "utf8"]

MAX_FILE_BYTES = 1024 * 1024
MAX_OPS = 1000
MAX_MESSAGE_BYTES = 16 * 1024
MAX_REVISION_CHARS = 64
#: the longest agent-given value a message quotes (longer ones are cut, with their length)
SHOW_MAX = 80

_REVISION = re.compile(r"(?:HEAD|[0-9a-fA-F]{4,40})(?:~[0-9]{0,6}|\^[0-9]?)*")
_SHA = re.compile(r"[0-9a-fA-F]{7,40}")
REVISION_FORM = ("a revision names a commit: HEAD or a sha from sot_log / sot_list (4 to 40 hex digits), "
                 "optionally followed by ~N or ^ (HEAD~2); never a path, a range or an option")


def show(value: Any, limit: int = SHOW_MAX) -> str:
    """``repr(value)``, cut to ``limit`` characters with the full length named (for messages)."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f"{len(value)} characters" if isinstance(value, str) else type(value).__name__
    return f"{text[:limit]}... ({size})"


def check_revision(revision: Any, what: str = "revision") -> str:
    """``revision`` if it has the form of :data:`REVISION_FORM`, else SotArgError."""
    if not isinstance(revision, str):
        raise SotArgError(f"{what} must be a string ({REVISION_FORM})")
    if len(revision) > MAX_REVISION_CHARS or not _REVISION.fullmatch(revision):
        raise SotArgError(f"invalid {what} {show(revision)}: {REVISION_FORM}")
    return revision


def check_base_revision(revision: Any) -> str:
    """A ``base_revision``: the sha (7 to 40 hex digits) sot_read / sot_list / sot_log reported,
    else SotArgError."""
    if not isinstance(revision, str) or not _SHA.fullmatch(revision):
        raise SotArgError(f"invalid base_revision {show(revision)}: give the revision sot_read / sot_list "
                          "reported (7 to 40 hex digits)")
    return revision.lower()


def check_message(message: Any) -> str:
    """A commit message: text with something besides blanks, at most :data:`MAX_MESSAGE_BYTES`
    in UTF-8, no control character but newline and tab. Raises SotArgError."""
    if not isinstance(message, str) or not message.strip():
        raise SotArgError("a commit needs a message")
    size = len(utf8(message, "the commit message"))
    if size > MAX_MESSAGE_BYTES:
        raise SotArgError(f"the commit message is {size} bytes, at most {MAX_MESSAGE_BYTES}")
    for i, ch in enumerate(message):
        if ch not in "\n\t" and unicodedata.category(ch) == "Cc":
            raise SotArgError(f"the commit message holds a control character (U+{ord(ch):04X} at index {i}): "
                              "only newline and tab are allowed")
    return message


def utf8(text: str, what: str) -> bytes:
    """``text`` encoded as UTF-8; SotArgError when it holds a lone surrogate (valid in JSON's
    ``\\ud800`` escapes, not in a file or a git argument)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise SotArgError(f"{what} is not valid Unicode text (a lone surrogate U+{ord(text[e.start]):04X} "
                          f"at index {e.start})") from None
