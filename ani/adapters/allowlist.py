"""The A1 allowlist: input sanitising, grammar matching and the static context check.

Everything here is pure (no device I/O) and runs *before* anything is sent.

Sanitising (:func:`sanitise`), per command item:

- one command per item; the item must be a non-empty string of at most ``max_length`` characters;
- only printable ASCII (0x20-0x7e): every control character (C0 incl. ``\\t \\n \\r``, DEL, C1
  incl. U+0085) and every non-ASCII character (U+2028/U+2029 line/paragraph separators,
  zero-width and bidi characters, ...) is refused. Tabs are refused too: FRR never needs them;
- the substrings ``;``, ``|``, ``&`` (so ``&&``), backtick, ``$(``, ``${``, ``\\``, ``<``, ``>``,
  and ``?`` (interactive vtysh's help key: it is never sent, so the line would change silently);
- the vtysh prefixes ``do `` (exec-from-config) and ``start-shell``.

Negations: a rule marked ``negatable`` also permits ``no <statement>`` with its arguments; a
rule naming a shorter ``negation`` (FRR refuses ``no description <text>``, takes
``no description``) is not negatable, and :func:`plan_config` refuses its long negation with a
message naming the accepted one.

Comments: in :func:`plan_config`, an item starting with ``!`` or ``#`` is a comment and is
never sent (status ``success``, message "comment, not sent"); :func:`check_show` refuses them.

Context check (:func:`plan_config`): each allowlisted statement declares the blocks it is
valid in (``global``, ``bgp`` = ``router bgp N``, ``bgp-af4u`` / ``bgp-af4m`` / ``bgp-af6u`` /
``bgp-af6m`` = ``address-family ipv4|ipv6 unicast|multicast`` inside it, one per FRR node, each
with exactly the statements FRR takes there, ``ospf``, ``interface``, ``route-map``). A statement valid in an enclosing block closes the
inner blocks (FRR's own rule: vtysh walks up the tree); the adapter sends the ``exit`` lines
explicitly. A statement whose block is not open is refused and nothing is applied; when the
block was closed by an earlier line (e.g. a global ``ip prefix-list`` between two lines of a
``router bgp`` block), the message names both lines. A statement of ``router bgp`` that FRR
applies to ipv4 unicast (``network 10.99.0.0/16``, ``neighbor X weight 9``) is refused where it
would leave another address-family block, or after a line that left one by walking up: FRR
would apply it to ipv4 unicast, not to the block the agent opened (:func:`_refuse_misapplied`).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Literal

from ani.adapters.platform import CompiledStatement, Platform
from ani.errors import AdapterError


class Refused(AdapterError):
    """A command item was refused before anything was sent.

    Attributes:
        index: 0-based position of the item in the call's command list (0 for a single command).
        command: the item as received.
        reason: why, for the agent.
    """

    def __init__(self, index: int, command: str, reason: str) -> None:
        self.index = index
        self.command = command
        self.reason = reason
        super().__init__(self.message)

    @property
    def message(self) -> str:
        return f"command {self.index + 1} {_show(self.command)} refused: {self.reason}"


def _show(command: object, limit: int = 100) -> str:
    r = repr(command)
    return r if len(r) <= limit else r[: limit - 4] + "...'"


def _char_name(ch: str) -> str:
    code = f"U+{ord(ch):04X}"
    name = unicodedata.name(ch, "")
    if not name:
        name = {"\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\t": "TAB", "\x85": "NEXT LINE"}.get(ch, "")
    return f"{code} {name}".strip()


def sanitise(platform: Platform, index: int, command: object) -> str:
    """Check one command item; return it normalised (stripped, single spaces).

    Raises:
        Refused: naming the item and the reason (control character, separator, ...).
    """
    sd = platform.d.sanitiser
    if not isinstance(command, str):
        raise Refused(index, str(command), f"a command must be a string, got {type(command).__name__}")
    if len(command) > sd.max_length:
        raise Refused(index, command, f"longer than {sd.max_length} characters")
    for pos, ch in enumerate(command):
        o = ord(ch)
        if o < 0x20 or o == 0x7F or 0x80 <= o <= 0x9F:
            raise Refused(
                index,
                command,
                f"control character {_char_name(ch)} at position {pos}; one command per list item, "
                "no control characters",
            )
        if o > 0x7E:
            raise Refused(
                index,
                command,
                f"non-ASCII character {_char_name(ch)} at position {pos}; only printable ASCII is accepted",
            )
    for sub, why in sd.refused_substrings.items():
        pos = command.find(sub)
        if pos >= 0:
            raise Refused(index, command, f"contains {sub!r} ({why}) at position {pos}")
    norm = " ".join(command.split(" ")).strip()
    norm = " ".join(p for p in norm.split(" ") if p)
    if not norm:
        raise Refused(index, command, "empty command")
    low = norm.lower()
    for pre, why in sd.refused_prefixes.items():
        if low.startswith(pre):
            raise Refused(index, command, f"starts with {pre.strip()!r} ({why})")
    if low in sd.refused_words:
        raise Refused(index, command, f"{norm!r} is refused")
    return norm


def is_comment(platform: Platform, norm: str) -> bool:
    return any(norm.startswith(p) for p in platform.d.sanitiser.comment_prefixes)


# -- read-only commands ---------------------------------------------------------------------


@dataclass
class ShowCommand:
    """A vetted read-only command: ``kind`` "cli" (vtysh exec mode) or "nft" (argv in the router)."""

    command: str
    kind: Literal["cli", "nft"]

    @property
    def argv(self) -> list[str]:
        return self.command.split(" ")


def check_show(platform: Platform, command: object) -> ShowCommand:
    """Vet one ``execute_validation`` command.

    Raises:
        Refused: not sanitary, a comment, a configuration statement, or not on the allowlist.
    """
    norm = sanitise(platform, 0, command)
    if is_comment(platform, norm):
        raise Refused(0, norm, "a comment is not a command")
    st = platform.match_show(norm)
    if st is None:
        if _match_any_config(platform, norm):
            raise Refused(0, norm, "a configuration statement, not a read-only command; use update_config")
        raise Refused(
            0,
            norm,
            "not an allowlisted read-only command (allowed: show running-config, show ip route ..., "
            "show bgp ..., show ip bgp ..., show ip ospf ..., show interface ..., show ip prefix-list ..., "
            "show route-map ..., nft list ruleset|table|set|chain ...); use full keywords, no abbreviations",
        )
    return ShowCommand(norm, st.d.kind)


def _match_any_config(platform: Platform, norm: str) -> list[CompiledStatement]:
    return [st for st in platform.config if st.matches(norm)]


def _shorter_negation(platform: Platform, norm: str, open_ctx: list[str] | None) -> str | None:
    """The refusal reason for ``no <statement> <args>`` when FRR only takes a shorter negation
    (a rule's ``negation``), or None. ``open_ctx``: only rules valid in one of these blocks."""
    for st in platform.config:
        if st.refused_neg is not None and st.refused_neg.fullmatch(norm):
            if open_ctx is None or any(c in open_ctx for c in st.d.ctx):
                return (f"FRR refuses this negation with its arguments ('% Unknown command'); "
                        f"the negation it accepts is {st.d.negation!r}")
    return None


# -- configuration plans --------------------------------------------------------------------


@dataclass
class Step:
    """One item of an ``update_config`` call, as planned.

    Attributes:
        index: position in the call's list (0-based).
        command: the item as received.
        norm: normalised text that is sent (cli) or run (nft).
        kind: "cli" (sent to vtysh in configuration mode), "exec" (sent in exec mode, e.g.
            ``clear ip bgp *``), "nft" (argv run in the router), "noop" (not sent).
        nav: hidden navigation lines (``exit``) sent before ``norm`` to reach its block.
        context: the block the statement runs in.
        note: why a noop is a noop.
        destructive: the grammar marks the statement destructive.
    """

    index: int
    command: str
    norm: str
    kind: Literal["cli", "nft", "exec", "noop"]
    nav: list[str] = field(default_factory=list)
    context: str = "global"
    note: str = ""
    destructive: bool = False

    @property
    def argv(self) -> list[str]:
        return self.norm.split(" ")


@dataclass
class _Open:
    ctx: str
    index: int
    text: str


def _label(platform: Platform, ctx: str) -> str:
    c = platform.d.contexts.get(ctx)
    return (c.label if c and c.label else ctx) or ctx


def plan_config(platform: Platform, commands: list[object]) -> list[Step]:
    """Vet an ``update_config`` command list and plan how each line is sent.

    Returns one :class:`Step` per item, in order. Raises :class:`Refused` for the first item
    that is not sanitary, not allowlisted, or out of its block (nothing may be sent then).
    """
    sd = platform.d.sanitiser
    if len(commands) > sd.max_commands:
        raise Refused(sd.max_commands, "", f"more than {sd.max_commands} commands in one call")
    stack: list[_Open] = [_Open("global", -1, "")]
    closed: dict[str, tuple[_Open, int, str]] = {}  # ctx -> (the block, closing index, closing text)
    steps: list[Step] = []

    #: parent ctx -> (child block ended by a walk-up, closing index, closing text): a statement
    #: of the parent that FRR would apply to another child (ipv4 unicast) is refused after it
    left_by_walkup: dict[str, tuple[_Open, int, str]] = {}

    def pop_to(depth: int, by_index: int, by_text: str) -> list[str]:
        nav = []
        while len(stack) > depth:
            blk = stack.pop()
            closed[blk.ctx] = (blk, by_index, by_text)
            left_by_walkup.pop(blk.ctx, None)
            parent = _parent(platform, blk.ctx)
            if parent is not None:
                left_by_walkup[parent] = (blk, by_index, by_text)
            nav.append("exit")
        return nav

    for i, raw in enumerate(commands):
        norm = sanitise(platform, i, raw)
        cur = stack[-1].ctx
        if is_comment(platform, norm):
            steps.append(Step(i, str(raw), norm, "noop", context=cur, note="comment, not sent"))
            continue
        low = norm.lower()
        if low in ("configure terminal", "configure", "end"):
            nav = pop_to(1, i, norm)
            steps.append(Step(i, str(raw), norm, "noop", nav=nav, context="global",
                              note="configuration mode is managed by the adapter"))
            continue
        if low == "exit":
            if len(stack) > 1:
                blk = stack.pop()
                closed[blk.ctx] = (blk, i, norm)
                left_by_walkup.pop(blk.ctx, None)
                left_by_walkup.pop(stack[-1].ctx, None)  # left on purpose
                steps.append(Step(i, str(raw), "exit", "cli", context=blk.ctx))
            else:
                steps.append(Step(i, str(raw), norm, "noop", context="global",
                                  note="no block open; nothing to exit"))
            continue
        if low == "exit-address-family":
            ctx_def = platform.d.contexts.get(cur)
            if ctx_def is None or "exit-address-family" not in ctx_def.exit_words:
                raise Refused(i, str(raw), "exit-address-family outside an address-family block")
            blk = stack.pop()
            closed[blk.ctx] = (blk, i, norm)
            left_by_walkup.pop(stack[-1].ctx, None)  # left on purpose
            steps.append(Step(i, str(raw), "exit-address-family", "cli", context=blk.ctx))
            continue

        matches = _match_any_config(platform, norm)
        if not matches:
            hint = _shorter_negation(platform, norm, [b.ctx for b in stack]) or _shorter_negation(platform, norm, None)
            if hint:
                raise Refused(i, str(raw), hint)
            raise Refused(
                i,
                str(raw),
                "not an allowlisted configuration statement (check spelling and arguments; "
                "use full keywords, no abbreviations)",
            )
        nft = [m for m in matches if m.d.kind == "nft"]
        if nft:
            steps.append(Step(i, str(raw), norm, "nft", context=cur, destructive=nft[0].d.destructive))
            continue
        ex = [m for m in matches if m.d.kind == "exec"]
        if ex:
            nav = pop_to(1, i, norm)
            steps.append(Step(i, str(raw), norm, "exec", nav=nav, context="global", destructive=ex[0].d.destructive))
            continue
        # choose the match whose block is open deepest in the stack
        best: tuple[int, CompiledStatement, str] | None = None
        for st in matches:
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth].ctx in st.d.ctx:
                    if best is None or depth > best[0]:
                        best = (depth, st, stack[depth].ctx)
                    break
        if best is None:
            hint = _shorter_negation(platform, norm, [b.ctx for b in stack])
            if hint:
                raise Refused(i, str(raw), hint)
            wanted = [c for m in matches for c in m.d.ctx]
            for c in wanted:
                if c in closed:
                    blk, by_i, by_text = closed[c]
                    raise Refused(
                        i,
                        str(raw),
                        f"it belongs in the {_label(platform, c)!r} block opened by command {blk.index + 1} "
                        f"({blk.text!r}), but command {by_i + 1} ({by_text!r}) ended that block "
                        "(a statement of an enclosing block, or exit/end, closes the block, as in FRR); "
                        f"nothing was applied. Move command {by_i + 1} outside the block, or re-open "
                        f"the block before command {i + 1}",
                    )
            where = " or ".join(repr(_label(platform, c)) for c in dict.fromkeys(wanted))
            raise Refused(
                i,
                str(raw),
                f"it is only valid inside a {where} block, which is not open at this point; "
                f"open the block first (e.g. 'router bgp <asn>', 'interface <name>')",
            )
        depth, st, ctx = best
        _refuse_misapplied(platform, i, str(raw), st, ctx, stack[depth + 1:], left_by_walkup.get(ctx))
        nav = pop_to(depth + 1, i, norm)
        steps.append(Step(i, str(raw), norm, "cli", nav=nav, context=ctx, destructive=st.d.destructive))
        if st.d.enters:
            stack.append(_Open(st.d.enters, i, norm))
            closed.pop(st.d.enters, None)
            left_by_walkup.pop(ctx, None)
            left_by_walkup.pop(st.d.enters, None)
    return steps


