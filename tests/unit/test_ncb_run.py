"""Part 2 of issue 15 without a lab: the name map, solution lines, the task's scenario and
variant, the refusal of other platforms, the campaign ``tasks:`` field, ``ani run --task-file``
refusals, and validate_task's rules over a fake lab."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ani.campaign.spec import parse_spec
from ani.cli import app
from ani.device.parse import parse
from ani.errors import CampaignSpecError, LabError, TaskFormatError
from ani.netconfbench.commands import block_text, config_lines, merge_solution
from ani.netconfbench.lab import task_scenario, validate_task
from ani.netconfbench.names import build_name_map
from ani.observer.match import NCB_DEFAULT
from ani.netconfbench.task import NcbLink, load_task, parse_task, task_json
from ani.netconfbench.variant import TaskCatalogue, intents_request, ncb_variant
from ani.observer.checks import CommandCheck, RouteCheck
from ani.lab.proc import ExecResult
from ani.testing import FakeLab

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data" / "netconfbench"
SHIPPED = ROOT / "intents" / "netconfbench"
NAMES = ROOT / "tests" / "data" / "ncb-run" / "names-map.json"
IOS = DATA / "ios-static.json"
STATIC = SHIPPED / "static-backup.json"


# -- the name map ---------------------------------------------------------------------------------


def test_names_the_lab_can_use_stay_and_the_others_are_mapped():
    links = [NcbLink(a="NewYork", a_if="GigabitEthernet0/0", b="r2", b_if="eth0"),
             NcbLink(a="NewYork", a_if="Serial0/1/0", b="r2", b_if="Gi0/0")]
    names = build_name_map(["NewYork", "r2", "1core"], links)
    assert names.nodes == {"NewYork": "newyork", "r2": "r2", "1core": "r1core"}
    assert names.interfaces == {"NewYork": {"GigabitEthernet0/0": "gi0-0", "Serial0/1/0": "se0-1-0"},
                                "r2": {"eth0": "eth0", "Gi0/0": "gi0-0"}}
    assert names.mapped
    assert names.aliases() == {"newyork": "NewYork", "r1core": "1core", "newyork:gi0-0": "GigabitEthernet0/0",
                               "newyork:se0-1-0": "Serial0/1/0", "r2:gi0-0": "Gi0/0"}
    assert names.lab_node("NewYork") == "newyork" and names.lab_node("newyork") == "newyork"
    assert names.original_node("newyork") == "NewYork"
    note = names.note()
    assert "- device NewYork is newyork" in note and "- interface Gi0/0 of r2 is gi0-0 on r2" in note


def test_clashing_or_unusable_names_fall_back_to_numbered_ones():
    links = [NcbLink(a="R-1", a_if="GigabitEthernet0/0/0/0/0/0/0/0", b="R_1", b_if="gi0-0"),
             NcbLink(a="R-1", a_if="Gi0/0", b="R_1", b_if="Gi0/0")]
    names = build_name_map(["R-1", "R_1"], links)
    assert names.nodes == {"R-1": "r1", "R_1": "r2"}  # both reduce to 'r1': the second is numbered
    # too long for Linux (15 chars) -> eth1; 'gi0-0' is taken on R_1 -> eth1 there
    assert names.interfaces["R-1"] == {"GigabitEthernet0/0/0/0/0/0/0/0": "eth1", "Gi0/0": "gi0-0"}
    assert names.interfaces["R_1"] == {"gi0-0": "gi0-0", "Gi0/0": "eth1"}


def test_no_mapping_needed_gives_no_note():
    names = build_name_map(["r1", "r2"], [NcbLink(a="r1", a_if="eth0", b="r2", b_if="eth0")])
    assert not names.mapped and names.note() == "" and names.aliases() == {}


def test_rewrite_replaces_whole_interface_tokens_and_the_hostname_only():
    names = build_name_map(["NewYork", "r2"], [NcbLink(a="NewYork", a_if="Gi0/0", b="r2", b_if="eth0"),
                                                NcbLink(a="NewYork", a_if="Gi0/0/1", b="r2", b_if="eth1")])
    text = "hostname NewYork\ninterface Gi0/0\n description to NewYork via Gi0/0/1\ninterface Gi0/0.10\n"
    assert names.rewrite("NewYork", text) == (
        "hostname newyork\ninterface gi0-0\n description to NewYork via gi0-0-1\ninterface Gi0/0.10\n")
    assert names.rewrite("r2", text) == text  # r2's interfaces need no mapping


# -- solution lines -------------------------------------------------------------------------------


def test_config_lines_drop_mode_lines_and_blank_ones():
    assert config_lines(["configure terminal", "  ip route 10.0.0.0/24 10.0.12.2 ", "", "end", "write memory"]) == [
        "ip route 10.0.0.0/24 10.0.12.2"]


def test_block_text_follows_vtysh_modes():
    cmds = ["conf t", "router bgp 65001", "neighbor 10.0.12.2 remote-as 65002", "address-family ipv4 unicast",
            "network 10.1.0.0/24", "exit-address-family", "ip prefix-list P seq 5 permit 10.0.0.0/8",
            "interface eth0", "ip ospf area 0", "exit", "ip route 10.9.0.0/24 10.0.12.2", "end"]
    assert block_text(cmds) == (
        "router bgp 65001\n neighbor 10.0.12.2 remote-as 65002\n address-family ipv4 unicast\n  network 10.1.0.0/24\n"
        "ip prefix-list P seq 5 permit 10.0.0.0/8\ninterface eth0\n ip ospf area 0\nip route 10.9.0.0/24 10.0.12.2\n")


def test_merge_solution_adds_removes_and_refuses_what_the_model_cannot_hold():
    before = parse("hostname r2\ninterface eth0\n ip address 10.0.12.2/30\n ip ospf area 1\nexit\n"
                   "router ospf\n ospf router-id 10.255.0.2\nexit\n")
    want = merge_solution(before, ["interface eth0", "no ip ospf area 1", "ip ospf area 0", "exit",
                                   "ip route 10.9.0.0/24 10.0.12.1"], router="r2")
    assert want.interfaces["eth0"].ospf.area is not None and str(want.interfaces["eth0"].ospf.area) in ("0", "0.0.0.0")
    assert [str(r.prefix) for r in want.static_routes] == ["10.9.0.0/24"]
    assert want.interfaces["eth0"].addresses == before.interfaces["eth0"].addresses
    with pytest.raises(ValueError, match="cannot carry these solution lines: router ospf / capability opaque"):
        merge_solution(before, ["router ospf", "capability opaque"], router="r2")
    loose = merge_solution(before, ["router ospf", "capability opaque"], router="r2", strict=False)
    assert "router ospf / capability opaque" in loose.unmodelled


# -- the task's scenario ------------------------------------------------------------------------


def test_task_scenario_builds_the_lab_in_the_lab_names():
    task = load_task(NAMES)
    sc = task_scenario(task, source=NAMES)
    topo = sc.topology
    assert list(topo.routers) == ["newyork", "washington"] and topo.hosts == {}
    assert [(ln.a.node, ln.a.ifname, ln.b.node, ln.b.ifname) for ln in topo.links] == [
        ("newyork", "gi0-0", "washington", "gi0-0"), ("newyork", "gi0-1", "washington", "gi0-1")]
    assert topo.aliases["newyork:gi0-0"] == "GigabitEthernet0/0" and topo.aliases["washington"] == "Washington"
    assert "hostname newyork\n" in topo.routers["newyork"].config
    assert "interface gi0-0\n" in topo.routers["newyork"].config
    assert {"zebra", "staticd", "bgpd", "ospfd"} <= set(topo.routers["newyork"].daemons)
    assert topo.convergence.required is False
    assert sc.invariants == [] and sc.tenants == {} and sc.task_file == str(NAMES)
    mapped = sc.task  # testcases and solutions in the lab's names; testcase names as written
    assert mapped.testcases[0].raw["device"] == "newyork"
    assert mapped.testcases[0].raw["expected_output"] == "\\* 192\\.0\\.2\\.2, via gi0-0"
    assert mapped.testcases[0].raw["name"] == "route via GigabitEthernet0/0"
    assert mapped.ground_truth_configs[0].configs == {"newyork": ["ip route 203.0.113.1/32 192.0.2.2 gi0-0"]}
    # the task itself is left as written (export gives it back unchanged)
    assert task_json(task) == {**json.loads(NAMES.read_text()), "expected_output_match": NCB_DEFAULT.model_dump()}


def test_a_config_without_hostname_gets_one_and_daemons_follow_the_configs():
    data = json.loads(STATIC.read_text())
    data["startup_configs"]["r2"] = "frr defaults traditional\nrouter rip\n network eth0\nexit\n"
    sc = task_scenario(parse_task(data, source="t.json"), source="t.json")
    assert sc.topology.routers["r2"].config.startswith("hostname r2\n")
    assert "ripd" in sc.topology.routers["r2"].daemons and "ripd" not in sc.topology.routers["r1"].daemons


def test_a_cisco_task_is_refused_by_platform_and_file_before_any_lab():
    task = load_task(IOS)
    made = []
    with pytest.raises(TaskFormatError) as exc:
        validate_task(task, IOS, make_lab=lambda t: made.append(t))
    msg = str(exc.value)
    assert msg.startswith(f"{IOS}: startup_configs: ") and "cisco-ios" in msg and "not FRR" in msg
    assert made == []
    with pytest.raises(TaskFormatError, match="cisco-ios"):
        TaskCatalogue([IOS]).variant(None, 0)


# -- the variant --------------------------------------------------------------------------------


def test_ncb_variant_is_the_task_in_the_lab_names():
    task = load_task(NAMES)
    v = ncb_variant(task, NAMES)
    assert v.task_class == "netconfbench" and v.variant_id == "names-map" and v.seed == 0 and v.files == {}
    assert v.request.startswith("1. NewYork must reach Washington's loopback")
    assert "- device NewYork is newyork" in v.request
    assert [type(c) for c in v.hidden_tests] == [CommandCheck, RouteCheck]
    assert [c.router for c in v.hidden_tests] == ["newyork", "newyork"]
    assert v.hidden_tests[0].name == "route via GigabitEthernet0/0"
    assert v.params["task_file"] == str(NAMES)
    assert v.params["solutions"][0]["configs"] == {"NewYork": ["ip route 203.0.113.1/32 192.0.2.2 GigabitEthernet0/0"]}
    assert v.params["lab_solutions"][0]["configs"] == {"newyork": ["ip route 203.0.113.1/32 192.0.2.2 gi0-0"]}
    assert v.params["names"]["nodes"]["NewYork"] == "newyork"
    assert v.lab_topology(None) is v.topology
    view = v.agent_view()
    assert view.request == v.request and view.files == {}
    assert view.oracle["configs"] == {"newyork": ["ip route 203.0.113.1/32 192.0.2.2 gi0-0"]}
    assert "oracle" not in view.model_dump() and "oracle" not in repr(view)  # never shown to a model


def test_intents_request_numbers_the_intents():
    assert intents_request([" a ", "b"]) == "1. a\n2. b\n"
    assert intents_request(["a"], "Note: x") == "1. a\n\nNote: x\n"


def test_catalogue_variants_are_the_files_in_order():
    cat = TaskCatalogue.load([SHIPPED / "static-backup.json", NAMES])
    assert len(cat) == 2 and len(cat.hash) == 64
    assert [cat.variant(cat, k).variant_id for k in range(2)] == ["static-backup", "names-map"]
    v = cat.variant(cat, 1)
    assert cat.scenario_of(v).topology == v.topology
    with pytest.raises(TaskFormatError, match="no task 2: the catalogue has 2"):
        cat.variant(cat, 2)
    with pytest.raises(TaskFormatError, match="one form"):
        cat.variant(cat, 0, form="ticket")


# -- the campaign's tasks: field -------------------------------------------------------------------


def _spec(**kw):
    data = {"name": "t", "tasks": str(SHIPPED), "cells": [{"name": "a1", "level": "a1"}], **kw}
    return parse_spec(data, "t.yaml", ROOT)


def test_tasks_field_makes_the_task_files_the_variants():
    spec = _spec()
    files = sorted(SHIPPED.glob("*.json"))
    assert spec.tasks_paths == [str(p) for p in files]
    assert spec.variants == len(files) and spec.seeds == list(range(len(files)))
    assert spec.task_of(spec.cells[0]) == "netconfbench"
    assert _spec(variants=2).seeds == [0, 1]
    listed = parse_spec({"name": "t", "tasks": ["intents/netconfbench/static-backup.json", str(NAMES)],
                         "cells": [{"name": "a1", "level": "a1"}]}, "t.yaml", ROOT)
    assert [Path(p).name for p in listed.tasks_paths] == ["static-backup.json", "names-map.json"]


@pytest.mark.parametrize(("extra", "message"), [
    ({"scenario": "scenarios/brownfield-small.yaml"}, "scenario: not with tasks:"),
    ({"task": "onboard-site"}, "task: not with tasks:"),
    ({"seed": 3}, "seed: not with tasks:"),
    ({"variants": 999}, "variants: 999 but tasks: has"),
    ({"factor": "task"}, "factor: 'task' is not a factor"),
    ({"form": "ticket"}, "form: a NetConfBench task has one form"),
])
def test_tasks_field_refuses_what_does_not_fit(extra, message):
    with pytest.raises(CampaignSpecError, match=message.replace("(", r"\(")):
        _spec(**extra)


def test_tasks_field_names_a_missing_file():
    with pytest.raises(CampaignSpecError, match=r"tasks\[1\]: file 'nope.json' not found"):
        parse_spec({"name": "t", "tasks": [str(STATIC), "nope.json"], "cells": [{"name": "a1", "level": "a1"}]},
                   "t.yaml", ROOT)


def test_ani_run_task_file_refuses_a_cisco_task_before_any_lab(tmp_path):
    res = CliRunner().invoke(app, ["run", "--task-file", str(IOS), "--level", "a1", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert "cisco-ios" in res.output and "ios-static.json" in res.output
    assert not (tmp_path / "o").exists()


def test_ani_run_task_file_is_not_combined_with_a_scenario():
    res = CliRunner().invoke(app, ["run", "--task-file", str(STATIC), "--scenario", "scenarios/brownfield-small.yaml"])
    assert res.exit_code == 2 and "--task-file" in res.output


def test_ani_run_task_file_makes_a_one_task_campaign(stop_before_lab):
    res = CliRunner().invoke(app, ["run", "--task-file", str(STATIC), "--level", "a2"])
    assert res.exit_code == 2 and "stopped before the lab" in res.output
    (spec,) = stop_before_lab
    assert spec.tasks_paths == [str(STATIC)] and spec.seeds == [0] and spec.cells[0].level == "a2"


# -- validate_task's rules, on a fake lab ---------------------------------------------------------


def _FakeLab(topology, state):  # noqa: N802
    """ani.testing's FakeLab answering a testcase's vtysh with what ``state`` holds;
    apply_solution's vtysh (``configure terminal`` ...) changes it. ``state["labs"]``: every lab."""
    lab = FakeLab(topology, running=False)

    def answer(router, commands):
        if commands and commands[0] == "configure terminal":
            state["applied"] = True
            return ""
        return "done" if state["applied"] else state["start"]

    lab.on_vtysh(answer)
    state["labs"].append(lab)
    return lab


