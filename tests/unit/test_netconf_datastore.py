"""The Device (ani.netconf.datastore) with the real ani-frr YANG codec and an in-memory backend.

The backend is a fake (a DeviceConfig in memory that records read / apply calls and can be told
to refuse); the timer is a manual one fired by the test. Together they check the logic of the
issue's cases 1-8 and the server side of 9-10; tests/integration/test_netconf_cases.py runs the
same cases against the real server and FRR.
"""

from __future__ import annotations

import time
from ipaddress import IPv4Network

import pytest
from lxml import etree

from ani.device.model import DeviceConfig, PrefixList, PrefixListEntry, StaticRoute
from ani.netconf.backend import ApplyError, ApplyReport
from ani.netconf.datastore import Device
from ani.netconf.errors import BASE_NS, RpcError, RpcErrors

NS = "urn:ani:yang:ani-frr"
A, B = 11, 22  # session ids


class FakeBackend:
    name = "r1"

    def __init__(self, cfg: DeviceConfig) -> None:
        self.cfg = cfg
        self.calls: list[str] = []
        self.refuse: str | None = None  # message of the next apply's ApplyError
        self.restored = True

    def read(self) -> DeviceConfig:
        self.calls.append("read")
        return self.cfg.model_copy(deep=True)

    def apply(self, intended: DeviceConfig, deadline: float | None = None) -> ApplyReport:
        self.calls.append("apply")
        if self.refuse is not None:
            msg, self.refuse = self.refuse, None
            raise ApplyError(msg, restored=self.restored)
        changed = intended != self.cfg
        self.cfg = intended.model_copy(deep=True)
        return ApplyReport(changed=changed)

    def state(self) -> dict:
        self.calls.append("state")
        return {"ani-frr:frr-state": {"bgp-neighbor": [
            {"address": "10.0.12.2", "remote-as": 64502, "state": "Established"}]}}


class ManualTimer:
    def __init__(self, seconds: float, callback) -> None:
        self.seconds, self.callback = seconds, callback
        self.started = self.cancelled = False

    def start(self) -> None:
        self.started = True

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        assert self.started and not self.cancelled
        self.callback()


class Timers:
    def __init__(self) -> None:
        self.all: list[ManualTimer] = []

    def __call__(self, seconds: float, callback) -> ManualTimer:
        t = ManualTimer(seconds, callback)
        self.all.append(t)
        return t

    def live(self) -> list[ManualTimer]:
        return [t for t in self.all if t.started and not t.cancelled]


def route(prefix: str, nh: str = "10.0.12.2") -> StaticRoute:
    return StaticRoute(prefix=IPv4Network(prefix), nexthop=nh)


def pl(*seqs: int, name: str = "PL-A") -> dict[str, PrefixList]:
    prefixes = {5: "192.0.2.0/24", 10: "198.51.100.0/24", 15: "203.0.113.0/24"}
    return {name: PrefixList(entries=[
        PrefixListEntry(seq=s, action="permit", prefix=IPv4Network(prefixes[s])) for s in seqs])}


V1 = DeviceConfig(hostname="r1", static_routes=[route("192.0.2.0/24")])


@pytest.fixture
def timers() -> Timers:
    return Timers()


def make(cfg: DeviceConfig, timers: Timers) -> tuple[Device, FakeBackend]:
    backend = FakeBackend(cfg.model_copy(deep=True))
    return Device("r1", backend, "r1", timer=timers), backend


def config(inner: str) -> etree._Element:
    return etree.fromstring(
        f'<config xmlns="{BASE_NS}" xmlns:nc="{BASE_NS}"><frr xmlns="{NS}">{inner}</frr></config>')


def routes_xml(*prefixes: str, op: str = "") -> str:
    attr = f' nc:operation="{op}"' if op else ""
    return "".join(f"<static-route{attr}><prefix>{p}</prefix><next-hop>10.0.12.2</next-hop></static-route>"
                   for p in prefixes)


def as_config(dev: Device, source: str, sid: int = A) -> DeviceConfig:
    from ani.device import yang

    data = dev.get_config(sid, source)
    frr = data.find(f"{{{NS}}}frr")
    return yang.from_xml(frr if frr is not None else etree.Element(f"{{{NS}}}frr"), "r1")


def tags(exc: RpcError | RpcErrors) -> list[str]:
    errs = exc.errors if isinstance(exc, RpcErrors) else [exc]
    return [e.tag for e in errs]


