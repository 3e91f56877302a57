"""The ten cases of issue 3 (section 4) against the lab's real NETCONF server and real FRR.

Topology tests/data/nc_cases.yaml: five identical, independent routers (bgpd; static route V1
``192.0.2.0/24 blackhole``; PL-A seq 5; PL-R seq 5/10/15; PL-C6; RM-BASE matching PL-A). The
cases with real confirm timers run concurrently in background threads, each on its own router
(r1: case 1, 30 s; r2: case 3, 2 x 10 s; r3: case 10, 30 s through the A2 adapter; r4: case 10
omitted timeout), started when the module's lab is up; the other cases run one after another on
r5 meanwhile (including a rollback that fails for real: case 3's reporting), and the timed
tests at the end collect the background results. Every check of the router reads FRR out of
band (``lab.running_config``), not only through NETCONF.

Clients: ncclient 0.7.1 with ``RaiseMode.NONE`` (replies inspected raw), and for cases 9 and 10
the A2 adapter (``ani.adapters.a2``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

pytestmark = pytest.mark.integration

TOPO = Path(__file__).parent.parent / "data" / "nc_cases.yaml"
NS = "urn:ani:yang:ani-frr"
NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
V1 = ["ip route 192.0.2.0/24 blackhole"]
V2 = V1 + ["ip route 198.51.100.0/24 blackhole"]
V3 = V2 + ["ip route 203.0.113.0/24 blackhole"]


# -- helpers ---------------------------------------------------------------------------------


def connect(lab: Any, router: str) -> Any:
    from ani.netconf.client import ncclient_connect

    return ncclient_connect(lab.netconf_endpoint(router), connect_timeout_s=10, rpc_timeout_s=60)


def config(inner: str) -> str:
    return f'<config xmlns="{NC}" xmlns:nc="{NC}"><frr xmlns="{NS}">{inner}</frr></config>'


def route(prefix: str, op: str = "") -> str:
    attr = f' nc:operation="{op}"' if op else ""
    return f"<static-route{attr}><prefix>{prefix}</prefix><next-hop>blackhole</next-hop></static-route>"


def errors(reply: Any) -> list[dict[str, Any]]:
    """Every rpc-error of a reply: tag, severity, type, path, message, info {name: text}."""
    root = etree.fromstring(reply.xml.encode() if isinstance(reply.xml, str) else reply.xml)
    out = []
    for e in root.iter(f"{{{NC}}}rpc-error"):
        info = e.find(f"{{{NC}}}error-info")
        out.append({
            "tag": e.findtext(f"{{{NC}}}error-tag"), "severity": e.findtext(f"{{{NC}}}error-severity"),
            "type": e.findtext(f"{{{NC}}}error-type"), "path": e.findtext(f"{{{NC}}}error-path"),
            "message": e.findtext(f"{{{NC}}}error-message"),
            "info": {} if info is None else {etree.QName(c).localname: c.text for c in info},
        })
    return out


def ok(reply: Any) -> Any:
    assert reply.ok and not errors(reply), reply.xml
    return reply


def only_error(reply: Any) -> dict[str, Any]:
    errs = errors(reply)
    assert len(errs) == 1 and errs[0]["severity"] == "error", reply.xml
    return errs[0]


def routes(lab: Any, router: str) -> list[str]:
    return [ln.strip() for ln in lab.running_config(router).splitlines() if ln.startswith("ip route ")]


def lines(lab: Any, router: str, prefix: str) -> list[str]:
    return [ln.strip() for ln in lab.running_config(router).splitlines() if ln.startswith(prefix)]


def nc_routes(m: Any, source: str = "running") -> list[str]:
    """The static routes of a datastore as FRR lines (blackhole next hops only)."""
    f = f'<frr xmlns="{NS}"><static-route/></frr>'
    data = ok(m.get_config(source=source, filter=("subtree", f))).data_ele
    return [f"ip route {r.findtext(f'{{{NS}}}prefix')} {r.findtext(f'{{{NS}}}next-hop')}"
            for r in data.iter(f"{{{NS}}}static-route")]


def nc_entries(m: Any, source: str, name: str) -> list[str]:
    """The seqs of a prefix-list in a datastore."""
    f = f'<frr xmlns="{NS}"><prefix-list><name>{name}</name></prefix-list></frr>'
    data = ok(m.get_config(source=source, filter=("subtree", f))).data_ele
    return [e.findtext(f"{{{NS}}}seq") for e in data.iter(f"{{{NS}}}entry")]


def wait_revert(lab: Any, router: str, want: list[str], bound_s: float) -> tuple[float, float] | None:
    """Poll FRR until its static routes are ``want``: (time of the last poll that did not see
    it, time the poll that saw it ended), monotonic; None if not within ``bound_s``."""
    end = time.monotonic() + bound_s
    last = time.monotonic()
    while time.monotonic() < end:
        start = time.monotonic()
        if routes(lab, router) == want:
            return last, time.monotonic()
        last = start
        time.sleep(0.1)
    return None


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    t0 = time.monotonic()
    r = fn()
    return t0, time.monotonic(), r


# -- lab and background cases ------------------------------------------------------------------


LAB_TOPOLOGY, LAB_PREFIX = TOPO, "h3nc"  # conftest's module_lab (with its NETCONF server)


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture(scope="module")
def background(lab):
    """The timed cases, started at once in threads (see the module docstring)."""
    pool = ThreadPoolExecutor(max_workers=4)
    futures = {
        "case1": pool.submit(_case1, lab),
        "case3": pool.submit(_case3, lab),
        "case10": pool.submit(_case10, lab),
        "case10-default": pool.submit(_case10_default, lab),
    }
    yield futures
    pool.shutdown(wait=True)


@pytest.fixture(autouse=True)
def _start_background(background):
    """Every test depends on the background cases, so they start with the first test."""


def _case1(lab: Any) -> dict[str, Any]:
    """V1 -> confirmed commit of V2 (30 s) -> 5 s -> confirmed commit of V3 (30 s) -> nothing."""
    obs: dict[str, Any] = {"before": routes(lab, "r1")}
    m = connect(lab, "r1")
    try:
        ok(m.edit_config(target="candidate", config=config(route("198.51.100.0/24"))))
        obs["t1"] = timed(lambda: ok(m.commit(confirmed=True, timeout="30")))
        obs["after_first"] = routes(lab, "r1")
        time.sleep(5)
        ok(m.edit_config(target="candidate", config=config(route("203.0.113.0/24"))))
        obs["t2"] = timed(lambda: ok(m.commit(confirmed=True, timeout="30")))
        obs["after_second"] = routes(lab, "r1")
        # the first commit's timer would have fired by now had it not been restarted
        time.sleep(max(0.0, obs["t1"][1] + 31.0 - time.monotonic()))
        obs["at_first_expiry"] = routes(lab, "r1")
        obs["revert"] = wait_revert(lab, "r1", V1, bound_s=obs["t2"][0] + 40 - time.monotonic())
        obs["nc_running"] = nc_routes(m, "running")
        obs["nc_candidate"] = nc_routes(m, "candidate")
        obs["cancel_after"] = errors(m.cancel_commit())
    finally:
        m.close_session()
    return obs


def _case3(lab: Any) -> dict[str, Any]:
    """(a) confirmed commit (10 s) then only a <get>; (b) the same holding both locks."""
    obs: dict[str, Any] = {"before": routes(lab, "r2")}
    a = connect(lab, "r2")
    b = connect(lab, "r2")
    try:
        ok(a.edit_config(target="candidate", config=config(route("198.51.100.0/24"))))
        obs["a_t"] = timed(lambda: ok(a.commit(confirmed=True, timeout="10")))
        obs["a_after"] = routes(lab, "r2")
        ok(a.get(filter=("subtree", f'<frr-state xmlns="{NS}"/>')))
        obs["a_revert"] = wait_revert(lab, "r2", V1, bound_s=20)
        obs["a_nc_running"] = nc_routes(b, "running")

        ok(a.lock(target="running"))
        ok(a.lock(target="candidate"))
        ok(a.edit_config(target="candidate", config=config(route("203.0.113.0/24"))))
        obs["b_t"] = timed(lambda: ok(a.commit(confirmed=True, timeout="10")))
        obs["b_after"] = routes(lab, "r2")
        obs["b_revert"] = wait_revert(lab, "r2", V1, bound_s=20)
        obs["b_nc_running"] = nc_routes(b, "running")
        obs["b_lock_running"] = errors(b.lock(target="running"))
        obs["b_lock_candidate"] = errors(b.lock(target="candidate"))
        b.unlock(target="running")
        b.unlock(target="candidate")
    finally:
        a.close_session()
        b.close_session()
    return obs


def _case10(lab: Any) -> dict[str, Any]:
    """Through the A2 adapter: an int timeout of 30 is sent as "30" and reverts after 30 s;
    ncclient alone raises TypeError for the int; 0, -1, 1.5 are invalid-value at the server."""
    from ani.adapters.a2 import A2Adapter

    obs: dict[str, Any] = {"before": routes(lab, "r3")}
    m = connect(lab, "r3")
    try:
        ok(m.edit_config(target="candidate", config=config(route("198.51.100.0/24"))))
        try:
            m.commit(confirmed=True, timeout=30)
            obs["ncclient_int"] = None
        except TypeError as exc:
            obs["ncclient_int"] = exc
        obs["bad"] = {v: errors(m.commit(confirmed=True, timeout=v)) for v in ("0", "-1", "1.5")}
        obs["after_bad"] = routes(lab, "r3")
        ok(m.discard_changes())
    finally:
        m.close_session()
    a2 = A2Adapter(lab)
    a2.open()
    try:
        res = a2.call("edit_config", {"device": "r3", "config": f'<frr xmlns="{NS}">{route("198.51.100.0/24")}</frr>'})
        assert res.ok, res.text
        obs["t"] = timed(lambda: a2.call("commit", {"devices": ["r3"], "confirm_timeout_s": 30}))
        obs["after"] = routes(lab, "r3")
        obs["revert"] = wait_revert(lab, "r3", V1, bound_s=45)
    finally:
        a2.close()
    return obs


def _case10_default(lab: Any) -> dict[str, Any]:
    """confirm-timeout omitted: still pending (not reverted) well after 30 s; then cancelled."""
    obs: dict[str, Any] = {"before": routes(lab, "r4")}
    m = connect(lab, "r4")
    try:
        ok(m.edit_config(target="candidate", config=config(route("198.51.100.0/24"))))
        obs["t"] = timed(lambda: ok(m.commit(confirmed=True)))
        time.sleep(max(0.0, obs["t"][1] + 35.0 - time.monotonic()))
        obs["at_35s"] = routes(lab, "r4")
        obs["cancel"] = errors(m.cancel_commit())
        obs["after_cancel"] = routes(lab, "r4")
    finally:
        m.close_session()
    return obs


# -- cases without timers, on r5 (while the timed ones run) ----------------------------------


def test_case2_refused_confirmed_commit(lab):
    """bgpd refuses a neighbor with the router's own address ("Can not configure the local
    system as neighbor"): the YANG model accepts it, FRR does not."""
    before = lab.running_config("r5")
    m = connect(lab, "r5")
    try:
        own = '<bgp><neighbor><address>10.255.0.5</address><remote-as>64999</remote-as></neighbor></bgp>'
        ok(m.edit_config(target="candidate", config=config(own)))
        ok(m.validate(source="candidate"))
        t0 = time.monotonic()
        reply = m.commit(confirmed=True, timeout="5", persist="case2")
        err = only_error(reply)
        assert err["tag"] == "operation-failed" and "10.255.0.5" in reply.xml, reply.xml
        assert lab.running_config("r5") == before
        err = only_error(m.cancel_commit(persist_id="case2"))  # nothing pending
        assert err["tag"] == "operation-failed"
        time.sleep(max(0.0, t0 + 6.5 - time.monotonic()))  # past the would-be timeout
        assert lab.running_config("r5") == before
        f = f'<frr xmlns="{NS}"><bgp><neighbor><address>10.255.0.5</address></neighbor></bgp></frr>'
        cand = ok(m.get_config(source="candidate", filter=("subtree", f))).data_ele
        assert cand.findtext(f".//{{{NS}}}remote-as") == "64999"  # the candidate keeps the edit
        run = ok(m.get_config(source="running", filter=("subtree", f))).data_ele
        assert run.find(f".//{{{NS}}}neighbor") is None
        ok(m.discard_changes())
    finally:
        m.close_session()


