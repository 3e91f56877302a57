"""NETCONF ``rpc-error`` (RFC 6241 §4.3, Appendix A) as a Python exception.

An operation that fails raises :class:`RpcError` (or :class:`RpcErrors` for several at once);
the server turns each into one ``<rpc-error>`` element of the ``<rpc-reply>``. Warnings are
``RpcError`` objects with ``severity="warning"`` that an operation *returns* (a reply may carry
warnings and still succeed, RFC 6241 §4.4: then it has no ``<ok/>``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from typing import Literal

from lxml import etree

from ani.errors import NetconfError

log = logging.getLogger(__name__)

BASE_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"

#: RFC 6241 Appendix A error-tags
ERROR_TAGS = frozenset({
    "in-use", "invalid-value", "too-big", "missing-attribute", "bad-attribute",
    "unknown-attribute", "missing-element", "bad-element", "unknown-element",
    "unknown-namespace", "access-denied", "lock-denied", "resource-denied",
    "rollback-failed", "data-exists", "data-missing", "operation-not-supported",
    "operation-failed", "partial-operation", "malformed-message",
})
ErrorType = Literal["transport", "rpc", "protocol", "application"]

# characters XML 1.0 cannot carry (§2.2): C0 controls but tab / LF / CR, surrogates, U+FFFE/F
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ANSI = re.compile("\x1b\\[[0-9;?]*[A-Za-z]")
# an XPath's string literals (their content is data: ``[frr:name='a:b']``) and its prefixes
_LITERAL = re.compile(r"'[^']*'|\"[^\"]*\"")
_PREFIX = re.compile(r"(?<![\w.:-])([A-Za-z_][\w.-]*):(?![:\s])")


def xml_safe(text: str) -> str:
    """``text`` without what XML 1.0 cannot carry: terminal escape sequences (FRR's, in
    messages passed on) are dropped, other forbidden characters become ``\\xNN``."""
    text = _ANSI.sub("", text)
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def non_xml_char(text: str) -> tuple[int, str] | None:
    """The first character of ``text`` that XML 1.0 (§2.2) cannot carry, as ``(position, name)``
    (position 0-based, in characters; name like ``U+0000``, ``U+001B``, ``U+D800 (a lone
    surrogate)``), or None when every character may be sent. Never returns ``text`` itself."""
    m = _NOT_XML.search(text)
    if m is None:
        return None
    code = ord(m.group())
    kind = (" (a lone surrogate)" if 0xD800 <= code <= 0xDFFF else
            " (a noncharacter)" if code >= 0xFFFE else " (a control character)")
    return m.start(), f"U+{code:04X}{kind}"


def path_prefixes(path: str) -> list[str]:
    """The namespace prefixes an XPath uses, in order of first use (``/frr:frr/frr:x[frr:k='a:b']``
    -> ``["frr"]``; prefixes inside string literals are data, not prefixes)."""
    out: list[str] = []
    for p in _PREFIX.findall(_LITERAL.sub("''", path)):
        if p not in out:
            out.append(p)
    return out


class RpcError(NetconfError):
    """One ``rpc-error``.

    Args:
        tag: an RFC 6241 Appendix A error-tag (ValueError otherwise).
        message: ``error-message`` (English, for a human or an agent).
        type: ``error-type``: transport | rpc | protocol | application.
        severity: ``error`` or ``warning``.
        path: ``error-path``, an XPath into the request or datastore (prefix ``frr:`` for the
            device model, ``nc:`` for the base namespace), or None.
        info: ``error-info`` children, e.g. ``{"session-id": "3"}``, ``{"bad-element":
            "route"}``, ``{"bad-attribute": "operation", "bad-element": "entry"}``.
        app_tag: ``error-app-tag`` or None.
    """

    def __init__(
        self,
        tag: str,
        message: str,
        type: ErrorType = "application",
        severity: Literal["error", "warning"] = "error",
        path: str | None = None,
        info: dict[str, str] | None = None,
        app_tag: str | None = None,
    ) -> None:
        if tag not in ERROR_TAGS:
            raise ValueError(f"unknown error-tag {tag!r}")
        super().__init__(message)
        self.tag = tag
        self.message = message
        self.type = type
        self.severity = severity
        self.path = path
        self.info = dict(info or {})
        self.app_tag = app_tag

    def __repr__(self) -> str:
        return f"RpcError({self.tag!r}, {self.message!r}, type={self.type!r}, severity={self.severity!r})"

    def to_xml(self, nsmap_extra: dict[str, str] | None = None,
               prefixes: dict[str, str] | None = None) -> etree._Element:
        """The ``<rpc-error>`` element (base namespace).

        ``prefixes``: ``{prefix: namespace URI}`` of the prefixes error-paths may use (the served
        modules' and ``nc``, see :func:`ani.netconf.rpc.path_namespaces`): each one the path uses
        is declared on its ``<error-path>`` element, so that a client can resolve the XPath
        (RFC 6241 §4.3: "the prefixes used ... must be declared"; yangcli refuses the whole
        reply otherwise). A prefix not in ``prefixes`` stays undeclared (and is logged)."""
        q = lambda n: f"{{{BASE_NS}}}{n}"  # noqa: E731
        nsmap = {None: BASE_NS, **(nsmap_extra or {})}
        e = etree.Element(q("rpc-error"), nsmap=nsmap)
        etree.SubElement(e, q("error-type")).text = self.type
        etree.SubElement(e, q("error-tag")).text = self.tag
        etree.SubElement(e, q("error-severity")).text = self.severity
        if self.app_tag:
            etree.SubElement(e, q("error-app-tag")).text = xml_safe(self.app_tag)
        if self.path:
            path = xml_safe(self.path)
            known = {None: BASE_NS, **(prefixes or {}), **(nsmap_extra or {})}
            used = path_prefixes(path)
            missing = [p for p in used if p not in known]
            if missing:
                log.warning("error-path %r uses undeclared prefixes %s", path, missing)
            decl = {p: known[p] for p in used if p in known}
            etree.SubElement(e, q("error-path"), nsmap=decl or None).text = path
        msg = etree.SubElement(e, q("error-message"))
        msg.text = xml_safe(self.message)
        msg.set("{http://www.w3.org/XML/1998/namespace}lang", "en")
        if self.info:
            info = etree.SubElement(e, q("error-info"))
            for k, v in self.info.items():
                etree.SubElement(info, q(k)).text = xml_safe(str(v))
        return e


class RpcErrors(NetconfError):
    """Several ``rpc-error``s of one reply (e.g. ``continue-on-error``), in order; may mix
    warnings and errors. ``errors`` is a non-empty list."""

    def __init__(self, errors: Iterable[RpcError]) -> None:
        self.errors = list(errors)
        if not self.errors:
            raise ValueError("RpcErrors needs at least one error")
        super().__init__("; ".join(f"{e.tag}: {e.message}" for e in self.errors))
