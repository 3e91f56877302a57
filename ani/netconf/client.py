"""The NETCONF client (A2's tools, A3-T's transactions): one ncclient session per router, and
reply checking.

ncclient 0.7.1 decides success from the *first* ``<rpc-error>`` of a reply only (with
``RaiseMode.ERRORS`` a reply whose first error is a warning and second an error passes). So the
sessions here run with ``RaiseMode.NONE`` and :func:`check_reply` reads **every**
``<rpc-error>`` of the raw reply itself (RFC 6241 §4.3): any of severity ``error`` (or with no
or an unknown severity) fails the operation; warnings are returned alongside the result.

    >>> s = NetconfSession("r1", lambda: lab.netconf_endpoint("r1"))   # doctest: +SKIP
    >>> reply = s.call("get_config", source="running")                 # doctest: +SKIP
    >>> reply.data, reply.warnings                                       # doctest: +SKIP

Errors raised (turned into ``ToolResult`` failures by :func:`ani.adapters.error_map.error_result`),
each a :class:`NetconfClientError` (an ``ani.errors.AdapterError``) but the timeout:

- :class:`RpcFailed` — the reply carried at least one error-severity ``rpc-error``;
- :class:`ani.errors.AniTimeout` — no reply within the RPC timeout (``seconds``; ``what``:
  ``"no reply to <operation>"``);
- :class:`SessionLost` — the session could not be opened, or dropped while an operation that
  is not safe to repeat was in flight (its outcome is then unknown);
- :class:`Unsupported` — the server's hello does not announce what is needed (a capability, a
  YANG module: :mod:`ani.netconf.hello`); nothing was sent.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from ani.errors import AdapterError, AniError, AniTimeout
from ani.netconf.hello import ServerHello
from ani.ssh_errors import classify_ssh_open, known_hosts_problem, no_host_key_message

BASE_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
MONITORING_NS = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"
#: the features (:data:`ani.netconf.hello.FEATURES`) a session requires by default: A3-T's
#: transactions need both (RFC 6241 §8.3, §8.4); A2 requires none at connect and checks each
#: tool's own needs
REQUIRED_FEATURES = ("candidate", "confirmed-commit")
#: error-tags of a failure that a later retry may not meet (RFC 6241 Appendix A: another session
#: holds the lock or the resource)
RETRIABLE_TAGS = frozenset({"lock-denied", "in-use", "resource-denied"})


def _q(name: str) -> str:
    return f"{{{BASE_NS}}}{name}"


def _local(tag: Any) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else ""


@dataclass(frozen=True)
class ReplyError:
    """One ``<rpc-error>`` of a reply (RFC 6241 §4.3).

    Attributes:
        severity: ``error`` or ``warning`` (as sent; ``""`` if the element was missing).
        tag: ``error-tag`` (e.g. ``data-missing``, ``lock-denied``).
        type: ``error-type`` (transport | rpc | protocol | application).
        message: ``error-message`` text ("" if absent).
        path: ``error-path`` or None.
        app_tag: ``error-app-tag`` or None.
        info: ``error-info`` children by local name (e.g. ``{"session-id": "3"}``); a child
            with element content is given as its XML text; repeated names are joined by ", ".
    """

    severity: str
    tag: str
    type: str = ""
    message: str = ""
    path: str | None = None
    app_tag: str | None = None
    info: dict[str, str] = field(default_factory=dict)

    @property
    def is_error(self) -> bool:
        """True unless the severity is exactly ``warning`` (a missing or unknown severity fails
        the operation: better a false failure than a false success)."""
        return self.severity != "warning"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"severity": self.severity, "tag": self.tag, "type": self.type,
                             "message": self.message}
        if self.path:
            d["path"] = self.path
        if self.app_tag:
            d["app_tag"] = self.app_tag
        if self.info:
            d["info"] = dict(self.info)
        return d

    def describe(self) -> str:
        """One line: ``data-missing (application) at /frr:frr/...: message [session-id=3]``."""
        s = f"{self.tag or '?'}" + (f" ({self.type})" if self.type else "")
        if self.app_tag:
            s += f" app-tag {self.app_tag}"
        if self.path:
            s += f" at {self.path}"
        if self.message:
            s += f": {self.message}"
        if self.info:
            s += " [" + ", ".join(f"{k}={v}" for k, v in self.info.items()) + "]"
        return s


def parse_errors(root: etree._Element) -> list[ReplyError]:
    """Every ``<rpc-error>`` child of an ``<rpc-reply>`` element, in order."""
    out = []
    for e in root.iter(_q("rpc-error")):
        def text(name: str) -> str | None:
            c = e.find(_q(name))
            return None if c is None else (c.text or "").strip()

        info: dict[str, str] = {}
        ie = e.find(_q("error-info"))
        if ie is not None:
            for c in ie:
                if not isinstance(c.tag, str):
                    continue
                if len(c):
                    val = etree.tostring(c, encoding="unicode").strip()
                else:
                    val = (c.text or "").strip()
                name = _local(c.tag)
                info[name] = f"{info[name]}, {val}" if name in info else val
        out.append(
            ReplyError(
                severity=text("error-severity") or "",
                tag=text("error-tag") or "",
                type=text("error-type") or "",
                message=text("error-message") or "",
                path=text("error-path") or None,
                app_tag=text("error-app-tag") or None,
                info=info,
            )
        )
    return out


class NetconfClientError(AdapterError):
    """A failure of the NETCONF client side (a reply, a session)."""


class RpcFailed(NetconfClientError):
    """A reply with at least one error-severity ``rpc-error``.

    Attributes:
        op: the operation (``edit-config``, ...).
        errors: the error-severity ones, in reply order.
        warnings: the warning-severity ones, in reply order (returned separately).
    """

    def __init__(self, op: str, errors: list[ReplyError], warnings: list[ReplyError]) -> None:
        self.op = op
        self.errors = list(errors)
        self.warnings = list(warnings)
        super().__init__(f"{op}: " + "; ".join(e.describe() for e in self.errors))

    @property
    def tags(self) -> list[str]:
        return [e.tag for e in self.errors]


def warning_lines(warnings: list[ReplyError]) -> str:
    """``"\nwarning: <describe>"`` per warning-severity rpc-error ("" for none): what A2's
    results append to their text."""
    if not warnings:
        return ""
    return "\n" + "\n".join(f"warning: {w.describe()}" for w in warnings)


class SessionLost(NetconfClientError):
    """The session could not be opened, or dropped during an operation whose outcome is then
    unknown (``outcome_unknown``)."""

    def __init__(self, message: str, outcome_unknown: bool = False, *, cause: str | None = None,
                 retriable: bool = True) -> None:
        super().__init__(message)
        self.outcome_unknown = outcome_unknown
        #: why the session could not be opened (:func:`ani.ssh_errors.classify_ssh_open`), or None
        self.cause = cause
        #: False when a retry cannot succeed (a refused login, an unknown host key)
        self.retriable = retriable




class Unsupported(SessionLost):
    """The server's hello does not announce what an operation needs; nothing was sent and a
    retry cannot help (``retriable`` False, ``cause`` ``"unsupported"``). A SessionLost, so that
    a caller that handles a session it cannot use (A3-T's transaction) handles this one too; A2's
    tools report it as ``unsupported``. ``missing``: the features (:mod:`ani.netconf.hello`);
    ``details``: more for a tool result's data (what works on that device)."""

    def __init__(self, message: str, missing: list[str] | None = None,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message, cause="unsupported", retriable=False)
        self.missing = list(missing or [])
        self.details = dict(details or {})


@dataclass
class Reply:
    """A successful reply: ``root`` the ``<rpc-reply>`` element, ``warnings`` its
    warning-severity ``rpc-error``s (RFC 6241 §4.4: a reply with warnings has no ``<ok/>``)."""

    root: etree._Element
    warnings: list[ReplyError]

    @property
    def data(self) -> etree._Element | None:
        """The base-namespace ``<data>`` child (get, get-config), or None."""
        return self.root.find(_q("data"))


_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, remove_blank_text=True)


