"""ani.intents models: the union, service ids, schema errors, the exported JSON Schemas."""

from __future__ import annotations

import json

import pytest

from ani.intents import IntentError, PoolExhausted, parse_change, parse_changes, type_schema
from ani.intents.errors import CODES
from ani.intents.export import DEFAULT_DIR, export, schema_texts
from ani.intents.models import CHANGE_CLASSES, SERVICE_TYPES, TenantSiteMove, TenantSiteOnboard


def test_union_is_discriminated_by_type_and_action():
    a = parse_change({"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "bsite3", "edge": "e2"})
    b = parse_change({"type": "tenant-site", "action": "move", "tenant": "blue", "site": "bsite3", "edge": "e3"})
    assert isinstance(a, TenantSiteOnboard) and isinstance(b, TenantSiteMove)
    assert a.service_id() == b.service_id() == "tenant-site/blue/bsite3"
    assert parse_changes([a]) == [a]  # models pass through


@pytest.mark.parametrize(
    ("data", "service_id"),
    [
        ({"type": "tenant-firewall", "action": "apply", "tenant": "red"}, "tenant-firewall/red"),
        ({"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24", "next_hop": "198.51.100.1"},
         "static-route/e1/192.0.2.0/24/198.51.100.1"),
        ({"type": "floating-address", "action": "add", "address": "198.51.100.10/32", "router": "e1"},
         "floating-address/198.51.100.10"),
        ({"type": "bgp-peering", "action": "remove", "router": "e1", "neighbor": "192.0.2.9"}, "bgp-peering/e1/192.0.2.9"),
        ({"type": "prefix-list-entry", "action": "add", "routers": ["e1"], "name": "PL-A", "prefix": "192.0.2.0/24"},
         "prefix-list-entry/PL-A/192.0.2.0/24"),
        ({"type": "prefix-list-entry", "action": "add", "routers": ["e1"], "name": "PL-A", "entry_action": "deny"},
         "prefix-list-entry/PL-A/any"),
        ({"type": "route-map-entry", "action": "add", "routers": ["e1"], "name": "RM-A", "seq": 5}, "route-map-entry/RM-A/5"),
    ],
)
def test_service_ids(data, service_id):
    assert parse_change(data).service_id() == service_id


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ([{"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "x", "edge": "e1", "color": 1}],
         "changes.0.color"),
        ([{"type": "tenant-site", "action": "onboard", "tenant": "blue", "site": "x"}], "changes.0.edge"),
        ([{"type": "tenant-site", "action": "move", "tenant": "blue", "site": "x"}], "changes.0.edge"),
        ([{"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.1/24", "next_hop": "x"}],
         "changes.0.prefix"),
        ([{}, {"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "1.2.3.4", "remote_as": 0}], "changes.0"),
        ([{"type": "route-map-entry", "action": "add", "routers": [], "name": "RM", "seq": 1}], "changes.0.routers"),
    ],
)
def test_schema_errors_name_the_field(data, path):
    with pytest.raises(IntentError) as ei:
        parse_changes(data)
    assert ei.value.code == "schema" and ei.value.path == path


def test_error_types():
    e = PoolExhausted("seq/e1/PL", 3, "changes.0")
    assert isinstance(e, IntentError) and e.to_dict() == {
        "code": "pool-exhausted", "path": "changes.0", "message": "pool seq/e1/PL is exhausted (size 3, all in use)"}
    with pytest.raises(ValueError):
        IntentError("no-such-code", "x")
    assert "pool-exhausted" in CODES


def test_every_change_class_has_a_schema_branch():
    assert sum(len(v) for v in SERVICE_TYPES.values()) == len(CHANGE_CLASSES)
    for t, classes in SERVICE_TYPES.items():
        s = type_schema(t)
        assert s["title"] == t
        text = json.dumps(s)
        for c in classes:
            assert f'"const": "{c.model_fields["action"].default}"' in text
        assert '"additionalProperties": false' in text


def test_exported_schemas_are_current(tmp_path):
    """intents/schemas/ is what `python -m ani.intents.export` writes now (run it after a model change)."""
    texts = schema_texts()
    on_disk = {p.name: p.read_text() for p in DEFAULT_DIR.glob("*.json")}
    assert on_disk == texts, "intents/schemas/ is stale: run `python -m ani.intents.export`"
    export(tmp_path)
    assert {p.name: p.read_text() for p in tmp_path.glob("*.json")} == texts  # stable output


RMAP = {"type": "route-map-entry", "action": "add", "routers": ["e1"], "name": "RM", "seq": 10}
ROUTE = {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24", "next_hop": "Null0"}


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({**ROUTE, "distance": True}, "changes.0.distance"),  # would be distance 1
        ({**ROUTE, "distance": "200"}, "changes.0.distance"),
        ({**ROUTE, "distance": 200.0}, "changes.0.distance"),
        ({**RMAP, "set_local_preference": False}, "changes.0.set_local_preference"),  # would be 0
        ({**RMAP, "seq": True}, "changes.0.seq"),
        ({"type": "bgp-peering", "action": "add", "router": "e1", "neighbor": "192.0.2.9", "remote_as": True},
         "changes.0.remote_as"),
        ({"type": "prefix-list-entry", "action": "add", "routers": ["e1"], "name": "PL", "ge": True}, "changes.0.ge"),
    ],
)
def test_numbers_are_json_integers_not_booleans_or_strings(data, path):
    # as in the source of truth (and RFC 6902's test): true is not 1, "200" is not 200
    with pytest.raises(IntentError) as ei:
        parse_changes([data])
    assert ei.value.code == "schema" and ei.value.path.startswith(path), ei.value.path
    assert parse_change({**ROUTE, "distance": 200}).distance == 200
    assert parse_change({**RMAP, "set_local_preference": 0}).set_local_preference == 0
