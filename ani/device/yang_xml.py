"""RFC 7951 JSON <-> RFC 7950 XML for the data of one YANG module, driven by a yangson schema.

:func:`raw_to_xml` writes the children of a node in schema order with a list's keys first
(RFC 7950 §7.8.5). :func:`xml_to_raw` reads XML back, checking every element against the
schema and every leaf value against its type; a problem raises :class:`XmlDataError` carrying
an XPath (prefix ``frr`` for the module's namespace), an RFC 6241 error-tag and a message.
Comments and processing instructions are ignored; attributes (e.g. ``nc:operation``) too.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from lxml import etree
from yangson.datatype import (
    BooleanType,
    DataType,
    EnumerationType,
    IntegralType,
    LeafrefType,
    StringType,
    UnionType,
)
from yangson.schemanode import (
    InternalNode,
    LeafListNode,
    ListNode,
    SchemaNode,
    TerminalNode,
)

from ani.errors import ModelError

PREFIX = "frr"


class XmlDataError(ModelError):
    """XML that does not fit the schema: ``tag`` (RFC 6241 error-tag), ``path`` (XPath),
    ``message``."""

    def __init__(self, tag: str, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.tag = tag
        self.path = path
        self.message = message


@lru_cache(maxsize=None)
def children(sn: InternalNode) -> tuple[tuple[str, SchemaNode], ...]:
    """``(local name, schema node)`` of the data children of ``sn``, keys first for a list."""
    kids = [(c.name, c) for c in sn.data_children()]
    if isinstance(sn, ListNode):
        keys = [k[0] for k in sn.keys]
        kids.sort(key=lambda nc: keys.index(nc[0]) if nc[0] in keys else len(keys))
    return tuple(kids)


@lru_cache(maxsize=None)
def child_map(sn: InternalNode) -> dict[str, SchemaNode]:
    return dict(children(sn))


def text(value: Any) -> str:
    """The XML text of an RFC 7951 JSON scalar."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def xpath_literal(value: Any) -> str:
    """``value`` (via :func:`text`) as an XPath 1.0 string literal: ``'v'``, or ``"v"`` when it
    holds an apostrophe, or ``concat('A', "'", 'B"C')`` when it holds both quote kinds (XPath 1.0
    has no escape inside a literal; error-paths with such keys must still parse, RFC 6241 §4.3)."""
    v = text(value)
    if "'" not in v:
        return f"'{v}'"
    if '"' not in v:
        return f'"{v}"'
    args: list[str] = []
    for i, part in enumerate(v.split("'")):
        args += (['"\'"'] if i else []) + ([f"'{part}'"] if part else [])
    return f"concat({', '.join(args)})"


def key_pred(key: str, value: Any, prefix: str = PREFIX) -> str:
    """The predicate ``[frr:key='value']`` of one list key (``[.='value']`` for ``key`` ``"."``,
    a leaf-list entry), its value an :func:`xpath_literal`."""
    name = "." if key == "." else f"{prefix}:{key}"
    return f"[{name}={xpath_literal(value)}]"


def raw_to_xml(raw: dict[str, Any], sn: InternalNode, elem: etree._Element, ns: str) -> etree._Element:
    """Append the members of ``raw`` (the JSON object of node ``sn``) to ``elem``; return it."""
    for name, csn in children(sn):
        if name not in raw:
            continue
        value = raw[name]
        tag = f"{{{ns}}}{name}"
        if isinstance(csn, ListNode):
            for entry in value:
                raw_to_xml(entry, csn, etree.SubElement(elem, tag), ns)
        elif isinstance(csn, LeafListNode):
            for v in value:
                etree.SubElement(elem, tag).text = text(v)
        elif isinstance(csn, TerminalNode):
            if value != [None]:  # type empty
                etree.SubElement(elem, tag).text = text(value)
            else:
                etree.SubElement(elem, tag)
        else:
            raw_to_xml(value, csn, etree.SubElement(elem, tag), ns)
    return elem


def _step(name: str, preds: str = "") -> str:
    return f"/{PREFIX}:{name}{preds}"


def _key_preds(entry: dict[str, Any], sn: ListNode) -> str:
    return "".join(key_pred(k[0], entry[k[0]]) for k in sn.keys if k[0] in entry)


