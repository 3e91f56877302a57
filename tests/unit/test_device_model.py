"""The device model (ani.device): parse/render round trips, canonical form, unmodelled lines.

``tests/data/device/frr844-running-*.txt`` are real ``show running-config`` outputs of FRR 8.4.4
for the startup configs ``frr844-startup-*.conf`` (captured in a lab; the integration test
``test_device_frr.py`` checks the same properties live).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import ValidationError

from ani.device import (
    Bgp,
    DeviceConfig,
    Interface,
    InterfaceOspf,
    Peer,
    StaticRoute,
    frr_body,
    normalise,
    parse,
    render,
)
from ani.device.model import Firewall, FirewallRule, FirewallSet
from ani.device.nft_names import NFT_KEYWORDS
from ani.device.strategies import device_configs
from ani.scenario import load_scenario

DATA = Path(__file__).parent.parent / "data" / "device"
ROOT = Path(__file__).parent.parent.parent


def _data(name: str) -> str:
    return (DATA / name).read_text()


# -- properties ------------------------------------------------------------------------------


@settings(derandomize=True, max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(device_configs())
def test_parse_render_round_trip(m):
    text = render(m)
    back = parse(text)
    assert back == m
    assert back.unmodelled == []
    assert render(back) == text  # render is a function of the model's value only


@settings(derandomize=True, max_examples=40, deadline=None, database=None)
@given(device_configs())
def test_equal_configs_in_another_order_compare_equal(m):
    shuffled = DeviceConfig.model_validate({
        **m.model_dump(),
        "interfaces": dict(reversed(list(m.model_dump()["interfaces"].items()))),
        "static_routes": list(reversed(m.model_dump()["static_routes"])),
    })
    assert shuffled == m
    assert render(shuffled) == render(m)


# -- the scenario's configs ------------------------------------------------------------------


def _brownfield():
    return load_scenario(ROOT / "scenarios" / "brownfield-small.yaml").topology.routers


@pytest.mark.parametrize("router", ["c1", "c2", "e1", "e2", "e3", "e4"])
def test_brownfield_startup_configs_parse_completely(router):
    m = parse(_brownfield()[router].config)
    assert m.unmodelled == []
    assert m.hostname == router
    assert m.ipv6_forwarding is False and m.bgp_route_map_delay_timer == 1
    assert m.bgp is not None and m.bgp.asn == 64500 and m.bgp.timers == (1, 3)
    assert m.ospf is not None and m.ospf.throttle_spf == (0, 50, 500)
    assert m.interfaces["lo"].ospf.area == "0"
    assert parse(render(m)) == m
    if router.startswith("c"):
        assert m.bgp.peer_groups["EDGES"] == Peer(remote_as=64500, update_source="lo", timers_connect=1)
        assert m.bgp.ipv4_unicast.peers["EDGES"].route_reflector_client
        assert len(m.bgp.neighbors) == 4 and not m.prefix_lists
    else:
        assert set(m.bgp.neighbors) == {"100.64.255.1", "100.64.255.2"}
        assert m.bgp.ipv4_unicast.redistribute == {"connected": "RM-TENANTS-OUT"}
        assert [e.seq for e in m.prefix_lists["PL-TENANTS"].entries] == [10, 20]
        assert m.route_maps["RM-TENANTS-OUT"].entries[0].match_prefix_list == "PL-TENANTS"
        to_c1 = m.interfaces["to-c1"].ospf
        assert to_c1 == InterfaceOspf(area="0", network="point-to-point", hello_interval=1, dead_interval=3)


# -- FRR's own output (captured from FRR 8.4.4) ---------------------------------------------


@pytest.mark.parametrize("case", ["c1", "c2", "c3"])
def test_render_of_parsed_frr_output_is_what_frr_printed(case):
    running = _data(f"frr844-running-{case}.txt")
    m = parse(running)
    assert m.unmodelled == []
    assert render(m) == frr_body(running)
    assert normalise(render(m)) == normalise(running)


def test_frr_normalisations_of_a_startup_config():
    """What FRR changed between startup config c2 and its running config (docs/device-model.md)."""
    text = _data("frr844-startup-c2.conf")
    # FRR's defaults, written in the startup config, which FRR then does not print: the model
    # takes them as absent (canonical None), so the startup config parses to what FRR printed
    for line in ("ip ospf hello-interval 10", "ip ospf network broadcast", "timers bgp 60 180"):
        assert line in text and line not in _data("frr844-running-c2.txt")
    startup = parse(text)
    running = parse(_data("frr844-running-c2.txt"))
    assert startup.interfaces["to-e10"].ospf.hello_interval is None
    assert running.interfaces["to-e10"].ospf.dead_interval == 40  # printed although default
    assert startup.interfaces["eth0"].ospf.network is None and startup.bgp.timers is None
    assert startup == running


def test_running_config_order_quirks():
    running = _data("frr844-running-c3.txt")
    body = frr_body(running).splitlines()
    m = parse(running)
    # interfaces with a description or address first, then OSPF-only ones, each by name
    assert [ln for ln in body if ln.startswith("interface ")] == [
        "interface lo", "interface eth0", "interface gg2", "interface ghost"]
    # static routes by (prefix length, address), then distance, interface before address
    assert [str(r.prefix) for r in m.static_routes][-2:] == ["12.0.0.0/8", "10.0.0.0/16"]
    assert [r.nexthop for r in m.static_routes][:3] == ["eth0", "192.0.2.1", "192.0.2.2"]
    # ``description a b  c`` came back with one blank
    assert m.bgp.neighbors["192.0.2.1"].description == "a b c"


def test_frr_body_and_normalise():
    running = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\n" \
              "frr defaults traditional\nhostname r1\n!\ninterface lo\n description x\nexit\n!\nend\n"
    assert frr_body(running) == "hostname r1\n!\ninterface lo\n description x\nexit\n!\n"
    assert normalise(running) == "hostname r1\ninterface lo\n description x\nexit\n"


# -- unmodelled lines ------------------------------------------------------------------------


def test_unmodelled_lines_are_kept_not_dropped():
    text = """hostname r9
