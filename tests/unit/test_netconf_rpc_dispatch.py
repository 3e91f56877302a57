"""ani.netconf.rpc: <rpc> parsing, dispatch to the Device, <rpc-reply> building (stand-in Device)."""

from __future__ import annotations

import pytest
from lxml import etree

from ani.netconf.errors import BASE_NS, RpcError, RpcErrors
from ani.netconf.rpc import (
    BASE_1_0,
    BASE_1_1,
    MON_NS,
    Session,
    handle,
    parse_client_hello,
    server_capabilities,
    server_hello,
)

NS = {"nc": BASE_NS, "m": MON_NS}
YANG = 'module ani-frr {\n  yang-version 1.1;\n  namespace "urn:ani:yang:ani-frr";\n  prefix frr;\n}\n'
SCHEMAS = {"ani-frr": ("2026-11-29", YANG)}


class FakeDevice:
    """Records calls; returns what the test put in ``ret`` / raises what is in ``exc``."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.ret: object = None
        self.exc: Exception | None = None

    def __getattr__(self, name: str):  # noqa: ANN204
        def call(*args, **kw):  # noqa: ANN202
            self.calls.append((name, args, kw))
            if self.exc is not None:
                raise self.exc
            return self.ret

        return call


@pytest.fixture
def dev() -> FakeDevice:
    return FakeDevice()


@pytest.fixture
def sess(dev) -> Session:
    killed: list[int] = []

    def kill(sid: int) -> None:
        if sid != 7:
            raise RpcError("invalid-value", f"no session {sid}", type="protocol")
        killed.append(sid)

    s = Session(id=3, device=dev, schemas=SCHEMAS, capabilities=server_capabilities(SCHEMAS),
                base11=True, kill=kill)
    s.killed = killed  # type: ignore[attr-defined]
    return s


def rpc(body: str, attrs: str = 'message-id="101"') -> bytes:
    return f'<rpc xmlns="{BASE_NS}" {attrs}>{body}</rpc>'.encode()


def reply(sess: Session, msg: bytes) -> etree._Element:
    r = handle(msg, sess)
    return etree.fromstring(r.xml)


def errors(r: etree._Element) -> list[dict[str, str]]:
    out = []
    for e in r.findall("nc:rpc-error", NS):
        d = {etree.QName(c).localname: (c.text or "") for c in e if etree.QName(c).localname != "error-info"}
        for i in e.findall("nc:error-info/*", NS):
            d["info:" + etree.QName(i).localname] = i.text or ""
        out.append(d)
    return out


# -- hello -------------------------------------------------------------------------------------


def test_capabilities_and_server_hello():
    caps = server_capabilities(SCHEMAS)
    assert "urn:ani:yang:ani-frr?module=ani-frr&revision=2026-11-29" in caps
    assert BASE_1_0 in caps and BASE_1_1 in caps
    assert "urn:ietf:params:netconf:capability:writable-running:1.0" not in caps
    h = etree.fromstring(server_hello(42, caps))
    assert h.findtext("nc:session-id", namespaces=NS) == "42"
    assert [c.text for c in h.findall("nc:capabilities/nc:capability", NS)] == caps


def test_client_hello():
    ok = f'<hello xmlns="{BASE_NS}"><capabilities><capability>{BASE_1_0}</capability></capabilities></hello>'
    assert parse_client_hello(ok.encode()) == {BASE_1_0}
    for bad in (
        f'<hello xmlns="{BASE_NS}"><capabilities/></hello>',  # no base capability
        f'<hello xmlns="{BASE_NS}"><capabilities><capability>{BASE_1_1}</capability></capabilities>'
        "<session-id>4</session-id></hello>",  # a client must not send a session-id
        '<hello><capabilities/></hello>',  # wrong namespace
        "<hello",
    ):
        with pytest.raises(ValueError):
            parse_client_hello(bad.encode())


# -- envelope ----------------------------------------------------------------------------------


def test_reply_echoes_every_rpc_attribute(sess, dev):
    r = reply(sess, rpc("<discard-changes/>", 'message-id="7" xmlns:x="urn:x" x:user-id="fred" foo="bar"'))
    assert r.tag == f"{{{BASE_NS}}}rpc-reply"
    assert r.get("message-id") == "7" and r.get("{urn:x}user-id") == "fred" and r.get("foo") == "bar"
    assert r.find("nc:ok", NS) is not None
    assert dev.calls == [("discard_changes", (3,), {})]


def test_missing_message_id(sess, dev):
    r = reply(sess, rpc("<get/>", 'foo="1"'))
    assert r.get("foo") == "1" and r.get("message-id") is None
    assert errors(r) == [{"error-type": "rpc", "error-tag": "missing-attribute", "error-severity": "error",
                          "error-message": errors(r)[0]["error-message"],
                          "info:bad-attribute": "message-id", "info:bad-element": "rpc"}]
    assert dev.calls == []


def test_malformed_xml_by_version(sess):
    assert errors(reply(sess, b"<rpc message-id='1'><get>"))[0]["error-tag"] == "malformed-message"
    sess.base11 = False  # malformed-message is new in base:1.1
    assert errors(reply(sess, b"<rpc"))[0]["error-tag"] == "operation-failed"
    assert errors(reply(sess, b'<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>'))[0]["error-tag"] == "operation-failed"


def test_unknown_operation_and_bad_envelopes(sess):
    e = errors(reply(sess, rpc("<frobnicate/>")))[0]
    assert (e["error-tag"], e["error-type"], e["info:bad-element"]) == ("operation-not-supported", "protocol", "frobnicate")
    assert errors(reply(sess, rpc('<get-schema xmlns="urn:other"/>')))[0]["error-tag"] == "operation-not-supported"
    assert errors(reply(sess, rpc("<copy-config/>")))[0]["error-tag"] == "operation-not-supported"
    assert errors(reply(sess, rpc("")))[0]["error-tag"] == "missing-element"
    assert errors(reply(sess, rpc("<get/><get/>")))[0]["error-tag"] == "unknown-element"
    assert errors(reply(sess, f'<hello xmlns="{BASE_NS}"/>'.encode()))[0]["error-tag"] == "unknown-element"


# -- operations --------------------------------------------------------------------------------


def test_get_config_passes_source_and_filter_and_wraps_data(sess, dev):
    dev.ret = [etree.fromstring('<frr xmlns="urn:ani:yang:ani-frr"><x>1</x></frr>')]
    r = reply(sess, rpc('<get-config><source><candidate/></source><filter type="subtree">'
                        '<frr xmlns="urn:ani:yang:ani-frr"/></filter></get-config>'))
    (name, args, kw), = dev.calls
    assert name == "get_config" and args[:2] == (3, "candidate")
    assert etree.QName(args[2]).localname == "filter" and len(args[2]) == 1
    assert r.find("nc:data", NS)[0].tag == "{urn:ani:yang:ani-frr}frr"
    assert r.find("nc:ok", NS) is None
    dev.calls.clear()
    dev.ret = etree.Element(f"{{{BASE_NS}}}data")  # a <data> element is used as it is
    r = reply(sess, rpc("<get-config><source><running/></source></get-config>"))
    assert dev.calls[0][1] == (3, "running", None) and len(r.find("nc:data", NS)) == 0


@pytest.mark.parametrize("body,tag", [
    ("<get-config/>", "missing-element"),
    ("<get-config><source/></get-config>", "missing-element"),
    ("<get-config><source><startup/></source></get-config>", "operation-not-supported"),
    ("<get-config><source><bogus/></source></get-config>", "unknown-element"),
    ("<get-config><source><running/></source><filter type='xpath' select='/x'/></get-config>",
     "operation-not-supported"),
    ("<get-config><source><running/></source><extra/></get-config>", "unknown-element"),
    ("<lock><target><startup/></target></lock>", "operation-not-supported"),
    ("<edit-config><target><candidate/></target></edit-config>", "missing-element"),
    ("<edit-config><target><candidate/></target><default-operation>delete</default-operation>"
     "<config/></edit-config>", "invalid-value"),
    ("<edit-config><target><candidate/></target><url>file:///x</url></edit-config>", "operation-not-supported"),
    ("<kill-session><session-id>3</session-id></kill-session>", "invalid-value"),  # own id
    ("<kill-session><session-id>x</session-id></kill-session>", "invalid-value"),
    ("<kill-session><session-id>99</session-id></kill-session>", "invalid-value"),  # unknown id
    ("<kill-session/>", "missing-element"),
])
def test_parameter_errors_never_reach_the_device(sess, dev, body, tag):
    assert errors(reply(sess, rpc(body)))[0]["error-tag"] == tag
    assert dev.calls == []


def test_edit_config_arguments_and_defaults(sess, dev):
    dev.ret = []
    r = reply(sess, rpc('<edit-config><target><candidate/></target><config><frr xmlns="urn:ani:yang:ani-frr"/>'
                        "</config></edit-config>"))
    assert r.find("nc:ok", NS) is not None
    (name, args, kw), = dev.calls
    assert name == "edit_config" and args[:2] == (3, "candidate") and etree.QName(args[2]).localname == "config"
    assert kw == {"default_operation": "merge", "error_option": "stop-on-error", "test_option": "test-then-set"}
    dev.calls.clear()
    reply(sess, rpc("<edit-config><target><running/></target><default-operation>none</default-operation>"
                    "<error-option>rollback-on-error</error-option><test-option>test-only</test-option>"
                    "<config/></edit-config>"))
    assert dev.calls[0][1][1] == "running"
    assert dev.calls[0][2] == {"default_operation": "none", "error_option": "rollback-on-error",
                               "test_option": "test-only"}


def test_warnings_make_a_reply_without_ok(sess, dev):
    dev.ret = [RpcError("invalid-value", "just so you know", severity="warning")]
    r = reply(sess, rpc("<validate><source><candidate/></source></validate>"))
    assert r.find("nc:ok", NS) is None
    assert [e["error-severity"] for e in errors(r)] == ["warning"]


def test_several_errors_in_order(sess, dev):
    dev.exc = RpcErrors([RpcError("invalid-value", "w", severity="warning"), RpcError("data-missing", "e")])
    r = reply(sess, rpc("<edit-config><target><candidate/></target><config/></edit-config>"))
    assert [(e["error-severity"], e["error-tag"]) for e in errors(r)] == [("warning", "invalid-value"),
                                                                          ("error", "data-missing")]
    assert r.find("nc:ok", NS) is None


def test_unexpected_device_failure_is_operation_failed(sess, dev):
    dev.exc = KeyError("boom")
    e = errors(reply(sess, rpc("<discard-changes/>")))[0]
    assert e["error-tag"] == "operation-failed" and "boom" in e["error-message"]


def test_an_unexpected_device_failure_is_noted_as_a_host_fault(sess, dev, tmp_path, monkeypatch):
    """The server failed, not the client: the fault journal (and, in a lab's server, the lab's
    host-faults.jsonl) says so, so the campaign runner does not grade the run (issue 11)."""
    from ani.errors import ProgramMissing
    from ani.host import programs

    log = tmp_path / "faults.jsonl"
    monkeypatch.setenv(programs.FAULT_LOG_ENV, str(log))
    mark = programs.fault_mark()
    dev.exc = KeyError("boom")
    reply(sess, rpc("<discard-changes/>"))
    want = "NETCONF server: internal error in <discard-changes>: KeyError: 'boom'"
    assert programs.faults_since(mark) == [want] and programs.read_fault_log(log) == [want]
    dev.exc = ProgramMissing("/usr/lib/frr/frr-reload.py", "frr-pythontools")  # noted by the registry itself
    e = errors(reply(sess, rpc("<discard-changes/>")))[0]
    assert "frr-reload.py is missing (apt-get install frr-pythontools)" in e["error-message"]
    assert programs.faults_since(mark) == [want]


def test_commit_params_are_passed_as_received_strings(sess, dev):
    dev.ret = []
    reply(sess, rpc("<commit><confirmed/><confirm-timeout> 30 </confirm-timeout><persist>p1</persist></commit>"))
    reply(sess, rpc("<commit><persist-id>p1</persist-id></commit>"))
    reply(sess, rpc("<commit/>"))
    assert [c[2] for c in dev.calls] == [
        {"confirmed": True, "confirm_timeout": " 30 ", "persist": "p1", "persist_id": None},
        {"confirmed": False, "confirm_timeout": None, "persist": None, "persist_id": "p1"},
        {"confirmed": False, "confirm_timeout": None, "persist": None, "persist_id": None},
    ]


def test_validate_lock_unlock_cancel(sess, dev):
    reply(sess, rpc("<validate><source><config><frr xmlns='urn:ani:yang:ani-frr'/></config></source></validate>"))
    reply(sess, rpc("<lock><target><running/></target></lock>"))
    reply(sess, rpc("<unlock><target><candidate/></target></unlock>"))
    reply(sess, rpc("<cancel-commit><persist-id>p1</persist-id></cancel-commit>"))
    reply(sess, rpc("<cancel-commit/>"))
    assert etree.QName(dev.calls[0][1][1]).localname == "config"
    assert [(c[0], c[1][1:] if c[0] != "validate" else None, c[2]) for c in dev.calls[1:]] == [
        ("lock", ("running",), {}), ("unlock", ("candidate",), {}),
        ("cancel_commit", (), {"persist_id": "p1"}), ("cancel_commit", (), {"persist_id": None}),
    ]


def test_validate_in_scraplis_namespace_is_accepted(sess, dev):
    ns = "urn:ietf:params:xml:ns:netconf:capability:validate:1.0"
    r = reply(sess, rpc(f'<validate xmlns="{ns}"><source><candidate></candidate></source></validate>'))
    assert r.find("nc:ok", NS) is not None
    assert dev.calls == [("validate", (3, "candidate"), {})]


def test_close_and_kill_session(sess, dev):
    r = handle(rpc("<close-session/>"), sess)
    assert r.close and etree.fromstring(r.xml).find("nc:ok", NS) is not None
    r = handle(rpc("<kill-session><session-id>7</session-id></kill-session>"), sess)
    assert not r.close and etree.fromstring(r.xml).find("nc:ok", NS) is not None
    assert sess.killed == [7]


def test_get_schema(sess):
    r = reply(sess, rpc(f'<get-schema xmlns="{MON_NS}"><identifier>ani-frr</identifier>'
                        "<format>yang</format></get-schema>"))
    assert r.find("m:data", NS).text == YANG
    r = reply(sess, rpc(f'<get-schema xmlns="{MON_NS}" xmlns:ncm="{MON_NS}"><identifier>ani-frr</identifier>'
                        "<version>2026-11-29</version><format>ncm:yang</format></get-schema>"))
    assert r.find("m:data", NS).text == YANG
    for body, bad in (("<identifier>nope</identifier>", "identifier"),
                      ("<identifier>ani-frr</identifier><version>1999-01-01</version>", "version"),
                      ("<identifier>ani-frr</identifier><format>yin</format>", "format")):
        e = errors(reply(sess, rpc(f'<get-schema xmlns="{MON_NS}">{body}</get-schema>')))[0]
        assert (e["error-tag"], e["info:bad-element"]) == ("invalid-value", bad)


def test_get_adds_netconf_state_and_keeps_it_from_the_device(sess, dev):
    dev.ret = [etree.fromstring('<frr-state xmlns="urn:ani:yang:ani-frr"/>')]
    r = reply(sess, rpc("<get/>"))
    assert [etree.QName(c).localname for c in r.find("nc:data", NS)] == ["frr-state", "netconf-state"]
    ids = r.findall("nc:data/m:netconf-state/m:schemas/m:schema/m:identifier", NS)
    assert [i.text for i in ids] == ["ani-frr"]
    assert dev.calls == [("get", (3, None), {})]
    dev.calls.clear()
    r = reply(sess, rpc(f'<get><filter><netconf-state xmlns="{MON_NS}"><schemas/></netconf-state></filter></get>'))
    assert dev.calls == []  # nothing of the filter was for the device
    st = r.find("nc:data/m:netconf-state", NS)
    assert [etree.QName(c).localname for c in st] == ["schemas"]
    r = reply(sess, rpc(f'<get><filter><netconf-state xmlns="{MON_NS}"/><frr-state xmlns="urn:ani:yang:ani-frr"/>'
                        "</filter></get>"))
    (name, args, _), = dev.calls
    assert [etree.QName(c).localname for c in args[1]] == ["frr-state"]
