"""The same plans through every executor, on real FRR labs, as a user runs them (issue 24 §2):
``ani campaign run`` serially (--jobs 1), with --jobs 3 and on a two-worker Dask LocalCluster
(--executor dask --scheduler local:2) give the same verdict for every run id; plan.jsonl is the
same plan each time; ``ani campaign rerun`` reproduces a recorded verdict; no lab is left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ani.campaign.plan import read_plans
from ani.campaign.results import read_runs

pytestmark = pytest.mark.integration

ANI = [sys.executable, "-m", "ani.cli"] if not Path(sys.executable).with_name("ani").exists() else [
    str(Path(sys.executable).with_name("ani"))]
PREFIX = "it-exec"


def _ani(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([*ANI, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False)


def _verdicts(out: Path) -> dict[str, tuple]:
    """run id -> what must not depend on the executor (timings aside)."""
    return {r.run_id: (r.label, r.success, r.damage_free, tuple((t.name, t.passed) for t in r.tests),
                       tuple((i.name, i.passed) for i in r.invariants), r.scenario_hash, r.tool_calls)
            for r in read_runs(out)}


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    root = tmp_path_factory.mktemp("exec")
    camp = root / "c.yaml"
    camp.write_text(
        "name: it-exec\n"
        f"scenario: {Path('scenarios/brownfield-small.yaml').resolve()}\n"
        "task: onboard-site\n"
        "variants: 1\n"
        "seed: 2\n"
        "agent: {kind: scripted}\n"
        "cells:\n"
        "  - {name: a1, level: a1}\n"
        "  - {name: a3t, level: a3t}\n"
    )
    return camp


@pytest.fixture(scope="module")
def serial(campaign) -> Path:
    """The campaign run serially (--jobs 1): the reference."""
    return _run(campaign, "serial", "--jobs", "1")


def _run(campaign: Path, name: str, *extra: str, said: str | None = None) -> Path:
    out = campaign.parent / name
    res = _ani("campaign", "run", str(campaign), "--out", str(out), "--no-progress", "--lab-prefix", PREFIX, *extra)
    assert res.returncode == 0, (name, res.stdout[-3000:], res.stderr[-3000:])
    assert said is None or said in res.stdout, res.stdout[:2000]
    return out


def _same_as_serial(serial: Path, out: Path) -> None:
    plans = [p.model_dump() for p in read_plans(out)]
    assert plans == [p.model_dump() for p in read_plans(serial)]
    assert [p["run_id"] for p in plans] == ["a1-onboard-site-s2", "a3t-onboard-site-s2"]
    verdicts = _verdicts(out)
    assert sorted(verdicts) == sorted(p["run_id"] for p in plans)  # each run id once
    assert verdicts == _verdicts(serial)
    assert {v[0] for v in verdicts.values()} == {"clean_success"}
    for r in read_runs(out):  # the trajectories are in the folder (Dask: brought back from a temporary one)
        assert Path(r.trajectory).parent == out / "trajectories"
        assert sum(1 for line in open(r.trajectory) if json.loads(line)["event"] == "tool_call") == r.tool_calls


def test_jobs_3_gives_the_serial_verdicts(lab_host, campaign, serial):
    _same_as_serial(serial, _run(campaign, "jobs3", "--jobs", "3"))
    status = _ani("lab", "status", "--prefix", PREFIX)
    assert status.returncode == 0 and f"no labs of prefix {PREFIX}" in status.stdout, status.stdout  # none left


def test_a_two_worker_dask_cluster_gives_the_serial_verdicts(lab_host, campaign, serial):
    _same_as_serial(serial, _run(campaign, "dask", "--executor", "dask", "--scheduler", "local:2",
                                 said="--executor dask: 2 at once (the workers' 'labs' resource, a LocalCluster here)"))


def test_rerun_reproduces_a_recorded_verdict(lab_host, campaign, serial):
    again = campaign.parent / "rerun"
    res = _ani("campaign", "rerun", str(serial), "a1-onboard-site-s2", "--out", str(again))
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    assert "recorded: clean_success: matches" in res.stdout
    assert _verdicts(again)["a1-onboard-site-s2"] == _verdicts(serial)["a1-onboard-site-s2"]
    res = _ani("campaign", "rerun", str(serial), "nope")
    assert res.returncode == 2 and "no run 'nope'" in res.stderr
