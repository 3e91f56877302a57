"""nftables changes between two firewalls of the device model, as ``nft`` commands.

    cmds = nft_commands(running.firewall, intended.firewall, handles)   # pure
    # ["add element inet fw tenant_blue { 198.19.4.0/24 }",
    #  "delete element inet fw tenant_red { 198.18.24.0/24 }", ...]
    handles = forward_handles(nft_json)   # `nft -j list ruleset` -> handles of chain forward

Each command is an ``nft`` command line without the leading ``nft`` (A1's ``update_config``
takes it as ``nft <command>``; A0 puts them into one ``nft -f`` script, which nft applies as one
transaction). Only what changed is touched, in this order: rules deleted (by handle; before the
sets they match go), elements deleted (before adding: an interval set refuses an element that
overlaps one still there), sets added, elements added, rules inserted at their place (``add rule
... position H`` after a kept rule of handle H, ``insert rule ... position H`` before one, or
appended when no rule is kept), the chain's policy, sets deleted. A firewall that appears or
disappears as a whole is ``add table`` + its content, or ``delete table inet fw``.

Rule positions come from a longest-matching-blocks alignment (:class:`difflib.SequenceMatcher`)
of the rules' texts, so a rule added in the middle of the chain is one insertion, not a rewrite.

Which of these a level can send is the level's business: A1's allowlist (``adapters/frr.yaml``)
has element and rule changes and table / set deletion, not ``add set``, ``add table`` or a policy
change, and refuses the call naming the command.
"""

from __future__ import annotations

import json
from difflib import SequenceMatcher
from typing import Any

from ani.device.firewall import CHAIN, FAMILY, TABLE, rule_text
from ani.device.model import Firewall, FirewallSet

__all__ = ["forward_handles", "nft_commands"]

_T = f"{FAMILY} {TABLE}"


def _elements(elems: list[Any]) -> str:
    return "{ " + ", ".join(str(e) for e in elems) + " }"


def _set_lines(name: str, s: FirewallSet) -> list[str]:
    out = [f"add set {_T} {name} {{ type ipv4_addr; flags interval; }}"]
    if s.elements:
        out.append(f"add element {_T} {name} {_elements(s.elements)}")
    return out


def forward_handles(doc: dict[str, Any] | str) -> list[int]:
    """The handles of chain ``forward`` of ``table inet fw``, in chain order, from ``nft -j list
    ruleset`` (or ``nft -j list chain inet fw forward``) output. Raises ValueError if ``doc`` is
    not nft JSON."""
    if isinstance(doc, str):
        doc = json.loads(doc)
    if not isinstance(doc, dict) or not isinstance(doc.get("nftables"), list):
        raise ValueError("not an nft JSON ruleset (no 'nftables' list)")
    out = []
    for item in doc["nftables"]:
        rule = item.get("rule") if isinstance(item, dict) else None
        if (isinstance(rule, dict) and rule.get("family") == FAMILY and rule.get("table") == TABLE
                and rule.get("chain") == CHAIN):
            out.append(int(rule["handle"]))
    return out


def nft_commands(before: Firewall | None, after: Firewall | None, handles: list[int] | None = None) -> list[str]:
    """The commands that turn ``before`` into ``after`` (module doc); [] if equal.

    ``handles``: the nft handles of ``before.forward_rules`` in order (:func:`forward_handles`);
    needed only when rules are deleted or inserted next to kept ones. Raises ValueError if they
    are needed and missing or do not match the rules."""
    if before == after:
        return []
    if after is None:
        return [f"delete table {_T}"]
    if before is None:
        out = [f"add table {_T}"]
        for name, s in after.sets.items():
            out += _set_lines(name, s)
        out.append(f"add chain {_T} {CHAIN} {{ type filter hook forward priority 0; policy {after.forward_policy}; }}")
        out += [f"add rule {_T} {CHAIN} {rule_text(r)}" for r in after.forward_rules]
        return out

    del_rules, add_rules = _rule_commands(before, after, handles)
    out = list(del_rules)
    for name, s in before.sets.items():
        if name in after.sets:
            keep = set(after.sets[name].elements)
            gone = [e for e in s.elements if e not in keep]
            if gone:
                out.append(f"delete element {_T} {name} {_elements(gone)}")
    for name, s in after.sets.items():
        if name not in before.sets:
            out += _set_lines(name, s)
        else:
            had = set(before.sets[name].elements)
            new = [e for e in s.elements if e not in had]
            if new:
                out.append(f"add element {_T} {name} {_elements(new)}")
    out += add_rules
    if before.forward_policy != after.forward_policy:
        out.append(f"chain {_T} {CHAIN} {{ policy {after.forward_policy}; }}")
    out += [f"delete set {_T} {name}" for name in before.sets if name not in after.sets]
    return out


def _rule_commands(before: Firewall, after: Firewall, handles: list[int] | None) -> tuple[list[str], list[str]]:
    """(deletions, insertions) of chain forward's rules."""
    old = [rule_text(r) for r in before.forward_rules]
    new = [rule_text(r) for r in after.forward_rules]
    if old == new:
        return [], []
    if handles is None or len(handles) != len(old):
        raise ValueError(f"the handles of chain {CHAIN}'s {len(old)} rule(s) are needed to change its rules "
                         f"(got {'none' if handles is None else len(handles)})")
    dels: list[str] = []
    adds: list[str] = []
    ops = SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    kept = any(tag == "equal" for tag, *_ in ops)
    for tag, i1, i2, j1, j2 in ops:
        if tag in ("delete", "replace"):
            dels += [f"delete rule {_T} {CHAIN} handle {h}" for h in handles[i1:i2]]
        if tag not in ("insert", "replace"):
            continue
        rules = new[j1:j2]
        if not kept:
            adds += [f"add rule {_T} {CHAIN} {r}" for r in rules]
        elif i1 > 0:  # after the kept rule before the gap: each right after it, so in reverse
            adds += [f"add rule {_T} {CHAIN} position {handles[i1 - 1]} {r}" for r in reversed(rules)]
        else:  # at the head: each right before the first kept rule, in order
            adds += [f"insert rule {_T} {CHAIN} position {handles[i2]} {r}" for r in rules]
    return dels, adds
