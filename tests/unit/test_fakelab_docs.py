"""docs/vendor-adapter.md's FakeLab example runs as written (no lab needed)."""

from __future__ import annotations


def test_fakelab_example_runs(run_doc_example):
    out = run_doc_example("vendor-adapter.md", "fakelab", timeout=120).splitlines()
    assert out == [
        "1 % Unknown command: bogus 1",
        "+ip route 192.0.2.0/24 Null0",
        "S>* 192.0.2.0/24 [1/0] unreachable (blackhole)",
        "('r1', ['vtysh', '-c', 'show ip route'])",
    ]
