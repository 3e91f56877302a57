"""A2 on real FRR through the lab's real NETCONF servers: the adapter's workflow, issue cases 9
and 10 end to end, multi-device commit with cancel, session loss.

Topology: tests/data/a1_pair.yaml (r1: ospfd + bgpd, AS 64501, nftables table inet fw with
tenant sets, PL-TENANTS / RM-TENANTS-OUT; r2: bgpd, AS 64502). Every test makes its own lab
(downed even on failure). Results are checked out of band (``lab.running_config``, ``nft``),
never only through the adapter.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ani.adapters.a2 import A2Adapter
from ani.netconf.client import RpcFailed, ncclient_connect
from ani.errors import ErrorCode
from ani.registry import create_adapter

pytestmark = pytest.mark.integration

PAIR = Path(__file__).parent.parent / "data" / "a1_pair.yaml"
NS = "urn:ani:yang:ani-frr"
NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
PL_A = f'<frr xmlns="{NS}"><prefix-list><name>PL-A</name><entry><seq>5</seq><action>permit</action>' \
       "<prefix>192.0.2.0/24</prefix></entry></prefix-list></frr>"
SET_ELEM = f'<frr xmlns="{NS}"><firewall><set><name>tenant_blue</name><element>203.0.113.0/24</element>' \
           "</set></firewall></frr>"
PL_A_LINE = "ip prefix-list PL-A seq 5 permit 192.0.2.0/24"


@pytest.fixture
def lab(make_lab):
    return make_lab(PAIR)


@pytest.fixture
def a2(lab, open_adapter):
    return open_adapter(A2Adapter(lab))


def ok(res):
    assert res.ok, res.text
    return res


def nft_set(lab, router="r1", name="tenant_blue") -> str:
    r = lab.exec(router, ["nft", "list", "set", "inet", "fw", name])
    assert r.rc == 0, r.stderr
    return r.stdout


def wait_for(pred, bound_s: float, pause_s: float = 0.2) -> bool:
    end = time.monotonic() + bound_s
    while True:
        if pred():
            return True
        if time.monotonic() > end:
            return False
        time.sleep(pause_s)


# -- the workflow ------------------------------------------------------------------------------


def test_registered_as_a2_and_reads(lab):
    adapter = create_adapter("a2", lab)
    assert isinstance(adapter, A2Adapter)
    with adapter:
        names = {t.name for t in adapter.tools()}
        assert names == {"get_topology", "get_config", "get_state", "edit_config", "validate", "compare",
                         "commit", "confirm_commit", "cancel_commit", "discard_changes", "lock", "unlock",
                         "get_schema"}
        schema = ok(adapter.call("get_schema", {"identifier": "ani-frr"}))
        assert "module ani-frr" in schema.text and f'namespace "{NS}"' in schema.text

        cfg = ok(adapter.call("get_config", {"device": "r1"}))
        assert "<name>PL-TENANTS</name>" in cfg.data["xml"] and "<name>tenant_blue</name>" in cfg.data["xml"]
        flt = f'<frr xmlns="{NS}"><prefix-list/></frr>'
        only = ok(adapter.call("get_config", {"device": "r1", "filter": flt}))
        assert "PL-TENANTS" in only.data["xml"] and "route-map" not in only.data["xml"]

        state = ok(adapter.call("get_state", {"device": "r1"}))
        assert "<bgp-neighbor>" in state.data["xml"] and "<address>10.0.12.2</address>" in state.data["xml"]
        assert "Established" in state.data["xml"]
        flt = f'<frr-state xmlns="{NS}"><route><prefix>10.0.12.0/30</prefix></route></frr-state>'
        route = ok(adapter.call("get_state", {"device": "r1", "filter": flt}))
        assert "<prefix>10.0.12.0/30</prefix>" in route.data["xml"] and "<bgp-neighbor>" not in route.data["xml"]


def test_full_confirmed_commit_workflow(lab, a2):
    before = lab.running_config("r1")
    ok(a2.call("lock", {"device": "r1"}))
    res = ok(a2.call("edit_config", {"device": "r1", "config": PL_A}))
    assert res.changed is False
    ok(a2.call("edit_config", {"device": "r1", "config": SET_ELEM}))
    assert "PL-A" in ok(a2.call("get_config", {"device": "r1", "source": "candidate"})).data["xml"]
    assert "PL-A" not in ok(a2.call("get_config", {"device": "r1"})).data["xml"]
    assert lab.running_config("r1") == before  # nothing reached FRR yet
    ok(a2.call("validate", {"device": "r1"}))

    diff = ok(a2.call("compare", {"device": "r1"}))
    assert f"+{PL_A_LINE}" in diff.data["diff"]
    assert "+  set tenant_blue element 203.0.113.0/24" in diff.data["diff"]
    assert diff.data["changes"] == 2
    xml_diff = ok(a2.call("compare", {"device": "r1", "format": "xml"}))
    assert "+" in xml_diff.data["diff"] and "192.0.2.0/24" in xml_diff.data["diff"]

    res = ok(a2.call("commit", {"devices": ["r1"], "confirm_timeout_s": 120}))
    assert res.changed and res.data["devices"]["r1"]["changed"] and res.data["confirm_timeout_s"] == 120
    assert PL_A_LINE in lab.running_config("r1")
    assert "203.0.113.0/24" in nft_set(lab)

    res = ok(a2.call("confirm_commit", {"devices": ["r1"]}))
    assert res.changed is False  # confirming changes nothing more
    ok(a2.call("unlock", {"device": "r1"}))
    assert "no difference" in ok(a2.call("compare", {"device": "r1"})).text

    # confirmed: closing the session keeps it
    a2.close()
    time.sleep(1.0)
    assert PL_A_LINE in lab.running_config("r1") and "203.0.113.0/24" in nft_set(lab)


def test_discard_cancel_and_close_revert(lab, a2):
    before = lab.running_config("r1")
    ok(a2.call("edit_config", {"device": "r1", "config": PL_A}))
    ok(a2.call("discard_changes", {"device": "r1"}))
    assert "no difference" in ok(a2.call("compare", {"device": "r1"})).text

    ok(a2.call("edit_config", {"device": "r1", "config": PL_A}))
    ok(a2.call("commit", {"devices": ["r1"], "confirm_timeout_s": 300}))
    assert PL_A_LINE in lab.running_config("r1")
    res = ok(a2.call("cancel_commit", {"devices": ["r1"]}))
    assert res.changed
    assert lab.running_config("r1") == before
    res = a2.call("confirm_commit", {"devices": ["r1"]})
    assert not res.ok and "no confirmed commit" in res.error.message

    # an unconfirmed commit is rolled back when its session ends (RFC 6241 §8.4.1)
    ok(a2.call("edit_config", {"device": "r1", "config": PL_A}))
    ok(a2.call("commit", {"devices": ["r1"], "confirm_timeout_s": 300}))
    assert PL_A_LINE in lab.running_config("r1")
    a2.close()
    assert wait_for(lambda: PL_A_LINE not in lab.running_config("r1"), 10.0)


def test_json_config_and_plain_commit(lab, a2):
    doc = ('{"ani-frr:frr": {"prefix-list": [{"name": "PL-A", "entry": '
           '[{"seq": 5, "action": "permit", "prefix": "192.0.2.0/24"}]}]}}')
    ok(a2.call("edit_config", {"device": "r1", "config": doc}))
    res = ok(a2.call("commit", {"devices": ["r1"], "confirmed": False}))
    assert res.changed and res.data["confirm_timeout_s"] is None
    assert PL_A_LINE in lab.running_config("r1")
    delete = ('{"ani-frr:frr": {"prefix-list": [{"name": "PL-A", '
              '"@": {"ietf-netconf:operation": "delete"}}]}}')
    ok(a2.call("edit_config", {"device": "r1", "config": delete}))
    ok(a2.call("commit", {"devices": ["r1"], "confirmed": False}))
    assert "PL-A" not in lab.running_config("r1")


def test_errors_are_data(lab, a2):
    res = a2.call("edit_config", {"device": "r1", "config": "<frr><x/></frr>"})
    assert not res.ok and res.error.code == ErrorCode.INVALID_ARGUMENTS
    res = a2.call("edit_config", {"device": "r1", "config": f'<frr xmlns="{NS}"><no-such-node/></frr>'})
    assert not res.ok and res.error.code == ErrorCode.COMMAND_FAILED and "unknown-element" in res.error.message
    res = a2.call("get_config", {"device": "r9"})
    assert not res.ok and res.error.code == ErrorCode.UNKNOWN_DEVICE
    bad = f'<frr xmlns="{NS}"><prefix-list><name>PL-A</name><entry><seq>5</seq><action>allow</action>' \
          "<prefix>192.0.2.0/24</prefix></entry></prefix-list></frr>"
    res = a2.call("edit_config", {"device": "r1", "config": bad})
    assert not res.ok and "invalid-value" in res.error.message
    assert "no difference" in ok(a2.call("compare", {"device": "r1"})).text  # rollback-on-error


# -- case 9: a reply with a warning then an error -----------------------------------------------


def test_case9_warning_then_error_fails_and_returns_the_warning(lab, a2):
    config = (
        f'<frr xmlns="{NS}" xmlns:nc="{NC}">'
        "<route-map><name>RM-X</name><entry><seq>10</seq><action>permit</action>"
        "<match-prefix-list>PL-NOPE</match-prefix-list></entry></route-map>"
        '<prefix-list><name>PL-TENANTS</name><entry nc:operation="delete"><seq>99</seq></entry></prefix-list>'
        "</frr>"
    )
    # the real server's reply really has the warning first: ncclient alone would accept it
    m = ncclient_connect(lab.netconf_endpoint("r1"), connect_timeout_s=10, rpc_timeout_s=60)
    try:
        from ani.adapters.netconf_xml import config_element
        from ncclient.operations.rpc import RPCReply

        raw = m.edit_config(config=config_element(config), target="candidate", error_option="continue-on-error").xml
        first = RPCReply(raw).error
        assert first is not None and first.severity == "warning", raw
        m.discard_changes()
    finally:
        m.close_session()

    res = a2.call("edit_config", {"device": "r1", "config": config, "error_option": "continue-on-error"})
    assert not res.ok and res.error.code == ErrorCode.COMMAND_FAILED
    assert [e["tag"] for e in res.data["errors"]] == ["data-missing"]
    assert "data-missing" in res.error.message
    assert res.data["warnings"] and "PL-NOPE" in res.data["warnings"][0]["message"]
    assert "warning:" in res.text
    ok(a2.call("discard_changes", {"device": "r1"}))


# -- case 10: an int confirm timeout, reverted after it --------------------------------------
#: the confirm timeout of case 10 here, seconds: the int is sent as the string "8" and the commit
#: reverts 8 s after it (the issue's 30 s runs in test_netconf_cases.py's case 10, in the
#: background of that module's other cases)
CASE10_S = 8


def test_case10_int_timeout_sent_as_string_reverts_after_it(lab, a2):
    before = lab.running_config("r1")
    for bad in (0, -1, 2.5):
        res = a2.call("commit", {"devices": ["r1"], "confirm_timeout_s": bad})
        assert not res.ok and res.error.code == ErrorCode.INVALID_ARGUMENTS
    # the server refuses them too (sent past the adapter's check)
    for bad in ("0", "-1", "2.5"):
        with pytest.raises(RpcFailed) as ei:
            a2.session("r1").call("commit", confirmed=True, timeout=bad)
        assert ei.value.tags == ["invalid-value"], (bad, ei.value)
    assert lab.running_config("r1") == before

    ok(a2.call("edit_config", {"device": "r1", "config": PL_A}))
    t0 = time.monotonic()
    res = ok(a2.call("commit", {"devices": ["r1"], "confirm_timeout_s": CASE10_S}))
    t1 = time.monotonic()
    assert res.data["confirm_timeout_s"] == CASE10_S
    assert PL_A_LINE in lab.running_config("r1")
    apply_s = t1 - t0  # the commit's own apply (seconds under load)
    reverted_at = None
    while time.monotonic() - t1 < CASE10_S + apply_s + 10:
        if PL_A_LINE not in lab.running_config("r1"):
            reverted_at = time.monotonic()
            break
        time.sleep(0.2)
    assert reverted_at is not None, f"not reverted within {CASE10_S + apply_s + 10:.1f} s"
    # the timer runs from when the server started the commit (after t0, before t1; see
    # Datastore.commit); the revert is done one rollback apply (about the commit's) later
    assert reverted_at - t0 >= CASE10_S, (reverted_at - t0, apply_s)
    assert reverted_at - t1 <= CASE10_S + apply_s + 2.0, (reverted_at - t1, apply_s)
    assert lab.running_config("r1") == before
    res = a2.call("confirm_commit", {"devices": ["r1"]})
    assert not res.ok and "confirm timeout" in res.error.message

    # omitted: the server's default, 600 s (still pending long after 30 s is not waited for here)
    ok(a2.call("edit_config", {"device": "r1", "config": PL_A}))
    res = ok(a2.call("commit", {"devices": ["r1"]}))
    assert res.data["confirm_timeout_s"] == 600
    ok(a2.call("cancel_commit", {"devices": ["r1"]}))
    assert lab.running_config("r1") == before


# -- several devices, concurrency, session loss -------------------------------------------------


def test_multi_device_commit_failure_cancels_the_done_ones(lab, a2):
    before1, before2 = lab.running_config("r1"), lab.running_config("r2")
    other = ncclient_connect(lab.netconf_endpoint("r2"), connect_timeout_s=10, rpc_timeout_s=60)
    try:
        other.lock(target="running")  # another session holds r2's running: r2's commit is refused
        ok(a2.call("edit_config", {"device": "r1", "config": PL_A}))
        ok(a2.call("edit_config", {"device": "r2", "config": PL_A}))
        res = a2.call("commit", {"devices": ["r1", "r2"], "confirm_timeout_s": 120})
        assert not res.ok and res.data["failed_device"] == "r2"
        assert res.data["cancelled"] == ["r1"] and "cancelled" in res.error.message
        assert res.error.retriable  # in-use / lock-denied
        assert {e["tag"] for e in res.data["devices"]["r2"]["errors"]} & {"in-use", "lock-denied"}
        assert lab.running_config("r1") == before1 and lab.running_config("r2") == before2
        # after the commit, r1's candidate tracked running: the rollback took its edits along
        assert res.data["devices"]["r1"]["candidate_equals_running"] and "edit again" in res.error.message
        other.unlock(target="running")
    finally:
        other.close_session()
    ok(a2.call("edit_config", {"device": "r1", "config": PL_A}))
    res = ok(a2.call("commit", {"devices": ["r1", "r2"], "confirm_timeout_s": 120}))
    assert PL_A_LINE in lab.running_config("r1") and PL_A_LINE in lab.running_config("r2")
    ok(a2.call("confirm_commit", {"devices": ["r1", "r2"]}))


def test_lock_held_by_another_session(lab, a2):
    other = ncclient_connect(lab.netconf_endpoint("r1"), connect_timeout_s=10, rpc_timeout_s=60)
    try:
        other.lock(target="candidate")
        res = a2.call("lock", {"device": "r1"})
        assert not res.ok and res.error.retriable and "lock-denied" in res.error.message
        assert f"session-id={other.session_id}" in res.error.message
        res = a2.call("edit_config", {"device": "r1", "config": PL_A})
        assert not res.ok and ("in-use" in res.error.message or "lock-denied" in res.error.message)
    finally:
        other.close_session()
    ok(a2.call("lock", {"device": "r1"}))


def test_dropped_session_is_reported_and_its_commit_rolled_back(lab, a2):
    ok(a2.call("lock", {"device": "r1"}))
    ok(a2.call("edit_config", {"device": "r1", "config": PL_A}))
    ok(a2.call("commit", {"devices": ["r1"], "confirm_timeout_s": 300}))
    assert PL_A_LINE in lab.running_config("r1")
    a2.session("r1")._m._session.close()  # the transport drops under the adapter
    assert wait_for(lambda: PL_A_LINE not in lab.running_config("r1"), 10.0)
    res = ok(a2.call("get_config", {"device": "r1"}))
    assert res.data["notes"] and "dropped and was re-opened" in res.data["notes"][0]
    assert "rolled back" in res.data["notes"][0] and "candidate" in res.data["notes"][0]
    res = a2.call("confirm_commit", {"devices": ["r1"]})
    assert not res.ok and "rolled it back" in res.error.message


def test_docs_example_session_runs(make_lab, run_doc_example):
    """docs/protocol.md's A2 example session runs as written and prints what it says."""
    del make_lab  # capability check only
    out = run_doc_example("protocol.md", "a2")
    for expected in ("<name>PL-TENANTS</name>", "e1: candidate locked",
                     "e1: candidate edited (running unchanged until commit)", "e1: candidate is valid",
                     "+ip prefix-list PL-TENANTS seq 30 permit 192.0.2.0/24",
                     "e1: confirmed commit (reverts in 120 s unless confirmed) True",
                     "e1: commit confirmed", "e1: candidate unlocked",
                     "invalid_arguments commit: confirm_timeout_s: must be a whole number of seconds >= 1, got 0",
                     "command_failed e1: edit-config failed: data-missing"):
        assert expected in out, (expected, out[-3000:])
