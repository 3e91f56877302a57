"""Lab.vtysh's fast path (ani.lab.vty.show) on real FRR: every table entry reads what vtysh
prints; anything else, a daemon that is not running and a frozen daemon behave as with vtysh."""

from __future__ import annotations

import os
import re
import signal
import time
from typing import Any

import pytest

from ani.lab import vty
from tests.conftest import TRI

pytestmark = pytest.mark.integration

LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = TRI, "vtyf", False  # conftest's module_lab
R = "r1"

#: one command per DAEMON_OF entry (and the forms the product reads)
COMMANDS = [
    "show bgp summary json",
    "show bgp ipv4 unicast summary json",
    "show bgp ipv4 unicast 198.18.1.0/24 json",
    "show ip bgp json",
    "show ip ospf neighbor json",
    "show ip ospf interface json",
    "show ip route json",
    "show interface json",
    "show bgp summary",  # text (not `show ip bgp neighbors X`: its lines come and go between reads)
    "show ip ospf interface eth-r2",
    "show ip route 10.255.0.2/32",
    "show interface lo",
]


def _masked(text: str) -> str:
    """``text`` with every number replaced (counters, uptimes and timers move between reads)."""
    return re.sub(r"\d+", "N", text)


def _both(lab: Any, commands: list[str], monkeypatch: pytest.MonkeyPatch, timeout: float = 10.0) -> tuple[Any, Any]:
    """``(fast path result, vtysh result)`` of the same call."""
    fast = lab.vtysh(R, commands, timeout=timeout)
    with monkeypatch.context() as m:
        m.setenv(vty.FAST_ENV, "0")
        slow = lab.vtysh(R, commands, timeout=timeout)
    return fast, slow


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the socket paths ``vty.query`` is asked for."""
    calls: list[str] = []
    real = vty.query

    def query(path: Any, commands: list[str], *a: Any, **kw: Any) -> Any:
        calls.append(str(path))
        return real(path, commands, *a, **kw)

    monkeypatch.setattr(vty, "query", query)
    return calls


def test_every_table_entry_reads_what_vtysh_prints(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch)
    for command in COMMANDS:
        for attempt in range(3):  # the state may move between the two reads: read both again
            calls.clear()
            fast, slow = _both(module_lab, [command], monkeypatch)
            assert calls == [f"/var/run/frr/{module_lab.pathspace(R)}/{vty.daemon_of(command)}.vty"], command
            assert (fast.rc, fast.stderr, fast.timed_out) == (0, "", False), command
            assert slow.ok and slow.stdout.strip(), (command, slow)
            if _masked(fast.stdout) == _masked(slow.stdout) or attempt == 2:
                break
            time.sleep(1.0)
        # (a fresh lab's interfaces can still gain an IPv6 link-local address between the two)
        assert _masked(fast.stdout) == _masked(slow.stdout), command


def test_deterministic_output_is_byte_identical(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for command in ["show ip bgp neighbors 192.0.2.1 json", "show ip ospf neighbor 192.0.2.1 json",
                    "show interface lo json", "show interface brief"]:
        fast, slow = _both(module_lab, [command], monkeypatch)
        assert fast.stdout == slow.stdout and fast.rc == slow.rc == 0, command


def test_several_commands_and_daemons_concatenate_as_vtysh(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch)
    cmds = ["show bgp summary json", "show ip route json", "show ip route json", "show ip ospf neighbor json",
            "show bgp summary json"]
    fast, slow = _both(module_lab, cmds, monkeypatch)
    assert [c.rsplit("/", 1)[1] for c in calls] == ["bgpd.vty", "zebra.vty", "ospfd.vty", "bgpd.vty"]
    assert fast.ok and slow.ok
    assert _masked(fast.stdout) == _masked(slow.stdout)
    assert fast.stdout.count("\n}\n{") == 4  # one document after the other, as vtysh prints them


def test_other_commands_run_vtysh(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch)
    for command in ["show version", "show ip route json | include 10", "show ipv6 route",
                    "show running-config json", "show  bgp summary json"]:
        module_lab.vtysh(R, [command])
        assert calls == [], command
    res = module_lab.vtysh(R, ["show ip route json", "show version"])
    assert calls == [] and res.ok and "FRRouting" in res.stdout


def test_failing_status_runs_vtysh_for_its_text(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow = _both(module_lab, ["show bgp nonsense json"], monkeypatch)
    assert (fast.rc, fast.stdout, fast.stderr) == (slow.rc, slow.stdout, slow.stderr)
    assert fast.rc == 1 and fast.stdout == "% Unknown command: show bgp nonsense json\n"


def test_frozen_daemon_times_out_within_the_bound(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pid = module_lab.daemon_pids(R)["bgpd"]
    os.kill(pid, signal.SIGSTOP)
    try:
        t = time.monotonic()
        fast = module_lab.vtysh(R, ["show ip route json", "show bgp summary json"], timeout=1.5)
        wall = time.monotonic() - t
        with monkeypatch.context() as m:
            m.setenv(vty.FAST_ENV, "0")
            slow = module_lab.vtysh(R, ["show ip route json", "show bgp summary json"], timeout=1.5)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert fast.timed_out and slow.timed_out
    assert 1.5 <= wall < 2.0 and fast.elapsed_s < 2.0
    assert (fast.rc, fast.stdout, fast.stderr) == (slow.rc, slow.stdout, slow.stderr) == (-9, "", "")
    assert module_lab.vtysh(R, "show bgp summary json").ok  # it answers again


def test_stopped_daemon_gives_vtysh_error(module_lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pid = module_lab.daemon_pids(R)["ospfd"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while "ospfd" not in module_lab.dead_daemons(R) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        fast, slow = _both(module_lab, ["show ip ospf neighbor json"], monkeypatch)
        assert (fast.rc, fast.stdout, fast.stderr) == (slow.rc, slow.stdout, slow.stderr)
        assert not fast.ok and "ospfd" in fast.stdout + fast.stderr
    finally:
        module_lab.start_daemon(R, "ospfd")
