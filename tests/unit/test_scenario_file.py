"""The committed brownfield-small.yaml: generator agreement and its shape."""

from __future__ import annotations

from pathlib import Path

from ani.scenario import load_scenario
from ani.scenario.gen_brownfield import render

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "scenarios" / "brownfield-small.yaml"


def test_committed_file_equals_generator_output():
    assert FILE.read_text() == render(), "regenerate: python -m ani.scenario.gen_brownfield > scenarios/brownfield-small.yaml"


def test_shape():
    s = load_scenario(FILE)
    assert s.name == "brownfield-small"
    assert list(s.topology.routers) == ["c1", "c2", "e1", "e2", "e3", "e4"]
    assert sorted(s.topology.hosts) == sorted([f"{t}{k}" for t in ("blue", "red") for k in range(1, 5)])
    assert len(s.topology.links) == 9 + 8
    assert s.edges == ["e1", "e2", "e3", "e4"]
    assert {str(v) for v in s.loopbacks().values()} == {
        "100.64.255.1", "100.64.255.2", "100.64.255.11", "100.64.255.12", "100.64.255.13", "100.64.255.14"
    }
    assert str(s.pools["sites"].network) == "198.19.0.0/16" and s.pools["sites"].prefixlen == 24


def test_shared_state_on_every_edge():
    s = load_scenario(FILE)
    for k, edge in enumerate(s.edges, start=1):
        spec = s.topology.routers[edge]
        assert f"ip prefix-list PL-TENANTS seq 10 permit 198.18.1{k}.0/24" in spec.config
        assert f"ip prefix-list PL-TENANTS seq 20 permit 198.18.2{k}.0/24" in spec.config
        assert "redistribute connected route-map RM-TENANTS-OUT" in spec.config
        assert "set tenant_blue" in spec.nftables and "set tenant_red" in spec.nftables
        assert "198.18.14.0/24" in spec.nftables and "198.18.21.0/24" in spec.nftables
        assert "ip saddr @tenant_blue ip daddr @tenant_red drop" in spec.nftables
    for core in ("c1", "c2"):
        assert "route-reflector-client" in s.topology.routers[core].config
        assert s.topology.routers[core].nftables == ""


def test_tuned_timers_everywhere():
    s = load_scenario(FILE)
    for name, spec in s.topology.routers.items():
        for line in ("timers throttle lsa all 0", "timers lsa min-arrival 0", "timers throttle spf 0 50 500",
                     "timers bgp 1 3", "update-source lo", "timers connect 1", "coalesce-time 0"):
            assert line in spec.config, (name, line)
        assert spec.config.count("ip ospf network point-to-point") == (5 if name in ("c1", "c2") else 2)


def test_link_addresses_are_consistent_31s():
    s = load_scenario(FILE)
    addrs = {r: {n: i.addresses for n, i in cfg.interfaces.items()} for r, cfg in s.device_configs.items()}
    for link in s.topology.links:
        a, b = link.a, link.b
        if a.node in s.topology.routers and b.node in s.topology.routers:
            (ia,), (ib,) = addrs[a.node][a.ifname], addrs[b.node][b.ifname]
            assert ia.network == ib.network and ia.network.prefixlen == 31 and ia.ip != ib.ip
            assert a.ifname == f"to-{b.node}" and b.ifname == f"to-{a.node}"