def xml_to_raw(elem: etree._Element, sn: InternalNode, ns: str, path: str) -> dict[str, Any]:
    """The RFC 7951 JSON object of element ``elem``, an instance of ``sn``; ``path`` is the
    element's XPath (for error messages). Raises XmlDataError."""
    out: dict[str, Any] = {}
    cmap = child_map(sn)
    entries: list[tuple[ListNode, dict[str, Any], etree._Element]] = []
    for child in elem:
        if not isinstance(child.tag, str):
            continue  # comment, processing instruction
        q = etree.QName(child)
        cpath = path + _step(q.localname)
        if q.namespace != ns:
            raise XmlDataError("unknown-namespace", cpath,
                               f"element {q.localname} in namespace {q.namespace!r}, expected {ns!r}")
        csn = cmap.get(q.localname)
        if csn is None:
            raise XmlDataError("unknown-element", cpath,
                               f"unknown element {q.localname} (expected one of: {', '.join(cmap)})")
        if isinstance(csn, ListNode):
            preds = "".join(key_pred(k[0], child.findtext(f"{{{ns}}}{k[0]}")) for k in csn.keys
                            if child.find(f"{{{ns}}}{k[0]}") is not None)
            entry = xml_to_raw(child, csn, ns, cpath + preds)
            out.setdefault(csn.name, []).append(entry)
            entries.append((csn, entry, child))
        elif isinstance(csn, LeafListNode):
            out.setdefault(csn.name, []).append(_scalar(child, csn, cpath))
        else:
            if csn.name in out:
                raise XmlDataError("bad-element", cpath, f"element {q.localname} given more than once")
            if isinstance(csn, TerminalNode):
                out[csn.name] = _scalar(child, csn, cpath)
            else:
                out[csn.name] = xml_to_raw(child, csn, ns, cpath)
    for lsn, entry, _child in entries:
        for k in lsn.keys:
            if k[0] not in entry:
                raise XmlDataError("missing-element", path + _step(lsn.name, _key_preds(entry, lsn)),
                                   f"list entry {lsn.name} lacks its key {k[0]}")
    return out


def _scalar(elem: etree._Element, sn: TerminalNode, path: str) -> Any:
    if len(elem):
        raise XmlDataError("bad-element", path, f"{sn.name} is a leaf: it has no child elements")
    txt = elem.text if elem.text is not None else ""
    value = sn.type.from_xml(_Text(txt))
    if value is None or value not in sn.type:
        raise XmlDataError("invalid-value", path, f"invalid value {shown(txt)} for {sn.name}: {why_invalid(sn.type, txt)}")
    return sn.type.to_raw(value)


class _Text:
    """What yangson's type parsers read from an element: ``.text``."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _custom_message(p: Any) -> str | None:
    """A pattern's own ``error-message`` (yangson's default names the pattern), one line."""
    msg = p.error_message
    return None if not msg or msg.startswith("pattern '") else " ".join(msg.split())


def shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` for a message; a long string is cut: ``'xxxx...' (4081 characters)``."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit // 2]!r}... ({len(value)} characters)"
    return repr(value)


def why_invalid(t: DataType, value: Any) -> str:
    """Why ``value`` is not of type ``t``: the ``error-message`` of the first string pattern it
    breaks if the module gives one, else ``expected <what t accepts>``."""
    while isinstance(t, LeafrefType):
        t = t.ref_type
    if isinstance(t, StringType) and isinstance(value, str):
        for p in t.patterns:
            msg = _custom_message(p)
            if msg and (p.regex.match(value) is not None) == p.invert_match:
                return msg
    return f"expected {describe(t)}"


def describe(t: DataType) -> str:
    """A short human description of what a type accepts."""
    if isinstance(t, LeafrefType):
        return describe(t.ref_type)
    if isinstance(t, UnionType):
        return " or ".join(describe(m) for m in t.types)
    if isinstance(t, EnumerationType):
        return "one of " + ", ".join(sorted(t.enum, key=lambda e: t.enum[e]))
    if isinstance(t, BooleanType):
        return "true or false"
    if isinstance(t, IntegralType):
        rng = t.range.intervals if t.range is not None else None
        if rng:
            return "an integer in " + " | ".join(f"{iv[0]}..{iv[-1]}" if len(iv) > 1 else f"{iv[0]}" for iv in rng)
        return f"a {t.yang_type()}"
    if isinstance(t, StringType):
        name = t.name or "string"
        pats = [p.pattern for p in t.patterns if not p.invert_match]
        # an inverted pattern with its own message is named by it (a keyword list is long)
        inv = [re.split(r"[,:;]", msg)[0] if (msg := _custom_message(p)) else f"matching {p.pattern!r}"
               for p in t.patterns if p.invert_match]
        lengths = t.length.intervals if getattr(t, "length", None) is not None else None
        size = (" of " + " | ".join(f"{iv[0]}..{iv[-1]}" if len(iv) > 1 else f"{iv[0]}" for iv in lengths)
                + " characters") if lengths else ""
        return (f"a {name}{size}" + (f" matching {' and '.join(repr(p) for p in pats)}" if pats else "")
                + (f" and not {' or '.join(inv)}" if inv else ""))
    return f"a {t.yang_type()}"

