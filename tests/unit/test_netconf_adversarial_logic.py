"""Adversarial cases of the NETCONF server's pure logic (ani.netconf.editconfig / rpc) and of the
A2 adapter's argument handling (ani.adapters.netconf_xml), found by trying to break them the
way clients, agents and bug reports do. Each test names the kind of fault it guards against.

The behaviour over the wire on real FRR is in tests/integration/test_netconf_adversarial.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from lxml import etree

from ani.netconf import editconfig
from ani.netconf.errors import BASE_NS
from ani.testing import FakeLab

sys.path.insert(0, str(Path(__file__).parent))  # the helpers of the datastore / engine tests
from test_netconf_datastore import V1, FakeBackend, Timers, routes_xml  # noqa: E402, I001
from test_netconf_datastore import config as frr_config  # noqa: E402
from test_netconf_editconfig import EC, YDIR, config, data  # noqa: E402


@pytest.fixture(scope="module")
def schema() -> editconfig.Schema:
    """The edit-config engine's test module (tests/data/yang/ec-test.yang)."""
    from yangson import DataModel

    return editconfig.Schema.from_datamodel(
        DataModel.from_file(str(YDIR / "yang-library.json"), [str(YDIR)]))

def entries(n: int, start: int = 1) -> str:
    return "".join(f"<entry><seq>{i}</seq><action>permit</action><prefix>p{i}</prefix></entry>"
                   for i in range(start, start + n))


# -- kind: quadratic work per request (a long list held the router's lock for minutes) ------------


