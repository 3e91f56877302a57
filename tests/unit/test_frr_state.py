"""ani.netconf.frr_backend.build_state: the frr-state document from FRR's / iproute2's JSON.

Fixtures in tests/data/frr_state were captured on brownfield-small's e1 (FRR 8.4.4) with extra
static routes (192.0.2.0/24 Null0 and, at distance 200, via 198.51.100.1; 203.0.113.0/24 via
to-blue1; 198.51.100.0/24 reject) and a shut-down neighbor 192.0.2.78.
"""

from __future__ import annotations

import json
from pathlib import Path

from ani.netconf.frr_backend import STATE, build_state, split_json

DATA = Path(__file__).parent.parent / "data" / "frr_state"


def state() -> dict:
    docs = (json.loads((DATA / f"e1-{n}.json").read_text()) for n in ("ip-addr", "route", "bgp", "ospf"))
    return build_state(*docs)[STATE]


def test_interfaces():
    ifs = {i["name"]: i for i in state()["interface"]}
    assert ifs["lo"] == {"name": "lo", "admin-status": "up", "oper-status": "unknown",
                         "address": ["127.0.0.1/8", "100.64.255.11/32"], "mtu": 65536}
    assert ifs["to-c1"]["oper-status"] == "up" and ifs["to-c1"]["address"] == ["100.64.1.1/31"]


def test_routes_one_per_prefix_and_protocol_with_next_hop_forms():
    routes = state()["route"]
    keys = [(r["prefix"], r["protocol"]) for r in routes]
    assert len(keys) == len(set(keys))
    by = dict(zip(keys, routes))
    # two static routes of one prefix (distance 1 Null0, distance 200): the selected one
    assert by[("192.0.2.0/24", "static")] == {"prefix": "192.0.2.0/24", "protocol": "static", "distance": 1,
                                              "metric": 0, "selected": True, "next-hop": ["blackhole"]}
    assert by[("198.51.100.0/24", "static")]["next-hop"] == ["reject"]
    assert by[("203.0.113.0/24", "static")]["next-hop"] == ["to-blue1"]
    assert by[("198.18.12.0/24", "bgp")]["next-hop"] == ["100.64.255.12", "100.64.1.0 via to-c1", "100.64.2.0 via to-c2"]
    assert by[("100.64.1.0/31", "connected")]["selected"] is True
    assert by[("100.64.1.0/31", "ospf")]["selected"] is False
    assert keys[0] == ("100.64.0.0/31", "ospf")  # sorted by address


def test_bgp_and_ospf_neighbors():
    st = state()
    assert st["bgp-neighbor"][0] == {"address": "100.64.255.1", "remote-as": 64500, "state": "Established",
                                     "uptime-s": 297, "prefixes-received": 6}
    assert st["bgp-neighbor"][2]["state"] == "Idle (Admin)"
    assert st["ospf-neighbor"] == [
        {"router-id": "100.64.255.1", "interface": "to-c1", "address": "100.64.1.0", "state": "Full/-"},
        {"router-id": "100.64.255.2", "interface": "to-c2", "address": "100.64.2.0", "state": "Full/-"},
    ]


def test_no_daemon_no_list():
    st = build_state([], {}, {}, {})
    assert st == {STATE: {}}


def test_split_json():
    assert split_json('{"a": 1}\n{"b": [2]}\n\n[]') == [{"a": 1}, {"b": [2]}, []]
    assert split_json("% ospfd is not running\n{}") is None
    assert split_json("") == []
