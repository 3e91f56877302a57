"""One interactive CLI session per device, driven by scrapli 2.0: local (bin transport) or over SSH
(ssh2 transport).

A local session runs ``lab.node_argv(router, ["vtysh"])`` (vtysh inside the router's netns, bound
to its pathspace); an SSH session (:meth:`CliSession.over_ssh`) logs in to an
:class:`ani.lab.ssh.SshEndpoint` (a lab router's SSH port, ``lab.ssh_endpoint(router)``, or a real
device of an inventory, :mod:`ani.inventory`) with its password or key, checking the server's host
key when the endpoint names a known_hosts file. Both use the platform's scrapli definition
(prompts, modes, failure indicators). On open the prompt must carry the device's name (the
endpoint's ``name``, else the device's), so a session can never silently reach another router. Every operation is bounded by a timeout; after a timeout the session is
torn down (its vtysh process ends with it) and reopened on the next use.

    >>> s = CliSession("r1", argv, platform, timeout_s=10.0)      # doctest: +SKIP
    >>> s = CliSession.over_ssh("r1", lambda: lab.ssh_endpoint("r1"), platform)   # doctest: +SKIP
    >>> out = s.send("show bgp summary", mode="exec")              # doctest: +SKIP
    >>> out.output, out.failed, out.elapsed_s                      # doctest: +SKIP

The library's own log lines (libscrapli's, e.g. ``session.Session readTimeout: operation timeout
exceeded...`` when a frozen daemon runs a session into its bound) never reach stderr (an MCP
server's stderr, a campaign's terminal): the ``scrapli`` logger is re-emitted at DEBUG on this
module's logger (``ani.adapters.cli_session``) and does not propagate; what went wrong is in the
exception (:class:`ani.errors.AniTimeout` / :class:`SessionError`). A session that broke (timeout, error) is
discarded with a forced close bounded by :data:`DISCARD_BOUND_S`, not by another operation bound.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ani.adapters.platform import Platform
from ani.errors import AdapterError, AniError, AniTimeout

_NS = 1_000_000_000
#: bound of the forced close of a broken session being discarded, seconds
DISCARD_BOUND_S = 0.5
#: bound of the orderly close of a healthy session, seconds
CLOSE_BOUND_S = 2.0

_log = logging.getLogger(__name__)


def close_within(cli: Any, bound_s: float, *, force: bool) -> None:
    """``cli.close(force=force)`` (a scrapli 2 ``Cli``, open) bounded by ``bound_s`` seconds: the
    bound is set on the session first, and close() is called without ``operation_timeout_ns``.
    With that argument scrapli's timeout decorator resets the timeout after close() has freed the
    driver, on the freed driver (scrapli 2026.10.14: ``Cli.close`` frees it and keeps ``ptr``): a
    write into freed memory at every bounded close, which crashed a pytest worker with a segfault
    under load (2026-12-07; ``tests/integration/test_cli_session_close.py``). Raises what close()
    raises (scrapli's exceptions)."""
    from ctypes import c_uint64

    cli.ffi_mapping.session_mapping.set_operation_timeout_ns(cli._ptr_or_exception(), c_uint64(int(bound_s * _NS)))
    cli.close(force=force)


class _LibraryLogToDebug(logging.Handler):
    """Re-emits a ``scrapli`` log record at DEBUG on ``ani.adapters.cli_session``."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed library record must not break a call
            msg = repr(record.msg)
        _log.debug("%s [%s]: %s", record.name, record.levelname, msg)


def quiet_library_logs() -> None:
    """Route the ``scrapli`` logger (libscrapli's callback logs) to this module's logger at
    DEBUG, and stop it propagating to the root logger (whose handler, or logging's last-resort
    handler, writes to stderr). Idempotent."""
    lib = logging.getLogger("scrapli")
    if not any(isinstance(h, _LibraryLogToDebug) for h in lib.handlers):
        lib.addHandler(_LibraryLogToDebug())
    lib.propagate = False


def is_timeout(exc: BaseException) -> bool:
    """Is a scrapli exception its operation bound running out? scrapli 2 raises either
    ``TimeoutException`` (a ``TimeoutError``) or an ``OperationException`` whose message reads
    ``TimeoutExceeded: ... operation timeout exceeded`` (seen when vtysh waits on a frozen daemon)."""
    return isinstance(exc, TimeoutError) or "timeout" in str(exc).lower()


class SessionError(AdapterError):
    """The session could not be opened or broke (not the agent's fault).

    Attributes:
        cause: why an SSH session could not be opened (:func:`ani.ssh_errors.classify_ssh_open`:
            ``auth_refused``, ``host_key_unknown``, ``connection_refused`` ...), or None.
        retriable: may the same call succeed if retried (False for a refused login or an unknown
            host key: the same credential, the same file, are refused again).
    """

    def __init__(self, message: str, *, cause: str | None = None, retriable: bool = True) -> None:
        super().__init__(message)
        self.cause = cause
        self.retriable = retriable


class _TransportLog(logging.Handler):
    """Collects what scrapli's transport logs for one ``host:port`` while a session opens (libssh2's
    own message for a refused login is empty; the log says ``failed password authentication``)."""

    def __init__(self, where: str) -> None:
        super().__init__(logging.INFO)
        self.where, self.lines = where, []  # type: ignore[var-annotated]

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.endswith(self.where):
            try:
                self.lines.append(record.getMessage())
            except Exception:  # noqa: BLE001
                pass


@dataclass
class SendResult:
    """Output of one line: ``output`` (text without echo and prompt), ``failed`` (scrapli's
    failure indicators matched), ``elapsed_s`` (seconds)."""

    command: str
    output: str
    failed: bool
    elapsed_s: float


@dataclass
class Verdict:
    """Classification of a configuration line's output: status "success" or "error", and the
    device's message (empty if it printed nothing)."""

    status: str
    message: str


def classify(platform: Platform, output: str, scrapli_failed: bool) -> Verdict:
    """Decide whether a configuration line was rejected, from the device's output.

    A line failed if scrapli saw a failure indicator, or (fail closed) if any output line
    starts with an ``error_line_prefixes`` entry and is not a known warning. Other output
    (e.g. "The route-map 'X' does not exist.") is a warning: the line was applied.
    """
    msg = output.strip()
    lines = [ln.strip() for ln in msg.splitlines() if ln.strip()]
    if scrapli_failed or any(ind in msg for ind in platform.d.failure_indicators):
        return Verdict("error", msg or "rejected by the device")
    for ln in lines:
        if any(ln.startswith(p) for p in platform.d.error_line_prefixes):
            if not any(w.search(ln) for w in platform.warnings):
                return Verdict("error", msg)
    return Verdict("success", msg)


class CliSession:
    """A scrapli ``Cli`` on one device's CLI (a router's vtysh).

    Args:
        device: device name; the prompt must start with it (or with the SSH endpoint's ``name``).
        argv: host-side argv that runs vtysh inside the router (``lab.node_argv(r, ["vtysh"])``);
            None for an SSH session.
        platform: the compiled platform (scrapli definition, modes).
        timeout_s: default bound of one operation, seconds (opening included).
        ssh: for an SSH session: the endpoint, or a function returning it (called at each open;
            a :class:`~ani.errors.AniError` it raises, e.g. ``lab X is not running``, becomes a
            SessionError). Use :meth:`over_ssh`.
    """

    def __init__(self, device: str, argv: list[str] | None, platform: Platform, timeout_s: float = 10.0, *,
                 ssh: Any = None) -> None:
        if (argv is None) == (ssh is None):
            raise ValueError("CliSession: give argv (local) or ssh (an endpoint), not both or neither")
        self.device = device
        self.argv = list(argv or [])
        self.ssh = ssh
        self._ep: Any = None  # the SSH endpoint of the last open (None: local)
        self.platform = platform
        self.timeout_s = timeout_s
        self._cli = None

    @classmethod
    def over_ssh(cls, device: str, endpoint: Any | Callable[[], Any], platform: Platform,
                 timeout_s: float = 10.0) -> CliSession:
        """A session that logs in to ``endpoint`` (an :class:`ani.lab.ssh.SshEndpoint`, or a
        function returning one) over SSH (scrapli's ssh2 transport)."""
        return cls(device, None, platform, timeout_s, ssh=endpoint)

    @property
    def transport(self) -> str:
        """``local`` or ``ssh``."""
        return "local" if self.ssh is None else "ssh"

    def _driver(self) -> tuple[Any, str, str]:
        """(the scrapli Cli, the name its prompt must start with, what it is for messages)."""
        from scrapli import Cli
        from scrapli.auth import Options as AuthOptions
        from scrapli.cli import LoadedDefinition
        from scrapli.session import Options as SessionOptions
        from scrapli.transport import BinOptions, Ssh2Options

        definition = LoadedDefinition(platform_name=f"ani_{self.platform.name}",
                                      definition=self.platform.scrapli_definition())
        session = SessionOptions(operation_timeout_ns=int(self.timeout_s * _NS))
        if self.ssh is None:
            if any(" " in a for a in self.argv):
                # the bin transport splits its arguments on spaces
                raise SessionError(f"{self.device}: session argv has an argument with a space: {self.argv!r}")
            cli = Cli(self.device, definition_file_or_name=definition,
                      transport_options=BinOptions(override_open_args=self.argv),
                      auth_options=AuthOptions(bypass_in_session_auth=True), session_options=session,
                      skip_static_options=True)
            return cli, self.device, "vtysh"
        try:
            ep = self._ep = self.ssh() if callable(self.ssh) else self.ssh
        except AniError as exc:  # the lab's or the inventory's own words, no type name
            from ani.errors import ConfigError  # an inventory's gap (no ssh port): a retry cannot help

            raise SessionError(f"{self.device}: {exc}", retriable=not isinstance(exc, ConfigError)) from exc
        cli = Cli(ep.host, port=int(ep.port), definition_file_or_name=definition,
                  transport_options=Ssh2Options(known_hosts_path=str(ep.known_hosts) if ep.known_hosts else None),
                  auth_options=AuthOptions(username=ep.username, password=ep.password,
                                           private_key_path=str(ep.private_key) if ep.private_key else None),
                  session_options=session, skip_static_options=True)
        return cli, getattr(ep, "name", "") or self.device, f"the CLI over SSH ({ep.username}@{ep.host}:{ep.port})"

    @property
    def is_open(self) -> bool:
        return self._cli is not None

    def open(self) -> None:
        """Open if closed.

        Raises:
            AniTimeout: vtysh did not give its prompt within ``timeout_s`` (e.g. a frozen
                daemon): ``timeout after N s (opening vtysh on <device>)``.
            SessionError: vtysh did not start (or the SSH login failed: refused, bad credentials,
                a host key that is not the known one), or the prompt is not the router's.
        """
        if self._cli is not None:
            return
        quiet_library_logs()
        from ani.lab.terminal import hold_controlling_terminal

        hold_controlling_terminal()  # a session leader must not acquire (and lose) this pty
        from scrapli.exceptions import ScrapliException

        cli, name, what = self._driver()
        ep, lib = self._ep, logging.getLogger("scrapli")
        heard = _TransportLog(f"{ep.host}:{ep.port}") if ep is not None else None
        if heard is not None:
            lib.addHandler(heard)
            if lib.getEffectiveLevel() > logging.INFO:
                lib.setLevel(logging.INFO)  # the transport's INFO lines say why a login failed
        t0 = time.monotonic()
        try:
            cli.open()
        except ScrapliException as exc:
            self._discard(cli)
            if is_timeout(exc):
                raise AniTimeout(self.timeout_s, f"opening {what} on {self.device}") from exc
            if ep is None:
                raise SessionError(f"{self.device}: cannot open {what}: {type(exc).__name__}: {exc}") from exc
            from ani.ssh_errors import classify_ssh_open

            why = classify_ssh_open(exc, ep, log_lines=heard.lines if heard else (),
                                    probe_timeout_s=min(self.timeout_s, 5.0))
            raise SessionError(f"{self.device}: cannot open {what}: {why.message}", cause=why.cause,
                               retriable=why.retriable) from exc
        finally:
            if heard is not None:
                lib.removeHandler(heard)
        try:
            prompt = cli.get_prompt(operation_timeout_ns=int(self.timeout_s * _NS)).result.strip()
        except ScrapliException as exc:
            self._discard(cli)
            if is_timeout(exc):
                raise AniTimeout(self.timeout_s, f"opening {what} on {self.device}: no prompt") from exc
            raise SessionError(f"{self.device}: {what} gave no prompt: {exc}") from exc
        if not re.match(rf"^{re.escape(name)}(\(|#)", prompt):
            self._discard(cli)
            raise SessionError(
                f"{self.device}: {what} prompt is {prompt!r}, not the router's name: refusing to "
                "talk to another router's FRR"
            )
        self.open_elapsed_s = time.monotonic() - t0
        self._cli = cli

    @staticmethod
    def _discard(cli: object, *, broken: bool = True) -> None:
        """Close ``cli`` and free it, never raising. A broken session (it timed out or failed)
        is closed by force (no exit input sent) within :data:`DISCARD_BOUND_S`: it is being
        thrown away, so a frozen daemon must not hold the call for another bound. A healthy
        one gets an orderly close within :data:`CLOSE_BOUND_S`."""
        bound = DISCARD_BOUND_S if broken else CLOSE_BOUND_S
        try:
            close_within(cli, bound, force=broken)
        except Exception:  # noqa: BLE001 - the session is being thrown away; free it regardless
            try:
                cli._free()  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001
                pass

    def close(self) -> None:
        """Close (idempotent, never raises)."""
        cli, self._cli = self._cli, None
        if cli is not None:
            self._discard(cli, broken=False)

    def _drop(self) -> None:
        """Discard a session that broke (forced, short close); the next use reopens."""
        cli, self._cli = self._cli, None
        if cli is not None:
            self._discard(cli, broken=True)

    def send(self, command: str, *, mode: str, timeout_s: float | None = None) -> SendResult:
        """Send one line in ``mode`` (the platform's exec or configuration mode name).

        Raises AniTimeout (the bound ran out; the session was reset) or SessionError.
        """
        from scrapli.exceptions import ScrapliException

        self.open()
        bound = timeout_s or self.timeout_s
        t0 = time.monotonic()
        try:
            r = self._cli.send_input(  # type: ignore[union-attr]
                input_=command, requested_mode=mode, operation_timeout_ns=int(bound * _NS)
            )
        except ScrapliException as exc:
            self._drop()
            if is_timeout(exc):
                raise AniTimeout(bound, f"{command!r} on {self.device}") from exc
            raise SessionError(f"{self.device}: {command!r}: {type(exc).__name__}: {exc}") from exc
        return SendResult(command, r.result, bool(r.failed), time.monotonic() - t0)

    def to_exec(self, timeout_s: float | None = None) -> None:
        """Leave configuration mode (``end``), so the next call starts at the top level."""
        from scrapli.exceptions import ScrapliException

        if self._cli is None:
            return
        bound = timeout_s or self.timeout_s
        try:
            self._cli.enter_mode(requested_mode=self.platform.d.exec_mode, operation_timeout_ns=int(bound * _NS))
        except ScrapliException:
            self._drop()
