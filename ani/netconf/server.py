"""NETCONF over SSH (RFC 6242) with asyncssh: one listening port per router, one session per
SSH channel that requests the ``netconf`` subsystem.

Per session: the server sends its ``<hello>`` (capabilities + session-id) at once, reads the
client's (base:1.0 framing for both), then switches both directions to chunked framing if both
announced base:1.1 (RFC 6242 §4.1). RPCs of one session are handled in order, each in a worker
thread (Device calls block); sessions run concurrently (the Device serialises them). When a
session ends (close-session, kill-session, disconnect, framing error) the server calls
``Device.session_closed(sid)`` once no RPC of it is running any more.

Authentication: password only, one username / password for all routers (the lab's credentials).

The server may listen before its Devices exist (``NetconfServer(routers=[...])`` then
``set_devices()``): a session that opens meanwhile gets its hello once they are set, so the
ports can be announced while the (slow to import) datastore is still being built.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import asyncssh

from ani.host.threads import ContextPool, bind, thread
from ani.netconf import rpc
from ani.netconf.errors import RpcError
from ani.netconf.framing import Decoder, FramingError, encode

log = logging.getLogger(__name__)

#: a client that has not sent its <hello> after this many seconds is disconnected
HELLO_TIMEOUT_S = 60.0
#: largest message accepted (bytes); a bigger one closes the session
MAX_MESSAGE = 64 * 1024 * 1024
#: after close-session's <ok/>, how long the server waits for the client to close the channel
#: before closing it itself: closed at once, the reply and the close reached yangcli (yuma123) in
#: one read and it discarded the reply ("Discarding final buffer with EOF")
CLOSE_GRACE_S = 2.0


@dataclass
class _Router:
    name: str
    device: Any = None
    acceptor: Any = None
    port: int = 0
    sessions: dict[int, _Session] = field(default_factory=dict)
    # frozen management plane (issue 14, faults-kinds): set while the router runs; cleared
    # while it is frozen (hellos and RPCs of its sessions wait); made on the event loop
    running: asyncio.Event | None = None
    frozen_since: float | None = None  # Unix seconds
    release: threading.Event | None = None  # set to end the Device hold (see freeze)


class NetconfServer:
    """The NETCONF server of one lab: one SSH listener per router.

    Args:
        devices: ``{router name: Device}`` (``ani.netconf.datastore.Device`` or a stand-in with
            the same methods), or just the router names (then call :meth:`set_devices`).
        username, password: the only accepted credentials.
        host_key: an asyncssh private key (or path) used as the SSH host key.
        schemas: ``{module: (revision, YANG text)}`` for get-schema and the hello (with
            ``devices`` given; otherwise from :meth:`set_devices`).
        host: address to bind (127.0.0.1).
        executor: where Device calls run; default a thread pool sized to the routers.

    ``await start(ports=None)`` binds every router (to the port wanted, else any free one) and
    returns ``{router: port}``; ``await close()`` stops listening and drops every session
    without calling ``session_closed`` (the process is going away: what its sessions leave
    pending is the Devices' ``shutdown()``, see :mod:`ani.netconf.serve`).
    """

    def __init__(self, devices: dict[str, Any] | list[str], username: str, password: str,
                 host_key: Any, schemas: dict[str, tuple[str, str]] | None = None,
                 host: str = "127.0.0.1", executor: ThreadPoolExecutor | None = None) -> None:
        names = list(devices)
        self.routers = {n: _Router(n) for n in names}
        self.username = username
        self._password = password
        self.host_key = host_key
        self.schemas: dict[str, tuple[str, str]] = {}
        self.capabilities: list[str] = []
        self.host = host
        self.executor = executor or ContextPool(
            max_workers=min(32, 4 + 2 * len(names)), thread_name_prefix="netconf")
        self.loop: asyncio.AbstractEventLoop | None = None
        self._next_id = 0
        self._lock = threading.Lock()  # sessions dicts: read from worker threads (kill-session)
        self.closing = False
        self.ready = asyncio.Event()  # Devices and schemas are set: sessions may start
        self._initial = (devices, schemas or {}) if isinstance(devices, dict) else None

    def set_devices(self, devices: dict[str, Any], schemas: dict[str, tuple[str, str]]) -> None:
        """Give every router its Device (same names as at construction) and the schemas;
        sessions waiting for them start. Call on the event loop (``call_soon_threadsafe``)."""
        if set(devices) != set(self.routers):
            raise ValueError(f"devices for {sorted(devices)}, routers {sorted(self.routers)}")
        for n, d in devices.items():
            self.routers[n].device = d
        self.schemas = schemas
        limits = getattr(next(iter(devices.values()), None), "limits", None)
        self.capabilities = rpc.server_capabilities(schemas, getattr(limits, "commit_bound_s", None))
        self.ready.set()

    def check_password(self, username: str, password: str) -> bool:
        ok_user = secrets.compare_digest(username.encode(), self.username.encode())
        ok_pw = secrets.compare_digest(password.encode(), self._password.encode())
        return ok_user and ok_pw

    async def start(self, ports: dict[str, int] | None = None) -> dict[str, int]:
        """Listen on ``host``, one port per router. ``ports``: the port wanted for each router
        (e.g. the previous server's, so that clients find a restarted server where it was);
        a router not in it, or whose port cannot be bound (taken meanwhile), gets a free one.
        Returns ``{router: port}``."""
        self.loop = asyncio.get_running_loop()
        if self._initial is not None:
            self.set_devices(*self._initial)
        for r in self.routers.values():
            want = int((ports or {}).get(r.name) or 0)
            try:
                r.acceptor = await self._listen(r, want)
            except OSError as exc:
                if not want:
                    raise
                log.warning("%s: port %d is not free (%s): listening on another one", r.name,
                            want, exc)
                r.acceptor = await self._listen(r, 0)
            r.port = r.acceptor.get_port()
            log.info("%s: NETCONF over SSH on %s port %d", r.name, self.host, r.port)
        return self.ports

    async def _listen(self, r: _Router, port: int) -> Any:
        return await asyncssh.create_server(
            lambda r=r: _SSHServer(self, r), self.host, port,
            server_host_keys=[self.host_key], encoding=None, line_editor=False,
            allow_pty=False, x11_forwarding=False, agent_forwarding=False,
            login_timeout=HELLO_TIMEOUT_S, keepalive_interval=0,
        )

    @property
    def ports(self) -> dict[str, int]:
        return {n: r.port for n, r in self.routers.items()}

    async def close(self) -> None:
        self.closing = True
        for name in list(self.frozen()):  # a held Device would block its shutdown()
            self.thaw(name)
        for r in self.routers.values():
            if r.acceptor is not None:
                r.acceptor.close()
        with self._lock:
            sessions = [s for r in self.routers.values() for s in r.sessions.values()]
        for s in sessions:
            s.abort()
        for r in self.routers.values():
            if r.acceptor is not None:
                try:
                    await asyncio.wait_for(r.acceptor.wait_closed(), 2.0)
                except (TimeoutError, asyncio.TimeoutError):
                    pass

    # -- a frozen router's management plane (issue 14, faults-kinds) --------------------------

    def _running(self, r: _Router) -> asyncio.Event:
        if r.running is None:
            r.running = asyncio.Event()
            r.running.set()
        return r.running

    async def freeze(self, router: str, timeout_s: float = 30.0) -> bool:
        """Freeze ``router``'s part of this server, as if the router's management process were
        stopped: its sessions' hellos and RPCs wait (received, not answered: the client sees no
        reply until it times out), and its Device is held (:meth:`Device.hold`), so its
        confirm timer cannot roll back meanwhile either. The SSH transport is this process's,
        shared by every router: the SSH handshake of a new connection still completes, the
        NETCONF hello does not come. Waits (up to ``timeout_s`` seconds) for an operation in
        progress on the Device to finish. Returns True if the router is frozen (also when it
        already was); False if the Device could not be held in time (then nothing is frozen).
        Call on the event loop."""
        r = self.routers[router]
        ev = self._running(r)
        if r.release is not None:
            return True
        ev.clear()
        if r.device is not None and hasattr(r.device, "hold"):
            release, held = threading.Event(), threading.Event()
            thread(r.device.hold, release, held, name=f"netconf-freeze-{router}").start()
            ok = await asyncio.get_running_loop().run_in_executor(None, bind(held.wait), timeout_s)
            if not ok:
                release.set()
                ev.set()
                return False
            r.release = release
        else:
            r.release = threading.Event()
        r.frozen_since = time.time()
        log.warning("%s: management plane frozen", router)
        return True

    def thaw(self, router: str) -> None:
        """Undo :meth:`freeze`: the Device is released and waiting hellos / RPCs run (in the
        order they came). Idempotent. Call on the event loop."""
        r = self.routers[router]
        if r.release is None:
            return
        r.release.set()
        r.release = None
        r.frozen_since = None
        self._running(r).set()
        log.warning("%s: management plane resumed", router)

    def frozen(self) -> dict[str, float]:
        """``{router: Unix seconds it was frozen since}`` of the routers frozen now."""
        return {n: r.frozen_since for n, r in self.routers.items() if r.frozen_since is not None}

    # -- sessions -------------------------------------------------------------------------------

    def _register(self, router: _Router, session: _Session) -> int:
        with self._lock:
            self._next_id += 1
            router.sessions[self._next_id] = session
            return self._next_id

    def _unregister(self, router: _Router, sid: int) -> None:
        with self._lock:
            router.sessions.pop(sid, None)

    def sessions_info(self, router: _Router) -> list[dict[str, str]]:
        with self._lock:
            return [s.info() for s in router.sessions.values() if s.id]

    def kill(self, router: _Router, sid: int) -> None:
        """kill-session (RFC 6241 §7.9), from a worker thread: end session ``sid`` of
        ``router``. Its locks are released and its pending confirmed commit rolled back before
        this returns. Raises RpcError(invalid-value) if ``router`` has no such session."""
        with self._lock:
            target = router.sessions.get(sid)
        if target is None or target.ending:
            raise RpcError("invalid-value", f"{router.name} has no session {sid}", type="protocol",
                           info={"bad-element": "session-id"})
        log.info("%s: session %d killed", router.name, sid)
        target.ending = True
        router.device.session_closed(sid)
        assert self.loop is not None
        self.loop.call_soon_threadsafe(target.abort)


class _SSHServer(asyncssh.SSHServer):
    def __init__(self, server: NetconfServer, router: _Router) -> None:
        self.server = server
        self.router = router
        self.peer = "?"

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        peer = conn.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self.username = ""

    def begin_auth(self, username: str) -> bool:
        self.username = username
        return True  # authentication is always required

    def password_auth_supported(self) -> bool:
        return True

    def kbdint_auth_supported(self) -> bool:
        return False

    def public_key_auth_supported(self) -> bool:
        return False

    def validate_password(self, username: str, password: str) -> bool:
        ok = self.server.check_password(username, password)
        if not ok:
            log.warning("%s: password refused for %r from %s", self.router.name, username,
                        self.peer)
        return ok

    def session_requested(self) -> asyncssh.SSHServerSession:
        return _Session(self.server, self.router, self.username, self.peer)


class _Session(asyncssh.SSHServerSession):
    """One NETCONF session (one SSH channel with the netconf subsystem)."""

    def __init__(self, server: NetconfServer, router: _Router, username: str, peer: str) -> None:
        self.server = server
        self.router = router
        self.username = username
        self.peer = peer
        self.id = 0
        self.chan: asyncssh.SSHServerChannel | None = None
        self.decoder = Decoder(max_message=MAX_MESSAGE)
        self.chunked_out = False
        self.hello_done = False
        self.hello_sent = False
        self.ending = False  # no more RPCs are handled (close-session, kill-session, disconnect)
        self.released = False  # session_closed ran after the last RPC (close-session)
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.peer_gone = asyncio.Event()  # the client sent EOF or closed the channel
        self.worker: asyncio.Task[None] | None = None
        self.login = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.ctx: rpc.Session | None = None

    # asyncssh callbacks
    def connection_made(self, chan: asyncssh.SSHServerChannel) -> None:
        self.chan = chan

    def subsystem_requested(self, subsystem: str) -> bool:
        return subsystem == "netconf"

    def shell_requested(self) -> bool:
        return False

    def exec_requested(self, command: str) -> bool:
        return False

    def session_started(self) -> None:
        self.id = self.server._register(self.router, self)
        log.info("%s: session %d started (user %s from %s)", self.router.name, self.id,
                 self.username, self.peer)
        self.worker = asyncio.get_running_loop().create_task(self._work())
        asyncio.get_running_loop().call_later(HELLO_TIMEOUT_S, self._hello_timeout)

    def data_received(self, data: bytes, datatype: int | None) -> None:
        self._feed(data)

    def _feed(self, data: bytes) -> None:
        if self.ending:
            return
        self.decoder.feed(data)
        if not self.hello_sent:
            return  # parsed once our hello is out (the framing may change right after it)
        try:
            while (msg := self.decoder.next_message()) is not None:
                if not self.hello_done:
                    self._client_hello(msg)
                    if self.ending:
                        return
                else:
                    self.queue.put_nowait(msg)
        except FramingError as exc:
            log.warning("%s: session %d: framing error, closing: %s", self.router.name,
                        self.id, exc)
            self.abort()

    def eof_received(self) -> bool:
        self.peer_gone.set()
        self.queue.put_nowait(None)
        return False  # close the channel

    def connection_lost(self, exc: Exception | None) -> None:
        self.ending = True
        self.peer_gone.set()
        self.queue.put_nowait(None)

    # internals
    def info(self) -> dict[str, str]:
        host = self.peer.rsplit(":", 1)[0]
        return {"session-id": str(self.id), "transport": "netconf-ssh", "username": self.username,
                "source-host": host, "login-time": self.login}

    def _client_hello(self, msg: bytes) -> None:
        try:
            caps = rpc.parse_client_hello(msg)
        except ValueError as exc:
            log.warning("%s: session %d: bad client hello, closing: %s", self.router.name,
                        self.id, exc)
            self.abort()
            return
        self.hello_done = True
        if rpc.BASE_1_1 in caps:
            # our hello went out before any message of the client is read (see _work): from
            # here on both directions are chunked
            self.decoder.chunked = True
            self.chunked_out = True
            if self.ctx is not None:
                self.ctx.base11 = True
        log.info("%s: session %d: client hello, framing %s", self.router.name, self.id,
                 "base:1.1 chunked" if self.chunked_out else "base:1.0 end-of-message")

    def _hello_timeout(self) -> None:
        if not self.hello_done and not self.ending:
            log.warning("%s: session %d: no client hello in %g s, closing", self.router.name,
                        self.id, HELLO_TIMEOUT_S)
            self.abort()

    def _write(self, message: bytes) -> None:
        if self.chan is not None and not self.chan.is_closing():
            self.chan.write(encode(message, self.chunked_out))

    def abort(self) -> None:
        """End the session now (no more RPCs are handled; the channel is closed)."""
        self.ending = True
        self.queue.put_nowait(None)
        if self.chan is not None:
            self.chan.close()

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            await self.server.ready.wait()
            await self.server._running(self.router).wait()  # a frozen router sends no hello
            if self.ending:
                return
            self.ctx = rpc.Session(
                id=self.id, device=self.router.device, schemas=self.server.schemas,
                capabilities=self.server.capabilities,
                kill=lambda sid: self.server.kill(self.router, sid),
                sessions=lambda: self.server.sessions_info(self.router),
            )
            self._write(rpc.server_hello(self.id, self.server.capabilities))
            self.hello_sent = True
            self._feed(b"")  # the client's hello (and more) may have arrived meanwhile
            while True:
                msg = await self.queue.get()
                if msg is None or self.ending:
                    break
                await self.server._running(self.router).wait()  # frozen: the RPC waits
                if self.ending:  # the client went away meanwhile: nobody waits for a reply
                    break
                t0 = time.monotonic()
                reply = await loop.run_in_executor(self.server.executor, rpc.handle, msg, self.ctx)
                log.info("%s: session %d: <%s> %s (%.3f s)", self.router.name, self.id, reply.op,
                         ", ".join(reply.errors) or "ok", time.monotonic() - t0)
                if self.ending:  # killed while this RPC ran: the reply goes nowhere
                    break
                if reply.close:
                    # RFC 6241 §7.8: the session's locks and resources are released, then the
                    # <ok/> goes out: a client that reads it may rely on them being free
                    self.ending = self.released = True
                    await loop.run_in_executor(self.server.executor,
                                               self.router.device.session_closed, self.id)
                self._write(reply.xml)
                if reply.close:
                    self.ending = True
                    try:  # the client closes on reading <ok/>; else we do, shortly
                        await asyncio.wait_for(self.peer_gone.wait(), CLOSE_GRACE_S)
                    except (TimeoutError, asyncio.TimeoutError):
                        pass
                    if self.chan is not None:
                        self.chan.close()
                    break
        except Exception:  # noqa: BLE001 - a fault here must end the session, visibly
            log.exception("%s: session %d failed, closing it", self.router.name, self.id)
        finally:
            self.ending = True
            if self.chan is not None and not self.chan.is_closing():
                # whatever ended the worker, the client must not wait for replies that will
                # never come: nothing reads this channel any more
                self.chan.close()
            if not self.server.closing and self.ctx is not None and not self.released:
                # after the last RPC of this session ended: its locks and its pending confirmed
                # commit go (RFC 6241 §7.5, §8.4.1); also after kill-session, which did it once
                # already, in case an RPC of this session was still running then
                try:
                    await loop.run_in_executor(self.server.executor,
                                               self.router.device.session_closed, self.id)
                except Exception:  # noqa: BLE001
                    log.exception("%s: session %d: session_closed failed", self.router.name,
                                  self.id)
            self.server._unregister(self.router, self.id)
            log.info("%s: session %d ended", self.router.name, self.id)
