"""ani.testing.FakeLab's scripted answers and failure controls (issue 28: the one fake the unit
tests' labs moved onto), and the campaign fake world's labs."""

from __future__ import annotations

import json
import os
import threading

import pytest

from ani.errors import AniTimeout, LabError, LabGone, ObserverError, UnknownNode
from ani.lab.proc import ExecResult
from ani.testing import FakeLab
from ani.testing.fake_campaign import FakeVariant, FakeWorld, FlagCheck, flag, seed_of, set_flag

DAEMONS = {"name": "d", "routers": {"r1": {"daemons": ["bgpd"]}, "r2": {}}}


def test_a_scripted_vtysh_answer_comes_first_and_none_falls_through():
    lab = FakeLab()
    lab.on_vtysh(lambda router, commands: "42\n" if commands == ["show answer"] else None)
    assert lab.vtysh("r1", "show answer").stdout == "42\n"
    assert lab.vtysh("r1", "show version").stdout.startswith("FRRouting ")  # not its command: built-in
    lab.on_vtysh(lambda router, commands: ExecResult(1, "% busy\n", "", False, 0.0), node="r2")
    assert lab.vtysh("r2", "show answer").rc == 1 and lab.vtysh("r1", "show answer").rc == 0
    assert lab.vtysh_calls == [("r1", ["show answer"]), ("r1", ["show version"]), ("r2", ["show answer"]),
                               ("r1", ["show answer"])]


def test_a_scripted_answer_raises_what_a_real_lab_raises():
    lab = FakeLab()

    def hang(node, argv):
        raise AniTimeout(2.0, " ".join(argv))

    lab.on_exec(hang, node="h1")
    with pytest.raises(AniTimeout):
        lab.exec("h1", ["ping", "-c", "1", "192.0.2.1"])
    assert lab.exec("r1", ["ping", "-c", "1", "192.0.2.1"]).rc == 127  # another node: not scripted
    assert lab.calls[0] == ("h1", ["ping", "-c", "1", "192.0.2.1"])  # recorded before it answered


def test_a_scripted_answer_runs_outside_the_lock_so_it_may_exec_again_at_once():
    lab = FakeLab()
    lab.on(["inner"], stdout="in\n")

    def outer(node, argv):
        if argv[0] != "outer":
            return None
        got: list[str] = []
        t = threading.Thread(target=lambda: got.append(lab.exec(node, ["inner"]).stdout))
        t.start()
        t.join(timeout=10)
        return "".join(got) or None

    lab.on_exec(outer)
    assert lab.exec("h1", ["outer"]).stdout == "in\n"


def test_vtysh_json_parses_or_says_what_vtysh_gave():
    lab = FakeLab()
    lab.on("show bgp summary json", stdout='{"ipv4Unicast": {}}')
    assert lab.vtysh_json("r1", "show bgp summary") == {"ipv4Unicast": {}}  # json appended
    with pytest.raises(LabError, match=r"^r1: 'show nothing json' \(exit 1\) gave no JSON: % Unknown command"):
        lab.vtysh_json("r1", "show nothing json")


def test_dead_daemons_and_daemon_pids():
    lab = FakeLab(DAEMONS)
    assert lab.dead_daemons("r1") == [] and lab.daemon_pids("r1") == {
        "bgpd": os.getpid(), "staticd": os.getpid(), "zebra": os.getpid()}
    lab.kill_daemon("r1", "bgpd")
    lab.set_daemon_pid("r1", "zebra", 4242)
    assert lab.dead_daemons("r1") == ["bgpd"] and lab.dead_daemons("r2") == []
    assert lab.daemon_pids("r1") == {"staticd": os.getpid(), "zebra": 4242}
    with pytest.raises(LabError, match="r2: bgpd is not one of its daemons"):
        lab.kill_daemon("r2", "bgpd")
    with pytest.raises(UnknownNode):
        lab.daemon_pids("x9")


def test_a_lab_made_down_and_labs_that_fail_to_come_up_or_down():
    lab = FakeLab(running=False)
    with pytest.raises(LabGone):
        lab.vtysh("r1", "show version")
    assert lab.up().vtysh("r1", "show version").ok
    bad = FakeLab(running=False, fail_up=LabError("veth"), fail_down=LabError("netns busy"))
    with pytest.raises(LabError, match="veth"):
        bad.up()
    assert bad.running is False
    with pytest.raises(LabError, match="netns busy"):
        bad.down()
    assert bad.downs == 1 and bad.running is False
    lab.down()
    lab.down()
    assert lab.downs == 2


def test_harness_faults():
    lab = FakeLab()
    assert lab.harness_faults() == []
    lab.add_harness_fault("lab x: its NETCONF server (pid 7) is not running")
    assert lab.harness_faults() == ["lab x: its NETCONF server (pid 7) is not running"]


def test_a_pretend_netconf_server_and_its_locks():
    with pytest.raises(LabError, match="no NETCONF server for 'r1'"):
        FakeLab().netconf_endpoint("r1")
    lab = FakeLab(netconf=True)
    ep = lab.netconf_endpoint("r2")
    assert (ep.host, ep.port, ep.username, ep.password) == ("127.0.0.1", 831, "ani", "ani")
    assert lab.router_at_port(ep.port) == "r2" and lab.router_at_port(830) == "r1"
    with pytest.raises(UnknownNode):
        lab.netconf_endpoint("h1")
    assert lab.netconf_lock("r1") is None
    lab.hold_lock("r1", 7, "candidate")
    assert lab.netconf_lock("r1") is None and lab.netconf_lock("r1", "candidate").session_id == 7


def test_set_config_replaces_the_running_configuration():
    lab = FakeLab()
    lab.set_config("r2", "hostname r2\n!\ninterface lo\n ip address 192.0.2.2/32\nexit\n")
    assert lab.config("r2") == ["hostname r2", "interface lo", " ip address 192.0.2.2/32", "exit"]
    assert " ip address 192.0.2.2/32\n" in lab.running_config("r2")


def test_an_empty_nft_ruleset_in_json_too():
    out = json.loads(FakeLab().exec("r1", ["nft", "-j", "list", "ruleset"]).stdout)
    assert [list(x) for x in out["nftables"]] == [["metainfo"]]


def test_the_campaign_worlds_labs_carry_their_seeds_troubles():
    world = FakeWorld(fail_up={1}, broken_baseline={2}, observer_fails={3}, fail_down={4})
    labs = {s: world.make_lab(FakeVariant(s).lab_topology(None)) for s in (1, 2, 3, 4, 5)}
    assert [seed_of(lab) for lab in world.labs] == [1, 2, 3, 4, 5] and world.up_labs == []
    with pytest.raises(LabError, match="veth for seed 1"):
        labs[1].up()
    assert flag(labs[2].up(), "damage") and not flag(labs[5].up(), "damage")
    site = [FlagCheck("site-reach", "site", True)]
    with pytest.raises(ObserverError):
        world.make_observer(labs[3].up()).evaluate(site)
    obs = world.make_observer(labs[5])
    assert [r.passed for r in obs.evaluate(site)] == [False]
    set_flag(labs[5], "site")
    assert [(r.passed, r.detail) for r in obs.evaluate(site)] == [(True, "site=True")]
    with pytest.raises(LabError, match="netns busy"):
        labs[4].up().down()
    assert world.topologies[0] == FakeVariant(1).lab_topology(None)
    assert seed_of(world.make_lab({"seed": 9})) == 9  # a variant's own description of its lab
