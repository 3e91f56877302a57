"""The ``<edit-config>`` that turns one router configuration into another: the difference of
their ``ani-frr`` YANG data as targeted operations (RFC 6241 §7.2), computed over the schema.

    xml = edit_config_xml(running, intended)   # DeviceConfig, DeviceConfig -> str | None

Both models are encoded with :func:`ani.device.yang.to_xml`; the walk follows the schema of
``yang/ani-frr.yang`` (:class:`ani.netconf.editconfig.Schema`: containers, lists by their keys,
leaf-lists, leaves) and writes only what differs, with the default operation ``merge``:

- a node only ``intended`` has: the node with its subtree (merged: created);
- a leaf whose value changed: the leaf with the new value (merged: replaced);
- a leaf-list value added: that value; removed: that value with ``operation="delete"``;
- a node only ``running`` has: the node (a list entry by its keys alone) with
  ``operation="delete"``;
- a container or list entry both have: its keys and the differences inside it, if any.

None if the two are equal (nothing to send). Pure; the result is what A2's ``edit_config``
takes as ``config``.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from lxml import etree

from ani.device.model import DeviceConfig
from ani.netconf.errors import BASE_NS

__all__ = ["edit_config_xml"]

_OP = f"{{{BASE_NS}}}operation"


@lru_cache(maxsize=1)
def _schema() -> Any:
    from ani.device.yang import data_model
    from ani.netconf.editconfig import Schema

    return Schema.from_datamodel(data_model())


def _deleted(elem: etree._Element, sn: Any) -> etree._Element:
    """``elem``'s node marked for deletion (a list entry: its keys only)."""
    out = etree.Element(elem.tag)
    if sn.kind == "list":
        for key in sn.key_nodes():
            k = elem.find(key.tag)
            if k is not None:
                out.append(copy.deepcopy(k))
    elif sn.kind in ("leaf", "leaf-list"):
        out.text = elem.text
    out.set(_OP, "delete")
    return out


def _key(elem: etree._Element, sn: Any) -> tuple[str | None, ...]:
    return tuple((elem.findtext(k.tag) or "").strip() or None for k in sn.key_nodes())


def _diff(sn: Any, old: etree._Element, new: etree._Element, out: etree._Element) -> bool:
    """Append to ``out`` what turns ``old``'s children into ``new``'s (both instances of the
    container / list entry ``sn``); True if anything was appended."""
    changed = False
    for tag, child in sn.children.items():
        if not child.config or (sn.kind == "list" and child.name in sn.keys):
            continue
        olds, news = old.findall(tag), new.findall(tag)
        if child.kind == "leaf":
            o, n = (olds[0] if olds else None), (news[0] if news else None)
            if n is not None and (o is None or (o.text or "") != (n.text or "")):
                out.append(copy.deepcopy(n))
                changed = True
            elif n is None and o is not None:
                out.append(_deleted(o, child))
                changed = True
        elif child.kind == "leaf-list":
            ov, nv = {e.text for e in olds}, {e.text for e in news}
            for e in news:
                if e.text not in ov:
                    out.append(copy.deepcopy(e))
                    changed = True
            for e in olds:
                if e.text not in nv:
                    out.append(_deleted(e, child))
                    changed = True
        elif child.kind == "container":
            o, n = (olds[0] if olds else None), (news[0] if news else None)
            if n is not None and o is None:
                out.append(copy.deepcopy(n))
                changed = True
            elif n is None and o is not None:
                out.append(_deleted(o, child))
                changed = True
            elif n is not None and o is not None:
                sub = etree.Element(tag)
                if _diff(child, o, n, sub):
                    out.append(sub)
                    changed = True
        elif child.kind == "list":
            by_key = {_key(e, child): e for e in olds}
            new_keys = {_key(e, child) for e in news}
            for e in news:
                o = by_key.get(_key(e, child))
                if o is None:
                    out.append(copy.deepcopy(e))
                    changed = True
                    continue
                sub = etree.Element(tag)
                for k in child.key_nodes():
                    kv = e.find(k.tag)
                    if kv is not None:
                        sub.append(copy.deepcopy(kv))
                if _diff(child, o, e, sub):
                    out.append(sub)
                    changed = True
            for k, o in by_key.items():
                if k not in new_keys:
                    out.append(_deleted(o, child))
                    changed = True
    return changed


def edit_config_xml(before: DeviceConfig, after: DeviceConfig) -> str | None:
    """The ``<frr>`` edit (XML text) turning ``before`` into ``after`` (module doc), or None if
    their YANG data are equal (``hostname`` and ``unmodelled`` have no YANG counterpart)."""
    from ani.device.yang import to_xml

    old, new = to_xml(before), to_xml(after)
    top = _schema().root.child(new.tag)
    out = etree.Element(new.tag, nsmap={None: new.nsmap.get(None) or etree.QName(new).namespace,
                                        "nc": BASE_NS})
    if not _diff(top, old, new, out):
        return None
    return etree.tostring(out, encoding="unicode")
