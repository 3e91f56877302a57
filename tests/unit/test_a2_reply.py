"""A2 reply checking (issue 3, case 9): every rpc-error of a reply is read, not only the first.

Parsing logic on literal replies, then the adapter on a fake ncclient manager that returns them
(no server). The real server's warning + error reply is tested in tests/integration/test_a2.py.
"""

from __future__ import annotations

import pytest
from lxml import etree

from ani.adapters.a2 import A2Adapter
from ani.device.yang import module_texts
from ani.netconf.client import NetconfSession, RpcFailed, Unsupported, check_reply, parse_errors
from ani.netconf.rpc import server_capabilities
from ani.errors import ErrorCode
from ani.testing import FakeLab

NC = "urn:ietf:params:xml:ns:netconf:base:1.0"

OK = f'<rpc-reply xmlns="{NC}" message-id="1"><ok/></rpc-reply>'

WARN_THEN_ERROR = f"""<rpc-reply xmlns="{NC}" xmlns:frr="urn:ani:yang:ani-frr" message-id="7">
  <rpc-error>
    <error-type>application</error-type>
    <error-tag>invalid-value</error-tag>
    <error-severity>warning</error-severity>
    <error-app-tag>missing-prefix-list</error-app-tag>
    <error-path>/frr:frr/frr:route-map[frr:name='RM-X']/frr:entry[frr:seq='10']/frr:match-prefix-list</error-path>
    <error-message xml:lang="en">route-map RM-X matches prefix-list PL-NOPE, which does not exist</error-message>
  </rpc-error>
  <rpc-error>
    <error-type>application</error-type>
    <error-tag>data-missing</error-tag>
    <error-severity>error</error-severity>
    <error-path>/frr:frr/frr:prefix-list[frr:name='PL-A']/frr:entry[frr:seq='10']</error-path>
    <error-message xml:lang="en">delete of a prefix-list entry that does not exist</error-message>
    <error-info><bad-element>entry</bad-element></error-info>
  </rpc-error>
</rpc-reply>"""

ONLY_WARNING = f"""<rpc-reply xmlns="{NC}" message-id="8">
  <rpc-error>
    <error-type>application</error-type><error-tag>invalid-value</error-tag>
    <error-severity>warning</error-severity><error-message>heads up</error-message>
  </rpc-error>
</rpc-reply>"""

LOCK_DENIED = f"""<rpc-reply xmlns="{NC}" message-id="9">
  <rpc-error>
    <error-type>protocol</error-type><error-tag>lock-denied</error-tag>
    <error-severity>error</error-severity><error-message>locked by another session</error-message>
    <error-info><session-id>4</session-id></error-info>
  </rpc-error>
</rpc-reply>"""

NO_SEVERITY = f"""<rpc-reply xmlns="{NC}" message-id="10">
  <rpc-error><error-type>rpc</error-type><error-tag>operation-failed</error-tag></rpc-error>
</rpc-reply>"""


# -- parsing -------------------------------------------------------------------------------


def test_parse_errors_reads_every_rpc_error_in_order():
    errs = parse_errors(etree.fromstring(WARN_THEN_ERROR.encode()))
    assert [(e.severity, e.tag) for e in errs] == [("warning", "invalid-value"), ("error", "data-missing")]
    w, e = errs
    assert w.app_tag == "missing-prefix-list" and w.path.endswith("frr:match-prefix-list")
    assert e.info == {"bad-element": "entry"} and e.type == "application"
    assert "does not exist" in e.message


def test_ncclient_alone_misses_the_second_error():
    """The bug this guards against: ncclient 0.7.1 decides from the first rpc-error only."""
    from ncclient.operations.rpc import RPCReply

    r = RPCReply(WARN_THEN_ERROR)
    assert r.error.severity == "warning"  # RaiseMode.ERRORS would look at this one and not raise


def test_warning_then_error_fails_with_warnings_kept():
    with pytest.raises(RpcFailed) as ei:
        check_reply("edit-config", WARN_THEN_ERROR)
    exc = ei.value
    assert exc.tags == ["data-missing"]
    assert [w.tag for w in exc.warnings] == ["invalid-value"]
    assert "data-missing (application) at /frr:frr/frr:prefix-list" in str(exc)
    assert "[bad-element=entry]" in str(exc)


def test_only_warnings_succeed_and_are_returned():
    r = check_reply("validate", ONLY_WARNING)
    assert [w.message for w in r.warnings] == ["heads up"]
    assert check_reply("commit", OK).warnings == []


def test_missing_severity_counts_as_error():
    with pytest.raises(RpcFailed) as ei:
        check_reply("commit", NO_SEVERITY)
    assert ei.value.tags == ["operation-failed"]


def test_not_a_reply_is_malformed():
    for raw in ("<hello/>", "not xml <"):
        with pytest.raises(RpcFailed) as ei:
            check_reply("get", raw)
        assert ei.value.tags == ["malformed-message"]


# -- through the adapter, on a fake ncclient manager ----------------------------------------------


class FakeReply:
    def __init__(self, xml: str) -> None:
        self.xml = xml


#: the lab's server's hello (ani.netconf.rpc.server_capabilities of the shipped module)
LAB_HELLO = server_capabilities(module_texts())