# -- running / candidate -------------------------------------------------------------------


def test_running_is_read_from_the_backend_each_time(timers):
    dev, be = make(V1, timers)
    assert as_config(dev, "running") == V1
    be.cfg = DeviceConfig(hostname="r1", static_routes=[route("198.51.100.0/24")])  # out of band
    assert as_config(dev, "running") == be.cfg
    assert as_config(dev, "candidate") == be.cfg  # unmodified candidate tracks running


def test_candidate_is_shared_between_sessions(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    seen_by_b = as_config(dev, "candidate", sid=B)
    assert [str(r.prefix) for r in seen_by_b.static_routes] == ["192.0.2.0/24", "198.51.100.0/24"]
    assert as_config(dev, "running", sid=B) == V1  # not committed


def test_edit_running_is_operation_not_supported(timers):
    dev, _ = make(V1, timers)
    with pytest.raises(RpcError) as ei:
        dev.edit_config(A, "running", config(routes_xml("198.51.100.0/24")))
    assert ei.value.tag == "operation-not-supported"


def test_discard_changes_makes_candidate_track_running(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.discard_changes(B)
    assert as_config(dev, "candidate") == V1
    dev.lock(B, "candidate")  # no uncommitted changes any more


# -- case 1: follow-up confirmed commit keeps the first rollback point --------------------


def test_case1_followup_confirmed_commit_keeps_original_rollback_point(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))  # V2
    dev.commit(A, confirmed=True, confirm_timeout="30")
    assert len(be.cfg.static_routes) == 2
    dev.edit_config(A, "candidate", config(routes_xml("203.0.113.0/24")))  # V3
    dev.commit(A, confirmed=True, confirm_timeout="30")
    assert len(be.cfg.static_routes) == 3
    assert [t.seconds for t in timers.all] == [pytest.approx(30.0, abs=0.5)] * 2
    assert timers.all[0].cancelled  # the follow-up restarted the timer
    (live,) = timers.live()
    live.fire()
    assert be.cfg == V1  # not V2: the rollback point is before the first confirmed commit
    assert as_config(dev, "running") == V1 and as_config(dev, "candidate") == V1
    with pytest.raises(RpcError) as ei:
        dev.cancel_commit(A)
    assert ei.value.tag == "operation-failed"  # nothing pending any more


def test_confirming_commit_stops_the_timer(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout="30")
    dev.commit(A)
    assert timers.live() == []
    assert len(be.cfg.static_routes) == 2
    timers.all[0].callback()  # a late callback of the cancelled timer does nothing
    assert len(be.cfg.static_routes) == 2


def test_cancel_commit_rolls_back_now(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True)
    dev.cancel_commit(A)
    assert be.cfg == V1 and timers.live() == []


# -- case 2: refused confirmed commit ------------------------------------------------------


def test_case2_refused_confirmed_commit_leaves_nothing_pending(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    be.refuse = "% Unknown command"
    with pytest.raises(RpcError) as ei:
        dev.commit(A, confirmed=True, confirm_timeout="30", persist="p1")
    assert ei.value.tag == "operation-failed" and "Unknown command" in ei.value.message
    assert timers.all == []  # no timer: nothing will happen at the timeout
    with pytest.raises(RpcError) as ei:
        dev.cancel_commit(B, persist_id="p1")
    assert ei.value.tag == "operation-failed"
    assert be.cfg == V1
    cand = as_config(dev, "candidate")
    assert [str(r.prefix) for r in cand.static_routes] == ["192.0.2.0/24", "198.51.100.0/24"]


def test_refused_followup_keeps_the_pending_commit(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout="30")
    dev.edit_config(A, "candidate", config(routes_xml("203.0.113.0/24")))
    be.refuse = "no"
    with pytest.raises(RpcError):
        dev.commit(A, confirmed=True, confirm_timeout="30")
    (live,) = timers.live()
    live.fire()
    assert be.cfg == V1


# -- case 3: timeout with locks held; failed rollback reported -------------------------------


def test_case3_expiry_rolls_back_ignoring_locks_and_releases_them(timers):
    dev, be = make(V1, timers)
    dev.lock(A, "running")
    dev.lock(A, "candidate")
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout="10")
    assert timers.all[0].seconds == pytest.approx(10.0, abs=0.5)
    dev.get(A)
    timers.live()[0].fire()
    assert be.cfg == V1
    dev.lock(B, "running")  # granted: A's locks went with the rollback
    dev.lock(B, "candidate")


def test_case3_failed_rollback_is_an_error_on_the_next_operation(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout="10")
    be.refuse = "vtysh timed out"
    be.restored = False
    timers.live()[0].fire()
    for sid in (A, B):
        with pytest.raises(RpcError) as ei:
            dev.get_config(sid, "running")
        assert ei.value.tag == "rollback-failed" and "vtysh timed out" in ei.value.message
        assert "unknown state" in ei.value.message
        dev.get_config(sid, "running")  # reported once per session


def test_session_end_rolls_back_non_persist_confirmed_commit(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True)
    dev.session_closed(A)
    assert be.cfg == V1 and timers.live() == []


def test_persist_survives_session_end_and_is_confirmed_by_persist_id(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, persist="tok")
    dev.session_closed(A)
    assert len(be.cfg.static_routes) == 2
    with pytest.raises(RpcError) as ei:
        dev.commit(B, persist_id="wrong")
    assert ei.value.tag == "invalid-value"
    dev.commit(B, persist_id="tok")
    assert timers.live() == [] and len(be.cfg.static_routes) == 2


def test_non_persist_confirmed_commit_is_confirmed_only_by_its_session(timers):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True)
    for call in (lambda: dev.commit(B), lambda: dev.cancel_commit(B)):
        with pytest.raises(RpcError) as ei:
            call()
        assert ei.value.tag == "in-use" and ei.value.info == {"session-id": str(A)}
    assert len(timers.live()) == 1


