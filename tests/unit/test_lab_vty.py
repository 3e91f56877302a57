"""ani.lab.vty: the command -> daemon table and show over fake vty sockets (no FRR)."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
import pytest

from ani.lab import vty

ALL = ["zebra", "staticd", "ospfd", "bgpd"]


@pytest.mark.parametrize(("command", "daemon"), [
    ("show bgp summary json", "bgpd"),
    ("show bgp ipv4 unicast summary json", "bgpd"),
    ("show bgp ipv4 unicast 10.0.0.0/24 json", "bgpd"),
    ("show bgp neighbors json", "bgpd"),
    ("show ip bgp json", "bgpd"),
    ("show ip ospf neighbor json", "ospfd"),
    ("show ip ospf interface json", "ospfd"),
    ("show ip route json", "zebra"),
    ("show ip route 10.0.0.0/24 json", "zebra"),
    ("show interface json", "zebra"),
    ("show interface eth-r2 json", "zebra"),
    ("show bgp summary", "bgpd"),                 # text: the same daemon
    ("show ip bgp neighbors 10.255.0.2", "bgpd"),
    ("show ip ospf interface eth-r2", "ospfd"),
    ("show ip route 10.0.0.0/24", "zebra"),
    ("show interface brief", "zebra"),
])
def test_table(command: str, daemon: str) -> None:
    assert vty.daemon_of(command) == daemon


@pytest.mark.parametrize("command", [
    "show running-config",                # several daemons (ani.lab.runconf has it)
    "show running-config json",
    "show version",
    "show ip route json | include 10",    # vtysh's own filter
    "show  bgp summary json",             # extra blank: vtysh's text, not ours
    "show bgp summary json ",
    "show ip route-map json",
    "show ipv6 route json",               # not in the table
    "configure terminal",
    "show ip route json\nconfigure terminal",
    "show bgp\0 json",
    "sh ip route json",                   # abbreviations go to vtysh
])
def test_not_in_table(command: str) -> None:
    assert vty.daemon_of(command) is None


class FakeDaemon:
    """A vty socket at ``path`` that answers each command with ``answers[command]``
    (``(status, text)``) after ``delay_s`` seconds, or never answers a command missing from it."""

    def __init__(self, path: Path, answers: dict[str, tuple[int, str]], delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(4)
        self.answers = answers
        self.asked: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        buf = b""
        with conn:
            while chunk := conn.recv(4096):
                buf += chunk
                while b"\0" in buf:
                    cmd, buf = buf.split(b"\0", 1)
                    self.asked.append(cmd.decode())
                    if cmd.decode() not in self.answers:
                        time.sleep(30)
                        return
                    status, text = self.answers[cmd.decode()]
                    time.sleep(self.delay_s)
                    conn.sendall(text.encode() + b"\0\0\0" + bytes([status]))


def test_concatenates_in_order(tmp_path: Path) -> None:
    run = tmp_path
    bgp = FakeDaemon(run / "bgpd.vty", {"show bgp summary json": (0, '{"b":1}\n')})
    zebra = FakeDaemon(run / "zebra.vty", {"show ip route json": (0, '{"z":2}\n')})
    res = vty.show(run, ALL, ["show ip route json", "show bgp summary json", "show ip route json"], 5.0)
    assert res is not None
    assert (res.rc, res.stdout, res.stderr, res.timed_out) == (0, '{"z":2}\n{"b":1}\n{"z":2}\n', "", False)
    assert zebra.asked == ["show ip route json", "show ip route json"] and bgp.asked == ["show bgp summary json"]


def test_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path
    FakeDaemon(run / "bgpd.vty", {"show bgp summary json": (0, "{}\n"), "show bgp x json": (2, "% [BGP] Unknown\n")})
    assert vty.show(run, ALL, ["show bgp x json"], 5.0) is None                     # non-zero status
    assert vty.show(run, ALL, ["show ip route json"], 5.0) is None                  # no zebra socket
    assert vty.show(run, ["zebra", "ospfd"], ["show bgp summary json"], 5.0) is None  # not its daemon
    assert vty.show(run, ALL, ["show bgp summary json", "show version"], 5.0) is None
    assert vty.show(run, ALL, [], 5.0) is None
    monkeypatch.setenv(vty.FAST_ENV, "0")
    assert vty.show(run, ALL, ["show bgp summary json"], 5.0) is None
    monkeypatch.setenv(vty.FAST_ENV, "1")
    assert vty.show(run, ALL, ["show bgp summary json"], 5.0) is not None


def test_silent_daemon_times_out_within_the_whole_bound(tmp_path: Path) -> None:
    """A slow zebra then a silent bgpd: the whole call, not each read, is bounded by 0.6 s."""
    FakeDaemon(tmp_path / "zebra.vty", {"show ip route json": (0, "{}\n")}, delay_s=0.45)
    FakeDaemon(tmp_path / "bgpd.vty", {})
    t = time.monotonic()
    res = vty.show(tmp_path, ALL, ["show ip route json", "show bgp summary json"], 0.6)
    wall = time.monotonic() - t
    assert res is not None and res.timed_out and (res.rc, res.stdout, res.stderr) == (-9, "", "")
    assert 0.6 <= wall < 0.9 and res.elapsed_s < 0.9
