"""Lab.vtysh's ``show running-config`` (ani.lab.runconf) on real FRR: the text vtysh prints, no
vtysh process while nothing changed, and every kind of change seen at the next read: through the
lab, behind its back, in vtysh.conf; a frozen or a dead daemon behaves as with vtysh."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Any

import pytest

from ani.host import vtysh_cache
from ani.lab import frr, runconf, vty
from tests.conftest import TRI

pytestmark = pytest.mark.integration

LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = TRI, "rcfg", False  # conftest's module_lab
R = "r1"
SHOW = "show running-config"


@pytest.fixture(autouse=True)
def _labs_share_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests count vtysh processes of this module's lab: no text from the session's other
    labs (tests/conftest.py shares them) unless a test says so."""
    monkeypatch.delenv(vtysh_cache.ENV, raising=False)


def _vtysh_runs(lab: Any, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Record the processes Lab.vtysh starts (its ``exec`` calls)."""
    runs: list[list[str]] = []
    real = lab.exec

    def exec_(node: str, argv: list[str], *a: Any, **kw: Any) -> Any:
        runs.append(list(argv))
        return real(node, argv, *a, **kw)

    monkeypatch.setattr(lab, "exec", exec_)
    return runs


def _vtysh(lab: Any, monkeypatch: pytest.MonkeyPatch, router: str = R, timeout: float = 10.0) -> Any:
    """The same read through a vtysh process (the cache turned off)."""
    with monkeypatch.context() as m:
        m.setenv(vty.FAST_ENV, "0")
        return lab.vtysh(router, SHOW, timeout=timeout)


def test_unchanged_reads_are_vtysh_text_without_a_process(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _vtysh_runs(module_lab, monkeypatch)
    for router in module_lab.topology.routers:
        ref = _vtysh(module_lab, monkeypatch, router)
        runs.clear()
        first, second, third = (module_lab.vtysh(router, SHOW) for _ in range(3))
        assert len(runs) <= 1, router  # the first may run vtysh (the module's earlier tests changed r1)
        assert ref.ok and "Current configuration:" in ref.stdout and f"hostname {router}\n" in ref.stdout
        for res in (first, second, third):
            assert (res.rc, res.stdout, res.stderr, res.timed_out) == (0, ref.stdout, "", False), router
    runs.clear()
    module_lab.vtysh(R, [SHOW, "show version"])  # not the one command alone: vtysh
    assert len(runs) == 1


def test_a_change_through_the_lab_is_seen(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    module_lab.vtysh(R, SHOW)
    assert module_lab.vtysh(R, ["configure terminal", "router ospf", "timers throttle spf 0 60 500"]).ok
    try:
        res = module_lab.vtysh(R, SHOW)
        assert "timers throttle spf 0 60 500" in res.stdout
        assert res.stdout == _vtysh(module_lab, monkeypatch).stdout
    finally:
        module_lab.vtysh(R, ["configure terminal", "router ospf", "timers throttle spf 0 50 500"])
    assert "timers throttle spf 0 50 500" in module_lab.vtysh(R, SHOW).stdout


def test_a_change_behind_the_labs_back_is_seen(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    before = module_lab.vtysh(R, SHOW).stdout
    argv = module_lab.node_argv(R, [str(module_lab.node_dir(R) / "bin" / "vtysh"), "-c", "configure terminal",
                                    "-c", "interface lo", "-c", "description behind-the-back"])
    subprocess.run(argv, check=True, capture_output=True, timeout=20)  # another process, not this Lab
    try:
        after = module_lab.vtysh(R, SHOW).stdout
        assert after != before and " description behind-the-back\n" in after
        assert after == _vtysh(module_lab, monkeypatch).stdout
    finally:
        assert module_lab.vtysh(R, ["configure terminal", "interface lo", "no description"]).ok
    assert module_lab.vtysh(R, SHOW).stdout == before


def test_another_reader_of_the_lab_takes_the_stored_text(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second Lab object of the lab (as a campaign worker or the NETCONF server attaches one)
    reads what the first one's vtysh printed from the lab's store, and a state seen before (a
    change undone) from either, with no vtysh process."""
    from ani.lab import Lab

    ref = module_lab.vtysh(R, SHOW).stdout  # the current state, kept (and stored) by now
    other = Lab.attach(module_lab.id, own=False)
    runs = _vtysh_runs(other, monkeypatch)
    assert other.vtysh(R, SHOW).stdout == ref and runs == []
    assert module_lab.vtysh(R, ["configure terminal", "interface lo", "description stored"]).ok
    try:
        changed = module_lab.vtysh(R, SHOW).stdout
        assert " description stored\n" in changed and other.vtysh(R, SHOW).stdout == changed and runs == []
    finally:
        assert module_lab.vtysh(R, ["configure terminal", "interface lo", "no description"]).ok
    assert other.vtysh(R, SHOW).stdout == ref and runs == []  # back where it was: kept for those sources
    assert ref == _vtysh(module_lab, monkeypatch).stdout
    assert len(list((module_lab.node_dir(R) / "runconf").iterdir())) >= 2


def test_a_router_of_another_lab_takes_the_text_a_router_of_its_name_printed(
        module_lab: Any, make_lab: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """With ``ANI_VTYSH_CACHE``, a second lab of the topology, its r1 changed as the first
    one's was, reads the first one's text with no vtysh: what vtysh prints there too."""
    monkeypatch.setenv(vtysh_cache.ENV, str(tmp_path))
    other = make_lab(TRI, netconf=False)
    change, undo = ["configure terminal", "interface lo", "description shared"], \
        ["configure terminal", "interface lo", "no description"]
    assert module_lab.vtysh(R, change).ok
    try:
        first = module_lab.vtysh(R, SHOW).stdout  # a state this lab never had: vtysh, shared
        assert " description shared\n" in first and len(list(runconf.shared_dir().iterdir())) >= 1
        assert other.vtysh(R, change).ok
        runs = _vtysh_runs(other, monkeypatch)
        assert other.vtysh(R, SHOW).stdout == first and runs == []
        assert _vtysh(other, monkeypatch).stdout == first  # vtysh prints the same there
        runs.clear()
        assert other.vtysh("r2", SHOW).ok and len(runs) == 1  # r2 printed nothing shared yet
    finally:
        assert module_lab.vtysh(R, undo).ok


def test_a_vtysh_conf_change_is_seen(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = frr.etc_dir(module_lab.pathspace(R)) / "vtysh.conf"
    old = conf.read_bytes()
    before = module_lab.vtysh(R, SHOW).stdout
    assert "service integrated-vtysh-config" not in before
    conf.write_bytes(old + b"service integrated-vtysh-config\n")
    try:
        after = module_lab.vtysh(R, SHOW).stdout
        assert "service integrated-vtysh-config\n" in after
        assert after == _vtysh(module_lab, monkeypatch).stdout
    finally:
        conf.write_bytes(old)
    assert module_lab.vtysh(R, SHOW).stdout == before


def test_frozen_daemon_times_out_as_vtysh(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    module_lab.vtysh(R, SHOW)  # kept
    pid = module_lab.daemon_pids(R)["bgpd"]
    os.kill(pid, signal.SIGSTOP)
    try:
        t = time.monotonic()
        cached = module_lab.vtysh(R, SHOW, timeout=1.5)
        wall = time.monotonic() - t
        slow = _vtysh(module_lab, monkeypatch, timeout=1.5)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert cached.timed_out and slow.timed_out and 1.5 <= wall < 2.5
    assert (cached.rc, cached.stdout, cached.stderr) == (slow.rc, slow.stdout, slow.stderr) == (-9, "", "")
    assert module_lab.vtysh(R, SHOW).ok  # it answers again


def test_dead_daemon_reads_as_vtysh(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = module_lab.vtysh(R, SHOW).stdout
    assert "router ospf" in kept
    runs = _vtysh_runs(module_lab, monkeypatch)
    os.kill(module_lab.daemon_pids(R)["ospfd"], signal.SIGKILL)
    deadline = time.monotonic() + 5
    while "ospfd" not in module_lab.dead_daemons(R) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        res = module_lab.vtysh(R, SHOW)
        assert runs, "a dead daemon's stale socket must send the read to vtysh"
        slow = _vtysh(module_lab, monkeypatch)
        assert (res.rc, res.stdout, res.stderr) == (slow.rc, slow.stdout, slow.stderr)
        assert res.stdout != kept and "router ospf" not in res.stdout
    finally:
        module_lab.start_daemon(R, "ospfd")  # with no configuration (FRR-NOTES)
        frr.load_config(module_lab.netns(R), module_lab.pathspace(R), R)
    assert module_lab.vtysh(R, SHOW).stdout == kept


def test_turned_off_runs_vtysh_every_time(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    module_lab.vtysh(R, SHOW)
    runs = _vtysh_runs(module_lab, monkeypatch)
    monkeypatch.setenv(vty.FAST_ENV, "0")
    for _ in range(2):
        assert module_lab.vtysh(R, SHOW).ok
    assert [argv[-2:] for argv in runs] == [["-c", SHOW]] * 2
