"""ani.sot.reconcile: the reconcile loop on a real git repository with a fake lab (a dict of
running configurations) and fake appliers: no-op reconciles send nothing, non-convergence stops
after at most 2 applies with the items and lines involved, failures are reported (issue 4, case 4
logic; the real-FRR side is tests/integration/test_a3r_reconcile.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ani.device.apply as device_apply
from ani.device.model import DeviceConfig, StaticRoute
from ani.device.parse import parse
from ani.device.render import render
from ani.device.outcome import ApplyError, ApplyReport
from ani.sot.patch import pointer
from ani.sot.reconcile import (
    PHASE_NOT_REACHED,
    ApplierOutcome,
    Reconciler,
    ReconcileStatus,
    device_applier,
    head_desired,
    involved_lines,
)
from ani.sot.repo import SotRepo
from ani.testing import FakeLab


def _r(name: str, distance: int = 1) -> DeviceConfig:
    return DeviceConfig(hostname=name, static_routes=[StaticRoute(prefix="192.0.2.0/24", nexthop="198.51.100.1",
                                                                  distance=distance)])


def make_lab(cfgs: dict[str, DeviceConfig]) -> FakeLab:
    """ani.testing's FakeLab whose routers run ``cfgs``; ``lab.sent``: what an applier changed."""
    lab = FakeLab({"name": "sot", "routers": {r: {} for r in cfgs}})
    for r, cfg in cfgs.items():
        lab.set_config(r, render(cfg))
    lab.sent = []
    return lab


def read(lab: FakeLab, router: str) -> DeviceConfig:
    """The reconciler's reader: the router's running configuration, parsed."""
    return parse(lab.running_config(router))


def honest(lab: FakeLab, targets: dict[str, DeviceConfig]) -> ApplierOutcome:
    for r, cfg in sorted(targets.items()):
        lab.set_config(r, render(cfg))
        lab.sent.append(r)
    return ApplierOutcome(ok=True, applied=sorted(targets))


@pytest.fixture
def repo(tmp_path: Path):  # type: ignore[no-untyped-def]
    r = SotRepo.init(tmp_path / "sot", {"r1": _r("r1"), "r2": _r("r2")})
    yield r
    r.close()


def _set_distance(repo: SotRepo, router: str, distance: int) -> str:
    repo.patch(f"devices/{router}.json",
               [{"op": "replace", "path": pointer("static_routes", "192.0.2.0/24", "distance"), "value": distance}]
               if distance != 1 else
               [{"op": "remove", "path": pointer("static_routes", "192.0.2.0/24", "distance")}], repo.head())
    return repo.commit(f"{router}: distance {distance}")


def test_pending_before_first_reconcile(repo: SotRepo) -> None:
    lab = make_lab({"r1": _r("r1"), "r2": _r("r2")})
    rec = Reconciler(lab, repo, applier=honest, reader=read)
    assert rec.status() == ReconcileStatus(status="pending")
    assert rec.drift() == {}


def test_no_drift_sends_nothing_three_times(repo: SotRepo) -> None:
    lab = make_lab({"r1": _r("r1"), "r2": _r("r2")})
    calls = []

    def applier(lab_: FakeLab, targets: dict) -> ApplierOutcome:
        calls.append(sorted(targets))
        return honest(lab_, targets)

    rec = Reconciler(lab, repo, applier=applier, reader=read)
    _set_distance(repo, "r2", 200)
    first = rec.reconcile()
    assert first.status == "converged" and first.tries == 1 and first.applied == ["r2"]
    assert calls == [["r2"]]  # r1 had no drift: nothing for r1
    for _ in range(2):
        again = rec.reconcile()
        assert again.status == "converged" and again.tries == 0 and again.applied == []
        assert again.revision == repo.head()
    assert calls == [["r2"]] and lab.sent == ["r2"]
    assert rec.status().tries == 0


def test_drift_shows_out_of_band_change_and_reconcile_reverts_it(repo: SotRepo) -> None:
    lab = make_lab({"r1": _r("r1"), "r2": _r("r2")})
    rec = Reconciler(lab, repo, applier=honest, reader=read)
    lab.set_config("r1", render(_r("r1", 50)))  # out of band
    d = rec.drift()
    assert list(d) == ["r1"]
    assert [(i.pointer, i.kind, i.desired, i.actual) for i in d["r1"]] == [
        ("/static_routes/192.0.2.0~124/distance", "changed", 1, 50)
    ]
    assert rec.drift(["r2"]) == {}
    st = rec.reconcile()
    assert st.status == "converged" and st.applied == ["r1"] and read(lab, "r1") == _r("r1")