# -- case 4: lock running during a pending confirmed commit -----------------------------------


def test_case4_lock_running_denied_to_others_during_confirmed_commit(timers):
    dev, _ = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout="30")
    with pytest.raises(RpcError) as ei:
        dev.lock(B, "running")
    assert ei.value.tag == "lock-denied" and ei.value.info == {"session-id": str(A)}
    dev.lock(A, "running")


# -- case 5: locked / modified candidate --------------------------------------------------------


def test_case5_commit_and_discard_of_candidate_locked_by_other_fail_fast(timers):
    dev, be = make(V1, timers)
    dev.lock(A, "candidate")
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    be.calls.clear()
    for call in (lambda: dev.commit(B), lambda: dev.discard_changes(B),
                 lambda: dev.edit_config(B, "candidate", config(routes_xml("203.0.113.0/24")))):
        t0 = time.monotonic()
        with pytest.raises(RpcError) as ei:
            call()
        assert time.monotonic() - t0 < 1.0
        assert ei.value.tag == "in-use" and ei.value.info == {"session-id": str(A)}
    assert be.calls == []  # refused before touching the router
    cand = as_config(dev, "candidate", sid=A)
    assert [str(r.prefix) for r in cand.static_routes] == ["192.0.2.0/24", "198.51.100.0/24"]
    dev.commit(A)
    assert len(be.cfg.static_routes) == 2


def test_case5_modified_candidate_cannot_be_locked(timers):
    dev, _ = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    with pytest.raises(RpcError) as ei:
        dev.lock(B, "candidate")
    assert ei.value.tag == "lock-denied" and ei.value.info == {"session-id": str(A)}


def test_lock_is_exclusive_also_for_the_holder_and_unlock_needs_the_holder(timers):
    dev, _ = make(V1, timers)
    dev.lock(A, "running")
    for sid in (A, B):
        with pytest.raises(RpcError) as ei:
            dev.lock(sid, "running")
        assert ei.value.tag == "lock-denied" and ei.value.info == {"session-id": str(A)}
    with pytest.raises(RpcError) as ei:
        dev.unlock(B, "running")
    assert ei.value.tag == "operation-failed"
    dev.unlock(A, "running")
    dev.lock(B, "running")


def test_releasing_the_candidate_lock_discards_changes(timers):
    dev, _ = make(V1, timers)
    dev.lock(A, "candidate")
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.session_closed(A)
    assert as_config(dev, "candidate", sid=B) == V1
    dev.lock(B, "candidate")


# -- cases 6-8 through the Device --------------------------------------------------------------


