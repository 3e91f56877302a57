"""The device model against real FRR 8.4.4: what render() writes FRR accepts, and FRR's
``show running-config`` parses back to the same model and renders to exactly what FRR printed.

Comparison: ``render(parse(running)) == frr_body(running)`` -- FRR's output without its header
(``Building configuration...``, ``Current configuration:``, ``frr version``, ``frr defaults``, the
leading ``!``) and the final ``end``; every other line, ``!`` separators included, must match.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from ani.device import frr_body, parse, render
from ani.device.strategies import device_configs
from ani.lab.topology import Topology
from ani.scenario import load_scenario

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

ROOT = Path(__file__).parent.parent.parent


def test_brownfield_running_configs(make_lab):
    routers = load_scenario(ROOT / "scenarios" / "brownfield-small.yaml").topology
    lab = make_lab(routers)
    for name, spec in routers.routers.items():
        running = lab.running_config(name)
        m = parse(running)
        assert m.unmodelled == [], name
        assert m == parse(spec.config), name  # FRR kept the startup config's meaning
        assert render(m) == frr_body(running), name

        # the rendered text loads with ``vtysh -f`` and changes nothing
        with tempfile.NamedTemporaryFile("w", suffix=".conf", dir="/tmp") as f:
            f.write(render(m))
            f.flush()
            res = lab.exec(name, [str(lab.node_dir(name) / "bin" / "vtysh"), "-f", f.name])
        assert res.ok, (name, res.stdout, res.stderr)
        assert lab.running_config(name) == running, name


@settings(derandomize=True, max_examples=10, deadline=None, database=None,
          phases=[Phase.explicit, Phase.generate],  # no shrinking: each example is a lab
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(m=device_configs(hostname="r1"))
def test_generated_models_survive_real_frr(make_lab, m):
    topo = Topology.model_validate({
        "name": "device-model",
        "routers": {"r1": {"daemons": ["ospfd", "bgpd"], "config": "frr defaults traditional\n" + render(m)}},
        "convergence": {"ospf": False, "bgp": False},
    })
    lab = make_lab(topo)
    try:
        running = lab.running_config("r1")
    finally:
        lab.down()  # idempotent; make_lab downs it again at teardown
    got = parse(running)
    assert got.unmodelled == []
    assert got == m
    assert render(got) == frr_body(running)


def test_ebgp_policy_peer_timers_and_prefix_lists_read_back(make_lab):
    """``no bgp ebgp-requires-policy``, ``neighbor X timers K H`` (on a peer-group and a
    neighbor; 60 180, FRR's default, is printed too, unlike ``timers bgp 60 180``) and ``neighbor X prefix-list P in|out``
    beside route-maps: FRR prints them where render() puts them."""
    text = """hostname r1
!
router bgp 65001
 bgp router-id 10.255.0.1
 coalesce-time 50
 timers bgp 10 30
 no bgp ebgp-requires-policy
 neighbor EXT peer-group
 neighbor EXT remote-as external
 neighbor EXT timers 20 90
 neighbor 192.0.2.1 remote-as 65002
 neighbor 192.0.2.1 timers connect 1
 neighbor 192.0.2.1 timers 1 3
 neighbor 192.0.2.2 remote-as 65003
 neighbor 192.0.2.2 timers 60 180
 !
 address-family ipv4 unicast
  neighbor EXT prefix-list PL-B out
  neighbor 192.0.2.1 route-map RM-A in
  neighbor 192.0.2.1 prefix-list PL-B out
  neighbor 192.0.2.1 prefix-list PL-A in
 exit-address-family
exit
!
ip prefix-list PL-A seq 10 permit 10.2.0.0/24
ip prefix-list PL-B seq 5 deny any
!
route-map RM-A permit 10
exit
!
"""
    m = parse(text)
    assert m.unmodelled == []
    assert m.bgp is not None and not m.bgp.ebgp_requires_policy
    assert m.bgp.neighbors["192.0.2.1"].timers == (1, 3) and m.bgp.neighbors["192.0.2.2"].timers == (60, 180)
    assert m.bgp.peer_groups["EXT"].timers == (20, 90)
    topo = Topology.model_validate({
        "name": "device-model-bgp",
        "routers": {"r1": {"daemons": ["bgpd"], "config": "frr defaults traditional\n" + text}},
        "convergence": {"ospf": False, "bgp": False},
    })
    running = make_lab(topo).running_config("r1")
    got = parse(running)
    assert got.unmodelled == []
    assert got == m
    assert render(got) == frr_body(running)