def _count_canonical(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = editconfig.canonical

    def counting(node, text):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return real(node, text)

    monkeypatch.setattr(editconfig, "canonical", counting)
    return calls


@pytest.mark.parametrize("existing", [0, 400])
def test_edit_of_a_long_list_does_linear_value_work(schema, monkeypatch, existing):
    """Adding 400 entries to a list (empty, or already holding 400) must not compare every new
    entry's key with every existing one: 1000 entries took 7 s on the server (O(n^2) key
    canonicalisation), 5000 timed the client out while holding the router's lock."""
    n = 400
    before = data(f"<pl><name>A</name>{entries(existing, start=10_000)}</pl>")
    calls = _count_canonical(monkeypatch)
    r = editconfig.edit(schema, before, config(f"<pl><name>A</name>{entries(n)}</pl>"))
    assert not r.errors and r.changed
    assert len(r.tree.findall(f".//{{{EC}}}entry")) == n + existing
    assert calls[0] < 20 * (n + existing), calls[0]  # linear; quadratic is ~ n * (n + existing)


def test_long_list_edit_keeps_semantics(schema):
    """The lookup index must see entries created, replaced and deleted earlier in the same
    request (create of one just created is data-exists; delete of one just deleted is
    data-missing)."""
    before = data("<pl><name>A</name>" + entries(3) + "</pl>")
    r = editconfig.edit(schema, before, config(
        '<pl><name>A</name><entry nc:operation="delete"><seq>2</seq></entry>'
        '<entry nc:operation="create"><seq>2</seq><action>deny</action></entry>'
        '<entry nc:operation="replace"><seq>3</seq><action>deny</action></entry>'
        '<entry><seq>3</seq><prefix>q3</prefix></entry></pl>'))
    assert not r.errors
    def q(n: str) -> str:
        return f"{{{EC}}}{n}"

    got = {e.findtext(q("seq")): (e.findtext(q("action")), e.findtext(q("prefix")))
           for e in r.tree.iter(q("entry"))}
    assert got == {"1": ("permit", "p1"), "2": ("deny", None), "3": ("deny", "q3")}
    r = editconfig.edit(schema, before, config(
        '<pl><name>A</name><entry nc:operation="delete"><seq>2</seq></entry>'
        '<entry nc:operation="delete"><seq>2</seq></entry></pl>'))
    assert [e.tag for e in r.errors] == ["data-missing"]
    r = editconfig.edit(schema, before, config(
        '<pl><name>A</name><entry nc:operation="create"><seq>7</seq><action>deny</action></entry>'
        '<entry nc:operation="create"><seq>7</seq><action>deny</action></entry></pl>'))
    assert [e.tag for e in r.errors] == ["data-exists"]


# -- kind: an agent's malformed argument escaped as an exception (A2 must answer with data) -------

FRR = "urn:ani:yang:ani-frr"
OK_REPLY = f'<rpc-reply xmlns="{BASE_NS}" message-id="1"><ok/></rpc-reply>'


class _Reply:
    def __init__(self, xml: str) -> None:
        self.xml = xml


class _Manager:
    """An ncclient manager stand-in that answers <ok/> and records what was sent."""

    connected = True
    session_id = "7"
    server_capabilities = ("urn:ietf:params:netconf:capability:candidate:1.0",
                           "urn:ietf:params:netconf:capability:confirmed-commit:1.1")

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        if name.startswith("_"):
            raise AttributeError(name)

        def op(**kw):  # type: ignore[no-untyped-def]
            self.calls.append(name)
            return _Reply(OK_REPLY)
        return op

    def close_session(self) -> None:
        self.connected = False


#: one router r1 with a NETCONF server
ONE_ROUTER = {"name": "one", "routers": {"r1": {}}}


def _backend_lab(monkeypatch: pytest.MonkeyPatch) -> FakeLab:
    """A FakeLab with the ``pathspace`` FrrBackend asks for (FakeLab has none: an observer
    would take it for a lab with FRR routing state to read)."""
    lab = FakeLab(lab_id="x")
    monkeypatch.setattr(lab, "pathspace", lambda router: router, raising=False)
    return lab


@pytest.fixture
def a2():  # type: ignore[no-untyped-def]
    from ani.adapters.a2 import A2Adapter

    m = _Manager()
    a = A2Adapter(FakeLab(ONE_ROUTER, netconf=True), connect=lambda ep, **kw: m)
    a.sent = m.calls  # type: ignore[attr-defined]
    yield a
    a.close()


BAD_CONFIGS = {
    "member name that is not an identifier": '{"ani-frr:frr": {"bad name": 1}}',
    "empty member name": '{"ani-frr:frr": {"": 1}}',
    "NUL in a value": '{"ani-frr:frr": {"prefix-list": [{"name": "A\\u0000B"}]}}',
    "control character in a value": '{"ani-frr:frr": {"prefix-list": [{"name": "A\\u0007"}]}}',
    "lone surrogate in a value": '{"ani-frr:frr": {"prefix-list": [{"name": "\\ud800"}]}}',
    "lone surrogate in a name": '{"ani-frr:frr": {"\\udc00": 1}}',
    "nesting deeper than the parser": '{"ani-frr:frr": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "annotation name that is not an identifier":
        '{"ani-frr:frr": {"@": {"ietf-netconf:bad name": "x"}}}',
    "scalar for a container": '{"ani-frr:frr": 1e400}',
    "scalar for a list": '{"ani-frr:frr": {"prefix-list": "PL-A"}}',
    "object for a leaf": '{"ani-frr:frr": {"prefix-list": [{"name": {"x": 1}, "entry": []}]}}',
    "DOCTYPE in XML": f'<!DOCTYPE x [<!ENTITY a "aaaa">]><frr xmlns="{FRR}"/>',
    "billion laughs": ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
                       '<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
                       f'<config><frr xmlns="{FRR}"><prefix-list><name>&lol2;</name>'
                       '</prefix-list></frr></config>'),
}


@pytest.mark.parametrize("config", BAD_CONFIGS.values(), ids=BAD_CONFIGS.keys())
def test_edit_config_refuses_malformed_argument_as_data(a2, config):
    r = a2.call("edit_config", {"device": "r1", "config": config})
    assert not r.ok and r.error.code == "invalid_arguments", r.text
    assert a2.sent == []  # nothing reached the router


def test_doctype_refusal_says_why(a2):
    r = a2.call("edit_config", {"device": "r1", "config": BAD_CONFIGS["DOCTYPE in XML"]})
    assert "DOCTYPE" in r.error.message
    r = a2.call("get_config", {"device": "r1", "filter": BAD_CONFIGS["DOCTYPE in XML"]})
    assert not r.ok and r.error.code == "invalid_arguments" and "DOCTYPE" in r.error.message


def test_good_json_still_converts():
    from ani.adapters.netconf_xml import config_element

    cfg = config_element('{"ani-frr:frr": {"prefix-list": [{"entry": [{"seq": 5, "action": '
                         '"permit", "prefix": "192.0.2.0/24"}], "name": "PL-A"}], '
                         '"static-route": [{"prefix": "192.0.2.0/24", "next-hop": "blackhole",'
                         ' "@": {"ietf-netconf:operation": "delete"}}]}}')
    pl = cfg.find(f"{{{FRR}}}frr/{{{FRR}}}prefix-list")
    assert [etree.QName(c).localname for c in pl] == ["name", "entry"]  # key first
    sr = cfg.find(f"{{{FRR}}}frr/{{{FRR}}}static-route")
    assert sr.get(f"{{{BASE_NS}}}operation") == "delete"


