"""NetConfBench scores of a run and of cells (ani.netconfbench.scoring, .report), and the
runner's wiring (RunRecord.testcase_score / task_pass for every run, RunRecord.ncb for a
variant with solutions), with the runner's small fakes (no lab)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_campaign_runner import FCheck, Setup, World

from ani.campaign.report import render_markdown, summarize
from ani.campaign.results import CheckOutcome, RunRecord
from ani.campaign.runner import run_one
from ani.device.parse import parse
from ani.netconfbench.report import ncb_rows
from ani.netconfbench import scoring
from ani.netconfbench.scoring import NcbScores, cell_scores, lab_solutions, score_run, task_names


R1 = "hostname r1\ninterface eth0\n ip address 10.0.0.1/30\nip route 192.0.2.0/24 10.0.0.2\n"
NAMES = {"nodes": {"NewYork": "newyork"}, "interfaces": {"NewYork": {"Gi0/0": "gi0-0"}}}


def _t(*passed):
    return [CheckOutcome(name=f"t{i}", passed=p) for i, p in enumerate(passed)]


def test_testcase_score_and_task_pass():
    assert scoring.testcase_score(_t(True, False, True, True)) == 0.75
    assert scoring.task_pass(_t(True, False)) is False and scoring.task_pass(_t(True, True)) is True
    assert scoring.testcase_score([]) is None and scoring.task_pass([]) is None


def test_solutions_in_lab_names_and_back():
    params = {"solutions": [{"solution_id": "e", "configs": {"NewYork": ["ip route 1.0.0.0/8 Gi0/0", "interface Gi0/0/1"]}}],
              "names": NAMES}
    assert lab_solutions(params)[0]["configs"] == {"newyork": ["ip route 1.0.0.0/8 gi0-0", "interface Gi0/0/1"]}
    assert lab_solutions({**params, "lab_solutions": [{"solution_id": "x", "configs": {}}]})[0]["solution_id"] == "x"
    assert task_names({"newyork": ["ip route 1.0.0.0/8 gi0-0"], "r9": ["x"]}, NAMES) == {
        "NewYork": ["ip route 1.0.0.0/8 Gi0/0"], "r9": ["x"]}


def test_score_run_all_parts():
    initial = {"r1": parse(R1)}
    final = {"r1": parse(R1 + "ip route 203.0.113.0/30 10.0.0.2\nip route 203.0.113.0/30 10.0.0.6 100\n")}
    params = {"task_file": "intents/netconfbench/static.json", "solutions": [
        {"solution_id": "expert-0001", "configs": {"r1": ["ip route 203.0.113.0 255.255.255.252 10.0.0.2",
                                                          "ip route 203.0.113.0 255.255.255.252 10.0.0.6 100"]},
         "reasoning": "A static route to the loopback and a floating backup with distance 100."}]}
    events = [{"event": "agent_turn", "content": "Add the primary static route and a backup with distance 100."}]
    s = score_run(params, initial, final, events, crosscheck=False)  # frr-reload: test_ncb_crosscheck_lab
    assert (s.command.f1, s.command.solution_id) == (1.0, "expert-0001") and s.command.crosscheck is None
    assert s.applied_commands == {"r1": ["ip route 203.0.113.0/30 10.0.0.2", "ip route 203.0.113.0/30 10.0.0.6 100"]}
    assert "ip route 192.0.2.0/24 10.0.0.2" in s.initial_configs["r1"]
    assert s.reasoning.score is not None and s.reasoning.score > 0.5 and s.notes == []
    assert NcbScores.model_validate_json(s.model_dump_json()) == s


def test_score_run_leaves_out_what_the_faults_wrote():
    """A concurrent writer's line (a fault during a tasks: campaign) is neither the agent's
    applied command, nor counted against its command precision, nor a solution to harvest."""
    writer = "changed out of band by another writer (ani fault concurrent_writer)"
    initial = {"r1": parse(R1)}
    final = {"r1": parse(R1 + "ip route 203.0.113.0/30 10.0.0.2\ninterface lo\n description " + writer + "\n")}
    params = {"solutions": [{"solution_id": "e", "configs": {"r1": ["ip route 203.0.113.0/30 10.0.0.2"]}}]}
    counted = score_run(params, initial, final, [])
    assert counted.command.precision == 0.5 and "description " + writer in counted.applied_commands["r1"]
    s = score_run(params, initial, final, [], fault_lines={f"r1: + interface lo / description {writer}",
                                                           f"r1: - interface lo / description {writer}"})
    assert (s.command.precision, s.command.recall) == (1.0, 1.0)
    assert s.applied_commands == {"r1": ["ip route 203.0.113.0/30 10.0.0.2"]}
    assert s.notes[0] == "command: 1 change line(s) the faults wrote left out"
    assert "interface lo" not in s.initial_configs["r1"]  # the initial state, as read
    # a fault line of another router, or one no longer there, leaves the scores as they are
    other = score_run(params, initial, final, [], fault_lines={"r2: + interface lo / description x"})
    same = {"crosscheck"}  # the frr-reload cross-check carries its own elapsed seconds
    assert other.command.model_dump(exclude=same) == counted.command.model_dump(exclude=same) and not [n for n in other.notes if n.startswith("command")]


def test_score_run_says_what_it_could_not_measure():
    params = {"solutions": [{"solution_id": "e", "configs": {"r9": ["ip route 1.0.0.0/8 10.0.0.2"]}}]}
    s = score_run(params, None, None, [])
    assert s.command is None and "command: initial configs unreadable" in s.notes
    assert s.reasoning.score is None and any("no reasoning text" in n for n in s.notes)
    initial = {"r1": parse(R1)}
    s = score_run(params, initial, initial, [])
    assert s.command is None and any("'r9' is not a router of the run" in n for n in s.notes)
    s = score_run({"solutions": []}, initial, initial, [])
    assert "command: the task has no solution" in s.notes


def _rec(cell, seed, passed, f1=None, reasoning=None, task_file="t/a.json"):
    ncb = None
    if task_file is not None:
        from ani.netconfbench.command_score import CommandScore
        from ani.netconfbench.reasoning import ReasoningScore

        ncb = NcbScores(command=None if f1 is None else CommandScore(precision=f1, recall=f1, f1=f1, solution_id="e"),
                        reasoning=None if reasoning is None else ReasoningScore(score=reasoning, model="m", weights_sha256="ab" * 32))
    tests = _t(*passed)
    ok = all(passed)
    return RunRecord(run_id=f"{cell}-s{seed}-{task_file}", campaign="c", cell=cell, level=cell, task="netconfbench", seed=seed, task_file=task_file,
                     label="clean_success" if ok else "clean_failure", success=ok, damage_free=True, tests=tests,
                     testcase_score=scoring.testcase_score(tests), task_pass=scoring.task_pass(tests), ncb=ncb,
                     started="2026-01-01T00:00:00Z", ended="2026-01-01T00:00:01Z", cost={"wall_s": 2.0, "tool_calls": 3})


def test_cell_scores_means_rate_interval_and_tasks():
    runs = [_rec("a1", 1, (True, True), 1.0, 0.8), _rec("a1", 2, (True, False), 0.5, None, "t/b.json"),
            _rec("a1", 3, (False, False), None, None, "t/b.json")]
    c = cell_scores(runs)
    assert c.runs == 3 and c.testcase_score == pytest.approx(0.5) and (c.passed, c.pass_rate) == (1, 1 / 3)
    assert c.pass_wilson[0] < 1 / 3 < c.pass_wilson[1]
    assert (c.command_f1, c.command_runs, c.reasoning, c.reasoning_runs) == (0.75, 2, 0.8, 1)
    assert set(c.tasks) == {"a", "b"} and c.tasks["b"].runs == 2 and c.tasks["b"].testcase_score == 0.25


def test_summary_and_html_show_the_scores_per_cell():
    runs = [_rec("a1", 1, (True, True), 1.0, 0.8), _rec("a2", 1, (True, False), 0.5)]
    s = summarize(runs, {"name": "c", "cells": [{"name": "a1", "level": "a1"}, {"name": "a2", "level": "a2"}]})
    md = render_markdown(s)
    assert "## NetConfBench scores (valid runs)" in md
    assert "| a1 | 1 | 1.00 | 1/1 |" in md and "| a2 | 1 | 0.50 | 0/1 |" in md
    assert "| a1 | a | 1 | 1.00 | 1/1 |" in md
    assert "`m (abababababab)`" in md
    rows = ncb_rows(s)
    assert [r["command_f1"] for r in rows["cells"]] == ["1.00 (1)", "0.50 (1)"]
    from ani.campaign.html_report import render_html

    html = render_html(s)
    assert 'id="netconfbench"' in html and "1.00 (1)" in html


def test_the_line_ani_run_prints():
    from ani.netconfbench.report import ncb_line

    assert ncb_line(_rec("a1", 1, (True, False), 0.5, 0.25)) == (
        "testcase score 0.50 (task failed); command F1 0.50 (P 0.50 R 0.50) against e; reasoning 0.25 (m)")
    assert ncb_line(_rec("a1", 1, (True,), task_file=None)) is None


def test_no_section_without_scores():
    r = _rec("a1", 1, (True,), task_file=None).model_copy(update={"testcase_score": None, "task_pass": None})
    s = summarize([r], {"name": "c", "cells": [{"name": "a1", "level": "a1"}]})
    assert "NetConfBench scores" not in render_markdown(s)


# --- the runner ---------------------------------------------------------------------------


@pytest.fixture
def spec(tmp_path):
    from ani.campaign.spec import parse_spec

    (tmp_path / "scen.yaml").write_text("fake: true\n")
    return parse_spec({"name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": 1, "seed": 1,
                       "cells": [{"name": "a1", "level": "a1"}]}, "test", tmp_path)


def test_every_graded_run_has_a_testcase_score(spec, tmp_path):
    rec = run_one(spec, "a1", 1, tmp_path / "out", deps=Setup(World(), {}).deps())
    assert (rec.testcase_score, rec.task_pass, rec.ncb) == (1.0, True, None)
    rec = run_one(spec, "a1", 1, tmp_path / "out2", deps=Setup(World(), {("a1", 1): "fail"}).deps())
    assert (rec.testcase_score, rec.task_pass) == (0.0, False)
    infra = run_one(spec, "a1", 1, tmp_path / "out3", deps=Setup(World(fail_up={1}), {}).deps())
    assert (infra.label, infra.testcase_score, infra.task_pass) == ("infra_error", None, None)


class RoutersTopology(dict):
    """The fake lab's topology dict, with the ``routers`` the observation reads."""

    routers = {"r1": {}}


