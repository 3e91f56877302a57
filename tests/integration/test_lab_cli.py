"""``ani lab up|status|exec|down`` as a user runs them (real processes, real FRR)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from ani.lab import Lab
from ani.lab.cleanup import exists
from ani.lab.netns import list_netns

pytestmark = pytest.mark.integration

TRI = Path(__file__).parent.parent / "data" / "tri-ospf-ibgp.yaml"
ANI = [sys.executable, "-m", "ani.cli"]


def ani(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ANI, *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def cli_lab_id():
    lab_id = "cli" + uuid.uuid4().hex[:4]  # unique: two suites on one machine must not collide
    yield lab_id
    if exists(lab_id):
        Lab.down_id(lab_id)


def test_up_exec_status_down(cli_lab_id, tmp_path):
    # a scenario file: the topology under a `topology:` key (validated whole, as `ani run` reads it)
    scen = tmp_path / "scenario.yaml"
    scen.write_text(yaml.safe_dump({"name": "s", "tenants": {}, "topology": yaml.safe_load(TRI.read_text())}))
    up = ani("lab", "up", str(scen), "--lab", cli_lab_id)
    assert up.returncode == 0, up.stderr
    assert f"lab {cli_lab_id} up and converged" in up.stdout
    assert f"ani-{cli_lab_id}-r2" in up.stdout
    # detached: it outlived the `ani lab up` process
    assert f"ani-{cli_lab_id}-h1" in list_netns()

    res = ani("lab", "exec", "--lab", cli_lab_id, "r2", "--", "vtysh", "-c", "show running-config")
    assert res.returncode == 0, res.stderr
    assert "hostname r2\n" in res.stdout and "bgp router-id 10.255.0.2" in res.stdout
    assert "hostname r1" not in res.stdout and "hostname r3" not in res.stdout

    res = ani("lab", "exec", "r1", "--lab", cli_lab_id, "--", "sh", "-c", "hostname; echo e >&2; exit 7")
    assert (res.returncode, res.stdout, res.stderr) == (7, "r1\n", "e\n")

    res = ani("lab", "exec", "--lab", cli_lab_id, "--timeout", "1", "h1", "--", "sleep", "10")
    assert res.returncode == 124 and "timed out" in res.stderr

    res = ani("lab", "exec", "--lab", cli_lab_id, "zz", "--", "true")
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        f"error: lab {cli_lab_id}: unknown node 'zz'; known: r1, r2, r3, h1, h2"
    ]

    st = ani("lab", "status")
    assert st.returncode == 0 and cli_lab_id in st.stdout and "detached" in st.stdout
    st = ani("lab", "status", cli_lab_id)
    assert st.returncode == 0 and "bgpd" in st.stdout and "(down)" not in st.stdout

    # a stale sweep leaves a detached lab alone
    assert ani("lab", "down", "--stale").returncode == 0
    assert exists(cli_lab_id)

    down = ani("lab", "down", cli_lab_id)
    assert down.returncode == 0 and f"lab {cli_lab_id} removed" in down.stdout
    assert not exists(cli_lab_id)
    assert not [n for n in list_netns() if n.startswith(f"ani-{cli_lab_id}-")]

    again = ani("lab", "down", cli_lab_id)
    assert again.returncode == 2 and again.stderr.startswith(f"error: no lab '{cli_lab_id}'")
    assert "Traceback" not in again.stderr


def test_errors_are_one_line_without_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    data = yaml.safe_load(TRI.read_text())
    data["links"][0]["b"]["node"] = "r9"
    bad.write_text(yaml.safe_dump(data))
    res = ani("lab", "up", str(bad))
    assert res.returncode == 2
    assert "links.0.b.node: unknown node 'r9'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr

    res = ani("lab", "up", str(tmp_path / "missing.yaml"))
    assert res.returncode == 2 and "cannot read" in res.stderr

    res = ani("lab", "up", str(TRI), "--lab", "Not_Valid")  # bad input: 2, as every command (was 1)
    assert res.returncode == 2 and "must match" in res.stderr and "Traceback" not in res.stderr
    res = ani("lab", "up", str(TRI), "--id", "Not_Valid")  # the old name still works, and says so
    assert res.returncode == 2 and res.stderr.startswith("warning: --id is deprecated: use --lab\n")

    for bound in ("0", "-1", "nan"):  # refused before any lab is built (before: -1 built one)
        res = ani("lab", "up", str(TRI), "--timeout", bound)
        assert res.returncode == 2 and res.stderr.strip() == (
            f"error: --timeout: the convergence bound must be > 0 seconds, got {float(bound):g}")

    res = ani("lab", "status", "nosuchlab")
    assert res.returncode == 2 and "no lab 'nosuchlab'" in res.stderr

    res = ani("lab", "exec", "--lab", "nosuchlab", "r1", "--", "true")
    assert res.returncode == 2 and "no lab 'nosuchlab'" in res.stderr


def test_lab_up_of_a_netconfbench_task_starts_its_network_for_the_evaluation_commands(cli_lab_id):
    """``ani lab up TASK.json`` (issue 23 §6: it said "a scenario manifest" and suggested a
    command that failed): the task's routers with their startup configs, in the lab's names,
    and the commands that evaluate it on that lab, which work as printed."""
    task = Path(__file__).parent.parent.parent / "intents" / "netconfbench" / "static-backup.json"
    up = ani("lab", "up", str(task), "--lab", cli_lab_id)
    assert up.returncode == 0, up.stderr
    out = " ".join(up.stdout.split())
    assert f"lab {cli_lab_id} (static-backup)" in out and f"ani-{cli_lab_id}-r2" in out
    assert (f"the task's testcases: ani tasks run-testcases {task} --lab {cli_lab_id}; "
            f"its configurations: ani tasks final-cfg --lab {cli_lab_id}") in out
    cfg = ani("tasks", "final-cfg", "--lab", cli_lab_id)
    assert cfg.returncode == 0, cfg.stderr
    configs = json.loads(cfg.stdout)["configs"]
    assert sorted(configs) == ["r1", "r2"] and "192.0.2.1" in configs["r1"]  # r1's startup config
    down = ani("lab", "down", cli_lab_id)
    assert down.returncode == 0 and not exists(cli_lab_id)
