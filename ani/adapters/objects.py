"""Reads that name a router's object (a route-map, a prefix-list, a BGP neighbor) that it does
not have: found out, so the tool answers ``not_found`` naming the known ones (issue 14, case 1).

Two levels read objects by name:

- A1 ``execute_validation``: ``show route-map NAME``, ``show ip prefix-list NAME``,
  ``show [ip] bgp [ipv4 unicast] neighbors ADDR``. FRR answers an unknown one in its own words
  (``'route-map NOPE' not found`` per daemon with exit status 0, ``% Can't find specified
  prefix-list``) and never lists what exists: :func:`show_target` tells which object a command
  names, :func:`known_objects` what the router has (from its parsed running configuration).
- A2 ``get_config`` with a subtree filter whose content-match leaf selects a list entry by
  its key (RFC 6241 §6.2.5), e.g. ``<route-map><name>NOPE</name></route-map>``: the reply is
  empty, which NETCONF allows; :func:`unmatched_keys` compares the filter with the unfiltered
  datastore and names the key that matched nothing and the keys that exist.

A0's shell is the raw device: its ``show`` output is FRR's own answer, unchanged (the level is
defined by that). Names are case-sensitive (see :mod:`ani.names`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lxml import etree

__all__ = ["Unmatched", "known_objects", "show_target", "unmatched_keys"]

# show commands naming one object; keywords that are options, not names, are excluded
_SHOW = (
    (re.compile(r"^show\s+route-map\s+(?P<name>\S+)"), "route-map"),
    (re.compile(r"^show\s+ip\s+prefix-list\s+(?:detail\s+|summary\s+)?(?P<name>\S+)"), "prefix-list"),
    (re.compile(r"^show\s+(?:ip\s+)?bgp\s+(?:ipv4\s+(?:unicast\s+)?)?neighbors?\s+(?P<name>\S+)"), "BGP neighbor"),
)
_KEYWORDS = frozenset({"json", "detail", "summary", "longer", "first-match", "seq", "ge", "le"})


def show_target(command: str) -> tuple[str, str] | None:
    """``(kind, name)`` of the object a ``show`` command names (``("route-map", "RM-A")``), or
    None (it names none, or only options such as ``json``)."""
    text = " ".join(command.split())
    for pattern, kind in _SHOW:
        m = pattern.match(text)
        if m and m.group("name").lower() not in _KEYWORDS:
            return kind, m.group("name")
    return None


def known_objects(config: Any, kind: str) -> list[str]:
    """The names of ``kind`` a :class:`ani.device.model.DeviceConfig` has, sorted."""
    if kind == "route-map":
        return sorted(config.route_maps)
    if kind == "prefix-list":
        return sorted(config.prefix_lists)
    if kind == "BGP neighbor":
        return sorted(config.bgp.neighbors) if config.bgp is not None else []
    raise ValueError(f"unknown object kind {kind!r}")


@dataclass(frozen=True)
class Unmatched:
    """A filter's content-match leaf that selected no entry: the list (``route-map``), its key
    leaf (``name``), the value asked (``NOPE``) and the values that exist there."""

    list: str
    key: str
    value: str
    known: list[str]


def _local(tag: Any) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else str(tag)


def unmatched_keys(flt: Any, data: Any) -> list[Unmatched]:
    """The content-match leaves of the subtree filter ``flt`` (an lxml element, the filter's
    top node such as ``<frr>``) that select nothing in ``data`` (the unfiltered ``<data>``
    element of a get-config reply, or None), outermost first. A leaf is compared with the
    same leaf of every sibling entry the filter's path reaches (RFC 6241 §6.2.5: containment
    nodes select subtrees, content-match nodes select entries by value); a list with no entry
    there gives ``known == []``. ``flt`` may be the ``<filter>`` element itself (its children
    are then the top nodes). A top node the datastore does not have reports nothing."""
    if flt is None or data is None:
        return []
    out: list[Unmatched] = []
    roots = [c for c in flt if isinstance(c.tag, str)] if _local(flt.tag) == "filter" else [flt]
    for top in roots:  # the <filter> wrapper holds the top nodes (<frr>)
        _walk(top, [el for el in data if isinstance(el.tag, str) and el.tag == top.tag], out)
    return out


def _walk(fnode: Any, dnodes: list[Any], out: list[Unmatched]) -> None:
    if not dnodes:
        return
    children = [c for c in fnode if isinstance(c.tag, str)]
    matches = [c for c in children if len(c) == 0 and (c.text or "").strip()]
    selected = dnodes
    for m in matches:
        want = (m.text or "").strip()
        values = [(d.findtext(m.tag) or "").strip() for d in selected]
        if want not in values:
            out.append(Unmatched(_local(fnode.tag), _local(m.tag), want, sorted(v for v in values if v)))
            return
        selected = [d for d, v in zip(selected, values, strict=True) if v == want]
    for c in children:
        if len(c) == 0:
            continue
        below = [x for d in selected for x in d if isinstance(x.tag, str) and x.tag == c.tag]
        key = next((m for m in c if isinstance(m.tag, str) and len(m) == 0 and (m.text or "").strip()), None)
        if not below and key is not None:  # the list is empty here: the entry asked for is not there
            out.append(Unmatched(_local(c.tag), _local(key.tag), (key.text or "").strip(), []))
            continue
        _walk(c, below, out)
