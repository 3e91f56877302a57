"""docs/sot.md: the A3-R adapter's worked example (``<!-- example:a3r -->``) runs as written on a
real lab, and prints what the page says it prints."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_a3r_example_runs(make_lab, run_doc_example):  # noqa: ANN001
    del make_lab  # only for its capability check
    out = run_doc_example("sot.md", "a3r", timeout=300)
    lines = out.splitlines()
    assert any(ln.startswith("devices/e1.json: changed in the working tree") for ln in lines), out
    assert "converged at" in out and "1 apply(s), changed e1" in out
    assert "0 apply(s), nothing sent to any router" in out
    assert "invalid_intent | patch refused, nothing changed: operation 0 ('add' /bgp/neighbors/100.64.255.1/timers/keepalive)" in out
    assert "missing parent: /bgp/neighbors/100.64.255.1/timers does not exist" in out
    assert "conflict {'expected':" in out
    assert "e2 /prefix_lists/PL-TENANTS/entries/99 unexpected" in out
    assert "e2: - ip prefix-list PL-TENANTS seq 99 deny any" in out
    assert "1 apply(s), changed e2" in out
    assert any(ln.startswith("reverted ") and "changed e1" in ln for ln in lines), out
