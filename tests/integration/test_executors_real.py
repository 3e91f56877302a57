"""The same plans through every executor, on real FRR labs, as a user runs them (issue 24 §2):
``ani campaign run`` serially (--jobs 1), with --jobs 3 and on a two-worker Dask LocalCluster
(--executor dask --scheduler local:2) give the same verdict for every run id; plan.jsonl is the
same plan each time; ``ani campaign rerun`` reproduces a recorded verdict; no lab is left. The
commands run two at a time in a module fixture (at most three labs at once)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ani.campaign.plan import read_plans
from ani.campaign.results import read_runs

# timeout: the fixture runs the module's commands in the first test's setup
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

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


def _run(campaign: Path, name: str, *extra: str, said: str | None = None) -> Path:
    out = campaign.parent / name
    res = _ani("campaign", "run", str(campaign), "--out", str(out), "--no-progress", "--lab-prefix", PREFIX, *extra)
    assert res.returncode == 0, (name, res.stdout[-3000:], res.stderr[-3000:])
    assert said is None or said in res.stdout, res.stdout[:2000]
    return out


def _rerun(serial: Path, again: Path) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """``ani campaign rerun`` of the serial folder's a1 run, and of a run id it does not hold."""
    return (_ani("campaign", "rerun", str(serial), "a1-onboard-site-s2", "--out", str(again)),
            _ani("campaign", "rerun", str(serial), "nope"))


def _catch(fn: Any, *args: Any, **kw: Any) -> Any:
    try:
        return fn(*args, **kw)
    except Exception as exc:  # noqa: BLE001 - raised again by the test that reads it
        return exc


@pytest.fixture(scope="module")
def done(campaign) -> dict[str, Any]:
    """What the executors gave, two commands at a time, at most three labs at once (issue 28 §4:
    one after the other the four commands took a worker 125 s, mostly waiting on FRR): first the
    serial reference (--jobs 1: one lab) beside the two-worker Dask LocalCluster (two labs), then
    --jobs 3 (two labs) beside ``ani campaign rerun`` of a serial run (one lab). ``{"serial",
    "dask", "jobs3": the folder, "rerun": both reruns' results}``, or what each raised."""
    from conftest import _require_lab_host

    _require_lab_host()
    with ThreadPoolExecutor(1) as pool:
        dask = pool.submit(_catch, _run, campaign, "dask", "--executor", "dask", "--scheduler", "local:2",
                           said="--executor dask: 2 at once (the workers' 'labs' resource, a LocalCluster here)")
        serial = _catch(_run, campaign, "serial", "--jobs", "1")
        out: dict[str, Any] = {"serial": serial, "dask": dask.result()}
    with ThreadPoolExecutor(1) as pool:
        jobs3 = pool.submit(_catch, _run, campaign, "jobs3", "--jobs", "3")
        out["rerun"] = serial if isinstance(serial, Exception) else _catch(_rerun, serial, campaign.parent / "rerun")
        out["jobs3"] = jobs3.result()
    return out


def _got(done: dict[str, Any], *names: str) -> list[Any]:
    """``done``'s values of ``names``; raises what one of them raised."""
    for name in names:
        if isinstance(done[name], Exception):
            raise done[name]
    return [done[n] for n in names]


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


def test_jobs_3_gives_the_serial_verdicts(done):
    serial, jobs3 = _got(done, "serial", "jobs3")
    _same_as_serial(serial, jobs3)
    status = _ani("lab", "status", "--prefix", PREFIX)
    assert status.returncode == 0 and f"no labs of prefix {PREFIX}" in status.stdout, status.stdout  # none left


def test_a_two_worker_dask_cluster_gives_the_serial_verdicts(done):
    _same_as_serial(*_got(done, "serial", "dask"))


def test_rerun_reproduces_a_recorded_verdict(done, campaign):
    serial, (res, nope) = _got(done, "serial", "rerun")
    again = campaign.parent / "rerun"
    assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
    assert "recorded: clean_success: matches" in res.stdout
    assert _verdicts(again)["a1-onboard-site-s2"] == _verdicts(serial)["a1-onboard-site-s2"]
    assert nope.returncode == 2 and "no run 'nope'" in nope.stderr
