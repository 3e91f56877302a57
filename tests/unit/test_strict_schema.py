"""The strict form of tool schemas (ani.strict_schema, ToolSpec.to_openai(strict=True)) and the
way back: every built-in tool's strict form passes the strict rules and openai-agents' own strict
check unchanged, a model's strict-form arguments go back to what the adapter takes, and the
adapter reads a null for an optional argument as "not given"."""

from __future__ import annotations

import copy
import json
import types

import jsonschema
import pytest

from ani.adapters.base import BaseAdapter
from ani.protocol import ToolSpec
from ani.registry import BUILTINS, create_adapter
from ani.strict_schema import check_strict_schema, drop_absent_nulls, from_strict, strict_schema


class _Topo:
    routers = ["r1"]
    nodes = ["r1"]
    links: list = []

    def is_router(self, n: str) -> bool:
        return n == "r1"


def builtin_specs() -> list[tuple[str, ToolSpec]]:
    """Every tool of every built-in level (the specs need no lab; A1 with its extra tools)."""
    lab = types.SimpleNamespace(topology=_Topo(), routers=["r1"], id="x", run_dir="/tmp")
    out = []
    for level in BUILTINS:
        opts = {"extra_tools": ["batch_configure_devices", "check_device_status"]} if level == "a1" else {}
        out += [(level, s) for s in create_adapter(level, lab, options=opts).tools()]
    return out


SPECS = builtin_specs()


@pytest.mark.parametrize("level,spec", SPECS, ids=[f"{lv}-{s.name}" for lv, s in SPECS])
def test_every_builtin_tool_has_a_strict_form_openai_agents_accepts(level, spec):
    from agents.strict_schema import ensure_strict_json_schema

    tool = spec.to_openai(strict=True)
    params = tool["function"]["parameters"]
    assert tool["function"]["strict"] is True and tool["function"]["name"] == spec.name
    check_strict_schema(params)
    jsonschema.Draft202012Validator.check_schema(params)
    # openai-agents' strict conversion (what FunctionTool(strict_json_schema=True) runs) keeps it as is
    assert ensure_strict_json_schema(copy.deepcopy(params)) == params
    # the strict form is a view: the spec and its plain form are untouched
    assert spec.to_openai()["function"]["parameters"] == spec.input_schema
    assert "strict" not in spec.to_openai()["function"]


def test_the_five_tools_openai_agents_refused_now_pass_its_check():
    """The tools the issue found refused ("additionalProperties should not be set"): their free-form
    items are JSON text in the strict form."""
    from agents.exceptions import UserError
    from agents.strict_schema import ensure_strict_json_schema

    names = {("a3t", "plan"), ("a3t", "apply"), ("a3r", "sot_patch"), ("a4", "plan"), ("a4", "sot_patch")}
    found = [(lv, s) for lv, s in SPECS if (lv, s.name) in names]
    assert len(found) == 5
    for _, spec in found:
        with pytest.raises(UserError, match="additionalProperties should not be set"):
            ensure_strict_json_schema(copy.deepcopy(spec.input_schema))
        ensure_strict_json_schema(spec.to_openai(strict=True)["function"]["parameters"])


