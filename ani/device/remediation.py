"""FRR 8.4 remediation: the vtysh configuration lines that turn one router configuration into
another, computed with hier-config (a driver for FRR's syntax) from two device models.

    lines = frr_commands(running, intended)     # DeviceConfig, DeviceConfig -> [str]
    # ["ip prefix-list PL-TENANTS seq 30 permit 198.19.4.0/24",
    #  "interface to-nsite1", " ip address 198.19.4.1/24", "exit", ...]

The lines are what ``vtysh -c 'configure terminal' -c LINE ...`` (A0) or A1's
``update_config`` take, stripped: every block opened is closed explicitly (``exit``, and
``exit-address-family`` for an address family).
Nothing here touches a router (pure; unit-tested on the brownfield's configurations).

How: both models are rendered (:func:`ani.device.render.render`, FRR's own print form), their
``unmodelled`` FRR lines (``"<block> / <line>"``) put back into their blocks, and hier-config's
``WorkflowRemediation`` computes the negations and additions with the driver
:class:`FrrDriver`. hier-config 3.7 has no FRR platform and its generic driver is not FRR: it
refuses FRR's ``!`` and ``exit`` lines as duplicate sections (they are dropped before loading),
and left alone it would negate every changed value (``no set metric 5`` then ``set metric 7``)
and order the changes in text order. The driver states what FRR 8.4 does (measured on 8.4.4):

- commands whose new value replaces the old one, so no ``no`` is sent (idempotent): a
  prefix-list entry of the same name and seq, ``bgp route-map delay-timer``, ``description``,
  ``ip ospf network|hello-interval|dead-interval``, ``ospf router-id``, OSPF timers,
  ``bgp router-id``, ``coalesce-time``, ``timers bgp``, a neighbor's ``remote-as``,
  ``description``, ``update-source``, ``timers connect``, ``redistribute SRC [route-map]``, a
  neighbor's ``route-map X in|out``, a route-map entry's ``match ip address prefix-list``,
  ``set local-preference``, ``set metric``, ``set community``;
  (not ``ip ospf area``: "Must remove previous area config before changing ospf area", so the
  old area is negated first);
- ``no description`` (FRR refuses ``no description TEXT``);
- the order (the traps): ``bgp route-map delay-timer`` first (the route-map changes that follow
  are re-evaluated after it); new prefix-list entries before the route-maps that match them and
  before the interface addresses whose connected routes they let through; route-maps before the
  ``router bgp`` lines that use them; removed route-maps and prefix-list entries last (after
  the addresses, redistribution and route-maps that used them are gone).

Two things hier-config cannot express are rewritten afterwards: a removed interface (and a
removed ``address-family`` block) is ``interface X`` + ``no <line>`` for each of its lines (FRR
refuses ``no interface X`` for an interface the kernel has: "Only inactive interfaces can be
deleted"), and a removed BGP
neighbor or peer-group is one ``no neighbor X`` (its first ``no neighbor X ...`` line deletes
it, the others would then fail: "% Specify remote-as or peer-group commands first"),
members before their group.
"""

from __future__ import annotations

from hier_config import WorkflowRemediation, get_hconfig
from hier_config.models import (
    IdempotentCommandsRule,
    MatchRule,
    NegationDefaultWithRule,
    OrderingRule,
    SectionalExitingRule,
)
from hier_config.platforms.driver_base import HConfigDriverBase, HConfigDriverRules

from ani.device.model import DeviceConfig
from ani.device.render import render

__all__ = ["FrrDriver", "frr_commands", "frr_text", "frr_units"]

_IND = 1  # vtysh's indentation: one space per block


def _m(*parts: str) -> tuple[MatchRule, ...]:
    """Lineage match rules: each part a regex on the line at that depth."""
    return tuple(MatchRule(re_search=p) for p in parts)


_INTERFACE = r"^interface "
_BGP = r"^router bgp "
_AF = r"^address-family "
_OSPF = r"^router ospf$"
_RM = r"^route-map "

#: commands whose new value replaces the old one (the capture groups are the identity)
_IDEMPOTENT: tuple[tuple[str, ...], ...] = (
    (r"^bgp route-map delay-timer ",),
    (r"^hostname ",),
    (r"^ip prefix-list (\S+) seq (\d+) ",),
    (_INTERFACE, r"^description "),
    (_INTERFACE, r"^ip ospf network "),
    (_INTERFACE, r"^ip ospf hello-interval "),
    (_INTERFACE, r"^ip ospf dead-interval "),
    (_OSPF, r"^ospf router-id "),
    (_OSPF, r"^timers throttle spf "),
    (_OSPF, r"^timers throttle lsa all "),
    (_OSPF, r"^timers lsa min-arrival "),
    (_BGP, r"^bgp router-id "),
    (_BGP, r"^coalesce-time "),
    (_BGP, r"^timers bgp "),
    (_BGP, r"^neighbor (\S+) remote-as "),
    (_BGP, r"^neighbor (\S+) description "),
    (_BGP, r"^neighbor (\S+) update-source "),
    (_BGP, r"^neighbor (\S+) timers connect "),
    (_BGP, _AF, r"^redistribute (\S+)"),
    (_BGP, _AF, r"^neighbor (\S+) route-map \S+ (in|out)$"),
    (_RM, r"^match ip address prefix-list "),
    (_RM, r"^set local-preference "),
    (_RM, r"^set metric "),
    (_RM, r"^set community "),
)

#: top-level order of the remediation (lower first; 0 for the rest: hostname, forwarding)
_ORDER: tuple[tuple[str, int], ...] = (
    (r"^(no )?bgp route-map delay-timer", 10),
    (r"^ip prefix-list ", 20),
    (r"^route-map ", 30),
    (r"^(no )?ip route ", 40),
    (r"^interface ", 40),
    (r"^router ", 50),
    (r"^no router ", 60),
    (r"^no route-map ", 80),
    (r"^no ip prefix-list ", 90),
)


