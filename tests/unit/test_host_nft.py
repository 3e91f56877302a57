"""Which ``nft`` command lines :mod:`ani.host.nft` answers in-process (one ``list`` with the
output options it knows), and the command it gives libnftables; everything else is left to the
program. The answers themselves are checked against ``nft`` in
tests/integration/test_exec_reads.py."""

from __future__ import annotations

import pytest

from ani.host import nft

S, A, J = 1 << 2, 1 << 3, 1 << 4


@pytest.mark.parametrize(("argv", "want"), [
    (["nft", "list", "ruleset"], (0, "list ruleset")),
    (["nft", "-s", "list", "ruleset"], (S, "list ruleset")),
    (["/usr/sbin/nft", "-j", "list", "ruleset"], (J, "list ruleset")),
    (["nft", "-s", "-j", "-a", "list", "ruleset"], (S | J | A, "list ruleset")),
    (["nft", "--stateless", "--json", "list", "table", "netdev", "ani_fault_loss_s1_eth-r2"],
     (S | J, "list table netdev ani_fault_loss_s1_eth-r2")),
    (("nft", "list", "set", "inet", "fw", "tenant_blue"), (0, "list set inet fw tenant_blue")),
], ids=lambda v: " ".join(v) if isinstance(v, (list, tuple)) and isinstance(v[0], str) else "")
def test_reads_taken(argv, want) -> None:
    assert nft.parse(argv) == want


@pytest.mark.parametrize("argv", [
    [],
    ["nft"],
    ["nft", "list"],
    ["nft", "-f", "-"],
    ["nft", "flush", "ruleset"],
    ["nft", "-c", "list", "ruleset"],                 # an option not taken: the program
    ["nft", "-n", "list", "ruleset"],
    ["nft", "list ruleset; flush ruleset"],           # one argument, two commands
    ["nft", "list", "ruleset;", "flush", "ruleset"],
    ["nft", "list", "ruleset", "\n", "flush", "ruleset"],
    ["nft", "list", "table", "inet", "{fw}"],
    ["nft", "list", "table", "inet", "\"fw\""],
    ["nft", "add", "table", "inet", "x"],
    ["nftx", "list", "ruleset"],
    ["sh", "-c", "nft list ruleset"],
], ids=lambda v: repr(v))
def test_everything_else_is_left_to_the_program(argv) -> None:
    assert nft.parse(argv) is None
    assert nft.run("/run/netns/never-entered", argv) is None


def test_turned_off_by_the_environment(monkeypatch) -> None:
    monkeypatch.setenv(nft.FAST_ENV, "0")
    assert nft.parse(["nft", "list", "ruleset"]) is not None
    assert nft.run("/run/netns/never-entered", ["nft", "list", "ruleset"]) is None
