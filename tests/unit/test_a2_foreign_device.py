"""A2 on a device that is not the lab's server (issue 23 §4): the hello is read at connect, each
RPC is refused before it is sent when the hello lacks what it needs (``unsupported``, not
retriable, naming what works there), reads keep working, and ``compare`` sees every difference
of the datastores, not only those inside ``<frr>``. On fake ncclient managers; the same against
a real netconfd is tests/integration/test_a2_netconfd.py."""

from __future__ import annotations

import sys
from pathlib import Path

from lxml import etree

from ani.adapters.a2_support import support
from ani.errors import ErrorCode
from ani.netconf.hello import ServerHello

sys.path.insert(0, str(Path(__file__).parent))
from test_a2_reply import LAB_HELLO, FakeManager, make  # noqa: E402, I001

NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
IF_NS = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
BASE = ["urn:ietf:params:netconf:base:1.0", "urn:ietf:params:netconf:base:1.1"]
IF_MOD = f"{IF_NS}?module=ietf-interfaces&revision=2014-05-08"
CAND = "urn:ietf:params:netconf:capability:candidate:1.0"
RUNNING_ONLY = [*BASE, "urn:ietf:params:netconf:capability:writable-running:1.0", IF_MOD]
NO_CONFIRMED = [*BASE, CAND, "urn:ietf:params:netconf:capability:validate:1.1", IF_MOD]


def data(inner: str) -> str:
    return f'<rpc-reply xmlns="{NC}" message-id="1"><data>{inner}</data></rpc-reply>'


def iface(name: str, descr: str) -> str:
    return (f'<interfaces xmlns="{IF_NS}"><interface><name>{name}</name><description>{descr}'
            "</description></interface></interfaces>")


def manager(caps: list[str], replies: dict | None = None) -> FakeManager:
    m = FakeManager(replies)
    m.server_capabilities = caps
    return m


def sent(m: FakeManager) -> list[str]:
    return [name for name, _ in m.calls]


def test_hello_parse_modules_and_features():
    h = ServerHello.parse(LAB_HELLO)
    assert h.modules == {"ani-frr": "2026-11-29", "ietf-netconf-monitoring": "2010-10-04"}
    assert h.missing(["candidate", "confirmed-commit", "validate", "monitoring"]) == []
    h = ServerHello.parse([*BASE, "urn:ietf:params:netconf:capability:validate:1.0",
                           "urn:ietf:params:netconf:capability:confirmed-commit:1.0", IF_MOD])
    assert h.has("validate") and not h.has("confirmed-commit")  # 1.0 has no cancel-commit
    assert h.module_list() == "ietf-interfaces@2014-05-08" and not h.serves("ani-frr")
    # a YANG 1.1 server may list its modules in the YANG library, not the hello: not refused
    lib = ServerHello.parse([*BASE, "urn:ietf:params:netconf:capability:yang-library:1.0?revision="
                             "2016-06-21&module-set-id=1"])
    assert not lib.lists_modules and lib.serves("ani-frr") is None and lib.has("monitoring")
    assert ServerHello.parse(LAB_HELLO).serves("ani-frr") is True


