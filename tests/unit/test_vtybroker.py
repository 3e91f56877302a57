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
    "write terminal",
    "write memory",
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
     "lo std", "wr", "list", "! no router bgp 1", "no shutdown", "router bgp 64500"],
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


def test_broker_refuses_the_whole_run_and_records_it(checker) -> None:  # noqa: ANN001
    b = vtybroker.VtyBroker("no-such-netns", "ani-x-r1", "r1", checker, deadline=time.monotonic() + 10, max_bytes=1000)
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
