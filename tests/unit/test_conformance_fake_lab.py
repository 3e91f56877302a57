"""The conformance suite (ani.testing.AdapterConformance) on the template vendor adapter
(adapters/_template, loaded from its source) on ani.testing.FakeLab: the unit-test path a
vendor's CI takes. The installed package, selected through the registry, on a real lab:
tests/integration/test_conformance_template.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from strict_standin import strict_standin  # noqa: F401 - stand-in until part 2 is merged

from ani.testing import AdapterConformance, FailingChange, FakeLab, lab_state
from ani.testing.fake_lab import DEFAULT_TOPOLOGY

pytestmark = pytest.mark.usefixtures("strict_standin")

TEMPLATE_SRC = Path(__file__).resolve().parents[2] / "adapters" / "_template" / "src"
LINE = "ip prefix-list PL-MYVENDOR seq 5 permit 192.0.2.0/24"


def template_class():
    if str(TEMPLATE_SRC) not in sys.path:
        sys.path.insert(0, str(TEMPLATE_SRC))
    from ani_myvendor.adapter import MyVendorAdapter

    return MyVendorAdapter


class TestTemplateOnFakeLab(AdapterConformance):
    @pytest.fixture
    def lab(self):
        return FakeLab(DEFAULT_TOPOLOGY, reject=[r"^bogus"])

    @pytest.fixture
    def make_adapter(self, lab):
        cls = template_class()
        return lambda: cls(lab)

    @pytest.fixture
    def read_device(self, lab):
        return lambda: lab_state(lab)

    def sample_calls(self, adapter):
        return {"show_version": {"device": "r1"}, "get_config": {"device": "r2"},
                "configure": {"device": "r1", "lines": [LINE]}}

    def failing_change(self, adapter):
        return FailingChange("configure", {"device": "r1", "lines": [LINE, "bogus-statement 1"]},
                             code="rolled_back")


def test_the_failing_change_really_applied_a_line_first():
    """The template's rollback is exercised, not skipped: its first line reaches the device
    before the refusal (FakeLab applies lines one by one and stops at the refused one)."""
    lab = FakeLab(DEFAULT_TOPOLOGY, reject=[r"^bogus"])
    a = template_class()(lab)
    res = a.call("configure", {"device": "r1", "lines": [LINE, "bogus-statement 1"]})
    assert not res.ok and res.error.code == "rolled_back" and res.data["undone"] == [LINE]
    sent = [argv for node, argv in lab.calls if "configure terminal" in argv]
    assert sent == [["vtysh", "-c", "configure terminal", "-c", LINE, "-c", "bogus-statement 1"],
                    ["vtysh", "-c", "configure terminal", "-c", f"no {LINE}"]]
    assert LINE not in lab.running_config("r1")
