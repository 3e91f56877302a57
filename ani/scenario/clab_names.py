r"""Interface names of a router's configuration, rewritten for Containerlab
(:mod:`ani.scenario.containerlab`): every whole word that is one of the router's interface
names becomes its Containerlab name, and what cannot be rewritten unambiguously is refused.

    >>> rename_interfaces("interface to-c2\n ip route 10.0.0.0/8 to-c2\n", {"to-c2": "eth1"})
    'interface eth1\n ip route 10.0.0.0/8 eth1\n'
"""

from __future__ import annotations

import re
from typing import Any

from ani.errors import TopologyError

_WORD = r"(?<![A-Za-z0-9_.\-]){}(?![A-Za-z0-9_.\-])"
_NFT_NAME_RE = re.compile(r"^\s*(?:table\s+\S+|chain|set|map)\s+([A-Za-z0-9_.\-]+)", re.M)


def rename_interfaces(text: str, mapping: dict[str, str]) -> str:
    """``text`` with every whole-word occurrence of a key of ``mapping`` replaced by its value
    (a word: delimited by anything but letters, digits, ``_ . -``), all in one pass (so
    ``{"a": "b", "b": "a"}`` swaps)."""
    if not mapping:
        return text
    alts = "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True))
    return re.sub(_WORD.format(f"(?:{alts})"), lambda m: mapping[m.group(0)], text)


def check_names(router: str, cfg: Any, nftables: str, ifnames: set[str]) -> None:
    """Raise TopologyError if one of ``router``'s interface names also names something else in
    its config (rewriting it would rename that too)."""
    others: dict[str, str] = {cfg.hostname: "the hostname"}
    others.update({n: "a prefix-list" for n in cfg.prefix_lists})
    others.update({n: "a route-map" for n in cfg.route_maps})
    if cfg.bgp is not None:
        others.update({n: "a BGP peer-group" for n in cfg.bgp.peer_groups})
    others.update({n: "an nftables table, chain or set" for n in _NFT_NAME_RE.findall(nftables)})
    for name in sorted(ifnames & set(others)):
        raise TopologyError(f"routers.{router}: interface name {name!r} is also {others[name]} in its "
                            "configuration: it cannot be renamed for Containerlab unambiguously (rename one)")


_NFT_IFACE_RE = re.compile(r"(?:iifname|oifname|iif|oif)\s+$")


def check_nft(router: str, nftables: str, mapping: dict[str, str]) -> None:
    """Raise TopologyError if one of ``router``'s interface names occurs in its ruleset other
    than as an interface: a quoted string (``iifname "to-c1"``, a set element) or the word after
    ``iifname`` / ``oifname`` / ``iif`` / ``oif`` (an interface named ``drop`` would rewrite the
    verdict)."""
    if not mapping:
        return
    alts = "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True))
    for m in re.finditer(_WORD.format(f"(?:{alts})"), nftables):
        quoted = nftables[m.start() - 1:m.start()] == '"' and nftables[m.end():m.end() + 1] == '"'
        if not quoted and not _NFT_IFACE_RE.search(nftables[max(0, m.start() - 16):m.start()]):
            raise TopologyError(f"routers.{router}: interface name {m.group(0)!r} occurs in its nftables "
                                "ruleset other than as an interface (quoted, or after iifname / oifname): "
                                "it cannot be renamed for Containerlab unambiguously (rename the interface)")


def _renamed_model(cfg: Any, mapping: dict[str, str]) -> dict[str, Any]:
    """``cfg`` (a DeviceConfig) dumped with its interface names replaced as ``mapping`` says:
    what the rewritten text must parse to."""
    want = cfg.model_dump()
    want["interfaces"] = {mapping.get(k, k): v for k, v in want["interfaces"].items()}
    for route in want["static_routes"]:
        route["nexthop"] = mapping.get(route["nexthop"], route["nexthop"])
    for peers in (want["bgp"] or {}).get("peer_groups", {}), (want["bgp"] or {}).get("neighbors", {}):
        for peer in peers.values():
            if peer.get("update_source") in mapping:
                peer["update_source"] = mapping[peer["update_source"]]
    want["unmodelled"] = [rename_interfaces(line, mapping) for line in want["unmodelled"]]
    return want


def check_rewrite(router: str, cfg: Any, text: str, mapping: dict[str, str]) -> None:
    """Raise TopologyError unless ``text`` (the rewritten config) parses as ``cfg`` with only its
    interfaces renamed (an interface named like a keyword, ``area``, would rewrite that too)."""
    from ani.device.parse import parse

    try:
        got = parse(text).model_dump()
    except ValueError:
        got = None
    if got != _renamed_model(cfg, mapping):
        raise TopologyError(f"routers.{router}: renaming its interfaces for Containerlab would change its "
                            "configuration beyond the names (an interface named like a word of the "
                            "configuration?): rename the interface")