def test_optional_arguments_become_nullable_and_say_their_default():
    spec = next(s for lv, s in SPECS if lv == "a2" and s.name == "get_config")
    p = strict_schema(spec.input_schema)
    assert p["required"] == list(p["properties"]) == ["device", "source", "filter"]
    assert p["properties"]["device"] == {"type": "string", "description": "Device name (a router of the topology)"}
    source = p["properties"]["source"]
    assert source["anyOf"] == [{"type": "string", "enum": ["running", "candidate"]}, {"type": "null"}]
    assert source["description"].endswith('(null: the default, "running")')
    # already nullable (str | None = None): kept as it is, nothing added
    assert p["properties"]["filter"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert "(" not in p["properties"]["filter"]["description"][-12:]


def test_dropped_keywords_are_said_in_the_description():
    schema = {"type": "object", "properties": {
        "message": {"type": "string", "minLength": 1, "maxLength": 80, "description": "Commit message"},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "host": {"type": "string", "format": "hostname"}, "when": {"type": "string", "format": "cron"},
    }, "required": ["message", "tags", "host", "when"], "additionalProperties": False}
    p = strict_schema(schema)["properties"]
    assert p["message"] == {"type": "string", "description": "Commit message (at least 1 characters; at most 80 characters)"}
    assert p["tags"] == {"type": "array", "description": "(items unique)", "items": {"type": "string"}}
    assert p["host"] == {"type": "string", "format": "hostname"}
    assert p["when"] == {"type": "string", "description": '(format: "cron")'}


def test_free_form_values_are_json_text_and_come_back():
    spec = next(s for lv, s in SPECS if lv == "a3t" and s.name == "plan")
    p = strict_schema(spec.input_schema)
    assert p["properties"]["changes"]["items"] == {"type": "string", "description": "(JSON text of an object)"}
    change = {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.1/32", "next_hop": "Null0"}
    sent = {"changes": [json.dumps(change)]}
    jsonschema.validate(sent, p)
    assert spec.arguments_from_strict(sent) == {"changes": [change]}
    # text that is no JSON stays as it is: the adapter refuses it, naming the argument
    assert spec.arguments_from_strict({"changes": ["{not json"]}) == {"changes": ["{not json"]}


def test_from_strict_drops_nulls_of_optionals_only():
    spec = next(s for lv, s in SPECS if lv == "a2" and s.name == "get_config")
    assert spec.arguments_from_strict({"device": "r1", "source": None, "filter": None}) == {"device": "r1", "filter": None}
    # a null for a required argument stays: the adapter refuses it
    assert spec.arguments_from_strict({"device": None}) == {"device": None}
    # arguments in the tool's own form pass unchanged
    assert spec.arguments_from_strict({"device": "r1", "source": "candidate"}) == {"device": "r1", "source": "candidate"}
    assert spec.arguments_from_strict("not an object") == "not an object"


def test_nested_objects_refs_and_unions():
    schema = {
        "type": "object",
        "$defs": {"Hop": {"type": "object", "properties": {"via": {"type": "string"}, "weight": {"type": "integer"}},
                          "required": ["via"], "additionalProperties": False},
                  "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
                           "additionalProperties": False}},
        "properties": {
            "hops": {"type": "array", "items": {"$ref": "#/$defs/Hop"}, "description": "next hops"},
            "tree": {"$ref": "#/$defs/Tree"},
            "mode": {"oneOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "integer"}]},
            "both": {"allOf": [{"type": "object"}, {"required": ["x"]}]},
            "kind": {"enum": ["x", "y"]},
            "anything": {},
        },
        "required": ["hops", "tree", "mode", "both", "kind", "anything"],
        "additionalProperties": False,
    }
    p = strict_schema(schema)
    check_strict_schema(p)
    hop = p["properties"]["hops"]["items"]
    assert hop["required"] == ["via", "weight"] and hop["properties"]["weight"]["anyOf"][1] == {"type": "null"}
    # a recursive ref cannot be inlined: the inner tree is JSON text
    assert p["properties"]["tree"]["properties"]["kids"]["anyOf"][0]["items"]["type"] == "string"
    assert p["properties"]["mode"]["anyOf"] == [{"type": "string", "enum": ["a", "b"]}, {"type": "integer"}]
    assert p["properties"]["both"]["type"] == "string"  # allOf: JSON text
    assert p["properties"]["kind"] == {"type": "string", "enum": ["x", "y"]}
    assert p["properties"]["anything"]["type"] == ["string", "null"]  # any value, null too
    back = from_strict(schema, {"hops": [{"via": "r1", "weight": None}], "tree": {"kids": ['{"kids": []}']},
                                "mode": 3, "both": '{"x": 1}', "kind": "x", "anything": "[1, 2]"})
    assert back == {"hops": [{"via": "r1"}], "tree": {"kids": [{"kids": []}]}, "mode": 3, "both": {"x": 1},
                    "kind": "x", "anything": [1, 2]}


def test_a_root_that_is_not_an_object_is_wrapped():
    p = strict_schema({"type": "array", "items": {"type": "string"}})
    assert p["required"] == ["value"] and p["properties"]["value"]["type"] == "array"
    check_strict_schema(p)
    assert from_strict({"type": "array", "items": {"type": "string"}}, {"value": ["a"]}) == ["a"]


def test_a_root_object_is_closed_and_the_default_schema_means_no_arguments():
    empty = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    assert ToolSpec(name="t", description="d").to_openai(strict=True)["function"]["parameters"] == empty
    assert strict_schema({}) == empty
    p = strict_schema({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    assert p == {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
                 "additionalProperties": False}
    p = strict_schema({"type": "object", "additionalProperties": True})  # any keyword arguments
    assert p["required"] == ["value"] and p["properties"]["value"]["type"] == "string"
    assert from_strict({"type": "object", "additionalProperties": True}, {"value": '{"k": 1}'}) == {"k": 1}


def test_drop_absent_nulls_parses_nothing():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "default": 10},
                                               "changes": {"type": "array", "items": {"type": "object"}}},
              "additionalProperties": False}
    assert drop_absent_nulls(schema, {"n": None, "changes": ['{"a": 1}']}) == {"changes": ['{"a": 1}']}


@pytest.mark.parametrize("schema,path,what", [
    ({"type": "array"}, "$", "the root must be of type 'object'"),
    ({"type": "object", "properties": {}, "additionalProperties": False, "anyOf": []}, "$", "anyOf"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}, "$",
     "every property must be required"),
    ({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}, "required": ["a"],
      "additionalProperties": False}, "$.properties.a", "minLength"),
    ({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}, "required": ["a"],
      "additionalProperties": False}, "$.properties.a.items", "additionalProperties must be false"),
    ({"type": "object", "properties": {}}, "$", "additionalProperties must be false"),
    ({"type": "object", "properties": {"a": {"description": "x"}}, "required": ["a"],
      "additionalProperties": False}, "$.properties.a", "no type"),
])
def test_check_strict_schema_names_the_path(schema, path, what):
    with pytest.raises(ValueError) as exc:
        check_strict_schema(schema)
    assert str(exc.value).startswith(path + ":") and what in str(exc.value)


def test_a_base_adapter_reads_a_null_for_an_optional_argument_as_not_given():
    """What a strict-mode model sends for "not given", through MCP or directly, reaches the same
    dispatch; a null for a required argument is still refused."""
    from test_base_adapter import FakeLab, Recording

    a: BaseAdapter = Recording(FakeLab())
    r = a.call("set_lines", {"device": "r1", "commands": ["x"], "dry_run": None})
    assert r.ok, r.text
    assert a.ran[-1][1].dry_run is False  # the default
    r = a.call("set_lines", {"device": None, "commands": ["x"]})
    assert r.error.code.value == "invalid_arguments" and "device" in r.error.message
    # the trajectory logs what the agent sent
    assert a.trajectory.events[-2]["arguments"]["dry_run"] is None