def check_reply(op: str, raw: str | bytes | etree._Element) -> Reply:
    """Check EVERY ``rpc-error`` of a raw reply (see the module doc).

    Returns a :class:`Reply` (its warnings listed) or raises :class:`RpcFailed` naming each
    error-severity error (tag, type, path, message, info), with the warnings attached.
    A reply that is not an ``<rpc-reply>`` raises RpcFailed with tag ``malformed-message``.
    """
    if isinstance(raw, etree._Element):
        root = raw
    else:
        try:
            root = etree.fromstring(raw.encode() if isinstance(raw, str) else raw, _PARSER)
        except etree.XMLSyntaxError as exc:
            raise RpcFailed(op, [ReplyError("error", "malformed-message", "rpc",
                                            f"reply is not XML: {exc}")], []) from None
    if root.tag != _q("rpc-reply"):
        raise RpcFailed(op, [ReplyError("error", "malformed-message", "rpc",
                                        f"reply root is <{root.tag}>, not <rpc-reply>")], [])
    errs = parse_errors(root)
    bad = [e for e in errs if e.is_error]
    warn = [e for e in errs if not e.is_error]
    if bad:
        raise RpcFailed(op, bad, warn)
    return Reply(root, warn)


# -- sessions ------------------------------------------------------------------------------------


