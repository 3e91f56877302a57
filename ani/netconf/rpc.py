"""NETCONF messages without I/O: hellos, ``<rpc>`` parsing, dispatch to the datastore, replies.

* :func:`server_hello` / :func:`parse_client_hello` — the capability exchange (RFC 6241 §8.1).
* :func:`handle` — one received message (bytes, framing already removed) to one reply:
  parses the ``<rpc>`` (RFC 6241 §4.1), calls the operation on the router's
  :class:`ani.netconf.datastore.Device` (blocking: the server runs this in a thread) and builds
  the ``<rpc-reply>`` (§4.2): ``<ok/>``; or ``<rpc-error>``\\ s (§4.3) then ``<data>``; a reply
  carrying warnings has no ``<ok/>`` (§4.4). The reply echoes every attribute of the ``<rpc>``.

Operations (base namespace unless noted): ``get``, ``get-config``, ``edit-config``, ``validate``,
``lock``, ``unlock``, ``commit``, ``cancel-commit``, ``discard-changes``, ``close-session``,
``kill-session``; ``get-schema`` (RFC 6022 §3.1, ietf-netconf-monitoring namespace). ``get``
also returns ``/netconf-state`` (RFC 6022: capabilities, schemas, sessions). Parameters are
checked here (missing / unknown elements, enumerations); values with datastore meaning
(``confirm-timeout``, ``persist``, ``persist-id``) go to the Device as the strings received.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from ani.errors import HostFault, ProgramMissing
from ani.host.programs import note_fault
from ani.netconf.errors import BASE_NS, RpcError, RpcErrors

log = logging.getLogger(__name__)

MON_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"
#: scrapli 2.0 (libscrapli) sends <validate> in this namespace instead of the base one (its
#: children inherit it); accepted as the base-namespace <validate> for interoperability
VALIDATE_ALIAS_NS = "urn:ietf:params:xml:ns:netconf:capability:validate:1.0"
BASE_1_0 = "urn:ietf:params:netconf:base:1.0"
BASE_1_1 = "urn:ietf:params:netconf:base:1.1"
#: protocol capabilities; the YANG module URIs are added by :func:`server_capabilities`
PROTOCOL_CAPABILITIES = (
    BASE_1_0,
    BASE_1_1,
    "urn:ietf:params:netconf:capability:candidate:1.0",
    "urn:ietf:params:netconf:capability:confirmed-commit:1.1",
    "urn:ietf:params:netconf:capability:validate:1.1",
    "urn:ietf:params:netconf:capability:rollback-on-error:1.0",
    f"{MON_NS}?module=ietf-netconf-monitoring&revision=2010-10-04",
)

#: entities are never resolved, nothing is fetched, no DTD is loaded (a DOCTYPE is refused);
#: comments and processing instructions are dropped at parse time, so that a value written
#: around one (``PL<!-- c -->-A``) is read whole (lxml's ``.text`` would stop at it)
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False,
                          remove_comments=True, remove_pis=True)
_NS_RE = re.compile(r'^\s*namespace\s+["\']?([^"\';\s]+)', re.M)
_PREFIX_RE = re.compile(r'^\s*prefix\s+["\']?([A-Za-z_][\w.-]*)', re.M)


def _q(name: str, ns: str = BASE_NS) -> str:
    return f"{{{ns}}}{name}"


#: ani's own capability: the server stops (and rolls back) a commit still applying after
#: ``?seconds=N`` (:class:`ani.netconf.limits.Limits`), so a client that waits that long for the
#: reply never gives up on a commit that then lands (issue 23); A2 reads it from the hello
COMMIT_BOUND_CAPABILITY = "urn:ani:params:netconf:capability:commit-bound:1.0"


def server_capabilities(schemas: dict[str, tuple[str, str]], commit_bound_s: float | None = None) -> list[str]:
    """The capability URIs of the server hello: :data:`PROTOCOL_CAPABILITIES`,
    :data:`COMMIT_BOUND_CAPABILITY` with ``?seconds=`` (whole seconds, rounded up) when
    ``commit_bound_s`` is given, plus ``<namespace>?module=<name>&revision=<rev>`` for every
    module of ``schemas`` (``{name: (revision, YANG text)}``; the namespace is read from the text)."""
    caps = list(PROTOCOL_CAPABILITIES)
    if commit_bound_s is not None:
        caps.append(f"{COMMIT_BOUND_CAPABILITY}?seconds={math.ceil(commit_bound_s)}")
    for name, (rev, text) in sorted(schemas.items()):
        m = _NS_RE.search(text)
        if m:
            caps.append(f"{m.group(1)}?module={name}" + (f"&revision={rev}" if rev else ""))
    return caps


def path_namespaces(schemas: dict[str, tuple[str, str]]) -> dict[str, str]:
    """``{prefix: namespace URI}`` that error-paths may use: ``nc`` (the base namespace) and each
    module's own prefix (its header's ``prefix`` statement, which comes before any ``import``,
    RFC 7950 §7.1) for every module of ``schemas`` (``{name: (revision, YANG text)}``)."""
    out = {"nc": BASE_NS}
    for _rev, text in schemas.values():
        ns, prefix = _NS_RE.search(text), _PREFIX_RE.search(text)
        if ns and prefix:
            out.setdefault(prefix.group(1), ns.group(1))
    return out


def server_hello(session_id: int, capabilities: list[str]) -> bytes:
    """The server's ``<hello>`` (RFC 6241 §8.1) with its capabilities and ``session-id``."""
    hello = etree.Element(_q("hello"), nsmap={None: BASE_NS})
    caps = etree.SubElement(hello, _q("capabilities"))
    for c in capabilities:
        etree.SubElement(caps, _q("capability")).text = c
    etree.SubElement(hello, _q("session-id")).text = str(session_id)
    return etree.tostring(hello, xml_declaration=True, encoding="UTF-8")


