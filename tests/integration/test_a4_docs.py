"""docs/a4.md's worked example runs as written on a real lab (so the page cannot rot)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_a4_docs_example_runs(make_lab, run_doc_example):
    del make_lab  # only for its capability check (skips on hosts without a lab)
    lines = run_doc_example("a4.md", "a4").splitlines()
    assert lines[0] == "['e1']"
    assert lines[1].startswith("services/discard-192.0.2.0.json: changed in the working tree")
    assert lines[2] == "True converged ['e1']"
    assert lines[3] == "['lock', 'edit', 'validate', 'commit', 'confirm', 'unlock']"
    assert lines[4] == "True True ['static-route/e1/192.0.2.0/24/Null0']"
    assert lines[5] == "['ip route 192.0.2.0/24 Null0 200']"
    assert lines[6] == "True"
    assert lines[7] == "invalid_intent services/peer.json:route_map_in"
    assert lines[8] == ("patch refused, nothing changed: services/peer.json: route_map_in: unknown-reference: "
                        "e1: unknown route-map 'RM-UNDEF'; known: RM-TENANTS-OUT")
    assert lines[9] == "True converged ['-static-route/e1/192.0.2.0/24/Null0']"
    assert lines[10] == "[]"
    assert lines[11].startswith("no drift: c1, c2, e1, e2, e3, e4 match(es) HEAD ")
    assert len(lines) == 12
