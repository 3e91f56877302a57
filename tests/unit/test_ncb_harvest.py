"""Validated-run harvesting (ani.netconfbench.harvest, ani.campaign.harvest, ``ani tasks harvest``): the threshold,
what a harvested solution carries, idempotence, --out, and what is not a candidate."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ani.campaign.harvest import harvest
from ani.campaign.results import CheckOutcome, RunRecord, RunStore
from ani.device.parse import parse
from ani.errors import ConfigError
from ani.netconfbench.harvest import HARVEST_F1_THRESHOLD, PROVENANCE, harvest_records
from ani.netconfbench.scoring import score_run
from ani.netconfbench.task import dump_task, load_task, task_identity

DATA = Path(__file__).resolve().parents[1] / "data" / "netconfbench" / "static-backup.json"
EXPERT = ["ip route 203.0.113.0/30 192.0.2.2", "ip route 203.0.113.0/30 198.51.100.2 100"]
EXIT_IF = ["ip route 203.0.113.0/30 eth-a", "ip route 203.0.113.0/30 eth-b 100"]


@pytest.fixture
def task_file(tmp_path):
    p = tmp_path / "tasks" / "static-backup.json"
    p.parent.mkdir()
    shutil.copy(DATA, p)
    return p


def _record(task_file: Path, seed: int, lines: list[str], passed: bool = True, cell: str = "a1",
            names: dict | None = None, router: str = "r1") -> RunRecord:
    task = load_task(task_file)
    startup = task.startup_configs["r1"]
    initial = {router: parse(startup.replace("hostname r1", f"hostname {router}"))}
    final = {router: parse(startup.replace("hostname r1", f"hostname {router}") + "\n".join(lines) + "\n")}
    params = {"task_file": str(task_file), "names": names or {},
              "solutions": [s.model_dump() for s in task.ground_truth_configs]}
    ncb = score_run(params, initial, final, [{"event": "agent_turn", "content": f"I used {lines[0]}"}])
    tests = [CheckOutcome(name="t0", passed=passed), CheckOutcome(name="t1", passed=True)]
    t = datetime(2026, 12, 1, 10, seed, tzinfo=timezone.utc)
    return RunRecord(run_id=f"{cell}-netconfbench-static-backup-s{seed}", campaign="ncb", cell=cell, level=cell,
                     task="netconfbench", seed=seed, label="clean_success" if passed else "clean_failure",
                     success=passed, damage_free=True, tests=tests, testcase_score=1.0 if passed else 0.5,
                     task_pass=passed, ncb=ncb, task_file=str(task_file), task_sha256=task_identity(task),
                     names=names, model="fake-model", started=t, ended=t)


def _store(tmp_path: Path, records: list[RunRecord]) -> Path:
    out = tmp_path / "results"
    store = RunStore(out)
    for r in records:
        store.append(r)
    return out


def test_threshold_is_documented_and_between_noise_and_alternatives():
    assert HARVEST_F1_THRESHOLD == 0.5


def test_like_the_expert_is_not_harvested(task_file):
    rec = _record(task_file, 1, EXPERT)
    assert rec.ncb.command.f1 == 1.0
    before = task_file.read_bytes()
    [d] = harvest_records([rec])
    assert not d.harvested and d.reason == "like expert-0001 (F1 1.00 >= 0.5)" and d.best_f1 == 1.0
    assert task_file.read_bytes() == before


def test_an_alternative_is_harvested_with_its_provenance_and_once(task_file, tmp_path):
    results = _store(tmp_path, [_record(task_file, 1, EXIT_IF)])
    [d] = harvest(results)
    assert d.harvested and d.best_f1 == 0.0 and d.best_solution == "expert-0001" and d.written == str(task_file)
    task = load_task(task_file)  # the importer accepts the written file
    sol = task.ground_truth_configs[-1]
    assert sol.solution_id == d.solution_id and sol.solution_id.startswith("harvested-") and len(sol.solution_id) == 18
    assert sol.provenance == PROVENANCE == "harvested-from-validated-run"
    assert sol.configs == {"r1": EXIT_IF} and sol.reasoning.startswith("I used ip route")
    assert sol.model_extra == {"run_id": "a1-netconfbench-static-backup-s1", "campaign": "ncb",
                               "model": "fake-model", "level": "a1"}
    raw = json.loads(task_file.read_text())
    assert raw["ground_truth_configs"][-1]["provenance"] == PROVENANCE and raw["difficulty"] == "easy"
    written = task_file.read_bytes()
    [again] = harvest(results)  # the same run twice: nothing added, the file as it was
    assert not again.harvested and again.reason == f"already harvested as {d.solution_id}"
    assert task_file.read_bytes() == written


def test_within_one_pass_a_second_like_run_is_not_added(task_file):
    recs = [_record(task_file, 1, EXIT_IF), _record(task_file, 2, EXIT_IF, cell="a2")]
    d1, d2 = harvest_records(recs)
    assert d1.harvested and not d2.harvested
    assert d2.reason == f"like {d1.solution_id} (F1 1.00 >= 0.5)"
    assert len(load_task(task_file).ground_truth_configs) == 2


def test_only_runs_that_passed_every_testcase(task_file):
    assert harvest_records([_record(task_file, 1, EXIT_IF, passed=False)]) == []
    plain = _record(task_file, 2, EXIT_IF).model_copy(update={"ncb": None})  # not a netconfbench run
    assert harvest_records([plain]) == []


def test_out_folder_leaves_the_task_file_and_is_idempotent(task_file, tmp_path):
    before = task_file.read_bytes()
    out = tmp_path / "harvested"
    [d] = harvest_records([_record(task_file, 1, EXIT_IF)], out=out)
    assert d.harvested and d.written == str(out / task_file.name)
    assert task_file.read_bytes() == before
    copy = (out / task_file.name).read_bytes()
    [d2] = harvest_records([_record(task_file, 1, EXIT_IF)], out=out)
    assert not d2.harvested and "already harvested" in d2.reason and (out / task_file.name).read_bytes() == copy


def test_a_lower_threshold_keeps_more_out(task_file):
    half = ["ip route 203.0.113.0/30 192.0.2.2", "ip route 203.0.113.0/30 eth-b 100"]  # one of two in common
    [d] = harvest_records([_record(task_file, 1, half)], threshold=0.5)
    assert not d.harvested and d.best_f1 == 0.5
    [d] = harvest_records([_record(task_file, 2, half)], threshold=0.6)
    assert d.harvested


def test_mapped_names_are_written_back_in_the_tasks_names(task_file):
    names = {"nodes": {"r1": "x1", "r2": "r2"}, "interfaces": {"r1": {"eth-a": "eth1", "eth-b": "eth2"}}}
    lab_lines = ["ip route 203.0.113.0/30 eth1", "ip route 203.0.113.0/30 eth2 100"]
    rec = _record(task_file, 1, lab_lines, names=names, router="x1")
    assert rec.ncb.applied_commands == {"r1": EXIT_IF}
    [d] = harvest_records([rec])
    assert d.harvested and load_task(task_file).ground_truth_configs[-1].configs == {"r1": EXIT_IF}


def test_a_single_run_folder_of_ani_run(task_file, tmp_path):
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "run.json").write_text(_record(task_file, 1, EXIT_IF).model_dump_json(indent=2))
    [d] = harvest(folder)
    assert d.harvested and len(load_task(task_file).ground_truth_configs) == 2


def test_bad_inputs_are_named(task_file, tmp_path):
    with pytest.raises(ConfigError, match="no runs.jsonl nor run.json"):
        harvest(tmp_path)
    (tmp_path / "run.json").write_text('{"run_id": 1}')
    with pytest.raises(ConfigError, match="run.json: not a run record"):
        harvest(tmp_path)
    rec = _record(task_file, 1, EXIT_IF).model_copy(update={"task_file": str(tmp_path / "gone.json")})
    [d] = harvest_records([rec])
    assert not d.harvested and "task file unreadable" in d.reason and "gone.json" in d.reason


def test_cli(task_file, tmp_path):
    from ani.cli import app

    results = _store(tmp_path, [_record(task_file, 1, EXIT_IF), _record(task_file, 2, EXPERT, cell="a2")])
    res = CliRunner().invoke(app, ["tasks", "harvest", str(results), "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
    assert "harvested a1-netconfbench-static-backup-s1 as harvested-" in res.output
    assert "skipped a2-netconfbench-static-backup-s2: like expert-0001 (F1 1.00 >= 0.5)" in res.output
    assert "1 solution(s) harvested from 2 validated run(s)" in res.output
    res = CliRunner().invoke(app, ["tasks", "harvest", str(tmp_path / "nothing")])
    assert res.exit_code == 2 and "no runs.jsonl" in res.output


def test_a_run_graded_on_another_version_of_the_task_is_not_harvested(task_file):
    """The new-user check: a run on a task copy with other testcases was harvested into the
    original (the record named only the file). Solutions added since do not count."""
    rec = _record(task_file, 1, EXIT_IF)
    task = load_task(task_file)
    # a harvested solution since the run: still the same task
    [d] = harvest_records([_record(task_file, 2, ["ip route 203.0.113.0/30 eth-a 50", "ip route 203.0.113.0/30 eth-b 60"])])
    assert d.harvested
    assert task_identity(load_task(task_file)) == task_identity(task) == rec.task_sha256
    changed = task.model_copy(update={"intents": [*task.intents, "and one more thing"]})
    task_file.write_text(dump_task(changed))
    before = task_file.read_bytes()
    [d] = harvest_records([rec])
    assert not d.harvested and d.reason.startswith("the task file changed since the run"), d
    assert task_file.read_bytes() == before
