"""XML arguments of the A2 tools: configs and subtree filters written by an agent, the RFC 7951
JSON form of a config, and pretty printing.

- :func:`config_element`: an ``edit-config`` ``<config>`` (RFC 6241 §7.2) from XML (with or
  without the ``<config>`` wrapper, one or several top-level elements) or from RFC 7951 JSON
  (``{"ani-frr:frr": {...}}``; RFC 7952 metadata ``"@": {"ietf-netconf:operation": "delete"}``
  becomes the ``nc:operation`` attribute).
- :func:`filter_element`: a subtree filter (RFC 6241 §6) ``<filter type="subtree">``.
- :func:`pretty`: indented XML text of elements.
- :func:`as_lines`: a ``get-config`` ``<data>`` as FRR configuration text and ``nft`` lines
  (what ``compare`` diffs).

Every malformed argument raises :class:`XmlArgError` (its message is for the agent).
"""

from __future__ import annotations

import json
import re
from typing import Any

from lxml import etree

from ani.errors import AdapterError

BASE_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
FRR_NS = "urn:ani:yang:ani-frr"
#: RFC 7951 module names -> XML namespaces known to this client
MODULE_NS = {"ani-frr": FRR_NS, "ietf-netconf": BASE_NS}

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, remove_blank_text=True,
                          huge_tree=False, remove_comments=True)
_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
_DTD = re.compile(r"<!(DOCTYPE|ENTITY)", re.IGNORECASE)
#: a YANG identifier (RFC 7950 §6.2), the local part of an RFC 7951 member name
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


class XmlArgError(AdapterError, ValueError):
    """An XML/JSON argument the client cannot send; the message says why."""


def _no_dtd(text: str, what: str) -> None:
    """NETCONF messages carry no document type declaration (RFC 6241 §3: no DTD, entities
    are not expanded): refuse one here with a message saying so, instead of a parser error."""
    if _DTD.search(text):
        raise XmlArgError(f"{what}: a DOCTYPE / ENTITY declaration is not allowed in NETCONF "
                          "XML; write the values out")


def parse_fragment(text: str, what: str) -> list[etree._Element]:
    """The top-level elements of ``text`` (several allowed; an XML declaration is skipped).

    Raises XmlArgError for text that is not well-formed XML, has no element, or has
    top-level text, or whose top-level elements carry no namespace (the server matches by
    namespace, RFC 6241 §6.2.1: write ``xmlns="urn:ani:yang:ani-frr"``).
    """
    _no_dtd(text, what)
    body = _DECL.sub("", text, count=1)
    try:
        wrap = etree.fromstring(f"<_ani_wrap_>{body}</_ani_wrap_>".encode(), _PARSER)
    except etree.XMLSyntaxError as exc:
        raise XmlArgError(f"{what} is not well-formed XML: {exc}") from None
    if (wrap.text or "").strip() or any((c.tail or "").strip() for c in wrap):
        raise XmlArgError(f"{what}: text outside the elements")
    elems = [c for c in wrap if isinstance(c.tag, str)]
    if not elems:
        raise XmlArgError(f"{what} has no XML element")
    for e in elems:
        if etree.QName(e).namespace is None:
            name = etree.QName(e).localname
            raise XmlArgError(
                f"{what}: element <{name}> has no namespace; write <{name} xmlns=\"{FRR_NS}\"> "
                "(YANG module ani-frr)"
            )
    return elems


def _json_elements(doc: Any) -> list[etree._Element]:
    if not isinstance(doc, dict) or not doc:
        raise XmlArgError("JSON config must be an object such as {\"ani-frr:frr\": {...}} (RFC 7951)")
    out = []
    for name, value in doc.items():
        if name.startswith("@"):
            raise XmlArgError(f"JSON config: metadata {name!r} at the top level")
        mod, _, local = name.partition(":")
        if not local:
            raise XmlArgError(f"JSON config: top-level member {name!r} needs its module prefix "
                              "(e.g. \"ani-frr:frr\", RFC 7951 §4)")
        if mod not in MODULE_NS or mod == "ietf-netconf":
            raise XmlArgError(f"JSON config: unknown module {mod!r} (known: ani-frr)")
        out.extend(_to_xml(local, MODULE_NS[mod], value, _schema_child(None, local, mod)))
    return out


