"""The vtysh broker's line checker (ani.adapters.vtybroker): abbreviations against a command
set, host rules vs blocklist, and the client/broker round trip (a fake command set; the real
one and real FRR are in tests/integration/test_a0_frr_entry.py)."""

from __future__ import annotations

import json
import re
import socket
import struct
import time

import pytest

from ani.adapters import vtybroker
from ani.adapters.blocklist import BlockRules

#: a small command set in `list permutations` form
PERMS = (
    "no router bgp (1-4294967295)",
    "no route-map RMAP_NAME",
    "no route-map RMAP_NAME permit (1-65535)",
    "no neighbor <A.B.C.D|X:X::X:X|WORD>",
    "neighbor <A.B.C.D|X:X::X:X|WORD> shutdown",
    "neighbor <A.B.C.D|X:X::X:X|WORD> description LINE...",
    "shutdown",
    "write",
    "write terminal",
    "write memory",
    "copy FILENAME running-config",
    "copy running-config startup-config",
    "find REGEX...",
    "clear ip bgp *",
    "clear ip ospf process",
    "banner motd file FILE",
    "banner motd line LINE...",
    "log file FILENAME",
    "log stdout",
    "line vty",
    "list",
)


@pytest.fixture
def checker() -> vtybroker.LineChecker:
    rules = [(rx, r) for rx, r in BlockRules.load().rules]
    return vtybroker.LineChecker(rules, PERMS)


@pytest.mark.parametrize(
    ("line", "meaning", "code"),
    [
        ("no rou bgp 64500", "no router bgp 64500", "blocked"),
        ("no router bgp 64500", "no router bgp 64500", "blocked"),
        ("  NO  ROU  bgp 1 ", "no router bgp 1", "blocked"),
        ("wr t", "write terminal", "blocked"),
        ("write t", "write terminal", "blocked"),
        ("do wr mem", "write memory", "blocked"),
        ("cl ip bgp *", "clear ip bgp *", "blocked"),
        ("cl ip os pro", "clear ip ospf process", "blocked"),
        ("no route-m RM", "no route-map RM", "blocked"),
        ("nei 10.0.0.1 shut", "neighbor 10.0.0.1 shutdown", "blocked"),
        ("no nei 10.0.0.1", "no neighbor 10.0.0.1", "blocked"),
        ("shut", "shutdown", "blocked"),
        # issue 23: a bare `wr` is `write` (the rule expected `write <word>`)
        ("wr", "write", "blocked"),
        ("cop run st", "copy running-config startup-config", "blocked"),
        ("cop /etc/shadow run", "copy /etc/shadow running-config", "not_allowed"),
        ("copy /proc/1/root/tmp/x running-config", "copy /proc/1/root/tmp/x running-config", "not_allowed"),
        ("ban mot f /etc/frr/x/frr.conf", "banner motd file /etc/frr/x/frr.conf", "not_allowed"),
        ("lo fi /tmp/big.log", "log file /tmp/big.log", "not_allowed"),
        ("li v", "line vty", "not_allowed"),
    ],
)
def test_abbreviations_are_expanded_and_refused(checker, line: str, meaning: str, code: str) -> None:  # noqa: ANN001
    r = checker.check(line)
    assert r is not None, line
    assert (r.meaning, r.code) == (meaning, code)


@pytest.mark.parametrize(
    "line",
    ["no route-m RM permit 10", "nei 10.0.0.1 desc shut down later", "banner motd line hello",
     "lo std", "list", "! no router bgp 1", "no shutdown", "router bgp 64500"],
)
def test_what_the_rules_do_not_name_passes(checker, line: str) -> None:  # noqa: ANN001
    assert checker.check(line) is None, line


def test_host_rules_hold_without_a_blocklist() -> None:
    c = vtybroker.LineChecker(None, PERMS)
    assert c.check("no rou bgp 1") is None  # the blocklist is the ablation's, not A0's
    r = c.check("ban mot f /x")
    assert r is not None and r.code == "not_allowed" and "host file" in r.reason


def test_refusal_message_names_line_meaning_and_rule(checker) -> None:  # noqa: ANN001
    r = checker.check("wr t")
    msg = r.message()
    assert "'wr t'" in msg and "'write terminal'" in msg and "writes the startup config" in msg
    assert r.rule in msg


def _ask(path: str, req: dict) -> dict:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    body = json.dumps(req).encode()
    s.sendall(struct.pack("!I", len(body)) + body)
    s.shutdown(socket.SHUT_WR)
    buf = b""
    while chunk := s.recv(65536):
        buf += chunk
    return json.loads(buf)


def _nowhere(argv: list[str]) -> list[str]:
    """A router that runs nothing (these tests never reach a vtysh run)."""
    return ["false", *argv]


def test_broker_refuses_the_whole_run_and_records_it(checker) -> None:  # noqa: ANN001
    b = vtybroker.VtyBroker(_nowhere, "ani-x-r1", "r1", checker, deadline=time.monotonic() + 10, max_bytes=1000)
    try:
        ans = _ask(f"{b.dir}/{vtybroker.SOCKET_NAME}", {"lines": ["conf t", "no rou bgp 1"]})
        assert ans["exit"] == 1 and "nothing was sent to FRR" in ans["stderr"]
        assert re.search(r"'no rou bgp 1' \(= 'no router bgp 1'\) refused", ans["stderr"])
        assert [r.meaning for r in b.refusals] == ["no router bgp 1"]
        ans = _ask(f"{b.dir}/{vtybroker.SOCKET_NAME}", {"lines": []})
        assert ans == {"stdout": "", "stderr": "", "exit": 0}
    finally:
        b.close()
    assert not __import__("os").path.exists(b.dir)