def parse_client_hello(message: bytes) -> set[str]:
    """The capability URIs of a client's ``<hello>``.

    Raises:
        ValueError: not XML, not a ``<hello>``, carries a ``session-id`` (RFC 6241 §8.1: the
            server then closes the session), or announces neither base:1.0 nor base:1.1.
    """
    try:
        root = etree.fromstring(message, parser=_PARSER)
    except etree.XMLSyntaxError as exc:
        raise ValueError(f"client hello is not XML: {exc}") from None
    if root.tag != _q("hello"):
        raise ValueError(f"expected <hello> in {BASE_NS}, got {root.tag!r}")
    if root.find(_q("session-id")) is not None:
        raise ValueError("client hello carries a session-id")
    path = f"{_q('capabilities')}/{_q('capability')}"
    caps = {(c.text or "").strip() for c in root.iterfind(path)}
    if not caps & {BASE_1_0, BASE_1_1}:
        raise ValueError("client hello announces neither base:1.0 nor base:1.1")
    return caps


@dataclass
class Session:
    """What :func:`handle` needs to know about the session a message came on.

    Attributes:
        id: this session's id (RFC 6241 §8.1).
        device: the router's ``ani.netconf.datastore.Device``.
        schemas: ``{module name: (revision, YANG text)}`` served by get-schema.
        capabilities: this server's capability URIs (for ``/netconf-state``).
        base11: both sides announced base:1.1 (``malformed-message`` is a base:1.1 error-tag;
            base:1.0 sessions get ``operation-failed`` instead).
        kill: ``kill(session_id)`` ends another session of the same device (releasing its locks,
            rolling back its pending confirmed commit) or raises RpcError(invalid-value).
        sessions: ``() -> list[dict]`` describing the device's sessions for ``/netconf-state``
            (keys ``session-id``, ``transport``, ``username``, ``source-host``, ``login-time``).
    """

    id: int
    device: Any
    schemas: dict[str, tuple[str, str]] = field(default_factory=dict)
    capabilities: list[str] = field(default_factory=list)
    base11: bool = False
    kill: Callable[[int], None] | None = None
    sessions: Callable[[], list[dict[str, str]]] | None = None
    #: the prefixes of error-paths and their namespaces (:func:`path_namespaces` of ``schemas``)
    prefixes: dict[str, str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.prefixes = path_namespaces(self.schemas)


@dataclass
class Reply:
    """One ``<rpc-reply>`` (UTF-8 XML, unframed). ``close``: end the session after sending it
    (``close-session``); ``op``: the operation's name (None if the message had none);
    ``errors``: ``severity:tag`` of each rpc-error, for the log."""

    xml: bytes
    close: bool = False
    op: str | None = None
    errors: list[str] = field(default_factory=list)


# -- reply building ------------------------------------------------------------------------------


def _reply(rpc: etree._Element | None, errors: list[RpcError], data: etree._Element | None = None,
           ok: bool = False, prefixes: dict[str, str] | None = None) -> bytes:
    nsmap: dict[str | None, str] = {None: BASE_NS}
    if rpc is not None:
        nsmap.update({p: u for p, u in rpc.nsmap.items() if p is not None and u != BASE_NS})
    reply = etree.Element(_q("rpc-reply"), nsmap=nsmap)
    if rpc is not None:
        for k, v in rpc.attrib.items():  # RFC 6241 §4.2: every attribute of <rpc>, message-id too
            reply.set(k, v)
    for e in errors:
        reply.append(e.to_xml(prefixes=prefixes))
    if data is not None:
        reply.append(data)
    elif ok and not errors:
        etree.SubElement(reply, _q("ok"))
    return etree.tostring(reply, xml_declaration=True, encoding="UTF-8")


def _as_data(result: Any) -> etree._Element:
    """A Device result as a ``<data>`` element (it may return <data>, one element or a list)."""
    if isinstance(result, etree._Element) and result.tag == _q("data"):
        return result
    data = etree.Element(_q("data"), nsmap={None: BASE_NS})
    if isinstance(result, etree._Element):
        result = [result]
    for child in result or []:
        data.append(child)
    return data


# -- parameter parsing ---------------------------------------------------------------------------


def _children(elem: etree._Element) -> list[etree._Element]:
    return [c for c in elem if isinstance(c.tag, str)]


def _local(elem: etree._Element) -> str:
    return etree.QName(elem).localname


def _params(op: etree._Element, allowed: set[str], ns: str = BASE_NS) -> dict[str, etree._Element]:
    """The operation's parameters by local name; unknown or repeated ones are errors."""
    out: dict[str, etree._Element] = {}
    for c in _children(op):
        q = etree.QName(c)
        if q.namespace != ns or q.localname not in allowed:
            raise RpcError("unknown-element", f"<{_local(op)}> has no parameter {q.localname!r}"
                           + ("" if q.namespace == ns else f" in namespace {q.namespace!r}"),
                           type="protocol", info={"bad-element": q.localname})
        if q.localname in out:
            raise RpcError("bad-element", f"<{q.localname}> given twice", type="protocol",
                           info={"bad-element": q.localname})
        out[q.localname] = c
    return out


def _required(params: dict[str, etree._Element], name: str, op: str) -> etree._Element:
    if name not in params:
        raise RpcError("missing-element", f"<{op}> needs <{name}>", type="protocol",
                       info={"bad-element": name})
    return params[name]


def _datastore(params: dict[str, etree._Element], name: str, op: str, allowed: tuple[str, ...],
               config_ok: bool = False) -> str | etree._Element:
    """``<source>``/``<target>``: the datastore name, or the ``<config>`` element if allowed."""
    holder = _required(params, name, op)
    kids = _children(holder)
    if len(kids) != 1:
        raise RpcError("missing-element" if not kids else "bad-element",
                       f"<{name}> of <{op}> must name exactly one datastore", type="protocol",
                       info={"bad-element": name})
    ds = kids[0]
    q = etree.QName(ds)
    if q.namespace == BASE_NS and q.localname in allowed:
        return q.localname
    if q.namespace == BASE_NS and q.localname == "config" and config_ok:
        return ds
    known = ("running", "candidate", "startup", "url", "config")
    if q.namespace == BASE_NS and q.localname in known:
        what = {"startup": "the startup datastore (:startup)", "url": "<url> (:url)",
                "config": "inline <config>"}.get(q.localname, f"<{q.localname}>")
        raise RpcError("operation-not-supported", f"{what} is not supported as <{name}> of <{op}>"
                       f" (use {' or '.join(f'<{a}/>' for a in allowed)})", type="protocol",
                       info={"bad-element": q.localname})
    raise RpcError("unknown-element", f"unknown datastore <{q.localname}> in <{name}>",
                   type="protocol", info={"bad-element": q.localname})


def _enum(params: dict[str, etree._Element], name: str, allowed: tuple[str, ...],
          default: str) -> str:
    if name not in params:
        return default
    v = (params[name].text or "").strip()
    if v not in allowed:
        raise RpcError("invalid-value", f"<{name}> must be one of {', '.join(allowed)}, not {v!r}",
                       type="protocol", info={"bad-element": name})
    return v


def _filter(params: dict[str, etree._Element]) -> etree._Element | None:
    f = params.get("filter")
    if f is None:
        return None
    ftype = f.get("type", f.get(_q("type"), "subtree"))
    if ftype == "xpath":
        raise RpcError("operation-not-supported",
                       "filter type 'xpath' is not supported (no :xpath capability); use subtree",
                       type="protocol", info={"bad-attribute": "type", "bad-element": "filter"})
    if ftype != "subtree":
        raise RpcError("bad-attribute", f"unknown filter type {ftype!r} (subtree or xpath)",
                       type="protocol", info={"bad-attribute": "type", "bad-element": "filter"})
    return f


def _text(params: dict[str, etree._Element], name: str) -> str | None:
    return (params[name].text or "") if name in params else None


def _flag(params: dict[str, etree._Element], name: str) -> bool:
    """A parameter of YANG type ``empty`` (e.g. ``<confirmed/>``): present or not; content
    in it is ``invalid-value``."""
    e = params.get(name)
    if e is None:
        return False
    if _children(e) or (e.text or "").strip():
        raise RpcError("invalid-value", f"<{name}> takes no value (write <{name}/>)",
                       type="protocol", info={"bad-element": name})
    return True


# -- netconf-state (RFC 6022) --------------------------------------------------------------------


def _split_filter(f: etree._Element | None) -> tuple[etree._Element | None, bool, bool]:
    """Split a ``get`` filter: (the filter for the Device, netconf-state wanted, Device wanted).
    The Device never sees ietf-netconf-monitoring nodes."""
    if f is None:
        return None, True, True
    kids = _children(f)
    if not any(etree.QName(k).namespace == MON_NS for k in kids):
        return f, False, True
    rest = [k for k in kids if etree.QName(k).namespace != MON_NS]
    if not rest:
        return None, True, False
    g = etree.Element(f.tag, attrib=dict(f.attrib), nsmap=f.nsmap)
    g.text = f.text
    for k in rest:
        g.append(_copy(k))
    return g, True, True


def _copy(e: etree._Element) -> etree._Element:
    return etree.fromstring(etree.tostring(e))


def netconf_state(s: Session, selection: etree._Element | None = None) -> etree._Element:
    """``<netconf-state>`` (RFC 6022 §2): ``capabilities``, ``schemas`` and ``sessions``.

    ``selection`` is the filter's ``netconf-state`` element: if it names child containers only
    those are returned (coarse: finer selections inside them return the whole container)."""
    m = lambda n: _q(n, MON_NS)  # noqa: E731
    wanted = None
    if selection is not None and _children(selection):
        wanted = {_local(c) for c in _children(selection) if etree.QName(c).namespace == MON_NS}
    ns = etree.Element(m("netconf-state"), nsmap={None: MON_NS})
    if wanted is None or "capabilities" in wanted:
        caps = etree.SubElement(ns, m("capabilities"))
        for c in s.capabilities:
            etree.SubElement(caps, m("capability")).text = c
    if wanted is None or "schemas" in wanted:
        schemas = etree.SubElement(ns, m("schemas"))
        for name, (rev, text) in sorted(s.schemas.items()):
            sc = etree.SubElement(schemas, m("schema"))
            etree.SubElement(sc, m("identifier")).text = name
            etree.SubElement(sc, m("version")).text = rev
            etree.SubElement(sc, m("format")).text = "yang"
            nsm = _NS_RE.search(text)
            etree.SubElement(sc, m("namespace")).text = nsm.group(1) if nsm else ""
            etree.SubElement(sc, m("location")).text = "NETCONF"
    if (wanted is None or "sessions" in wanted) and s.sessions is not None:
        sessions = etree.SubElement(ns, m("sessions"))
        for info in s.sessions():
            se = etree.SubElement(sessions, m("session"))
            for k in ("session-id", "transport", "username", "source-host", "login-time"):
                if k in info:
                    etree.SubElement(se, m(k)).text = str(info[k])
    return ns


# -- operations ----------------------------------------------------------------------------------

OpResult = tuple[etree._Element | None, list[RpcError], bool]  # (data, warnings, close)


def _op_get(s: Session, op: etree._Element) -> OpResult:
    p = _params(op, {"filter", "with-defaults"})
    if "with-defaults" in p:
        raise RpcError("operation-not-supported", "with-defaults is not supported (RFC 6243 not"
                       " advertised)", type="protocol", info={"bad-element": "with-defaults"})
    f = _filter(p)
    dev_filter, want_state, want_device = _split_filter(f)
    data = _as_data(s.device.get(s.id, dev_filter) if want_device else None)
    if want_state:
        sel = None if f is None else next(
            (k for k in _children(f) if etree.QName(k).namespace == MON_NS), None)
        data.append(netconf_state(s, sel))
    return data, [], False


def _op_get_config(s: Session, op: etree._Element) -> OpResult:
    p = _params(op, {"source", "filter", "with-defaults"})
    if "with-defaults" in p:
        raise RpcError("operation-not-supported", "with-defaults is not supported (RFC 6243 not"
                       " advertised)", type="protocol", info={"bad-element": "with-defaults"})
    source = _datastore(p, "source", "get-config", ("running", "candidate"))
    return _as_data(s.device.get_config(s.id, source, _filter(p))), [], False


def _op_edit_config(s: Session, op: etree._Element) -> OpResult:
    p = _params(op, {"target", "default-operation", "test-option", "error-option", "config", "url"})
    target = _datastore(p, "target", "edit-config", ("candidate", "running"))
    if "url" in p:
        raise RpcError("operation-not-supported", "<url> is not supported (no :url capability);"
                       " send the data in <config>", type="protocol", info={"bad-element": "url"})
    config = _required(p, "config", "edit-config")
    warnings = s.device.edit_config(
        s.id, target, config,
        default_operation=_enum(p, "default-operation", ("merge", "replace", "none"), "merge"),
        error_option=_enum(p, "error-option", ("stop-on-error", "continue-on-error",
                                                "rollback-on-error"), "stop-on-error"),
        test_option=_enum(p, "test-option", ("test-then-set", "set", "test-only"), "test-then-set"),
    )
    return None, list(warnings or []), False


def _op_validate(s: Session, op: etree._Element) -> OpResult:
    p = _params(op, {"source"})
    source = _datastore(p, "source", "validate", ("candidate", "running"), config_ok=True)
    return None, list(s.device.validate(s.id, source) or []), False


def _op_lock(s: Session, op: etree._Element) -> OpResult:
    p = _params(op, {"target"})
    s.device.lock(s.id, _datastore(p, "target", "lock", ("running", "candidate")))
    return None, [], False


def _op_unlock(s: Session, op: etree._Element) -> OpResult:
    p = _params(op, {"target"})
    s.device.unlock(s.id, _datastore(p, "target", "unlock", ("running", "candidate")))
    return None, [], False


def _op_commit(s: Session, op: etree._Element) -> OpResult:
    p = _params(op, {"confirmed", "confirm-timeout", "persist", "persist-id"})
    warnings = s.device.commit(
        s.id, confirmed=_flag(p, "confirmed"), confirm_timeout=_text(p, "confirm-timeout"),
        persist=_text(p, "persist"), persist_id=_text(p, "persist-id"),
    )
    return None, list(warnings or []), False


def _op_cancel_commit(s: Session, op: etree._Element) -> OpResult:
    p = _params(op, {"persist-id"})
    s.device.cancel_commit(s.id, persist_id=_text(p, "persist-id"))
    return None, [], False


def _op_discard_changes(s: Session, op: etree._Element) -> OpResult:
    _params(op, set())
    s.device.discard_changes(s.id)
    return None, [], False


def _op_close_session(s: Session, op: etree._Element) -> OpResult:
    _params(op, set())
    return None, [], True


def _op_kill_session(s: Session, op: etree._Element) -> OpResult:
    p = _params(op, {"session-id"})
    raw = (_required(p, "session-id", "kill-session").text or "").strip()
    if not re.fullmatch(r"[0-9]+", raw) or int(raw) < 1:  # str.isdigit() takes any script's digits
        raise RpcError("invalid-value", f"session-id must be a positive integer, not {raw!r}",
                       type="protocol", info={"bad-element": "session-id"})
    target = int(raw)
    if target == s.id:
        raise RpcError("invalid-value", "kill-session of the current session (use close-session)",
                       type="protocol", info={"bad-element": "session-id"})
    if s.kill is None:
        raise RpcError("operation-not-supported", "kill-session is not available here",
                       type="protocol")
    s.kill(target)
    return None, [], False


def _op_get_schema(s: Session, op: etree._Element) -> OpResult:
    p = _params(op, {"identifier", "version", "format"}, ns=MON_NS)
    if "identifier" not in p:
        raise RpcError("missing-element", "<get-schema> needs <identifier>", type="protocol",
                       info={"bad-element": "identifier"})
    ident = (p["identifier"].text or "").strip()
    version = (p["version"].text or "").strip() if "version" in p else ""
    fmt = (p["format"].text or "yang").strip().rpartition(":")[2] if "format" in p else "yang"
    known = ", ".join(sorted(s.schemas)) or "none"
    if ident not in s.schemas:
        raise RpcError("invalid-value", f"no schema {ident!r} (known: {known})",
                       type="application", info={"bad-element": "identifier"})
    rev, text = s.schemas[ident]
    if version and version != rev:
        raise RpcError("invalid-value", f"schema {ident!r} has only version {rev!r}",
                       type="application", info={"bad-element": "version"})
    if fmt != "yang":
        raise RpcError("invalid-value", f"schema format {fmt!r} is not available (only yang)",
                       type="application", info={"bad-element": "format"})
    data = etree.Element(_q("data", MON_NS), nsmap={None: MON_NS})
    data.text = text
    return data, [], False


OPERATIONS: dict[tuple[str, str], Callable[[Session, etree._Element], OpResult]] = {
    (BASE_NS, "get"): _op_get,
    (BASE_NS, "get-config"): _op_get_config,
    (BASE_NS, "edit-config"): _op_edit_config,
    (BASE_NS, "validate"): _op_validate,
    (BASE_NS, "lock"): _op_lock,
    (BASE_NS, "unlock"): _op_unlock,
    (BASE_NS, "commit"): _op_commit,
    (BASE_NS, "cancel-commit"): _op_cancel_commit,
    (BASE_NS, "discard-changes"): _op_discard_changes,
    (BASE_NS, "close-session"): _op_close_session,
    (BASE_NS, "kill-session"): _op_kill_session,
    (MON_NS, "get-schema"): _op_get_schema,
}


def handle(message: bytes, s: Session) -> Reply:
    """Process one received message (an ``<rpc>``) and return the reply.

    Never raises for anything the peer sent: malformed XML -> ``malformed-message`` (base:1.1;
    ``operation-failed`` on base:1.0 sessions, RFC 6241 Appendix A); no ``message-id`` ->
    ``missing-attribute`` (§4.1); unknown operation -> ``operation-not-supported``; a Device
    failure that is not an RpcError -> ``operation-failed`` (and logged, and noted as a host
    fault: :func:`ani.host.programs.note_fault`, the lab's ``host-faults.jsonl`` in a lab's server).
    """
    op_name: str | None = None

    def out(rpc: etree._Element | None, errors: list[RpcError], data: etree._Element | None = None,
            close: bool = False) -> Reply:
        return Reply(_reply(rpc, errors, data, ok=data is None, prefixes=s.prefixes), close=close,
                     op=op_name,
                     errors=[f"{e.severity}:{e.tag}" for e in errors])

    try:
        root = etree.fromstring(message, parser=_PARSER)
        if root.getroottree().docinfo.doctype:
            raise etree.XMLSyntaxError("DOCTYPE is not allowed in NETCONF messages", 0, 0, 0)
    except etree.XMLSyntaxError as exc:
        tag = "malformed-message" if s.base11 else "operation-failed"
        return out(None, [RpcError(tag, f"the message is not well-formed XML: {exc}", type="rpc")])
    if root.tag != _q("rpc"):
        return out(None, [RpcError(
            "unknown-element", f"expected <rpc> in namespace {BASE_NS}, got {root.tag!r}",
            type="rpc", info={"bad-element": etree.QName(root).localname})])
    if root.get("message-id") is None:
        return out(root, [RpcError(
            "missing-attribute", "<rpc> has no message-id attribute (RFC 6241 §4.1)", type="rpc",
            info={"bad-attribute": "message-id", "bad-element": "rpc"})])
    ops = _children(root)
    if len(ops) != 1:
        return out(root, [RpcError("missing-element", "<rpc> holds no operation", type="rpc",
                                   info={"bad-element": "rpc"}) if not ops else
                          RpcError("unknown-element",
                                   f"<rpc> must hold one operation, got {len(ops)}",
                                   type="rpc", info={"bad-element": _local(ops[1])})])
    op = ops[0]
    q = etree.QName(op)
    if q.namespace == VALIDATE_ALIAS_NS and q.localname == "validate":
        for e in op.iter():
            if isinstance(e.tag, str) and etree.QName(e).namespace == VALIDATE_ALIAS_NS:
                e.tag = _q(etree.QName(e).localname)
        q = etree.QName(op)
    op_name = q.localname
    fn = OPERATIONS.get((q.namespace or "", q.localname))
    if fn is None:
        return out(root, [RpcError(
            "operation-not-supported", f"operation <{q.localname}>"
            + (f" in namespace {q.namespace!r}" if q.namespace != BASE_NS else "")
            + " is not supported", type="protocol", info={"bad-element": q.localname})])
    try:
        data, warnings, close = fn(s, op)
    except RpcError as exc:
        return out(root, [exc])
    except RpcErrors as exc:
        return out(root, exc.errors)
    except Exception as exc:  # noqa: BLE001 - a server fault must still answer the client
        log.exception("session %s: <%s> failed", s.id, q.localname)
        why = f"internal error in <{q.localname}>: {type(exc).__name__}: {exc}"
        if not isinstance(exc, ProgramMissing):  # the registry noted that one already
            note_fault(HostFault(f"NETCONF server: {why}"))  # the harness failed, not the client
        return out(root, [RpcError("operation-failed", why)])
    return out(root, [w for w in warnings if isinstance(w, RpcError)], data, close)
