"""docs/frameworks.md's runnable example runs as written, on a lab it starts itself."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_the_frameworks_example_runs(lab_host, run_doc_example):
    lines = run_doc_example("frameworks.md", "frameworks").splitlines()
    assert lines == [
        "['ani', 'ani:a1', 'destructive']",
        "success True",
        "error unknown_device",
        "{'ani_level': 'a1', 'read_only': False, 'destructive': True}",
        "True ['devices']",
        "True",
        "True",
        "Routing entry for 100.64.255.1/32",
    ]
