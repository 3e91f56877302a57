"""Issue 11, section 3, against the lab's real NETCONF server (ncclient over SSH) and real FRR:
pending confirmed commits survive the server stopping (SIGTERM) and crashing (SIGKILL), A1
refuses to write while a NETCONF session locks running, a commit over a running changed out of
band is refused, and the three error-options of edit-config. Every check of a router reads its
real running configuration out of band (``lab.running_config``).

One lab of tests/data/nc_cases.yaml (five independent routers, each with the static route
192.0.2.0/24 blackhole) for the module; every test leaves the routers as it found them.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from ncclient import manager
from ncclient.operations import RPCError

from ani.lab import netconf as lab_netconf
from ani.lab.state import read_state

pytestmark = pytest.mark.integration

NC = "urn:ietf:params:xml:ns:netconf:base:1.0"
NS = "urn:ani:yang:ani-frr"
BASE = ["ip route 192.0.2.0/24 blackhole"]

LAB_TOPOLOGY, LAB_PREFIX = Path(__file__).parent.parent / "data" / "nc_cases.yaml", "h11d"  # conftest's module_lab


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture(autouse=True)
def _r5_back(request):  # type: ignore[no-untyped-def]
    """Whatever a test did to r5 (the router of the sequential tests), the next one finds BASE,
    so that one failure does not cascade."""
    yield
    if "lab" in request.fixturenames:
        lab = request.getfixturevalue("lab")
        if routes(lab, "r5") != BASE:
            restore(lab, "r5")


def connect(lab: Any, router: str) -> manager.Manager:
    ep = lab.netconf_endpoint(router)
    return manager.connect(host=ep.host, port=ep.port, username=ep.username, password=ep.password,
                           hostkey_verify=False, allow_agent=False, look_for_keys=False, timeout=60)


def config(inner: str) -> str:
    return f'<config xmlns="{NC}" xmlns:nc="{NC}"><frr xmlns="{NS}">{inner}</frr></config>'


def route(prefix: str, op: str = "") -> str:
    attr = f' nc:operation="{op}"' if op else ""
    return f"<static-route{attr}><prefix>{prefix}</prefix><next-hop>blackhole</next-hop></static-route>"


def routes(lab: Any, router: str) -> list[str]:
    return [ln.strip() for ln in lab.running_config(router).splitlines() if ln.startswith("ip route ")]


def commit_route(lab: Any, router: str, prefix: str, **kw: Any) -> manager.Manager:
    """A session that made a confirmed commit of ``prefix`` on ``router`` (left open)."""
    m = connect(lab, router)
    m.edit_config(target="candidate", config=config(route(prefix)))
    m.commit(confirmed=True, **kw)
    assert f"ip route {prefix} blackhole" in routes(lab, router)
    return m


def restore(lab: Any, router: str) -> None:
    """Put ``router``'s static routes back to BASE (out of band, through the device layer)."""
    from ani.device.apply import apply, read

    cfg = read(lab, router)
    apply(lab, router, cfg.model_copy(update={"static_routes": [r for r in cfg.static_routes
                                                                if str(r.prefix) == "192.0.2.0/24"]}))
    assert routes(lab, router) == BASE


def wait_until(pred: Any, bound_s: float) -> float | None:
    """Poll ``pred`` every 0.2 s; the monotonic time it first held, None after ``bound_s``."""
    end = time.monotonic() + bound_s
    while time.monotonic() < end:
        if pred():
            return time.monotonic()
        time.sleep(0.2)
    return None


