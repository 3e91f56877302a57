"""The long-lived vtysh behind ``lab.vtysh(router, "show running-config")``
(:mod:`ani.lab.vtysh_session`): the same bytes as a one-shot vtysh, never stale after a daemon
restart, bounded by the caller's timeout on a frozen router, safe from two threads, and gone with
``lab.down()`` or its owner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ani.host import proc

pytestmark = pytest.mark.integration

HERE = Path(__file__).resolve().parent
LAB_TOPOLOGY = HERE.parent / "data" / "a0_two.yaml"
LAB_PREFIX = "vs"
LAB_NETCONF = False
SHOW = "show running-config"


def one_shot(lab, router: str) -> str:  # noqa: ANN001
    """What ``lab.vtysh(router, SHOW)`` gave before sessions: a vtysh run of its own."""
    res = lab.exec(router, [str(lab.node_dir(router) / "bin" / "vtysh"), "-c", SHOW])
    assert res.ok and res.stderr == "", res
    return res.stdout


def vtysh_pids(lab) -> set[int]:  # noqa: ANN001
    """Every process running a vtysh on one of the lab's pathspaces."""
    spaces = {lab.pathspace(r) for r in lab.routers}
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            argv = proc.cmdline(int(d.name))
            if argv and argv[0].endswith("vtysh") and "-N" in argv and spaces & set(argv):
                out.add(int(d.name))
    return out


def test_a_session_read_is_the_one_shot_output_before_and_after_a_change(module_lab) -> None:  # noqa: ANN001
    lab = module_lab
    for r in lab.routers:
        res = lab.vtysh(r, SHOW)
        assert (res.rc, res.stderr, res.timed_out) == (0, "", False)
        assert res.stdout == one_shot(lab, r) and f"hostname {r}\n" in res.stdout
    pid = lab._vtysh_sessions.pids()["r1"]
    assert lab.vtysh("r1", ["configure terminal", "ip route 198.51.100.7/32 Null0"]).ok
    after = lab.vtysh("r1", SHOW)
    assert "ip route 198.51.100.7/32 Null0\n" in after.stdout and after.stdout == one_shot(lab, "r1")
    assert lab._vtysh_sessions.pids()["r1"] == pid  # the same session answered
    assert lab.vtysh("r1", ["configure terminal", "no ip route 198.51.100.7/32 Null0"]).ok
    assert "198.51.100.7" not in lab.vtysh("r1", SHOW).stdout


def test_a_restarted_daemon_is_seen_by_the_next_read(module_lab) -> None:  # noqa: ANN001
    lab = module_lab
    lab.vtysh("r1", SHOW)
    old_session = lab._vtysh_sessions.pids()["r1"]
    old = lab.daemon_pid("r1", "bgpd")
    assert old is not None
    os.kill(old, signal.SIGKILL)  # the lab's own daemon (daemon_pid checks -N <pathspace>)
    deadline = time.monotonic() + 10
    while proc.is_alive(old) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "router bgp" not in lab.vtysh("r1", SHOW).stdout  # bgpd is gone: its part is gone
    lab.start_daemon("r1", "bgpd")
    res = lab.vtysh("r1", ["configure terminal", "router bgp 64501", "bgp router-id 10.255.1.99"])
    assert res.ok, res
    text = lab.vtysh("r1", SHOW).stdout
    assert " bgp router-id 10.255.1.99\n" in text and text == one_shot(lab, "r1")
    assert not proc.is_alive(old_session)  # the session that knew the dead bgpd was closed
    assert lab.vtysh("r1", ["configure terminal", "router bgp 64501", "bgp router-id 10.255.1.1"]).ok


def test_a_frozen_router_times_out_within_the_bound_then_reads_again(module_lab) -> None:  # noqa: ANN001
    lab = module_lab
    before = lab.vtysh("r2", SHOW).stdout
    session = lab._vtysh_sessions.pids()["r2"]
    daemons = list(lab.daemon_pids("r2").values())
    assert daemons
    for pid in daemons:
        os.kill(pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        res = lab.vtysh("r2", SHOW, timeout=1.5)
        took = time.monotonic() - t0
    finally:
        for pid in daemons:
            os.kill(pid, signal.SIGCONT)
    assert res.timed_out and not res.ok and took < 1.5 + 1.0, (res, took)
    assert not proc.is_alive(session) and "r2" not in lab._vtysh_sessions.pids()
    again = lab.vtysh("r2", SHOW)
    assert again.ok and again.stdout == before == one_shot(lab, "r2")


def test_two_threads_reading_at_once_both_get_the_full_config(module_lab) -> None:  # noqa: ANN001
    lab = module_lab
    want = one_shot(lab, "r1")
    barrier = threading.Barrier(2)
    got: list[list[str]] = [[], []]

    def reader(i: int) -> None:
        barrier.wait()
        for _ in range(15):
            got[i].append(lab.vtysh("r1", SHOW).stdout)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert [len(g) for g in got] == [15, 15]
    assert all(text == want for g in got for text in g)


def test_a_session_exits_by_itself_when_its_owner_dies(module_lab) -> None:  # noqa: ANN001
    lab = module_lab
    code = ("import os, sys\nfrom ani.lab.lab import Lab\nlab = Lab.attach(sys.argv[1])\n"
            "assert 'hostname r1' in lab.vtysh('r1', 'show running-config').stdout\n"
            "print(lab._vtysh_sessions.pids()['r1'], flush=True)\nos._exit(0)\n")
    res = subprocess.run([sys.executable, "-c", code, lab.id], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(HERE.parent.parent)})
    assert res.returncode == 0, res.stderr
    pid = int(res.stdout)
    deadline = time.monotonic() + 10
    while proc.is_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not proc.is_alive(pid)


def test_down_leaves_no_vtysh_of_the_lab(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(LAB_TOPOLOGY, netconf=False, ssh=False)
    for r in lab.routers:
        assert lab.vtysh(r, SHOW).ok
    sessions = set(lab._vtysh_sessions.pids().values())
    assert len(sessions) == 2 and sessions <= vtysh_pids(lab)
    lab.down()
    assert not any(proc.is_alive(p) for p in sessions) and vtysh_pids(lab) == set()
