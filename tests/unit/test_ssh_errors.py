"""ani.ssh_errors: why an SSH session could not be opened, on the exceptions the libraries really
raise: scrapli's ssh2 transport (A1's CLI over SSH, through CliSession) and ncclient (A2) against
the lab's SSH server without a lab (a stand-in vtysh: tests/unit/test_lab_ssh_server.py's
``_served``), and against a local port where nothing listens. The messages name the cause and
never the password; error_result makes the refused login and the unknown host key not retriable."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from ani.adapters.cli_session import CliSession, SessionError
from ani.adapters.error_map import error_result
from ani.adapters.platform import load_platform
from ani.errors import ErrorCode
from ani.lab import ssh
from ani.lab.ssh import SshEndpoint
from ani.ssh_errors import classify_ssh_open
from tests.unit.test_lab_ssh_server import _served

SECRET = "not-the-password-XYZ"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from _served(tmp_path_factory.mktemp("sshlab"))


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ep(server, port: int | None = None, password: str | None = None, known: Path | None = None) -> SshEndpoint:
    d, info, ports, _ = server
    return SshEndpoint("127.0.0.1", port or ports["r1"], info["username"], password or info["password"], None,
                       known or d / ssh.KNOWN_HOSTS_FILE, name="r1", credential="the password in $X_PW")


def open_error(e: SshEndpoint) -> SessionError:
    s = CliSession.over_ssh("r1", e, load_platform("frr"), 5.0)
    try:
        with pytest.raises(SessionError) as info:
            s.open()
    finally:
        s.close()
    return info.value


def test_a1_wrong_password_is_a_refused_login_not_retriable(server):
    exc = open_error(ep(server, password=SECRET))
    # what scrapli itself says: nothing (libssh2's message is empty; its log says why)
    assert str(exc.__cause__) == "Transport: "
    assert exc.cause == "auth_refused" and exc.retriable is False
    assert f"the login was refused for ani@127.0.0.1:{ep(server).port}" in str(exc)
    assert "the password in $X_PW" in str(exc) and SECRET not in str(exc)
    res = error_result(exc, device="r1")
    assert res.error.code == ErrorCode.DEVICE_UNREACHABLE and res.error.retriable is False
    assert res.data["cause"] == "auth_refused" and SECRET not in res.error.message


def test_a1_closed_port_is_connection_refused_retriable(server):
    port = closed_port()
    exc = open_error(ep(server, port=port))
    assert "unable to resolve host" in str(exc.__cause__)  # scrapli's words for any socket failure
    assert exc.cause == "connection_refused" and exc.retriable is True
    assert f"connection refused on 127.0.0.1:{port}" in str(exc) and "resolve" not in str(exc)
    res = error_result(exc, device="r1")
    assert res.error.retriable is True and res.data["cause"] == "connection_refused"


def test_a1_empty_known_hosts_names_the_file_host_and_port_as_a2_does(server, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    exc = open_error(ep(server, known=empty))
    assert "known host check not found" in str(exc.__cause__)
    assert exc.cause == "host_key_unknown" and exc.retriable is False
    assert f"{empty} holds no host key for 127.0.0.1 port {ep(server).port}: the server cannot be checked" in str(exc)


def test_a1_other_host_key_is_a_mismatch(server, tmp_path):
    import asyncssh

    other = tmp_path / "known_hosts"
    other.write_text(f"[127.0.0.1]:{ep(server).port} "
                     + asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode())
    exc = open_error(ep(server, known=other))
    assert exc.cause == "host_key_mismatch" and exc.retriable is False
    assert f"the host key of 127.0.0.1 port {ep(server).port} is not the one {other} holds" in str(exc)


def test_ncclient_exceptions_classify_the_same(server):
    """A2's client (ncclient over paramiko): a refused login raises AuthenticationError, a closed
    port SSHError "Could not open socket"."""
    from ncclient import manager

    def ncc(e: SshEndpoint) -> BaseException:
        with pytest.raises(Exception) as info:
            manager.connect(host=e.host, port=e.port, username=e.username, password=e.password, hostkey_verify=False,
                            allow_agent=False, look_for_keys=False, timeout=5)
        return info.value

    auth = ncc(ep(server, password=SECRET))
    assert type(auth).__name__ == "AuthenticationError"
    why = classify_ssh_open(auth, ep(server, password=SECRET))
    assert (why.cause, why.retriable) == ("auth_refused", False) and SECRET not in why.message
    port = closed_port()
    refused = ncc(ep(server, port=port))
    why = classify_ssh_open(refused, ep(server, port=port))
    assert (why.cause, why.retriable) == ("connection_refused", True)
    assert why.message.startswith(f"connection refused on 127.0.0.1:{port}")


def test_unresolvable_name_is_not_retriable_and_other_failures_keep_their_words():
    e = SshEndpoint("no-such-host.invalid", 22, "u", "p")
    why = classify_ssh_open(OSError("boom"), e)
    assert (why.cause, why.retriable) == ("unresolved", False) and "no-such-host.invalid" in why.message
    why = classify_ssh_open(RuntimeError("Transport: something new"), SshEndpoint("127.0.0.1", 22, "u", "p"))
    assert (why.cause, why.retriable) == ("other", True) and "something new" in why.message