def test_case4_lock_running_during_confirmed_commit(lab):
    a, b = connect(lab, "r5"), connect(lab, "r5")
    try:
        ok(a.edit_config(target="candidate", config=config(route("198.51.100.0/24"))))
        ok(a.commit(confirmed=True, timeout="120"))
        err = only_error(b.lock(target="running"))
        assert err["tag"] == "lock-denied" and err["info"]["session-id"] == str(a.session_id)
        ok(a.lock(target="running"))
        ok(a.unlock(target="running"))
        ok(a.cancel_commit())
        assert routes(lab, "r5") == V1
    finally:
        a.close_session()
        b.close_session()


def test_case5_locked_candidate_and_shared_candidate(lab):
    before = lab.running_config("r5")
    a, b = connect(lab, "r5"), connect(lab, "r5")
    try:
        ok(a.lock(target="candidate"))
        ok(a.edit_config(target="candidate", config=config(route("198.51.100.0/24"))))
        for call in (b.commit, b.discard_changes):
            t0 = time.monotonic()
            err = only_error(call())
            assert time.monotonic() - t0 < 1.0
            assert err["tag"] in ("in-use", "lock-denied") and err["info"]["session-id"] == str(a.session_id)
        assert nc_routes(a, "candidate") == V2  # A's edits intact
        assert nc_routes(b, "candidate") == V2  # and visible to B: the candidate is shared
        assert lab.running_config("r5") == before
        ok(a.unlock(target="candidate"))  # releasing the lock discards the changes
        assert nc_routes(b, "candidate") == V1

        ok(a.edit_config(target="candidate", config=config(route("198.51.100.0/24"))))  # no lock
        err = only_error(b.lock(target="candidate"))
        assert err["tag"] == "lock-denied" and err["info"]["session-id"] == str(a.session_id)
        ok(a.discard_changes())
        ok(b.lock(target="candidate"))
        ok(b.unlock(target="candidate"))
    finally:
        a.close_session()
        b.close_session()