# -- 1. durable confirmed commit ----------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_pending_confirmed_commits_across_a_server_stop(lab, sig):
    """r1: persist, confirmed after the restart from a new session; r2: no persist (its session
    dies with the server): rolled back by the stopping server (SIGTERM) or by the next one
    (SIGKILL); r3: persist with a short timeout: still pending after the restart, rolled back
    at its deadline; r4: persist, cancelled after the restart."""
    tag = signal.Signals(sig).name.lower()
    for r in ("r1", "r2", "r3", "r4"):
        assert routes(lab, r) == BASE
    sessions = [
        commit_route(lab, "r1", "198.51.100.0/24", timeout="300", persist=f"keep-{tag}"),
        commit_route(lab, "r2", "198.51.100.0/24", timeout="300"),
    ]
    t3 = time.monotonic()
    sessions.append(commit_route(lab, "r3", "203.0.113.0/24", timeout="30", persist=f"short-{tag}"))
    sessions.append(commit_route(lab, "r4", "198.51.100.0/24", timeout="300", persist=f"drop-{tag}"))
    journal = lab.dir / lab_netconf.JOURNAL_DIR
    assert {p.name for p in journal.glob("*.commit.json")} >= {f"r{i}.commit.json" for i in (1, 2, 3, 4)}

    st = read_state(lab.id)
    assert lab_netconf.stop_server(lab.id, lab.dir, st.netconf_pid, st.netconf_start, sig=sig)
    assert not lab_netconf.server_pids(lab.id, lab.dir, st.netconf_pid, st.netconf_start)
    # no server runs now: what it did before it died is all there is
    if sig == signal.SIGTERM:
        assert routes(lab, "r2") == BASE  # rolled back before the server exited (RFC 6241 §8.4.1)
        assert not (journal / "r2.commit.json").exists()
    else:
        assert "ip route 198.51.100.0/24 blackhole" in routes(lab, "r2")  # a crash rolls back nothing
        assert (journal / "r2.commit.json").exists()
    for r in ("r1", "r3", "r4"):
        assert (journal / f"{r}.commit.json").exists() and len(routes(lab, r)) == 2

    old_ports = {r: lab.netconf_endpoint(r).port for r in lab.routers}
    ports = lab.restart_netconf()  # nothing to stop: starts the next server, waits for its recovery
    assert ports == old_ports  # found where it was
    assert read_state(lab.id).netconf_pid != st.netconf_pid
    assert routes(lab, "r2") == BASE  # SIGKILL: the new server rolled it back before any session
    assert "ip route 198.51.100.0/24 blackhole" in routes(lab, "r1")
    assert "ip route 203.0.113.0/24 blackhole" in routes(lab, "r3")
    del sessions  # their server is gone; so are they

    with connect(lab, "r1") as m:
        with pytest.raises(RPCError) as ei:
            m.commit(persist_id="not-the-token")
        assert ei.value.tag == "invalid-value"
        with pytest.raises(RPCError) as ei:
            m.lock("running")  # a confirmed commit of no session (the old server's) is pending
        assert ei.value.tag == "lock-denied" and "session 0" in ei.value.message
        m.commit(persist_id=f"keep-{tag}")  # the confirming commit, from a new session
    assert "ip route 198.51.100.0/24 blackhole" in routes(lab, "r1")
    with connect(lab, "r4") as m:
        m.cancel_commit(persist_id=f"drop-{tag}")
    assert routes(lab, "r4") == BASE
    with connect(lab, "r2") as m:
        with pytest.raises(RPCError) as ei:
            m.cancel_commit()
        assert ei.value.tag == "operation-failed"  # nothing pending on r2 any more

    gone = wait_until(lambda: routes(lab, "r3") == BASE, 60)
    assert gone is not None, "r3's persistent commit was not rolled back at its deadline"
    assert gone - t3 >= 29  # not before its 30 s (the restart did not shorten or reset it)
    assert gone - t3 < 45  # nor reset to a new 30 s by the restart
    # the record goes once the rollback's apply has returned (FRR shows BASE a moment before)
    assert wait_until(lambda: not list(journal.glob("*.commit.json")), 15) is not None
    assert "ip route 198.51.100.0/24 blackhole" in routes(lab, "r1")  # confirmed: stays
    restore(lab, "r1")


def test_a_record_cut_short_during_a_crash_is_reported_and_kept_not_taken_for_nothing_pending(lab):
    """SIGKILL with a confirmed commit pending on r2, then the record loses its second half (a
    disk that did not keep the end): the new server must not take it for "nothing pending"
    (before: silently ignored, the unconfirmed change stayed with no word): every session hears
    ``rollback-failed`` naming the file, and the record is kept aside, byte for byte."""
    assert routes(lab, "r2") == BASE
    m = commit_route(lab, "r2", "198.51.100.0/24", timeout="300")
    journal = lab.dir / lab_netconf.JOURNAL_DIR
    st = read_state(lab.id)
    assert lab_netconf.stop_server(lab.id, lab.dir, st.netconf_pid, st.netconf_start, sig=signal.SIGKILL)
    del m
    path = journal / "r2.commit.json"
    bad = path.read_text()[:200]
    path.write_text(bad)
    lab.restart_netconf()
    try:
        kept = list(journal.glob("r2.commit.json.unreadable-*"))
        assert len(kept) == 1 and kept[0].read_text() == bad and not path.exists()
        assert "ip route 198.51.100.0/24 blackhole" in routes(lab, "r2")  # nothing could be rolled back
        for _ in range(2):  # every session is told, on its first operation
            with connect(lab, "r2") as s:
                with pytest.raises(RPCError) as ei:
                    s.get_config(source="running")
                assert ei.value.tag == "rollback-failed" and str(kept[0]) in ei.value.message
                assert "not rolled back" in ei.value.message
                s.get_config(source="running")  # once
    finally:
        restore(lab, "r2")
        for f in journal.glob("r2.commit.json.unreadable-*"):
            f.unlink()