class View(dict):
    """The fake agent view (a dict for the runner's script agent) with the ``oracle`` the
    observer's netconfbench reference reads."""

    oracle = None


class NcbVariant:
    """The runner's fake variant with NetConfBench params (two hidden tests)."""

    def __init__(self, seed):
        self.seed, self.variant_id, self.task_class = seed, "static-backup", "netconfbench"
        self.hidden_tests = [FCheck("site-reach", "site", True), FCheck("no-damage", "damage", False)]
        self.params = {"task_file": "intents/netconfbench/static-backup.json", "solutions": [
            {"solution_id": "expert-0001", "configs": {"r1": ["ip route 198.51.100.0/24 10.0.0.2"]},
             "reasoning": "static route", "provenance": "expert-authored"}]}

    def lab_topology(self, scenario):
        return RoutersTopology(seed=self.seed)

    def agent_view(self):
        return View(request="add the route", seed=self.seed)


def test_a_netconfbench_variant_gets_its_scores_in_the_record(spec, tmp_path, monkeypatch):
    import ani.observer.changes as changes
    from ani.testing.fake_campaign import flag

    reads = []

    def read_configs(lab, routers, timeout=10.0, workers=8):  # the fake lab's configs: site set => route added
        reads.append(flag(lab, "site"))
        return {"r1": parse(R1 + ("ip route 198.51.100.0/24 10.0.0.2\n" if flag(lab, "site") else ""))}

    monkeypatch.setattr(changes, "read_configs", read_configs)
    monkeypatch.setattr(changes, "read_kernel", lambda lab, routers, timeout=10.0: {})
    deps = Setup(World(), {}).deps()
    deps.get_task_class = lambda name: SimpleNamespace(variant=lambda scenario, seed: NcbVariant(seed))
    rec = run_one(spec, "a1", 1, tmp_path / "out", deps=deps)
    assert rec.label == "clean_success" and rec.testcase_score == 1.0
    assert rec.ncb is not None and rec.task_file.endswith("static-backup.json")
    assert rec.ncb.command.f1 == 1.0 and rec.ncb.applied_commands == {"r1": ["ip route 198.51.100.0/24 10.0.0.2"]}
    assert reads == [False, True]  # initial before the agent, final after grading, once each
    assert RunRecord.model_validate_json(rec.model_dump_json()).ncb == rec.ncb
