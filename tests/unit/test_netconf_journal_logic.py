"""The Device's durable state (ani.netconf.journal, Device.recover / shutdown), its published
locks, the refusal of a commit over a running changed out of band, and stop-on-error, with an
in-memory backend, a manual timer and a real journal directory (tmp_path). The same behaviour
on the real server and FRR: tests/integration/test_netconf_durable.py."""

from __future__ import annotations

import json
import os
import time
from ipaddress import IPv4Network

import pytest
from lxml import etree

from ani.device.model import DeviceConfig, StaticRoute
from ani.netconf import editconfig
from ani.netconf.backend import ApplyError, ApplyReport
from ani.netconf.commit import PendingCommit
from ani.netconf.datastore import Device
from ani.netconf.errors import BASE_NS, RpcError, RpcErrors
from ani.netconf.journal import Journal, JournalError, read_locks, write_json_atomic

NS = "urn:ani:yang:ani-frr"
A, B = 11, 22


def route(prefix: str) -> StaticRoute:
    return StaticRoute(prefix=IPv4Network(prefix), nexthop="blackhole")


V1 = DeviceConfig(hostname="r1", static_routes=[route("192.0.2.0/24")])


class Backend:
    """A DeviceConfig in memory; ``on_apply`` runs at the start of every apply."""

    name = "r1"

    def __init__(self, cfg: DeviceConfig) -> None:
        self.cfg = cfg.model_copy(deep=True)
        self.applied: list[DeviceConfig] = []
        self.on_apply = lambda intended: None
        self.refuse = False

    def read(self) -> DeviceConfig:
        return self.cfg.model_copy(deep=True)

    def apply(self, intended: DeviceConfig, deadline: float | None = None) -> ApplyReport:
        self.on_apply(intended)
        if self.refuse:
            raise ApplyError("refused by the fake", restored=True)
        self.applied.append(intended)
        self.cfg = intended.model_copy(deep=True)
        return ApplyReport(changed=True)

    def state(self) -> dict:
        return {}


class Timers:
    def __init__(self) -> None:
        self.all: list[list] = []  # [seconds, callback, started, cancelled]

    def __call__(self, seconds, callback):  # type: ignore[no-untyped-def]
        t = [seconds, callback, False, False]
        self.all.append(t)

        class T:
            def start(self_) -> None:
                t[2] = True

            def cancel(self_) -> None:
                t[3] = True

        return T()

    def live(self) -> list[list]:
        return [t for t in self.all if t[2] and not t[3]]


def config(inner: str) -> etree._Element:
    return etree.fromstring(f'<config xmlns="{BASE_NS}" xmlns:nc="{BASE_NS}"><frr xmlns="{NS}">{inner}</frr></config>')


def routes_xml(*prefixes: str, op: str = "") -> str:
    attr = f' nc:operation="{op}"' if op else ""
    return "".join(f"<static-route{attr}><prefix>{p}</prefix><next-hop>blackhole</next-hop></static-route>"
                   for p in prefixes)


def prefixes(cfg: DeviceConfig) -> list[str]:
    return [str(r.prefix) for r in cfg.static_routes]


@pytest.fixture
def jdir(tmp_path):
    return tmp_path / "netconf"


def device(jdir, backend: Backend, timers: Timers, owner: int = 1) -> Device:
    return Device("r1", backend, "r1", timer=timers, journal=Journal(jdir, {"pid": owner}).router("r1"))


def record(jdir) -> dict | None:
    try:
        return json.loads((jdir / "r1.commit.json").read_text())["commit"]
    except FileNotFoundError:
        return None


# -- the record ---------------------------------------------------------------------------------


def test_pending_commit_record_round_trip_keeps_rollback_point_persist_and_deadline():
    p = PendingCommit(rollback=V1, owner=7, persist="tok", timeout_s=30, deadline=time.monotonic() + 12)
    rec = json.loads(json.dumps(p.to_record()))  # what the file holds
    q = PendingCommit.from_record(rec)
    assert q.rollback == V1 and q.persist == "tok" and q.timeout_s == 30
    assert q.owner is None  # no session survives its server
    assert abs(q.deadline - p.deadline) < 0.01  # same boot: the monotonic deadline itself
    other_boot = {**rec, "boot_id": "another-boot"}  # after a reboot: from the Unix deadline
    assert abs(PendingCommit.from_record(other_boot).remaining_s() - 12) < 1.0
    with pytest.raises(ValueError):
        PendingCommit.from_record({"rollback": {"hostname": "r1"}})
    with pytest.raises(ValueError):
        PendingCommit.from_record({**rec, "rollback": {"hostname": "r1", "static_routes": [{"prefix": "x"}]}})