def test_case6_operation_attribute_namespace(lab):
    payload = '<prefix-list {attr}><name>PL-C6</name></prefix-list>'
    m = connect(lab, "r5")
    try:
        err = only_error(m.edit_config(target="candidate", config=config(payload.format(attr='operation="delete"'))))
        assert err["tag"] == "unknown-attribute"
        assert err["info"] == {"bad-attribute": "operation", "bad-element": "prefix-list"}
        assert nc_entries(m, "candidate", "PL-C6") == ["5"]
        ok(m.lock(target="candidate"))  # the candidate was not modified
        ok(m.edit_config(target="candidate", config=config(payload.format(attr='nc:operation="delete"'))))
        assert nc_entries(m, "candidate", "PL-C6") == []
        ok(m.commit())
        ok(m.unlock(target="candidate"))
        assert lines(lab, "r5", "ip prefix-list PL-C6") == []
        assert nc_entries(m, "running", "PL-C6") == []
    finally:
        m.close_session()


def test_case7_existence_from_the_datastore(lab):
    before = lab.running_config("r5")
    entry = '<prefix-list><name>{name}</name><entry nc:operation="{op}"><seq>{seq}</seq>{rest}</entry></prefix-list>'
    m, other = connect(lab, "r5"), connect(lab, "r5")
    try:
        err = only_error(m.edit_config(target="candidate", config=config(
            entry.format(name="PL-A", op="delete", seq=10, rest=""))))
        assert err["tag"] == "data-missing"
        assert err["path"] == "/frr:frr/frr:prefix-list[frr:name='PL-A']/frr:entry[frr:seq='10']"
        ok(m.edit_config(target="candidate", config=config(entry.format(name="PL-A", op="remove", seq=10, rest=""))))
        err = only_error(m.edit_config(target="candidate", config=config(entry.format(
            name="PL-A", op="create", seq=5, rest="<action>deny</action><prefix>any</prefix>"))))
        assert err["tag"] == "data-exists"
        err = only_error(m.edit_config(target="candidate", default_operation="none", config=config(entry.format(
            name="PL-NEW", op="replace", seq=5, rest="<action>permit</action><prefix>any</prefix>"))))
        assert err["tag"] == "data-missing"
        assert nc_entries(m, "candidate", "PL-A") == ["5"] and nc_entries(m, "candidate", "PL-NEW") == []
        ok(other.lock(target="candidate"))  # nothing above modified the candidate
        ok(other.unlock(target="candidate"))
        assert lab.running_config("r5") == before
    finally:
        m.close_session()
        other.close_session()


