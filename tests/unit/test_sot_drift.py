"""ani.sot.drift: drift on the device model (issue 4 case 3, logic level) and non-convergence (case 4 logic)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings

from ani.device.model import DeviceConfig
from ani.device.parse import parse
from ani.device.render import render
from ani.device.strategies import device_configs
from ani.sot.drift import DriftItem, convergence, drift, is_non_convergent

DATA = Path(__file__).parent.parent / "data" / "device"


def _cfg(**kw: object) -> DeviceConfig:
    base: dict = {"hostname": "r1"}
    base.update(kw)
    return DeviceConfig.model_validate(base)


@settings(derandomize=True, max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(device_configs(firewall=True))
def test_no_drift_against_itself(cfg: DeviceConfig) -> None:
    assert drift(cfg, cfg.canonical()) == []


def test_no_drift_against_parsed_render() -> None:
    cfg = parse((DATA / "frr844-running-c1.txt").read_text())
    assert drift(cfg, parse(render(cfg))) == []


def test_case3_route_map_set_order_and_defaults_are_not_drift() -> None:
    desired = parse("hostname r1\nip route 192.0.2.0/24 198.51.100.1 1\nbgp route-map delay-timer 5\n"
                    "route-map RM permit 10\n set metric 5\n set local-preference 200\n"
                    " set community 65000:2 65000:1\nexit\n")
    actual = parse("hostname r1\nip route 192.0.2.0/24 198.51.100.1\n"
                   "route-map RM permit 10\n set community 65000:1 65000:2\n set local-preference 200\n"
                   " set metric 5\nexit\n")
    assert drift(desired, actual) == []


def test_case3_peer_group_member_remote_as_dropped_is_not_drift() -> None:
    bgp = {"asn": 65000, "peer_groups": {"PG": {"remote_as": 65001}},
           "neighbors": {"198.51.100.2": {"remote_as": 65001, "peer_group": "PG"}}}
    actual = {"asn": 65000, "peer_groups": {"PG": {"remote_as": 65001}},
              "neighbors": {"198.51.100.2": {"peer_group": "PG"}}}
    assert drift(_cfg(bgp=bgp), _cfg(bgp=actual)) == []


def test_real_differences() -> None:
    desired = _cfg(static_routes=[{"prefix": "192.0.2.0/24", "nexthop": "198.51.100.1", "distance": 200}],
                   bgp={"asn": 65000, "neighbors": {"198.51.100.2": {"remote_as": 65001, "timers_connect": 5}}})
    actual = _cfg(static_routes=[{"prefix": "192.0.2.0/24", "nexthop": "198.51.100.1"},
                                 {"prefix": "203.0.113.0/24", "nexthop": "Null0"}],
                  bgp={"asn": 65000, "neighbors": {"198.51.100.2": {"remote_as": 65001, "shutdown": True}}})
    items = {i.pointer: i for i in drift(desired, actual)}
    assert items["/static_routes/192.0.2.0~124/distance"].model_dump() == {
        "pointer": "/static_routes/192.0.2.0~124/distance", "kind": "changed", "desired": 200, "actual": 1}
    assert items["/static_routes/203.0.113.0~124"].kind == "unexpected"
    assert items["/bgp/neighbors/198.51.100.2/timers"].kind == "missing"
    assert items["/bgp/neighbors/198.51.100.2/timers"].desired == {"connect": 5}
    assert items["/bgp/neighbors/198.51.100.2/shutdown"].actual is True
    assert len(items) == 4
    assert drift(_cfg(ip_forwarding=False), _cfg())[0].model_dump() == {
        "pointer": "/ip_forwarding", "kind": "changed", "desired": False, "actual": True}


def _item(p: str, d: object, a: object) -> DriftItem:
    return DriftItem(pointer=p, kind="changed", desired=d, actual=a)


def test_convergence_verdicts() -> None:
    x = [_item("/static_routes/192.0.2.0~124/distance", 200, 1)]
    y = [_item("/bgp/asn", 1, 2)]
    assert convergence([]).status == "retry"
    assert convergence([[]]).status == "converged"
    assert convergence([x, []]).status == "converged"
    assert convergence([x]).status == "retry"
    v = convergence([x, x])  # the same drift came back
    assert v.status == "non-convergent" and "same" in v.reason and v.items == x
    v = convergence([x, [i.inverse() for i in x]], max_tries=5)  # the apply undid itself
    assert v.status == "non-convergent" and "inverse" in v.reason
    assert convergence([x, y], max_tries=3).status == "retry"
    assert convergence([x, y]).status == "non-convergent"  # at most 2 tries
    assert is_non_convergent([x, x]) and not is_non_convergent([x, []])
    missing = DriftItem(pointer="/a", kind="missing", desired=1)
    assert is_non_convergent([[missing], [missing.inverse()]], max_tries=9)
    assert is_non_convergent([[missing.model_dump()], [missing.model_dump()]], max_tries=9)  # plain dicts too
