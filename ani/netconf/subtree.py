"""RFC 6241 §6 subtree filtering, applied to a ``<data>`` tree.

``apply(data, filter_elem, keys=None) -> <data>``: a new ``<data>`` element holding the selected
part of ``data`` (``data`` is not modified). ``filter_elem`` is the request's ``<filter>``
element; its element children are the filter. Semantics (RFC 6241 §6.2):

- **Namespace selection** (§6.2.1): a filter element matches data elements of the same name and
  namespace; a filter element in no namespace matches that name in any namespace.
- **Attribute match expressions** (§6.2.2): every attribute of a filter element (other than
  namespace declarations) must be present with the same value on the data element. The data
  trees of this server carry no attributes, so a filter element with attributes selects nothing.
- **Containment nodes** (§6.2.3, element children): select the matching data elements for which
  the nested filter selects something.
- **Selection nodes** (§6.2.4, empty leaf): select the whole subtree of each matching element.
- **Content match nodes** (§6.2.5, text only): all sibling content match nodes must match a
  child of the data element (text compared after stripping surrounding white space), else the
  parent is not selected. If a sibling set has only content match nodes, the whole parent
  subtree is selected; otherwise the matching children are selected along with what the
  selection and containment siblings select. For a leaf-list, only the matching values are
  selected.
- Several filter siblings with the same name (e.g. two list entries) select the union.
- An empty ``<filter>`` selects nothing (§6.4.2); no filter at all (``None``) selects
  everything.

``keys(elem) -> list of Clark names``: optional; for a list entry whose subtree is selected only
in part, the key leaves named are always included (so the client can tell entries apart).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from lxml import etree

from ani.netconf.errors import BASE_NS

FULL = "full"
KeysFn = Callable[[etree._Element], Iterable[str]]


def _qn(tag: str) -> etree.QName:
    return etree.QName(tag)


def _matches(f: etree._Element, d: etree._Element) -> bool:
    fq, dq = _qn(f.tag), _qn(d.tag)
    if fq.localname != dq.localname:
        return False
    if fq.namespace is not None and fq.namespace != dq.namespace:
        return False
    return all(d.get(k) == v for k, v in f.attrib.items())


def _elements(e: etree._Element) -> list[etree._Element]:
    return [c for c in e if isinstance(c.tag, str)]


def _kind(f: etree._Element) -> str:
    if _elements(f):
        return "containment"
    if (f.text or "").strip():
        return "content"
    return "selection"


def _select(fparent: etree._Element, dparent: etree._Element) -> dict | str | None:
    """What of ``dparent``'s children the filter children of ``fparent`` select.

    Returns None (parent not selected: a content match failed), FULL (the whole parent), or a
    dict {id(data child): (data child, FULL | nested dict)}, possibly empty."""
    filters = _elements(fparent)
    content = [f for f in filters if _kind(f) == "content"]
    others = [f for f in filters if _kind(f) != "content"]
    dchildren = _elements(dparent)
    out: dict[int, tuple[etree._Element, object]] = {}
    for f in content:
        want = (f.text or "").strip()
        hits = [d for d in dchildren if _matches(f, d) and not _elements(d) and (d.text or "").strip() == want]
        if not hits:
            return None
        for d in hits:
            out[id(d)] = (d, FULL)
    if content and not others:
        return FULL
    for f in others:
        for d in dchildren:
            if not _matches(f, d):
                continue
            if _kind(f) == "selection":
                out[id(d)] = (d, FULL)
                continue
            sub = _select(f, d)
            if sub is None or (isinstance(sub, dict) and not sub):
                continue
            prev = out.get(id(d))
            out[id(d)] = (d, _union(prev[1] if prev else None, sub))
    return out


def _union(a: object, b: object) -> object:
    if a is None:
        return b
    if a == FULL or b == FULL:
        return FULL
    assert isinstance(a, dict) and isinstance(b, dict)
    merged = dict(a)
    for k, (d, sub) in b.items():
        merged[k] = (d, _union(merged[k][1], sub) if k in merged else sub)
    return merged


def _build(dparent: etree._Element, sel: object, out_parent: etree._Element, keys: KeysFn | None) -> None:
    assert isinstance(sel, dict)
    key_tags = set(keys(dparent)) if keys else set()
    for d in _elements(dparent):
        hit = sel.get(id(d))
        if hit is None:
            if d.tag in key_tags:
                out_parent.append(_copy(d))
            continue
        if hit[1] == FULL:
            out_parent.append(_copy(d))
        else:
            ns = etree.QName(d.tag).namespace
            same = ns == etree.QName(out_parent.tag).namespace
            e = etree.SubElement(out_parent, d.tag, nsmap=None if same or ns is None else {None: ns})
            _build(d, hit[1], e, keys)


def _copy(e: etree._Element) -> etree._Element:
    c = etree.fromstring(etree.tostring(e))
    c.tail = None
    return c


def apply(data: etree._Element, filter_elem: etree._Element | None, keys: KeysFn | None = None) -> etree._Element:
    """The part of ``data`` (a ``<data>`` element) selected by ``filter_elem`` (see the module
    docstring), as a new ``<data>`` element in the NETCONF base namespace."""
    out = etree.Element(f"{{{BASE_NS}}}data", nsmap={None: BASE_NS})
    if filter_elem is None:
        for d in _elements(data):
            out.append(_copy(d))
        return out
    if not _elements(filter_elem):
        return out
    sel = _select(filter_elem, data)
    if sel is None:
        return out
    if sel == FULL:
        for d in _elements(data):
            out.append(_copy(d))
        return out
    _build(data, sel, out, keys)
    return out
