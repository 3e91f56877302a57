"""The command score's frr-reload cross-check (ani.netconfbench.reload_check): reading
``frr-reload.py --test`` output back into hier-config's change form and comparing, on output
captured from FRR 8.4.4's frr-reload (logic only: frr-reload itself runs in
tests/integration/test_ncb_crosscheck_lab.py)."""

from __future__ import annotations

import pytest

from ani.device.parse import parse
from ani.netconfbench import reload_check
from ani.netconfbench.reload_check import compare, crosscheck, parse_test_output, reload_changes, vtysh_text
from ani.observer.changes import config_changes

#: frr_text() of the two configurations (one space per level, no block ends)
INITIAL = """\
hostname r1
ip route 10.9.0.0/24 10.0.0.2
router bgp 65001
 no bgp ebgp-requires-policy
 neighbor 10.0.0.2 remote-as 65002
 address-family ipv4 unicast
  network 10.1.0.0/24
router ospf
 ospf router-id 1.1.1.1
 network 10.0.0.0/24 area 0
ip prefix-list A seq 5 permit 10.0.0.0/8
route-map RM permit 10
 set local-preference 200
"""
FINAL = """\
hostname r1
router bgp 65001
 neighbor 10.0.0.2 remote-as 65002
 address-family ipv4 unicast
  network 10.1.0.0/24
  network 10.2.0.0/24
 no bgp network import-check
ip prefix-list A seq 10 permit 10.0.0.0/8
route-map RM permit 10
 set local-preference 300
router rip
 network eth0
"""
#: frr-reload.py --test --input <INITIAL> <FINAL> (FRR 8.4.4), as printed (trailing blank kept)
OUTPUT = """
Lines To Delete
===============
no router ospf
router bgp 65001
 bgp ebgp-requires-policy
route-map RM permit 10
 no set local-preference 200

Lines To Add
============
no ip route 10.9.0.0/24 10.0.0.2
router bgp 65001
 no bgp network import-check
router bgp 65001
 address-family ipv4 unicast
  network 10.2.0.0/24 
route-map RM permit 10
 set local-preference 300
ip prefix-list A seq 10 permit 10.0.0.0/8
router rip
router rip
 network eth0
no ip prefix-list A seq 5 permit 10.0.0.0/8
"""


def test_vtysh_text_closes_every_block():
    assert vtysh_text(FINAL).splitlines()[1:8] == [
        "router bgp 65001", " neighbor 10.0.0.2 remote-as 65002", " address-family ipv4 unicast",
        "  network 10.1.0.0/24", "  network 10.2.0.0/24", " exit-address-family",
        " no bgp network import-check"]  # read in router bgp, not in the address family
    assert vtysh_text(FINAL).endswith("router rip\n network eth0\nexit\n")
    assert vtysh_text("hostname r1\n") == "hostname r1\n"


def test_parse_test_output_entries_are_printed_leaves():
    dels, adds = parse_test_output(OUTPUT)
    assert dels == [("no router ospf",), ("router bgp 65001", "bgp ebgp-requires-policy"),
                    ("route-map RM permit 10", "no set local-preference 200")]
    assert adds[0] == ("no ip route 10.9.0.0/24 10.0.0.2",)
    assert ("router bgp 65001", "address-family ipv4 unicast", "network 10.2.0.0/24") in adds  # spaces trimmed
    assert adds[-3:] == [("router rip",), ("router rip", "network eth0"), ("no ip prefix-list A seq 5 permit 10.0.0.0/8",)]
    assert parse_test_output("") == ([], [])
    with pytest.raises(ValueError, match="line 1 outside its sections"):
        parse_test_output("Traceback (most recent call last):\n")


def test_reload_changes_read_no_lines_back_as_what_they_do():
    got = reload_changes(*parse_test_output(OUTPUT), INITIAL, FINAL)
    assert got == [
        "- router ospf / ospf router-id 1.1.1.1",           # 'no router ospf': the block's lines
        "- router ospf / network 10.0.0.0/24 area 0",
        "- router bgp 65001 / no bgp ebgp-requires-policy",  # deleting a 'no' line: its positive form
        "- route-map RM permit 10 / set local-preference 200",
        "- ip route 10.9.0.0/24 10.0.0.2",                  # a deletion in frr-reload's add list
        "- ip prefix-list A permit 10.0.0.0/8",             # sequence numbers dropped, as config_changes does
        "+ router bgp 65001 / no bgp network import-check",  # an added 'no' line the final config holds
        "+ router bgp 65001 / address-family ipv4 unicast / network 10.2.0.0/24",
        "+ route-map RM permit 10 / set local-preference 300",
        "+ ip prefix-list A permit 10.0.0.0/8",
        "+ router rip / network eth0",                      # the header alone is not a change of its own
    ]


def test_hier_config_skips_no_lines_of_an_existing_block_and_the_crosscheck_says_so():
    hier = config_changes(parse(INITIAL), parse(FINAL))
    res = compare(hier, reload_changes(*parse_test_output(OUTPUT), INITIAL, FINAL))
    assert res.agree is False and res.only_hier == []
    assert res.only_frr == ["+ router bgp 65001 / no bgp network import-check",
                            "- router bgp 65001 / no bgp ebgp-requires-policy"]


def test_compare_is_of_multisets_and_leaves_nft_out():
    same = compare(["+ a / b", "- c", "+ nft / set x"], ["- c", "+ a / b"])
    assert (same.agree, same.only_hier, same.only_frr) == (True, [], [])
    twice = compare(["+ ip route 1.0.0.0/8 x", "+ ip route 1.0.0.0/8 x"], ["+ ip route 1.0.0.0/8 x"])
    assert twice.agree is False and twice.only_hier == ["+ ip route 1.0.0.0/8 x"]
    assert compare([], []).agree is True


def test_missing_frr_reload_is_a_note_not_a_failure(monkeypatch):
    from ani.host.programs import Program

    real = Program.locate
    monkeypatch.setattr(Program, "locate", lambda self: None if self.name == "frr-reload.py" else real(self))
    cfg = {"r1": parse(INITIAL)}
    checked, note = crosscheck(cfg, cfg, {"r1": []})
    assert checked is None
    assert note == ("not cross-checked with frr-reload: /usr/lib/frr/frr-reload.py is missing "
                    "(apt-get install frr-pythontools)")


def test_a_failing_run_is_an_error_of_its_router(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("frr-reload.py --test exited 1: vtysh failed to process new configuration")

    monkeypatch.setattr(reload_check, "_programs", lambda: ("/x/frr-reload.py", "/x/vtysh", ""))
    monkeypatch.setattr(reload_check, "frr_reload_test", boom)
    cfg = {"r1": parse(INITIAL), "r2": parse(FINAL)}
    checked, note = crosscheck(cfg, cfg, {"r1": [], "r2": []})
    assert [c.agree for c in checked.values()] == [None, None]
    assert "vtysh failed" in checked["r1"].error and note == "frr-reload failed on r1, r2"
