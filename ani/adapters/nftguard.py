"""The blocklist for nftables at A0: measure the ruleset change a call made, undo a blocked one.

nftables changes reach the kernel over netlink (``nft``, ``libnftables`` through any language,
a raw socket): there is no entry point in the sandbox to intercept. So, with the blocklist
ablation on A0, the ruleset is read before and after the call (``nft -j list ruleset`` in the
router's namespace, outside the sandbox), the difference is written as the nft commands it
amounts to (:func:`effective_commands`), and if one of them matches a blocklist rule the ruleset
is restored to the one read before (``nft -f``: ``flush ruleset`` + the saved ruleset,
atomically) and the call reports ``blocked`` naming the rule and the command. Whatever the agent
typed (``nft 'flush ruleset'``, ``nft -f file``, a script) is judged by what it did:

- ``nft flush ruleset`` when every table went; ``nft delete table F T`` per removed table;
  ``nft delete chain|set F T N``;
- ``nft flush chain F T C`` for a chain none of whose rules is left, ``nft flush set F T S`` for
  a set none of whose elements is left (whatever was added after);
- ``nft add table F T { flags dormant; }`` for a table made dormant (every rule of it stops);
- ``nft add chain F T C { policy drop; }`` for a chain that existed with another policy;
- ``nft insert rule F T C accept`` for a new rule that accepts every packet (``accept``, or
  ``jump``/``goto`` to a chain whose first unconditional verdict accepts, :func:`accepts_all`;
  ``counter`` and ``log`` beside it change nothing) placed before a rule the chain had: every
  rule after it stops, as with a dormant table.

Judged by identity: a table, chain or set is its handle (deleted and made again under the same
names, it counts as deleted), a rule its handle and its text (``nft replace rule ... handle H``
with other text deletes the rule under H and adds another), so a chain whose rules were all
replaced under their handles was flushed.

A ruleset that cannot be read within :data:`NFT_MAX_BYTES` and :data:`NFT_TIMEOUT_S` fails
closed: after the call it is restored and the call blocked (a flush followed by a
510,000-element set went unjudged before); before the call, the call does not run.

Limits (docs/protocol.md "The blocklist ablation: what it judges"): each call is judged against
the ruleset before it, so original content removed over several calls, each leaving a
placeholder rule or element, is not seen; a rule judged by its statements, not by what its
matches select (``ip saddr 0.0.0.0/0 accept`` is conditional in form, accepts every IPv4 packet);
an accept appended after every rule of a chain whose policy is drop, a new base chain with
policy drop, a new table's chain at the same hook dropping, are not judged; counters and set
elements added by the kernel during the call (dynamic sets) are restored to their values before
the call; a change made and undone within the call is not seen.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable
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


#: ``argv -> host-side argv`` running it inside the router: the lab's ``node_argv`` bound to the
#: router (:meth:`ani.lab.protocol.Lab.node_argv`)
InRouter = Callable[[list[str]], list[str]]


def _nft(in_router: InRouter, args: list[str]) -> tuple[int | None, str, str]:
    res = run_capped(in_router(["nft", *args]), timeout_s=NFT_TIMEOUT_S, max_bytes=NFT_MAX_BYTES)
    return res.exit_status, res.stdout, res.stderr


def read(in_router: InRouter) -> Ruleset | None:
    """The ruleset of the router ``in_router`` runs in, or None if nft failed."""
    rc1, text, _ = _nft(in_router, ["list", "ruleset"])
    # -s: counters and quotas are state that moves with traffic, not a rule's text
    rc2, js, _ = _nft(in_router, ["-s", "-j", "list", "ruleset"])
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
    rules: dict[tuple, set]             # (family, table, chain) -> {(handle, statements as JSON)}
    elems: dict[tuple, set]             # (family, table, set) -> elements (JSON text)
    dormant: frozenset                  # (family, table) with ``flags dormant``
    policy: dict[tuple, str]            # (family, table, chain) -> policy of a base chain
    order: dict[tuple, list]            # (family, table, chain) -> [(handle, statements)] in order


_DORMANT_RE = re.compile(r"^table (\S+) (\S+) \{\n\s*flags [^\n]*\bdormant\b", re.M)


def _index(ruleset: Ruleset) -> _Index:
    ix = _Index({}, {}, {}, {}, {}, frozenset(_DORMANT_RE.findall(ruleset.text)), {}, {})
    for it in ruleset.items:
        if "table" in it:
            t = it["table"]
            ix.tables[(t["family"], t["name"])] = t.get("handle", -1)
        elif "chain" in it:
            c = it["chain"]
            ix.chains[(c["family"], c["table"], c["name"])] = c.get("handle", -1)
            if "policy" in c:
                ix.policy[(c["family"], c["table"], c["name"])] = c["policy"]
        elif "set" in it or "map" in it:
            s = it.get("set") or it.get("map")
            key = (s["family"], s["table"], s["name"])
            ix.sets[key] = s.get("handle", -1)
            ix.elems[key] = {json.dumps(e, sort_keys=True) for e in s.get("elem", [])}
        elif "rule" in it:
            r = it["rule"]
            key, rule = (r["family"], r["table"], r["chain"]), (r.get("handle", -1), _text(r))
            ix.rules.setdefault(key, set()).add(rule)
            ix.order.setdefault(key, []).append(rule)
    return ix


def _text(rule: dict[str, Any]) -> str:
    """A rule's statements and comment as canonical JSON (its text, for identity)."""
    return json.dumps([rule.get("expr", []), rule.get("comment")], sort_keys=True)