def test_case6_operation_attribute_namespace(timers):
    dev, be = make(V1, timers)
    with pytest.raises(RpcError) as ei:
        dev.edit_config(A, "candidate", config(
            '<static-route operation="delete"><prefix>192.0.2.0/24</prefix><next-hop>10.0.12.2</next-hop>'
            "</static-route>"))
    assert ei.value.tag == "unknown-attribute"
    assert ei.value.info == {"bad-attribute": "operation", "bad-element": "static-route"}
    assert as_config(dev, "candidate") == V1
    dev.lock(B, "candidate")  # still unmodified
    dev.unlock(B, "candidate")
    dev.edit_config(A, "candidate", config(routes_xml("192.0.2.0/24", op="delete")))
    assert as_config(dev, "candidate").static_routes == []


def test_case7_existence_decided_by_the_datastore(timers):
    cfg = DeviceConfig(hostname="r1", prefix_lists=pl(5))
    dev, be = make(cfg, timers)
    entry = "<prefix-list><name>PL-A</name><entry{op}><seq>{seq}</seq>{rest}</entry></prefix-list>"
    with pytest.raises(RpcError) as ei:
        dev.edit_config(A, "candidate", config(entry.format(op=' nc:operation="delete"', seq=10, rest="")))
    assert ei.value.tag == "data-missing"
    assert ei.value.path == "/frr:frr/frr:prefix-list[frr:name='PL-A']/frr:entry[frr:seq='10']"
    dev.edit_config(A, "candidate", config(entry.format(op=' nc:operation="remove"', seq=10, rest="")))
    with pytest.raises(RpcError) as ei:
        dev.edit_config(A, "candidate", config(entry.format(
            op=' nc:operation="create"', seq=5, rest="<action>deny</action><prefix>any</prefix>")))
    assert ei.value.tag == "data-exists"
    with pytest.raises(RpcError) as ei:
        dev.edit_config(A, "candidate", config(
            "<prefix-list><name>PL-B</name><entry nc:operation=\"replace\"><seq>5</seq>"
            "<action>permit</action><prefix>any</prefix></entry></prefix-list>"), default_operation="none")
    assert ei.value.tag == "data-missing"
    assert as_config(dev, "candidate") == cfg
    dev.lock(B, "candidate")  # none of that modified the candidate
    assert "apply" not in be.calls


def test_case8_replace_prefix_list_then_commit(timers):
    dev, be = make(DeviceConfig(hostname="r1", prefix_lists=pl(5, 10, 15)), timers)
    dev.edit_config(A, "candidate", config(
        '<prefix-list nc:operation="replace"><name>PL-A</name><entry><seq>5</seq><action>permit</action>'
        "<prefix>192.0.2.0/24</prefix></entry></prefix-list>"))
    dev.commit(A)
    assert be.cfg.prefix_lists == pl(5)
    assert as_config(dev, "running").prefix_lists == pl(5)


# -- case 9 (server side): a warning and an error in one reply -----------------------------


RM_MISSING_PL = ("<route-map><name>RM-X</name><entry><seq>10</seq><action>permit</action>"
                 "<match-prefix-list>PL-NOPE</match-prefix-list></entry></route-map>")


def test_case9_continue_on_error_warning_then_error(timers):
    dev, _ = make(DeviceConfig(hostname="r1", prefix_lists=pl(5)), timers)
    req = config(RM_MISSING_PL + "<prefix-list><name>PL-A</name><entry nc:operation=\"delete\">"
                 "<seq>10</seq></entry></prefix-list>")
    with pytest.raises(RpcErrors) as ei:
        dev.edit_config(A, "candidate", req, error_option="continue-on-error")
    errs = ei.value.errors
    assert [e.severity for e in errs] == ["warning", "error"]
    assert errs[1].tag == "data-missing"
    assert "PL-NOPE" in errs[0].message
    assert "RM-X" in as_config(dev, "candidate").route_maps  # the part that worked was set


def test_warning_alone_is_returned(timers):
    dev, _ = make(V1, timers)
    warnings = dev.edit_config(A, "candidate", config(RM_MISSING_PL))
    assert [w.severity for w in warnings] == ["warning"]
    assert dev.validate(A, "candidate")[0].severity == "warning"
    assert [w.severity for w in dev.commit(A)] == ["warning"]


def test_test_only_sets_nothing_and_validation_error_blocks_test_then_set(timers):
    dev, _ = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")), test_option="test-only")
    assert as_config(dev, "candidate") == V1
    bad = config("<prefix-list><name>PL-Z</name><entry><seq>5</seq><action>permit</action>"
                 "<prefix>any</prefix><ge>8</ge></entry></prefix-list>")
    with pytest.raises((RpcError, RpcErrors)):
        dev.edit_config(A, "candidate", bad)
    assert as_config(dev, "candidate") == V1
    with pytest.raises((RpcError, RpcErrors)):
        dev.validate(A, bad)