def test_a_server_without_candidate_is_unsupported_not_unreachable_and_reads_work():
    m = manager(RUNNING_ONLY, {"get_config": [data(iface("eth0", "uplink"))]})
    a = make(m)
    res = a.call("get_config", {"device": "r1"})
    assert res.ok and "<name>eth0</name>" in res.text
    assert "r1 does not serve the YANG module ani-frr" in res.text and "ietf-interfaces@2014-05-08" in res.text
    for name, args in [("edit_config", {"device": "r1", "config": iface("eth0", "x")}),
                       ("get_config", {"device": "r1", "source": "candidate"}),
                       ("commit", {"devices": ["r1"]}), ("compare", {"device": "r1"}),
                       ("validate", {"device": "r1"}), ("discard_changes", {"device": "r1"}),
                       ("lock", {"device": "r1", "target": "candidate"})]:
        before = len(m.calls)
        res = a.call(name, args)
        assert not res.ok and res.error.code == ErrorCode.UNSUPPORTED and not res.error.retriable, (name, res)
        assert "candidate (capability urn:ietf:params:netconf:capability:candidate:1.0)" in res.error.message
        assert "nothing was sent" in res.error.message
        assert [c for c in sent(m)[before:] if c != "get_config"] == []  # reads of running only
        assert "works on r1: get_config, get_state, lock, unlock" in res.error.message
        d = res.data["devices"]["r1"] if name == "commit" else res.data  # commit: per device
        assert d["missing"] == ["candidate", *{"commit": ["confirmed-commit"], "validate": ["validate"]}.get(name, [])]
        assert "edit_config (needs candidate)" in d["does_not_work"]
    # lock of running needs nothing more: sent
    assert a.call("lock", {"device": "r1", "target": "running"}).ok and sent(m)[-1] == "lock"


def test_a_server_without_confirmed_commit_commits_plainly_only():
    m = manager(NO_CONFIRMED)
    a = make(m)
    res = a.call("commit", {"devices": ["r1"]})  # confirmed=true by default
    assert not res.ok and res.error.code == ErrorCode.UNSUPPORTED and not res.error.retriable
    assert "commit needs confirmed-commit (capability urn:ietf:params:netconf:capability:confirmed-commit:1.1)" \
        in res.error.message
    assert "commit" not in sent(m)
    assert a.call("commit", {"devices": ["r1"], "confirmed": False}).ok and "commit" in sent(m)
    for name in ("cancel_commit", "confirm_commit"):
        res = a.call(name, {"devices": ["r1"]})
        assert not res.ok and res.error.code == ErrorCode.UNSUPPORTED, res
    s = support(ServerHello.parse(NO_CONFIRMED))
    assert "commit (confirmed=false)" in s["works"] and s["lacks"] == ["confirmed-commit", "monitoring"]
    assert "confirm_commit (needs confirmed-commit)" in s["does_not_work"]


def test_get_state_without_ani_frr_reads_everything_not_frr_state():
    m = manager(NO_CONFIRMED, {"get": [data(iface("eth0", "up"))]})
    res = make(m).call("get_state", {"device": "r1"})
    assert res.ok and "<name>eth0</name>" in res.text
    (name, kw), = [c for c in m.calls if c[0] == "get"]
    assert kw["filter"] is None
    m = manager(LAB_HELLO, {"get": [data("")]})
    make(m).call("get_state", {"device": "r1"})
    (name, kw), = [c for c in m.calls if c[0] == "get"]
    assert b"frr-state" in etree.tostring(kw["filter"])


def test_empty_read_on_a_foreign_device_says_why():
    m = manager(NO_CONFIRMED, {"get_config": [data("")]})
    res = make(m).call("get_config", {"device": "r1"})
    assert res.ok and res.text.startswith("(no data: r1 running is empty")
    assert "does not serve the YANG module ani-frr" in res.text and res.data["note"]


FRR = '<frr xmlns="urn:ani:yang:ani-frr"><bgp><asn>64500</asn></bgp></frr>'


def test_compare_sees_a_difference_outside_frr_in_both_formats():
    """The issue's probe: the candidate differs only outside <frr>; compare said no difference."""
    for fmt in ("cli", "xml"):
        m = manager(LAB_HELLO, {"get_config": [data(FRR + iface("eth0", "old")),
                                               data(FRR + iface("eth0", "new"))]})
        res = make(m).call("compare", {"device": "r1", "format": fmt})
        assert res.ok and res.data["changes"] == 2, (fmt, res.text)
        assert "\n-    <description>old</description>\n+    <description>new</description>\n" in res.text
    m = manager(LAB_HELLO, {"get_config": [data(FRR + iface("eth0", "same")),
                                           data(FRR + iface("eth0", "same"))]})
    res = make(m).call("compare", {"device": "r1"})
    assert res.ok and res.data["changes"] == 0 and "no difference" in res.text