def _endpoint_fields(ep: Any) -> dict[str, Any]:
    """host/port/username/password/private_key of an endpoint object or dict, and ``hostkey_b64``
    when it names the server's host key file (``host_key``) or a known_hosts file holding the
    key for its host and port (``known_hosts``; :func:`known_host_b64`)."""
    get = ep.get if isinstance(ep, dict) else (lambda k, d=None: getattr(ep, k, d))
    out = {k: get(k) for k in ("host", "port", "username", "password", "private_key")}
    key, known = get("host_key"), get("known_hosts")
    b64 = _public_key_b64(Path(key)) if key else None
    if b64 is None and known:
        b64 = known_host_b64(Path(known), str(out["host"]), int(out["port"]))
    if b64:
        out["hostkey_b64"] = b64
    return out


def known_host_b64(path: Path, host: str, port: int) -> str:
    """The base64 public key that the known_hosts file ``path`` holds for ``host`` at ``port``
    (``[host]:port``, or ``host`` for port 22; hashed entries too). Raises SessionLost naming the
    file when it cannot be read or holds no key for them (the server cannot be checked: no
    session is opened)."""
    import asyncssh

    try:
        known = asyncssh.read_known_hosts(str(path))
    except OSError as exc:
        raise SessionLost(f"cannot read the known_hosts file {path}: {exc.strerror or exc}",
                          cause="host_key_unknown", retriable=False) from None
    except ValueError:  # asyncssh quotes the line it could not parse: never passed on
        raise SessionLost(f"cannot read the known_hosts file {path}: {known_hosts_problem(path)}",
                          cause="host_key_unknown", retriable=False) from None
    keys = known.match(host, host, port)[0]
    if not keys:
        raise SessionLost(no_host_key_message(path, host, port), cause="host_key_unknown", retriable=False)
    return keys[0].export_public_key().decode().split()[1]


def _public_key_b64(path: Path) -> str | None:
    """The base64 public key of the server's host key file (``<labdir>/netconf_host_key``,
    OpenSSH private key format), or None if it cannot be read."""
    try:
        import paramiko

        for cls in (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey):
            try:
                return cls.from_private_key_file(str(path)).get_base64()
            except (paramiko.SSHException, ValueError):
                continue
    except (OSError, ImportError):
        return None
    return None


#: how often ncclient's transport thread looks at its send queue, seconds. ncclient 0.7.1 polls
#: every 0.1 s (``ncclient.transport.session.TICK``) and only then sends a queued request, so
#: every RPC waited up to 100 ms before leaving the client; 0.01 s costs ~100 wake-ups/s per
#: session and takes that delay down to <= 10 ms (see docs/performance.md).
NCCLIENT_TICK_S = 0.01


