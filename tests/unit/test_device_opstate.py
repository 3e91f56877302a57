"""The one reader of operational state (ani.device.opstate, issue 28 §2) on the shipped FakeLab:
what each read runs, the typed views of FRR 8.4's / iproute2's documents, the errors, and that
the observer, the settle watch, the NETCONF backend, get_state and the fault kinds read there."""

from __future__ import annotations

import json

import pytest

from ani.device import opstate
from ani.errors import LabError, StateReadError
from ani.testing import FakeLab

#: `ip -j addr show` of a router (iproute2 5.x), trimmed
ADDR = [
    {"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536, "operstate": "UNKNOWN",
     "address": "00:00:00:00:00:00",
     "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8},
                   {"family": "inet", "local": "100.64.255.1", "prefixlen": 32},
                   {"family": "inet6", "local": "::1", "prefixlen": 128}]},
    {"ifindex": 7, "ifname": "eth-r2", "flags": ["BROADCAST", "MULTICAST"], "mtu": 1500, "operstate": "DOWN",
     "address": "aa:bb:cc:00:00:01",
     "addr_info": [{"family": "inet", "local": "100.64.1.1", "prefixlen": 31}]},
]
#: `show ip route json` (FRR 8.4), two entries of one prefix
ROUTES = {
    "10.0.0.0/24": [
        {"prefix": "10.0.0.0/24", "protocol": "static", "selected": True, "installed": True, "distance": 1,
         "metric": 0, "uptime": "00:01:02",
         "nexthops": [{"ip": "100.64.1.0", "interfaceName": "eth-r2", "active": True, "fib": True}]},
        {"prefix": "10.0.0.0/24", "protocol": "ospf", "distance": 110, "metric": 20, "uptime": "00:00:10",
         "nexthops": [{"ip": "100.64.1.0", "interfaceName": "eth-r2", "active": True}]},
    ],
    "192.0.2.0/24": [{"protocol": "static", "selected": True, "distance": 1, "metric": 0,
                      "nexthops": [{"blackhole": True, "active": True}]}],
}
#: `show bgp summary json` (FRR 8.4)
BGP = {"ipv4Unicast": {"routerId": "100.64.255.1", "as": 64500, "peers": {
    "100.64.255.2": {"remoteAs": 64500, "state": "Established", "peerState": "OK", "peerUptimeMsec": 121500,
                     "pfxRcd": 6},
    "100.64.255.3": {"remoteAs": 64501, "state": "Idle (Admin)", "peerState": "Admin"},
    "100.64.255.4": {"remoteAs": 64501, "state": "Active", "peerState": "OK"},
}}}
#: `show ip ospf neighbor json` (FRR 8.4: nbrState)
OSPF = {"neighbors": {
    "100.64.255.2": [{"nbrState": "Full/DR", "ifaceName": "eth-r2:100.64.1.1", "address": "100.64.1.0"}],
    "100.64.255.9": [{"nbrState": "Init/-", "ifaceName": "eth-r2:100.64.1.1", "address": "100.64.1.8"},
                     {"nbrState": "2-Way/DROther", "ifaceName": "eth-x:10.9.9.1", "ifaceAddress": "10.9.9.2"}],
}}


def _lab() -> FakeLab:
    lab = FakeLab()
    lab.on(["ip", "-j", "addr"], stdout=json.dumps(ADDR))
    lab.on("show ip route json", stdout=json.dumps(ROUTES))
    lab.on("show bgp summary json", stdout=json.dumps(BGP))
    lab.on("show ip ospf neighbor json", stdout=json.dumps(OSPF))
    return lab