class FakeManager:
    """Answers each operation with the next reply queued for it (default: <ok/>)."""

    def __init__(self, replies: dict[str, list[str]] | None = None) -> None:
        self.replies = replies or {}
        self.calls: list[tuple[str, dict]] = []
        self.connected = True
        self.session_id = "5"
        self.server_capabilities = list(LAB_HELLO)  # what the lab's server announces

    def _op(self, name: str, **kw) -> FakeReply:
        self.calls.append((name, kw))
        q = self.replies.get(name) or []
        return FakeReply(q.pop(0) if q else OK)

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return lambda **kw: self._op(name, **kw)

    def close_session(self) -> None:
        self.connected = False


def make(manager: FakeManager) -> A2Adapter:
    return A2Adapter(FakeLab(netconf=True), connect=lambda ep, **kw: manager)


def test_adapter_edit_config_fails_on_second_error_and_returns_warnings():
    m = FakeManager({"edit_config": [WARN_THEN_ERROR]})
    a = make(m)
    res = a.call("edit_config", {
        "device": "r1",
        "config": '<frr xmlns="urn:ani:yang:ani-frr"><prefix-list><name>PL-A</name></prefix-list></frr>',
        "error_option": "continue-on-error",
    })
    assert not res.ok and res.error.code == ErrorCode.COMMAND_FAILED
    assert "data-missing" in res.error.message and "does not exist" in res.error.message
    assert [e["tag"] for e in res.data["errors"]] == ["data-missing"]
    assert [w["tag"] for w in res.data["warnings"]] == ["invalid-value"]
    assert "warning: invalid-value" in res.text
    name, kw = m.calls[-1]
    assert name == "edit_config" and kw["target"] == "candidate" and kw["error_option"] == "continue-on-error"


def test_adapter_success_with_warnings():
    a = make(FakeManager({"validate": [ONLY_WARNING]}))
    res = a.call("validate", {"device": "r1"})
    assert res.ok and res.data["warnings"][0]["message"] == "heads up" and "warning:" in res.text


def test_lock_denied_is_retriable_and_names_the_holder():
    a = make(FakeManager({"lock": [LOCK_DENIED]}))
    res = a.call("lock", {"device": "r1"})
    assert not res.ok and res.error.retriable and "session-id=4" in res.error.message


def test_multi_device_commit_failure_cancels_the_done_ones():
    err = LOCK_DENIED.replace("lock-denied", "in-use")
    m = FakeManager({"commit": [OK, err]})
    a = make(m)
    res = a.call("commit", {"devices": ["r1", "r2"], "confirm_timeout_s": 60})
    assert not res.ok and res.data["failed_device"] == "r2" and res.data["cancelled"] == ["r1"]
    assert "cancelled" in res.error.message
    assert [c[0] for c in m.calls].count("cancel_commit") == 1


def test_confirm_commit_refused_without_a_pending_confirmed_commit():
    m = FakeManager()
    a = make(m)
    res = a.call("confirm_commit", {"devices": ["r1"]})
    assert not res.ok and "no confirmed commit" in res.error.message
    assert not [c for c in m.calls if c[0] == "commit"]
    assert a.call("commit", {"devices": ["r1"], "confirm_timeout_s": 30}).ok
    assert a.call("confirm_commit", {"devices": ["r1"]}).ok
    assert [kw for n, kw in m.calls if n == "commit"] == [{"confirmed": True, "timeout": "30"}, {}]


def test_reconnect_is_reported_and_forgets_the_pending_commit():
    managers = [FakeManager(), FakeManager()]
    a = A2Adapter(FakeLab(netconf=True), connect=lambda ep, **kw: managers.pop(0))
    assert a.call("lock", {"device": "r1"}).ok
    assert a.call("commit", {"devices": ["r1"], "confirm_timeout_s": 30}).ok
    a.session("r1")._m.connected = False  # the transport dropped
    res = a.call("get_config", {"device": "r1"})
    assert res.ok and "dropped and was re-opened" in res.text
    assert "lock(s) on candidate were released" in res.data["notes"][0]
    res = a.call("confirm_commit", {"devices": ["r1"]})
    assert not res.ok and "rolled it back" in res.error.message


def test_unreachable_device_is_reported():
    def refuse(ep, **kw):
        raise ConnectionRefusedError("connection refused")

    a = A2Adapter(FakeLab(netconf=True), connect=refuse)
    res = a.call("get_config", {"device": "r1"})
    assert not res.ok and res.error.code == ErrorCode.DEVICE_UNREACHABLE and res.error.retriable


def test_session_refuses_a_server_without_candidate():
    """A3-T's sessions require :candidate and :confirmed-commit:1.1 (the default): refused as
    unsupported, not as a session that could not be opened (no retry helps)."""
    m = FakeManager()
    m.server_capabilities = ["urn:ietf:params:netconf:base:1.1"]
    s = NetconfSession("r1", lambda: {}, connect=lambda ep, **kw: m)
    with pytest.raises(Unsupported, match=r"r1: the server does not announce candidate \(capability "
                       r"urn:ietf:params:netconf:capability:candidate:1.0\); confirmed-commit") as ei:
        s.ensure()
    assert ei.value.missing == ["candidate", "confirmed-commit"]