def test_client_source_compiles_and_names_the_socket() -> None:
    compile(vtybroker.CLIENT_SOURCE, "vtysh", "exec")
    assert f"{vtybroker.SANDBOX_SOCKET_DIR}/{vtybroker.SOCKET_NAME}" in vtybroker.CLIENT_SOURCE


# -- issue 23: the lines checked are the lines vtysh executes --------------------------------


def test_copy_of_a_file_is_refused_without_a_blocklist_and_the_startup_copy_is_not() -> None:
    c = vtybroker.LineChecker(None, PERMS)
    for line in ("copy /etc/shadow running-config", "cop /etc/shadow runn", "copy run run",
                 "do copy /run/ani/labs/x/netconf.json running-config"):
        r = c.check(line)
        assert r is not None and r.code == "not_allowed" and "copy FILE running-config" in r.reason, line
    assert c.check("copy running-config startup-config") is None  # = write memory: the router's own dir
    assert c.check("cop run st") is None and c.check("wr") is None and c.check("write memory") is None


@pytest.mark.parametrize(
    "line",
    ["no\rrouter bgp 1", "no\x0brouter bgp 1", "banner\x1cmotd file /etc/shadow", "no\xa0router bgp 1",
     "no\u2028router bgp 1", "x\x00", "no router bgp 1\udcff", "ip route 192.0.2.0/24 Null0\x7f", "a" * 4096,
     "ip prefix-list PL description " + "x" * 4080],
)
def test_lines_vtysh_would_read_otherwise_are_refused(line: str) -> None:
    c = vtybroker.LineChecker(None, PERMS)
    r = c.check(line)
    assert r is not None and r.code == "not_allowed" and r.rule == "line form", repr(line)
    assert len(r.message()) < 600  # a 4 kB line is not echoed whole


def test_a_line_of_4095_bytes_and_tabs_pass() -> None:
    c = vtybroker.LineChecker(None, PERMS)
    assert c.check("ip prefix-list PL description " + "x" * (4095 - 30)) is None
    assert c.check("ip\troute 192.0.2.0/24\tNull0") is None


@pytest.mark.parametrize(
    "line",
    ["find (((.{1,100}){1,100}){1,100})",
     "bgp as-path access-list X permit (((.{1,100}){1,100}){1,100})",
     "bgp community-list expanded C permit ((.{1,100}){1,100})",
     "sh ip b reg (.{1,50}){1,50}",
     "show running-config | include .{1,32767}",
     "fi " + ".{1,30}" * 40],
)
def test_regular_expressions_past_the_bound_are_refused(line: str) -> None:
    r = vtybroker.LineChecker(None, PERMS).check(line)
    assert r is not None and r.code == "not_allowed" and r.rule == "regex bound", line
    assert "at most 255" in r.reason


@pytest.mark.parametrize(
    "line",
    ["bgp as-path access-list X permit ^65000_[0-9]{1,5}$", "find route-map", "show bgp regexp _65001$",
     "bgp community-list expanded C permit ^65000:[0-9]{1,3}$"],
)
def test_ordinary_regular_expressions_pass(line: str) -> None:
    assert vtybroker.LineChecker(None, PERMS).check(line) is None


def test_split_lines_cuts_at_newlines_only() -> None:
    assert vtybroker.split_lines(["configure terminal\npassword X", "a\rb"]) == ["configure terminal", "password X", "a\rb"]


@pytest.mark.parametrize("mode", ["command", "file"])
def test_a_raw_request_with_a_newline_in_a_line_is_checked_line_by_line(mode: str) -> None:
    # the probe: a raw broker request (not the client) whose one line holds a newline
    c = vtybroker.LineChecker(None, PERMS)
    b = vtybroker.VtyBroker(_nowhere, "ani-x-r1", "r1", c, deadline=time.monotonic() + 10, max_bytes=1000)
    try:
        ans = _ask(f"{b.dir}/{vtybroker.SOCKET_NAME}", {"lines": ["configure terminal\npassword X"], "mode": mode})
        assert ans["exit"] == 1 and "nothing was sent to FRR" in ans["stderr"]
        assert [r.line for r in b.refusals] == ["password X"]
        assert b.refusals[0].code == "not_allowed"
    finally:
        b.close()


def test_a_vtysh_run_that_reached_the_routers_memory_bound_says_so(monkeypatch):
    from ani.adapters import vtybroker
    from ani.lab import memcg

    kills = iter([0, 1, 1])
    monkeypatch.setattr(memcg, "usage", lambda ps: memcg.Usage(current=1, peak=2, limit=64 << 20, oom_kills=next(kills)))
    before = vtybroker._oom_kills("ani-x-r1")
    note = vtybroker._bound_note("ani-x-r1", "r1", before)
    assert note == ("% ani: router r1 reached its memory bound (67108864 bytes, its FRR daemons and vtysh "
                    "together): the kernel killed 1 of its processes (this vtysh or an FRR daemon)\n")
    monkeypatch.setattr(memcg, "usage", lambda ps: memcg.Usage(current=1, peak=2, limit=64 << 20, oom_kills=1))
    assert vtybroker._bound_note("ani-x-r1", "r1", 1) == ""  # no kill meanwhile: nothing said

    def gone(ps):
        raise FileNotFoundError(ps)

    monkeypatch.setattr(memcg, "usage", gone)
    assert vtybroker._oom_kills("ani-x-r1") is None and vtybroker._bound_note("ani-x-r1", "r1", 0) == ""