log syslog informational
interface eth0
 ip address 10.0.0.1/24
 ip ospf cost 10
exit
router bgp 65000
 neighbor 10.0.0.2 remote-as 65001
 neighbor 10.0.0.2 password secret
 address-family ipv4 unicast
  neighbor 10.0.0.2 soft-reconfiguration inbound
  network 10.9.0.0/16
 exit-address-family
 address-family ipv6 unicast
  network 2001:db8::/32
 exit-address-family
exit
router rip
 network 10.0.0.0/8
exit
route-map RM permit 10
 set as-path prepend 65000
exit
ip route 10.5.0.0/16 10.0.0.9 tag 7
"""
    m = parse(text)
    assert m.unmodelled == [
        "log syslog informational",
        "interface eth0 / ip ospf cost 10",
        "router bgp 65000 / neighbor 10.0.0.2 password secret",
        "router bgp 65000 / address-family ipv4 unicast / neighbor 10.0.0.2 soft-reconfiguration inbound",
        "router bgp 65000 / address-family ipv6 unicast",
        "router bgp 65000 / address-family ipv6 unicast / network 2001:db8::/32",
        "router rip",
        "router rip / network 10.0.0.0/8",
        "route-map RM permit 10 / set as-path prepend 65000",
        "ip route 10.5.0.0/16 10.0.0.9 tag 7",
    ]
    # what is modelled is still read
    assert m.interfaces["eth0"].addresses[0].with_prefixlen == "10.0.0.1/24"
    assert [str(n) for n in m.bgp.ipv4_unicast.networks] == ["10.9.0.0/16"]
    with pytest.raises(ValueError, match="unmodelled"):
        render(m)


def test_startup_config_spellings():
    m = parse("hostname r1\nrouter ospf\n router-id 1.1.1.1\n passive-interface eth3\nexit\n"
              "router bgp 65000\n neighbor 10.0.0.2 remote-as internal\n"
              " neighbor 10.0.0.2 route-reflector-client\n network 10.1.0.0/16\nexit\n")
    assert m.ospf.router_id.exploded == "1.1.1.1"
    assert m.interfaces["eth3"].ospf.passive
    assert m.bgp.ipv4_unicast.peers["10.0.0.2"].route_reflector_client
    assert m.unmodelled == []


# -- validation ------------------------------------------------------------------------------


def test_canonical_form_and_validation():
    a = DeviceConfig(hostname="r1", interfaces={"to-e10": Interface(description="x"), "to-e2": Interface(description="y"),
                                                "lo": Interface()})
    assert list(a.interfaces) == ["to-e2", "to-e10"]  # natural name order; empty interface dropped
    assert StaticRoute(prefix="10.0.0.0/8", nexthop="192.0.2.1") == StaticRoute(prefix="10.0.0.0/8", nexthop="192.0.2.1", distance=1)
    with pytest.raises(ValidationError):
        InterfaceOspf(area="0.0.0")
    with pytest.raises(ValidationError, match="unknown peer-group"):
        Bgp(asn=1, neighbors={"10.0.0.1": Peer(peer_group="NOPE")})
    with pytest.raises(ValidationError, match="remote_as or peer_group"):
        Bgp(asn=1, neighbors={"10.0.0.1": Peer()})
    with pytest.raises(ValidationError):
        parse("hostname r1\nip prefix-list P seq 5 permit 10.0.0.0/8 ge 4\n")  # ge below the length
    with pytest.raises(ValueError, match="hostname"):
        parse("interface lo\n ip address 10.0.0.1/32\nexit\n")


def test_prefix_list_ge_equal_to_the_length_is_valid():
    """FRR 8.4 accepts (and prints) ``ge`` equal to the prefix length."""
    m = parse("hostname r1\nip prefix-list PL seq 20 permit 10.0.0.0/8 ge 8\n")
    assert m.prefix_lists["PL"].entries[0].ge == 8
    assert render(m).splitlines()[2] == "ip prefix-list PL seq 20 permit 10.0.0.0/8 ge 8"


# -- FRR defaults, coalesce-time, nft set names ------------------------------------------------


def test_route_map_delay_timer_5_is_the_default_and_canonical_none():
    """FRR 8.4's default is 5 s and it never prints it: intending 5 must compare equal to what
    is read back (nothing), while 0 and other values are printed."""
    five = DeviceConfig(hostname="r1", bgp_route_map_delay_timer=5)
    assert five.bgp_route_map_delay_timer is None and five == DeviceConfig(hostname="r1")
    assert "delay-timer" not in render(five)
    assert parse("hostname r1\nbgp route-map delay-timer 5\n") == five
    for v in (0, 1, 600):
        m = DeviceConfig(hostname="r1", bgp_route_map_delay_timer=v)
        assert render(m).splitlines()[1] == f"bgp route-map delay-timer {v}" and parse(render(m)) == m
    with pytest.raises(ValidationError):
        DeviceConfig(hostname="r1", bgp_route_map_delay_timer=601)


def test_coalesce_time_is_printed_after_the_router_id_before_the_timers():
    """The order FRR 8.4.4 printed (measured: startup ``coalesce-time`` written first, then
    router-id and timers; ``bgp log-neighbor-changes``, unmodelled, would come between router-id
    and coalesce-time). A configured 1000 (the initial value) and 0 are printed too."""
    startup = ("hostname r1\nrouter bgp 65000\n coalesce-time 50\n neighbor 192.0.2.9 remote-as 65000\n"
               " bgp router-id 10.255.0.1\n timers bgp 10 30\nexit\n")
    m = parse(startup)
    assert m.unmodelled == [] and m.bgp.coalesce_time == 50
    assert render(m) == ("hostname r1\n!\nrouter bgp 65000\n bgp router-id 10.255.0.1\n coalesce-time 50\n"
                         " timers bgp 10 30\n neighbor 192.0.2.9 remote-as 65000\nexit\n!\n")
    for v in (0, 1000, 4294967295):
        b = Bgp(asn=1, coalesce_time=v)
        assert f" coalesce-time {v}" in render(DeviceConfig(hostname="r1", bgp=b)).splitlines()
    with pytest.raises(ValidationError):
        Bgp(asn=1, coalesce_time=4294967296)  # FRR: "% Unknown command"


def _shipped_topologies():
    import yaml

    from ani.scenario.generate import is_manifest

    files = sorted((ROOT / "scenarios").glob("*.yaml")) + sorted((ROOT / "tests" / "data").glob("*.yaml"))
    files = [f for f in files if not is_manifest(yaml.safe_load(f.read_text()))]  # manifests: no routers yet
    return [pytest.param(f, id=str(f.relative_to(ROOT))) for f in files]


#: topology files that use FRR configuration the model does not cover on purpose: {name: reason}
INTENTIONALLY_UNMODELLED: dict[str, str] = {}


@pytest.mark.parametrize("path", _shipped_topologies())
def test_shipped_topologies_parse_without_unmodelled_lines(path):
    """Every router of every shipped scenario / test topology is fully modelled, so the NETCONF
    backend (which refuses a running config with unmodelled lines) can manage it."""
    from ani.lab.topology import load_topology

    if path.name in INTENTIONALLY_UNMODELLED:
        pytest.skip(INTENTIONALLY_UNMODELLED[path.name])
    routers = load_topology(path).routers
    assert routers
    for name, r in routers.items():
        m = parse(r.config)
        assert m.unmodelled == [], f"{path.name} {name}"
        assert m.hostname == name
        assert parse(render(m)) == m


@pytest.mark.parametrize("name", ["0abc", "9net", "1", "drop", "ip", "type", "counter", "elements", "interval",
                                  "tcp", "accept", "set", "auto-merge", "ll", "and", "-x", ".x", "a@b", "x" * 64])
def test_firewall_set_names_nft_refuses_are_refused(name):
    with pytest.raises(ValidationError, match="invalid set name") as e:
        Firewall(sets={name: FirewallSet()})
    if name in NFT_KEYWORDS:
        assert "nft keyword" in str(e.value)
    with pytest.raises(ValidationError, match="invalid set name"):
        FirewallRule(saddr_set=name, action="drop")


@pytest.mark.parametrize("name", ["BLUE", "DROP", "Ip", "_x", "_", "x.y", "x-y", "saddr", "tenant_blue", "x" * 63])
def test_firewall_set_names_nft_accepts_are_valid(name):
    fw = Firewall(sets={name: FirewallSet()}, forward_rules=[FirewallRule(daddr_set=name, action="drop")])
    assert list(fw.sets) == [name]


def test_canonical_sorts_and_folds_what_in_place_edits_left():
    """Pydantic does not validate in-place edits: canonical() does (ani.device.apply uses it)."""
    m = parse("hostname r1\nip route 203.0.113.1/32 Null0\n")
    edited = m.model_copy(deep=True)
    edited.static_routes.append(StaticRoute(prefix="192.0.2.0/24", nexthop="blackhole"))
    edited.bgp_route_map_delay_timer = 5
    fresh = parse("hostname r1\nip route 192.0.2.0/24 blackhole\nip route 203.0.113.1/32 Null0\n")
    assert edited != fresh and edited.canonical() == fresh
    edited.static_routes.append(StaticRoute(prefix="192.0.2.0/24", nexthop="blackhole"))
    with pytest.raises(ValidationError, match="duplicate static route"):
        edited.canonical()


# -- FRR's limits (issue 11; measured on FRR 8.4.4, checked on a real router by
#    tests/integration/test_frr_limits.py) ---------------------------------------------------------


@pytest.mark.parametrize("timers, why", [
    ((0, 1), "hold time must be 0 or 3..65535"), ((0, 2), "hold time must be 0 or 3..65535"),
    ((2, 3), "at most a third"), ((1, 0), "at most a third"), ((21846, 65535), "at most a third"),
])
def test_bgp_timers_frr_refuses_or_rewrites_are_refused(timers, why):
    from ani.device.model import Bgp

    with pytest.raises(ValueError, match=why):
        Bgp(asn=1, timers=timers)


def test_bgp_timers_frr_takes_and_the_unprinted_default():
    from ani.device.model import Bgp

    assert [Bgp(asn=1, timers=t).timers for t in ((0, 0), (0, 3), (1, 3), (21845, 65535), (60, 180))] == \
        [(0, 0), (0, 3), (1, 3), (21845, 65535), None]


def test_lines_are_limited_in_bytes_and_words():
    from ani.device.model import Bgp, Interface, Peer, RouteMapEntry

    assert Interface(description="x" * 4080).description
    assert Interface(description="\u00e9" * 2040).description  # 4080 bytes
    for d in ("x" * 4081, "\u00e9" * 2041, " ".join("w" * 255)):
        with pytest.raises(ValueError, match="too long|too many words"):
            Interface(description=d)
    ok = Bgp(asn=1, neighbors={"10.0.0.2": Peer(remote_as=2, description="y" * 4060)})
    assert ok.neighbors["10.0.0.2"].description
    with pytest.raises(ValueError, match="at most 4091"):  # 'no ...' must fit vtysh -c too
        Bgp(asn=1, neighbors={"10.0.0.2": Peer(remote_as=2, description="y" * 4061)})
    with pytest.raises(ValueError, match="at most 4091"):  # a longer name leaves less room
        Bgp(asn=1, peer_groups={"G" * 40: Peer(remote_as=2, description="y" * 4030)})
    assert len(RouteMapEntry(seq=1, action="permit", set_community=[f"1:{i}" for i in range(1, 254)]).set_community) == 253
    with pytest.raises(ValueError, match="too many words"):
        RouteMapEntry(seq=1, action="permit", set_community=[f"1:{i}" for i in range(1, 255)])
    with pytest.raises(ValueError, match="too many words"):
        RouteMapEntry(seq=1, action="permit", set_community=[f"1:{i}" for i in range(1, 254)],
                      set_community_additive=True)


def test_numbers_are_written_as_frr_prints_them():
    from ani.device.model import InterfaceOspf, Ospf, OspfNetwork, RouteMapEntry

    assert OspfNetwork(prefix="10.0.0.0/8", area="007").area == "7"
    assert OspfNetwork(prefix="10.0.0.0/8", area="0.0.0.0").area == "0.0.0.0"  # not 0
    for bad in ("4294967296", "0.0.0.256", "01.2.3.4", "1.2.3.04"):
        with pytest.raises(ValueError, match="OSPF area"):
            OspfNetwork(prefix="10.0.0.0/8", area=bad)
    e = RouteMapEntry(seq=1, action="permit",
                      set_community=["00001:2", "0:0", "65535:1", "65535:65281", "65535:9", "llgr-stale"])
    assert e.set_community == ["internet", "1:2", "accept-own", "llgr-stale", "65535:9", "no-export"]  # by value
    with pytest.raises(ValueError, match="distinct"):
        RouteMapEntry(seq=1, action="permit", set_community=["65535:65281", "no-export"])
    for bad in ("65536:1", "1:65536", "1:2:3"):
        with pytest.raises(ValueError, match="community"):
            RouteMapEntry(seq=1, action="permit", set_community=[bad])
    assert InterfaceOspf(hello_interval=10, network="broadcast") == InterfaceOspf()
    assert Ospf(throttle_spf=(0, 50, 5000), throttle_lsa_all=5000, lsa_min_arrival=1000) == Ospf()


def test_router_ids_martian_addresses_and_lo_network_type():
    from ani.device.model import Bgp, Interface, InterfaceOspf, Ospf

    for make in (lambda: Bgp(asn=1, router_id="0.0.0.0"), lambda: Ospf(router_id="0.0.0.0")):
        with pytest.raises(ValueError, match="0.0.0.0 is not a router id"):
            make()
    for a in ("0.255.255.255/32", "127.0.0.2/8", "224.0.0.1/24", "240.0.0.1/24", "255.255.255.255/32"):
        with pytest.raises(ValueError, match="not a unicast host address"):
            Interface(addresses=[a])
    assert Interface(addresses=["1.0.0.0/32", "126.255.255.255/32", "223.255.255.255/32"]).addresses
    with pytest.raises(ValueError, match="loopback"):
        DeviceConfig(hostname="r1", interfaces={"lo": Interface(ospf=InterfaceOspf(network="point-to-point"))})
    assert DeviceConfig(hostname="r1", interfaces={"eth0": Interface(ospf=InterfaceOspf(network="point-to-point"))})