def test_docs_restart_example_runs(lab_host, run_doc_example):
    """docs/netconf.md's restart example runs as written (it makes its own lab)."""
    out = run_doc_example("netconf.md", "netconf-restart", timeout=240)
    assert "['ip route 192.0.2.0/24 blackhole']" in out


# -- 2. the NETCONF lock keeps A1 out; out-of-band changes are not undone silently ---------------


def test_a1_refuses_to_write_while_a_netconf_session_locks_running(lab, open_adapter):
    from ani.adapters.a1 import A1Adapter
    from ani.errors import ErrorCode

    a1 = open_adapter(A1Adapter(lab))
    before = lab.running_config("r5")
    snap = a1.call("snapshot", {"device": "r5"}).data["snapshot_id"]
    add = {"device": "r5", "commands": ["ip route 203.0.113.0/24 blackhole"]}
    with connect(lab, "r5") as m:
        m.lock("running")
        res = a1.call("update_config", add)
        assert not res.ok and res.error.code == ErrorCode.LOCKED and res.error.retriable
        assert f"NETCONF session {m.session_id} holds the lock on r5's running datastore" in res.error.message
        assert res.data["netconf_session"] == int(m.session_id)
        res = a1.call("rollback", {"device": "r5", "snapshot_id": snap})
        assert res.error.code == ErrorCode.LOCKED
        assert lab.running_config("r5") == before  # nothing was sent
        m.unlock("running")
        res = a1.call("update_config", add)
        assert res.ok, res.text
        assert "ip route 203.0.113.0/24 blackhole" in routes(lab, "r5")
        m.lock("running")
        assert a1.call("update_config", add).error.code == ErrorCode.LOCKED
    # the session ended: its lock went with it
    assert a1.call("rollback", {"device": "r5", "snapshot_id": snap}).ok
    assert routes(lab, "r5") == BASE


def test_a_lock_left_by_a_dead_server_does_not_refuse_a1(lab, open_adapter):
    from ani.adapters.a1 import A1Adapter

    a1 = open_adapter(A1Adapter(lab))
    m = connect(lab, "r5")
    m.lock("running")
    assert lab.netconf_lock("r5").session_id == int(m.session_id)
    st = read_state(lab.id)
    try:
        lab_netconf.stop_server(lab.id, lab.dir, st.netconf_pid, st.netconf_start, sig=signal.SIGKILL)
        assert (lab.dir / lab_netconf.JOURNAL_DIR / "r5.locks.json").exists()  # the entry stays ...
        assert lab.netconf_lock("r5") is None  # ... but a dead server's lock is no lock
        res = a1.call("update_config", {"device": "r5", "commands": ["ip route 203.0.113.0/24 blackhole"]})
        assert res.ok, res.text
        snap = res.data["pre_snapshot"]
        assert a1.call("rollback", {"device": "r5", "snapshot_id": snap}).ok
    finally:
        lab.restart_netconf()
    assert lab.netconf_lock("r5") is None and routes(lab, "r5") == BASE


def test_a_commit_over_a_running_changed_out_of_band_is_refused_not_undone(lab):
    with connect(lab, "r5") as m:
        m.lock("running")
        m.lock("candidate")
        m.edit_config(target="candidate", config=config(route("198.51.100.0/24")))
        # a CLI change nothing can refuse (vtysh by hand)
        res = lab.vtysh("r5", ["configure terminal", "ip route 203.0.113.0/24 blackhole"])
        assert res.ok, res.stderr
        with pytest.raises(RPCError) as ei:
            m.commit()
        err = ei.value
        assert (err.tag, err.app_tag) == ("operation-failed", "running-changed")
        assert "+ ip route 203.0.113.0/24 blackhole" in err.message
        assert routes(lab, "r5") == BASE + ["ip route 203.0.113.0/24 blackhole"]  # the CLI change stays
        cand = m.get_config("candidate", filter=("subtree", f'<frr xmlns="{NS}"><static-route/></frr>'))
        assert "198.51.100.0/24" in cand.data_xml  # the candidate keeps its edits
        m.discard_changes()
        m.edit_config(target="candidate", config=config(route("198.51.100.0/24")))
        m.commit()
        assert routes(lab, "r5") == BASE + ["ip route 198.51.100.0/24 blackhole",
                                            "ip route 203.0.113.0/24 blackhole"]
        m.edit_config(target="candidate", config=config(route("198.51.100.0/24", "delete")
                                                        + route("203.0.113.0/24", "delete")))
        m.commit()
    assert routes(lab, "r5") == BASE