# -- kind: a request that gives one leaf two values (the later one silently won) -----------------


@pytest.mark.parametrize("inner,bad", [
    # the same prefix-list entry twice with different contents (a copy-paste with the seq
    # left unchanged): the second overwrote the first
    (("<pl><name>A</name><entry><seq>5</seq><action>permit</action><prefix>p5</prefix></entry>"
      "<entry><seq>5</seq><action>deny</action><prefix>p6</prefix></entry></pl>"), "action"),
    # two-key list, keys in another order
    (("<route><prefix>x</prefix><next-hop>y</next-hop><distance>5</distance></route>"
      "<route><next-hop>y</next-hop><prefix>x</prefix><distance>7</distance></route>"),
     "distance"),
    # the list entry's parent written twice
    (("<pl><name>A</name><entry><seq>5</seq><action>permit</action></entry></pl>"
      "<pl><name>A</name><entry><seq>5</seq><action>deny</action></entry></pl>"), "action"),
    # the same leaf twice, written differently
    ("<count>5</count><count>6</count>", "count"),
])
def test_a_leaf_given_two_values_in_one_request_is_refused(schema, inner, bad):
    before = data("")
    for opt in ("stop-on-error", "continue-on-error"):
        r = editconfig.edit(schema, before, config(inner), error_option=opt)
        assert {e.tag for e in r.errors} == {"bad-element"}, r.errors
        assert r.errors[0].info == {"bad-element": bad} and "twice" in r.errors[0].message
        assert not r.changed


def test_repeated_nodes_that_agree_still_merge(schema):
    """Writing a container, list entry, leaf (same value) or leaf-list value twice is fine."""
    r = editconfig.edit(schema, data(""), config(
        "<tag>t</tag><tag>t</tag><count>7</count><count>7</count>"
        "<pl><name>A</name><entry><seq>1</seq><action>permit</action></entry></pl>"
        "<pl><name>A</name><entry><seq>01</seq><action>permit</action><prefix>p</prefix>"
        "</entry><entry><seq>2</seq><action>deny</action></entry></pl>"))
    assert not r.errors
    assert len(r.tree.findall(f".//{{{EC}}}tag")) == 1
    assert len(r.tree.findall(f".//{{{EC}}}entry")) == 2
    assert r.tree.findtext(f".//{{{EC}}}prefix") == "p"


def test_text_inside_a_container_is_refused(schema):
    """<sub>hello</sub>: a container or list entry holds elements, not text (it was ignored,
    so the client believed something was set)."""
    r = editconfig.edit(schema, data(""), config("<sub>hello</sub>"))
    assert [e.tag for e in r.errors] == ["bad-element"]
    r = editconfig.edit(schema, data(""), config("<sub>\n  <a>x</a>\n</sub>"))  # whitespace: fine
    assert not r.errors


# -- kind: the adapter's bookkeeping disagrees with the server after a session drop --------------


class _DroppingManager(_Manager):
    """Drops the transport on the n-th get_config (ncclient raises TransportError)."""

    def __init__(self, drop_on_get: int) -> None:
        super().__init__()
        self.drop_on_get = drop_on_get
        self.gets = 0

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        op = super().__getattr__(name)
        if name != "get_config":
            return op

        def get(**kw):  # type: ignore[no-untyped-def]
            from ncclient.transport.errors import TransportError

            self.gets += 1
            if self.gets == self.drop_on_get:
                self.connected = False
                raise TransportError("Not connected to NETCONF server")
            self.calls.append(name)
            return _Reply(f'<rpc-reply xmlns="{BASE_NS}" message-id="1"><data/></rpc-reply>')
        return get

    @property
    def _session(self):  # type: ignore[no-untyped-def]
        return self


def test_session_drop_right_after_a_confirmed_commit_is_not_a_pending_commit():
    """The confirmed commit succeeded, then the session dropped (while the adapter read running
    to measure `changed`): the server rolls that commit back (RFC 6241 §8.4.1). The adapter
    must not report a pending commit, and confirm_commit must not send a plain commit on the
    new session (that would 'confirm' nothing and tell the agent its change is permanent)."""
    from ani.adapters.a2 import A2Adapter

    first, second = _DroppingManager(drop_on_get=2), _DroppingManager(drop_on_get=0)
    managers = [first, second]
    a = A2Adapter(FakeLab(ONE_ROUTER, netconf=True), connect=lambda ep, **kw: managers.pop(0))
    res = a.call("commit", {"devices": ["r1"], "confirm_timeout_s": 30})
    assert first.calls.count("commit") == 1
    assert not res.ok and "rolled" in res.error.message, res.text
    res = a.call("confirm_commit", {"devices": ["r1"]})
    assert not res.ok and "commit" not in second.calls
    a.close()