# -- case 10 (server side): confirm-timeout ----------------------------------------------------


@pytest.mark.parametrize("value,seconds", [("30", 30.0), (None, 600.0), ("1", 1.0), (30, 30.0)])
def test_case10_confirm_timeout_values(timers, value, seconds):
    dev, _ = make(V1, timers)
    dev.commit(A, confirmed=True, confirm_timeout=value)
    assert [t.seconds for t in timers.live()] == [pytest.approx(seconds, abs=0.5)]


def test_timeout_counts_from_the_start_of_the_commit(timers):
    """A slow apply does not lengthen the confirm window: the timer gets what is left."""
    dev, be = make(V1, timers)
    slow = be.apply

    def apply(intended, deadline=None):
        time.sleep(0.3)
        return slow(intended)

    be.apply = apply
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout="1")
    assert 0.0 < timers.live()[0].seconds <= 0.71  # 1 s minus the 0.3 s apply (at least)


@pytest.mark.parametrize("value", ["0", "-5", "1.5", "abc", "", "30s", "4294967296"])
def test_case10_bad_confirm_timeout_is_invalid_value(timers, value):
    dev, be = make(V1, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    with pytest.raises(RpcError) as ei:
        dev.commit(A, confirmed=True, confirm_timeout=value)
    assert ei.value.tag == "invalid-value" and ei.value.info == {"bad-element": "confirm-timeout"}
    assert timers.all == [] and "apply" not in be.calls


# -- get / filters -------------------------------------------------------------------------------


def test_get_has_config_and_state_and_filters(timers):
    dev, be = make(V1, timers)
    data = dev.get(A)
    assert data.find(f"{{{NS}}}frr") is not None
    assert data.find(f"{{{NS}}}frr-state/{{{NS}}}bgp-neighbor/{{{NS}}}state").text == "Established"
    be.calls.clear()
    f = etree.fromstring(f'<filter xmlns="{BASE_NS}" type="subtree"><frr-state xmlns="{NS}"/></filter>')
    data = dev.get(A, f)
    assert data.find(f"{{{NS}}}frr") is None and be.calls == ["state"]


def test_get_config_subtree_filter(timers):
    dev, _ = make(DeviceConfig(hostname="r1", prefix_lists=pl(5, 10), static_routes=[route("192.0.2.0/24")]),
                  timers)
    f = etree.fromstring(
        f'<filter xmlns="{BASE_NS}"><frr xmlns="{NS}"><prefix-list><name>PL-A</name><entry><seq>10</seq>'
        "</entry></prefix-list></frr></filter>")
    data = dev.get_config(A, "running", f)
    entries = data.findall(f".//{{{NS}}}entry")
    assert [e.findtext(f"{{{NS}}}seq") for e in entries] == ["10"]
    assert data.find(f".//{{{NS}}}static-route") is None
    xf = etree.fromstring(f'<filter xmlns="{BASE_NS}" type="xpath" select="/frr"/>')
    with pytest.raises(RpcError) as ei:
        dev.get_config(A, "running", xf)
    assert ei.value.tag == "operation-not-supported"


def test_the_candidate_an_edit_validated_is_not_validated_again(timers, monkeypatch):
    dev, backend = make(V1, timers)
    seen: list[int] = []
    real = dev.codec.validate_xml
    monkeypatch.setattr(dev.codec, "validate_xml", lambda elem: seen.append(1) or real(elem))
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    assert dev.validate(A, "candidate") == []
    dev.commit(A)
    assert len(seen) == 1  # the edit's (test-then-set); validate and commit reuse it
    assert [str(r.prefix) for r in backend.cfg.static_routes] == ["192.0.2.0/24", "198.51.100.0/24"]
    # a new edit is a new candidate: validated again, and an invalid one is still refused
    dev.edit_config(A, "candidate", config(routes_xml("203.0.113.0/24")))
    assert len(seen) == 2
    dev.validate(A, "running")
    assert len(seen) == 3  # running: its own tree, read now
    bad = config('<static-route><prefix>999.9.9.0/24</prefix><next-hop>10.0.12.2</next-hop></static-route>')
    with pytest.raises((RpcError, RpcErrors)):
        dev.edit_config(A, "candidate", bad)
    assert dev.validate(A, "candidate") == [] and len(seen) == 5
