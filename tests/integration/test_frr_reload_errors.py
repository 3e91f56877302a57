"""Every error line frr-reload prints reaches the report of a restore, at A1 (rollback to a
snapshot) and in the device layer (``ani.device.apply``), also when differences remain
(issue 11, section 4). They used to be lost: frr-reload logs a deletion vtysh refuses as an
INFO line (``Failed to execute interface eth-r2  no description some text here``; FRR 8.4 takes
only ``no description``, so frr-reload then tries shorter forms) and a line it never deletes as
INFO too (``"password zebra" cannot be removed``), and only its ERROR lines were kept.

One real router (r1 of tests/data/a1_pair.yaml, FRR 8.4): an interface description with spaces
makes frr-reload fail to execute its deletion; ``password`` is a line it never removes; an
``ip ospf area`` on an interface of a router whose ``router ospf`` has ``network`` lines is
refused by ospfd (``Please remove all network commands first.``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ani.adapters.a1 import A1Adapter
from ani.device.apply import ApplyError, apply, read

pytestmark = pytest.mark.integration

LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = Path(__file__).parent.parent / "data" / "a1_pair.yaml", "fre", False
FAILED = "Failed to execute interface eth-r2  no description some text here"


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture
def base(lab):
    """r1 as the lab started it; put back after the test (whatever the test left)."""
    cfg = read(lab, "r1")
    yield cfg
    lab.vtysh("r1", ["configure terminal", "no password"])  # frr-reload never removes it
    apply(lab, "r1", cfg)
    assert read(lab, "r1") == cfg


def with_description(cfg):
    want = cfg.model_copy(deep=True)
    want.interfaces["eth-r2"].description = "some text here"
    return want


def test_a_verified_apply_reports_the_deletions_frr_reload_failed_to_execute(lab, base):
    apply(lab, "r1", with_description(base))
    report = apply(lab, "r1", base)
    assert report.changed and read(lab, "r1") == base  # removed in the end, in a shorter form
    assert f"frr-reload: {FAILED}" in report.notes
    assert "frr-reload: Failed to execute interface eth-r2  no description some" in report.notes
    assert len(report.notes) == len(set(report.notes))  # each line once


def test_a_failed_apply_reports_every_frr_reload_error_line_with_the_differences_left(lab, base):
    had = with_description(base)
    apply(lab, "r1", had)
    bad = base.model_copy(deep=True)  # no description, and an area ospfd refuses here
    bad.interfaces["eth-r2"].ospf.area = "0.0.0.0"
    with pytest.raises(ApplyError) as exc:
        apply(lab, "r1", bad)
    err = exc.value
    assert err.restored and read(lab, "r1") == had
    assert err.lines == ["+ interface eth-r2 / ip ospf area 0.0.0.0"]  # what still differed
    for line in (FAILED, "Please remove all network commands first."):
        assert f"frr-reload: {line}" in err.notes, err.notes
        assert line in err.message, err.message
    assert any("Failure to communicate" in n and "ip ospf area 0.0.0.0" in n for n in err.notes)


def test_a1_rollback_reports_every_frr_reload_error_line_verified_or_not(lab, base):
    a1 = A1Adapter(lab)
    a1.open()
    try:
        snap = a1.call("snapshot", {"device": "r1"}).data["snapshot_id"]
        res = a1.call("update_config", {"device": "r1", "commands": ["interface eth-r2", "description some text here"]})
        assert res.ok, res.text

        res = a1.call("rollback", {"device": "r1", "snapshot_id": snap})
        assert res.ok and res.data["verified"], res.text  # the description is gone in the end
        assert f"frr-reload: {FAILED}" in res.data["detail"], res.data["detail"]

        # again, with a line frr-reload never removes (added out of band): differences remain
        assert a1.call("update_config", {"device": "r1", "commands": ["interface eth-r2", "description some text here"]}).ok
        lab.vtysh("r1", ["configure terminal", "password zebra"])
        res = a1.call("rollback", {"device": "r1", "snapshot_id": snap})
        assert not res.ok and res.error.code.value == "rollback_failed" and not res.data["verified"]
        for line in (FAILED, '"password zebra" cannot be removed'):
            assert f"frr-reload: {line}" in res.data["detail"], res.data["detail"]
            assert line in res.error.message, res.error.message
        assert "\n-password zebra\n" in res.error.message  # the difference left (running vs snapshot) too
    finally:
        a1.close()
