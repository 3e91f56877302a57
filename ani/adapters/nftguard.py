"""The blocklist for nftables at A0: measure the ruleset change a call made, undo a blocked one.

nftables changes reach the kernel over netlink (``nft``, ``libnftables`` through any language,
a raw socket): there is no entry point in the sandbox to intercept. So, with the blocklist
ablation on A0, the ruleset is read before and after the call (``nft -j list ruleset`` in the
router's namespace, outside the sandbox), the difference is written as the nft commands it
amounts to (:func:`effective_commands`: ``nft flush ruleset`` when every table went, ``nft
delete table F T`` per removed table, ``nft delete chain|set F T N``, ``nft flush chain F T C``
for a chain that lost all its rules, ``nft flush set F T S`` for a set that lost all its
elements, ``nft add table F T { flags dormant; }`` for a table made dormant, which stops every
rule of it), judged by identity (an object deleted and made again under the same names has
another handle: it counts as deleted; a chain that lost every rule it had was flushed whatever
was added after), and if one of them matches a blocklist rule the ruleset is restored to the one read
before (``nft -f``: ``flush ruleset`` + the saved ruleset, atomically) and the call reports
``blocked`` naming the rule and the command. Whatever the agent typed (``nft 'flush ruleset'``,
``nft -f file``, a script) is judged by what it did.

A ruleset that cannot be read within :data:`NFT_MAX_BYTES` and :data:`NFT_TIMEOUT_S` fails
closed: after the call it is restored and the call blocked (a flush followed by a
510,000-element set went unjudged before); before the call, the call does not run.

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


@dataclass(frozen=True)
class _Index:
    """One reading indexed by identity: an object deleted and made again under the same names
    has another handle (tables: a new handle; chains, sets, rules: handles within the table)."""

    tables: dict[tuple, int]            # (family, table) -> handle
    chains: dict[tuple, int]            # (family, table, chain) -> handle
    sets: dict[tuple, int]              # (family, table, set) -> handle
    rules: dict[tuple, set]             # (family, table, chain) -> rule handles
    elems: dict[tuple, set]             # (family, table, set) -> elements (JSON text)
    dormant: frozenset                  # (family, table) with ``flags dormant``


_DORMANT_RE = re.compile(r"^table (\S+) (\S+) \{\n\s*flags [^\n]*\bdormant\b", re.M)


def _index(ruleset: Ruleset) -> _Index:
    ix = _Index({}, {}, {}, {}, {}, frozenset(_DORMANT_RE.findall(ruleset.text)))
    for it in ruleset.items:
        if "table" in it:
            t = it["table"]
            ix.tables[(t["family"], t["name"])] = t.get("handle", -1)
        elif "chain" in it:
            c = it["chain"]
            ix.chains[(c["family"], c["table"], c["name"])] = c.get("handle", -1)
        elif "set" in it or "map" in it:
            s = it.get("set") or it.get("map")
            key = (s["family"], s["table"], s["name"])
            ix.sets[key] = s.get("handle", -1)
            ix.elems[key] = {json.dumps(e, sort_keys=True) for e in s.get("elem", [])}
        elif "rule" in it:
            r = it["rule"]
            ix.rules.setdefault((r["family"], r["table"], r["chain"]), set()).add(r.get("handle", -1))
    return ix


def effective_commands(before: Ruleset, after: Ruleset) -> list[str]:
    """The destructive nft commands the change ``before`` -> ``after`` amounts to (module doc):
    judged by identity (handles), so deleting and re-creating an object under the same names is
    its deletion, and a chain or set that lost every rule or element it had was flushed
    whatever was added after."""
    b, a = _index(before), _index(after)
    out: list[str] = []
    if b.tables and not a.tables:
        out.append("nft flush ruleset")
    gone = {t for t, h in b.tables.items() if a.tables.get(t) != h}  # deleted (maybe re-created)
    out += [f"nft delete table {f} {n}" for f, n in sorted(gone)]
    out += [f"nft add table {f} {n} {{ flags dormant; }}" for f, n in sorted(a.dormant - b.dormant)
            if (f, n) in b.tables and (f, n) not in gone]
    for kind, objs0, objs1 in (("chain", b.chains, a.chains), ("set", b.sets, a.sets)):
        for key, h in sorted(objs0.items()):
            if key[:2] not in gone and objs1.get(key) != h:
                out.append("nft delete {} {} {} {}".format(kind, *key))
    for key, handles in sorted(b.rules.items()):
        if key[:2] not in gone and a.chains.get(key) == b.chains.get(key) and handles and \
                not handles & a.rules.get(key, set()):
            out.append("nft flush chain {} {} {}".format(*key))
    for key, elems in sorted(b.elems.items()):
        if key[:2] not in gone and a.sets.get(key) == b.sets.get(key) and elems and \
                not elems & a.elems.get(key, set()):
            out.append("nft flush set {} {} {}".format(*key))
    return out


#: the "rule" a change whose result cannot be read is refused under (fail closed)
UNREADABLE_RULE = "nftguard: the ruleset must stay readable"


def unreadable_reason() -> str:
    """Why a ruleset that cannot be read counts as blocked (no part of the ruleset quoted)."""
    return (f"the ruleset could not be read within {NFT_MAX_BYTES:,} bytes and {NFT_TIMEOUT_S:g} s, "
            "so what the call did to the firewall cannot be judged")


def blocked_change(
    before: Ruleset, after: Ruleset | None, rules: list[tuple[re.Pattern[str], str]]
) -> tuple[str, str, str] | None:
    """(command, rule pattern, reason) of the first blocklisted command the change amounts to;
    an ``after`` that could not be read (None: e.g. a flush then a 510,000-element set, past
    :data:`NFT_MAX_BYTES`) is blocked too (fail closed: it is restored to ``before``)."""
    if after is None:
        return "nft list ruleset", UNREADABLE_RULE, unreadable_reason()
    for cmd in effective_commands(before, after):
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
    if now is None:
        return False
    n, w = _index(now), _index(saved)
    return (set(n.tables), set(n.chains), set(n.sets), n.dormant) == (set(w.tables), set(w.chains), set(w.sets), w.dormant) \
        and {k: len(v) for k, v in n.rules.items()} == {k: len(v) for k, v in w.rules.items()}
