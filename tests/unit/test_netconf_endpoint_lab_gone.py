"""``ani.lab.netconf.endpoint`` of a lab whose directory is gone says the lab is not running; a
lab that is there without a NETCONF server keeps its own hint."""

from __future__ import annotations

import pytest

from ani.errors import LabError
from ani.lab import netconf as nc


def test_a_removed_lab_is_not_running(tmp_path):
    gone = tmp_path / "labs" / "x1"
    with pytest.raises(LabError, match=r"^lab x1 is not running \(no .*labs/x1\)$"):
        nc.endpoint("x1", gone, "r1")


def test_a_lab_without_netconf_keeps_its_hint(tmp_path):
    with pytest.raises(LabError, match=r"^lab x2 has no NETCONF server for 'r1' \(started with netconf=False\?\)$"):
        nc.endpoint("x2", tmp_path, "r1")
