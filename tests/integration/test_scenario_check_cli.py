"""``ani scenario generate`` + ``ani lab up`` + ``ani scenario check`` as a user runs them (real
processes, real FRR): the generated default comes up with every invariant holding, a withdrawn
announcement fails the check (exit 1, naming the invariant), another scenario's file is refused
(exit 2)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ani.lab import Lab
from ani.lab.cleanup import exists
from ani.scenario.manifest import load_scenario

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ANI = [sys.executable, "-m", "ani.cli"]


def ani(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ANI, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


@pytest.fixture
def lab_id():
    lid = "chk" + uuid.uuid4().hex[:4]
    yield lid
    if exists(lid):
        Lab.down_id(lid)


def test_generated_default_up_and_checked_then_a_withdrawal_fails_the_check(lab_id, tmp_path):
    out = tmp_path / "default-s7.yaml"
    gen = ani("scenario", "generate", "scenarios/default.yaml", "--seed", "7", "--out", str(out))
    assert gen.returncode == 0, gen.stderr
    scenario = load_scenario(out)
    assert scenario.hash in gen.stdout
    up = ani("lab", "up", str(out), "--lab", lab_id)
    assert up.returncode == 0, up.stderr
    ok = ani("scenario", "check", str(out), "--lab", lab_id)
    n = len(scenario.invariants)
    assert ok.returncode == 0 and f"{n}/{n} invariants hold" in ok.stdout, ok.stdout + ok.stderr

    # withdraw one site's announcement at its edge: its route invariant on the reflector fails
    tenant, site = scenario.sites[0]
    lab = Lab.attach(lab_id)
    cfg = lab.running_config(site.edge)
    seq = next(ln.split()[4] for ln in cfg.splitlines()
               if ln.startswith("ip prefix-list PL-TENANTS seq ") and ln.endswith(f" {site.prefix}"))
    res = lab.vtysh(site.edge, ["configure terminal", f"no ip prefix-list PL-TENANTS seq {seq}"])
    assert res.rc == 0, res.stderr
    route = next(c for c in scenario.invariants if c.kind == "route" and c.prefix == site.prefix)
    deadline = time.monotonic() + 20
    while str(site.prefix) in lab.vtysh(route.router, f"show ip route {site.prefix}").stdout:
        assert time.monotonic() < deadline, f"{site.prefix} still on {route.router}"
        time.sleep(0.2)
    bad = ani("scenario", "check", str(out), "--lab", lab_id, "--bound", "2")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert f"FAIL {route.name}" in bad.stdout
    held = int(re.search(rf"(\d+)/{n} invariants hold", bad.stdout).group(1))
    assert held < n

    # a file the lab was not started from: bad input, not a failed check
    other = ani("scenario", "check", "scenarios/brownfield-small.yaml", "--lab", lab_id)
    assert other.returncode == 2 and "was it started from another file" in other.stderr, other.stderr
