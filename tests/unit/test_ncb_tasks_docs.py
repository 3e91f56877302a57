"""docs/netconfbench-tasks.md: the catalogue example runs as written (no lab) and prints one line
per shipped task and the name map the page shows for the task written with NetConfBench's
own names."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_catalogue_example(run_doc_example):
    out = run_doc_example("netconfbench-tasks.md", "catalogue", timeout=120).splitlines()
    stems = sorted(p.stem for p in (ROOT / "intents" / "netconfbench").glob("*.json"))
    assert [ln.split(":")[0] for ln in out[:len(stems)]] == stems
    assert "bgp-local-preference: 3 routers, 2 testcases ['command', 'route']" in out
    assert out[len(stems):] == [
        "{'NewYork': 'newyork', 'Washington': 'washington'}",
        "{'Gi0/0': 'gi0-0', 'Gi0/1': 'gi0-1'}",
        "['newyork', 'washington']",
    ]