class FrrDriver(HConfigDriverBase):
    """hier-config driver for FRR 8.4's ``show running-config`` syntax (see the module doc)."""

    @staticmethod
    def _instantiate_rules() -> HConfigDriverRules:
        return HConfigDriverRules(
            indentation=_IND,
            idempotent_commands=[IdempotentCommandsRule(match_rules=_m(*p)) for p in _IDEMPOTENT],
            negate_with=[
                NegationDefaultWithRule(match_rules=_m(_INTERFACE, r"^description "), use="no description"),
                NegationDefaultWithRule(match_rules=_m(_RM, r"^description "), use="no description"),
            ],
            sectional_exiting=[
                SectionalExitingRule(match_rules=_m(_BGP, _AF), exit_text="exit-address-family"),
            ],
            ordering=[OrderingRule(match_rules=_m(p), weight=w) for p, w in _ORDER],
        )


_DROP = ("!", "exit", "exit-address-family")


def frr_text(cfg: DeviceConfig) -> str:
    """``cfg``'s FRR configuration as hier-config loads it: ``render`` with its ``unmodelled``
    FRR lines put back in their blocks, without the ``!`` / ``exit`` lines (block ends are
    indentation). The ``nft / ...`` unmodelled lines are not FRR and are left out."""
    frr_unmodelled = [u for u in cfg.unmodelled if not u.startswith("nft / ")]
    body = render(cfg.model_copy(update={"unmodelled": []}))
    root: list[tuple[str, list]] = []  # (line, children) trees, in order

    def child(nodes: list[tuple[str, list]], text: str) -> list[tuple[str, list]]:
        for line, kids in nodes:
            if line == text:
                return kids
        kids: list[tuple[str, list]] = []
        nodes.append((text, kids))
        return kids

    stack: list[tuple[int, list[tuple[str, list]]]] = [(-1, root)]
    for raw in body.splitlines():
        text = raw.strip()
        if not text or text in _DROP:
            continue
        depth = len(raw) - len(raw.lstrip(" "))
        while stack[-1][0] >= depth:
            stack.pop()
        stack.append((depth, child(stack[-1][1], text)))
    for u in frr_unmodelled:
        nodes = root
        for part in u.split(" / "):
            nodes = child(nodes, part)

    out: list[str] = []

    def emit(nodes: list[tuple[str, list]], depth: int) -> None:
        for line, kids in nodes:
            out.append(" " * depth + line)
            emit(kids, depth + 1)

    emit(root, 0)
    return "\n".join(out) + "\n"


def _removed_peers(before: DeviceConfig, after: DeviceConfig) -> tuple[list[str], list[str]]:
    """(neighbors, peer-groups) of ``before``'s BGP that ``after`` no longer has (same ASN)."""
    if before.bgp is None or after.bgp is None or before.bgp.asn != after.bgp.asn:
        return [], []
    nbrs = [n for n in before.bgp.neighbors if n not in after.bgp.neighbors]
    groups = [g for g in before.bgp.peer_groups if g not in after.bgp.peer_groups]
    return nbrs, groups


def frr_commands(before: DeviceConfig, after: DeviceConfig) -> list[str]:
    """The vtysh configuration lines (without ``configure terminal`` / ``end``) that make a
    router running ``before``'s FRR configuration run ``after``'s (the ``firewall`` is not FRR:
    see :mod:`ani.agents.nft_changes`). [] if the FRR parts are equal. Pure."""
    return [ln for unit in frr_units(before, after) for ln in unit]


def frr_units(before: DeviceConfig, after: DeviceConfig) -> list[list[str]]:
    """:func:`frr_commands` cut into top-level units, in order: a global line alone, a block
    with its lines and its ``exit``. A list of commands may be split between units (each unit
    is valid on its own in configuration mode), never inside one."""
    running = get_hconfig(FrrDriver(), frr_text(before))
    intended = get_hconfig(FrrDriver(), frr_text(after))
    rem = WorkflowRemediation(running, intended).remediation_config

    # a removed interface or address family: its lines one by one (FRR keeps the kernel's
    # interface; an address family has no 'no' form to rely on)
    for parent, old_parent in [(rem, running), *((b, running.get_child(equals=b.text))
                                                 for b in rem.children if b.text.startswith("router bgp "))]:
        for child in list(parent.children):
            if not child.text.startswith(("no interface ", "no address-family ")) or old_parent is None:
                continue
            header = child.text[len("no "):]
            old = old_parent.get_child(equals=header)
            weight = child.order_weight
            child.delete()
            block = parent.add_child(header)
            block.order_weight = dict(_ORDER)[r"^interface "] if header.startswith("interface ") else weight
            for line in old.children if old is not None else ():
                block.add_child(line.text).negate()

    nbrs, groups = _removed_peers(before, after)
    gone = [*nbrs, *groups]
    if gone:
        bgp = rem.get_child(startswith="router bgp ")
        if bgp is not None:
            def about_gone(text: str) -> bool:
                words = text.removeprefix("no ").split()
                return len(words) >= 2 and words[0] == "neighbor" and words[1] in gone

            for line in list(bgp.all_children()):
                if about_gone(line.text):
                    line.delete()
            for af in list(bgp.children):
                if af.text.startswith("address-family ") and not af.children:
                    af.delete()
            for i, name in enumerate(gone):  # members (neighbors) before their peer-groups
                bgp.add_child(f"no neighbor {name}").order_weight = -len(gone) + i
    return [[ln.strip() for ln in top.lines(sectional_exiting=True)] for top in sorted(rem.children)]
