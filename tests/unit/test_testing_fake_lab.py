"""ani.testing.FakeLab: routers in memory with an FRR-like vtysh (the behaviours FakeLab copies
from FRR 8.4's vtysh were measured on a real lab: stop at the first failing -c with exit 1 and
'% Unknown command: <line>' on stdout; a negation of a line that is not there is accepted)."""

from __future__ import annotations

import doctest
import threading
from pathlib import Path

import pytest

import ani.testing.fake_lab as fake_lab
from ani.device.state import read_frr, read_state
from ani.errors import LabGone, TopologyError, UnknownNode
from ani.testing import FakeLab

ROOT = Path(__file__).resolve().parents[2]


def test_module_doctest() -> None:
    assert doctest.testmod(fake_lab).failed == 0


def test_default_topology_and_lab_contract() -> None:
    lab = FakeLab()
    assert lab.routers == ["r1", "r2"] and lab.hosts == ["h1"] and lab.id.startswith("fake")
    assert lab.topology.is_router("r1") and not lab.topology.is_router("h1")
    assert lab.dead_daemons("r1") == [] and lab.wait_converged() is None
    assert lab.config("r1") == ["frr defaults traditional", "hostname r1", "interface eth-h1",
                                " ip address 198.18.1.1/24", "exit"]
    with lab as same:
        assert same is lab
    with pytest.raises(LabGone):
        lab.exec("r1", ["vtysh", "-c", "show version"])
    with pytest.raises(LabGone):
        lab.running_config("r1")


def test_a_scenario_file_gives_its_routers_and_startup_configs() -> None:
    lab = FakeLab(ROOT / "scenarios" / "brownfield-small.yaml")
    assert lab.routers == ["c1", "c2", "e1", "e2", "e3", "e4"]
    assert "router bgp 64500" in lab.config("e1") and "ip prefix-list PL-TENANTS seq 10 permit 198.18.11.0/24" \
        in lab.running_config("e1")
    with pytest.raises(TopologyError):
        FakeLab({"routers": {"R1": {}}})


def test_vtysh_like_frr() -> None:
    lab = FakeLab(reject=[r"^bogus", r"ge 8$"])
    r = lab.vtysh("r2", ["configure terminal", "ip route 192.0.2.0/24 Null0", "ip route 192.0.2.0/24 Null0"])
    assert r.ok and r.stdout == "" and lab.config("r2").count("ip route 192.0.2.0/24 Null0") == 1
    r = lab.vtysh("r2", ["configure terminal", "ip prefix-list A seq 5 permit 10.0.0.0/8 ge 8", "ip route 198.51.100.0/24 Null0"])
    assert (r.rc, r.stdout) == (1, "% Unknown command: ip prefix-list A seq 5 permit 10.0.0.0/8 ge 8\n")
    assert "ip route 198.51.100.0/24 Null0" not in lab.config("r2")  # stopped at the refused line
    assert lab.vtysh("r2", ["configure terminal", "no ip route 192.0.2.0/24 Null0"]).ok
    assert lab.vtysh("r2", ["configure terminal", "no ip route 203.0.113.0/24 Null0"]).ok  # not there: accepted
    assert lab.config("r2") == ["frr defaults traditional", "hostname r2"]
    assert lab.vtysh("r1", ["configure terminal", "no ip address 198.18.1.1/24"]).ok  # leading spaces ignored
    assert " ip address 198.18.1.1/24" not in lab.config("r1")
    r = lab.vtysh("r1", "show bogus")
    assert (r.rc, r.stdout) == (1, "% Unknown command: show bogus\n")
    assert lab.vtysh("r1", ["configure terminal", "end", "show version"]).stdout.startswith("FRRouting 8.4.4-fake (r1).")


def test_the_device_layer_reads_it() -> None:
    lab = FakeLab()
    st = read_state(lab, "r1")
    assert "Current configuration:" in st.frr and st.nft == ""
    assert read_frr(lab, "r1") == lab.running_config("r1")


def test_responders_and_calls() -> None:
    lab = FakeLab()
    lab.on(["ip", "-j", "addr"], stdout="[]")
    lab.on(["ip", "-j", "addr"], stdout='[{"ifname": "lo"}]', node="r1")
    assert lab.exec("r1", ["ip", "-j", "addr", "show"]).stdout == '[{"ifname": "lo"}]'
    assert lab.exec("h1", ["ip", "-j", "addr"]).stdout == "[]"
    r = lab.exec("h1", ["ping", "-c1", "198.18.1.1"])
    assert r.rc == 127 and "ping: not found" in r.stderr
    lab.on("show ip   bgp summary", rc=1, stdout="% BGP instance not found\n")
    assert lab.vtysh("r1", "show ip bgp summary").stdout == "% BGP instance not found\n"
    lab.on("show ip route", timed_out=True, node="r2")
    r = lab.vtysh("r2", ["show ip route", "show version"])
    assert r.timed_out and r.rc == -9 and not r.ok
    assert lab.calls[0] == ("r1", ["ip", "-j", "addr", "show"])
    assert lab.calls[-1] == ("r2", ["vtysh", "-c", "show ip route", "-c", "show version"])


def test_unknown_nodes_and_hosts() -> None:
    lab = FakeLab()
    with pytest.raises(UnknownNode, match="did you mean 'r1'"):
        lab.exec("R1", ["true"])
    with pytest.raises(UnknownNode, match="is a host"):
        lab.vtysh("h1", "show version")
    with pytest.raises(UnknownNode, match="is a host"):
        lab.running_config("h1")


def test_thread_safe() -> None:
    lab = FakeLab()
    lines = [f"ip route 192.0.2.{i}/32 Null0" for i in range(64)]

    def add(i: int) -> None:
        lab.vtysh("r1", ["configure terminal", lines[i]])

    threads = [threading.Thread(target=add, args=(i,)) for i in range(64)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(ln for ln in lab.config("r1") if ln.startswith("ip route")) == sorted(lines)
    assert len(lab.calls) == 64
