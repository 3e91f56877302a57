"""Why an SSH session could not be opened: one classification for A1's CLI over SSH (scrapli's
ssh2 transport, :mod:`ani.adapters.cli_session`) and A2's NETCONF over SSH (ncclient / paramiko,
:mod:`ani.netconf.client`).

:func:`classify_ssh_open` turns what the SSH library said (its exception, and for scrapli the
lines its transport logged during the open: libssh2's own message for a refused login is empty)
into an :class:`SshOpenFailure`: a ``cause``, a message that names it, and whether the same call
may succeed if retried:

=====================  =========  ==============================================================
cause                  retriable  message
=====================  =========  ==============================================================
``auth_refused``       no         ``the login was refused for user@host:port (<credential>)``
``host_key_unknown``   no         ``<file> holds no host key for <host> port <port>: ...`` (or
                                  ``cannot read the known_hosts file <file>: line N is not a
                                  known_hosts entry ...``: never the line itself)
``host_key_mismatch``  no         ``the host key of <host> port <port> is not the one <file> ...``
``connection_refused`` yes        ``connection refused on host:port``
``no_answer``          yes        ``no answer from host:port within N s``
``unresolved``         no         ``cannot resolve the host name <host>``
``unreachable``        yes        ``host:port cannot be reached: <strerror>``
``other``              yes        ``<the library's words>``
=====================  =========  ==============================================================

scrapli's ssh2 transport says ``initSocket: failed initializing socket, unable to resolve host``
for every socket failure (a refused port included), so the socket cause is found by one TCP
connect of its own (bounded by ``probe_timeout_s``). A message never holds a password: the
credential is named by where it comes from (the endpoint's ``credential``, e.g. ``password from
$ANI_LAB_PASSWORD``), never by its value.
"""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SshOpenFailure", "classify_ssh_open", "credential_of", "known_hosts_problem", "no_host_key_message"]

#: bound on the TCP connect that tells a refused port from one that gave no answer (seconds)
PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class SshOpenFailure:
    """Why an SSH session could not be opened (see the module doc)."""

    cause: str
    message: str
    retriable: bool


def no_host_key_message(path: Path | str, host: str, port: int) -> str:
    """A2's wording for a known_hosts file without the server's key (used at A1 too)."""
    return f"{path} holds no host key for {host} port {port}: the server cannot be checked"


def known_hosts_problem(path: Path | str) -> str:
    """Where the known_hosts file ``path`` stops being one, never its content: ``line 3 is
    not a known_hosts entry (OpenSSH's 'host[,host...] key-type base64-key')``, or ``it is not
    a known_hosts file`` when no single line is to blame (or it is not UTF-8 text)."""
    import asyncssh

    shape = "(OpenSSH's 'host[,host...] key-type base64-key')"
    try:
        lines = Path(path).read_bytes().decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return f"it is not a known_hosts file {shape}"
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            asyncssh.import_known_hosts(line + "\n")
        except (ValueError, asyncssh.Error):
            return f"line {n} is not a known_hosts entry {shape}"
    return f"it is not a known_hosts file {shape}"


def credential_of(ep: Any) -> str:
    """Where the endpoint's secret comes from (``ep.credential`` when it says, else the kind of
    secret: ``the password``, ``the key file <path>``), never the secret."""
    said = getattr(ep, "credential", "") or ""
    if said:
        return said
    key = getattr(ep, "private_key", None)
    return f"the key file {key}" if key else "the password"


def _text(exc: BaseException | None) -> str:
    parts, seen = [], exc
    for _ in range(4):  # the exception and what it was raised from
        if seen is None:
            break
        parts.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return " | ".join(parts)


def _kinds(exc: BaseException | None) -> set[str]:
    out, seen = set(), exc
    for _ in range(4):
        if seen is None:
            break
        out.update(c.__name__ for c in type(seen).__mro__)
        seen = seen.__cause__ or seen.__context__
    return out


def _field(ep: Any, name: str) -> Any:
    """``ep.name`` (an endpoint), or ``ep[name]`` (a mapping); None when it has none."""
    return ep.get(name) if isinstance(ep, dict) else getattr(ep, name, None)