# -- 3. error-option -------------------------------------------------------------------------------


def _candidate_routes(m: manager.Manager) -> list[str]:
    data = m.get_config("candidate", filter=("subtree", f'<frr xmlns="{NS}"><static-route/></frr>')).data_ele
    return sorted(e.text for e in data.iter(f"{{{NS}}}prefix"))


@pytest.mark.parametrize("option, kept", [
    ("stop-on-error", ["192.0.2.0/24", "198.51.100.0/24"]),
    ("rollback-on-error", ["192.0.2.0/24"]),
    ("continue-on-error", ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]),
])
def test_error_options(lab, option, kept):
    """create 198.51.100.0/24; delete a route that does not exist (data-missing); create
    203.0.113.0/24. RFC 6241 §7.2: stop-on-error keeps the edits before the error,
    rollback-on-error none, continue-on-error all that succeeded; a commit takes what was kept."""
    body = config(route("198.51.100.0/24", "create") + route("10.99.0.0/16", "delete")
                  + route("203.0.113.0/24", "create"))
    with connect(lab, "r5") as m:
        with pytest.raises(RPCError) as ei:
            m.edit_config(target="candidate", config=body, error_option=option)
        assert ei.value.tag == "data-missing" and "10.99.0.0/16" in (ei.value.path or "")
        assert _candidate_routes(m) == kept
        m.commit()
        assert sorted(routes(lab, "r5")) == sorted(f"ip route {p} blackhole" for p in kept)
    restore(lab, "r5")


# -- 4. validate refuses what FRR would refuse at commit -------------------------------------------


@pytest.mark.parametrize("inner, where, why", [
    ("<bgp><asn>64505</asn><timers><keepalive>0</keepalive><holdtime>1</holdtime></timers></bgp>",
     "holdtime", "0 | 3..65535"),
    ("<bgp><asn>64505</asn><timers><keepalive>0</keepalive><holdtime>2</holdtime></timers></bgp>",
     "holdtime", "0 | 3..65535"),
    ("<bgp><asn>64505</asn><timers><keepalive>2</keepalive><holdtime>3</holdtime></timers></bgp>",
     "timers", "a third of the hold time"),
    (f"<interface><name>lo</name><description>{'x' * 4081}</description></interface>",
     "description", "4080 characters"),
    (f"<interface><name>lo</name><description>{chr(233) * 2041}</description></interface>",
     "description", "4095 bytes of UTF-8, FRR takes at most 4093"),
    ("<bgp><asn>64505</asn><neighbor><address>10.0.0.9</address><remote-as>64999</remote-as>"
     f"<description>{'y' * 4061}</description></neighbor></bgp>", "neighbor", "4091 bytes"),
])
def test_validate_refuses_what_frr_refuses_at_commit(lab, inner, where, why):
    """Issue 11: validate accepted these, then FRR refused them at commit (or hung)."""
    before = lab.running_config("r5")
    with connect(lab, "r5") as m:
        with pytest.raises(RPCError) as ei:
            m.validate(source=etree.fromstring(config(inner)))
        err = ei.value
        # a type error is invalid-value; a 'must' is operation-failed, app-tag must-violation (RFC 7950 §15.4)
        assert err.tag in ("invalid-value", "operation-failed"), err.tag
        assert where in (err.path or "") and why in err.message, err.message
        assert len(err.message) < 600  # the 4 KB value is not repeated whole
        with pytest.raises(RPCError):
            m.edit_config(target="candidate", config=config(inner))  # test-then-set refuses too
        m.discard_changes()
    assert lab.running_config("r5") == before  # nothing reached the router


def test_the_longest_description_validate_accepts_commits_and_reads_back(lab):
    desc = "x" * 4080
    with connect(lab, "r5") as m:
        m.edit_config(target="candidate", config=config(f"<interface><name>lo</name><description>{desc}"
                                                        "</description></interface>"))
        m.validate(source="candidate")
        m.commit()
        assert f" description {desc}" in lab.running_config("r5").splitlines()
        m.edit_config(target="candidate", config=config(
            '<interface><name>lo</name><description nc:operation="delete"/></interface>'))
        m.commit()
    assert " description" not in lab.running_config("r5")
