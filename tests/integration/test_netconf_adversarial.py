"""Adversarial clients against the lab's real NETCONF server and real FRR: what a careless or
hostile client sends (DTDs, entity bombs, comments inside values, one entry written twice,
sessions racing on one router) and what happens to an A2 agent whose session drops or closes
while a confirmed commit is pending. Each test checks FRR itself, not only the replies.

One lab (tests/data/a1_pair.yaml) for the module; every test leaves r1 as it found it.
Pure-logic cases are in tests/unit/test_netconf_adversarial_logic.py.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
import uuid
from pathlib import Path

import asyncssh
import pytest
from lxml import etree
from ncclient import manager
from ncclient.operations import RaiseMode

from ani.adapters.a2 import A2Adapter
from ani.lab import Lab

pytestmark = pytest.mark.integration

PAIR = Path(__file__).parent.parent / "data" / "a1_pair.yaml"
NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
NS = "urn:ani:yang:ani-frr"


@pytest.fixture(scope="module")
def lab():  # type: ignore[no-untyped-def]
    from ani.errors import CapabilityMissing
    from ani.lab.capability import check_capabilities

    try:
        check_capabilities()
    except CapabilityMissing as exc:
        pytest.skip(f"lab unavailable on this host: {exc}")
    lab = Lab(PAIR, lab_id="advn" + uuid.uuid4().hex[:6])
    try:
        lab.up()
        yield lab
    finally:
        lab.down()


def connect(lab: Lab, router: str = "r1") -> manager.Manager:
    ep = lab.netconf_endpoint(router)
    m = manager.connect(host=ep.host, port=ep.port, username=ep.username, password=ep.password,
                        hostkey_verify=False, allow_agent=False, look_for_keys=False, timeout=60)
    m.raise_mode = RaiseMode.NONE  # replies are read here, every rpc-error
    return m


def tags(reply) -> list[str]:  # type: ignore[no-untyped-def]
    return re.findall(r"<(?:\w+:)?error-tag>([^<]+)<", reply.xml)


def cfg(inner: str) -> str:
    return f'<config xmlns="{NC}" xmlns:nc="{NC}"><frr xmlns="{NS}">{inner}</frr></config>'


def route(prefix: str, op: str = "") -> str:
    attr = f' nc:operation="{op}"' if op else ""
    return cfg(f"<static-route{attr}><prefix>{prefix}</prefix><next-hop>blackhole</next-hop>"
               "</static-route>")


def wait_for(pred, bound_s: float, pause_s: float = 0.2) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + bound_s
    while not pred():
        if time.monotonic() > end:
            return False
        time.sleep(pause_s)
    return True


# -- entity bombs and DTDs: refused, the session goes on ----------------------------------------


async def _raw_exchange(lab: Lab, messages: list[bytes]) -> list[bytes]:
    """Open a base:1.1 session, send each message (chunked), return each reply."""
    ep = lab.netconf_endpoint("r1")
    async with asyncssh.connect(ep.host, ep.port, username=ep.username, password=ep.password,
                                known_hosts=None) as conn:
        w, r, _ = await conn.open_session(subsystem="netconf", encoding=None)
        buf = b""

        async def more() -> None:
            nonlocal buf
            chunk = await asyncio.wait_for(r.read(65536), 60)
            assert chunk, "the server closed the session"
            buf += chunk

        while b"]]>]]>" not in buf:
            await more()
        buf = buf.split(b"]]>]]>", 1)[1]
        w.write(f'<hello xmlns="{NC}"><capabilities><capability>urn:ietf:params:netconf:base:1.1'
                "</capability></capabilities></hello>]]>]]>".encode())
        replies = []
        for msg in messages:
            w.write(b"\n#%d\n" % len(msg) + msg + b"\n##\n")
            out = b""
            while True:
                while not (m := re.match(rb"\n#(\d+|#)\n", buf)):
                    await more()
                if m.group(1) == b"#":
                    buf = buf[m.end():]
                    break
                n = int(m.group(1))
                while len(buf) < m.end() + n:
                    await more()
                out, buf = out + buf[m.end():m.end() + n], buf[m.end() + n:]
            replies.append(out)
        return replies


def test_entity_expansion_and_dtds_are_refused_and_the_session_goes_on(lab):
    lol = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    bomb = (f'<?xml version="1.0"?><!DOCTYPE rpc [<!ENTITY l0 "lol">{lol}]>'
            f'<rpc xmlns="{NC}" message-id="&l9;"><get-config><source><running/></source>'
            "</get-config></rpc>").encode()
    xxe = (f'<?xml version="1.0"?><!DOCTYPE rpc [<!ENTITY x SYSTEM "file:///etc/shadow">]>'
           f'<rpc xmlns="{NC}" message-id="2"><get-config><source><running/></source><filter>'
           f'<frr xmlns="{NS}"><prefix-list><name>&x;</name></prefix-list></frr></filter>'
           "</get-config></rpc>").encode()
    after = (f'<rpc xmlns="{NC}" message-id="3"><get-config><source><running/></source><filter>'
             f'<frr xmlns="{NS}"><prefix-list/></frr></filter></get-config></rpc>').encode()
    t0 = time.monotonic()
    r_bomb, r_xxe, r_after = asyncio.run(_raw_exchange(lab, [bomb, xxe, after]))
    assert time.monotonic() - t0 < 30  # no expansion: answered at once, not after gigabytes
    for r in (r_bomb, r_xxe):
        root = etree.fromstring(r)
        assert root.findtext(f".//{{{NC}}}error-tag") == "malformed-message"
        assert b"root:" not in r  # nothing of /etc/shadow
    assert b"<name>PL-TENANTS</name>" in r_after


# -- what the client wrote is what FRR gets --------------------------------------------------------


def test_a_comment_inside_a_value_does_not_cut_it(lab):
    """ncclient keeps XML comments; <name>PL-C<!-- note -->MT</name> is the name PL-CMT."""
    with connect(lab) as m:
        body = ("<prefix-list><name>PL-C<!-- why: issue 3 -->MT</name><entry><seq>5</seq>"
                "<action>permit</action><prefix>192.0.2.0/24</prefix></entry></prefix-list>")
        assert tags(m.edit_config(target="candidate", config=cfg(body))) == []
        assert tags(m.commit()) == []
        try:
            assert "ip prefix-list PL-CMT seq 5 permit 192.0.2.0/24" in lab.running_config("r1")
            assert "ip prefix-list PL-C " not in lab.running_config("r1")
        finally:
            m.edit_config(target="candidate", config=cfg(
                '<prefix-list nc:operation="remove"><name>PL-CMT</name></prefix-list>'))
            m.commit()
        assert "PL-CMT" not in lab.running_config("r1")


def test_the_same_entry_twice_with_different_values_is_refused(lab):
    """A copy-pasted entry whose seq was not changed: the second silently replaced the first.
    Now bad-element; candidate and FRR untouched."""
    with connect(lab) as m:
        before = lab.running_config("r1")
        body = ("<prefix-list><name>PL-DUP</name>"
                "<entry><seq>5</seq><action>permit</action><prefix>192.0.2.0/24</prefix></entry>"
                "<entry><seq>5</seq><action>deny</action><prefix>198.51.100.0/24</prefix></entry>"
                "</prefix-list>")
        reply = m.edit_config(target="candidate", config=cfg(body))
        assert tags(reply) and set(tags(reply)) == {"bad-element"}
        assert "twice" in reply.xml
        flt = f'<frr xmlns="{NS}"><prefix-list/></frr>'
        cand = m.get_config("candidate", filter=("subtree", flt)).xml
        assert "PL-DUP" not in cand
        assert tags(m.commit()) == []
        assert lab.running_config("r1") == before


# -- sessions racing on one router ----------------------------------------------------------------


def test_two_sessions_racing_lock_edit_confirmed_commit(lab):
    """Two clients, each in its own thread, loop lock / edit / confirmed commit / confirm /
    unlock / remove / commit on r1. Each step either succeeds or is refused with the tag RFC
    6241 gives (lock-denied, in-use, operation-failed for an unlock without the lock); no
    deadlock, no other error; afterwards FRR holds neither route and no commit is pending."""
    allowed = {"lock-denied", "in-use", "operation-failed"}
    seen: list[str] = []
    errors: list[BaseException] = []

    def worker(prefix: str) -> None:
        try:
            with connect(lab) as m:
                for _ in range(3):
                    for reply in (m.lock("candidate"),
                                  m.edit_config(target="candidate", config=route(prefix)),
                                  m.commit(confirmed=True, timeout="120"), m.commit(),
                                  m.unlock("candidate"),
                                  m.edit_config(target="candidate",
                                                config=route(prefix, "remove")),
                                  m.commit()):
                        seen.extend(tags(reply))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(p,))
               for p in ("192.0.2.0/24", "198.51.100.0/24")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads), "deadlock"
    assert not errors, errors
    assert set(seen) <= allowed, seen
    with connect(lab) as m:
        m.edit_config(target="candidate", config=route("192.0.2.0/24", "remove"))
        m.edit_config(target="candidate", config=route("198.51.100.0/24", "remove"))
        assert tags(m.commit()) == []
        assert tags(m.cancel_commit()) == ["operation-failed"]  # nothing pending
    running = lab.running_config("r1")
    assert "192.0.2.0/24" not in running and "198.51.100.0/24" not in running


# -- an A2 agent whose session ends while a confirmed commit is pending ------------------------


def test_a2_confirm_after_its_session_was_killed_is_refused(lab):
    """The agent's session is killed (by an operator's kill-session) after its confirmed
    commit: the server rolls the commit back. confirm_commit used to re-open a session, send a
    plain commit there and report 'commit confirmed' while FRR no longer had the change."""
    line = "ip route 203.0.113.0/24 blackhole"
    a2 = A2Adapter(lab)
    try:
        assert a2.call("edit_config", {"device": "r1", "config": route("203.0.113.0/24")}).ok
        res = a2.call("commit", {"devices": ["r1"], "confirm_timeout_s": 300})
        assert res.ok, res.text
        assert line in lab.running_config("r1")
        with connect(lab) as op:
            assert tags(op.kill_session(a2.session("r1").session_id)) == []
        assert wait_for(lambda: line not in lab.running_config("r1"), 30)
        res = a2.call("confirm_commit", {"devices": ["r1"]})
        assert not res.ok and "rolled" in res.error.message, res.text
        assert line not in lab.running_config("r1")
    finally:
        a2.close()


def test_a2_close_with_a_confirmed_commit_pending_rolls_it_back(lab):
    line = "ip route 203.0.113.0/24 blackhole"
    a2 = A2Adapter(lab)
    try:
        assert a2.call("edit_config", {"device": "r1", "config": route("203.0.113.0/24")}).ok
        assert a2.call("lock", {"device": "r1", "target": "running"}).ok
        assert a2.call("commit", {"devices": ["r1"], "confirm_timeout_s": 300}).ok
        assert line in lab.running_config("r1")
    finally:
        a2.close()
    assert wait_for(lambda: line not in lab.running_config("r1"), 30)
    with connect(lab) as m:  # its lock went with it
        assert tags(m.lock("running")) == []
        m.unlock("running")