def test_confirm_commit_after_an_unnoticed_session_drop_refuses():
    """commit (confirmed) -> the session drops unnoticed -> confirm_commit: the server rolled
    the commit back when the session ended. confirm_commit re-opened the session for its
    first read and then sent a plain commit there, reporting "commit confirmed"."""
    from ani.adapters.a2 import A2Adapter

    first, second = _DroppingManager(drop_on_get=0), _DroppingManager(drop_on_get=0)
    managers = [first, second]
    a = A2Adapter(FakeLab(ONE_ROUTER, netconf=True), connect=lambda ep, **kw: managers.pop(0))
    assert a.call("commit", {"devices": ["r1"], "confirm_timeout_s": 30}).ok
    first.connected = False  # dropped; nobody has noticed yet
    res = a.call("confirm_commit", {"devices": ["r1"]})
    assert not res.ok and "rolled" in res.error.message, res.text
    assert "commit" not in second.calls
    a.close()


# -- kind: the server read a value other than the one the client sent -----------------------------


class _RecordingDevice:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        def call(*args, **kw):  # type: ignore[no-untyped-def]
            self.calls.append((name, args, kw))
        return call


def _handle(body: str):  # type: ignore[no-untyped-def]
    from ani.netconf.rpc import Session, handle

    dev = _RecordingDevice()
    kills: list[int] = []
    s = Session(id=3, device=dev, base11=True, kill=kills.append)
    reply = handle(f'<rpc xmlns="{BASE_NS}" message-id="9">{body}</rpc>'.encode(), s)
    return etree.fromstring(reply.xml), dev.calls, kills


def test_comment_or_processing_instruction_inside_a_value_does_not_cut_it():
    """<name>PL<!-- c -->-A</name> is the value 'PL-A' (XML 1.0 §2.5); lxml's .text stops at
    the comment, so the server created prefix-list 'PL'."""
    _, calls, _ = _handle(
        '<edit-config><target><candidate/></target><config><frr xmlns="urn:ani:yang:ani-frr">'
        '<prefix-list><name>PL<!-- c -->-<?pi x?>A</name></prefix-list></frr></config>'
        '</edit-config>')
    ((_name, args, _kw),) = calls
    config = args[2]
    assert config.findtext(".//{urn:ani:yang:ani-frr}name") == "PL-A"


def test_kill_session_id_must_be_ascii_digits():
    """A session-id is a uint32 in ASCII digits; '１２' (fullwidth) killed session 12."""
    root, _, kills = _handle("<kill-session><session-id>\uff11\uff12</session-id></kill-session>")
    assert kills == []
    assert root.findtext(f".//{{{BASE_NS}}}error-tag") == "invalid-value"


def test_unknown_filter_type_is_bad_attribute_not_missing_xpath():
    root, calls, _ = _handle('<get-config><source><running/></source><filter type="bogus"/>'
                             '</get-config>')
    assert calls == []
    assert root.findtext(f".//{{{BASE_NS}}}error-tag") == "bad-attribute"
    root, calls, _ = _handle('<get-config><source><running/></source><filter type="xpath" '
                             'select="/"/></get-config>')
    assert root.findtext(f".//{{{BASE_NS}}}error-tag") == "operation-not-supported"


@pytest.mark.parametrize("param", ["<confirmed>yes</confirmed>",
                                   "<confirmed><x/></confirmed>"])
def test_empty_typed_parameter_with_content_is_refused(param):
    """<confirmed> is of type empty (RFC 6241 ietf-netconf YANG): content there is a client
    error, not a confirmed commit of 600 s the client may not know it made."""
    root, calls, _ = _handle(f"<commit>{param}</commit>")
    assert calls == []
    assert root.findtext(f".//{{{BASE_NS}}}error-tag") == "invalid-value"


# -- kind: an error text XML cannot carry killed the reply (the client waited forever) ------------


