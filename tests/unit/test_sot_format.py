"""ani.sot.format: the desired-state document of one router."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from ani.device.model import DeviceConfig, StaticRoute
from ani.device.parse import parse
from ani.device.strategies import device_configs
from ani.sot.errors import DocError
from ani.sot.format import dumps, from_doc, schema, to_doc

DATA = Path(__file__).parent.parent / "data" / "device"


@settings(derandomize=True, max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(device_configs(firewall=True))
def test_round_trip(cfg: DeviceConfig) -> None:
    text = dumps(to_doc(cfg))
    back = from_doc(json.loads(text), "r1")
    assert back == cfg.canonical()
    assert dumps(to_doc(back)) == text  # byte-stable


@pytest.mark.parametrize("name", ["frr844-running-c1.txt", "frr844-running-c2.txt", "frr844-running-c3.txt"])
def test_round_trip_parsed(name: str) -> None:
    cfg = parse((DATA / name).read_text())
    text = dumps(to_doc(cfg))
    assert text.endswith("}\n") and "\n  \"" in text
    assert from_doc(json.loads(text)) == cfg


def _cfg() -> DeviceConfig:
    return DeviceConfig(
        hostname="r1",
        static_routes=[StaticRoute(prefix="192.0.2.0/24", nexthop="198.51.100.1"),
                       StaticRoute(prefix="192.0.2.0/24", nexthop="eth1", distance=200)],
        bgp={"asn": 65000, "neighbors": {"198.51.100.2": {"remote_as": 65001, "timers_connect": 5},
                                         "198.51.100.6": {"remote_as": 65002}}},
        prefix_lists={"PL": {"entries": [{"seq": 10, "action": "permit", "prefix": None}]}},
    )


def test_keyed_shape() -> None:
    doc = to_doc(_cfg())
    assert doc["static_routes"] == {"192.0.2.0/24": {"next_hop": "198.51.100.1", "distance": 1,
                                                     "more_next_hops": {"eth1": {"distance": 200}}}}
    assert doc["bgp"]["neighbors"]["198.51.100.2"] == {"remote_as": 65001, "timers": {"connect": 5}}
    assert "timers" not in doc["bgp"]["neighbors"]["198.51.100.6"]
    assert doc["prefix_lists"]["PL"] == {"entries": {"10": {"action": "permit", "prefix": "any"}}}
    assert from_doc(doc, "r1") == _cfg().canonical()


@pytest.mark.parametrize(("mutate", "pointer"), [
    (lambda d: d["bgp"]["neighbors"]["198.51.100.2"].update(remote_as="bogus"), "/bgp/neighbors/198.51.100.2/remote_as"),
    (lambda d: d["bgp"]["neighbors"]["198.51.100.2"]["timers"].update(connect=0), "/bgp/neighbors/198.51.100.2/timers/connect"),
    (lambda d: d["bgp"]["neighbors"]["198.51.100.2"]["timers"].update(hold=3), "/bgp/neighbors/198.51.100.2/timers/hold"),
    (lambda d: d["bgp"]["neighbors"]["198.51.100.2"]["timers"].update(keepalive=1), "/bgp/neighbors/198.51.100.2/timers/holdtime"),
    (lambda d: d["bgp"]["neighbors"]["198.51.100.2"]["timers"].update(keepalive=2, holdtime=3), "/bgp/neighbors/198.51.100.2/timers"),
    (lambda d: d["static_routes"]["192.0.2.0/24"].update(distance=0), "/static_routes/192.0.2.0~124/distance"),
    (lambda d: d["static_routes"]["192.0.2.0/24"].update(distance=True), "/static_routes/192.0.2.0~124/distance"),
    (lambda d: d["static_routes"]["192.0.2.0/24"].update(next_hop="not a hop"), "/static_routes/192.0.2.0~124/next_hop"),
    (lambda d: d["static_routes"].update({"192.0.2.1/24": {"next_hop": "eth0"}}), "/static_routes/192.0.2.1~124"),
    (lambda d: d["prefix_lists"]["PL"]["entries"].update({"010": {"action": "deny"}}), "/prefix_lists/PL/entries/010"),
    (lambda d: d["prefix_lists"]["PL"]["entries"]["10"].update(action="maybe"), "/prefix_lists/PL/entries/10/action"),
    (lambda d: d.update(hostname="r2"), "/hostname"),
    (lambda d: d.update(colour="red"), "/colour"),
    (lambda d: d["bgp"].update(neighbors=[]), "/bgp/neighbors"),
    (lambda d: d["static_routes"]["192.0.2.0/24"].update(distance="200"), "/static_routes/192.0.2.0~124/distance"),
    (lambda d: d["bgp"]["neighbors"]["198.51.100.2"].update(shutdown=1), "/bgp/neighbors/198.51.100.2/shutdown"),
    (lambda d: d["bgp"].update(asn=True), "/bgp/asn"),
    (lambda d: d.update(interfaces={"eth0": {"ospf": {"hello_interval": True}}}), "/interfaces/eth0/ospf/hello_interval"),
    (lambda d: d["bgp"]["neighbors"].update({"peer": {"remote_as": 1}}), "/bgp/neighbors/peer"),
    (lambda d: d["prefix_lists"]["PL"].update(entries={}), "/prefix_lists/PL/entries"),
])
def test_errors_name_the_pointer(mutate, pointer: str) -> None:  # type: ignore[no-untyped-def]
    doc = to_doc(_cfg())
    mutate(doc)
    with pytest.raises(DocError) as e:
        from_doc(doc, "r1")
    assert e.value.pointer == pointer, str(e.value)


def test_cross_reference_error() -> None:
    doc = to_doc(_cfg())
    doc["bgp"]["neighbors"]["198.51.100.2"]["peer_group"] = "NOPE"
    with pytest.raises(DocError) as e:
        from_doc(doc, "r1")
    assert e.value.pointer.startswith("/bgp") and "NOPE" in str(e.value)


@settings(derandomize=True, max_examples=80, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(device_configs(firewall=True))
def test_documents_match_the_json_schema(cfg: DeviceConfig) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.Draft202012Validator(schema()).validate(json.loads(dumps(to_doc(cfg))))


def test_json_schema_refuses_what_from_doc_refuses() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    v = jsonschema.Draft202012Validator(schema())
    jsonschema.Draft202012Validator.check_schema(schema())
    doc = to_doc(_cfg())
    v.validate(doc)
    doc["bgp"]["neighbors"]["198.51.100.2"]["timers"]["hold"] = 3
    assert not v.is_valid(doc)
    doc = to_doc(_cfg())
    doc["bgp"]["neighbors"]["198.51.100.2"]["timers"]["keepalive"] = 1  # without holdtime
    assert not v.is_valid(doc)
    doc = to_doc(_cfg())
    doc["static_routes"]["192.0.2.0/24"]["distance"] = True
    assert not v.is_valid(doc)


# -- property: a mutated document is either valid or refused with DocError (never another error) ----

from hypothesis import strategies as st  # noqa: E402

from ani.sot.patch import PatchError, apply_patch  # noqa: E402

_junk = st.none() | st.booleans() | st.integers(-5, 70000) | st.text(max_size=5) | st.just("10.0.0.1/24") \
    | st.lists(st.integers(0, 3), max_size=2) | st.just({}) | st.just({"x": 1})


def _pointers(v: object, path: str = "") -> list[str]:
    out = [path] if path else []
    if isinstance(v, dict):
        for k, x in v.items():
            out += _pointers(x, path + "/" + k.replace("~", "~0").replace("/", "~1"))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _pointers(x, f"{path}/{i}")
    return out


@settings(derandomize=True, max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(device_configs(firewall=True), st.data())
def test_mutated_documents_raise_only_doc_error(cfg: DeviceConfig, data: st.DataObject) -> None:
    doc = to_doc(cfg)
    target = data.draw(st.sampled_from(_pointers(doc)))
    try:
        mutated = apply_patch(doc, [{"op": "replace", "path": target, "value": data.draw(_junk)}])
    except PatchError:
        return
    try:
        back = from_doc(mutated, "r1")
    except DocError as e:
        assert e.pointer == "" or e.pointer.startswith("/")
        return
    assert dumps(to_doc(back))  # valid: it round-trips