def _one_command_task(tmp_path):
    data = json.loads(STATIC.read_text())
    data["testcases"] = [{"name": "t", "device": "r1", "commands": ["show x"], "expected_output": "^done$"}]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(data))
    return load_task(path), path


@pytest.mark.parametrize(("start", "ok", "problem"), [
    ("not yet", True, None),
    ("done", False, "every testcase passes at the start"),
])
def test_validate_task_rule_at_least_one_fails_at_start(tmp_path, monkeypatch, start, ok, problem):
    import ani.scenario.settle as settle

    monkeypatch.setattr(settle, "settle_seconds", lambda s: 0.0)
    task, path = _one_command_task(tmp_path)
    state = {"applied": False, "start": start, "labs": []}

    def make(topology):
        state["applied"] = False  # every lab starts from the startup configs
        return _FakeLab(topology, state)

    report = validate_task(task, path, make_lab=make, fail_bound_s=0, pass_bound_s=0)
    assert report.ok is ok
    # one lab: the start's testcases only read it, so the one solution is applied on it; taken down once
    assert [lab.downs for lab in state["labs"]] == [1]
    assert [s.solution_id for s in report.solutions] == ["expert-0001"]
    assert report.solutions[0].passed
    if problem:
        assert len(report.problems) == 1 and report.problems[0].startswith(problem)
        assert report.summary().startswith(f"FAIL {path}: {problem}")
        assert report.passing_at_start == ["t"]
    else:
        assert report.summary().startswith(f"ok   {path}: 1 testcases, 1 failing at start, 1 solution(s) pass")