def test_competing_writer_is_non_convergent_after_one_apply(repo: SotRepo) -> None:
    """The applier's change is undone each time (another writer puts the old value back): the
    drift after the apply is the drift before it -> non-convergent, with the lines."""
    lab = make_lab({"r1": _r("r1"), "r2": _r("r2")})
    calls = []

    def undone(lab_: FakeLab, targets: dict) -> ApplierOutcome:
        calls.append(1)
        honest(lab_, targets)
        lab_.set_config("r1", render(_r("r1")))  # the other writer
        return ApplierOutcome(ok=True, applied=sorted(targets))

    rec = Reconciler(lab, repo, applier=undone, reader=read)
    _set_distance(repo, "r1", 200)
    st = rec.reconcile()
    assert st.status == "non-convergent" and st.tries == 1 and len(calls) == 1
    assert "same as before the first apply" in (st.reason or "")
    assert list(st.drift) == ["r1"]
    assert st.drift["r1"][0]["pointer"] == "/static_routes/192.0.2.0~124/distance"
    assert st.lines["r1"] == ["- ip route 192.0.2.0/24 198.51.100.1", "+ ip route 192.0.2.0/24 198.51.100.1 200"]
    assert rec.status() == st


def test_flapping_drift_non_convergent_at_most_two_applies(repo: SotRepo) -> None:
    """Each apply leaves a different drift: the second apply is the last (max_tries=2)."""
    lab = make_lab({"r1": _r("r1"), "r2": _r("r2")})
    n = []

    def drifting(lab_: FakeLab, targets: dict) -> ApplierOutcome:
        n.append(1)
        honest(lab_, targets)
        lab_.set_config("r1", render(_r("r1", 10 + len(n))))  # a different wrong value each time
        return ApplierOutcome(ok=True, applied=["r1"])

    rec = Reconciler(lab, repo, applier=drifting, reader=read)
    _set_distance(repo, "r1", 200)
    st = rec.reconcile()
    assert st.status == "non-convergent" and st.tries == 2 and len(n) == 2
    assert st.drift["r1"][0]["actual"] == 12 and st.drift["r1"][0]["desired"] == 200
    assert "2 applies" in (st.reason or "")


def test_second_apply_converges(repo: SotRepo) -> None:
    lab = make_lab({"r1": _r("r1"), "r2": _r("r2")})
    n = []

    def slow(lab_: FakeLab, targets: dict) -> ApplierOutcome:
        n.append(1)
        if len(n) == 1:  # half-way: only r2 took it
            lab_.set_config("r2", render(targets["r2"]))
            lab_.set_config("r1", render(_r("r1", 7)))
            return ApplierOutcome(ok=True, applied=["r1", "r2"])
        return honest(lab_, targets)

    rec = Reconciler(lab, repo, applier=slow, reader=read)
    _set_distance(repo, "r1", 200)
    _set_distance(repo, "r2", 200)
    st = rec.reconcile()
    assert st.status == "converged" and st.tries == 2 and st.drift == {} and st.applied == ["r1", "r2"]


def test_applier_failure_is_failed_with_phase(repo: SotRepo) -> None:
    lab = make_lab({"r1": _r("r1"), "r2": _r("r2")})

    def refusing(lab_: FakeLab, targets: dict) -> ApplierOutcome:
        return ApplierOutcome(ok=False, error="r1: locked by someone", phase="lock", detail={"x": 1})

    rec = Reconciler(lab, repo, applier=refusing, reader=read)
    _set_distance(repo, "r1", 200)
    st = rec.reconcile()
    assert (st.status, st.phase, st.error, st.tries, st.detail) == ("failed", "lock", "r1: locked by someone", 1, {"x": 1})
    assert list(st.drift) == ["r1"]


def test_not_reached_counts_as_a_try(repo: SotRepo) -> None:
    """An apply that did not reach the desired state and was put back is judged by its drift."""
    lab = make_lab({"r1": _r("r1"), "r2": _r("r2")})

    def rewritten(lab_: FakeLab, targets: dict) -> ApplierOutcome:
        return ApplierOutcome(ok=False, error="r1: did not reach", phase=PHASE_NOT_REACHED)

    rec = Reconciler(lab, repo, applier=rewritten, reader=read)
    _set_distance(repo, "r1", 200)
    st = rec.reconcile()
    assert st.status == "non-convergent" and st.tries == 1 and "r1: did not reach" in (st.reason or "")


