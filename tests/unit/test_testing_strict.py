"""ani.testing.strict.strict_problems: the strict chat-completions rules, on hand-written tools and
on schemas pydantic generates for the argument shapes adapters use."""

from __future__ import annotations

import doctest
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

import ani.testing.strict as strict
from ani.testing.strict import MAX_DEPTH, strict_problems


def tool(params: Any, **fn: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": "t", "description": "", "strict": True, "parameters": params, **fn}}


def obj(props: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False, **kw}


def test_module_doctest() -> None:
    assert doctest.testmod(strict).failed == 0


def test_a_strict_tool_has_no_problems() -> None:
    params = obj({
        "device": {"type": "string", "description": "router", "pattern": "^[a-z0-9]+$"},
        "filter": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "n": {"type": ["integer", "null"], "minimum": 1, "maximum": 200},
        "what": {"type": "string", "enum": ["routes", "bgp"]},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Change"}, "minItems": 1},
        "at": {"type": "string", "format": "date-time"},
    }, **{"$defs": {"Change": obj({"op": {"const": "add"}, "path": {"type": "string"}})}})
    assert strict_problems(tool(params)) == []


@pytest.mark.parametrize(("params", "problem"), [
    (obj({"x": {"type": "object", "additionalProperties": True}}),
     "parameters.properties.x: additionalProperties must be false (is True)"),
    ({"type": "object", "properties": {"x": {"type": "string"}}},
     "parameters: additionalProperties must be false (is 'absent')"),
    ({"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "string"}}, "required": ["x"],
      "additionalProperties": False}, "parameters: every property must be required; not required: y"),
    (obj({"x": {"type": "string", "default": "a"}}), "parameters.properties.x: keyword 'default' is not supported"),
    (obj({"x": {"type": "string", "minLength": 1}}), "keyword 'minLength' is not supported"),
    (obj({"x": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}), "keyword 'oneOf' is not supported"),
    (obj({"x": {"allOf": [{"type": "string"}]}}), "keyword 'allOf' is not supported"),
    (obj({"x": {"type": "array"}}), "parameters.properties.x: an array needs one 'items' schema"),
    (obj({"x": {"type": "string", "format": "uri"}}), "format 'uri' is not supported"),
    (obj({"x": {"type": "strng"}}), "type 'strng' is not one of"),
    (obj({"x": {}}), "parameters.properties.x: no type"),
    (obj({"x": {"$ref": "#/$defs/Nope"}}), "$ref '#/$defs/Nope' points nowhere"),
    (obj({"x": {"$ref": "#/$defs/A", "description": "d"}}, **{"$defs": {"A": {"type": "string"}}}),
     "$ref must stand alone (has description beside it)"),
    (obj({"x": {"$ref": "http://example.com/s.json"}}), "must point inside the schema"),
    (obj({"x": {"type": "string", "enum": []}}), "enum must be a non-empty list"),
    ({"anyOf": [obj({})]}, "the root must be of type 'object'"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"], "additionalProperties": False},
     "required names what properties lacks: b"),
])
def test_each_rule(params: dict[str, Any], problem: str) -> None:
    problems = strict_problems(tool(params))
    assert any(problem in p for p in problems), problems
    assert all(p.startswith("t: ") for p in problems)  # each names the tool


def test_the_tool_itself() -> None:
    assert strict_problems({"type": "function", "function": {"name": "t", "parameters": obj({})}}) == [
        "t: function.strict must be true (is None)"]
    assert "function.name must match" in strict_problems(tool(obj({}), name="a b"))[0]
    assert strict_problems({"function": "x"})[0].startswith("not a chat-completions tool")
    assert strict_problems(tool("nope")) == ["t: function.parameters must be a JSON Schema object"]


def test_limits() -> None:
    deep: dict[str, Any] = obj({})
    for _ in range(MAX_DEPTH):
        deep = obj({"x": deep})
    assert any(f"nested {MAX_DEPTH + 1} deep" in p for p in strict_problems(tool(deep)))
    wide = obj({f"p{i}": {"type": "string", "enum": [str(j) for j in range(11)]} for i in range(100)})
    assert any("1100 enum values (at most 1000)" in p for p in strict_problems(tool(wide)))


# -- the argument shapes adapters use, as pydantic writes them --------------------------------


class Change(BaseModel):
    op: Literal["add", "remove"]
    path: str


class Patch(BaseModel):
    path: str = Field(description="file")
    patch: list[Change]


class FreeForm(BaseModel):
    changes: list[dict[str, Any]] = Field(min_length=1)


class Optional_(BaseModel):
    device: str
    filter: str | None = None


def pyd(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    return {"type": "function", "function": {"name": model.__name__.strip("_"), "description": "",
                                             "strict": True, "parameters": schema}}


def test_pydantic_schemas_as_generated_are_not_strict() -> None:
    """What the issue saw: a free-form object item ("additionalProperties should not be set"),
    optionals not required, defaults, minItems of pydantic's min_length is fine."""
    free = strict_problems(pyd(FreeForm))
    assert any("parameters.properties.changes.items: additionalProperties must be false (is True)" in p for p in free), free
    opt = strict_problems(pyd(Optional_))
    assert any("not required: filter" in p for p in opt) and any("'default' is not supported" in p for p in opt), opt
    nested = strict_problems(pyd(Patch))
    assert any("$defs.Change: additionalProperties must be false" in p for p in nested), nested
