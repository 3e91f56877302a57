"""A program missing from the host, for real (issue 11, section 1, "must show"): hidden in a
private mount namespace (tests/hide.py; nothing is uninstalled, the machine is shared).

- ``ani doctor`` names frr-pythontools and the levels frr-reload.py's absence breaks;
- ``ani campaign run`` and ``ani run`` stop with exit 2 and one line before the first lab
  (``ani mcp serve`` refuses the level too);
- a run that meets the fault mid-way (the program is there when the lab comes up and hidden
  when the agent starts: the campaign runs in the private namespace) is an infrastructure error
  naming the cause, at A3-R (frr-reload runs in the runner's process: a ``harness_fault``
  event) and at A2 (it runs in the lab's NETCONF server: the lab's fault log); with the program
  back, ``ani campaign run --resume`` reruns exactly those runs and they pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hide import HIDE_SCRIPT, hidden, remove_side, side_dir
from procs import labs_owned_by, owner

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ANI = str(Path(sys.executable).with_name("ani"))
FRR = "/usr/lib/frr"
RELOAD = ["frr-reload.py", "frr-reload"]  # frr-reload is a symlink to frr-reload.py
MISSING = "/usr/lib/frr/frr-reload.py is missing (apt-get install frr-pythontools)"


@pytest.fixture
def side():
    d = side_dir()
    yield d
    remove_side(d)  # empty outside the namespace


def _run(argv: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``argv``; ``.owner`` is its process as a lab state names its owner (PID and start
    time, taken while it runs: the wrappers exec, so it is the ani / python process itself)."""
    with subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env={**os.environ, "COLUMNS": "200"}) as p:
        who = owner(p.pid)
        out, err = p.communicate(timeout=timeout)
    res = subprocess.CompletedProcess(argv, p.returncode, out, err)
    res.owner = who  # type: ignore[attr-defined]
    return res


def _labs_left_by(who: tuple[int, int | None]) -> list[str]:
    """Ids of labs on this machine whose owner was ``who`` (PID and start time: other people's
    labs are not counted, even one whose dead owner had the same PID)."""
    return sorted(labs_owned_by({who}))


def test_doctor_names_the_package_and_the_levels_it_breaks(lab_host, side):
    res = _run(hidden([ANI, "doctor"], FRR, RELOAD, side))
    assert res.returncode == 1, res.stdout + res.stderr
    out = " ".join(res.stdout.split())
    assert f"missing: {MISSING}: breaks a1, a2, a3t, a3r, a4" in out
    assert "fix: apt-get install frr-pythontools" in out
    assert "levels that can run here: a0; cannot: a1, a2, a3t, a3r, a4" in out
    assert _run(hidden([ANI, "doctor", "--level", "a0"], FRR, RELOAD, side)).returncode == 0
    # outside the namespace nothing was hidden
    assert os.path.exists(f"{FRR}/frr-reload.py") and _run([ANI, "doctor"]).returncode == 0


def test_campaign_run_and_run_stop_before_the_first_lab(lab_host, side, tmp_path):
    """Stopped before the results folder is made, which comes before the first lab."""
    out = tmp_path / "res"
    res = _run(hidden([ANI, "campaign", "run", "campaigns/level-sweep.yaml", "--out", str(out)], FRR, RELOAD, side))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip() == (
        f"error: cells a1, a1+blocklist, a2, a3t, a3r, a4 cannot run on this machine: {MISSING}; "
        "see 'ani doctor'")
    assert not out.exists()
    res = _run(hidden([ANI, "run", "--level", "a2", "--out", str(tmp_path / "one")], FRR, RELOAD, side))
    assert res.returncode == 2 and res.stderr.strip() == (
        f"error: cell a2 cannot run on this machine: {MISSING}; see 'ani doctor'")
    assert not (tmp_path / "one").exists() and "starting the lab" not in res.stdout
    # ani mcp serve refuses the level before it looks for the lab
    res = _run(hidden([ANI, "mcp", "serve", "--lab", "nosuch", "--level", "a2"], FRR, RELOAD, side), timeout=60)
    assert res.returncode == 1 and res.stderr.strip() == (
        f"error: cannot open the adapter: level a2 cannot run on this machine: {MISSING}; see 'ani doctor'")


#: run inside the private namespace: the agent hides frr-reload.py once its lab is up
MID_RUN = r"""
import subprocess, sys
from ani.campaign.loop import run_campaign
from ani.campaign.runner import RunnerDeps, _real_create_agent
from ani.campaign.spec import load_spec

camp, out, side, script = sys.argv[1:5]
hidden = []

class HidingAgent:
    def __init__(self, inner):
        self.inner = inner

    def run(self, task, adapter, budget):
        if not hidden:  # once per namespace
            subprocess.run(["sh", "-c", script, "hide", "/usr/lib/frr", side, "frr-reload.py", "frr-reload"],
                           check=True)
            hidden.append(True)
        return self.inner.run(task, adapter, budget)

deps = RunnerDeps(create_agent=lambda cfg: HidingAgent(_real_create_agent(cfg)))
res = run_campaign(load_spec(camp), out, progress=False, deps=deps, source=camp)
sys.exit(3 if res.infra else 0)
"""


