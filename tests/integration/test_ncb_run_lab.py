"""Part 2 of issue 15 on real FRR labs (every shipped task's validation, part 2's among them, is
test_ncb_shipped_tasks.py's): a task whose names are mapped validates and shows its original names through get_topology; the scripted agent's
runs at a1 and a2 end with every testcase passing; a campaign over two tasks with the level as
the factor; the Task Evaluation Interface's CLI over a running lab."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ani.campaign.spec import parse_spec
from ani.lab.lab import Lab
from ani.netconfbench.evaluate import export_final_cfg, run_testcases
from ani.netconfbench.lab import apply_solution, task_scenario, validate_task
from ani.netconfbench.task import load_task

pytestmark = pytest.mark.integration
LAB_SSH = True  # conftest's make_lab / module_lab: the tests use the lab's SSH server

ROOT = Path(__file__).parents[2]
SHIPPED = ROOT / "intents" / "netconfbench"
NAMES = ROOT / "tests" / "data" / "ncb-run" / "names-map.json"


def _labs(prefix: str):  # validate_task's labs: vtysh only, as its default lab
    return lambda topology: Lab(topology, lab_id=prefix + secrets.token_hex(3), netconf=False, ssh=False)


TWO_TASKS = [str(SHIPPED / "static-backup.json"), str(SHIPPED / "ospf-area-adjacency.json")]
PREFIX_LIST_TASK = SHIPPED / "bgp-prefix-list-filter.json"


def _scripted_run(level: str, out: Path):  # noqa: ANN202
    from ani.campaign.runner import run_one

    spec = parse_spec({"name": "ncb", "tasks": str(SHIPPED / "static-backup.json"),
                       "cells": [{"name": level, "level": level}]}, "test", ROOT)
    return run_one(spec, level, 0, out), out


def _levels_campaign(out: Path) -> Path:
    from ani.campaign.loop import run_campaign

    spec = parse_spec({"name": "ncb-levels", "tasks": TWO_TASKS, "factor": "level",
                       "cells": [{"name": "a1", "level": "a1"}, {"name": "a2", "level": "a2"}]}, "test", ROOT)
    run_campaign(spec, out / "out", progress=False)
    return out / "out"


def _cli_run_a2(out: Path):  # noqa: ANN202
    ani = Path(sys.executable).parent / "ani"
    res = subprocess.run([str(ani), "run", "--task-file", str(PREFIX_LIST_TASK), "--level", "a2", "--out", str(out)],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    return res, out


@pytest.fixture(scope="module", autouse=True)
def background(request, tmp_path_factory) -> Iterator[dict[str, Future]]:  # noqa: ANN001
    """The module's four runs that share nothing with the other tests, three at a time in threads
    while the tests that hold a lab of their own go on (issue 28 §4: one after the other they
    took three of this file's four minutes, mostly waiting on FRR): the campaign over two tasks
    with the level as the factor (in this process, as before), ``ani run`` at a2 (a subprocess),
    and the scripted runs at a1 and a2. ``{name: future}``; a test takes its result (an
    exception of the run is raised in that test); only the runs of the tests selected (``-k``).
    Waits for every run at the module's end."""
    from conftest import _require_lab_host

    _require_lab_host()
    jobs = {  # name: (its test, the job)
        "campaign": ("test_campaign_over_tasks_with_the_level_as_factor", _levels_campaign),
        "cli-a2": ("test_cli_run_at_a2_solves_the_bgp_prefix_list_task", _cli_run_a2),
        "a1": ("test_scripted_run_passes_every_testcase[a1]", lambda out: _scripted_run("a1", out)),
        "a2": ("test_scripted_run_passes_every_testcase[a2]", lambda out: _scripted_run("a2", out)),
    }
    selected = {item.name for item in request.session.items}
    with ThreadPoolExecutor(3) as pool:
        yield {name: pool.submit(job, tmp_path_factory.mktemp("ncb-" + name))
               for name, (test, job) in jobs.items() if test in selected}


def test_mapped_names_validate_and_show_in_get_topology(make_lab, open_adapter):
    task = load_task(NAMES)
    report = validate_task(task, NAMES, make_lab=_labs("ncbn"))
    assert report.ok, report.summary()
    assert report.names.nodes == {"NewYork": "newyork", "Washington": "washington"}

    from ani.registry import create_adapter

    lab = make_lab(task_scenario(task, source=NAMES).topology, lab_id="ncbt" + secrets.token_hex(3))
    adapter = open_adapter(create_adapter("a1", lab))
    res = adapter.call("get_topology", {})
    assert res.ok, res.text
    assert "newyork (task: NewYork)" in res.text
    assert "newyork gi0-0 (task: GigabitEthernet0/0) <-> washington gi0-0 (task: GigabitEthernet0/0)" in res.text
    ends = res.data["topology"]["link_details"][0]
    assert ends[0] == {"node": "newyork", "interface": "gi0-0", "original_interface": "GigabitEthernet0/0"}


def test_a_cell_with_transport_ssh_runs_its_cli_over_the_labs_ssh(lab_host, tmp_path, monkeypatch):
    """A campaign cell's ``options: {transport: ssh}`` (docs/real-devices.md) passes the spec's
    check before any lab and the run's CLI sessions are the SSH ones (every one opened)."""
    from ani.adapters.cli_session import CliSession
    from ani.campaign.runner import RunnerDeps, run_one, validate

    opened: list[str] = []
    over_ssh = CliSession.over_ssh.__func__

    def counting(cls, device, *a, **k):  # noqa: ANN001, ANN202
        opened.append(device)
        return over_ssh(cls, device, *a, **k)

    monkeypatch.setattr(CliSession, "over_ssh", classmethod(counting))
    path = SHIPPED / "static-backup.json"
    spec = parse_spec({"name": "ncb", "tasks": str(path),
                       "cells": [{"name": "a1-ssh", "level": "a1", "options": {"transport": "ssh"}}]}, "test", ROOT)
    validate(spec, RunnerDeps())  # the check that refused it
    rec = run_one(spec, "a1-ssh", 0, tmp_path)
    assert rec.label == "clean_success", (rec.infra_error_reason, rec.agent_error, rec.tests)
    assert rec.adapter_options == {"transport": "ssh"}
    assert sorted(set(opened)) == ["r1", "r2"]  # the scripted solution changes both routers


def test_task_evaluation_interface_cli_over_a_running_lab(make_lab):
    path = SHIPPED / "static-backup.json"
    task = load_task(path)
    sc = task_scenario(task, source=path)
    lab = make_lab(sc.topology, lab_id="ncbe" + secrets.token_hex(3))
    runner = CliRunner()

    before = runner.invoke(_app(), ["tasks", "run-testcases", str(path), "--lab", lab.id])
    assert before.exit_code == 1, before.output
    assert [r["status"] for r in json.loads(before.output)["results"]] == ["fail"] * 4

    assert apply_solution(lab, dict(sc.task.ground_truth_configs[0].configs)) == []
    after = runner.invoke(_app(), ["tasks", "run-testcases", str(path), "--lab", lab.id, "--bound", "30"])
    assert after.exit_code == 0, after.output
    results = json.loads(after.output)["results"]
    assert [r["name"] for r in results] == [tc.name for tc in task.testcases]
    assert all(r["status"] == "pass" for r in results)

    cfg = runner.invoke(_app(), ["tasks", "final-cfg", "--lab", lab.id])
    assert cfg.exit_code == 0, cfg.output
    configs = json.loads(cfg.output)["configs"]
    assert set(configs) == {"r1", "r2"}
    assert "ip route 203.0.113.1/32 198.51.100.2 100" in configs["r1"]
    assert configs == export_final_cfg(lab)
    assert run_testcases(lab, list(sc.task.testcases))[0]["status"] == "pass"

    # another task's testcases on this lab: one line naming the file and the lab (new-user check)
    other = SHIPPED / "ospf-two-links-names.json"
    wrong = runner.invoke(_app(), ["tasks", "run-testcases", str(other), "--lab", lab.id])
    assert wrong.exit_code == 2, wrong.output
    line = " ".join(wrong.output.split())
    assert f"{other} on lab {lab.id}: " in line and "is not a router of the lab" in line, line
    assert lab.dead_daemons("r1") == []  # attached, never taken down by the CLI


def test_task_evaluation_interface_speaks_the_task_names(make_lab):
    """A lab of a task whose names are mapped (NewYork -> newyork, GigabitEthernet0/0 -> gi0-0):
    ani tasks final-cfg and run-testcases answer in the task's names (new-user check: final-cfg
    printed newyork and gi0-0)."""
    task = load_task(NAMES)
    sc = task_scenario(task, source=NAMES)
    lab = make_lab(sc.topology, lab_id="ncbm" + secrets.token_hex(3))
    runner = CliRunner()
    cfg = runner.invoke(_app(), ["tasks", "final-cfg", "--lab", lab.id])
    assert cfg.exit_code == 0, cfg.output
    configs = json.loads(cfg.output)["configs"]
    assert set(configs) == {"NewYork", "Washington"}
    assert "hostname NewYork" in configs["NewYork"] and "interface GigabitEthernet0/0" in configs["NewYork"]
    assert "interface Gi0/1" in configs["Washington"] and "gi0-" not in configs["Washington"]

    before = runner.invoke(_app(), ["tasks", "run-testcases", str(NAMES), "--lab", lab.id])
    assert before.exit_code == 1, before.output
    first = json.loads(before.output)["results"][0]
    assert first["status"] == "fail" and "via GigabitEthernet0/0/ in:" in first["output"], first
    assert apply_solution(lab, dict(sc.task.ground_truth_configs[0].configs), sc.names) == []
    after = runner.invoke(_app(), ["tasks", "run-testcases", str(NAMES), "--lab", lab.id, "--bound", "30"])
    assert after.exit_code == 0, after.output
    results = json.loads(after.output)["results"]
    assert results[0] == {"name": "route via GigabitEthernet0/0", "status": "pass",
                          "output": "matched '* 192.0.2.2, via GigabitEthernet0/0'"}
    # the task file's own testcases, in Python, on the lab as Lab.attach gives it back
    attached = Lab.attach(lab.id)
    assert [r["status"] for r in run_testcases(attached, list(task.testcases))] == ["pass", "pass"]
    assert "ip route 203.0.113.1/32 192.0.2.2 GigabitEthernet0/0" in export_final_cfg(attached)["NewYork"]


def test_apply_solution_reports_a_refused_line(make_lab):
    path = SHIPPED / "static-backup.json"
    lab = make_lab(task_scenario(load_task(path), source=path).topology, lab_id="ncbx" + secrets.token_hex(3))
    problems = apply_solution(lab, {"r1": ["ip route 203.0.113.1/32 192.0.2.2", "this is not frr"]})
    assert len(problems) == 1 and problems[0].startswith("r1: vtysh ")


def _app():
    from ani.cli import app

    return app


@pytest.mark.timeout(900)  # waits for its run, started in the background at the module's start
@pytest.mark.parametrize("level", ["a1", "a2"])
def test_scripted_run_passes_every_testcase(background, level):
    rec, out = background[level].result(timeout=800)
    path = SHIPPED / "static-backup.json"
    assert rec.label == "clean_success", (rec.infra_error_reason, rec.agent_error, rec.tests)
    assert [t.passed for t in rec.tests] == [True] * 4
    assert rec.task == "netconfbench" and rec.variant_id == "static-backup" and rec.task_file == str(path)
    assert rec.run_id == f"{level}-static-backup-s0"  # the run id names the task
    assert (out / "trajectories" / f"{level}-static-backup-s0.jsonl").exists()
    assert rec.names["nodes"] == {"r1": "r1", "r2": "r2"}
    assert rec.unrequested_changes == []  # the solution is the reference end state


@pytest.mark.timeout(900)  # waits for the campaign, started in the background at the module's start
def test_campaign_over_tasks_with_the_level_as_factor(background):
    out = background["campaign"].result(timeout=800)
    recs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert sorted((r["cell"], r["variant_id"]) for r in recs) == [
        ("a1", "ospf-area-adjacency"), ("a1", "static-backup"), ("a2", "ospf-area-adjacency"), ("a2", "static-backup")]
    assert all(r["label"] == "clean_success" for r in recs), [(r["run_id"], r["agent_error"]) for r in recs]
    assert (out / "summary.md").exists()


@pytest.mark.timeout(900)  # waits for the subprocess, started in the background at the module's start
def test_cli_run_at_a2_solves_the_bgp_prefix_list_task(background):
    """``ani run --task-file intents/netconfbench/bgp-prefix-list-filter.json --level a2``: A2's
    NETCONF server manages r1 (its startup config has ``no bgp ebgp-requires-policy`` and
    ``neighbor X timers 1 3``) and the scripted agent's edit (``neighbor X prefix-list P in``)
    commits; every testcase passes."""
    res, out = background["cli-a2"].result(timeout=800)
    assert res.returncode == 0, (res.stdout, res.stderr)
    assert "hidden tests: 4/4 pass" in res.stdout, res.stdout
    [record] = out.rglob("run.json")
    rec = json.loads(record.read_text())
    assert rec["label"] == "clean_success", (rec["agent_error"], rec["tests"])
    assert [t["passed"] for t in rec["tests"]] == [True] * 4
    assert rec["tool_errors"] == 0 and rec["variant_id"] == "bgp-prefix-list-filter"