def _parent(platform: Platform, ctx: str) -> str | None:
    c = platform.d.contexts.get(ctx)
    return None if c is None else c.parent


def _refuse_misapplied(platform: Platform, i: int, raw: str, st: CompiledStatement, ctx: str,
                       leaving: list[_Open], left: tuple[_Open, int, str] | None) -> None:
    """Refuse a statement placed in ``ctx`` (e.g. ``router bgp``) that FRR would apply to a
    child block other than the one the agent opened.

    FRR applies some ``router bgp`` statements to one child block (``network 10.0.0.0/8`` under
    ``router bgp`` is ipv4 unicast: the child with ``parent_applies_here``). When the open
    child is another one (``address-family ipv6 unicast``) and does not take the statement, FRR
    walks up to ``router bgp``, leaves the block and applies it to ipv4 unicast; a later
    statement of the block then lands there too. Both are refused (``leaving``: the blocks this
    statement would end; ``left``: the child of ``ctx`` an earlier statement ended by walking
    up, with that statement's index and text). Raises Refused; returns if nothing is misapplied.
    """
    target = next((c for c in st.d.ctx if c != ctx and _parent(platform, c) == ctx
                   and platform.d.contexts[c].parent_applies_here), None)
    if target is None:
        return
    for blk in leaving:
        if _parent(platform, blk.ctx) == ctx and blk.ctx != target:
            raise Refused(
                i, raw,
                f"the {_label(platform, blk.ctx)!r} block opened by command {blk.index + 1} does not take "
                f"this statement: FRR would leave that block and apply it under "
                f"{_label(platform, ctx)!r} to {_label(platform, target)!r} (and the block's later lines "
                f"too); nothing was applied. Put it in an {_label(platform, target)!r} block, or end the "
                f"block with 'exit-address-family' first if {_label(platform, target)!r} is meant",
            )
    if left is not None and left[0].ctx != target:
        blk, by_i, by_text = left
        raise Refused(
            i, raw,
            f"command {by_i + 1} ({by_text!r}) is not taken in the {_label(platform, blk.ctx)!r} block "
            f"opened by command {blk.index + 1}, so FRR left that block there (it walks up to "
            f"{_label(platform, ctx)!r}); this statement would apply to {_label(platform, target)!r}, "
            f"not to {_label(platform, blk.ctx)!r}; nothing was applied. Re-open the block before "
            f"command {i + 1}, or end it with 'exit-address-family' before command {by_i + 1}",
        )
