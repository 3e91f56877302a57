"""The ANI conformance suite on MyVendorAdapter, selected by name through the registry (so
the package must be installed: ``pip install -e .`` next to ani-sdk).

Two runs of the same suite:

- ``TestMyVendorOnFakeLab``: on :class:`ani.testing.FakeLab` (in-memory routers with an FRR-like
  vtysh): no root, no FRR, seconds; run it in your CI;
- ``TestMyVendorOnLab``: on a real ani lab (FRR in network namespaces; needs root and FRR,
  skipped otherwise) of the same topology.

Run: ``pytest tests/`` (pytest and ani-sdk[testing] installed).
"""

from __future__ import annotations

import pytest

from ani.registry import create_adapter
from ani.testing import AdapterConformance, FailingChange, FakeLab, lab_state
from ani.testing.fake_lab import DEFAULT_TOPOLOGY

LINE = "ip prefix-list PL-MYVENDOR seq 5 permit 192.0.2.0/24"


class MyVendorChecks(AdapterConformance):
    """What both runs share: how to make the adapter, read the device, call its tools."""

    @pytest.fixture
    def make_adapter(self, lab):
        return lambda: create_adapter("myvendor", lab, options={"timeout_s": 10})

    @pytest.fixture
    def read_device(self, lab):
        return lambda: lab_state(lab)

    def sample_calls(self, adapter):
        return {"show_version": {"device": "r1"}, "get_config": {"device": "r2"},
                "configure": {"device": "r1", "lines": [LINE]}}

    def failing_change(self, adapter):
        # the first line is applied, the second refused: configure must undo the first
        return FailingChange("configure", {"device": "r1", "lines": [LINE, "bogus-statement 1"]},
                             code="rolled_back")


class TestMyVendorOnFakeLab(MyVendorChecks):
    @pytest.fixture
    def lab(self):
        return FakeLab(DEFAULT_TOPOLOGY, reject=[r"^bogus"])


@pytest.fixture(scope="module")
def real_lab():
    """One real ani lab for the module (a class-scoped fixture may not be a method: pytest 9
    deprecates it, PytestRemovedIn10Warning)."""
    from ani.errors import CapabilityMissing
    from ani.lab import Lab
    from ani.lab.capability import check_capabilities
    from ani.lab.topology import parse_topology

    try:
        check_capabilities()
    except CapabilityMissing as exc:
        pytest.skip(f"no lab on this host: {exc}")
    with Lab(parse_topology(DEFAULT_TOPOLOGY)) as lab:  # up on enter, down on exit
        yield lab


class TestMyVendorOnLab(MyVendorChecks):
    @pytest.fixture
    def lab(self, real_lab):
        return real_lab
