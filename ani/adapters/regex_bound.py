"""A bound on the regular expressions an agent can hand FRR, before FRR compiles them.

FRR compiles the agent's text with glibc's ``regcomp`` (POSIX extended syntax) in ``find REGEX``
(vtysh itself), ``show ... | include REGEX`` (vtysh), ``bgp as-path access-list NAME permit
REGEX``, ``bgp community-list expanded`` and its large/extended twins, ``show bgp ... regexp
REGEX`` (bgpd). glibc writes out every counted repetition ``X{m,n}`` as ``n`` copies of ``X``,
so nested counts multiply, and the copies' closures grow with the square of ``n``. Measured
(FRR 8.4.4, glibc 2.36): ``(((.{1,100}){1,100}){1,100})`` took the broker's vtysh to 1.1 GB
(``find``) and bgpd from 22 MB to 1.16 GB (as-path access-list, kept afterwards);
``regcomp`` alone: ``.{1,1000}`` 8 MB, ``(.{1,100}){1,100}`` 12 MB, ``.{1,32767}`` 8.4 GB.

**The rule** (:func:`check`): read as an extended regular expression, writing out the text's
counted repetitions may add at most :data:`MAX_COPIES` (255, POSIX's least ``RE_DUP_MAX``) atoms
to the atoms as written (:func:`copies`). The atoms written out are the sum over the text's
atoms (a character, ``.``, a bracket expression, an escape; ``_``, which bgpd writes out as
``(^|[,{}() ]|$)``, counts 7) of the product of the upper bounds of the counted repetitions
around it (``{m,n}`` counts ``n``, ``{m}`` and ``{m,}`` count ``m`` and ``m + 1``; ``*``, ``+``,
``?`` count 1: glibc does not copy for them). ``.{1,256}`` is the largest single count taken.
Measured in bgpd (as-path access-lists, kept while configured): ``.{1,1001}`` 8 MB each,
``.{1,257}`` 0.55 MB, ``(.{1,16}){1,16}`` 85 kB; so one line stays under ~0.6 MB. The bound is
per line: many such lines add up, and that is bounded by the router's memory bound (the
per-router cgroup of FRR's daemons and the broker's vtysh), not here. A line is at most 4,095
bytes (:data:`ani.adapters.vtybroker.MAX_LINE_BYTES`), so the atoms as written are bounded too.

The rule looks at the whole line, whatever the command: FRR's abbreviations (``sh ip b reg
...``, ``fi ...``) then need no parsing, and text that is not a regular expression has no
counted repetitions. Unbalanced parentheses and a ``{`` that does not open a valid count are
read as literals (as glibc does); the basic syntax's ``\\( \\)`` and ``\\{m,n\\}`` are counted
too (an over-estimate in the extended syntax, never an under-estimate).
"""

from __future__ import annotations

import re

#: at most this many atoms added by writing out the counted repetitions (see the module doc):
#: POSIX's least RE_DUP_MAX, so every count a portable regular expression may use passes alone
MAX_COPIES = 255
#: counts above this are read as this (glibc refuses a count over RE_DUP_MAX, 32767, anyway):
#: keeps the products small whatever the digits
MAX_COUNT = 1_000_000
#: bgpd writes an as-path regex's ``_`` out as ``(^|[,{}() ]|$)``: 7 atoms
UNDERSCORE_ATOMS = 7

#: a counted repetition as glibc's ``fetch_number`` reads it: any number of digits (leading
#: zeros too: ``{0000001,0000100}`` is ``{1,100}``), the lower bound may be left out (``{,100}``
#: is ``{0,100}``), ``\{ \}`` in the basic syntax
_COUNT_RE = re.compile(r"\\?\{(\d*)(,(\d*))?\\?\}")


def _number(digits: str) -> int:
    """The value of a run of digits (a line is at most 4,095 bytes, so no more digits than that:
    read without Python's int-from-string limit)."""
    return sum(int(d) * 10 ** k for k, d in enumerate(reversed(digits.lstrip("0"))))


def _count_at(text: str, i: int) -> tuple[int, int] | None:
    """(multiplier, length) of a counted repetition ``{m}``/``{m,}``/``{m,n}``/``{,n}`` at
    ``text[i]`` (``{}`` and ``{,}`` name no count: a literal, or glibc's ``*``: multiplier 1)."""
    m = _COUNT_RE.match(text, i)
    if m is None or not (m.group(1) or m.group(3)):
        return None if m is None else (1, m.end() - i)
    lo = _number(m.group(1)) if m.group(1) else 0
    if m.group(2) is None:
        mult = lo
    elif m.group(3):
        mult = _number(m.group(3))
    else:
        mult = lo + 1
    return min(max(mult, 1), MAX_COUNT), m.end() - i


def _bracket_end(text: str, i: int) -> int:
    """Index after the bracket expression starting at ``text[i] == '['`` (or len(text))."""
    j = i + 1
    if text[j : j + 1] == "^":
        j += 1
    if text[j : j + 1] == "]":
        j += 1
    while j < len(text):
        if text[j] == "[" and text[j + 1 : j + 2] in (":", ".", "="):  # [:alpha:] [.x.] [=x=]
            close = text.find(text[j + 1] + "]", j + 2)
            if close == -1:
                return len(text)
            j = close + 2
        elif text[j] == "]":
            return j + 1
        else:
            j += 1
    return len(text)


def expanded_atoms(text: str, *, counts: bool = True) -> int:
    """How many atoms ``text`` makes once its counted repetitions are written out (module doc).

    >>> expanded_atoms("^65000_[0-9]{1,5}$")
    17
    >>> expanded_atoms("(((.{1,100}){1,100}){1,100})")
    1000000
    """
    # a stack of groups; each holds the atoms counted so far in it; ``last`` is the size of
    # the last item (atom or closed group) a count applies to
    stack: list[int] = [0]
    last = 0
    i = 0
    while i < len(text):
        c = text[i]
        cnt = _count_at(text, i) if c in "{\\" else None
        if cnt is not None and last:
            mult, n = cnt if counts else (1, cnt[1])
            stack[-1] += last * (mult - 1)
            last *= mult
            i += n
            continue
        group = text[i : i + 2] if c == "\\" else c  # \( \): the basic syntax's groups
        if group in ("(", "\\("):
            stack.append(0)
            last = 0
            i += len(group)
            continue
        if group in (")", "\\)") and len(stack) > 1:
            inner = stack.pop()
            stack[-1] += inner
            last = inner
            i += len(group)
            continue
        if c in "*+?|^$":
            if c == "|":
                last = 0
            i += 1
            continue
        if c == "[":
            i = _bracket_end(text, i)
        elif c == "\\" and i + 1 < len(text):
            i += 2
        else:
            i += 1
        last = UNDERSCORE_ATOMS if c == "_" else 1
        stack[-1] += last
    return sum(stack)


def copies(text: str) -> int:
    """The atoms ``text``'s counted repetitions add to the atoms as written (module doc).

    >>> copies("^65000_[0-9]{1,5}$"), copies("(((.{1,100}){1,100}){1,100})"), copies("no counts")
    (4, 999999, 0)
    """
    return expanded_atoms(text) - expanded_atoms(text, counts=False)


def check(text: str) -> str | None:
    """None if ``text`` is within the bound, else the reason (no part of ``text`` quoted)."""
    n = copies(text)
    if n <= MAX_COPIES:
        return None
    return (f"a regular expression whose counted repetitions write out {n:,} more atoms "
            f"(at most {MAX_COPIES:,}: glibc's regcomp copies X{{m,n}} n times, so nested "
            "counts take FRR's memory past any bound)")