def ncclient_connect(ep: Any, *, connect_timeout_s: float, rpc_timeout_s: float) -> Any:
    """An ncclient Manager for ``ep`` with ``RaiseMode.NONE`` (replies are checked by
    :func:`check_reply`). The server's host key is verified when the endpoint names its key
    file and it can be read, or a known_hosts file (a real device: :mod:`ani.inventory`), else not
    (the lab's server listens on 127.0.0.1 only). A ``private_key`` file is offered as well as a
    password."""
    import ncclient.transport.session as nc_session
    from ncclient import manager
    from ncclient.operations import RaiseMode

    if getattr(nc_session, "TICK", 0) > NCCLIENT_TICK_S:
        nc_session.TICK = NCCLIENT_TICK_S  # process-wide: a module constant read by every loop
    f = _endpoint_fields(ep)
    hostkey = f.pop("hostkey_b64", None)
    keyfile = f.get("private_key")
    m = manager.connect(
        host=f["host"], port=int(f["port"]), username=f["username"], password=f["password"],
        key_filename=str(keyfile) if keyfile else None,
        hostkey_verify=hostkey is not None, hostkey_b64=hostkey,
        allow_agent=False, look_for_keys=False, timeout=connect_timeout_s,
        device_params={"name": "default"},
        manager_params={"timeout": rpc_timeout_s},
        errors_params={"raise_mode": RaiseMode.NONE},
    )
    m.raise_mode = RaiseMode.NONE
    m.timeout = rpc_timeout_s
    return m


