"""NetConfBench testcases of both shapes graded out of band on real FRR: the task
``tests/data/netconfbench/static-backup.json`` on a lab built from its topology (a stand-in
for ``ani.netconfbench.lab.task_scenario``, which part 2 of issue 15 owns: here the node and
interface names need no mapping), every testcase failing before the expert solution is
applied with vtysh (out of band) and passing after it; a ``command`` check whose regex does not
match fails with the output in its detail."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from ani.lab.topology import parse_topology
from ani.netconfbench.task import NcbTask, load_task
from ani.netconfbench.testcases import to_checks
from ani.observer import Observer
from ani.observer.checks import CommandCheck, RouteCheck

pytestmark = pytest.mark.integration

TASK = Path(__file__).parents[1] / "data" / "netconfbench" / "static-backup.json"


def stand_in_topology(task: NcbTask, name: str):  # test stand-in for part 2's task_scenario
    routers = {n: {"daemons": [], "config": task.startup_configs.get(n, f"hostname {n}\n")}
               for n in task.topology.nodes}
    links = [{"a": {"node": ln.a, "ifname": ln.a_if}, "b": {"node": ln.b, "ifname": ln.b_if}}
             for ln in task.topology.parsed_links()]
    return parse_topology({"name": name, "routers": routers, "links": links}, source=str(TASK))


def test_testcases_fail_before_and_pass_after_the_solution(make_lab):
    task = load_task(TASK)
    lab = make_lab(stand_in_topology(task, "ncb-static"), lab_id="ncbf" + secrets.token_hex(3))
    checks = to_checks(task)
    assert [type(c) for c in checks] == [CommandCheck, RouteCheck, CommandCheck]
    obs = Observer(lab, poll_s=0.2)
    before = obs.evaluate(checks, bound_s=1)
    assert [r.passed for r in before] == [False, False, False], [(r.name, r.detail) for r in before]
    assert before[0].detail.startswith("no match of /S>\\* 203")
    assert before[1].detail.startswith("no matching route")

    for node, lines in task.ground_truth_configs[0].configs.items():
        res = lab.vtysh(node, ["configure terminal", *lines])
        assert res.ok, res.stderr or res.stdout
    after = obs.evaluate(checks, bound_s=10)
    assert [r.passed for r in after] == [True, True, True], [(r.name, r.detail) for r in after]
    assert after[0].detail.startswith("matched 'S>* 203.0.113.0/30 [1/0] via 192.0.2.2")
    assert after[0].name == "primary static route selected"
    assert after[2].name == "testcase 3 (r1: show ip route 203.0.113.0/30 json)"

    # the backup entry is in the table, not selected; the primary is selected: both match
    # their own attributes, and a distance nobody configured matches nothing
    more = [RouteCheck(router="r1", prefix="203.0.113.0/30", protocol="static", next_hop="192.0.2.2", distance=1),
            RouteCheck(router="r1", prefix="203.0.113.0/30", protocol="static", distance=50),
            RouteCheck(router="r1", prefix="203.0.113.0/30", protocol="ospf", expect=False),
            CommandCheck(router="r1", commands=["show ip route 203.0.113.0/30", "show running-config"],
                         expect=r"^ip route 203\.0\.113\.0/30 198\.51\.100\.2 100$")]
    res = obs.evaluate(more, bound_s=1)
    assert [r.passed for r in res] == [True, False, True, True], [(r.name, r.detail) for r in res]
    assert "static distance 100 via 198.51.100.2" in res[1].detail and "(selected)" in res[1].detail