def test_read_failure_is_failed(repo: SotRepo) -> None:
    def broken(_lab: object, router: str) -> DeviceConfig:
        raise ApplyError(f"{router}: cannot read the running config (timed out)", restored=True)

    st = Reconciler(object(), repo, applier=honest, reader=broken).reconcile()
    assert st.status == "failed" and st.phase == "read" and "timed out" in (st.error or "")


def test_custom_desired(repo: SotRepo) -> None:
    lab = make_lab({"r1": _r("r1"), "r2": _r("r2")})
    rec = Reconciler(lab, repo, applier=honest, reader=read,
                     desired=lambda rp: {**head_desired(rp), "r2": _r("r2", 99)})
    st = rec.reconcile()
    assert st.status == "converged" and st.applied == ["r2"] and read(lab, "r2") == _r("r2", 99)


def test_max_tries_checked(repo: SotRepo) -> None:
    with pytest.raises(ValueError):
        Reconciler(object(), repo, max_tries=0)


def test_device_applier_phases(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []

    def fake_apply(lab: object, router: str, cfg: DeviceConfig) -> ApplyReport:
        seen.append(router)
        if router == "r3":
            raise ApplyError("r3: the running configuration did not reach the intended one; "
                             "prior configuration restored", restored=True, lines=["+ x"])
        return ApplyReport(changed=router == "r1", diff=["+ y"], seconds=0.0)

    monkeypatch.setattr(device_apply, "apply", fake_apply)
    out = device_applier(object(), {"r3": _r("r3"), "r1": _r("r1"), "r2": _r("r2")})
    assert seen == ["r1", "r2", "r3"]
    assert not out.ok and out.phase == PHASE_NOT_REACHED and out.applied == ["r1"]
    assert out.detail["router"] == "r3" and out.detail["lines"] == ["+ x"] and out.detail["restored"] is True

    def refuse(lab: object, router: str, cfg: DeviceConfig) -> ApplyReport:
        raise ApplyError("r1: the running configuration has 1 line(s) ...; nothing was applied: x", restored=True)

    monkeypatch.setattr(device_apply, "apply", refuse)
    assert device_applier(object(), {"r1": _r("r1")}).phase == "refused"


def test_device_applier_sends_member_remote_as_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    """The desired config is handed to apply as FRR prints it: a peer-group member's own
    remote-as is dropped when the group has one (else apply's verification would fail)."""
    got = {}

    def fake_apply(lab: object, router: str, cfg: DeviceConfig) -> ApplyReport:
        got[router] = cfg
        return ApplyReport(changed=True, diff=[], seconds=0.0)

    monkeypatch.setattr(device_apply, "apply", fake_apply)
    cfg = DeviceConfig.model_validate({"hostname": "r1", "bgp": {
        "asn": 65000, "peer_groups": {"G": {"remote_as": 65000}},
        "neighbors": {"198.51.100.2": {"peer_group": "G", "remote_as": 65000}}}})
    device_applier(object(), {"r1": cfg})
    assert got["r1"].bgp.neighbors["198.51.100.2"].remote_as is None


def test_involved_lines_nft() -> None:
    a = DeviceConfig.model_validate({"hostname": "r1", "firewall": {"sets": {"tenant_a": {"elements": ["10.0.0.0/24"]}}}})
    b = DeviceConfig.model_validate({"hostname": "r1", "firewall": {"sets": {"tenant_a": {"elements": ["10.0.1.0/24"]}}}})
    lines = involved_lines(b, a)
    assert any(ln.startswith("+ nft /") and "10.0.1.0/24" in ln for ln in lines), lines
    assert any(ln.startswith("- nft /") and "10.0.0.0/24" in ln for ln in lines), lines


def test_summary_says_what_reached_the_routers() -> None:
    from ani.sot.reconcile import ReconcileStatus

    noop = ReconcileStatus(revision="a" * 40, status="converged", tries=0)
    assert noop.summary() == "converged at aaaaaaaaaaaa: 0 apply(s), nothing sent to any router"
    # a transaction that was rolled back sent its change, but left no router changed
    back = ReconcileStatus(revision="a" * 40, status="failed", tries=1, phase="active-validation", error="x failed")
    assert back.summary() == "failed at aaaaaaaaaaaa: 1 apply(s), no router left changed; error (active-validation): x failed"
    done = ReconcileStatus(revision="a" * 40, status="converged", tries=1, applied=["e1", "e2"])
    assert done.summary() == "converged at aaaaaaaaaaaa: 1 apply(s), changed e1, e2"
