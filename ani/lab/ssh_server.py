"""``python -m ani.lab.ssh_server --lab ID --dir DIR``: the SSH server of one lab's router CLIs.

Started by ``Lab.up()``, never by hand, normally (see :mod:`ani.lab.ssh` for the files and what a
session gets). One asyncssh listener per router on 127.0.0.1:

* authentication: the lab's username with its password or its client key (``ssh.json``,
  ``ssh_client_key.pub``), compared in constant time; nothing else;
* a shell request (with a pty if the client asked for one: scrapli, ``ssh -t``) runs vtysh in the
  router (``<lab dir>/<router>/enter vtysh``: its netns, its UTS name, vtysh bound to its
  pathspace); an exec request ``CMD`` runs ``vtysh -c CMD`` there; the session's exit status is
  vtysh's. Subsystems (sftp, netconf), port forwarding, agent and X11 forwarding are refused;
* each session's vtysh runs in its own process group, ended (SIGHUP, then SIGKILL) when the
  client goes away; at most :data:`MAX_SESSIONS` at once (more are refused);
* once every port listens, ``ssh.json`` gets ``"ports"`` and ``"pid"`` and ``ssh_known_hosts`` the
  host key for each port.

It stops on SIGTERM / SIGINT, and by itself when the lab's state file disappears (the lab was
removed), ending every session. Logs go to ``<lab dir>/ssh.log`` (never a password or a key).
Exit status: 0 after a signal or the lab's removal, 2 bad arguments / no such lab, 1 failure.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import secrets
import signal
import struct
import sys
import termios
from pathlib import Path
from typing import Any

import asyncssh

log = logging.getLogger("ani.lab.ssh_server")

#: how often the lab's state file is looked at (seconds)
WATCH_S = 1.0
#: sessions open at once, all routers together; more are refused
MAX_SESSIONS = 64
#: a client that has not logged in after this many seconds is disconnected
LOGIN_TIMEOUT_S = 30.0
#: how long a session's vtysh is given to end after SIGHUP (seconds)
HANGUP_S = 1.0


def _set_winsize(fd: int, size: tuple[int, int, int, int]) -> None:
    cols, rows = size[0] or 80, size[1] or 24
    try:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    except OSError:
        pass


def _take_terminal() -> None:
    """In the child (after setsid): make its stdin, the pty's slave, its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class CliServer:
    """The SSH server of one lab's router CLIs.

    Args:
        commands: ``{router: argv prefix}`` that runs a command inside the router (``[<lab
            dir>/<router>/enter]``); ``vtysh`` (and ``-c CMD``) is appended.
        username: the only login accepted.
        password: its password (None: key only).
        client_keys: the public keys accepted (asyncssh keys).
        host_key: the server's host key (asyncssh private key).
        host: the address bound (127.0.0.1).
    """

    def __init__(self, commands: dict[str, list[str]], username: str, password: str | None,
                 client_keys: list[Any], host_key: Any, host: str = "127.0.0.1") -> None:
        self.commands = commands
        self.username = username
        self._password = password
        self._client_keys = [k.export_public_key() for k in client_keys]
        self.host_key = host_key
        self.host = host
        self.ports: dict[str, int] = {}
        self._acceptors: list[Any] = []
        self._children: set[asyncio.subprocess.Process] = set()
        self.sessions = 0

    # -- authentication (asyncssh.SSHServer callbacks, via _Auth) -------------------------------

    @property
    def has_password(self) -> bool:
        return self._password is not None

    def check_password(self, username: str, password: str) -> bool:
        if self._password is None:
            return False
        ok_user = secrets.compare_digest(username.encode(), self.username.encode())
        return ok_user and secrets.compare_digest(password.encode(), self._password.encode())

    def check_key(self, username: str, key: Any) -> bool:
        ok_user = secrets.compare_digest(username.encode(), self.username.encode())
        blob = key.export_public_key()
        return ok_user and any(secrets.compare_digest(blob, k) for k in self._client_keys)

    # -- listening ---------------------------------------------------------------------------------

    async def start(self) -> dict[str, int]:
        """Listen on ``host``, a free port per router. Returns ``{router: port}``."""
        for router in self.commands:
            acc = await asyncssh.create_server(
                lambda: _Auth(self), self.host, 0, server_host_keys=[self.host_key],
                process_factory=lambda p, r=router: self._session(r, p), encoding=None,
                line_editor=False, x11_forwarding=False, agent_forwarding=False, allow_scp=False,
                sftp_factory=None, login_timeout=LOGIN_TIMEOUT_S, keepalive_interval=0,
            )
            self._acceptors.append(acc)
            self.ports[router] = acc.sockets[0].getsockname()[1]
        return dict(self.ports)

    async def close(self) -> None:
        """Stop listening and end every session's vtysh."""
        for acc in self._acceptors:
            acc.close()
        await asyncio.gather(*(self._end(c) for c in list(self._children)), return_exceptions=True)
        for acc in self._acceptors:
            try:
                await asyncio.wait_for(acc.wait_closed(), 2.0)
            except (TimeoutError, asyncio.TimeoutError):
                pass

    # -- one session ------------------------------------------------------------------------------

    async def _session(self, router: str, process: Any) -> None:
        if process.subsystem:
            process.stderr.write(f"subsystem {process.subsystem!r} is not offered here\r\n".encode())
            process.exit(1)
            return
        if self.sessions >= MAX_SESSIONS:
            process.stderr.write(b"too many sessions\r\n")
            process.exit(1)
            return
        self.sessions += 1
        argv = [*self.commands[router], "vtysh"] + ([] if process.command is None else ["-c", process.command])
        term = process.get_terminal_type()
        log.info("%s: %s session%s", router, "exec" if process.command is not None else "shell",
                 " with a pty" if term else "")
        try:
            rc = await (self._pty(process, argv, term) if term else self._pipes(process, argv))
        except Exception:  # noqa: BLE001 - one session's failure must not stop the server
            log.exception("%s: session failed", router)
            rc = 1
        finally:
            self.sessions -= 1
        try:
            process.exit(rc if rc >= 0 else 128 - rc)
        except Exception:  # noqa: BLE001 - the client is gone already
            pass

    async def _pty(self, process: Any, argv: list[str], term: str) -> int:
        master, slave = os.openpty()
        _set_winsize(slave, process.get_terminal_size())
        try:
            child = await asyncio.create_subprocess_exec(
                *argv, stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
                preexec_fn=_take_terminal, env={**os.environ, "TERM": term},
            )
        finally:
            os.close(slave)
        self._children.add(child)
        os.set_blocking(master, False)
        loop = asyncio.get_running_loop()
        out_done = loop.create_future()

        def readable() -> None:
            try:
                data = os.read(master, 65536)
            except BlockingIOError:
                return
            except OSError:  # EIO: the child closed its side
                data = b""
            try:
                if data:
                    process.stdout.write(data)
                    return
            except (OSError, asyncssh.Error):  # the client is gone: stop reading
                pass
            loop.remove_reader(master)
            if not out_done.done():
                out_done.set_result(None)

        loop.add_reader(master, readable)

        async def feed() -> None:
            while True:
                try:
                    data = await process.stdin.read(65536)
                except asyncssh.TerminalSizeChanged as exc:
                    _set_winsize(master, (exc.width, exc.height, 0, 0))
                    continue
                except (asyncssh.BreakReceived, asyncssh.SignalReceived):
                    os.write(master, b"\x03")
                    continue
                if not data:
                    return
                while data:  # the pty's buffer may be full: wait for the child to read
                    try:
                        data = data[os.write(master, data):]
                    except BlockingIOError:
                        await asyncio.sleep(0.01)

        try:
            rc = await self._run(process, child, feed(), out_done)
        finally:
            loop.remove_reader(master)
            os.close(master)
        return rc

    async def _pipes(self, process: Any, argv: list[str]) -> int:
        child = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True,
        )
        self._children.add(child)

        async def copy(src: asyncio.StreamReader, dst: Any) -> None:
            while data := await src.read(65536):
                try:
                    dst.write(data)
                except (OSError, asyncssh.Error):  # the client is gone: drain the child's output
                    pass

        async def feed() -> None:
            try:
                while data := await process.stdin.read(65536):
                    child.stdin.write(data)
                    await child.stdin.drain()
                child.stdin.close()
            except (OSError, asyncssh.Error):  # the child exited, or the client is gone
                pass

        out = asyncio.gather(copy(child.stdout, process.stdout), copy(child.stderr, process.stderr))
        return await self._run(process, child, feed(), out)

    async def _run(self, process: Any, child: asyncio.subprocess.Process, feed: Any, out: Any) -> int:
        """Until the child has exited and its output is forwarded, or the client went away (then
        the child is ended). Returns the child's exit status."""
        feeder = asyncio.ensure_future(feed)
        gone = asyncio.ensure_future(process.wait_closed())
        finished = asyncio.ensure_future(asyncio.gather(child.wait(), out))
        try:
            await asyncio.wait({gone, finished}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for f in (feeder, gone):
                f.cancel()
            if not finished.done():
                await self._end(child)
                finished.cancel()
            self._children.discard(child)
        return child.returncode if child.returncode is not None else 255

    async def _end(self, child: asyncio.subprocess.Process) -> None:
        """End a session's vtysh (its process group): SIGHUP, SIGKILL after :data:`HANGUP_S`."""
        if child.returncode is not None:
            return
        for sig in (signal.SIGHUP, signal.SIGKILL):
            try:
                os.killpg(child.pid, sig)
            except (ProcessLookupError, PermissionError):
                return
            try:
                await asyncio.wait_for(child.wait(), HANGUP_S)
                return
            except (TimeoutError, asyncio.TimeoutError):
                continue


class _Auth(asyncssh.SSHServer):
    """One connection's authentication: the password or a client key of the :class:`CliServer`."""

    def __init__(self, server: CliServer) -> None:
        self.server = server

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return self.server.has_password

    def validate_password(self, username: str, password: str) -> bool:
        return self.server.check_password(username, password)

    def public_key_auth_supported(self) -> bool:
        return True

    def validate_public_key(self, username: str, key: Any) -> bool:
        return self.server.check_key(username, key)


# -- the lab's wiring --------------------------------------------------------------------------------


def server_for(lab_id: str, lab_dir: Path) -> tuple[CliServer, dict[str, Any]]:
    """The :class:`CliServer` of lab ``lab_id`` and the contents of its ``ssh.json``. Raises
    LabNotFound (no routers in the state file), LabError (no credentials)."""
    from ani.lab.servers import ensure_private_key, routers_and_info
    from ani.lab.ssh import HOST_KEY_FILE, KIND

    routers, info = routers_and_info(KIND, lab_id, lab_dir, "username")
    keys = []
    if info.get("client_key"):
        keys.append(asyncssh.read_private_key(info["client_key"]).convert_to_public())
    server = CliServer({r: [str(lab_dir / r / "enter")] for r in routers}, info["username"],
                       info.get("password"), keys, ensure_private_key(lab_dir / HOST_KEY_FILE))
    return server, info


async def serve(lab_id: str, lab_dir: Path) -> int:
    """Run lab ``lab_id``'s server until SIGTERM / SIGINT or the lab's removal. Returns 0."""
    from ani.lab.servers import write_json_private
    from ani.lab.ssh import KNOWN_HOSTS_FILE, info_path
    from ani.netconf.serve import set_nice

    server, info = server_for(lab_id, lab_dir)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    ports = await server.start()
    set_nice(0)  # the sessions' vtysh (children of this thread) run at normal priority
    pub = server.host_key.export_public_key().decode().split()
    (lab_dir / KNOWN_HOSTS_FILE).write_text(
        "".join(f"[{server.host}]:{p} {pub[0]} {pub[1]}\n" for p in ports.values()))
    write_json_private(info_path(lab_dir), {**info, "ports": ports, "pid": os.getpid()})
    log.info("lab %s: SSH server listening (pid %d): %s", lab_id, os.getpid(),
             ", ".join(f"{r}={p}" for r, p in ports.items()))
    state_file = lab_dir / "state.json"
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), WATCH_S)
        except (TimeoutError, asyncio.TimeoutError):
            if not state_file.exists():
                log.info("lab %s: the lab is gone: stopping", lab_id)
                break
    log.info("lab %s: SSH server stopping", lab_id)
    await server.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    from ani.lab.servers import process_start
    from ani.lab.ssh import KIND
    from ani.netconf.serve import STARTUP_NICE, set_nice

    set_nice(STARTUP_NICE)  # start-up yields to FRR being built meanwhile
    found = process_start(KIND, __doc__.split("\n")[0], argv)
    if found is None:
        return 2
    lab_id, lab_dir = found
    from ani.errors import LabError, LabNotFound
    from ani.lab.terminal import hold_controlling_terminal

    hold_controlling_terminal()  # a session leader must not acquire a session's pty
    try:
        rc = asyncio.run(serve(lab_id, lab_dir))
    except LabError as exc:
        log.error("%s", exc)
        rc = 2 if isinstance(exc, LabNotFound) else 1
    except Exception:
        log.exception("lab %s: SSH server failed", lab_id)
        rc = 1
    logging.shutdown()
    return rc


if __name__ == "__main__":
    sys.exit(main())
