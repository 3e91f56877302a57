"""The strict form of a tool's JSON Schema, and the way back from arguments in that form.

OpenAI's strict function calling (chat completions and Responses ``"strict": true``; openai-agents'
``FunctionTool(strict_json_schema=True)``, its default) accepts a subset of JSON Schema only
(OpenAI, "Structured Outputs", *Supported schemas*). :func:`strict_schema` turns a tool's
``input_schema`` into that subset without losing what a call may say:

- every object has ``additionalProperties: false`` and lists every property in ``required``;
- a property the tool does not require becomes nullable (``anyOf [<schema>, {"type": "null"}]``,
  unchanged if it already accepts null), and its description says ``null: the default, X`` or
  ``null: omit``: a model sends ``null`` for "not given";
- only the keywords in :data:`KEYWORDS` stay (and ``format`` only with a value of
  :data:`FORMATS`); what a dropped keyword said goes into the description (``default: "running"``,
  ``at least 1 characters``), so the model still reads it, and the tool still enforces it;
- a value the subset cannot describe (a free-form object: no ``properties``, or
  ``additionalProperties`` not false; a schema without a type; ``allOf``, ``not``, ``if``,
  ``patternProperties``, ...; a recursive ``$ref``) becomes a string holding its JSON text,
  described as ``JSON text of an object`` (A3-T's ``changes`` items, A3-R's JSON Patch operations);
- local ``$ref`` are inlined, ``oneOf`` is read as ``anyOf``; the root is a plain, closed object
  (``{"type": "object"}``, the ToolSpec default, is "no arguments").

:func:`from_strict` undoes it on the arguments a model sent: a null for an optional property that
does not itself accept null is dropped (absent, so the tool's default applies), and JSON text where
the tool wants another value is parsed (text that does not parse is left as it is, for the tool to
refuse with its own ``invalid_arguments``). :func:`drop_absent_nulls` does only the first part:
the built-in adapters apply it to every call (:class:`ani.adapters.base.BaseAdapter`), so a client
that sends strict-form nulls, through MCP or directly, gets the same dispatch.

    >>> s = {"type": "object", "properties": {"source": {"type": "string", "default": "running"}},
    ...      "additionalProperties": False}
    >>> strict_schema(s)["properties"]["source"]
    {'anyOf': [{'type': 'string'}, {'type': 'null'}], 'description': '(null: the default, "running")'}
    >>> from_strict(s, {"source": None})
    {}

:func:`check_strict_schema` tells whether a schema is in the strict form (the rules above), naming
the JSON path of the first thing that is not.

## The strict chat-completions rules

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

    >>> from ani.strict_schema import strict_problems
    >>> strict_problems({"type": "function", "function": {"name": "f", "description": "",
    ...     "strict": True, "parameters": {"type": "object", "properties": {"n": {"type": "integer"}},
    ...     "required": ["n"], "additionalProperties": False}}})
    []

:func:`strict_problems` checks the form a tool is *sent* in (``ToolSpec.to_openai(strict=True)``),
not the conversion that makes it: it is the conformance suite's judge
(:class:`ani.testing.AdapterConformance`, which imports it as ``ani.testing.strict_problems``) and
can be used on any converter's output. The rules live here, below ``ani.testing``, because the
strict form above is made by them (docs/architecture.md, "Layers").
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ACCEPTED_KEYWORDS", "FORMATS", "KEYWORDS", "MAX_DEPTH", "MAX_ENUM_VALUES", "MAX_PROPERTIES",
           "check_strict_schema", "drop_absent_nulls", "from_strict", "strict_problems", "strict_schema"]

#: the schema keywords strict mode accepts (the rules above)
ACCEPTED_KEYWORDS = frozenset({
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
#: the keywords the strict form keeps: those strict mode accepts
#: (:data:`ACCEPTED_KEYWORDS`) but titles (dropped) and ``definitions`` (inlined)
KEYWORDS = ACCEPTED_KEYWORDS - {"title", "definitions"}
#: keywords whose meaning the subset cannot carry: a node with one becomes JSON text
_STRUCTURAL = frozenset({
    "allOf", "not", "if", "then", "else", "patternProperties", "dependentSchemas", "dependentRequired",
    "propertyNames", "unevaluatedProperties", "unevaluatedItems", "prefixItems", "contains",
    "dependencies",
})
#: dropped without a word: annotations only
_SILENT = frozenset({"title", "$schema", "$id", "$comment", "examples", "readOnly", "writeOnly",
                     "deprecated", "$anchor", "definitions"})
_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null",
               list: "array", dict: "object"}

Decoder = Callable[[Any], Any]


def _same(v: Any) -> Any:
    return v


@dataclass
class _Node:
    schema: dict[str, Any]
    decode: Decoder  # strict-form value -> the tool's value
    nullable: bool  # the node accepts null


def _accepts_null(schema: Any) -> bool:
    """The (original or strict) schema accepts null."""
    if not isinstance(schema, dict) or not schema:
        return True
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    if None in (schema.get("enum") or []) or ("const" in schema and schema["const"] is None):
        return True
    return any(_accepts_null(b) for b in (schema.get("anyOf") or []) + (schema.get("oneOf") or []))


def _note(key: str, value: Any) -> str:
    if key == "default" and value is None:
        return ""  # a nullable property whose default is null: nothing to say
    if key == "minLength":
        return f"at least {value} characters"
    if key == "maxLength":
        return f"at most {value} characters"
    if key == "uniqueItems":
        return "items unique" if value else ""
    if key == "minProperties":
        return f"at least {value} properties"
    if key == "maxProperties":
        return f"at most {value} properties"
    return f"{key}: {json.dumps(value, sort_keys=True)}"


def _describe(description: str | None, notes: list[str]) -> str | None:
    notes = [n for n in notes if n]
    if not notes:
        return description
    tail = "(" + "; ".join(notes) + ")"
    return f"{description} {tail}" if description else tail


class _Converter:
    def __init__(self, root: dict[str, Any], json_text: bool) -> None:
        self.root = root
        self.json_text = json_text  # build decoders that parse JSON text (False: nulls only)

    # -- pieces --------------------------------------------------------------------------------

    def _text(self, node: Any) -> _Node:
        """``node``'s value as its JSON text."""
        desc = node.get("description") if isinstance(node, dict) else None
        t = node.get("type") if isinstance(node, dict) else None
        what = {"object": "an object", "array": "an array"}.get(t if isinstance(t, str) else "", "a JSON value")
        nullable = _accepts_null(node)

        def decode(v: Any) -> Any:
            if self.json_text and isinstance(v, str):
                try:
                    return json.loads(v)
                except ValueError:
                    return v  # the tool refuses it, naming the argument
            return v

        schema = {"type": ["string", "null"] if nullable else "string",
                  "description": _describe(desc, [f"JSON text of {what}"])}
        return _Node(schema, decode if self.json_text else _same, nullable)

    def _resolve(self, ref: str) -> Any:
        if not ref.startswith("#/"):
            return None
        cur: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(cur, dict) or part not in cur:
                return None
            cur = cur[part]
        return cur

    # -- the walk ------------------------------------------------------------------------------

    def convert(self, node: Any, seen: frozenset[str] = frozenset()) -> _Node:
        if not isinstance(node, dict) or not node:
            return self._text({})
        if "$ref" in node:
            ref = node["$ref"]
            target = self._resolve(ref) if isinstance(ref, str) else None
            if target is None or ref in seen:
                return self._text(node)
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return self.convert(merged, seen | {ref})
        if _STRUCTURAL & node.keys():
            return self._text(node)
        branches = list(node.get("anyOf") or []) + list(node.get("oneOf") or [])
        if branches:
            return self._any_of(node, branches, seen)
        t = node.get("type")
        if t is None:
            if "properties" in node:
                t = "object"
            elif "items" in node:
                t = "array"
            elif "enum" in node or "const" in node:
                vals = node.get("enum") or [node.get("const")]
                kinds = sorted({_JSON_TYPES.get(type(v), "string") for v in vals})
                t = kinds[0] if len(kinds) == 1 else kinds
            else:
                return self._text(node)
        types = t if isinstance(t, list) else [t]
        if "object" in types:
            if len([x for x in types if x != "null"]) > 1:
                return self._text(node)
            return self._object(node, types, seen)
        if "array" in types:
            if len([x for x in types if x != "null"]) > 1:
                return self._text(node)
            return self._array(node, types, seen)
        schema, notes = self._keep(node, {"type": t})
        schema["description"] = _describe(node.get("description"), notes)
        if schema["description"] is None:
            schema.pop("description")
        return _Node(schema, _same, _accepts_null(node))

    def _keep(self, node: dict[str, Any], schema: dict[str, Any],
              skip: frozenset[str] = frozenset()) -> tuple[dict[str, Any], list[str]]:
        """Copy the kept keywords of ``node`` into ``schema``; notes for the dropped ones."""
        notes: list[str] = []
        for k, v in node.items():
            if k in schema or k in skip or k in ("description", "$defs", "anyOf", "oneOf"):
                continue
            if k in ("properties", "required", "additionalProperties", "items"):
                continue  # handled by the caller
            if k == "format" and v not in FORMATS:
                notes.append(_note(k, v))
            elif k in KEYWORDS:
                schema[k] = copy.deepcopy(v)
            elif k not in _SILENT:
                notes.append(_note(k, v))
        return schema, notes

    def _any_of(self, node: dict[str, Any], branches: list[Any], seen: frozenset[str]) -> _Node:
        conv = [self.convert(b, seen) for b in branches]
        schema: dict[str, Any] = {"anyOf": [c.schema for c in conv]}
        _, notes = self._keep(node, {}, skip=frozenset({"type"}))
        desc = _describe(node.get("description"), notes)
        if desc is not None:
            schema["description"] = desc
        real = [c for c in conv if not (c.schema.get("type") == "null")]

        def decode(v: Any) -> Any:
            return v if v is None or len(real) != 1 else real[0].decode(v)

        return _Node(schema, decode, any(c.nullable for c in conv))

    def _array(self, node: dict[str, Any], types: list[str], seen: frozenset[str]) -> _Node:
        items = self.convert(node.get("items", {}), seen)
        schema, notes = self._keep(node, {"type": types[0] if len(types) == 1 else types})
        schema["items"] = items.schema
        desc = _describe(node.get("description"), notes)
        out: dict[str, Any] = {"type": schema.pop("type")}
        if desc is not None:
            out["description"] = desc
        out.update(schema)

        def decode(v: Any) -> Any:
            return [items.decode(x) for x in v] if isinstance(v, list) else v

        return _Node(out, decode, "null" in types)

    def _object(self, node: dict[str, Any], types: list[str], seen: frozenset[str]) -> _Node:
        props = node.get("properties")
        extra = node.get("additionalProperties", False)
        if not isinstance(props, dict) or extra not in (False, None) or (not props and extra is not False):
            return self._text(node)
        required = set(node.get("required") or [])
        out_props: dict[str, Any] = {}
        decoders: dict[str, Decoder] = {}
        absent_if_null: set[str] = set()
        for name, sub in props.items():
            optional = name not in required and not _accepts_null(sub)
            if optional and isinstance(sub, dict) and "default" in sub:  # said once, with the null
                c = self.convert({k: v for k, v in sub.items() if k != "default"}, seen)
                say = ("null: omit" if sub["default"] is None
                       else f"null: the default, {json.dumps(sub['default'], sort_keys=True)}")
            else:
                c = self.convert(sub, seen)
                say = "null: omit"
            s = c.schema
            if optional:
                absent_if_null.add(name)
                inner = {k: v for k, v in s.items() if k != "description"}
                branches = inner["anyOf"] if set(inner) == {"anyOf"} else [inner]
                s = {"anyOf": [*branches, {"type": "null"}], "description": _describe(s.get("description"), [say])}
            out_props[name] = s
            decoders[name] = c.decode
        schema, notes = self._keep(node, {"type": types[0] if len(types) == 1 else types})
        out: dict[str, Any] = {"type": schema.pop("type")}
        desc = _describe(node.get("description"), notes)
        if desc is not None:
            out["description"] = desc
        out.update(schema)
        out.update({"properties": out_props, "required": list(out_props), "additionalProperties": False})

        def decode(v: Any) -> Any:
            if not isinstance(v, dict):
                return v
            res = {}
            for k, x in v.items():
                if k in absent_if_null and x is None:
                    continue
                res[k] = decoders[k](x) if k in decoders else x
            return res

        return _Node(out, decode, "null" in types)

    def root_node(self) -> _Node:
        root = self.root
        plain = (isinstance(root, dict) and root.get("type", "object") == "object" and "$ref" not in root
                 and not (_STRUCTURAL & root.keys()) and not root.get("anyOf") and not root.get("oneOf"))
        if plain and (root.get("properties") or root.get("additionalProperties") in (None, False)):
            # a tool's arguments: an object (``{"type": "object"}`` and ``{}`` = no arguments), closed
            closed = {**root, "type": "object", "properties": root.get("properties") or {},
                      "additionalProperties": False}
            return self._object(closed, ["object"], frozenset())
        node = self.convert(root)
        s = node.schema
        if s.get("type") == "object":
            return node
        # the root must be a plain object: wrap anything else as the one property "value"
        inner = node

        def decode(v: Any) -> Any:
            return inner.decode(v.get("value")) if isinstance(v, dict) else v

        wrapped = {"type": "object", "properties": {"value": s}, "required": ["value"],
                   "additionalProperties": False}
        return _Node(wrapped, decode, False)


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The strict form of ``schema`` (a tool's ``input_schema``), a new dict (see the module doc).

    The root is a closed object: its properties (an open root with properties is closed; no
    properties, ``{"type": "object"}`` or ``{}``, is an empty object: no arguments). A root that
    is no object, or an object that only says "any properties", becomes an object with one
    property ``value`` (its JSON text for the latter).
    """
    return _Converter(schema, json_text=True).root_node().schema


def from_strict(schema: dict[str, Any], arguments: Any) -> Any:
    """The arguments of the tool whose ``input_schema`` is ``schema``, from ``arguments`` a model
    sent against :func:`strict_schema` of it: nulls of optional properties dropped, JSON text
    parsed where the tool wants another value (module doc). A new object; ``arguments`` that are
    not a dict come back as they are."""
    return _Converter(schema, json_text=True).root_node().decode(arguments)


def drop_absent_nulls(schema: dict[str, Any], arguments: Any) -> Any:
    """``arguments`` without the nulls of properties that ``schema`` does not require and that do
    not accept null themselves (a strict-form "not given"), at every level; a new object, or
    ``arguments`` unchanged if it is not a dict. Everything else stays as it is."""
    return _Converter(schema, json_text=False).root_node().decode(arguments)


def check_strict_schema(schema: Any) -> None:
    """Check that ``schema`` is in the strict form: the rules of :func:`strict_problems` (the one
    judge of them, also the conformance suite's) on ``schema`` as a tool's parameters.

    Raises:
        ValueError: naming the JSON path (``$.properties.changes.items``) and what is wrong
            there, every problem, ``; ``-separated.
    """
    tool = {"type": "function", "function": {"name": "tool", "strict": True, "parameters": schema}}
    problems = [p.removeprefix("tool: ") for p in strict_problems(tool)]
    if problems:
        raise ValueError("; ".join("$" + p.removeprefix("parameters").removeprefix("function.parameters")
                                   for p in problems))


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
        for k in sorted(set(s) - ACCEPTED_KEYWORDS):
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
