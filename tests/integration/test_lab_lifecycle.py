"""Lab lifecycle on real FRR: side-by-side labs, exact teardown, crashes, convergence timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from ani.errors import ConvergenceTimeout, LabError
from ani.lab import Lab, frr
from ani.lab.cleanup import pids_in_namespaces
from ani.lab.converge import pending
from ani.lab.netns import list_netns
from ani.lab.proc import cmdline, is_alive
from ani.lab.state import lab_dir, read_state
from ani.lab.topology import parse_topology

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

TRI = Path(__file__).parent.parent / "data" / "tri-ospf-ibgp.yaml"


def _uid(prefix: str) -> str:
    """A lab id unique to this test session (two suites on one machine must not collide)."""
    return prefix + uuid.uuid4().hex[:6]


ID_CTXTEST = _uid("ctxtes")
ID_DUPID = _uid("dupid")
ID_CVTIMEOUT = _uid("cvtime")
ID_HALFUP = _uid("halfup")
ID_BADCFG = _uid("badcfg")
ID_SAMEID = _uid("sameid")
ID_CRASHED = _uid("crashe")
ID_SIGTERM = _uid("sigter")
ID_ATEXIT = _uid("atexit")


def _footprint(lab_id: str) -> dict[str, list]:
    """Everything named after the lab that still exists on the host."""
    p = f"ani-{lab_id}-"
    return {
        "netns": [n for n in list_netns() if n.startswith(p)],
        "etc": sorted(d.name for d in frr.ETC_ROOT.iterdir() if d.name.startswith(p)),
        "run": sorted(d.name for d in frr.RUN_ROOT.iterdir() if d.name.startswith(p)),
        "procs": [pid for pid in _all_pids() if any(p in a for a in cmdline(pid))],
        "dir": [str(lab_dir(lab_id))] if lab_dir(lab_id).exists() else [],
    }


def _all_pids() -> list[int]:
    return [int(e) for e in os.listdir("/proc") if e.isdigit()]


EMPTY = {"netns": [], "etc": [], "run": [], "procs": [], "dir": []}


def _daemon_pids(lab: Lab) -> list[int]:
    st = read_state(lab.id)
    assert st is not None
    return [pid for d in st.pids.values() for pid in d.values()]


def test_two_labs_side_by_side_and_down_removes_exactly_one(make_lab):
    a = make_lab(TRI)
    b = make_lab(TRI)
    assert a.id != b.id
    a_pids, b_pids = _daemon_pids(a), _daemon_pids(b)
    assert len(a_pids) == len(b_pids) == 12  # 3 routers x zebra, staticd, ospfd, bgpd
    assert not set(a_pids) & set(b_pids)
    fp_a = _footprint(a.id)
    assert len(fp_a["netns"]) == 5 and len(fp_a["etc"]) == 3 and len(fp_a["procs"]) == 12

    b_before = _footprint(b.id)
    a.down()
    assert _footprint(a.id) == EMPTY
    assert not any(is_alive(p) for p in a_pids)
    assert _footprint(b.id) == b_before
    assert all(is_alive(p) for p in b_pids)
    assert "hostname r2" in b.running_config("r2")
    a.down()  # idempotent
    assert _footprint(a.id) == EMPTY


def test_user_lab_id_and_context_manager_downs_on_exception():
    with pytest.raises(RuntimeError, match="boom"):
        with Lab(TRI, lab_id=ID_CTXTEST) as lab:
            assert lab.netns("r1") == f"ani-{ID_CTXTEST}-r1"
            assert lab.pathspace("r2") == f"ani-{ID_CTXTEST}-r2"
            assert lab.dir == lab_dir(ID_CTXTEST)
            assert f"ani-{ID_CTXTEST}-h2" in list_netns()
            raise RuntimeError("boom")
    assert _footprint(ID_CTXTEST) == EMPTY


def test_bad_lab_id_and_id_in_use(make_lab):
    with pytest.raises(LabError, match="must match"):
        Lab(TRI, lab_id="Bad_Id")
    lab = make_lab(TRI, lab_id=ID_DUPID)
    with pytest.raises(LabError, match="already in use") as ei:
        Lab(TRI, lab_id=ID_DUPID).up()
    assert "choose another id" in str(ei.value) and f"'ani lab down {ID_DUPID}'" in str(ei.value)
    assert "hostname r1" in lab.running_config("r1")  # the failed second up() did not touch it


def _with_extra(router: str, extra_config: str, **conv) -> object:
    data = yaml.safe_load(TRI.read_text())
    data["routers"][router]["config"] += extra_config
    data["convergence"].update(conv)
    return parse_topology(data)


def test_convergence_timeout_names_the_pending_session(make_lab):
    topo = _with_extra(
        "r2", "router bgp 65000\n neighbor 10.255.0.99 remote-as 65000\n", timeout_s=3
    )
    t0 = time.monotonic()
    with pytest.raises(ConvergenceTimeout) as ei:
        make_lab(topo, lab_id=ID_CVTIMEOUT)
    assert 3 <= time.monotonic() - t0 < 20
    pend = ei.value.pending
    assert len(pend) == 1 and pend[0].startswith("r2: BGP neighbor 10.255.0.99 is ")
    assert pend[0].endswith("(expected Established)")
    assert "r2: BGP neighbor 10.255.0.99" in str(ei.value)
    assert _footprint(ID_CVTIMEOUT) == EMPTY  # a failed up() removes what it made


def test_admin_shutdown_neighbor_is_not_waited_for(make_lab):
    topo = _with_extra(
        "r2",
        "router bgp 65000\n neighbor 10.255.0.99 remote-as 65000\n neighbor 10.255.0.99 shutdown\n",
        timeout_s=10,
    )
    lab = make_lab(topo)
    peers = lab.vtysh_json("r2", "show bgp summary json")["ipv4Unicast"]["peers"]
    assert "Admin" in peers["10.255.0.99"]["state"]


def test_wait_converged_reports_a_broken_ospf_adjacency(make_lab):
    lab = make_lab(TRI)
    # a hello-interval mismatch on r3's side of the r2-r3 link: the adjacency drops (dead 3 s)
    res = lab.vtysh("r3", ["configure terminal", "interface eth-r2", "ip ospf hello-interval 2"])
    assert res.ok, res.stdout + res.stderr
    deadline = time.monotonic() + 10  # the drop takes the dead interval (3 s)
    while not pending(lab) and time.monotonic() < deadline:
        time.sleep(0.2)
    with pytest.raises(ConvergenceTimeout) as ei:
        lab.wait_converged(timeout_s=2)
    assert "r2: OSPF adjacency on eth-r3 with r3 not Full (state Down)" in ei.value.pending, ei.value.pending
    assert "r3: OSPF adjacency on eth-r2 with r2 not Full (state Down)" in ei.value.pending
    assert not any("eth-r1" in p for p in ei.value.pending)  # the healthy links are not blamed


def test_failed_startup_removes_the_half_created_lab():
    data = yaml.safe_load(TRI.read_text())
    data["routers"]["r3"]["nftables"] = "this is not an nftables ruleset\n"
    lab = Lab(parse_topology(data), lab_id=ID_HALFUP)
    with pytest.raises(LabError, match="r3: loading the nftables ruleset failed"):
        lab.up()
    assert _footprint(ID_HALFUP) == EMPTY


def test_nftables_ruleset_is_loaded(make_lab):
    data = yaml.safe_load(TRI.read_text())
    data["routers"]["r1"]["nftables"] = "table inet ani_test {\n chain anifilter { type filter hook forward priority 0; }\n}\n"
    lab = make_lab(parse_topology(data))
    res = lab.exec("r1", ["nft", "list", "tables"])
    assert "table inet ani_test" in res.stdout
    assert "ani_test" not in lab.exec("r2", ["nft", "list", "tables"]).stdout


#: kills the lab's reaper first: what is left is for ``down_stale`` (the reaper's own work is
#: tests/integration/test_process_life.py)
KILL_REAPER = """
import os, signal, time
from ani.lab.state import read_state
def kill_reaper(lab_id):
    st = read_state(lab_id)
    os.kill(st.reaper_pid, signal.SIGKILL)
    while os.path.exists(f"/proc/{st.reaper_pid}") and open(f"/proc/{st.reaper_pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.01)
"""

CRASHER = KILL_REAPER + """
import os, sys
from ani.lab import Lab
lab = Lab(sys.argv[1], lab_id=sys.argv[2]).up()
kill_reaper(lab.id)
print(lab.id, flush=True)
os._exit(0)   # no atexit, no down(): a crashed SDK process (and its reaper gone too)
"""

OWNER = """
import sys, time
from ani.lab import Lab
lab = Lab(sys.argv[1], lab_id=sys.argv[2]).up()
print(lab.id, flush=True)
time.sleep(120)
"""


def test_crashed_owner_is_cleaned_by_down_stale():
    lab_id = ID_CRASHED
    try:
        out = subprocess.run(
            [sys.executable, "-c", CRASHER, str(TRI), lab_id], capture_output=True, text=True, timeout=60
        )
        assert out.stdout.strip() == lab_id, out.stderr
        st = read_state(lab_id)
        assert st is not None and not st.owner_alive() and not st.detached
        daemons = [p for d in st.pids.values() for p in d.values()]
        assert daemons and all(is_alive(p) for p in daemons)  # the crash left the lab running
        entry = next(e for e in Lab.list_labs() if e["id"] == lab_id)
        assert entry["alive"] is False
        removed = Lab.down_stale()
        assert lab_id in removed
        assert _footprint(lab_id) == EMPTY
        assert not any(is_alive(p) for p in daemons)
    finally:
        Lab.down_stale()


def test_down_stale_keeps_labs_with_a_live_owner(make_lab):
    lab = make_lab(TRI)
    assert lab.id not in Lab.down_stale()
    assert len(_footprint(lab.id)["netns"]) == 5


def test_sigterm_to_owner_removes_its_lab():
    lab_id = ID_SIGTERM
    p = subprocess.Popen([sys.executable, "-c", OWNER, str(TRI), lab_id], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        assert p.stdout.readline().strip() == lab_id
        assert len(_footprint(lab_id)["netns"]) == 5
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=20)
        assert p.returncode == -signal.SIGTERM
        assert _footprint(lab_id) == EMPTY
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        Lab.down_stale()


def test_atexit_removes_lab_of_a_script_that_forgot_down():
    lab_id = ID_ATEXIT
    script = "import sys\nfrom ani.lab import Lab\nLab(sys.argv[1], lab_id=sys.argv[2]).up()\n"
    try:
        out = subprocess.run([sys.executable, "-c", script, str(TRI), lab_id], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert _footprint(lab_id) == EMPTY
    finally:
        Lab.down_stale()


def test_processes_started_inside_a_node_die_with_the_lab(make_lab):
    lab = make_lab(TRI)
    lab.exec("h1", ["sh", "-c", "setsid sleep 300 >/dev/null 2>&1 < /dev/null &"])
    stray = pids_in_namespaces([lab.netns("h1")])
    assert len(stray) == 1 and is_alive(stray[0])
    lab.down()
    assert not is_alive(stray[0])
    assert _footprint(lab.id) == EMPTY


def test_daemons_without_protocol_config_count_as_converged(make_lab):
    topo = parse_topology({
        "name": "bare",
        "routers": {"b1": {"daemons": ["ospfd", "bgpd"]}, "b2": {"daemons": ["ospfd", "bgpd"]}},
        "links": [{"a": {"node": "b1", "ifname": "eth0"}, "b": {"node": "b2", "ifname": "eth0"}}],
        "convergence": {"timeout_s": 5},
    })
    lab = make_lab(topo)
    assert pending(lab) == []
    assert lab.exec("b1", ["hostname"]).stdout == "b1\n"
    assert lab.running_config("b2").count("hostname b2") == 1  # vtysh's hostname, not the machine's


def test_a_dead_daemon_is_reported_as_pending(make_lab):
    lab = make_lab(TRI)
    bgpd = read_state(lab.id).pids["r2"]["bgpd"]
    os.kill(bgpd, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pend = pending(lab)
        if any(p.startswith("r1: BGP neighbor 10.255.0.2 is ") for p in pend):  # hold time 3 s
            break
        time.sleep(0.2)
    assert "r2: bgpd did not answer 'show bgp summary json'" in pend
    assert any(p.startswith("r1: BGP neighbor 10.255.0.2 is ") for p in pend), pend
    assert not any(p.startswith("r3:") for p in pend)  # r3's session to r1 is fine
    entry = next(e for e in Lab.list_labs() if e["id"] == lab.id)
    assert entry["daemons"] == {"r1": 4, "r2": 3, "r3": 4}


def test_bad_startup_config_names_the_line_and_leaves_nothing():
    data = yaml.safe_load(TRI.read_text())
    data["routers"]["r2"]["config"] = data["routers"]["r2"]["config"].replace(
        "router bgp 65000\n", "router bgp 65000\n neighbor 10.255.0.1 bogus-keyword\n"
    )
    lab = Lab(parse_topology(data), lab_id=ID_BADCFG)
    with pytest.raises(LabError, match=r"r2: loading the startup config failed[\s\S]*bogus-keyword"):
        lab.up()
    assert _footprint(ID_BADCFG) == EMPTY


def test_a_lab_object_whose_up_failed_on_a_used_id_never_downs_the_other(make_lab):
    first = make_lab(TRI, lab_id=ID_SAMEID)
    second = Lab(TRI, lab_id=ID_SAMEID)
    with pytest.raises(LabError, match="already in use"):
        second.up()
    second.down()
    assert len(_footprint(ID_SAMEID)["netns"]) == 5
    assert first.exec("r1", ["hostname"]).stdout == "r1\n"


HALF = KILL_REAPER + """
import os, sys
from ani.lab import Lab, frr
def crash(*a, **k):
    kill_reaper(sys.argv[2])
    os._exit(3)   # dies between starting FRR and loading its config (its reaper gone too)
frr.load_config = crash
Lab(sys.argv[1], lab_id=sys.argv[2], detached=True).up()
"""


def test_half_created_detached_lab_of_a_dead_creator_is_stale():
    lab_id = _uid("halfde")
    try:
        out = subprocess.run([sys.executable, "-c", HALF, str(TRI), lab_id], capture_output=True, text=True, timeout=60)
        assert out.returncode == 3, out.stderr
        st = read_state(lab_id)
        assert st is not None and st.detached and st.status == "creating"
        assert len(_footprint(lab_id)["netns"]) == 5 and _footprint(lab_id)["procs"]
        assert lab_id in Lab.down_stale()
        assert _footprint(lab_id) == EMPTY
    finally:
        Lab.down_stale()


def test_unreadable_state_and_orphan_namespaces_are_stale():
    from ani.lab.state import lab_dir

    broken, orphan = _uid("unread"), _uid("orphan")
    try:
        d = lab_dir(broken)
        d.mkdir(parents=True)
        (d / "state.json").write_text("{not json")
        subprocess.run(["ip", "netns", "add", f"ani-{broken}-n1"], check=True)
        subprocess.run(["ip", "netns", "add", f"ani-{orphan}-n1"], check=True)  # no lab dir at all
        removed = Lab.down_stale()
        assert orphan in removed  # an orphan namespace is stale at once
        assert broken not in removed  # a young unreadable state may be a lab being created
        assert f"ani-{broken}-n1" in list_netns()
        os.utime(d, (time.time() - 60, time.time() - 60))
        assert broken in Lab.down_stale()
        assert _footprint(broken) == EMPTY and _footprint(orphan) == EMPTY
    finally:
        Lab.down_stale()
        for lab_id in (broken, orphan):
            if f"ani-{lab_id}-n1" in list_netns():
                subprocess.run(["ip", "netns", "del", f"ani-{lab_id}-n1"])


PREFIXED_CRASHER = KILL_REAPER + """
import os, sys
from ani.lab import Lab
lab = Lab(sys.argv[1], lab_id=sys.argv[2], prefix=sys.argv[3], netconf=False, ssh=False).up()
kill_reaper(lab.id)
print(lab.id, flush=True)
os._exit(0)   # a crashed owner: the lab stays, stale
"""


def test_down_prefix_removes_only_that_prefix_s_labs_whose_owner_is_gone(make_lab, tmp_path):
    """issue 24 §2: on a shared machine ``ani lab status --prefix P`` finds one's labs, and ``ani
    lab down --prefix P`` removes the stale ones of P, never a live lab of P (nor anything else)."""
    from typer.testing import CliRunner

    from ani.cli import app
    from ani.lab.cleanup import destroy
    from ani.testing.fake_lab import DEFAULT_TOPOLOGY

    prefix, crashed = "i24-" + uuid.uuid4().hex[:8], _uid("prefcr")  # this session's own
    topo = tmp_path / "small.yaml"
    topo.write_text(yaml.safe_dump(DEFAULT_TOPOLOGY))
    try:
        out = subprocess.run([sys.executable, "-c", PREFIXED_CRASHER, str(topo), crashed, prefix],
                             capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == crashed, out.stderr
        live = make_lab(topo, prefix=prefix, netconf=False, ssh=False)
        res = CliRunner().invoke(app, ["lab", "status", "--prefix", prefix], env={"COLUMNS": "200"})
        rows = [[c.strip() for c in ln.split("│")[1:-1]] for ln in res.output.splitlines() if ln.startswith("│")]
        assert sorted((r[0], r[1]) for r in rows) == sorted([(crashed, prefix), (live.id, prefix)]), res.output
        assert next(r[4] for r in rows if r[0] == crashed).endswith("(gone: stale)")
        res = CliRunner().invoke(app, ["lab", "down", "--prefix", prefix])
        assert res.exit_code == 0 and res.output.split() == (
            f"removed 1 lab(s) of prefix {prefix} whose owner is gone: {crashed}").split()
        assert _footprint(crashed) == EMPTY
        assert len(_footprint(live.id)["netns"]) == 3 and read_state(live.id).prefix == prefix
    finally:
        destroy(crashed)  # this test's lab only (idempotent)
