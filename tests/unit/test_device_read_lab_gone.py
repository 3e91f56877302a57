"""``ani.device.state.read_frr`` (the one reader) on a lab that was downed says the lab is not running (before
the dead-daemon check, which would otherwise report every daemon dead)."""

from __future__ import annotations

import pytest

from ani.device.outcome import ApplyError, ReadError
from ani.device.state import read_frr


class GoneLab:
    """A lab whose node entry scripts are files under ``root`` (present or gone) and whose
    daemons are all dead.

    Hand-written on purpose (issue 28: one of the few lab fakes not on ``ani.testing.FakeLab``):
    ``read_frr`` judges a lab gone by its ``node_argv`` entry script missing on disk; FakeLab has
    no ``node_argv`` (with one, A1 would start real vtysh sessions through it)."""

    id = "lab9"

    def __init__(self, root):
        self.root = root

    def node_argv(self, node, argv):
        return [str(self.root / node / "enter"), *argv]

    def dead_daemons(self, router):
        return ["bgpd", "zebra"]

    def vtysh(self, *a, **k):
        pytest.fail("vtysh must not run on a gone lab")


def test_a_gone_lab_is_not_running_not_dead_daemons(tmp_path):
    with pytest.raises(ReadError, match=r"^r1: lab lab9 is not running \(no .*/r1/enter\)$") as exc:
        read_frr(GoneLab(tmp_path), "r1")
    assert exc.value.restored is True and isinstance(exc.value, ApplyError)


def test_a_present_lab_with_a_dead_daemon_still_says_so(tmp_path):
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "enter").write_text("#!/bin/sh\n")
    with pytest.raises(ApplyError, match=r"^r1: FRR daemon bgpd, zebra is not running"):
        read_frr(GoneLab(tmp_path), "r1")
