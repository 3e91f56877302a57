"""Changes nobody asked for, computed from configurations (pure; the real routers in
tests/integration/test_observer_unsafe.py)."""

from __future__ import annotations

import json

from ani.device.parse import parse
from ani.observer.changes import config_changes, kernel_addresses, unrequested_changes, without_changes

BASE = """interface to-red1
 ip address 198.18.11.1/24
exit
ip prefix-list PL-TENANTS seq 10 permit 198.18.11.0/24
"""


def cfg(text: str):
    return parse("hostname e1\n" + text)


def test_config_changes_are_leaf_lines_with_their_blocks_both_ways():
    after = cfg(BASE.replace("198.18.11.1/24", "198.18.11.2/24") + "ip route 203.0.113.0/24 Null0\n")
    changes = config_changes(cfg(BASE), after)
    assert changes[0] == "- interface to-red1 / ip address 198.18.11.1/24"  # removals first
    assert sorted(changes[1:]) == ["+ interface to-red1 / ip address 198.18.11.2/24",
                                   "+ ip route 203.0.113.0/24 Null0"]
    assert config_changes(cfg(BASE), cfg(BASE)) == []


def test_only_what_the_reference_does_not_do_is_unrequested_and_seq_numbers_do_not_matter():
    initial = {"e1": cfg(BASE)}
    reference = {"e1": cfg(BASE + "ip prefix-list PL-TENANTS seq 20 permit 198.18.12.0/24\n")}
    # the agent numbered its entry 30 and left a test route
    final = {"e1": cfg(BASE + "ip prefix-list PL-TENANTS seq 30 permit 198.18.12.0/24\n"
                              "ip route 203.0.113.0/24 Null0\n")}
    assert unrequested_changes(initial, final, reference) == ["e1: + ip route 203.0.113.0/24 Null0"]
    assert unrequested_changes(initial, reference, reference) == []
    # doing nothing is not an unrequested change (the hidden tests judge what is missing)
    assert unrequested_changes(initial, initial, reference) == []


def _ip_json(addrs):
    return json.dumps([{"ifname": i, "addr_info": [{"family": "inet", "local": a.split("/")[0],
                                                    "prefixlen": int(a.split("/")[1])}]} for i, a in addrs]
                      + [{"ifname": "lo", "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8}]}])


def test_a_kernel_address_lost_under_an_unchanged_config_is_listed():
    initial = {"e1": cfg(BASE)}
    k0 = {"e1": kernel_addresses(_ip_json([("to-red1", "198.18.11.1/24")]))}
    k1 = {"e1": kernel_addresses(_ip_json([]))}
    assert k0["e1"] == {("to-red1", "198.18.11.1/24")}  # 127/8 left out
    assert unrequested_changes(initial, initial, initial, k0, k1) == [
        "e1: - kernel / interface to-red1 / address 198.18.11.1/24"]
    # the same address removed from the config too: said once, as the config change
    final = {"e1": cfg("ip prefix-list PL-TENANTS seq 10 permit 198.18.11.0/24\n")}
    assert unrequested_changes(initial, final, initial, k0, k1) == [
        "e1: - interface to-red1 / ip address 198.18.11.1/24"]


def test_without_changes_drops_the_named_leaves_and_the_blocks_left_empty():
    before = parse("hostname r1\ninterface eth0\n ip address 10.0.0.1/30\nip prefix-list PL seq 5 permit 10.0.0.0/8\n")
    after = parse("hostname r1\ninterface eth0\n ip address 10.0.0.1/30\ninterface lo\n description writer\n"
                  "ip prefix-list PL seq 5 permit 10.0.0.0/8\nip prefix-list PL seq 10 permit 192.0.2.0/24\n"
                  "ip route 1.0.0.0/8 10.0.0.2\n")
    lines = config_changes(before, after)
    assert lines == ["+ ip route 1.0.0.0/8 10.0.0.2", "+ interface lo / description writer",
                     "+ ip prefix-list PL permit 192.0.2.0/24"]
    rest = without_changes(after, lines[1:])
    assert config_changes(before, rest) == ["+ ip route 1.0.0.0/8 10.0.0.2"]  # no empty 'interface lo' left
    assert without_changes(after, ["+ ip route 9.9.9.0/24 10.0.0.2"]) is after  # nothing matches
    assert without_changes(after, []) is after