def test_case8_replace_prefix_list(lab):
    m = connect(lab, "r5")
    try:
        assert nc_entries(m, "running", "PL-R") == ["5", "10", "15"]
        ok(m.edit_config(target="candidate", config=config(
            '<prefix-list nc:operation="replace"><name>PL-R</name><entry><seq>5</seq><action>permit</action>'
            "<prefix>192.0.2.0/24</prefix></entry></prefix-list>")))
        ok(m.commit())
        assert nc_entries(m, "running", "PL-R") == ["5"]
        assert lines(lab, "r5", "ip prefix-list PL-R") == ["ip prefix-list PL-R seq 5 permit 192.0.2.0/24"]
    finally:
        m.close_session()


def test_case9_warning_then_error(lab):
    from ncclient.operations import RaiseMode

    from ani.adapters.a2 import A2Adapter

    inner = ("<route-map><name>RM-X</name><entry><seq>10</seq><action>permit</action>"
             "<match-prefix-list>PL-NOPE</match-prefix-list></entry></route-map>"
             '<prefix-list><name>PL-A</name><entry nc:operation="delete"><seq>99</seq></entry></prefix-list>')
    m = connect(lab, "r5")
    try:
        m.raise_mode = RaiseMode.ERRORS  # "raise on errors, not on warnings"
        reply = m.edit_config(target="candidate", config=config(inner), error_option="continue-on-error")
        errs = errors(reply)
        assert [(e["severity"], e["tag"]) for e in errs][1:] == [("error", "data-missing")]
        assert errs[0]["severity"] == "warning" and "PL-NOPE" in errs[0]["message"]
        # ncclient 0.7.1 looked only at the first rpc-error (a warning) and did not raise
        assert reply.error.severity == "warning" and not reply.ok
        ok(m.discard_changes())
    finally:
        m.close_session()
    a2 = A2Adapter(lab)
    a2.open()
    try:
        res = a2.call("edit_config", {"device": "r5", "config": f'<frr xmlns="{NS}" xmlns:nc="{NC}">{inner}</frr>',
                                      "error_option": "continue-on-error"})
        assert not res.ok
        assert [e["tag"] for e in res.data["errors"]] == ["data-missing"]
        assert "PL-NOPE" in res.data["warnings"][0]["message"]
        assert a2.call("discard_changes", {"device": "r5"}).ok
    finally:
        a2.close()


