"""ani.sot.patch: safe RFC 6902 (issue 4, cases 5, 6, 7)."""

from __future__ import annotations

import copy

import pytest

from ani.sot.errors import PatchError
from ani.sot.patch import apply_patch, json_equal, pointer

DOC = {
    "a": 1,
    "flag": False,
    "bgp": {"neighbors": {"198.51.100.2": {"remote_as": 65001}}},
    "static_routes": {"192.0.2.0/24": {"next_hop": "198.51.100.1", "distance": 1}},
    "list": [10, 20],
    "odd~key": 1,
}


def _fails(ops: list) -> PatchError:
    before = copy.deepcopy(DOC)
    with pytest.raises(PatchError) as e:
        apply_patch(DOC, ops)
    assert DOC == before  # nothing changed
    return e.value


# case 5
@pytest.mark.parametrize(("path", "value"), [("/a", True), ("/flag", 0)])
def test_case5_test_compares_json_types(path: str, value: object) -> None:
    e = _fails([{"op": "test", "path": path, "value": value}])
    assert e.index == 0 and e.path == path and "test failed" in e.message and "boolean" in e.message


def test_test_numbers_and_values() -> None:
    assert apply_patch(DOC, [{"op": "test", "path": "/a", "value": 1.0}]) == DOC  # §4.6: numerically equal
    assert apply_patch(DOC, [{"op": "test", "path": "/flag", "value": False}]) == DOC
    assert json_equal({"x": [1, True]}, {"x": [1.0, True]})
    assert not json_equal({"x": [1, True]}, {"x": [True, 1]})
    assert not json_equal(None, False) and not json_equal("1", 1)


# case 6
def test_case6_missing_parent_named() -> None:
    e = _fails([{"op": "add", "path": "/bgp/neighbors/198.51.100.2/timers/keepalive", "value": 3}])
    assert e.index == 0 and e.op["op"] == "add"
    assert "/bgp/neighbors/198.51.100.2/timers" in e.message and "missing parent" in e.message


@pytest.mark.parametrize(("ops", "words"), [
    ([{"op": "add", "path": "/list/01", "value": 5}], "leading zero"),
    ([{"op": "add", "path": "/odd~2key", "value": 5}], "~"),
    ([{"op": "replace", "path": "/list/7", "value": 5}], "out of range"),
    ([{"op": "add", "path": "/a/b", "value": 5}], "missing parent"),
    ([{"op": "remove", "path": "/nope"}], "does not exist"),
    ([{"op": "move", "from": "/nope", "path": "/x"}], "does not exist"),
    ([{"op": "move", "from": "/bgp", "path": "/bgp/x"}], "own child"),
    ([{"op": "frobnicate", "path": "/a"}], "unknown op"),
    ([{"op": "add", "path": "/a"}], "value"),
    ([{"op": "add", "path": "a", "value": 1}], "start with '/'"),
    (["not an op"], "object"),
    ([{"op": "replace", "path": "/list/-", "value": 1}], "-"),
    ([{"op": "add", "path": "/list/\u00b2", "value": 5}], "must be digits"),  # superscript two: not ASCII
    ([{"op": "replace", "path": "/list/\u0661", "value": 5}], "must be digits"),  # Arabic-Indic one
])
def test_every_failure_is_a_patch_error(ops: list, words: str) -> None:
    assert words in _fails(ops).message


def test_not_a_list() -> None:
    with pytest.raises(PatchError):
        apply_patch(DOC, {"op": "add"})


# case 7
def test_case7_pointer_builder_and_escaped_prefix() -> None:
    path = pointer("static_routes", "192.0.2.0/24", "next_hop")
    assert path == "/static_routes/192.0.2.0~124/next_hop"
    assert pointer("odd~key") == "/odd~0key" and pointer("a~/b") == "/a~0~1b"  # ~ escaped before /
    new = apply_patch(DOC, [{"op": "replace", "path": path, "value": "198.51.100.5"}])
    assert new["static_routes"]["192.0.2.0/24"]["next_hop"] == "198.51.100.5"
    assert DOC["static_routes"]["192.0.2.0/24"]["next_hop"] == "198.51.100.1"
    e = _fails([{"op": "replace", "path": "/static_routes/192.0.2.0/24/next_hop", "value": "x"}])
    assert "~1" in e.message and "192.0.2.0/24" in e.message


def test_case8_logic_second_op_fails() -> None:
    e = _fails([{"op": "add", "path": "/b", "value": 2}, {"op": "test", "path": "/a", "value": 99}])
    assert e.index == 1 and "b" not in DOC


def test_all_ops_work() -> None:
    out = apply_patch(DOC, [
        {"op": "add", "path": "/list/-", "value": 30},
        {"op": "add", "path": "/list/0", "value": 5},
        {"op": "copy", "from": "/a", "path": "/c"},
        {"op": "move", "from": "/c", "path": "/d"},
        {"op": "remove", "path": "/flag"},
        {"op": "add", "path": pointer("bgp", "neighbors", "198.51.100.2", "timers"), "value": {"connect": 5}},
        {"op": "test", "path": "/d", "value": 1},
    ])
    assert out["list"] == [5, 10, 20, 30] and out["d"] == 1 and "c" not in out and "flag" not in out
    assert out["bgp"]["neighbors"]["198.51.100.2"]["timers"] == {"connect": 5}


# -- property: any patch either applies or raises PatchError, and never changes its input ----------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False) | st.text("ab~/", max_size=3),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text("ab~/0", max_size=3), c, max_size=3), max_leaves=8)
_token = st.sampled_from(["a", "b", "0", "1", "01", "-", "~0", "~1", "~2", "~", "", "a~1b", "bgp", "neighbors"])
_path = st.lists(_token, max_size=4).map(lambda t: "".join("/" + x for x in t)) | st.sampled_from(["", "a", "/", "//"])
_op = st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]), "path": _path},
    optional={"value": _json, "from": _path},
) | _json


@settings(derandomize=True, max_examples=400, deadline=None, database=None)
@given(st.dictionaries(st.text("ab~/0", max_size=2), _json, max_size=4), st.lists(_op, max_size=4))
def test_any_patch_applies_or_raises_patch_error(doc: dict, ops: list) -> None:
    before = copy.deepcopy(doc)
    try:
        apply_patch(doc, ops)
    except PatchError as e:
        assert e.index is None or 0 <= e.index < len(ops)
    assert doc == before


def test_deeply_nested_value_is_a_patch_error() -> None:
    # parseable JSON (json.loads takes it) that made deepcopy / json.dumps raise RecursionError
    deep: object = 1
    for _ in range(2000):
        deep = {"a": deep}
    for op in ({"op": "add", "path": "/x", "value": deep}, {"op": "test", "path": "/bgp", "value": [deep]}):
        e = _fails([op])
        assert e.index == 0 and "nested deeper than" in e.message
    shallow: object = 1
    for _ in range(30):
        shallow = {"a": shallow}
    assert apply_patch({}, [{"op": "add", "path": "/x", "value": shallow}]) == {"x": shallow}
    stacked = [{"op": "add", "path": "/x" + "/a" * 30 * k, "value": shallow} for k in range(3)]
    with pytest.raises(PatchError, match="resulting document: nested deeper than 64"):
        apply_patch({}, stacked)
