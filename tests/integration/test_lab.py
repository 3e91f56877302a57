"""The lab on real FRR: convergence, exec inside nodes, FRR isolation (issue case 5), exec timeout."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from ani.errors import LabError, LabNotFound, UnknownNode
from ani.lab import Lab
from ani.lab.cleanup import pids_in_namespaces
from ani.lab.converge import pending

pytestmark = pytest.mark.integration

TRI = Path(__file__).parent.parent / "data" / "tri-ospf-ibgp.yaml"

RID = {"r1": "10.255.0.1", "r2": "10.255.0.2", "r3": "10.255.0.3"}


def test_up_returns_converged(tri_lab):
    assert pending(tri_lab) == []
    peers = tri_lab.vtysh_json("r1", "show bgp summary json")["ipv4Unicast"]["peers"]
    assert {a: p["state"] for a, p in peers.items()} == {
        "10.255.0.2": "Established",
        "10.255.0.3": "Established",
    }
    nbrs = tri_lab.vtysh_json("r1", "show ip ospf neighbor")["neighbors"]
    assert sorted(nbrs) == ["10.255.0.2", "10.255.0.3"]
    assert all(e["nbrState"].startswith("Full") for es in nbrs.values() for e in es)


def test_hosts_reach_each_other_through_bgp_routes(tri_lab):
    # sessions are Established when up() returns; routes may follow a moment later
    deadline = time.monotonic() + 10
    while True:
        res = tri_lab.exec("h1", ["ping", "-c", "1", "-W", "1", "198.18.2.10"])
        if res.rc == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert res.rc == 0, res.stdout + res.stderr
    route = tri_lab.vtysh_json("r2", "show ip route 198.18.2.0/24 json")
    assert route["198.18.2.0/24"][0]["protocol"] == "bgp"


def test_hostname_inside_each_node_is_its_name(tri_lab):
    for node in tri_lab.routers + tri_lab.hosts:
        res = tri_lab.exec(node, ["hostname"])
        assert (res.rc, res.stdout.strip()) == (0, node)


def test_node_argv_runs_in_the_node_namespace(tri_lab):
    argv = tri_lab.node_argv("h2", ["ip", "-4", "-o", "addr", "show", "dev", "eth0"])
    assert argv[0] == str(tri_lab.dir / "h2" / "enter")
    res = tri_lab.exec("h2", argv[1:])
    assert "198.18.2.10/24" in res.stdout


@pytest.mark.parametrize("router", ["r1", "r2", "r3"])
def test_plain_vtysh_inside_router_reaches_only_that_router(tri_lab, router):
    """Issue case 5: a call aimed at a router reaches its FRR and no other."""
    res = tri_lab.exec(router, ["vtysh", "-c", "show running-config"])
    assert res.rc == 0, res.stderr
    hostnames = re.findall(r"^hostname (\S+)$", res.stdout, re.M)
    rids = set(re.findall(r"router-id (\S+)$", res.stdout, re.M))
    assert hostnames == [router]
    assert rids == {RID[router]}
    # and the daemons' own view agrees
    assert tri_lab.vtysh_json(router, "show ip ospf")["routerId"] == RID[router]
    assert tri_lab.vtysh_json(router, "show bgp summary")["ipv4Unicast"]["routerId"] == RID[router]


def test_vtysh_prompt_shows_router_name(tri_lab):
    res = tri_lab.exec("r3", ["vtysh"], input="show version\n")
    assert "r3#" in res.stdout


def test_running_config_is_that_routers(tri_lab):
    cfg = tri_lab.running_config("r2")
    assert "hostname r2\n" in cfg and "bgp router-id 10.255.0.2" in cfg
    assert "10.255.0.3/32" not in cfg.split("router ospf")[0]  # r3's loopback is not r2's


def test_bogus_pathspace_is_an_error_not_a_fallback(tri_lab):
    res = tri_lab.exec("r2", ["/usr/bin/vtysh", "-N", f"ani-{tri_lab.id}-nope", "-c", "show running-config"])
    assert res.rc != 0
    assert "hostname" not in res.stdout
    assert "failed to connect" in (res.stdout + res.stderr)


def test_missing_run_dir_is_an_error_not_a_fallback(make_lab, tmp_path):
    from ani.lab import frr

    lab = make_lab(TRI)
    run = frr.run_dir(lab.pathspace("r2"))
    moved = tmp_path / "moved"
    # the run dir is a tmpfs mount point (frr.prepare): move the mount away, then the (empty)
    # directory under it, so the path is really missing
    moved.mkdir()
    subprocess.run(["mount", "--move", str(run), str(moved)], check=True)
    under = tmp_path / "under"
    run.rename(under)
    try:
        res = lab.exec("r2", ["vtysh", "-c", "show running-config"])
        assert res.rc != 0
        assert "hostname" not in res.stdout
        with pytest.raises(LabError, match="r2"):
            lab.vtysh_json("r2", "show ip ospf json")
        assert lab.vtysh("r1", "show running-config").ok  # the others are unaffected
    finally:
        under.rename(run)
        subprocess.run(["mount", "--move", str(moved), str(run)], check=True)
    assert "hostname r2" in lab.running_config("r2")


def test_exec_timeout_kills_the_command_and_next_exec_works(tri_lab):
    res = tri_lab.exec("h1", ["sh", "-c", "sleep 30 & sleep 30"], timeout=1.0)
    assert res.timed_out and res.rc != 0
    assert res.elapsed_s < 15  # killed at the bound, long before the 30 s sleeps end
    deadline = time.monotonic() + 2  # SIGKILL delivery is asynchronous
    while pids_in_namespaces([tri_lab.netns("h1")]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert pids_in_namespaces([tri_lab.netns("h1")]) == []  # both sleeps are gone
    nxt = tri_lab.exec("h1", ["echo", "ok"])
    assert (nxt.rc, nxt.stdout, nxt.timed_out) == (0, "ok\n", False)


def test_exec_returns_rc_and_stderr(tri_lab):
    res = tri_lab.exec("r1", ["sh", "-c", "echo out; echo err >&2; exit 3"], input=None)
    assert (res.rc, res.stdout, res.stderr, res.timed_out) == (3, "out\n", "err\n", False)
    res = tri_lab.exec("r1", ["cat"], input="fed on stdin")
    assert res.stdout == "fed on stdin"


def test_unknown_node_and_host_as_router(tri_lab):
    with pytest.raises(UnknownNode, match="zz"):
        tri_lab.exec("zz", ["true"])
    with pytest.raises(UnknownNode, match="host"):
        tri_lab.vtysh("h1", "show version")


def test_vtysh_json_raises_on_non_json(tri_lab):
    with pytest.raises(LabError, match="no JSON"):
        tri_lab.vtysh_json("r1", "show bgp neighbors 10.9.9.9 bogus-word")


def test_attach_and_list(tri_lab):
    again = Lab.attach(tri_lab.id)
    assert again.topology == tri_lab.topology
    assert again.running_config("r3") == tri_lab.running_config("r3")
    entry = next(e for e in Lab.list_labs() if e["id"] == tri_lab.id)
    assert entry["name"] == "tri-ospf-ibgp"
    assert entry["alive"] is True and entry["status"] == "up"
    assert entry["daemons"] == {"r1": 4, "r2": 4, "r3": 4}
    with pytest.raises(LabNotFound):
        Lab.attach("nosuchlab")
