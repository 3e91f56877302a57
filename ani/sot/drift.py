"""Drift between desired and actual state, and non-convergence detection (pure logic).

:func:`drift` compares two :class:`DeviceConfig` after normalisation, on their desired-state
documents (:func:`ani.sot.format.to_doc`), so FRR's own rendering is not drift:

- line order (``set`` lines of a route-map, list entries, addresses) and explicit defaults
  (distance 1, ``bgp route-map delay-timer 5``, empty interfaces) are normalised by the device
  model's canonical form (the parser already turns the text into structure);
- a peer-group member's own ``remote-as`` is dropped when its group has one (FRR drops the
  member's line then), on both sides.

Each :class:`DriftItem` names a JSON Pointer into the document with the desired and actual
values (``None`` with ``kind`` ``missing`` / ``unexpected`` when one side has no such key).
Arrays (addresses, networks, unmodelled lines, firewall rules) are compared as whole values.

:func:`convergence` / :func:`is_non_convergent` decide, from the drift seen after each apply,
whether a reconciler should stop: the same drift or its inverse came back, or ``max_tries``
(2) applies did not converge.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel

from ani.device.model import DeviceConfig
from ani.sot.format import to_doc
from ani.sot.patch import json_equal, pointer

__all__ = ["DriftItem", "drift", "normalise", "convergence", "is_non_convergent", "Convergence"]

_ABSENT = object()


class DriftItem(BaseModel):
    pointer: str
    kind: Literal["changed", "missing", "unexpected"]  # missing: desired only; unexpected: actual only
    desired: Any = None
    actual: Any = None

    def inverse(self) -> DriftItem:
        kind = {"changed": "changed", "missing": "unexpected", "unexpected": "missing"}[self.kind]
        return DriftItem(pointer=self.pointer, kind=kind, desired=self.actual, actual=self.desired)  # type: ignore[arg-type]

    def key(self) -> tuple:
        return (self.pointer, self.kind, json.dumps(self.desired, sort_keys=True), json.dumps(self.actual, sort_keys=True))


def normalise(cfg: DeviceConfig) -> DeviceConfig:
    """``cfg`` in the form FRR prints it back (canonical, peer-group members' remote-as dropped
    when the group has one)."""
    cfg = cfg.canonical()
    if cfg.bgp is not None:
        d = cfg.model_dump()
        groups = d["bgp"]["peer_groups"]
        for n in d["bgp"]["neighbors"].values():
            g = n.get("peer_group")
            if g is not None and groups.get(g, {}).get("remote_as") is not None:
                n["remote_as"] = None
        cfg = DeviceConfig.model_validate(d)
    return cfg


def drift(desired: DeviceConfig, actual: DeviceConfig) -> list[DriftItem]:
    """The differences between desired and actual, by JSON Pointer, sorted by pointer. Empty if
    they are the same configuration as FRR would print it."""
    out: list[DriftItem] = []
    _walk(to_doc(normalise(desired)), to_doc(normalise(actual)), [], out)
    return sorted(out, key=lambda i: i.pointer)


def _walk(d: Any, a: Any, path: list[str], out: list[DriftItem]) -> None:
    if isinstance(d, dict) and isinstance(a, dict):
        for k in sorted(set(d) | set(a)):
            dv, av = d.get(k, _ABSENT), a.get(k, _ABSENT)
            if av is _ABSENT:
                out.append(DriftItem(pointer=pointer(*path, k), kind="missing", desired=dv))
            elif dv is _ABSENT:
                out.append(DriftItem(pointer=pointer(*path, k), kind="unexpected", actual=av))
            else:
                _walk(dv, av, [*path, k], out)
    elif not json_equal(d, a):
        out.append(DriftItem(pointer=pointer(*path), kind="changed", desired=d, actual=a))


class Convergence(BaseModel):
    status: Literal["converged", "retry", "non-convergent"]
    reason: str
    items: list[DriftItem] = []  # the drift involved (of the last apply)


def _as_items(diff: Any) -> list[DriftItem]:
    return [i if isinstance(i, DriftItem) else DriftItem.model_validate(i) for i in diff]


def convergence(history: list[list[DriftItem]], max_tries: int = 2) -> Convergence:
    """Verdict from ``history``: the drift observed after each apply so far, oldest first.

    - ``converged``: the last drift is empty;
    - ``non-convergent``: the last drift equals an earlier one, or the inverse of an earlier
      one (the apply undid itself), or ``max_tries`` applies left drift;
    - ``retry``: apply once more."""
    if not history:
        return Convergence(status="retry", reason="nothing applied yet")
    last = _as_items(history[-1])
    if not last:
        return Convergence(status="converged", reason=f"no drift after apply {len(history)}")
    key = frozenset(i.key() for i in last)
    inv = frozenset(i.inverse().key() for i in last)
    for n, earlier in enumerate(history[:-1], start=1):
        seen = frozenset(i.key() for i in _as_items(earlier))
        if seen == key:
            return Convergence(status="non-convergent", reason=f"the drift after apply {len(history)} is the same as after apply {n}", items=last)
        if seen == inv:
            return Convergence(status="non-convergent", reason=f"the drift after apply {len(history)} is the inverse of the drift after apply {n}", items=last)
    if len(history) >= max_tries:
        return Convergence(status="non-convergent", reason=f"drift left after {len(history)} applies (at most {max_tries})", items=last)
    return Convergence(status="retry", reason=f"drift after apply {len(history)}", items=last)


def is_non_convergent(history: list[list[DriftItem]], max_tries: int = 2) -> bool:
    """True when a reconciler must stop with status ``non-convergent`` (see :func:`convergence`)."""
    return convergence(history, max_tries).status == "non-convergent"