def test_addresses_are_read_with_ip_json_and_typed():
    lab = _lab()
    doc = opstate.read_addresses(lab, "r1")
    assert lab.calls[-1] == ("r1", ["ip", "-j", "addr", "show"])
    lo, eth = opstate.interfaces(doc)
    assert lo == opstate.Interface(name="lo", admin_up=True, operstate="UNKNOWN", mac="00:00:00:00:00:00",
                                   mtu=65536, ipv4=("127.0.0.1/8", "100.64.255.1/32"))
    assert (eth.admin_up, eth.operstate, eth.ipv4, eth.mtu) == (False, "DOWN", ("100.64.1.1/31",), 1500)
    assert opstate.kernel_addresses(doc) == {("lo", "100.64.255.1/32"), ("eth-r2", "100.64.1.1/31")}
    assert opstate.kernel_addresses(json.dumps(doc)) == opstate.kernel_addresses(doc)  # its text too


@pytest.mark.parametrize(("answer", "rc", "timed_out", "why"), [
    ({"rc": 1, "stderr": "Cannot find device\n"}, 1, False, "exit 1"),
    ({"timed_out": True}, -9, True, "timed out"),
    ({"stdout": "not json"}, 0, False, "printed no JSON"),
])
def test_a_failed_read_raises_state_read_error_naming_node_and_command(answer, rc, timed_out, why):
    lab = FakeLab()
    lab.on(["ip", "-j", "addr"], **answer)
    with pytest.raises(StateReadError) as err:
        opstate.read_addresses(lab, "r1")
    e = err.value
    assert isinstance(e, LabError)  # every caller catching the lab's errors still does
    assert (e.node, e.command, e.rc, e.timed_out) == ("r1", "ip -j addr show", rc, timed_out)
    assert str(e).startswith("r1: ip -j addr show") and why in str(e)


def test_the_labs_own_errors_go_through_unchanged():
    from ani.errors import LabGone, UnknownNode

    lab = _lab()
    with pytest.raises(UnknownNode):
        opstate.read_addresses(lab, "nosuch")
    lab.down()
    with pytest.raises(LabGone):
        opstate.read_addresses(lab, "r1")


def test_links_argv_and_link_state():
    lab = FakeLab()
    lab.on(["ip", "-j", "link"], stdout='[{"ifname": "eth-r2", "flags": ["BROADCAST"], "operstate": "DOWN"}]')
    lab.on(["ip", "-j", "-s", "link"], stdout='[{"ifname": "eth-r2", "flags": ["UP"]}]')
    assert opstate.link_state(opstate.read_links(lab, "r1", "eth-r2")) == (False, "DOWN")
    assert lab.calls[-1] == ("r1", ["ip", "-j", "link", "show", "dev", "eth-r2"])
    assert opstate.link_state(opstate.read_links(lab, "r1", stats=True)) == (True, "UNKNOWN")
    assert lab.calls[-1] == ("r1", ["ip", "-j", "-s", "link", "show"])
    with pytest.raises(StateReadError):
        opstate.link_state([])


def test_routes_typed_and_their_state_without_uptimes():
    lab = _lab()
    doc = opstate.read_routes(lab, "r1")
    rs = opstate.routes(doc)
    assert [(r.prefix, r.protocol, r.selected, r.installed, r.distance) for r in rs] == [
        ("10.0.0.0/24", "static", True, True, 1), ("10.0.0.0/24", "ospf", False, False, 110),
        ("192.0.2.0/24", "static", True, False, 1)]
    assert rs[0].nexthops == (opstate.NextHop(ip="100.64.1.0", interface="eth-r2", active=True, fib=True),)
    assert rs[2].nexthops[0].blackhole and rs[2].nexthops[0].ip is None
    later = json.loads(json.dumps(ROUTES))
    later["10.0.0.0/24"][0]["uptime"] = "00:05:00"  # time passes: no change
    assert opstate.route_state(later) == opstate.route_state(doc)
    later["10.0.0.0/24"][0]["nexthops"][0]["fib"] = False  # left the FIB: a change
    assert opstate.route_state(later) != opstate.route_state(doc)
    assert opstate.route_state(None) == [None]