class NetconfSession:
    """One NETCONF session to one router, opened lazily and re-opened if it dropped.

    Args:
        name: the router.
        endpoint: returns the router's endpoint (``host``, ``port``, ``username``,
            ``password``; see ``ani.lab.netconf``), called at each (re)connect.
        connect_timeout_s, rpc_timeout_s: seconds.
        connect: ``(endpoint, connect_timeout_s=, rpc_timeout_s=) -> manager`` (tests inject a
            fake; default :func:`ncclient_connect`).
        require: the features the server must announce (:data:`REQUIRED_FEATURES` by default):
            a server without one is refused at connect (:class:`Unsupported`).

    ``hello``: the server's :class:`~ani.netconf.hello.ServerHello` once a session was opened
    (None before, or when the manager reports no capabilities: a stand-in in tests).
    ``generation`` counts the sessions opened (0 = never); a caller that remembers it sees a
    reconnect (then the server has released the old session's locks and rolled back its
    unconfirmed confirmed commit, RFC 6241 §7.5 / §8.4.1).
    """

    def __init__(
        self,
        name: str,
        endpoint: Callable[[], Any],
        *,
        connect_timeout_s: float = 10.0,
        rpc_timeout_s: float = 60.0,
        connect: Callable[..., Any] | None = None,
        require: tuple[str, ...] = REQUIRED_FEATURES,
    ) -> None:
        self.name = name
        self.require = tuple(require)
        self.hello: ServerHello | None = None
        self._endpoint = endpoint
        self.connect_timeout_s = connect_timeout_s
        self.rpc_timeout_s = rpc_timeout_s
        self._connect = connect or ncclient_connect
        self._m: Any = None
        self.generation = 0

    @property
    def session_id(self) -> str | None:
        return None if self._m is None else str(getattr(self._m, "session_id", "") or "") or None

    @property
    def is_open(self) -> bool:
        return self._m is not None and bool(getattr(self._m, "connected", False))

    def ensure(self) -> Any:
        """The open manager, (re)connecting if needed. Raises SessionLost."""
        if self.is_open:
            return self._m
        self._drop()
        try:
            ep = self._endpoint()
        except AniError as exc:  # the lab's (or inventory's) own words ("lab X is not running"), no type name
            from ani.errors import ConfigError  # an inventory's gap (no netconf port): a retry cannot help

            raise SessionLost(f"{self.name}: {exc}", retriable=not isinstance(exc, ConfigError)) from exc
        try:
            m = self._connect(ep, connect_timeout_s=self.connect_timeout_s, rpc_timeout_s=self.rpc_timeout_s)
        except SessionLost as exc:  # the known_hosts file, checked before connecting
            raise SessionLost(f"{self.name}: cannot open a NETCONF session: {exc}", cause=exc.cause,
                              retriable=exc.retriable) from exc
        except Exception as exc:  # noqa: BLE001 - ncclient/paramiko/socket/lab errors alike
            why = classify_ssh_open(exc, ep, probe_timeout_s=min(self.connect_timeout_s, 5.0))
            raise SessionLost(f"{self.name}: cannot open a NETCONF session: {why.message}", cause=why.cause,
                              retriable=why.retriable) from exc
        caps = list(getattr(m, "server_capabilities", None) or [])
        hello = ServerHello.parse(caps) if caps else None
        missing = hello.missing(self.require) if hello else []
        if missing:
            _close_quietly(m)
            raise Unsupported(f"{self.name}: the server does not announce "
                              + "; ".join(f"{f} ({ServerHello.needs(f)})" for f in missing), missing)
        self.hello = hello
        self._m = m
        self.generation += 1
        return m

    def call(self, op: str, *, safe_to_repeat: bool = False, wait_s: float | None = None,
             **kwargs: Any) -> Reply:
        """Run manager operation ``op`` (``get_config``, ``edit_config``, ``commit``, ...) and
        check its reply (:func:`check_reply`).

        ``safe_to_repeat``: if the session drops during the operation, re-open it and send the
        operation once more (reads); otherwise raise SessionLost(outcome_unknown=True).
        ``wait_s``: seconds to wait for this reply when longer than ``rpc_timeout_s`` (a commit
        on a server that bounds its commits: wait past that bound, never give up on a commit
        that may still land).
        Raises RpcFailed, AniTimeout (no reply within the wait), SessionLost.
        """
        from ncclient.operations.errors import TimeoutExpiredError
        from ncclient.transport.errors import TransportError

        wire = op.replace("_", "-")
        for attempt in (1, 2):
            m = self.ensure()
            wait = max(self.rpc_timeout_s, wait_s or 0.0)
            try:
                m.timeout = wait
                reply = getattr(m, op)(**kwargs)
            except TimeoutExpiredError:
                raise AniTimeout(wait, f"no reply to {wire}") from None
            except (TransportError, OSError, socket.error, EOFError) as exc:
                self._drop()
                if safe_to_repeat and attempt == 1:
                    continue
                raise SessionLost(
                    f"{self.name}: the NETCONF session dropped during {wire} ({type(exc).__name__}: {exc}); "
                    "its outcome is unknown",
                    outcome_unknown=True,
                ) from exc
            finally:
                if wait != self.rpc_timeout_s and getattr(m, "timeout", None) == wait:
                    m.timeout = self.rpc_timeout_s
            raw = getattr(reply, "xml", reply)
            return check_reply(wire, raw)
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        """Send ``close-session`` (RFC 6241 §7.8) and drop the transport; never raises."""
        m, self._m = self._m, None
        if m is not None:
            _close_quietly(m)

    def _drop(self) -> None:
        m, self._m = self._m, None
        if m is not None:
            try:
                m._session.close()  # noqa: SLF001 - the transport, without close-session
            except Exception:  # noqa: BLE001
                pass


def _close_quietly(m: Any) -> None:
    try:
        if getattr(m, "connected", False):
            m.timeout = min(float(getattr(m, "timeout", 5) or 5), 5.0)
            m.close_session()
    except Exception:  # noqa: BLE001 - closing is best effort
        pass
    try:
        sess = getattr(m, "_session", None)
        if sess is not None and getattr(sess, "connected", False):
            sess.close()
    except Exception:  # noqa: BLE001
        pass