def json_to_xml(doc: Any) -> list[etree._Element]:
    """RFC 7951 JSON (a parsed object) -> the equivalent XML elements.

    Objects become elements, arrays repeated elements (list entries or leaf-list values),
    ``true``/``false`` the strings, ``[null]`` an empty element; list keys are moved first
    (RFC 7950 §7.8.5) using the YANG schema. Raises XmlArgError, also for a member name that
    is not a YANG identifier, a string XML cannot carry (NUL, control characters, lone
    surrogates), a scalar where the schema has a container or list (or an object for a leaf),
    and nesting too deep to convert.
    """
    try:
        return _json_elements(doc)
    except XmlArgError:
        raise
    except RecursionError:
        raise XmlArgError("JSON config is nested too deeply") from None
    except ValueError as exc:  # lxml: a name or string XML cannot carry
        raise XmlArgError(f"JSON config cannot be written as XML: {exc}") from None


def _schema_child(parent: Any, name: str, module: str) -> Any:
    """The yangson schema node for ``name`` under ``parent`` (None: the schema root), or None
    when the schema is unavailable or has no such node (the server will then say so)."""
    try:
        if parent is None:
            from ani.device.yang import data_model

            parent = data_model().schema
        return parent.get_data_child(name, module)
    except Exception:  # noqa: BLE001 - reordering is a courtesy; the server validates
        return None


def _check_name(name: str, where: str) -> None:
    if not _IDENT.fullmatch(name):
        raise XmlArgError(f"JSON config: {name!r} ({where}) is not a YANG identifier "
                          "(letters, digits, '_', '-', '.'; not starting with a digit)")


def _attrs(meta: Any, where: str) -> dict[str, str]:
    if not isinstance(meta, dict):
        raise XmlArgError(f"JSON config: metadata of {where} must be an object")
    out = {}
    for k, v in meta.items():
        mod, _, local = k.partition(":")
        if local:
            _check_name(local, f"an annotation of {where}")
        if not local or mod not in MODULE_NS:
            raise XmlArgError(f"JSON config: unknown annotation {k!r} on {where} "
                              "(known: ietf-netconf:operation)")
        out[f"{{{MODULE_NS[mod]}}}{local}"] = str(v)
    return out


def _scalar(v: Any, where: str) -> str | None:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None or v == [None]:
        return None
    if isinstance(v, (int, float, str)):
        return str(v)
    raise XmlArgError(f"JSON config: {where}: unexpected value {v!r}")


def _to_xml(name: str, ns: str, value: Any, snode: Any) -> list[etree._Element]:
    _check_name(name, "a member name")
    tag = f"{{{ns}}}{name}"
    if isinstance(value, list) and value != [None]:
        out = []
        for item in value:
            if isinstance(item, list):
                raise XmlArgError(f"JSON config: {name!r} holds an array inside an array")
            out.extend(_to_xml(name, ns, item, snode))
        return out
    _check_shape(name, value, snode)
    e = etree.Element(tag, nsmap={None: ns} if ns == FRR_NS else None)
    if isinstance(value, dict):
        leaf_meta: dict[str, Any] = {}
        for k, v in value.items():
            if k == "@":
                for a, av in _attrs(v, name).items():
                    e.set(a, av)
                continue
            if k.startswith("@"):
                leaf_meta[k[1:]] = v
                continue
            mod, _, local = k.partition(":")
            if local:
                if mod not in MODULE_NS or mod == "ietf-netconf":
                    raise XmlArgError(f"JSON config: unknown module {mod!r} in {k!r}")
                cns, cname, cmod = MODULE_NS[mod], local, mod
            else:
                cns, cname, cmod = ns, k, "ani-frr"
            e.extend(_to_xml(cname, cns, v, _schema_child(snode, cname, cmod) if snode is not None else None))
        for leaf, meta in leaf_meta.items():
            targets = [c for c in e if etree.QName(c).localname == leaf]
            if not targets:
                raise XmlArgError(f"JSON config: metadata '@{leaf}' for a member that is not there")
            for t in targets:
                for a, av in _attrs(meta, leaf).items():
                    t.set(a, av)
        _keys_first(e, snode)
    else:
        try:
            e.text = _scalar(value, name)
        except ValueError:  # lxml refuses NUL, control characters, lone surrogates
            raise XmlArgError(f"JSON config: the value of {name!r} has characters XML cannot "
                              "carry (NUL, control characters or lone surrogates)") from None
    return [e]