def test_journal_files_are_private_atomic_and_versioned(jdir):
    j = Journal(jdir, {"pid": 42, "start": 7}).router("r1")
    j.save_commit({"a": 1})
    assert oct(jdir.stat().st_mode & 0o777) == oct(0o700)
    assert oct((jdir / "r1.commit.json").stat().st_mode & 0o777) == oct(0o600)
    assert j.load_commit() == {"a": 1}
    assert not [p.name for p in jdir.iterdir() if p.name.endswith(".tmp")]  # no temp file left
    j.publish_locks({"running": {"session-id": 3, "since": 1.0}})
    assert read_locks(jdir, "r1") == {"owner": {"pid": 42, "start": 7},
                                     "locks": {"running": {"session-id": 3, "since": 1.0}}}
    assert read_locks(jdir, "r2") is None
    (jdir / "r1.commit.json").write_text('{"version": 99, "commit": {"a": 1}}')
    with pytest.raises(JournalError, match="version 99, this server reads version 1"):
        j.load_commit()  # another format version is not read as ours, nor taken for no record
    j.clear_commit()
    j.clear_commit()  # idempotent
    assert j.load_commit() is None


def test_journal_write_failure_is_a_journal_error_naming_the_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    j = Journal(blocker / "netconf", {"pid": 1}).router("r1")  # a directory under a file
    with pytest.raises(JournalError, match="r1.commit.json"):
        j.save_commit({})


def test_write_json_atomic_replaces_whole_files(tmp_path):
    path = tmp_path / "x.json"
    write_json_atomic(path, {"n": 1})
    write_json_atomic(path, {"n": 2})
    assert json.loads(path.read_text()) == {"n": 2}
    assert os.listdir(tmp_path) == ["x.json"]


# -- a confirmed commit is recorded before running changes --------------------------------------


def test_rollback_point_is_recorded_before_the_apply_and_removed_when_confirmed(jdir):
    be, timers = Backend(V1), Timers()
    dev = device(jdir, be, timers)
    seen: list = []
    be.on_apply = lambda intended: seen.append(record(jdir))
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout="30", persist="tok")
    rec = seen[0]
    assert rec is not None, "the record must exist when running starts changing"
    assert prefixes(DeviceConfig.model_validate(rec["rollback"])) == ["192.0.2.0/24"]
    assert (rec["persist"], rec["owner"], rec["timeout_s"]) == ("tok", A, 30)
    assert 29 < rec["deadline"] - time.time() <= 30
    dev.commit(B, persist_id="tok")  # the confirming commit
    assert record(jdir) is None


def test_followup_records_the_new_deadline_and_cancel_removes_the_record(jdir):
    be, timers = Backend(V1), Timers()
    dev = device(jdir, be, timers)
    dev.commit(A, confirmed=True, confirm_timeout="30")
    dev.commit(A, confirmed=True, confirm_timeout="300", persist="p2")
    rec = record(jdir)
    assert rec["timeout_s"] == 300 and rec["persist"] == "p2"
    assert prefixes(DeviceConfig.model_validate(rec["rollback"])) == ["192.0.2.0/24"]
    dev.cancel_commit(B, persist_id="p2")
    assert record(jdir) is None