def test_case3_failed_rollback_is_reported_on_the_next_operation(lab):
    """A concurrent writer adds a line the device model cannot express during the confirm
    window: the rollback refuses to delete what it cannot model, fails, and every session's
    next operation says so (once), rather than the failure only reaching a log."""
    a, b, watcher = connect(lab, "r5"), connect(lab, "r5"), connect(lab, "r5")
    extra = "bgp community-list standard CL-H3 seq 5 permit 64500:1"
    try:
        ok(a.edit_config(target="candidate", config=config(route("198.51.100.0/24"))))
        ok(a.commit(confirmed=True, timeout="8"))
        committed = time.monotonic()
        # the line must land inside the confirm window; with 3 s, on a loaded machine (three test
        # workers), the rollback once ran first, succeeded, and nothing was reported
        res = lab.vtysh("r5", ["configure terminal", extra])
        assert res.rc == 0, res.stdout + res.stderr
        assert time.monotonic() - committed < 7, "the line landed after the confirm window: no premise"
        end = time.monotonic() + 25
        while True:  # the watcher sees the failure once, then its calls succeed again
            errs = errors(watcher.get_config(source="running", filter=("subtree", f'<frr xmlns="{NS}"><bgp/></frr>')))
            if errs or time.monotonic() > end:
                break
            time.sleep(0.2)
        assert [e["tag"] for e in errs] == ["rollback-failed"], errs
        assert "unknown state" not in errs[0]["message"] and "still holds" in errs[0]["message"]
        for m in (a, b):
            err = only_error(m.get_config(source="running"))
            assert err["tag"] == "rollback-failed" and "CL-H3" in err["message"], err
            ok(m.get_config(source="running"))  # reported once per session
        assert routes(lab, "r5") == V2  # the backend restored the committed configuration
        assert errors(a.cancel_commit()) and routes(lab, "r5") == V2  # nothing pending any more
    finally:
        lab.vtysh("r5", ["configure terminal", f"no {extra}", "no ip route 198.51.100.0/24 blackhole"])
        for m in (a, b, watcher):
            m.close_session()
    assert routes(lab, "r5") == V1


