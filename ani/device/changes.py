"""What changed: the one diff of two router configurations, and the text forms of a difference.

    config_changes(before, after)     # ["- interface lo / description X", "+ ip route 192.0.2.0/24 Null0", ...]
    without_changes(cfg, changes)     # cfg less the leaf lines ``changes`` name
    unified(a_lines, b_lines, "running-config")   # a unified diff, for a person to read
    state_difference(before, after)   # nested mappings of line sequences, for a test's message

:func:`config_changes` is what every "what did this change" of the project is counted in: the
observer's unrequested changes (:mod:`ani.observer.changes`), what a fault wrote
(:mod:`ani.faults.session`), the command score of an imported NetConfBench task
(:mod:`ani.netconfbench.command_score`). How it is computed:

- FRR: the hier-config difference both ways (:class:`ani.device.remediation.FrrDriver`, FRR
  8.4's syntax): every leaf line only ``after`` has is ``+ <block> / <line>``, every one only
  ``before`` has is ``- <block> / <line>`` (a prefix-list entry without its sequence number:
  one numbered 40 where another writer would use 30 is the same change);
- nftables: the sets, elements, forward policy and rules (by their text, not their position)
  only one side has, ``+ nft / ...`` / ``- nft / ...``; lines of the ruleset the model does not
  hold (``DeviceConfig.unmodelled`` starting ``nft / ``) likewise.

What still differs after an apply (running -> intended, in the form FRR prints) is
:func:`ani.device.apply.mismatch`; the kernel's addresses of two reads,
:func:`ani.device.opstate.address_changes`.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ani.device.model import DeviceConfig

__all__ = ["config_changes", "state_difference", "unified", "without_changes"]

_PL_SEQ = re.compile(r"^(ip prefix-list \S+) seq \d+ ")


def _frr_leaves(cfg: DeviceConfig) -> Any:
    from hier_config import get_hconfig

    from ani.device.remediation import FrrDriver, frr_text

    return get_hconfig(FrrDriver(), frr_text(cfg))


def _norm(line: str) -> str:
    return _PL_SEQ.sub(r"\1 ", line)


def _paths(h: Any) -> list[str]:
    return [" / ".join(_norm(p.text) for p in c.lineage()) for c in h.all_children_sorted() if not c.children]


def _nft_lines(cfg: DeviceConfig) -> list[str]:
    from ani.device.firewall import rule_text

    fw = cfg.firewall
    out = [u for u in cfg.unmodelled if u.startswith("nft / ")]
    if fw is None:
        return out
    for name, s in fw.sets.items():
        out.append(f"nft / set {name}")
        out += [f"nft / set {name} / element {e}" for e in s.elements]
    out.append(f"nft / chain forward / policy {fw.forward_policy}")
    out += [f"nft / chain forward / rule {rule_text(r)}" for r in fw.forward_rules]
    return out


def config_changes(before: DeviceConfig, after: DeviceConfig) -> list[str]:
    """The changes ``before`` -> ``after`` (module doc): ``- ...`` lines first, then ``+ ...``;
    [] if equal. Pure."""
    hb, ha = _frr_leaves(before), _frr_leaves(after)
    out = [f"- {p}" for p in _paths(hb.difference(ha))] + [f"+ {p}" for p in _paths(ha.difference(hb))]
    nb, na = Counter(_nft_lines(before)), Counter(_nft_lines(after))
    out += [f"- {ln}" for ln in (nb - na).elements()] + [f"+ {ln}" for ln in (na - nb).elements()]
    return out


def without_changes(cfg: DeviceConfig, changes: Any) -> DeviceConfig:
    """``cfg`` without the FRR leaf lines that the change lines ``changes`` name (their form:
    ``"+ interface lo / description X"`` or ``"- ..."``, the sign not looked at; a prefix-list
    entry matched without its sequence number), and without a block left empty by that:
    e.g. a router's configuration less what a fault wrote into it
    (:attr:`ani.faults.record.FaultRecord.wrote`), so that the run's own changes are what is
    left of :func:`config_changes`. ``nft / ...`` lines are not removed. Pure; ``cfg`` itself is
    returned when nothing matches."""
    from ani.device.parse import parse

    paths = {str(c).partition(" ")[2] for c in changes or ()}
    paths = {p for p in paths if p and not p.startswith("nft / ")}
    h = _frr_leaves(cfg)
    dropped = False
    for child in list(h.all_children_sorted()):
        if not child.children and " / ".join(_norm(p.text) for p in child.lineage()) in paths:
            parent = child.parent
            child.delete()
            dropped = True
            while parent is not None and parent is not h and not parent.children:
                up = parent.parent
                parent.delete()
                parent = up
    if not dropped:
        return cfg
    out = parse("\n".join(c.cisco_style_text() for c in h.all_children_sorted()) + "\n")
    if set(_paths(_frr_leaves(out))) != set(_paths(h)):  # the model could not hold the rest as it was
        return cfg
    return out.model_copy(update={"firewall": cfg.firewall,
                                  "unmodelled": [*out.unmodelled, *(u for u in cfg.unmodelled if u.startswith("nft / "))]})


def unified(a: Sequence[str], b: Sequence[str], name: str, to_name: str | None = None) -> str:
    """A unified diff of the line sequences ``a`` -> ``b`` (headers ``--- {name} (before)`` /
    ``+++ {name} (after)``, or ``--- {name}`` / ``+++ {to_name}`` when ``to_name`` is given),
    every line ending in a newline; '' when they are equal."""
    old, new = (f"{name} (before)", f"{name} (after)") if to_name is None else (name, to_name)
    return "".join(ln if ln.endswith("\n") else ln + "\n"
                   for ln in difflib.unified_diff(list(a), list(b), old, new, lineterm=""))


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