def test_compare_on_a_foreign_device_is_xml_and_says_so():
    m = manager(NO_CONFIRMED, {"get_config": [data(iface("eth0", "a")), data(iface("eth0", "b"))]})
    res = make(m).call("compare", {"device": "r1"})
    assert res.ok and res.data["format"] == "xml" and res.data["changes"] == 2
    assert res.text.startswith("(shown as XML: r1 does not serve ani-frr")


YLIB = "urn:ietf:params:netconf:capability:yang-library:1.0?revision=2016-06-21&module-set-id=7"
YLIB_NS = "urn:ietf:params:xml:ns:yang:ietf-yang-library"


def library(*modules: str) -> str:
    return data(f'<modules-state xmlns="{YLIB_NS}">' + "".join(
        f"<module><name>{m}</name><revision>2026-11-29</revision></module>" for m in modules) + "</modules-state>")


def test_a_server_with_a_yang_library_is_asked_whether_it_serves_ani_frr():
    """RFC 7950 §5.6.4: a server with a YANG library lists its YANG 1.1 modules (ani-frr is one)
    there, not in its hello: A2 asks /modules-state once per session instead of guessing."""
    caps = [*BASE, CAND, "urn:ietf:params:netconf:capability:confirmed-commit:1.1", YLIB]
    m = manager(caps, {"get": [library("ani-frr"), data("")]})
    a = make(m)
    assert a.call("get_state", {"device": "r1"}).ok
    gets = [kw for name, kw in m.calls if name == "get"]
    assert len(gets) == 2 and b"modules-state" in etree.tostring(gets[0]["filter"])
    assert b"frr-state" in etree.tostring(gets[1]["filter"])  # it serves ani-frr
    (r1,) = [n for n in a.support_notes() if "on r1:" in n]  # lacks validate: a note
    assert "does not serve" not in r1 and "not on r1: validate (needs validate)" in r1
    assert len([c for c in m.calls if c[0] == "get"]) == 3  # r1 not asked again (cached); r2 asked once
    m = manager(caps, {"get": [library("ietf-interfaces"), data(iface("eth0", "x"))]})
    res = make(m).call("get_state", {"device": "r1"})
    assert res.ok and "does not serve the YANG module ani-frr" in res.text
    assert [kw["filter"] for name, kw in m.calls if name == "get"][1] is None


def test_an_unsupported_error_names_a_few_modules_and_their_count_the_notes_all():
    """A device with 24 modules and no candidate (yuma's netconfd as tried): each refused call
    named all 24 (~800 characters) again; now at most SHORT_MODULES and the count, while the
    connect-time note (ani mcp serve's) still names every one, once."""
    mods = [f"urn:example:m{i:02d}?module=example-module-{i:02d}&revision=2020-01-01" for i in range(24)]
    caps = [*BASE, "urn:ietf:params:netconf:capability:writable-running:1.0", *mods]
    m = manager(caps)
    a = make(m)
    for name, args in [("edit_config", {"device": "r1", "config": iface("eth0", "x")}),
                       ("commit", {"devices": ["r1"]}), ("validate", {"device": "r1"})]:
        res = a.call(name, args)
        assert res.error.code == ErrorCode.UNSUPPORTED, res
        msg = res.error.message
        assert "example-module-00@2020-01-01, example-module-01@2020-01-01, example-module-02@2020-01-01" \
               " and 21 more (24 modules)" in msg, msg
        assert msg.count("example-module-") == 3 and len(msg) < 600, (len(msg), msg)
        d = res.data["devices"]["r1"] if name == "commit" else res.data  # commit: per device
        assert d["module_count"] == 24 and d["modules"].endswith("(24 modules)") and d["does_not_work"]
    (note,) = [n for n in a.support_notes() if n.startswith("r1 ")]
    assert all(f"example-module-{i:02d}@2020-01-01" in note for i in range(24)) and "more" not in note
    assert ServerHello.parse(caps).module_list(30).count("example-module-") == 24
