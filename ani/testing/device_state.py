"""Reading a lab's routers out of band for the conformance suite, and saying how two reads differ.

    state = lab_state(lab)                   # {router: {"frr": (lines...), "nft": (lines...)}}
    print(state_difference(before, after))   # "e1 frr:\\n--- before\\n+++ after\\n..." or ""

:func:`lab_state` reads through the device layer's one reader (:mod:`ani.device.state`: FRR's
running configuration and the nftables ruleset, normalised by ``frr_lines`` / ``nft_lines``),
never through an adapter, so it is what the suite's ``read_device`` fixture returns for a lab of
:class:`ani.lab.Lab` or :class:`ani.testing.FakeLab`. An adapter for real devices gives its own
reader (anything comparable with ``==``; :func:`state_difference` explains mappings of line
sequences best).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ani.host.threads import ContextPool

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["lab_state", "state_difference"]


def lab_state(lab: Lab, routers: Iterable[str] | None = None, *, nft: bool = True,
              timeout: float = 10.0) -> dict[str, dict[str, tuple[str, ...]]]:
    """Every router's state, read out of band, in parallel.

    Args:
        lab: a running lab (:class:`ani.lab.Lab`, :class:`ani.testing.FakeLab`).
        routers: the routers to read (default: all of them).
        nft: read the nftables ruleset too.
        timeout: bound of each read, seconds.

    Returns:
        ``{router: {"frr": lines, "nft": lines}}`` (``nft`` only with ``nft=True``), each a tuple
        of normalised lines: equal iff the configurations are the same.

    Raises:
        ReadError / ReadTimeout (:mod:`ani.device.outcome`): a router could not be read.
    """
    from ani.device.state import frr_lines, nft_lines, read_frr, read_nft

    names = list(lab.routers if routers is None else routers)

    def one(r: str) -> dict[str, tuple[str, ...]]:
        out = {"frr": tuple(frr_lines(read_frr(lab, r, timeout)))}
        if nft:
            out["nft"] = tuple(nft_lines(read_nft(lab, r, timeout)))
        return out

    with ContextPool(max_workers=max(1, min(8, len(names)))) as pool:
        return dict(zip(names, pool.map(one, names), strict=True))


def state_difference(before: Any, after: Any, limit: int = 4000) -> str:
    """What changed from ``before`` to ``after`` ('' when equal): per key of a mapping (nested
    mappings by ``a/b`` paths), a unified diff of line sequences, else both values; cut to
    ``limit`` characters."""
    if before == after:
        return ""
    parts: list[str] = []
    _diff(before, after, "", parts)
    text = "\n".join(parts) or f"before: {before!r}\nafter: {after!r}"
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"


def _diff(a: Any, b: Any, where: str, parts: list[str]) -> None:
    if a == b:
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for k in sorted(set(a) | set(b), key=str):
            key = f"{where}/{k}" if where else str(k)
            if k not in a:
                parts.append(f"{key}: added: {_short(b[k])}")
            elif k not in b:
                parts.append(f"{key}: removed: {_short(a[k])}")
            else:
                _diff(a[k], b[k], key, parts)
        return
    lines_a, lines_b = _lines(a), _lines(b)
    if lines_a is not None and lines_b is not None:
        diff = difflib.unified_diff(lines_a, lines_b, f"{where} before", f"{where} after", lineterm="", n=1)
        parts.append("\n".join(diff))
        return
    parts.append(f"{where}: {_short(a)} -> {_short(b)}")


def _lines(v: Any) -> list[str] | None:
    if isinstance(v, str):
        return v.splitlines()
    if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
        return list(v)
    return None


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 300 else text[:300] + "..."
