"""Reading a lab's routers out of band for the conformance suite, and saying how two reads differ.

    state = lab_state(lab)                   # {router: {"frr": (lines...), "nft": (lines...)}}
    print(state_difference(before, after))   # "e1 frr:\\n--- before\\n+++ after\\n..." or ""

:func:`lab_state` reads through the device layer's one reader (:mod:`ani.device.state`: FRR's
running configuration and the nftables ruleset, normalised by ``frr_lines`` / ``nft_lines``),
never through an adapter, so it is what the suite's ``read_device`` fixture returns for a lab of
:class:`ani.lab.Lab` or :class:`ani.testing.FakeLab`. An adapter for real devices gives its own
reader (anything comparable with ``==``; :func:`state_difference` explains mappings of line
sequences best; it is :func:`ani.device.changes.state_difference`, named here for the suite).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ani.device.changes import state_difference
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
