"""Debian's ``netconfd`` (yuma123 2.13), a third-party NETCONF server, for the tests of A2 against
a device that does not serve ani-frr (tests/integration/test_a2_netconfd.py).

netconfd speaks NETCONF on a Unix socket; an SSH server hands it each session through
``netconf-subsystem`` (which reads ``SSH_CONNECTION`` and ``USER`` and connects to the socket
named for that port). There is no sshd here: :class:`NetconfdPeer` runs its own SSH server
(asyncssh, in a thread) on 127.0.0.1, any free port, password login with a random password,
whose ``netconf`` subsystem runs netconf-subsystem. Everything it writes is in its own temporary
folder (``HOME`` too: netconfd keeps ``~/.yuma`` there); :meth:`NetconfdPeer.stop` stops the
netconfd it started (by its pid) and removes the folder.

The modules served are ``ietf-interfaces`` and ``iana-if-type`` loaded from its YANG file without its SIL library:
netconfd keeps its data in memory (the SIL of Debian's netconfd-module-ietf-interfaces runs
``ifconfig`` on the host's interfaces and a helper script the package lacks, and aborts).
``target="candidate"`` (netconfd's default) announces :candidate and :confirmed-commit:1.1;
``target="running"`` announces :writable-running and neither.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

IETF_INTERFACES = Path("/usr/share/yuma/modules/ietf/ietf-interfaces@2014-05-08.yang")
#: the interface types (identities) an interface's mandatory ``type`` takes
IANA_IF_TYPE = Path("/usr/share/yuma/modules/ietf/iana-if-type@2014-05-08.yang")
IF_NS = "urn:ietf:params:xml:ns:yang:ietf-interfaces"


def netconfd() -> str | None:
    """The path of Debian's netconfd, None when it is not installed."""
    exe = shutil.which("netconfd") or ("/usr/sbin/netconfd" if os.path.exists("/usr/sbin/netconfd") else None)
    sub = os.path.exists("/usr/sbin/netconf-subsystem")
    return exe if exe and sub and IETF_INTERFACES.exists() and IANA_IF_TYPE.exists() else None


@dataclass
class Endpoint:
    host: str
    port: int
    username: str
    password: str


class NetconfdPeer:
    """netconfd plus the SSH server in front of it (see the module doc). ``with
    NetconfdPeer(target="running") as peer: peer.endpoint``."""

    def __init__(self, target: str = "candidate", username: str = "ani-test") -> None:
        self.target = target
        self.username = username
        self.password = secrets.token_hex(12)
        # short: a Unix socket path has at most 107 bytes
        self.folder = Path(tempfile.mkdtemp(prefix="ani-ncd-"))
        self.sock = self.folder / "ncx.sock"
        self.proc: subprocess.Popen[bytes] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.acceptor: Any = None
        self.port = 0

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint("127.0.0.1", self.port, self.username, self.password)

    @property
    def log(self) -> str:
        p = self.folder / "netconfd.log"
        return p.read_text(errors="replace") if p.exists() else ""

    def __enter__(self) -> NetconfdPeer:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout: float = 30.0) -> None:
        exe = netconfd()
        assert exe, "netconfd is not installed (apt-get install netconfd)"
        home = self.folder / "home"
        home.mkdir()
        argv = [exe, f"--ncxserver-sockname={self.sock}", f"--module={IETF_INTERFACES}",
                f"--module={IANA_IF_TYPE}",
                "--no-startup", "--access-control=off", f"--target={self.target}",
                f"--log={self.folder / 'netconfd.log'}", "--log-level=info"]
        self.proc = subprocess.Popen(argv, cwd=self.folder, env={**os.environ, "HOME": str(home)},
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self.sock.exists():
            assert self.proc.poll() is None, f"netconfd exited {self.proc.returncode}:\n{self.log}"
            assert time.monotonic() < deadline, f"netconfd made no socket in {timeout} s:\n{self.log}"
            time.sleep(0.1)
        ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(ready,), daemon=True,
                                       name="netconfd-ssh")
        self.thread.start()
        assert ready.wait(timeout) and self.port, "the SSH server did not start"

    def _serve(self, ready: threading.Event) -> None:
        import asyncssh

        loop = self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        key = asyncssh.generate_private_key("ssh-ed25519")
        peer = self

        class Server(asyncssh.SSHServer):
            def begin_auth(self, username: str) -> bool:
                return True

            def password_auth_supported(self) -> bool:
                return True

            def validate_password(self, username: str, password: str) -> bool:
                return username == peer.username and secrets.compare_digest(password, peer.password)

        async def start() -> None:
            self.acceptor = await asyncssh.create_server(
                Server, "127.0.0.1", 0, server_host_keys=[key], process_factory=self._session,
                encoding=None, allow_pty=False, x11_forwarding=False, agent_forwarding=False)
            self.port = self.acceptor.get_port()
            ready.set()

        loop.run_until_complete(start())
        loop.run_forever()
        loop.close()

    async def _shutdown(self) -> None:
        if self.acceptor is not None:
            self.acceptor.close()
            await asyncio.wait_for(self.acceptor.wait_closed(), 5)
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _session(self, process: Any) -> None:
        if process.subsystem != "netconf":
            process.exit(1)
            return
        peer = process.get_extra_info("peername") or ("127.0.0.1", 0)
        env = {**os.environ, "HOME": str(self.folder / "home"), "USER": self.username,
               # netconfd takes sessions for its --port values only (default 830): the port
               # netconf-subsystem reports is that one, whatever port this SSH server has
               "SSH_CONNECTION": f"{peer[0]} {peer[1]} 127.0.0.1 830"}
        sub = await asyncio.create_subprocess_exec(
            "/usr/sbin/netconf-subsystem", f"--ncxserver-sockname=830@{self.sock}",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=env, cwd=self.folder)
        assert sub.stdin is not None and sub.stdout is not None

        async def client_to_server() -> None:
            while data := await process.stdin.read(65536):
                sub.stdin.write(data)
                await sub.stdin.drain()
            sub.stdin.close()

        inbound = asyncio.ensure_future(client_to_server())
        try:
            while data := await sub.stdout.read(65536):
                process.stdout.write(data)
            await sub.wait()
            process.exit(0)
        finally:
            inbound.cancel()
            if sub.returncode is None:  # the SSH server stops: end the subsystem it started
                sub.kill()
                await sub.wait()

    def stop(self) -> None:
        """Stop the SSH server and the netconfd this object started; remove its folder."""
        if self.loop is not None:
            loop, self.loop = self.loop, None
            try:
                asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(15)
            finally:
                loop.call_soon_threadsafe(loop.stop)
                if self.thread is not None:
                    self.thread.join(10)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)
