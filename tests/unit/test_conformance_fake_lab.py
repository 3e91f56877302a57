"""The template vendor package's own conformance tests (adapters/_template/tests), on
ani.testing.FakeLab, with the adapter loaded from the template's source instead of through the
registry: the unit-test path a vendor's CI takes, kept green in ani's own suite. The installed
package, selected through the registry, on FakeLab and on a real lab:
tests/integration/test_conformance_template.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from ani.testing import FakeLab
from ani.testing.fake_lab import DEFAULT_TOPOLOGY


TEMPLATE = Path(__file__).resolve().parents[2] / "adapters" / "_template"


def _load(name: str, path: Path):  # noqa: ANN202
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_vendor_tests = _load("template_conformance_tests", TEMPLATE / "tests" / "test_myvendor_conformance.py")
LINE = _vendor_tests.LINE


def template_class():
    if str(TEMPLATE / "src") not in sys.path:
        sys.path.insert(0, str(TEMPLATE / "src"))
    from ani_myvendor.adapter import MyVendorAdapter

    return MyVendorAdapter


class TestTemplateOnFakeLab(_vendor_tests.MyVendorChecks):
    @pytest.fixture
    def lab(self):
        return FakeLab(DEFAULT_TOPOLOGY, reject=[r"^bogus"])

    @pytest.fixture
    def make_adapter(self, lab):
        cls = template_class()
        return lambda: cls(lab, options={"timeout_s": 10})


def test_the_failing_change_really_applied_a_line_first():
    """The template's rollback is exercised, not skipped: its first line reaches the device
    before the refusal (FakeLab applies lines one by one and stops at the refused one)."""
    lab = FakeLab(DEFAULT_TOPOLOGY, reject=[r"^bogus"])
    a = template_class()(lab)
    res = a.call("configure", {"device": "r1", "lines": [LINE, "bogus-statement 1"]})
    assert not res.ok and res.error.code == "rolled_back" and res.data["undone"] == [LINE]
    sent = [argv for _node, argv in lab.calls if "configure terminal" in argv]
    assert sent == [["vtysh", "-c", "configure terminal", "-c", LINE, "-c", "bogus-statement 1"],
                    ["vtysh", "-c", "configure terminal", "-c", f"no {LINE}"]]
    assert LINE not in lab.running_config("r1")
