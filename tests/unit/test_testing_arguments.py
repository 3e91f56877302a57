"""ani.testing.arguments (bad arguments derived from a schema, the strict-form call) and
ani.testing.device_state.state_difference."""

from __future__ import annotations

import doctest
import itertools
from jsonschema import Draft202012Validator

import ani.testing.arguments as arguments
from ani.testing.arguments import UNKNOWN_ARGUMENT, bad_arguments, with_nulls
from ani.testing.device_state import state_difference

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["device", "commands"], "properties": {
    "device": {"type": "string"},
    "commands": {"type": "array", "items": {"type": "string"}, "minItems": 1},
    "timeout": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None},
    "mode": {"type": "string", "enum": ["a", "b"]},
    "anything": {},
}}


def test_module_doctest() -> None:
    assert doctest.testmod(arguments).failed == 0


def test_each_case_is_refused_by_the_schema_and_differs() -> None:
    valid = {"device": "r1", "commands": ["x"]}
    cases = bad_arguments(SCHEMA, valid)
    check = Draft202012Validator(SCHEMA)
    assert [why for why, _ in cases] == ["not an object", "unknown argument", "without required 'device'",
                                        "without required 'commands'", "'device' of a wrong type",
                                        "'commands' of a wrong type", "'timeout' of a wrong type",
                                        "'mode' of a wrong type"]
    assert all(not check.is_valid(a) for _, a in cases)
    assert dict(cases)["unknown argument"] == {**valid, UNKNOWN_ARGUMENT: 1}
    assert dict(cases)["'timeout' of a wrong type"]["timeout"] == "zz-not-a-valid-value"  # 12345 is a valid timeout
    assert dict(cases)["'mode' of a wrong type"]["mode"] == 12345
    assert all(a.get(k) is not None for _, a in cases if isinstance(a, dict) for k in a)  # null means absent


def test_without_a_sample_and_without_closed_objects() -> None:
    open_schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert [w for w, _ in bad_arguments(open_schema)] == ["not an object", "'n' of a wrong type"]
    # no sample: the base is {}, which already lacks the required property (cases stay distinct)
    cases = bad_arguments(SCHEMA)
    assert len({repr(a) for _, a in cases}) == len(cases)


def test_with_nulls_adds_only_absent_optionals() -> None:
    keys = ["device", "timeout", "mode"]
    for given in itertools.product([None, "v", "absent"], repeat=len(keys)):  # every combination
        args = {k: v for k, v in zip(keys, given, strict=True) if v != "absent"}
        out = with_nulls(SCHEMA, args)
        assert {k: v for k, v in out.items() if k in args} == args
        assert set(out) == set(args) | {"timeout", "mode", "anything"}
        assert all(out[k] is None for k in set(out) - set(args))


def test_state_difference() -> None:
    a = {"r1": {"frr": ("hostname r1", "ip route 1"), "nft": ()}, "r2": {"frr": ("x",)}}
    assert state_difference(a, a) == ""
    b = {"r1": {"frr": ("hostname r1", "ip route 2"), "nft": ()}, "r3": {"frr": ()}}
    text = state_difference(a, b)
    assert "--- r1/frr before\n+++ r1/frr after" in text and "-ip route 1\n+ip route 2" in text
    assert "r2: removed: {'frr': ('x',)}" in text and "r3: added: {'frr': ()}" in text
    assert state_difference(1, 2) == ": 1 -> 2"
    long = state_difference({"r": "a\n" * 3000}, {"r": "b\n" * 3000}, limit=100)
    assert len(long) < 200 and long.endswith("more characters)")
