"""Messages for a name that is not known: a device, a route-map, a service, a file.

Every level answers an unknown name the same way, in one line that names what was asked, the
closest known name and the known ones (issue 14, case 1)::

    >>> unknown("device", "R1", ["c1", "e1", "r1", "r2"])
    "unknown device 'R1'; did you mean 'r1'? (names are case-sensitive); known: c1, e1, r1, r2"
    >>> unknown("route-map", "RM-FOO", ["RM-BAR", "RM-TENANTS"], where="e1")
    "e1: unknown route-map 'RM-FOO'; known: RM-BAR, RM-TENANTS"

**A name in the wrong case is refused, not resolved**, at every level, with the right spelling
as the suggestion. Names are case-sensitive in what the levels drive: FRR's route-map,
prefix-list and peer-group names (``RM-A`` and ``rm-a`` are two route-maps), nftables set
names, the source of truth's file paths (``devices/E1.json`` would be a new file, not
``devices/e1.json``) and a topology may hold two nodes differing only in case. Resolving one
silently at one level and not at another would make the levels differ in more than their
tools; resolving it everywhere would make the trajectory say one name while the device got
another, and would hide the agent's mistake from the run record's ``invalid_calls``. The
refusal costs one call and says exactly what to send instead.

The suggestion: a known name equal to the asked one but for case first, else the closest by
:func:`difflib.get_close_matches` (ratio >= 0.6), else none. Long lists are cut at
:data:`MAX_LISTED` names with the count of the others and where to list them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["MAX_LISTED", "MAX_SHOWN", "hint", "known_list", "shown", "suggest", "unknown"]

#: how many known names a message lists before "... and N more"
MAX_LISTED = 30
#: how many characters of an asked-for name a message quotes (an agent's 100 kB "device name"
#: is not repeated back to it whole, issue 23)
MAX_SHOWN = 80


def shown(name: str) -> str:
    """``repr(name)``, or for a name over :data:`MAX_SHOWN` characters its first ones, cut:
    ``'xxxx...' (100000 characters)``."""
    if len(name) <= MAX_SHOWN:
        return repr(name)
    return f"{name[:MAX_SHOWN]!r}... ({len(name)} characters)"


def suggest(name: str, known: Iterable[str]) -> str | None:
    """The known name ``name`` most likely meant: the same but for case, else the closest
    (difflib ratio >= 0.6), else None. ``name`` itself known: None."""
    names = [str(k) for k in known]
    if name in names:
        return None
    folded = [k for k in names if k.casefold() == name.casefold()]
    if folded:
        return folded[0]
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return close[0] if close else None


def known_list(known: Iterable[str], *, listed_by: str | None = None) -> str:
    """``"a, b, c"`` (in the given order), cut at :data:`MAX_LISTED` with ``" ... and N more"``
    (plus ``" (<listed_by> lists them)"`` when given); ``"none"`` when empty."""
    names = [str(k) for k in known]
    if not names:
        return "none"
    if len(names) <= MAX_LISTED:
        return ", ".join(names)
    more = f" ... and {len(names) - MAX_LISTED} more"
    if listed_by:
        more += f" ({listed_by} lists them)"
    return ", ".join(names[:MAX_LISTED]) + more


def unknown(kind: str, name: str, known: Iterable[str], *, where: str | None = None,
            listed_by: str | None = None) -> str:
    """One line: ``[<where>: ]unknown <kind> '<name>'[; did you mean '<s>'?[ (names are
    case-sensitive)]]; known: <names>``.

    Args:
        kind: what the name names (``device``, ``route-map``, ``service``, ``file``).
        name: the name asked for.
        known: the names that exist, in the order to list them.
        where: the device (or place) the names belong to, prefixed.
        listed_by: the tool that lists them all, said when the list is cut.
    """
    text = f"unknown {kind} {shown(name)}" + hint(name, known, listed_by=listed_by)
    return f"{where}: {text}" if where else text


def hint(name: str, known: Iterable[str], *, listed_by: str | None = None) -> str:
    """The tail of :func:`unknown`, for a message that says "not found" its own way:
    ``"; did you mean '<s>'?[ (names are case-sensitive)]; known: <names>"``."""
    names = [str(k) for k in known]
    best = suggest(name, names)
    text = ""
    if best is not None:
        text += f"; did you mean {best!r}?"
        if best.casefold() == name.casefold():
            text += " (names are case-sensitive)"
    return text + f"; known: {known_list(names, listed_by=listed_by)}"