def test_error_text_with_characters_xml_cannot_carry_still_makes_a_reply():
    """An FRR / backend message with a NUL or an escape sequence (ANSI colours) in an
    rpc-error: building the reply raised, the session's worker died and the client got no
    reply and no close."""
    from ani.netconf.errors import RpcError
    from ani.netconf.rpc import Session, handle

    class Broken:
        def get_config(self, *a, **kw):  # type: ignore[no-untyped-def]
            raise RpcError("operation-failed", "vtysh: \x1b[31mfailed\x1b[0m\x00 here",
                           info={"session-id": "1\x00"})

        def lock(self, *a, **kw):  # type: ignore[no-untyped-def]
            raise RuntimeError("boom \x00\x07")

    s = Session(id=3, device=Broken(), base11=True)
    for body in ("<get-config><source><running/></source></get-config>",
                 "<lock><target><running/></target></lock>"):
        reply = handle(f'<rpc xmlns="{BASE_NS}" message-id="1">{body}</rpc>'.encode(), s)
        root = etree.fromstring(reply.xml)
        assert root.findtext(f".//{{{BASE_NS}}}error-tag") == "operation-failed"
        msg = root.findtext(f".//{{{BASE_NS}}}error-message")
        assert "\x00" not in msg and ("failed" in msg or "boom" in msg)