# -- the timed cases: results of the background threads ------------------------------------------


def _check_window(commit: tuple, revert: tuple[float, float] | None, timeout_s: float, slack_s: float) -> None:
    """The revert of a confirmed commit sent at ``commit[0]`` and answered at ``commit[1]``
    was not visible before ``timeout_s`` after the send (minus the poll step) and was complete
    within ``slack_s`` after ``timeout_s`` from the reply. The server counts the timeout from
    the start of the commit, so that the rollback's own apply time fits in the slack."""
    assert revert is not None, "not reverted"
    sent, replied = commit[0], commit[1]
    last_not, seen = revert
    assert last_not >= sent + timeout_s - 0.5, f"reverted early: {last_not - sent:.2f} s after the send"
    assert seen <= replied + timeout_s + slack_s, f"reverted late: {seen - replied:.2f} s after the reply"


def test_case1_followup_confirmed_commit_keeps_the_first_rollback_point(background):
    o = background["case1"].result(timeout=120)
    assert o["before"] == V1 and o["after_first"] == V2 and o["after_second"] == V3
    assert o["at_first_expiry"] == V3  # the follow-up restarted the timer
    assert o["revert"] is not None, "not reverted"
    _check_window(o["t2"], o["revert"], 30.0, slack_s=2.0)
    assert o["nc_running"] == V1 and o["nc_candidate"] == V1  # V1, not V2
    assert [e["tag"] for e in o["cancel_after"]] == ["operation-failed"]  # nothing pending


def test_case3_timeout_10s_rolls_back_and_frees_the_locks(background):
    o = background["case3"].result(timeout=120)
    assert o["before"] == V1 and o["a_after"] == V2 and o["b_after"] == ["ip route 192.0.2.0/24 blackhole",
                                                                          "ip route 203.0.113.0/24 blackhole"]
    for key in ("a", "b"):
        assert o[f"{key}_revert"] is not None, f"{key}: not reverted"
        # 2 s, as the 30 s cases: with four workers on two cores the revert of one commit was
        # complete 1.04 s after its timeout (the rollback's frr-reload under load); early stays strict
        _check_window(o[f"{key}_t"], o[f"{key}_revert"], 10.0, slack_s=2.0)
        assert o[f"{key}_nc_running"] == V1
    assert o["b_lock_running"] == [] and o["b_lock_candidate"] == []  # granted to another session


def test_case10_timeout_values(background):
    o = background["case10"].result(timeout=120)
    assert isinstance(o["ncclient_int"], TypeError)
    for value, errs in o["bad"].items():
        assert [(e["tag"], e["info"].get("bad-element")) for e in errs] == [("invalid-value", "confirm-timeout")], value
    assert o["after_bad"] == V1
    sent, replied, res = o["t"]
    assert res.ok, res.text
    assert o["after"] == V2
    assert o["revert"] is not None, "not reverted"
    _check_window(o["t"], o["revert"], 30.0, slack_s=2.0)


def test_case10_omitted_timeout_is_not_30s(background):
    o = background["case10-default"].result(timeout=120)
    assert o["before"] == V1 and o["at_35s"] == V2  # default 600 s: still pending after 35 s
    assert o["cancel"] == [] and o["after_cancel"] == V1
