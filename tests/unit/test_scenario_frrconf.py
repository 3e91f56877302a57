"""The small FRR config readers used by the scenario and the scripted agent."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface

from ani.scenario import frrconf

CONF = """frr defaults traditional
hostname e9
!
interface lo
 ip address 10.255.0.9/32
exit
!
interface to-c1
 ip address 10.0.0.1/31
 ip address 10.9.9.1/24
exit
!
interface to-x
exit
!
ip prefix-list PL-A seq 5 permit 192.0.2.0/24
ip prefix-list PL-A seq 15 deny any
ip prefix-list PL-OTHER seq 10 permit 198.51.100.0/24
!
route-map RM-OTHER permit 10
 match ip address prefix-list PL-OTHER
exit
!
route-map RM-OUT permit 10
 match ip address prefix-list PL-A
exit
!
router bgp 65000
 neighbor G peer-group
 neighbor 10.255.0.1 remote-as 65000
 neighbor 10.255.0.2 peer-group G
 neighbor 10.255.0.2 update-source lo
 address-family ipv4 unicast
  redistribute connected route-map RM-OUT
  neighbor 10.255.0.1 route-map RM-OTHER out
 exit-address-family
exit
"""


def test_interface_addresses_and_loopback():
    addrs = frrconf.interface_addresses(CONF)
    assert addrs == {
        "lo": [IPv4Interface("10.255.0.9/32")],
        "to-c1": [IPv4Interface("10.0.0.1/31"), IPv4Interface("10.9.9.1/24")],
        "to-x": [],
    }
    assert frrconf.loopback_address(CONF) == IPv4Address("10.255.0.9")
    assert frrconf.loopback_address("interface eth0\n ip address 1.2.3.4/24\n") is None


def test_bgp_neighbors_once_each():
    assert frrconf.bgp_neighbors(CONF) == [IPv4Address("10.255.0.1"), IPv4Address("10.255.0.2")]


def test_prefix_lists():
    assert frrconf.prefix_lists(CONF) == {
        "PL-A": [(5, "permit", "192.0.2.0/24"), (15, "deny", "any")],
        "PL-OTHER": [(10, "permit", "198.51.100.0/24")],
    }


def test_redistribution_prefix_list_is_the_one_behind_redistribute_connected():
    assert frrconf.redistribution_prefix_lists(CONF) == ["PL-A"]
    assert frrconf.redistribution_prefix_lists(CONF.replace("redistribute connected route-map RM-OUT", "")) == []