def _check_shape(name: str, value: Any, snode: Any) -> None:
    """A container or list entry must be an object (``[null]`` is taken as an empty one), a
    leaf a scalar (when the schema node is known; otherwise the server decides)."""
    if snode is None:
        return
    from yangson import schemanode as sn

    if isinstance(snode, sn.InternalNode) and not isinstance(value, dict) and value != [None]:
        kind = "list" if isinstance(snode, sn.ListNode) else "container"
        raise XmlArgError(f"JSON config: {name!r} is a {kind}: give an object "
                          + ("(or an array of objects) " if kind == "list" else "")
                          + f"with its members, not {json.dumps(value)[:40]}")
    if isinstance(snode, sn.TerminalNode) and isinstance(value, dict):
        raise XmlArgError(f"JSON config: {name!r} is a leaf: give its value, not an object")


def _keys_first(e: etree._Element, snode: Any) -> None:
    keys = [k[0] if isinstance(k, tuple) else str(k) for k in (getattr(snode, "keys", None) or ())]
    if not keys:
        return
    children = list(e)
    first = [c for k in keys for c in children if etree.QName(c).localname == k]
    rest = [c for c in children if c not in first]
    for c in children:
        e.remove(c)
    e.extend(first + rest)


def config_element(text: str) -> etree._Element:
    """The ``<config>`` element (base namespace) for ``edit-config`` from an agent's argument:
    XML (``<frr xmlns="urn:ani:yang:ani-frr">...</frr>``, optionally wrapped in
    ``<config>``) or RFC 7951 JSON (text starting with ``{``). Raises XmlArgError."""
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise XmlArgError(f"config is not valid JSON: {exc}") from None
        except RecursionError:
            raise XmlArgError("config: JSON nested too deeply") from None
        children = json_to_xml(doc)
    else:
        if not text.strip():
            raise XmlArgError("config is empty")
        elems = parse_fragment(text, "config") if not _is_config_wrapper(text) else None
        if elems is None:
            wrapper = _parse_config_wrapper(text)
            children = [c for c in wrapper if isinstance(c.tag, str)]
            if not children:
                raise XmlArgError("config: <config> is empty")
        else:
            children = elems
    cfg = etree.Element(f"{{{BASE_NS}}}config", nsmap={"nc": BASE_NS})
    cfg.extend(children)
    return cfg


def _is_config_wrapper(text: str) -> bool:
    return re.match(r"^\s*(<\?xml[^>]*\?>\s*)?<(\w+:)?config[\s>/]", text) is not None


def _parse_config_wrapper(text: str) -> etree._Element:
    _no_dtd(text, "config")
    body = _DECL.sub("", text, count=1)
    try:
        root = etree.fromstring(body.encode(), _PARSER)
    except etree.XMLSyntaxError as exc:
        raise XmlArgError(f"config is not well-formed XML: {exc}") from None
    ns = etree.QName(root).namespace
    if ns not in (None, BASE_NS):
        raise XmlArgError(f"config: <config> must be in the NETCONF base namespace {BASE_NS} (or none)")
    _data_namespaces(root, "config")
    return root