def test_a_fault_met_mid_run_is_an_infra_error_and_resume_reruns_it(lab_host, side, tmp_path):
    camp = tmp_path / "c.yaml"
    camp.write_text(
        f"name: midrun\nscenario: {ROOT}/scenarios/brownfield-small.yaml\ntask: onboard-site\n"
        "variants: 1\nseed: 1\nagent: {kind: scripted}\nbudget: {max_steps: 40, wall_clock_s: 300}\n"
        "cells:\n  - {name: a3r, level: a3r}\n  - {name: a2, level: a2}\n"
    )
    script = tmp_path / "midrun.py"
    script.write_text(MID_RUN)
    out = tmp_path / "res"
    res = _run(["unshare", "--mount", "--propagation", "private", sys.executable, str(script), str(camp),
                str(out), side, HIDE_SCRIPT])
    assert res.returncode == 3, res.stdout[-3000:] + res.stderr[-3000:]
    assert os.path.exists(f"{FRR}/frr-reload.py")  # hidden only in that namespace
    recs = {json.loads(ln)["run_id"]: json.loads(ln) for ln in (out / "runs.jsonl").read_text().splitlines()}
    a3r, a2 = recs["a3r-onboard-site-s1"], recs["a2-onboard-site-s1"]
    for r in (a3r, a2):
        assert r["label"] == "infra_error" and r["success"] is None and r["tests"] == []
        assert MISSING in r["infra_error_reason"] and r["infra_error_reason"].startswith("host fault during the run: ")
    # A3-R met it in this process: the adapter's call said internal and logged a harness_fault
    events = [json.loads(ln) for ln in Path(a3r["trajectory"]).read_text().splitlines()]
    faults = [e for e in events if e["event"] == "harness_fault"]
    assert faults and faults[0]["kind"] == "program_missing" and faults[0]["cause"] == MISSING
    assert any(e["event"] == "tool_call" and e["error_code"] == "internal" and e["tool"] == faults[0]["tool"]
               for e in events)
    md = (out / "summary.md").read_text()
    assert "## Infrastructure errors (excluded from the rates)" in md and MISSING in md
    assert "| a3r | a3r | - | 0 | 1 |" in md and "| a2 | a2 | - | 0 | 1 |" in md
    assert _labs_left_by(res.owner) == []  # both labs are gone

    # the program is back (this is the host's namespace): --resume reruns both, and they pass
    res = _run([ANI, "campaign", "run", str(camp), "--resume", str(out), "--no-progress"])
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    lines = (out / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 4  # two infra errors, then their reruns
    final = {json.loads(ln)["run_id"]: json.loads(ln)["label"] for ln in lines}
    assert final == {"a3r-onboard-site-s1": "clean_success", "a2-onboard-site-s1": "clean_success"}
    assert _labs_left_by(res.owner) == []


def test_doctor_names_each_package_whose_programs_are_gone(lab_host, tmp_path):
    """As after purging the set-up's packages (the must-show of issue 11), simulated: every file of
    /usr/lib/frr, and vtysh, nft, ping, bwrap and git are hidden; ani doctor names each package,
    and the install line holds them all."""
    sides = [side_dir() for _ in range(3)]
    try:
        argv = [ANI, "doctor"]
        argv = hidden(argv, "/usr/sbin", ["nft"], sides[0])
        argv = hidden(argv, "/usr/bin", ["vtysh", "ping", "bwrap", "git"], sides[1])
        argv = hidden(argv, FRR, sorted(os.listdir(FRR)), sides[2])
        res = _run(argv)
    finally:
        for d in sides:
            remove_side(d)
    assert res.returncode == 1, res.stdout + res.stderr
    out = " ".join(res.stdout.split())
    for prog, pkg in (("/usr/lib/frr/zebra", "frr"), ("/usr/bin/vtysh", "frr"),
                      ("/usr/lib/frr/frr-reload.py", "frr-pythontools"), ("nft", "nftables"),
                      ("ping", "iputils-ping"), ("bwrap", "bubblewrap"), ("git", "git")):
        assert f"missing: {prog} is missing (apt-get install {pkg})" in out, prog
    assert "fix: apt-get install bubblewrap frr frr-pythontools git iputils-ping nftables" in out
    assert "levels that can run here: none; cannot: a0, a1, a2, a3t, a3r, a4" in out


def test_a_missing_git_is_one_line_too_not_gitpythons_import_error(lab_host, tmp_path):
    """GitPython refuses to import without git; the A3-R adapter is imported before the host
    check, which must still be the one that speaks."""
    side = side_dir()
    try:
        res = _run(hidden([ANI, "run", "--level", "a3r", "--out", str(tmp_path / "o")], "/usr/bin", ["git"], side))
    finally:
        remove_side(side)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip() == "error: cell a3r cannot run on this machine: git is missing (apt-get install git); see 'ani doctor'"
