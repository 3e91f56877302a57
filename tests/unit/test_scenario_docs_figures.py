"""docs/scenarios.md's table of shipped manifests says what the generator makes (issue 23 §6: it
said 156 and 849 invariants where ``ani scenario generate --seed 7`` prints 164 and 861): each
row's routers, links, density, sites (+ shared-service hosts) and invariants at seed 7 are
checked against :func:`ani.scenario.generate.generate`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ani.scenario.generate import generate, load_manifest

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `(scenarios/[\w.-]+\.yaml)` \| (\d+): [^|]* \| (\d+): [^|]* \| [^|]* \| (\d+) \| "
                 r"(\d+) \(\+ (\d+) shared-service hosts\) \| (\d+) \|$", re.M)
ROWS = ROW.findall((ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8"))


def test_the_table_has_a_row_per_shipped_manifest():
    assert sorted(r[0] for r in ROWS) == ["scenarios/default.yaml", "scenarios/pilot-25.yaml"]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_each_row_is_what_the_generator_makes_at_seed_7(row):
    path, routers, links, density, sites, shared, invariants = row
    manifest = load_manifest(ROOT / path)
    data = generate(manifest, seed=7)
    topo = data["topology"]
    assert (len(topo["routers"]), len(topo["links"]), manifest.density, len(topo["hosts"]), len(data["invariants"])) == (
        int(routers), int(links), int(density), int(sites) + int(shared), int(invariants))
