"""The blocklist for nftables at A0: measure the ruleset change a call made, undo a blocked one.

nftables changes reach the kernel over netlink (``nft``, ``libnftables`` through any language,
a raw socket): there is no entry point in the sandbox to intercept. So, with the blocklist
ablation on A0, the ruleset is read before and after the call (``nft -j list ruleset`` in the
router's namespace, outside the sandbox), the difference is written as the nft commands it
amounts to (:func:`effective_commands`: ``nft flush ruleset`` when every table went, ``nft
delete table F T`` per removed table, ``nft delete chain|set F T N``, ``nft flush chain F T C``
for a chain that lost all its rules, ``nft flush set F T S`` for a set that lost all its
elements), and if one of them matches a blocklist rule the ruleset is restored to the one read
before (``nft -f``: ``flush ruleset`` + the saved ruleset, atomically) and the call reports
``blocked`` naming the rule and the command. Whatever the agent typed (``nft 'flush ruleset'``,
``nft -f file``, a script) is judged by what it did.

Limits: counters and set elements added by the kernel during the call (dynamic sets) are
restored to their values before the call; a change made and undone within the call is not seen.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Any

from ani.adapters.sandbox import run_capped

#: bound on each nft run, seconds
NFT_TIMEOUT_S = 5.0
NFT_MAX_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class Ruleset:
    """One reading: ``text`` (``nft list ruleset``, restorable) and ``items`` (``nft -j``)."""

    text: str
    items: list[dict[str, Any]]


def _nft(netns: str, args: list[str]) -> tuple[int | None, str, str]:
    res = run_capped(["ip", "netns", "exec", netns, "nft", *args], timeout_s=NFT_TIMEOUT_S, max_bytes=NFT_MAX_BYTES)
    return res.exit_status, res.stdout, res.stderr


def read(netns: str) -> Ruleset | None:
    """The ruleset of ``netns``, or None if nft failed."""
    rc1, text, _ = _nft(netns, ["list", "ruleset"])
    rc2, js, _ = _nft(netns, ["-j", "list", "ruleset"])
    if rc1 != 0 or rc2 != 0:
        return None
    try:
        items = json.loads(js or '{"nftables": []}').get("nftables", [])
    except ValueError:
        return None
    return Ruleset(text, [i for i in items if isinstance(i, dict) and "metainfo" not in i])


def _index(items: list[dict[str, Any]]) -> tuple[set, set, set, dict, dict]:
    tables, chains, sets = set(), set(), set()
    rules: dict[tuple, int] = {}
    elems: dict[tuple, int] = {}
    for it in items:
        if "table" in it:
            t = it["table"]
            tables.add((t["family"], t["name"]))
        elif "chain" in it:
            c = it["chain"]
            chains.add((c["family"], c["table"], c["name"]))
        elif "set" in it or "map" in it:
            s = it.get("set") or it.get("map")
            key = (s["family"], s["table"], s["name"])
            sets.add(key)
            elems[key] = len(s.get("elem", []))
        elif "rule" in it:
            r = it["rule"]
            key = (r["family"], r["table"], r["chain"])
            rules[key] = rules.get(key, 0) + 1
    return tables, chains, sets, rules, elems


def effective_commands(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[str]:
    """The destructive nft commands the change ``before`` -> ``after`` amounts to (see module)."""
    t0, c0, s0, r0, e0 = _index(before)
    t1, c1, s1, r1, e1 = _index(after)
    out: list[str] = []
    if t0 and not t1:
        out.append("nft flush ruleset")
    out += [f"nft delete table {f} {n}" for f, n in sorted(t0 - t1)]
    for f, t, n in sorted(c0 - c1):
        if (f, t) in t1:
            out.append(f"nft delete chain {f} {t} {n}")
    for f, t, n in sorted(s0 - s1):
        if (f, t) in t1:
            out.append(f"nft delete set {f} {t} {n}")
    for key in sorted(c0 & c1):
        if r0.get(key, 0) > 0 and r1.get(key, 0) == 0:
            out.append("nft flush chain {} {} {}".format(*key))
    for key in sorted(s0 & s1):
        if e0.get(key, 0) > 0 and e1.get(key, 0) == 0:
            out.append("nft flush set {} {} {}".format(*key))
    return out


def blocked_change(
    before: Ruleset, after: Ruleset, rules: list[tuple[re.Pattern[str], str]]
) -> tuple[str, str, str] | None:
    """(command, rule pattern, reason) of the first blocklisted command the change amounts to."""
    for cmd in effective_commands(before.items, after.items):
        for rx, reason in rules:
            if rx.search(cmd):
                return cmd, rx.pattern, reason
    return None


def restore(netns: str, saved: Ruleset) -> bool:
    """Replace ``netns``'s ruleset by ``saved`` atomically; True if it then reads back equal."""
    fd, path = tempfile.mkstemp(prefix="ani-nft-restore-", suffix=".nft")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write("flush ruleset\n" + saved.text)
        rc, _, _ = _nft(netns, ["-f", path])
    finally:
        os.unlink(path)
    if rc != 0:
        return False
    now = read(netns)
    return now is not None and _index(now.items)[:4] == _index(saved.items)[:4]