#: statements that neither match nor decide (they leave an unconditional rule unconditional)
_NEUTRAL = frozenset({"counter", "log"})
#: how deep jump/goto chains are followed by :func:`accepts_all`
_MAX_DEPTH = 8


def _verdict(text: str) -> dict[str, Any] | None:
    """The verdict of an unconditional rule (statements only neutral ones and one verdict)."""
    stmts = [st for st in json.loads(text)[0] if not (isinstance(st, dict) and set(st) <= _NEUTRAL)]
    if len(stmts) == 1 and isinstance(stmts[0], dict) and len(stmts[0]) == 1 and \
            next(iter(stmts[0])) in ("accept", "drop", "reject", "jump", "goto", "return", "queue"):
        return stmts[0]
    return None


def accepts_all(ix: _Index, table: tuple, text: str, depth: int = 0) -> bool:
    """Whether a rule (its statements ``text``) in ``table`` accepts every packet it sees:
    ``accept``, or ``jump``/``goto`` to a chain of the table whose first unconditional verdict
    does (followed up to :data:`_MAX_DEPTH` chains deep)."""
    verdict = _verdict(text)
    if verdict is None or depth > _MAX_DEPTH:
        return False
    if "accept" in verdict:
        return True
    jump = verdict.get("jump") or verdict.get("goto")
    target = jump.get("target") if isinstance(jump, dict) else None
    if not isinstance(target, str):
        return False
    for _, inner in ix.order.get((*table, target), []):
        if _verdict(inner) is not None:
            return accepts_all(ix, table, inner, depth + 1)
    return False


def _accepts_before_originals(b: _Index, a: _Index, key: tuple) -> bool:
    """A new rule of chain ``key`` that accepts every packet, placed before a rule it had."""
    originals, rules = b.rules.get(key, set()), a.order.get(key, [])
    for i, rule in enumerate(rules):
        if rule in originals and accepts_all(a, key[:2], rule[1]):
            return False  # the chain already accepted everything here
        if rule not in originals and accepts_all(a, key[:2], rule[1]):
            return any(r in originals for r in rules[i + 1:])
    return False


def effective_commands(before: Ruleset, after: Ruleset) -> list[str]:
    """The destructive nft commands the change ``before`` -> ``after`` amounts to (module doc):
    judged by identity (handles; a rule by handle and text), so deleting and re-creating an
    object under the same names is its deletion, a chain or set that lost every rule or element
    it had was flushed whatever was added after, a chain whose policy became drop and a new
    accept-everything rule before the rules a chain had are written as the commands above."""
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
    for key, handle in sorted(b.chains.items()):
        if key[:2] in gone or a.chains.get(key) != handle:
            continue
        if a.policy.get(key) == "drop" and b.policy.get(key, "accept") != "drop":
            out.append("nft add chain {} {} {} {{ policy drop; }}".format(*key))
        if _accepts_before_originals(b, a, key):
            out.append("nft insert rule {} {} {} accept".format(*key))
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


def restore(in_router: InRouter, saved: Ruleset) -> bool:
    """Replace the ruleset of the router ``in_router`` runs in by ``saved`` atomically; True if it
    then reads back equal."""
    fd, path = tempfile.mkstemp(prefix="ani-nft-restore-", suffix=".nft")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write("flush ruleset\n" + saved.text)
        rc, _, _ = _nft(in_router, ["-f", path])
    finally:
        os.unlink(path)
    if rc != 0:
        return False
    now = read(in_router)
    if now is None:
        return False
    n, w = _index(now), _index(saved)
    return (set(n.tables), set(n.chains), set(n.sets), n.dormant) == (set(w.tables), set(w.chains), set(w.sets), w.dormant) \
        and {k: len(v) for k, v in n.rules.items()} == {k: len(v) for k, v in w.rules.items()}
