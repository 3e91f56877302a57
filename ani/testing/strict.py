"""The strict chat-completions rules for a tool's schema, as one check.

OpenAI's strict function calling (``"strict": true`` on a chat-completions tool; what
openai-agents sends by default) constrains the model's decoding by the tool's JSON Schema, so
it accepts only a subset of JSON Schema and refuses the whole request otherwise (HTTP 400,
e.g. ``additionalProperties should not be set``). The rules, from OpenAI's API guide
"Structured model outputs" (sections "Supported schemas", "Some type-specific keywords are not
yet supported", "Limitations"):

- the root is an object (not ``anyOf``); every object has ``additionalProperties: false`` and
  lists **every** property in ``required`` (an optional argument is written as required and
  nullable: ``anyOf [..., {"type": "null"}]`` or ``"type": [..., "null"]``);
- keywords: ``type`` (string, number, integer, boolean, object, array, null, or a list of them),
  ``properties``, ``required``, ``additionalProperties``, ``items``, ``anyOf``, ``enum``,
  ``const``, ``$ref`` (alone, to ``#/...``), ``$defs`` / ``definitions``, ``description``,
  ``title``; strings: ``pattern``, ``format`` (date-time, time, date, duration, email,
  hostname, ipv4, ipv6, uuid); numbers: ``minimum``, ``maximum``, ``exclusiveMinimum``,
  ``exclusiveMaximum``, ``multipleOf``; arrays: ``minItems``, ``maxItems``. Anything else
  (``default``, ``oneOf``, ``allOf``, ``not``, ``minLength``, ``maxLength``, ``uniqueItems``,
  ``patternProperties``, ...) is refused;
- at most 5000 object properties in all, 10 levels of object nesting, 1000 enum values.

``default`` is the portable rule, not every server's: Azure OpenAI refuses it ("In
context=('properties', 'x'), 'default' is not permitted"), api.openai.com ignores it, and
openai-agents strips it from strict schemas; a strict client sends every argument anyway.

    >>> from ani.testing.strict import strict_problems
    >>> strict_problems({"type": "function", "function": {"name": "f", "description": "",
    ...     "strict": True, "parameters": {"type": "object", "properties": {"n": {"type": "integer"}},
    ...     "required": ["n"], "additionalProperties": False}}})
    []

:func:`strict_problems` checks the form a tool is *sent* in (``ToolSpec.to_openai(strict=True)``),
not the conversion that makes it: it is the conformance suite's judge
(:class:`ani.testing.AdapterConformance`) and can be used on any converter's output.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["FORMATS", "KEYWORDS", "MAX_DEPTH", "MAX_ENUM_VALUES", "MAX_PROPERTIES", "strict_problems"]

#: the schema keywords strict mode accepts
KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const",
    "$ref", "$defs", "definitions", "description", "title",
    "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minItems", "maxItems",
})
#: the string formats strict mode accepts
FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
MAX_PROPERTIES = 5000
MAX_DEPTH = 10
MAX_ENUM_VALUES = 1000
_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def strict_problems(tool: dict[str, Any]) -> list[str]:
    """What keeps a chat-completions tool from being accepted in strict mode ([] = accepted).

    Args:
        tool: ``{"type": "function", "function": {"name", "description", "parameters",
            "strict": true}}`` (what ``ToolSpec.to_openai(strict=True)`` returns).

    Returns:
        One message per problem, each naming the tool and the JSON path in its schema, e.g.
        ``plan: parameters.properties.changes.items: additionalProperties must be false (is True)``.
        Never raises for a malformed tool: that is a problem too.
    """
    fn = tool.get("function") if isinstance(tool, dict) else None
    if not isinstance(fn, dict):
        return [f"not a chat-completions tool (no 'function' object): {str(tool)[:200]}"]
    name = fn.get("name")
    who = name if isinstance(name, str) else "?"
    out: list[str] = []
    if tool.get("type") != "function":
        out.append(f"{who}: type must be 'function' (is {tool.get('type')!r})")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        out.append(f"{who}: function.name must match {_NAME_RE.pattern}")
    if fn.get("strict") is not True:
        out.append(f"{who}: function.strict must be true (is {fn.get('strict')!r})")
    params = fn.get("parameters")
    if not isinstance(params, dict):
        return [*out, f"{who}: function.parameters must be a JSON Schema object"]
    if params.get("type") != "object":
        out.append(f"{who}: parameters: the root must be of type 'object' (is {params.get('type')!r})")
    if "anyOf" in params:
        out.append(f"{who}: parameters: the root must not be anyOf")
    walk = _Walk(params)
    walk.node(params, "parameters", 0)
    out += [f"{who}: {p}" for p in walk.problems]
    if walk.properties > MAX_PROPERTIES:
        out.append(f"{who}: {walk.properties} object properties (at most {MAX_PROPERTIES})")
    if walk.enum_values > MAX_ENUM_VALUES:
        out.append(f"{who}: {walk.enum_values} enum values (at most {MAX_ENUM_VALUES})")
    return out


class _Walk:
    """One pass over a schema, collecting problems and counts."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.problems: list[str] = []
        self.properties = 0
        self.enum_values = 0

    def node(self, s: Any, path: str, depth: int) -> None:
        if not isinstance(s, dict):
            self.problems.append(f"{path}: a schema must be an object (is {type(s).__name__})")
            return
        for k in sorted(set(s) - KEYWORDS):
            self.problems.append(f"{path}: keyword {k!r} is not supported in strict mode")
        if "$ref" in s:
            self._ref(s, path)
        types = self._types(s, path)
        if "object" in types:
            depth += 1
            if depth > MAX_DEPTH:
                self.problems.append(f"{path}: objects nested {depth} deep (at most {MAX_DEPTH})")
            self._object(s, path, depth)
        if "array" in types:
            items = s.get("items")
            if not isinstance(items, dict):
                self.problems.append(f"{path}: an array needs one 'items' schema")
            else:
                self.node(items, f"{path}.items", depth)
        if "format" in s and s["format"] not in FORMATS:
            self.problems.append(f"{path}: format {s['format']!r} is not supported (one of {', '.join(sorted(FORMATS))})")
        if "enum" in s:
            if isinstance(s["enum"], list) and s["enum"]:
                self.enum_values += len(s["enum"])
            else:
                self.problems.append(f"{path}: enum must be a non-empty list")
        any_of = s.get("anyOf")
        if any_of is not None:
            if not isinstance(any_of, list) or not any_of:
                self.problems.append(f"{path}: anyOf must be a non-empty list")
            else:
                for i, sub in enumerate(any_of):
                    self.node(sub, f"{path}.anyOf[{i}]", depth)
        for key in ("$defs", "definitions"):
            defs = s.get(key)
            if defs is None:
                continue
            if not isinstance(defs, dict):
                self.problems.append(f"{path}: {key} must be an object")
                continue
            for dname, sub in defs.items():
                self.node(sub, f"{path}.{key}.{dname}", depth)

    def _types(self, s: dict[str, Any], path: str) -> set[str]:
        t = s.get("type")
        if t is None:
            if not any(k in s for k in ("anyOf", "$ref", "enum", "const")):
                self.problems.append(f"{path}: no type (every schema needs a type, anyOf, enum, const or $ref)")
            return {"object"} if "properties" in s else set()
        names = t if isinstance(t, list) else [t]
        bad = [x for x in names if x not in TYPES]
        if bad or not names:
            self.problems.append(f"{path}: type {t!r} is not one of {', '.join(sorted(TYPES))}")
        return {x for x in names if isinstance(x, str)}

    def _object(self, s: dict[str, Any], path: str, depth: int) -> None:
        if s.get("additionalProperties") is not False:
            self.problems.append(f"{path}: additionalProperties must be false (is {s.get('additionalProperties', 'absent')!r})")
        props = s.get("properties", {})
        if not isinstance(props, dict):
            self.problems.append(f"{path}: properties must be an object")
            return
        self.properties += len(props)
        required = s.get("required", [])
        if not isinstance(required, list):
            self.problems.append(f"{path}: required must be a list")
            required = []
        missing = [p for p in props if p not in required]
        if missing:
            self.problems.append(f"{path}: every property must be required; not required: {', '.join(missing)} "
                                 "(make an optional one nullable instead)")
        extra = [r for r in required if r not in props]
        if extra:
            self.problems.append(f"{path}: required names what properties lacks: {', '.join(map(str, extra))}")
        for pname, sub in props.items():
            self.node(sub, f"{path}.properties.{pname}", depth)

    def _ref(self, s: dict[str, Any], path: str) -> None:
        ref = s["$ref"]
        others = sorted(set(s) - {"$ref"})
        if others:
            self.problems.append(f"{path}: $ref must stand alone (has {', '.join(others)} beside it)")
        if not isinstance(ref, str) or not ref.startswith("#/"):
            self.problems.append(f"{path}: $ref {ref!r} must point inside the schema ('#/...')")
            return
        node: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                self.problems.append(f"{path}: $ref {ref!r} points nowhere")
                return
            node = node[part]