def test_bgp_peers_typed_and_one_peers_state():
    lab = _lab()
    doc = opstate.read_bgp_summary(lab, "r1")
    peers = {p.address: p for p in opstate.bgp_peers(doc)}
    up = peers["100.64.255.2"]
    assert (up.family, up.state, up.remote_as, up.uptime_ms, up.prefixes_received) == (
        "ipv4Unicast", "Established", 64500, 121500, 6)
    assert peers["100.64.255.3"].admin_down and not peers["100.64.255.4"].admin_down
    assert opstate.bgp_peer_state(doc, "100.64.255.4") == "Active"
    assert opstate.bgp_peer_state(doc, "192.0.2.1") is None  # not configured
    assert opstate.bgp_peer_state({"ipv4Unicast": {"peers": {"192.0.2.1": {}}}}, "192.0.2.1") == "?"
    # the one-family form (`show bgp ipv4 unicast summary json`) reads the same
    lab.on("show bgp ipv4 unicast summary json", stdout=json.dumps(BGP["ipv4Unicast"]))
    one = opstate.read_bgp_summary(lab, "r1", ipv4_unicast=True)
    assert [p.address for p in opstate.bgp_peers(one)] == list(peers)
    assert opstate.peer_states(doc)[0] == ("ipv4Unicast", "100.64.255.2", "Established")


def test_ospf_neighbors_typed_full_wins_per_interface():
    doc = opstate.read_ospf_neighbors(_lab(), "r1")
    ns = opstate.ospf_neighbors(doc)
    assert ns[0] == opstate.OspfNeighbor(router_id="100.64.255.2", interface="eth-r2", address="100.64.1.0",
                                         state="Full/DR")
    assert ns[2].address == "10.9.9.2" and ns[2].adjacency == "2-Way"
    assert opstate.ospf_neighbor_states(doc) == {"eth-r2": "Full", "eth-x": "2-Way"}


def test_read_show_uses_one_vtysh_and_falls_back_per_command():
    lab = _lab()
    n = len(lab.calls)
    docs = opstate.read_show(lab, "r1", [opstate.ROUTES, opstate.BGP_SUMMARY])
    assert docs == {opstate.ROUTES: ROUTES, opstate.BGP_SUMMARY: BGP}
    assert len(lab.calls) == n + 1  # one vtysh for both
    lab.on("show ip ospf neighbor json", stdout="% ospfd is not running\n")
    assert opstate.read_show(lab, "r1", [opstate.ROUTES, opstate.OSPF_NEIGHBORS], fallback=False) is None
    with pytest.raises(LabError, match="gave no JSON"):  # each on its own: the failing one says why
        opstate.read_show(lab, "r1", [opstate.ROUTES, opstate.OSPF_NEIGHBORS])


def test_split_json_and_json_documents():
    assert opstate.split_json('{"a": 1}\n[2] trailing', 2) == [{"a": 1}, [2]]
    assert opstate.split_json('{"a": 1}\n[2] trailing') is None
    assert opstate.json_documents('vty> {"a": 1} text [3]') == [{"a": 1}, [3]]


def test_address_changes_lost_first_then_gained():
    before = {("eth0", "10.0.0.1/24"), ("lo", "100.64.255.1/32")}
    after = {("lo", "100.64.255.1/32"), ("eth0", "10.0.0.2/24")}
    assert opstate.address_changes(before, after) == [("-", "eth0", "10.0.0.1/24"), ("+", "eth0", "10.0.0.2/24")]
    assert opstate.address_changes(before, before) == []


def test_the_readers_of_the_project_read_here():
    """The observer's unrequested changes, get_state's views, the NETCONF frr-state and the fault
    kinds' link state take their documents from opstate (one reader), on the same FakeLab."""
    from ani.adapters.service_tools import _read_state
    from ani.faults.targets import link_state
    from ani.observer.changes import read_kernel

    lab = _lab()
    assert read_kernel(lab, ["r1", "r2"]) == {r: opstate.kernel_addresses(ADDR) for r in ("r1", "r2")}
    assert _read_state(lab, "r1", "interfaces")[1] == {"name": "eth-r2", "state": "DOWN", "up": False,
                                                       "mac": "aa:bb:cc:00:00:01", "addresses": ["100.64.1.1/31"]}
    assert _read_state(lab, "r1", "routes") == ROUTES
    lab.on(["ip", "-j", "link"], rc=1, stderr='Device "eth9" does not exist.\n')
    from ani.errors import FaultError

    with pytest.raises(FaultError, match='r1: ip link show dev eth9 failed: Device "eth9" does not exist.'):
        link_state(lab, "r1", "eth9")
    lab.on(["ip", "-j", "addr"], rc=1, stderr="boom")
    assert read_kernel(lab, ["r1"]) == {}  # a router whose read fails is left out