def test_a_refused_confirmed_commit_leaves_no_record(jdir):
    be, timers = Backend(V1), Timers()
    dev = device(jdir, be, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    be.refuse = True
    with pytest.raises(RpcError):
        dev.commit(A, confirmed=True)
    assert record(jdir) is None


def test_a_rollback_point_that_cannot_be_recorded_refuses_the_commit_and_changes_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    be, timers = Backend(V1), Timers()
    dev = Device("r1", be, "r1", timer=timers, journal=Journal(blocker / "nc", {"pid": 1}).router("r1"))
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    with pytest.raises(RpcError) as ei:
        dev.commit(A, confirmed=True)
    assert ei.value.tag == "operation-failed" and "could not be recorded" in ei.value.message
    assert be.applied == [] and be.cfg == V1
    dev.commit(A)  # a plain commit needs no record
    assert prefixes(be.cfg) == ["192.0.2.0/24", "198.51.100.0/24"]


# -- a new server process: recover() -------------------------------------------------------------


def crashed(jdir, persist: str | None, timeout: str = "60") -> Backend:
    """A server that made a confirmed commit of 198.51.100.0/24 and died (nothing cleaned up)."""
    be, timers = Backend(V1), Timers()
    dev = device(jdir, be, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout=timeout, persist=persist)
    assert prefixes(be.cfg) == ["192.0.2.0/24", "198.51.100.0/24"]
    return be


def test_recover_rolls_back_a_non_persistent_commit_whose_session_died_with_the_server(jdir):
    be = crashed(jdir, persist=None)
    dev = device(jdir, be, Timers(), owner=2)
    said = dev.recover()
    assert "rolled back" in said and "session ended" in said
    assert be.cfg == V1 and record(jdir) is None
    with pytest.raises(RpcError) as ei:
        dev.cancel_commit(A)
    assert ei.value.tag == "operation-failed"  # nothing pending any more


def test_recover_keeps_a_persistent_commit_with_its_remaining_timeout(jdir):
    be = crashed(jdir, persist="tok", timeout="60")
    timers = Timers()
    dev = device(jdir, be, timers, owner=2)
    assert "pending" in dev.recover()
    assert prefixes(be.cfg) == ["192.0.2.0/24", "198.51.100.0/24"]  # not rolled back
    (t,) = timers.live()
    assert 55 < t[0] <= 60  # what is left of the 60 s
    with pytest.raises(RpcError) as ei:
        dev.lock(B, "running")
    assert ei.value.tag == "lock-denied" and ei.value.info == {"session-id": "0"}  # owned by no session
    with pytest.raises(RpcError):
        dev.commit(B, persist_id="wrong")
    dev.commit(B, persist_id="tok")  # confirmed from a new session of the new server
    assert record(jdir) is None and t[3]  # timer cancelled
    assert prefixes(be.cfg) == ["192.0.2.0/24", "198.51.100.0/24"]


def test_recovered_persistent_commit_rolls_back_at_expiry(jdir):
    be = crashed(jdir, persist="tok")
    timers = Timers()
    dev = device(jdir, be, timers, owner=2)
    dev.recover()
    timers.live()[0][1]()  # the timer fires
    assert be.cfg == V1 and record(jdir) is None


def test_recover_rolls_back_a_persistent_commit_whose_deadline_passed_while_down(jdir):
    be = crashed(jdir, persist="tok")
    rec = json.loads((jdir / "r1.commit.json").read_text())
    rec["commit"]["deadline_monotonic"] = time.monotonic() - 1
    (jdir / "r1.commit.json").write_text(json.dumps(rec))
    dev = device(jdir, be, Timers(), owner=2)
    assert "deadline passed" in dev.recover()
    assert be.cfg == V1 and record(jdir) is None


def _garbage_rollback(text: str) -> str:
    doc = json.loads(text)
    doc["commit"]["rollback"] = {"hostname": "r1", "static_routes": "garbage"}
    return json.dumps(doc)


#: ways a commit record can be unreadable: cut short (a disk that lost the end), emptied, not
#: JSON, another version, not an object, no commit, a commit whose rollback point is not a config
UNREADABLE = {
    "cut-short": lambda t: t[: len(t) // 2],
    "cut-after-first-byte": lambda t: t[:1],
    "empty": lambda t: "",
    "not-json": lambda t: "\x00\x01 garbage",
    "other-version": lambda t: t.replace('"version": 1', '"version": 9'),
    "a-list": lambda t: "[]",
    "no-commit": lambda t: json.dumps({"version": 1, "owner": {"pid": 1}}),
    "garbage-rollback": _garbage_rollback,
}


@pytest.mark.parametrize("kind", sorted(UNREADABLE))
def test_an_unreadable_record_is_reported_to_every_session_and_kept(jdir, kind):
    be = crashed(jdir, persist=None)
    path = jdir / "r1.commit.json"
    bad = UNREADABLE[kind](path.read_text())
    path.write_text(bad)
    dev = device(jdir, be, Timers(), owner=2)
    said = dev.recover()
    assert said is not None and "cannot be read" in said and "not rolled back" in said, said
    assert "\n" not in said
    kept = [f for f in jdir.iterdir() if f.name.startswith("r1.commit.json.unreadable-")]
    assert len(kept) == 1 and str(kept[0]) in said
    assert kept[0].read_text() == bad  # nothing lost: the record as it was, for a person to read
    assert not path.exists()
    for sid in (A, B):
        with pytest.raises(RpcError) as ei:
            dev.get_config(sid, "running")
        assert ei.value.tag == "rollback-failed" and str(kept[0]) in ei.value.message
    dev.get_config(A, "running")  # once per session
    # a later confirmed commit records its own rollback point; the kept record is not overwritten
    dev.edit_config(A, "candidate", config(routes_xml("203.0.113.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout="60")
    assert record(jdir) is not None and kept[0].read_text() == bad


def test_no_record_is_not_an_unreadable_one(jdir):
    rj = Journal(jdir, {"pid": 1}).router("r1")
    assert rj.load_commit() is None
    jdir.mkdir()
    (jdir / "r1.commit.json").write_text("{")
    with pytest.raises(JournalError) as ei:
        rj.load_commit()
    assert "r1.commit.json is not JSON" in str(ei.value)


def test_recover_without_a_record_does_nothing_and_withdraws_a_dead_servers_locks(jdir):
    Journal(jdir, {"pid": 1}).router("r1").publish_locks({"running": {"session-id": 5, "since": 1.0}})
    be = Backend(V1)
    dev = device(jdir, be, Timers(), owner=2)
    assert dev.recover() is None and be.applied == []
    assert read_locks(jdir, "r1") == {"owner": {"pid": 2}, "locks": {}}


# -- the server stopping: shutdown() --------------------------------------------------------------


def test_shutdown_rolls_back_the_non_persistent_commit_and_keeps_the_persistent_one(jdir):
    be1, t1 = Backend(V1), Timers()
    d1 = device(jdir, be1, t1)
    d1.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    d1.commit(A, confirmed=True)
    assert "rolled back" in d1.shutdown()
    assert be1.cfg == V1 and record(jdir) is None
    with pytest.raises(RpcError, match="stopping"):
        d1.get_config(A, "running")

    be2 = crashed(jdir, persist="tok")
    d2 = device(jdir, be2, Timers(), owner=3)
    d2.recover()
    assert "stays pending" in d2.shutdown()
    assert record(jdir)["persist"] == "tok"
    assert prefixes(be2.cfg) == ["192.0.2.0/24", "198.51.100.0/24"]


def test_a_failed_rollback_at_shutdown_stays_recorded_for_the_next_server(jdir):
    be, timers = Backend(V1), Timers()
    dev = device(jdir, be, timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True)
    be.refuse = True
    assert "failed" in dev.shutdown()
    assert record(jdir) is not None
    be.refuse = False
    assert "rolled back" in device(jdir, be, Timers(), owner=2).recover()
    assert be.cfg == V1


# -- published locks -----------------------------------------------------------------------------


def test_locks_are_published_on_every_change(jdir):
    be, timers = Backend(V1), Timers()
    dev = device(jdir, be, timers)
    dev.lock(A, "running")
    dev.lock(B, "candidate")
    locks = read_locks(jdir, "r1")["locks"]
    assert {t: e["session-id"] for t, e in locks.items()} == {"running": A, "candidate": B}
    assert abs(locks["running"]["since"] - time.time()) < 5
    dev.unlock(A, "running")
    assert set(read_locks(jdir, "r1")["locks"]) == {"candidate"}
    dev.session_closed(B)
    assert read_locks(jdir, "r1")["locks"] == {}
    dev.lock(A, "running")
    dev.shutdown()
    assert read_locks(jdir, "r1")["locks"] == {}


def test_a_lock_that_cannot_be_published_is_not_taken(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    dev = Device("r1", Backend(V1), "r1", timer=Timers(), journal=Journal(blocker / "nc", {"pid": 1}).router("r1"))
    with pytest.raises(RpcError) as ei:
        dev.lock(A, "running")
    assert ei.value.tag == "operation-failed" and "not taken" in ei.value.message
    dev.journal = None
    dev.lock(B, "running")  # not held by A: B gets it


# -- a commit over a running changed out of band --------------------------------------------------


def test_commit_over_a_running_changed_out_of_band_is_refused_naming_the_change():
    be, timers = Backend(V1), Timers()
    dev = Device("r1", be, "r1", timer=timers)
    dev.lock(A, "running")
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    be.cfg = be.cfg.model_copy(update={"static_routes": [route("192.0.2.0/24"), route("203.0.113.0/24")]})
    with pytest.raises(RpcError) as ei:
        dev.commit(A)
    err = ei.value
    assert (err.tag, err.app_tag) == ("operation-failed", "running-changed")
    assert "+ ip route 203.0.113.0/24 blackhole" in err.message
    assert be.applied == []  # nothing was applied: the CLI change stays
    cand = dev.get_config(A, "candidate")
    assert "198.51.100.0/24" in etree.tostring(cand).decode()  # the candidate keeps its edits
    dev.discard_changes(A)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A)
    assert prefixes(be.cfg) == ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]


def test_commit_over_an_unchanged_running_and_a_change_undone_meanwhile_both_commit():
    be, timers = Backend(V1), Timers()
    dev = Device("r1", be, "r1", timer=timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    be.cfg = DeviceConfig(hostname="r1")
    be.cfg = V1.model_copy(deep=True)  # changed and changed back: running equals the copy
    dev.commit(A)
    assert prefixes(be.cfg) == ["192.0.2.0/24", "198.51.100.0/24"]


def test_a_confirmed_commit_rolled_back_under_a_modified_candidate_refuses_its_commit():
    """The rollback is a change of running too: committing the candidate would redo the
    rolled-back change silently."""
    be, timers = Backend(V1), Timers()
    dev = Device("r1", be, "r1", timer=timers)
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    dev.commit(A, confirmed=True, confirm_timeout="5")
    dev.edit_config(A, "candidate", config(routes_xml("203.0.113.0/24")))
    timers.live()[0][1]()  # expiry: running back to V1
    with pytest.raises(RpcError) as ei:
        dev.commit(A)
    assert ei.value.app_tag == "running-changed" and "- ip route 198.51.100.0/24 blackhole" in ei.value.message


# -- error-option ----------------------------------------------------------------------------------


def test_stop_on_error_keeps_the_edits_before_the_error_and_rollback_on_error_none():
    be, timers = Backend(V1), Timers()
    inner = (routes_xml("198.51.100.0/24", op="create") + routes_xml("10.99.0.0/16", op="delete")
             + routes_xml("203.0.113.0/24", op="create"))
    for option, kept in (("stop-on-error", ["192.0.2.0/24", "198.51.100.0/24"]),
                         ("rollback-on-error", ["192.0.2.0/24"]),
                         ("continue-on-error", ["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"])):
        dev = Device("r1", be, "r1", timer=timers)
        with pytest.raises((RpcError, RpcErrors)) as ei:
            dev.edit_config(A, "candidate", config(inner), error_option=option)
        errs = ei.value.errors if isinstance(ei.value, RpcErrors) else [ei.value]
        assert [e.tag for e in errs] == ["data-missing"], option
        cand = dev.get_config(A, "candidate")
        got = sorted(p.text for p in cand.iter(f"{{{NS}}}prefix"))
        assert got == kept, option


def test_stop_on_error_does_not_apply_a_replace_whose_subtree_failed(schema=None):
    from ani.device import yang

    schema = editconfig.Schema.from_datamodel(yang.data_model())
    ds = etree.fromstring(f'<data xmlns="{BASE_NS}"><frr xmlns="{NS}">{routes_xml("192.0.2.0/24")}'
                          "<prefix-list><name>PL</name><entry><seq>5</seq><action>permit</action>"
                          "<prefix>192.0.2.0/24</prefix></entry></prefix-list></frr></data>")
    req = config(routes_xml("198.51.100.0/24") + '<prefix-list nc:operation="replace"><name>PL</name>'
                 '<entry nc:operation="delete"><seq>7</seq></entry></prefix-list>')
    r = editconfig.edit(schema, ds, req, error_option="stop-on-error")
    assert [e.tag for e in r.errors] == ["data-missing"] and r.changed
    text = etree.tostring(r.tree).decode()
    assert "198.51.100.0/24" in text  # the edit before the error
    assert "<seq>5</seq>" in text  # the replace that failed inside was not applied