def test_a_worker_that_fails_ends_the_session_instead_of_leaving_it_mute(monkeypatch):
    """If handling a message raises anyway, the session must end visibly (channel closed,
    session_closed called); it used to stop reading and answering while the channel stayed
    open, so the client waited for its reply until its own timeout."""
    import asyncio
    import threading

    import asyncssh

    from ani.netconf import rpc, server

    closed: list[int] = []

    class Dev:
        def session_closed(self, sid: int) -> None:
            closed.append(sid)

    def broken(message, s):  # type: ignore[no-untyped-def]
        raise RuntimeError("unexpected")

    monkeypatch.setattr(rpc, "handle", broken)
    loop = asyncio.new_event_loop()
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    srv = server.NetconfServer({"r1": Dev()}, "ani", "pw",
                               asyncssh.generate_private_key("ssh-ed25519"), {})
    try:
        asyncio.run_coroutine_threadsafe(srv.start(), loop).result(10)

        async def client() -> bytes:
            async with asyncssh.connect("127.0.0.1", srv.ports["r1"], username="ani",
                                        password="pw", known_hosts=None) as conn:
                w, r, _ = await conn.open_session(subsystem="netconf", encoding=None)
                w.write(f'<hello xmlns="{BASE_NS}"><capabilities><capability>'
                        f'{rpc.BASE_1_0}</capability></capabilities></hello>]]>]]>'.encode())
                w.write(f'<rpc xmlns="{BASE_NS}" message-id="1"><get/></rpc>]]>]]>'.encode())
                buf = b""
                while True:  # the hello, then EOF (not a hang)
                    chunk = await asyncio.wait_for(r.read(65536), 10)
                    if not chunk:
                        return buf
                    buf += chunk

        out = asyncio.run_coroutine_threadsafe(client(), loop).result(20)
        assert b"<hello" in out
        deadline = time.monotonic() + 5
        while not closed and time.monotonic() < deadline:
            time.sleep(0.02)
        assert closed  # locks released, confirmed commit rolled back
    finally:
        asyncio.run_coroutine_threadsafe(srv.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        t.join(5)


# -- kind: a failed restore known only to a client that may not be listening any more ----------


def test_commit_whose_restore_failed_is_reported_to_every_session():
    """A commit the router refused, whose restore of the previous configuration failed too
    (e.g. frr-reload timed out on a large change and was killed half way): running is in an
    unknown state. Only the committing session was told, in a reply its client may never read
    (ncclient's 30 s timeout had closed it). Every other session must learn it on its next
    operation, as for a failed confirmed-commit rollback (issue 3, case 3)."""
    from ani.netconf.datastore import Device
    from ani.netconf.errors import RpcError

    be = FakeBackend(V1.model_copy(deep=True))
    dev = Device("r1", be, "r1", timer=Timers())
    a, b = 11, 22
    dev.edit_config(a, "candidate", frr_config(routes_xml("198.51.100.0/24")))
    be.refuse, be.restored = "frr-reload timed out after 30.0 s", False
    with pytest.raises(RpcError) as ei:
        dev.commit(a)
    assert ei.value.tag == "operation-failed" and "unknown state" in ei.value.message
    with pytest.raises(RpcError) as ei:
        dev.get_config(b, "running")
    assert ei.value.tag == "rollback-failed" and "unknown state" in ei.value.message
    assert "timed out" in ei.value.message
    dev.get_config(b, "running")  # once per session
    dev.get_config(a, "running")  # the committer was told by its commit's reply
    # a later successful commit clears it
    dev.commit(a)
    dev.get_config(33, "running")


# -- kind: a fixed time bound that kills a large, healthy apply half way -----------------------


def test_apply_time_bound_grows_with_the_size_of_the_change(monkeypatch):
    """frr-reload applies ~25-40 lines a second here; FrrBackend bounded every run by a fixed
    30 s, so a 1500-entry prefix-list was killed half way (1421 entries in FRR) and the
    restore failed: the router was left in an unknown state. The bound must cover the
    change (running + intended lines), and stay the configured minimum for small ones."""
    from ipaddress import IPv4Network

    from ani.device import apply as device_apply
    from ani.device.model import DeviceConfig, PrefixList, PrefixListEntry
    from ani.netconf.backend import ApplyReport
    from ani.netconf.frr_backend import FrrBackend

    seen: list[float] = []

    def fake_apply(lab, router, intended, write_startup=False, timeout=30.0, deadline=None):  # type: ignore[no-untyped-def]
        seen.append(timeout)
        return ApplyReport(changed=True)

    monkeypatch.setattr(device_apply, "apply", fake_apply)

    def big(n: int) -> DeviceConfig:
        entries = [PrefixListEntry(seq=i, action="permit",
                                   prefix=IPv4Network(f"10.{i >> 8 & 255}.{i & 255}.0/24"))
                   for i in range(1, n + 1)]
        return DeviceConfig(hostname="r1", prefix_lists={"BIG": PrefixList(entries=entries)})

    b = FrrBackend(_backend_lab(monkeypatch), "r1")
    b.apply(DeviceConfig(hostname="r1"))
    b.apply(big(1500))
    assert seen[0] == b.timeout  # small change: the configured bound
    assert seen[1] >= 1500 * 0.08  # >= 120 s for 1500 lines


def test_sizing_the_bound_never_breaks_a_read(monkeypatch):
    """The size estimate must not fail where the model can: running with a line the model
    cannot express (a concurrent writer's community-list) is still readable (get-config
    running said 'internal error' while the estimate rendered it)."""
    from ani.device import apply as device_apply
    from ani.device.model import DeviceConfig
    from ani.netconf.frr_backend import FrrBackend

    cfg = DeviceConfig(hostname="r1",
                       unmodelled=["bgp community-list standard CL-H3 seq 5 permit 64500:1"])
    monkeypatch.setattr(device_apply, "read", lambda lab, router: cfg)

    assert FrrBackend(_backend_lab(monkeypatch), "r1").read() is cfg


# -- kind: a namespace mistake that selects nothing, silently -----------------------------------


@pytest.mark.parametrize("text", [
    f'<filter xmlns="{BASE_NS}" type="subtree"><frr><bgp/></frr></filter>',
    f'<nc:filter xmlns:nc="{BASE_NS}" xmlns="{BASE_NS}"><frr/></nc:filter>',
])
def test_filter_whose_elements_inherit_the_netconf_namespace_is_refused(a2, text):
    """<filter xmlns="...netconf:base:1.0"><frr>: frr is in the NETCONF namespace, matches
    nothing, and get_config answered "(no data: ...)" as if BGP were not configured."""
    r = a2.call("get_config", {"device": "r1", "filter": text})
    assert not r.ok and r.error.code == "invalid_arguments", r.text
    assert FRR in r.error.message and a2.sent == []


def test_config_whose_elements_inherit_the_netconf_namespace_is_refused(a2):
    r = a2.call("edit_config", {"device": "r1", "config":
                                f'<config xmlns="{BASE_NS}"><frr><static-route/></frr></config>'})
    assert not r.ok and r.error.code == "invalid_arguments", r.text
    assert FRR in r.error.message and a2.sent == []


def test_unknown_namespace_error_names_the_namespace_of_a_known_name():
    """A raw NETCONF client that leaves <frr> in the NETCONF namespace gets told which
    namespace <frr> has."""
    from ani.netconf.datastore import Codec

    sch = Codec.ani_frr().schema
    cfg = etree.fromstring(f'<config xmlns="{BASE_NS}"><frr><bgp/></frr></config>')
    r = editconfig.edit(sch, etree.Element(f"{{{BASE_NS}}}data"), cfg)
    assert [e.tag for e in r.errors] == ["unknown-namespace"]
    assert FRR in r.errors[0].message
