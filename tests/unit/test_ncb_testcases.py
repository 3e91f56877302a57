"""Both NetConfBench testcase shapes as observer checks (ani.netconfbench.testcases), and the
observer's evaluation of the ``command`` kind and of the route entry attributes (protocol,
next hop, distance) against a fake lab; the real one: tests/integration/test_ncb_testcases_lab.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ani.errors import ConfigError, TaskFormatError
from ani.lab.proc import ExecResult
from ani.observer.match import NCB_DEFAULT
from ani.netconfbench.task import load_task, parse_task
from ani.netconfbench.testcases import to_checks
from ani.observer import CommandCheck, Observer, RouteCheck, dump_checks, parse_checks
from ani.testing import FakeLab as ShippedFakeLab

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "netconfbench"


def test_both_shapes_become_checks_named_by_the_testcases():
    checks = to_checks(load_task(DATA / "static-backup.json"))
    assert checks == [
        CommandCheck(name="primary static route selected", router="r1",
                     commands=["show ip route 203.0.113.0/30 longer-prefixes"],
                     expect=r"S>\* 203\.0\.113\.0/30 \[1/0\] via 192\.0\.2\.2", match=NCB_DEFAULT),
        RouteCheck(name="backup static route at distance 100", router="r1", prefix="203.0.113.0/30",
                   protocol="static", next_hop="198.51.100.2", distance=100),
        CommandCheck(name="testcase 3 (r1: show ip route 203.0.113.0/30 json)", router="r1",
                     commands=["show ip route 203.0.113.0/30 json"], expect='"protocol":\\s*"static"',
                     match=NCB_DEFAULT),
    ]
    # the checks are data like every other: they dump and parse back
    assert parse_checks(json.loads(json.dumps(dump_checks(checks)))) == checks


def test_expected_result_keys_map_onto_the_route_check():
    task = parse_task({"task_name": "t", "intents": ["x"], "topology": {"nodes": ["r1"]}, "testcases": [
        {"name": "gone", "expected_result": {"device": "r1", "prefix": "10.1.0.0/16", "present": False}},
        {"name": "no ospf", "expected_result": {"device": "r1", "prefix": "10.1.0.0/16", "present": False,
                                                "protocol": "ospf"}},
        {"name": "lp", "expected_result": {"device": "r1", "prefix": "10.1.0.0/16", "local_pref": 200,
                                           "community": "64500:1"}},
    ]})
    gone, no_ospf, lp = to_checks(task)
    assert (gone.expect, gone.protocol) == (False, None)
    assert (no_ospf.expect, no_ospf.protocol) == (False, "ospf")
    assert (lp.local_pref, lp.community, lp.expect) == (200, "64500:1", True)
    with pytest.raises(TaskFormatError, match=r"testcases\[0\]\.expected_result: local_pref / community describe a "
                                              r"present route: not with present: false"):
        parse_task({"task_name": "t", "intents": ["x"], "topology": {"nodes": ["r1"]}, "testcases": [
            {"name": "x", "expected_result": {"device": "r1", "prefix": "10.1.0.0/16", "present": False,
                                              "local_pref": 1}}]}, source="t.json")


def test_a_ping_testcase_is_graded_bounded_and_a_flooding_one_is_refused_by_path():
    raw = json.loads((DATA / "static-backup.json").read_text())
    raw["testcases"][2]["commands"] = ["show ip route", "ping 203.0.113.1 repeat 3"]
    check = to_checks(parse_task(raw, source="s.json"), source="s.json")[2]
    assert check.commands == ["show ip route", "ping 203.0.113.1 repeat 3"]
    raw["testcases"][2]["commands"] = ["show ip route", "ping -f 203.0.113.1"]
    task = parse_task(raw, source="s.json")  # read-only on every platform: the file is valid
    assert task.testcases[2].raw["commands"][1] == "ping -f 203.0.113.1"
    with pytest.raises(TaskFormatError) as exc:
        to_checks(task, source="s.json")
    assert str(exc.value).startswith("s.json: testcases[2].commands[1]: -f: refused (flood ping)")


def test_command_check_validation():
    with pytest.raises(ConfigError, match=r"checks\.0\.command\.expect: not a valid regular expression"):
        parse_checks([{"kind": "command", "router": "r1", "commands": ["show x"], "expect": "[a"}])
    with pytest.raises(ConfigError, match=r"checks\.0\.command\.commands: \[0\]: 'conf t' is not a show, ping or traceroute command"):
        parse_checks([{"kind": "command", "router": "r1", "commands": ["conf t"], "expect": "a"}])
    c = CommandCheck(router="r1", commands=["show a", "show b"], expect="x")
    assert c.name == "command r1: show a; show b ~ /x/" and c.nodes == ["r1"]


def test_route_dumps_leave_out_unset_entry_attributes():
    # scenario files (and so their hashes) are as they were before the attributes existed
    assert set(RouteCheck(router="e1", prefix="10.0.0.0/24").model_dump()) == {
        "name", "service", "kind", "router", "prefix", "expect", "local_pref", "community"}
    r = RouteCheck(router="e1", prefix="10.0.0.0/24", protocol="static", next_hop="10.9.9.9")
    assert r.model_dump(mode="json")["next_hop"] == "10.9.9.9"
    assert r.name == "route e1 10.0.0.0/24 protocol static via 10.9.9.9"
    assert parse_checks([r.model_dump(mode="json")]) == [r]


# -- evaluation against a fake lab ----------------------------------------------------------------

def R(rc: int = 0, stdout: str = "", stderr: str = "", timed_out: bool = False) -> ExecResult:
    """What ``lab.exec`` returns (the real result type)."""
    return ExecResult(rc, stdout, stderr, timed_out, 0.0)


TABLE = {"203.0.113.0/30": [
    {"protocol": "static", "distance": 100, "nexthops": [{"ip": "198.51.100.2", "interfaceName": "eth-b"}]},
    {"protocol": "static", "distance": 1, "selected": True, "nexthops": [{"ip": "192.0.2.2", "interfaceName": "eth-a"}]},
]}
SHOW = ("S   203.0.113.0/30 [100/0] via 198.51.100.2, eth-b, weight 1, 00:00:01\n"
        "S>* 203.0.113.0/30 [1/0] via 192.0.2.2, eth-a, weight 1, 00:00:01\n")


def FakeLab(outputs: list[ExecResult] | None = None) -> ShippedFakeLab:  # noqa: N802
    """ani.testing's FakeLab (routers r1, r2) whose vtysh calls answer ``outputs`` in turn (the
    last one from then on) and whose ``show ip route json`` is TABLE."""
    lab = ShippedFakeLab()
    outputs = list(outputs or [])

    def answer(router, commands):
        if commands == ["show ip route json"]:
            return json.dumps(TABLE)
        return outputs.pop(0) if len(outputs) > 1 else outputs[0]

    lab.on_vtysh(answer)
    return lab


def test_a_command_check_runs_one_vtysh_and_searches_its_output():
    lab = FakeLab([R(stdout=SHOW)])
    checks = [CommandCheck(name="primary", router="r1", commands=["show ip route static", "show ip route 203.0.113.0/30"],
                           expect=r"^S>\* 203\.0\.113\.0/30 \[1/0\] via 192\.0\.2\.2"),
              CommandCheck(name="no ospf", router="r1", commands=["show ip route ospf"], expect=r"^O")]
    ok, bad = Observer(lab, poll_s=0).evaluate(checks, bound_s=0)
    assert (ok.passed, ok.kind, ok.detail) == (True, "command", "matched 'S>* 203.0.113.0/30 [1/0] via 192.0.2.2'")
    assert not bad.passed and bad.detail.startswith("no match of /^O/ in: S   203.0.113.0/30 [100/0]")
    assert ("r1", ["show ip route static", "show ip route 203.0.113.0/30"]) in lab.vtysh_calls  # one call, both commands


def test_a_command_check_is_retried_until_the_output_matches():
    lab = FakeLab([R(stdout=""), R(stdout="Codes: ...\n"), R(stdout=SHOW)])
    (r,) = Observer(lab, poll_s=0).evaluate([CommandCheck(router="r1", commands=["show ip route"], expect="S>")],
                                            bound_s=30)
    assert r.passed and r.attempts == 3


def test_a_timed_out_vtysh_fails_the_attempt():
    (r,) = Observer(FakeLab([R(rc=-9, timed_out=True)]), poll_s=0).evaluate(
        [CommandCheck(router="r1", commands=["show x"], expect=".")], bound_s=0)
    assert not r.passed and r.detail.startswith("vtysh timed out")


@pytest.mark.parametrize(("check", "passed", "detail"), [
    (RouteCheck(router="r1", prefix="203.0.113.0/30", protocol="static", next_hop="192.0.2.2"), True, "route present (static)"),
    (RouteCheck(router="r1", prefix="203.0.113.0/30", next_hop="198.51.100.2", distance=100), True, "route present (static)"),
    (RouteCheck(router="r1", prefix="203.0.113.0/30", next_hop="198.51.100.2", distance=1), False,
     "no matching route: static distance 100 via 198.51.100.2; static distance 1 via 192.0.2.2 (selected)"),
    (RouteCheck(router="r1", prefix="203.0.113.0/30", protocol="ospf"), False, "no matching route: static distance 100"),
    (RouteCheck(router="r1", prefix="203.0.113.0/30", protocol="ospf", expect=False), True, "static distance 100"),
    (RouteCheck(router="r1", prefix="203.0.113.0/30", protocol="static", expect=False), False,
     "matching route present: static distance 100"),
    (RouteCheck(router="r1", prefix="198.18.0.0/24", protocol="static", expect=False), True, "no route"),
    (RouteCheck(router="r1", prefix="198.18.0.0/24", protocol="static"), False, "no matching route: no route"),
])
def test_route_entry_attributes(check, passed, detail):
    (r,) = Observer(FakeLab(), poll_s=0).evaluate([check], bound_s=0)
    assert r.passed is passed and r.detail.startswith(detail), r.detail


def test_a_sample_round_reads_a_command_check_for_itself():
    lab = FakeLab([R(stdout=SHOW)])
    checks = [CommandCheck(router="r1", commands=["show ip route"], expect="S>"),
              RouteCheck(router="r1", prefix="203.0.113.0/30", protocol="static")]
    res = Observer(lab).sample(checks)
    assert [r.passed for r in res] == [True, True]
    # the command check's own read, no prefetch of a 'show bgp summary' for it; the route check's table read
    assert sorted(lab.vtysh_calls) == [("r1", ["show ip route"]), ("r1", ["show ip route json"])]


@pytest.mark.parametrize("command", ["show version\nconfigure terminal\nip route 10.66.0.0/24 Null0\nend",
                                     "show version\r\nconf t", "show ip route\x00"])
def test_a_testcase_command_with_a_line_break_is_refused(command):
    """vtysh runs each line of one ``-c`` argument as a command of its own: a testcase whose
    command holds ``\\n`` changed the router while it was graded (new-user report: the injected
    route then counted against the agent). Refused by the file's JSON path, and as a check."""
    raw = json.loads((DATA / "static-backup.json").read_text())
    raw["testcases"][2]["commands"] = [command]
    with pytest.raises(TaskFormatError) as exc:
        parse_task(raw, source="s.json")
    assert str(exc.value).startswith("s.json: testcases[2].commands[0]: ")
    assert "line break or another control character" in str(exc.value)
    with pytest.raises(ConfigError, match="line break or another control character"):
        parse_checks([{"kind": "command", "router": "r1", "commands": [command], "expect": "a"}])