def _probe(host: str, port: int, timeout_s: float) -> SshOpenFailure | None:
    """Why a TCP connect to host:port fails, or None if it succeeds."""
    where = f"{host}:{port}"
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except ConnectionRefusedError:
        return SshOpenFailure("connection_refused", f"connection refused on {where} (nothing listens there)", True)
    except socket.gaierror as exc:
        return SshOpenFailure("unresolved", f"cannot resolve the host name {host!r} ({exc.strerror})", False)
    except (socket.timeout, TimeoutError):
        return SshOpenFailure("no_answer", f"no answer from {where} within {timeout_s:g} s", True)
    except OSError as exc:
        if exc.errno == errno.ETIMEDOUT:
            return SshOpenFailure("no_answer", f"no answer from {where} within {timeout_s:g} s", True)
        return SshOpenFailure("unreachable", f"{where} cannot be reached: {exc.strerror or exc}", True)
    return None


def classify_ssh_open(exc: BaseException | None, ep: Any, *, log_lines: list[str] | tuple[str, ...] = (),
                      probe_timeout_s: float = PROBE_TIMEOUT_S) -> SshOpenFailure:
    """The cause of an SSH open that failed with ``exc`` on endpoint ``ep`` (``host``, ``port``,
    ``username``, ``known_hosts``, ``private_key``, ``credential``); ``log_lines``: what the SSH
    library logged during the open (scrapli). See the module doc."""
    host, port = str(_field(ep, "host") or "?"), _field(ep, "port")
    user = _field(ep, "username") or "?"
    known = _field(ep, "known_hosts")
    text = _text(exc)
    logged = "\n".join(log_lines)
    low, kinds = f"{text}\n{logged}".lower(), _kinds(exc)
    # the server's key: scrapli "initKnownHost: known host check not found / mismatch",
    # paramiko BadHostKeyException, asyncssh HostKeyNotVerifiable
    # scrapli "initKnownHost: failed to read known hosts file": missing, unreadable or no known_hosts
    if "known host check not found" in low or "failed to read known hosts file" in low:
        return SshOpenFailure("host_key_unknown", _unknown_key(known, host, port), False)
    if "known host check mismatch" in low or kinds & {"BadHostKeyException", "HostKeyNotVerifiable", "SSHUnknownHostError"}:
        return SshOpenFailure(
            "host_key_mismatch",
            f"the host key of {host} port {port} is not the one {known or 'the known_hosts file'} holds for it: "
            "refusing to log in (another server on that address, or its key changed)", False)
    # the login: ncclient AuthenticationError, paramiko AuthenticationException, asyncssh
    # PermissionDenied; scrapli raises "Transport: " (empty) after logging "failed ... authentication"
    if (kinds & {"AuthenticationError", "AuthenticationException", "PermissionDenied"}
            or "failed password authentication" in low or "failed public key authentication" in low
            or "failed keyboard interactive authentication" in low or "authentication failed" in low):
        return SshOpenFailure(
            "auth_refused",
            f"the login was refused for {user}@{host}:{port} (credential: {credential_of(ep)}); a retry with "
            "the same credential is refused again: fix the credential", False)
    # the socket: the library's own exception says it, when it is one of the socket's
    if "ConnectionRefusedError" in kinds:
        return SshOpenFailure("connection_refused", f"connection refused on {host}:{port} (nothing listens there)", True)
    # scrapli says "unable to resolve host" for every socket failure; look for ourselves
    if isinstance(port, int) and host != "?" and ("initsocket" in low or "could not open socket" in low or "OSError" in kinds
            or "SSHError" in kinds and "socket" in low):
        found = _probe(host, port, probe_timeout_s)
        if found is not None:
            return found
    what = (text.split(": ", 1)[1] if ": " in text else text).strip() or "no reason given by the SSH library"
    return SshOpenFailure("other", f"the SSH session to {host}:{port} failed: {what}", True)


def _unknown_key(known: Path | str | None, host: str, port: int) -> str:
    if known is None:
        return f"no host key known for {host} port {port}: the server cannot be checked"
    try:
        Path(known).read_bytes()
    except OSError as exc:
        return f"cannot read the known_hosts file {known}: {exc.strerror or exc}"
    import asyncssh

    try:
        asyncssh.read_known_hosts(str(known))
    except (OSError, ValueError):  # asyncssh quotes the line: never passed on
        return f"cannot read the known_hosts file {known}: {known_hosts_problem(known)}"
    return no_host_key_message(known, host, port)