def _data_namespaces(wrapper: etree._Element, what: str) -> None:
    """The elements inside an agent's ``<config>`` / ``<filter>`` must carry the data model's
    namespace: with ``xmlns="...netconf:base:1.0"`` on the wrapper they inherit the NETCONF
    one, which no data node has (a filter then silently selects nothing)."""
    for c in wrapper:
        if not isinstance(c.tag, str):
            continue
        q = etree.QName(c)
        if q.namespace == BASE_NS or (q.namespace is None and what == "config"):
            where = ("inherits the NETCONF namespace from <" + etree.QName(wrapper).localname
                     + ">") if q.namespace else "has no namespace"
            raise XmlArgError(f"{what}: element <{q.localname}> {where}; write "
                              f"<{q.localname} xmlns=\"{FRR_NS}\"> (YANG module ani-frr)")


def filter_element(text: str) -> etree._Element:
    """``<filter type="subtree">`` holding the agent's subtree filter elements (RFC 6241 §6).
    A ``<filter>`` written by the agent itself is taken as is (type must be subtree)."""
    _no_dtd(text, "filter")
    stripped = _DECL.sub("", text, count=1).lstrip()
    if re.match(r"^<(\w+:)?filter[\s>/]", stripped):
        try:
            f = etree.fromstring(stripped.encode(), _PARSER)
        except etree.XMLSyntaxError as exc:
            raise XmlArgError(f"filter is not well-formed XML: {exc}") from None
        if f.get("type", "subtree") != "subtree":
            raise XmlArgError("filter: only subtree filters are supported (type=\"subtree\")")
        _data_namespaces(f, "filter")
        out = etree.Element(f"{{{BASE_NS}}}filter", type="subtree")
        out.extend([c for c in f if isinstance(c.tag, str)])
        return out
    out = etree.Element(f"{{{BASE_NS}}}filter", type="subtree")
    out.extend(parse_fragment(text, "filter"))
    return out


def pretty(elems: Any) -> str:
    """Indented XML text of an element or of the children of one (``<data>``)."""
    if elems is None:
        return ""
    if isinstance(elems, etree._Element):
        elems = [elems]
    parts = []
    for e in elems:
        c = _clean_copy(e)
        etree.indent(c, space="  ")
        parts.append(etree.tostring(c, encoding="unicode").rstrip())
    return "\n".join(parts)


def _clean_copy(e: etree._Element) -> etree._Element:
    """A copy without whitespace-only text (so indentation is even) and with unused namespace
    declarations dropped."""
    c = etree.fromstring(etree.tostring(e), _PARSER)
    etree.cleanup_namespaces(c)
    return c


def as_lines(device: str, data: etree._Element | None) -> list[str]:
    """A ``<data>`` element of get-config as comparable text lines, the whole datastore: its
    ``ani-frr`` ``<frr>`` as the FRR configuration FRR prints (``ani.device.render``) then the
    firewall as ``nft ...`` lines, one element or rule per line; then every other top-level
    element (another module's data, which FRR text cannot show) as indented XML lines after an
    ``# XML outside ani-frr`` line. So two datastores that differ anywhere give different lines.
    Raises if the ``<frr>`` element is not a valid ``ani-frr`` configuration."""
    from ani.device.model import DeviceConfig
    from ani.device.render import render
    from ani.device.yang import from_xml

    frr = None if data is None else data.find(f"{{{FRR_NS}}}frr")
    cfg = DeviceConfig(hostname=device) if frr is None else from_xml(frr, device)
    lines = [ln for ln in render(cfg).splitlines() if ln.strip() != "!"]
    fw = cfg.firewall
    if fw is not None:
        lines.append("table inet fw")
        for name, s in fw.sets.items():
            lines.append(f"  set {name}")
            lines += [f"  set {name} element {e}" for e in s.elements]
        lines.append(f"  chain forward policy {fw.forward_policy}")
        for r in fw.forward_rules:
            m = (f" ip saddr @{r.saddr_set}" if r.saddr_set else "") + (f" ip daddr @{r.daddr_set}" if r.daddr_set else "")
            lines.append(f"  chain forward rule{m} {r.action}")
    other = [] if data is None else [c for c in data if isinstance(c.tag, str) and c is not frr]
    if other:
        lines.append("# XML outside ani-frr")
        lines += pretty(other).splitlines()
    return lines