def test_validate_tasks_default_lab_has_no_netconf_or_ssh_server():
    """validate_task's own labs (``ani tasks validate``) read and change the routers through vtysh
    only: they start neither the NETCONF nor the SSH server (two Python processes per lab)."""
    from ani.lab.lab import Lab
    from ani.netconfbench.lab import _default_lab

    lab = _default_lab(task_scenario(load_task(STATIC), source=STATIC).topology)
    assert isinstance(lab, Lab) and (lab.netconf, lab.ssh) == (False, False)
    assert lab.id not in [entry["id"] for entry in Lab.list_labs()]  # made, not started


# -- ani tasks validate / final-cfg / run-testcases, without a lab ---------------------------------


def test_ani_tasks_validate_prints_one_line_per_task_and_exits_1_on_a_failure(monkeypatch):
    import ani.netconfbench.lab as lab_mod
    from ani.netconfbench.lab import ValidationReport

    def fake(task, path, **kw):
        ok = Path(path).name == "static-backup.json"
        return ValidationReport(task_file=str(path), task_name=task.task_name, ok=ok,
                                problems=[] if ok else ["ground_truth_configs[0](x): testcases fail after the solution: t"])

    monkeypatch.setattr(lab_mod, "validate_task", fake)
    res = CliRunner().invoke(app, ["tasks", "validate", str(STATIC), str(SHIPPED / "ospf-area-adjacency.json")])
    assert res.exit_code == 1, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith(f"ok   {STATIC}: ") and lines[1].startswith("FAIL ") and "testcases fail after" in lines[1]
    res = CliRunner().invoke(app, ["tasks", "validate", str(STATIC), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)[0]["task_file"] == str(STATIC)


def test_ani_tasks_validate_refuses_a_cisco_task_with_exit_2():
    res = CliRunner().invoke(app, ["tasks", "validate", str(IOS)])
    assert res.exit_code == 2 and "cisco-ios" in res.output


def test_ani_tasks_validate_names_the_task_file_a_refusal_comes_from(monkeypatch):
    """Validating a folder of tasks, a refusal raised for one of them (a testcase's flood ping,
    refused when the testcases are built) said only 'testcases[1].commands[0]: -f: refused':
    not which file."""
    import ani.netconfbench.lab as lab_mod
    from ani.errors import TaskFormatError

    def fake(task, path, **kw):
        raise TaskFormatError("testcases[1].commands[0]: -f: refused (flood ping)")

    monkeypatch.setattr(lab_mod, "validate_task", fake)
    res = CliRunner().invoke(app, ["tasks", "validate", str(STATIC)])
    assert res.exit_code == 2, res.output
    assert f"{STATIC}: testcases[1].commands[0]: -f: refused (flood ping)" in " ".join(res.output.split())


def test_ani_tasks_final_cfg_and_run_testcases_name_an_unknown_lab():
    for args in (["tasks", "final-cfg", "--lab", "nosuchlab0"], ["tasks", "run-testcases", str(STATIC), "--lab", "nosuchlab0"]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2 and "--lab: no lab 'nosuchlab0'" in res.output, res.output


def test_two_task_files_with_the_same_name_are_refused(tmp_path):
    """A task's variant id is its file name: two tasks named alike shared one report row (the
    new-user check ran static-backup.json from two folders and got one row of two runs)."""
    other = tmp_path / "static-backup.json"
    other.write_text((DATA / "static-backup.json").read_text())
    with pytest.raises(CampaignSpecError, match=r"tasks: .*static-backup\.json: the same file name as .*rename one"):
        parse_spec({"name": "t", "tasks": [str(STATIC), str(other)], "cells": [{"name": "a1", "level": "a1"}]},
                   "t.yaml", ROOT)
    with pytest.raises(TaskFormatError, match="the same file name as"):
        TaskCatalogue.load([STATIC, other])
    assert len(TaskCatalogue.load([STATIC, NAMES])) == 2


@pytest.mark.parametrize(("extra", "named"), [(["--seed", "5"], "--seed"), (["--task", "onboard-site"], "--task"),
                                              (["--task", "x", "--seed", "0"], "--task / --seed")])
def test_ani_run_task_file_refuses_a_seed_or_task_class_it_would_ignore(tmp_path, extra, named):
    """The new-user check: ``--seed 5`` was printed and recorded as seed 0, ``--task`` ignored."""
    res = CliRunner().invoke(app, ["run", "--task-file", str(STATIC), *extra, "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert f"one task with one variant: not with {named}" in " ".join(res.output.split())
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("level", ["a3t", "a3r", "a4"])
def test_tasks_at_a_service_level_are_refused_before_any_lab(tmp_path, level):
    """A task's solution is device configuration: at A3-T the scripted run started a lab and
    ended clean_failure (21 s) instead of being refused (the new-user check)."""
    with pytest.raises(CampaignSpecError, match=rf"cells\[1\]\(x\)\.level: '{level}': a NetConfBench task runs at "
                                               r"the device levels a0, a1, a2"):
        parse_spec({"name": "t", "tasks": str(STATIC), "cells": [{"name": "a1", "level": "a1"},
                                                                 {"name": "x", "level": level}]}, "t.yaml", ROOT)
    res = CliRunner().invoke(app, ["run", "--task-file", str(STATIC), "--level", level, "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "device levels a0, a1, a2" in " ".join(res.output.split()), res.output
    assert not (tmp_path / "o").exists()


# -- the Task Evaluation Interface speaks the task's names (new-user check) ----------------------


def _NamedLab(outputs=None):  # noqa: N802
    """ani.testing's FakeLab of the names-map task as Lab.attach gives it back: lab names, the map
    in ``topology.aliases``; its vtysh answers ``lab.outputs`` (command -> text)."""
    sc = task_scenario(load_task(NAMES), source=NAMES)
    lab = FakeLab(sc.topology)
    lab.outputs = outputs or {}
    for router in lab.routers:
        lab.set_config(router, f"frr version 8.4\nhostname {router}\n!\ninterface gi0-0\n ip address 192.0.2.1/30\n"
                               "exit\n!\ninterface gi0-1\n ip address 198.51.100.1/30\nexit\n!\ninterface lo\nexit\n")
    lab.on_vtysh(lambda router, commands: "\n".join(lab.outputs.get(c, "") for c in commands))
    return lab


def test_export_final_cfg_speaks_the_task_names():
    from ani.netconfbench.evaluate import export_final_cfg

    configs = export_final_cfg(_NamedLab())
    assert set(configs) == {"NewYork", "Washington"}
    ny = configs["NewYork"]
    assert "hostname NewYork\n" in ny and "interface GigabitEthernet0/0\n" in ny and "interface Gi0/1\n" in ny
    assert "gi0-0" not in ny and "newyork" not in ny and "interface lo\n" in ny  # lo has one name


def test_run_testcases_takes_either_names_and_answers_in_the_task_names():
    from ani.netconfbench.evaluate import run_testcases

    task = load_task(NAMES)
    lab = _NamedLab({"show ip route 203.0.113.1/32": "Routing entry\n  * 192.0.2.2, via gi0-0, weight 1"})
    tc = task.testcases[0]  # in the task's names: device NewYork, expected output names GigabitEthernet0/0
    mapped = task_scenario(task, source=NAMES).task.testcases[0]  # the same in the lab's names
    for given in (tc, tc.raw, mapped):
        (res,) = run_testcases(lab, [given])
        assert res["status"] == "pass", res
        assert res["output"] == "matched '* 192.0.2.2, via GigabitEthernet0/0'"
    assert {r for r, _ in lab.vtysh_calls} == {"newyork"}  # run on the lab's router
    lab.outputs = {"show ip route 203.0.113.1/32": "% Network not in table"}
    (res,) = run_testcases(lab, [tc])
    assert res["status"] == "fail"
    assert res["output"].startswith(r"no match of /\* 192\.0\.2\.2, via GigabitEthernet0/0/ in: ")


def test_run_testcases_errors_name_the_task_devices():
    from ani.netconfbench.evaluate import run_testcases

    bad = {"name": "x", "device": "Boston", "commands": ["show ip route"], "expected_output": "x"}
    with pytest.raises(TaskFormatError) as exc:
        run_testcases(_NamedLab(), [bad])
    assert str(exc.value) == ("testcases[0].device: 'Boston' is not a router of the lab "
                              "(routers: NewYork, Washington)")
    with pytest.raises(TaskFormatError, match=r"^testcases\[0\]\.commands: must not be empty$"):
        run_testcases(_NamedLab(), [{**bad, "device": "NewYork", "commands": []}])


def test_ani_tasks_final_cfg_and_run_testcases_print_the_task_names(monkeypatch):
    from ani.lab.lab import Lab

    lab = _NamedLab({"show ip route 203.0.113.1/32": "  * 192.0.2.2, via gi0-0, weight 1"})
    monkeypatch.setattr(Lab, "attach", classmethod(lambda cls, lab_id, own=False: lab))
    res = CliRunner().invoke(app, ["tasks", "final-cfg", "--lab", "x"])
    assert res.exit_code == 0, res.output
    configs = json.loads(res.output)["configs"]
    assert set(configs) == {"NewYork", "Washington"} and "interface GigabitEthernet0/0" in configs["NewYork"]
    res = CliRunner().invoke(app, ["tasks", "run-testcases", str(NAMES), "--lab", "x"])
    results = json.loads(res.output)["results"]
    assert results[0] == {"name": "route via GigabitEthernet0/0", "status": "pass",
                          "output": "matched '* 192.0.2.2, via GigabitEthernet0/0'"}


def test_validate_reports_solution_problems_in_the_task_names(tmp_path, monkeypatch):
    """apply_solution's problems name the task's device and interfaces (ani tasks validate)."""
    from ani.netconfbench.lab import apply_solution

    def Refusing():  # noqa: N802 - every vtysh fails as FRR refuses an interface it does not have
        lab = _NamedLab()
        lab.on_vtysh(lambda router, commands: ExecResult(1, "% Unknown interface gi0-0", "", False, 0.0))
        return lab

    sc = task_scenario(load_task(NAMES), source=NAMES)
    problems = apply_solution(Refusing(), dict(sc.task.ground_truth_configs[0].configs), sc.names)
    assert problems == ["NewYork: vtysh exit 1: % Unknown interface GigabitEthernet0/0"]
    assert apply_solution(Refusing(), {"boston": ["ip route 1.0.0.0/8 Null0"]}, sc.names) == [
        "boston: not a router of the lab (routers: NewYork, Washington)"]


def test_the_name_map_inverts_and_is_rebuilt_from_a_lab_topology():
    from ani.netconfbench.names import NameMap

    sc = task_scenario(load_task(NAMES), source=NAMES)
    names = sc.names
    assert NameMap.from_aliases(sc.topology.aliases, sc.topology.routers).inverse().rewrite(
        "newyork", "hostname newyork\ninterface gi0-1\n") == "hostname NewYork\ninterface Gi0/1\n"
    back = names.inverse()
    assert back.nodes == {"newyork": "NewYork", "washington": "Washington"}
    text = "interface GigabitEthernet0/0\n ip address 192.0.2.1/30\n"
    assert names.rewrite("NewYork", names.rewrite("NewYork", text)) == names.rewrite("NewYork", text)  # idempotent
    assert back.rewrite("newyork", names.rewrite("NewYork", text)) == text
    assert NameMap.from_aliases({}, ["r1", "r2"]).inverse().rewrite("r1", "hostname r1\n") == "hostname r1\n"


# -- run ids name the task (new-user check: two single runs over different task files were both
#    a1-netconfbench-s0) -------------------------------------------------------------------------


def test_run_ids_of_task_runs_name_the_task(tmp_path):
    from ani.campaign.loop import plan

    other = SHIPPED / "ospf-area-adjacency.json"
    one = parse_spec({"name": "run", "tasks": str(STATIC), "cells": [{"name": "a1", "level": "a1"}]}, "test", ROOT)
    two = parse_spec({"name": "run", "tasks": str(other), "cells": [{"name": "a1", "level": "a1"}]}, "test", ROOT)
    assert one.run_id("a1", 0) == "a1-static-backup-s0" and two.run_id("a1", 0) == "a1-ospf-area-adjacency-s0"
    both = parse_spec({"name": "c", "tasks": [str(STATIC), str(other)], "factor": "level",
                       "cells": [{"name": "a1", "level": "a1"}, {"name": "a2", "level": "a2"}]}, "test", ROOT)
    ids = [both.run_id(p.cell, p.seed, p.stress) for p in plan(both)]
    assert sorted(ids) == ["a1-ospf-area-adjacency-s1", "a1-static-backup-s0",
                           "a2-ospf-area-adjacency-s1", "a2-static-backup-s0"]
    # campaigns over a scenario keep their ids
    scen = parse_spec({"name": "c", "scenario": "scenarios/brownfield-small.yaml", "task": "onboard-site",
                       "cells": [{"name": "a1", "level": "a1"}]}, "test", ROOT)
    assert scen.run_id("a1", 3) == "a1-onboard-site-s3"



def test_validate_task_second_solution_on_a_fresh_lab_and_every_lab_down_once(tmp_path, monkeypatch):
    """The first solution goes on the start's lab, each other one on a fresh lab started from the
    startup configs; a solution whose lab does not start is that solution's problem."""
    import ani.scenario.settle as settle

    monkeypatch.setattr(settle, "settle_seconds", lambda s: 0.0)
    task, path = _one_command_task(tmp_path)
    data = json.loads(path.read_text())
    first = data["ground_truth_configs"][0]
    data["ground_truth_configs"] = [first, {**first, "solution_id": "expert-0002"}, {**first, "solution_id": "expert-0003"}]
    path.write_text(json.dumps(data))
    task = load_task(path)
    state = {"applied": False, "start": "not yet", "labs": []}

    def make(topology):
        state["applied"] = False
        lab = _FakeLab(topology, state)
        if len(state["labs"]) == 3:  # the third solution's lab
            lab.fail_up = LabError("no room")
        return lab

    report = validate_task(task, path, make_lab=make, fail_bound_s=0, pass_bound_s=0)
    assert [lab.downs for lab in state["labs"]] == [1, 1, 1]
    assert [(s.solution_id, s.passed) for s in report.solutions] == [
        ("expert-0001", True), ("expert-0002", True), ("expert-0003", False)]
    assert report.problems == ["ground_truth_configs[2](expert-0003): not applied: lab: LabError: no room"]
