"""Issue 27 §1 without a lab: the NetConfBench draft's task shapes as the draft writes them.

An ``expected_result`` without device / prefix resolved from the task's own solutions (or an
error naming the testcase and why), ``expected_output``'s match semantics (stated, settable),
bounded ``ping`` / ``traceroute`` argv, and the round trip exact for what ani does not interpret."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ani.cli import app
from ani.errors import TaskFormatError
from ani.netconfbench.lab import task_scenario
from ani.netconfbench.task import dump_task, load_task, parse_task
from ani.netconfbench.testcases import to_checks
from ani.observer.checks import RouteCheck
from ani.observer.match import LEGACY, NCB_DEFAULT, OutputMatch, find_expected
from ani.observer.probe import probe_argv

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "netconfbench" / "draft-static-routing.json"
FULL = ROOT / "tests" / "data" / "ncb-draft" / "draft-static-routing-full.json"


def _data() -> dict:
    return json.loads(EXAMPLE.read_text())


# -- expected_result resolved from the task ------------------------------------------------------

def test_the_draft_testcase_is_resolved_from_the_expert_solution():
    task = load_task(EXAMPLE)
    assert task.testcases[0].raw["expected_result"] == {"protocol": "static", "next_hop": "192.0.2.2"}  # as written
    [check] = to_checks(task)
    assert check == RouteCheck(name="Static Route from NewYork to Washington", router="NewYork",
                               prefix="203.0.113.0/30", protocol="static", next_hop="192.0.2.2")
    assert task.testcases[0].resolved.source == "expert-0001: NewYork 'ip route 203.0.113.0 255.255.255.252 192.0.2.2'"


def test_the_full_paste_resolves_past_the_exit_interface_solution():
    # harvested-0007's routes name an interface, not 192.0.2.2: not a candidate
    [check] = to_checks(load_task(FULL))
    assert (check.router, str(check.prefix)) == ("NewYork", "203.0.113.0/30")


def test_resolution_follows_the_lab_names():
    mapped = task_scenario(load_task(EXAMPLE), source=EXAMPLE).task
    [check] = to_checks(mapped)
    assert (check.router, str(check.prefix)) == ("newyork", "203.0.113.0/30")


def test_show_checks_prints_the_resolution():
    res = CliRunner().invoke(app, ["tasks", "show", "--checks", str(EXAMPLE)])
    assert res.exit_code == 0, res.output
    assert '"router": "NewYork"' in res.output and '"prefix": "203.0.113.0/30"' in res.output
    assert ("testcases[0].expected_result: device NewYork, prefix 203.0.113.0/30: resolved from "
            "ground_truth_configs, expert-0001: NewYork 'ip route 203.0.113.0 255.255.255.252 192.0.2.2'") in res.output


def _with(er: dict, extra_routes: dict | None = None) -> dict:
    d = _data()
    d["testcases"][0]["expected_result"] = er
    for device, lines in (extra_routes or {}).items():
        d["ground_truth_configs"][0]["configs"].setdefault(device, []).extend(lines)
    return d


@pytest.mark.parametrize(("er", "routes", "why"), [
    ({"protocol": "static", "next_hop": "192.0.2.9"}, None,
     "no device and prefix, and no solution line of ground_truth_configs is a static route via 192.0.2.9: "
     "give device and prefix"),
    ({"protocol": "static", "next_hop": "192.0.2.2"}, {"Washington": ["ip route 10.9.0.0 255.255.0.0 192.0.2.2"]},
     "no device and prefix, and 2 routes of ground_truth_configs are a static route via 192.0.2.2: NewYork "
     "203.0.113.0/30 (expert-0001: NewYork 'ip route 203.0.113.0 255.255.255.252 192.0.2.2'); Washington 10.9.0.0/16 "
     "(expert-0001: Washington 'ip route 10.9.0.0 255.255.0.0 192.0.2.2'): give device and prefix"),
    ({"protocol": "ospf", "next_hop": "192.0.2.2"}, None,
     "no device and prefix: only static routes name their next hop in a configuration, and protocol is 'ospf'"),
    ({"protocol": "static"}, None, "no device and prefix, and no next_hop to find them by"),
])
def test_an_unresolvable_expected_result_names_the_testcase_and_why(er, routes, why):
    with pytest.raises(TaskFormatError) as exc:
        parse_task(_with(er, routes), source="t.json")
    assert str(exc.value).startswith("t.json: testcases[0].expected_result: 'Static Route from NewYork to "
                                     "Washington': " + why), str(exc.value)


def test_a_given_device_or_prefix_narrows_the_candidates():
    routes = {"Washington": ["ip route 10.9.0.0/16 192.0.2.2"]}
    by_device = to_checks(parse_task(_with({"device": "Washington", "next_hop": "192.0.2.2"}, routes)))[0]
    by_prefix = to_checks(parse_task(_with({"prefix": "203.0.113.0 255.255.255.252", "next_hop": "192.0.2.2"}, routes)))[0]
    backup = to_checks(parse_task(_with({"next_hop": "198.51.100.2", "distance": 100})))[0]
    assert (by_device.router, str(by_device.prefix)) == ("Washington", "10.9.0.0/16")
    assert (by_prefix.router, str(by_prefix.prefix)) == ("NewYork", "203.0.113.0/30")
    assert (backup.router, str(backup.prefix), backup.distance) == ("NewYork", "203.0.113.0/30", 100)


# -- expected_output's match ---------------------------------------------------------------------

ROUTE_ENTRY = ('Routing entry for 203.0.113.0/30\n  Known via "static", distance 1, metric 0, best\n'
               '  Last update 00:00:12 ago\n  * 192.0.2.2, via eth0, weight 1\n')


def test_the_draft_s_own_expected_output_matches_its_own_output_by_default_only():
    # §4.3's expected_output against §4.2's execute_validation output: '[1/0]' is a character class
    line = "S 203.0.113.0/30 [1/0] via 192.0.2.2"
    assert find_expected(line, line, NCB_DEFAULT) == line
    assert find_expected(line, line, LEGACY) is None


def test_a_regex_spanning_the_lines_of_show_ip_route_prefix_matches_by_default_only():
    pattern = r'Known via "static".*\* 192\.0\.2\.2, via eth0'
    assert find_expected(pattern, ROUTE_ENTRY, NCB_DEFAULT) is not None
    assert find_expected(pattern, ROUTE_ENTRY, LEGACY) is None
    assert find_expected(r"^  \* 192\.0\.2\.2", ROUTE_ENTRY, NCB_DEFAULT) is not None  # MULTILINE: ^ at each line


def test_the_other_match_settings():
    assert find_expected("known VIA", ROUTE_ENTRY, OutputMatch(flags=["IGNORECASE"])) == "Known via"
    assert find_expected("Known via", ROUTE_ENTRY, OutputMatch(find="fullmatch")) is None
    assert find_expected(r"Routing entry.*weight 1", ROUTE_ENTRY, OutputMatch(find="fullmatch")) is not None
    assert find_expected("(1/0", "x (1/0 y", OutputMatch(syntax="text")) == "(1/0"
    with pytest.raises(ValueError, match="MULTILINE named twice"):
        OutputMatch(flags=["MULTILINE", "MULTILINE"])


def test_a_task_and_a_testcase_set_the_match_and_export_states_it():
    d = _data()
    d["testcases"].append({"name": "pasted", "device": "NewYork", "commands": ["show ip route"],
                           "expected_output": "(1/0", "match": {"syntax": "text"}})
    d["expected_output_match"] = {"flags": ["MULTILINE"], "verbatim": False}
    task = parse_task(d)
    checks = to_checks(task)
    assert checks[1].match == OutputMatch(syntax="text")
    assert task.expected_output_match == LEGACY
    out = json.loads(dump_task(task))
    assert out["expected_output_match"] == {"syntax": "regex", "find": "search", "flags": ["MULTILINE"], "verbatim": False}
    assert out["testcases"][1]["match"] == {"syntax": "text"}  # as written
    # the default, stated in a file that says nothing
    assert json.loads(dump_task(load_task(EXAMPLE)))["expected_output_match"] == NCB_DEFAULT.model_dump()
    bad = copy.deepcopy(d)
    bad["expected_output_match"] = {"flags": ["VERBOSE"]}
    with pytest.raises(TaskFormatError, match=r"expected_output_match\.flags\[0\]"):
        parse_task(bad, source="t.json")


# -- bounded probes ------------------------------------------------------------------------------

@pytest.mark.parametrize(("command", "argv"), [
    ("ping 203.0.113.1", ["ping", "-n", "-c", "5", "-i", "0.2", "-W", "1", "203.0.113.1"]),
    ("ping ip 203.0.113.1 repeat 1000 timeout 30 source 192.0.2.1",
     ["ping", "-n", "-c", "10", "-i", "0.2", "-W", "2", "-I", "192.0.2.1", "203.0.113.1"]),
    ("ping -c 3 -w 60 -s 65000 203.0.113.1",
     ["ping", "-n", "-c", "3", "-i", "0.2", "-W", "1", "-s", "1472", "203.0.113.1"]),  # -w: not passed
    ("traceroute 203.0.113.1", ["traceroute", "-n", "-m", "8", "-q", "1", "-w", "1", "203.0.113.1"]),
    ("traceroute -m 64 -q 9 -w 5 203.0.113.1", ["traceroute", "-n", "-m", "10", "-q", "2", "-w", "1", "203.0.113.1"]),
])
def test_probes_are_clamped(command, argv):
    assert probe_argv(command).argv == argv


def test_a_ping_sends_its_count_and_no_more():
    # with -w, iputils' -c counts replies and ping sends on until the deadline: never passed
    assert "-w" not in probe_argv("ping -w 10 -c 2 203.0.113.1").argv
    assert probe_argv("ping -c 99 -W 9 203.0.113.1").timeout_s == 9 * 0.2 + 2 + 5


@pytest.mark.parametrize(("command", "why"), [
    ("ping -f 203.0.113.1", "-f: refused (flood ping)"),
    ("ping -i 0.001 203.0.113.1", "-i: refused"),
    ("ping -l 100 203.0.113.1", "-l: refused (preload"),
    ("ping -b 203.0.113.255", "-b: refused (broadcast"),
    ("ping -Q 1 203.0.113.1", "-Q: not an option a testcase's ping may use"),
    ("ping washington", "'washington': not an IP address"),
    ("ping -c many 203.0.113.1", "count 'many': not a number"),
    ("traceroute", "traceroute: no destination"),
])
def test_flooding_and_unknown_probe_options_are_refused(command, why):
    with pytest.raises(ValueError) as exc:
        probe_argv(command)
    assert str(exc.value).startswith(why), str(exc.value)


def test_a_state_changing_testcase_command_stays_refused():
    d = _data()
    d["testcases"].append({"device": "NewYork", "commands": ["clear ip route *"], "expected_output": "x"})
    with pytest.raises(TaskFormatError, match=r"testcases\[1\]\.commands\[0\]: 'clear ip route \*' is not a read-only"):
        parse_task(d, source="t.json")


# -- the round trip --------------------------------------------------------------------------------

def test_the_round_trip_is_exact_for_what_ani_does_not_interpret(tmp_path):
    d = _data()
    d["x_origin"] = {"dataset": "netconfbench", "ids": [1, 2]}
    d["topology"]["layout"] = {"NewYork": [0, 0]}
    d["ground_truth_configs"][0]["model"] = "gpt"
    d["testcases"][0]["x_note"] = "kept?"  # a testcase's unknown key is refused (it could grade nothing) ...
    with pytest.raises(TaskFormatError):
        parse_task(d)
    del d["testcases"][0]["x_note"]
    d["testcases"].append({"device": "NewYork", "commands": ["show ip route 203.0.113.0 255.255.255.252"],
                           "expected_output": "S 203.0.113.0/30 [1/0] via 192.0.2.2"})
    text = dump_task(parse_task(d))
    out = json.loads(text)
    assert {k: v for k, v in out.items() if k != "expected_output_match"} == d  # nothing lost nor changed
    assert list(out) == [*d, "expected_output_match"][:6] + ["expected_output_match", "x_origin"]
    assert out["testcases"][0] == {"name": "Static Route from NewYork to Washington",
                                   "expected_result": {"protocol": "static", "next_hop": "192.0.2.2"}}  # unresolved
    again = tmp_path / "again.json"
    again.write_text(text)
    assert dump_task(load_task(again)) == text  # a fixed point
    assert dump_task(load_task(EXAMPLE)) == EXAMPLE.read_text().replace(
        "\n  ]\n}\n", '\n  ],\n  "expected_output_match": ' + json.dumps(NCB_DEFAULT.model_dump(), indent=2).replace(
            "\n", "\n  ") + "\n}\n")


def test_import_warns_of_a_testcase_that_cannot_be_graded(tmp_path):
    d = _data()
    d["testcases"].append({"device": "NewYork", "commands": ["ping -f 203.0.113.1"], "expected_output": "0% packet loss"})
    path = tmp_path / "flood.json"
    path.write_text(json.dumps(d))
    res = CliRunner().invoke(app, ["tasks", "import", str(path)])
    assert res.exit_code == 0, res.output  # valid NetConfBench: imported
    assert (f"warning: {path}: testcases[1].commands[0]: -f: refused (flood ping)") in " ".join(res.output.split())


def test_the_draft_update_cfg_commands_pass_a1s_allowlist_and_a2s_merge():
    """§4.2's update-cfg example, as written (IOS mask form, configure terminal first)."""
    from ani.adapters.allowlist import Refused, plan_config
    from ani.adapters.platform import load_platform
    from ani.device.parse import parse
    from ani.netconfbench.commands import merge_solution

    commands = ["configure terminal", "ip route 203.0.113.0 255.255.255.252 192.0.2.2"]
    steps = plan_config(load_platform("frr"), commands)
    assert [s.command for s in steps if s.kind == "cli"][-1] == commands[1]
    with pytest.raises(Refused):  # a mask is still an address: 'ip route A NH' has no length
        plan_config(load_platform("frr"), ["ip route 203.0.113.0 192.0.2.2"])
    merged = merge_solution(parse("hostname newyork\n"), commands[1:], router="newyork")
    assert [(str(r.prefix), r.nexthop, r.distance) for r in merged.static_routes] == [("203.0.113.0/30", "192.0.2.2", 1)]
    assert merged.unmodelled == []
