"""ani.netconf.server over real SSH on 127.0.0.1 with stand-in Devices (no lab): hello and
framing with ncclient (base:1.1) and a raw base:1.0 client, passwords, session end hooks,
kill-session, close-session, framing errors."""

from __future__ import annotations

import asyncio
import threading
import time

import asyncssh
import pytest
from lxml import etree
from ncclient import manager
from ncclient.transport.errors import AuthenticationError
from ncclient.transport.session import NetconfBase

from ani.netconf.errors import BASE_NS, RpcError
from ani.netconf.rpc import BASE_1_0, BASE_1_1
from ani.netconf.server import NetconfServer

YANG = 'module ani-frr {\n  namespace "urn:ani:yang:ani-frr";\n  prefix frr;\n}\n'
SCHEMAS = {"ani-frr": ("2026-11-29", YANG)}
PW = "s3cret-pw"


class StandInDevice:
    """Just enough of ani.netconf.datastore.Device: a candidate lock and a recorded call log."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.locks: dict[str, int] = {}
        self.lock_ = threading.Lock()

    def get_config(self, sid, source, filter=None):
        self.calls.append(("get_config", sid, source))
        d = etree.Element(f"{{{BASE_NS}}}data")
        etree.SubElement(d, "{urn:ani:yang:ani-frr}frr").text = source
        return d

    def lock(self, sid, target):
        with self.lock_:
            self.calls.append(("lock", sid, target))
            holder = self.locks.get(target)
            if holder is not None:
                raise RpcError("lock-denied", "locked", type="protocol", info={"session-id": str(holder)})
            self.locks[target] = sid

    def unlock(self, sid, target):
        with self.lock_:
            self.locks.pop(target, None)

    def session_closed(self, sid):
        with self.lock_:
            self.calls.append(("session_closed", sid))
            for t in [t for t, s in self.locks.items() if s == sid]:
                del self.locks[t]

    def closed(self) -> list[int]:
        return [c[1] for c in self.calls if c[0] == "session_closed"]


@pytest.fixture
def srv():
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    devices = {"r1": StandInDevice(), "r2": StandInDevice()}
    server = NetconfServer(devices, "ani", PW, asyncssh.generate_private_key("ssh-ed25519"), SCHEMAS)
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    server.devices = devices  # type: ignore[attr-defined]
    server.test_loop = loop  # type: ignore[attr-defined]
    yield server
    asyncio.run_coroutine_threadsafe(server.close(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    t.join(5)


def connect(srv, router="r1", password=PW):
    return manager.connect(host="127.0.0.1", port=srv.ports[router], username="ani", password=password,
                           hostkey_verify=False, allow_agent=False, look_for_keys=False, timeout=10)


def wait_for(pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.02)


def test_ncclient_hello_capabilities_and_chunked_framing(srv):
    assert len(set(srv.ports.values())) == 2
    with connect(srv) as m:
        caps = set(m.server_capabilities)
        assert BASE_1_1 in caps and "urn:ietf:params:netconf:capability:candidate:1.0" in caps
        assert "urn:ani:yang:ani-frr?module=ani-frr&revision=2026-11-29" in caps
        assert int(m.session_id) >= 1
        assert m._session._base == NetconfBase.BASE_11  # both sides announced base:1.1
        r = m.get_config("candidate")
        assert r.data_ele.find("{urn:ani:yang:ani-frr}frr").text == "candidate"
        big = "x" * 200_000  # several SSH packets, one message
        assert m.get_schema("ani-frr").data == YANG
        with pytest.raises(Exception, match="no schema"):
            m.get_schema(big)
        sid = int(m.session_id)
    wait_for(lambda: sid in srv.devices["r1"].closed())  # close-session -> session_closed


async def _raw_session(port: int, password: str = PW):
    conn = await asyncssh.connect("127.0.0.1", port, username="ani", password=password, known_hosts=None)
    w, r, _ = await conn.open_session(subsystem="netconf", encoding=None)
    return conn, w, r


#: bytes read past the last end-of-message marker, per reader: two replies can arrive in one
#: SSH read (under load the lock's and get-config's did, and the second was thrown away)
_PENDING: dict[int, bytes] = {}


async def _read_eom(r) -> bytes:
    """The next base:1.0 message from ``r`` (what follows it is kept for the next call)."""
    buf = _PENDING.pop(id(r), b"")
    while b"]]>]]>" not in buf:
        chunk = await asyncio.wait_for(r.read(65536), 30)
        assert chunk, "connection closed"
        buf += chunk
    end = buf.index(b"]]>]]>")
    _PENDING[id(r)] = buf[end + len(b"]]>]]>"):]
    return buf[:end]


def test_base10_only_client_gets_end_of_message_framing(srv):
    async def run():
        conn, w, r = await _raw_session(srv.ports["r2"])
        hello = etree.fromstring(await _read_eom(r))
        sid = hello.findtext(f"{{{BASE_NS}}}session-id")
        w.write(f'<hello xmlns="{BASE_NS}"><capabilities><capability>{BASE_1_0}</capability>'
                "</capabilities></hello>]]>]]>".encode())
        # two rpcs in one write, both answered in order, in base:1.0 framing
        w.write((f'<rpc message-id="a" xmlns="{BASE_NS}"><lock><target><candidate/></target></lock></rpc>]]>]]>'
                 f'<rpc message-id="b" xmlns="{BASE_NS}"><get-config><source><running/></source></get-config>'
                 "</rpc>]]>]]>").encode())
        first = etree.fromstring(await _read_eom(r))
        second = etree.fromstring(await _read_eom(r))
        w.write(b"<rpc><not-closed>]]>]]>")  # malformed XML: base:1.0 gets operation-failed
        third = etree.fromstring(await _read_eom(r))
        conn.close()
        return sid, first, second, third

    sid, first, second, third = asyncio.run(run())
    assert first.get("message-id") == "a" and first.find(f"{{{BASE_NS}}}ok") is not None
    assert second.get("message-id") == "b" and second.find(".//{urn:ani:yang:ani-frr}frr").text == "running"
    assert third.findtext(f".//{{{BASE_NS}}}error-tag") == "operation-failed"
    dev = srv.devices["r2"]
    wait_for(lambda: int(sid) in dev.closed())  # disconnect -> session_closed -> lock released
    assert dev.locks == {}


def test_wrong_password_is_refused(srv):
    with pytest.raises(AuthenticationError):
        connect(srv, password="wrong")

    async def run():
        with pytest.raises(asyncssh.PermissionDenied):
            await _raw_session(srv.ports["r1"], password="")

    asyncio.run(run())


def test_kill_session_releases_the_victims_locks_and_ends_it(srv):
    dev = srv.devices["r1"]
    a, b = connect(srv), connect(srv)
    try:
        a.lock("candidate")
        with pytest.raises(Exception, match="locked"):
            b.lock("candidate")
        with pytest.raises(Exception, match="invalid-value|current session"):
            b.kill_session(b.session_id)  # own id
        with pytest.raises(Exception, match="no session"):
            b.kill_session("999")
        b.kill_session(a.session_id)
        assert int(a.session_id) in dev.closed()  # before the reply: locks are free now
        b.lock("candidate")
        wait_for(lambda: not a.connected)
    finally:
        b.close_session()


def test_kill_session_of_another_routers_session_is_refused(srv):
    a, b = connect(srv, "r1"), connect(srv, "r2")
    try:
        with pytest.raises(Exception, match="r2 has no session"):
            b.kill_session(a.session_id)
        assert a.connected
    finally:
        a.close_session()
        b.close_session()


def test_bad_chunk_header_closes_the_session(srv):
    async def run():
        conn, w, r = await _raw_session(srv.ports["r1"])
        await _read_eom(r)
        w.write(f'<hello xmlns="{BASE_NS}"><capabilities><capability>{BASE_1_1}</capability>'
                "</capabilities></hello>]]>]]>".encode())
        w.write(b"\n#0\n\n##\n")  # chunk-size 0 is malformed
        rest = await asyncio.wait_for(r.read(), 30)  # EOF: the server closed the channel
        conn.close()
        return rest

    assert asyncio.run(run()) == b""
    wait_for(lambda: len(srv.devices["r1"].closed()) == 1)


def test_client_hello_with_session_id_closes_the_session(srv):
    async def run():
        conn, w, r = await _raw_session(srv.ports["r1"])
        await _read_eom(r)
        w.write(f'<hello xmlns="{BASE_NS}"><capabilities><capability>{BASE_1_1}</capability>'
                "</capabilities><session-id>5</session-id></hello>]]>]]>".encode())
        rest = await asyncio.wait_for(r.read(), 30)
        conn.close()
        return rest

    assert asyncio.run(run()) == b""


def test_a_session_opened_before_the_devices_exist_gets_its_hello_once_they_do():
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    server = NetconfServer(["r1"], "ani", PW, asyncssh.generate_private_key("ssh-ed25519"))
    try:
        ports = asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
        got: dict[str, object] = {}

        def client() -> None:
            with manager.connect(host="127.0.0.1", port=ports["r1"], username="ani", password=PW,
                                 hostkey_verify=False, allow_agent=False, look_for_keys=False,
                                 timeout=10) as m:
                got["caps"] = list(m.server_capabilities)
                got["data"] = m.get_config("running").data_ele.find("{urn:ani:yang:ani-frr}frr").text

        c = threading.Thread(target=client)
        c.start()
        time.sleep(0.5)
        assert c.is_alive() and not got  # connected, waiting for the server's hello
        with pytest.raises(ValueError):
            server.set_devices({"zz": StandInDevice()}, SCHEMAS)  # not the routers it listens for
        loop.call_soon_threadsafe(server.set_devices, {"r1": StandInDevice()}, SCHEMAS)
        c.join(10)
        assert got["data"] == "running"
        assert "urn:ani:yang:ani-frr?module=ani-frr&revision=2026-11-29" in got["caps"]
    finally:
        asyncio.run_coroutine_threadsafe(server.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        t.join(5)