def test_fake_lab_vtysh_json_appends_json_and_refuses_text():
    lab = _lab()
    assert lab.vtysh_json("r1", "show ip route") == ROUTES
    with pytest.raises(LabError, match="r1: 'show nothing json' \\(exit 1\\) gave no JSON"):
        lab.vtysh_json("r1", "show nothing")


def test_one_diff_of_two_configurations():
    """Every 'what changed between two configurations' counts in ani.device.changes.config_changes;
    the NETCONF datastore's change list is apply.mismatch, not a copy of it."""
    from ani.device import changes
    from ani.device.apply import mismatch
    from ani.device.parse import parse
    from ani.netconf.datastore import _frr_changes
    from ani.observer import changes as observed

    assert observed.config_changes is changes.config_changes
    a = parse("hostname r1\ninterface lo\n description old\nexit\n")
    b = parse("hostname r1\ninterface lo\n description new\nexit\nip route 192.0.2.0/24 Null0\n")
    # removals first, then additions, each in hier-config's order (FRR 8.4's)
    assert changes.config_changes(a, b) == ["- interface lo / description old", "+ ip route 192.0.2.0/24 Null0",
                                            "+ interface lo / description new"]
    assert _frr_changes(a, b) == mismatch(a, b) != []
    assert changes.unified(["x"], ["x"], "n") == ""
    assert changes.unified(["x"], ["y"], "n").splitlines()[:2] == ["--- n (before)", "+++ n (after)"]


#: where operational state may still be read besides ani/device/opstate.py, and why
OTHER_READERS = {
    # A0's change detection reads addresses, routes, rules and sysctls of a router in ONE shell
    # script per call (a0.STATE_PARTS), compared whole: not a reader of one part
    "ani/adapters/a0.py",
}
_SHOW_JSON = __import__("re").compile(r"^show (ip route|bgp|ip ospf)\b.* json$")


def _reads_in(path) -> list[str]:
    """The operational-state commands a module of ani spells out itself (docstrings aside):
    ``show ip route|bgp|ip ospf ... json`` strings (f-strings too) and ``ip -j ...`` argv or text."""
    import ast

    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            text = n.value.strip()
        elif isinstance(n, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "X" for v in n.values).strip()
        elif isinstance(n, (ast.List, ast.Tuple)) and len(n.elts) >= 2 and all(isinstance(e, ast.Constant) for e in n.elts[:2]):
            text = " ".join(str(e.value) for e in n.elts[:2])
        else:
            continue
        if _SHOW_JSON.match(text) or text.startswith("ip -j"):
            found.append(f"{path}:{n.lineno}: {text!r}")
    return found


def test_operational_state_is_read_in_one_place():
    """No module of ani spells out a read of routes, BGP, OSPF or the kernel's interfaces but the
    one reader (and the exceptions named, with why): a new reader of its own fails here."""
    from pathlib import Path

    import ani

    root = Path(ani.__file__).parent
    found = [hit for p in sorted(root.rglob("*.py")) if str(p.relative_to(root.parent)) not in
             {"ani/device/opstate.py", *OTHER_READERS} for hit in _reads_in(p)]
    assert not found, "read operational state through ani.device.opstate:\n" + "\n".join(found)
    assert _reads_in(root / "adapters" / "a0.py"), "a0.py reads no more: drop it from OTHER_READERS"
    assert len(_reads_in(root / "device" / "opstate.py")) >= 7  # the scan sees the reader's own commands
