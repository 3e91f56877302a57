"""How a ``command`` check's expected text is matched against the command output.

A NetConfBench testcase's ``expected_output`` is, in the draft's words, a "regular expression"
(§4.3), with no flags said. :class:`OutputMatch` states them::

    {"syntax": "regex", "find": "search", "flags": ["MULTILINE", "DOTALL"], "verbatim": true}

- ``syntax``: ``regex`` (Python :mod:`re`) or ``text`` (the expected output is plain text:
  nothing is special in it).
- ``find``: ``search`` (a match anywhere in the output) or ``fullmatch`` (the whole output,
  surrounding whitespace ignored).
- ``flags``: :mod:`re` flags by name, of :data:`FLAG_NAMES` (``MULTILINE``: ``^`` / ``$`` at
  each line; ``DOTALL``: ``.`` matches a line break too; ``IGNORECASE``).
- ``verbatim``: with ``regex``, the check passes too when the expected output occurs in the output
  as plain text (``S 203.0.113.0/30 [1/0] via 192.0.2.2``: as a regex ``[1/0]`` is one
  character of three, so the draft's own example never matches the output it was copied from).

:data:`NCB_DEFAULT` (the default of a NetConfBench testcase) is what the draft's examples need:
``search`` because its ``expected_output`` is one line of a longer output (§4.3's
``S 203.0.113.0/30 [1/0] via 192.0.2.2`` for ``show ip route 203.0.113.0 255.255.255.252``,
which prints a "Routing entry" block of several lines); ``DOTALL`` because a pattern spanning
the lines of that block (``Known via "static".*via 192\\.0\\.2\\.2``) means ``.*`` to cross them;
``MULTILINE`` so ``^`` / ``$`` anchor at lines (``^ip route ...$`` in ``show running-config``);
``verbatim`` for output pasted unescaped. :data:`LEGACY` is the observer's own ``command`` check
default (``search``, ``MULTILINE``), kept for scenario files.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["FLAG_NAMES", "LEGACY", "NCB_DEFAULT", "OutputMatch", "find_expected"]

#: the ``re`` flags a match may name
FLAG_NAMES = ("MULTILINE", "DOTALL", "IGNORECASE")


class OutputMatch(BaseModel):
    """How expected text is found in output (module doc). Raises ``ValueError`` (via pydantic)
    for a flag not in :data:`FLAG_NAMES` or named twice."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    syntax: Literal["regex", "text"] = "regex"
    find: Literal["search", "fullmatch"] = "search"
    flags: list[Literal[FLAG_NAMES]] = Field(default_factory=lambda: ["MULTILINE", "DOTALL"])  # type: ignore[valid-type]
    verbatim: bool = True

    @field_validator("flags")
    @classmethod
    def _once(cls, flags: list[str]) -> list[str]:
        dup = sorted({f for f in flags if flags.count(f) > 1})
        if dup:
            raise ValueError(f"{', '.join(dup)} named twice")
        return flags

    def re_flags(self) -> int:
        """The :mod:`re` flags, or-ed (0 for none)."""
        out = 0
        for name in self.flags:
            out |= getattr(re, name)
        return out

    def compile(self, pattern: str) -> re.Pattern[str] | None:
        """``pattern`` compiled with :meth:`re_flags` (None for ``syntax: text``). Raises
        ``ValueError`` ``"not a valid regular expression: ..."``."""
        if self.syntax == "text":
            return None
        try:
            return re.compile(pattern, self.re_flags())
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None


#: a NetConfBench testcase's default (module doc)
NCB_DEFAULT = OutputMatch()
#: the observer's ``command`` check without a ``match``: ``re.search`` with ``re.MULTILINE``
LEGACY = OutputMatch(flags=["MULTILINE"], verbatim=False)


def _text_found(expected: str, output: str, whole: bool, fold: bool) -> str | None:
    e, o = (expected.casefold(), output.casefold()) if fold else (expected, output)
    if whole:
        return output.strip() if o.strip() == e.strip() else None
    at = o.find(e)
    return output[at:at + len(expected)] if at >= 0 else None


def find_expected(expected: str, output: str, match: OutputMatch = NCB_DEFAULT) -> str | None:
    """The part of ``output`` that matches ``expected`` under ``match`` (the whole output for
    ``fullmatch``), or None when it does not. Raises ``ValueError`` for a regex that does not
    compile."""
    fold = "IGNORECASE" in match.flags
    whole = match.find == "fullmatch"
    rx = match.compile(expected)
    if rx is not None:
        m = rx.fullmatch(output.strip()) if whole else rx.search(output)
        if m is not None:
            return m.group(0)
        if not match.verbatim:
            return None
    return _text_found(expected, output, whole, fold)
