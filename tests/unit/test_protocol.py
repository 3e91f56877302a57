"""The protocol types: ToolSpec names and conversions, ToolResult, Level, ErrorCode."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import types as mcp_types
from pydantic import ValidationError

from ani.errors import ErrorCode
from ani.protocol import Adapter, ErrorInfo, Level, ToolResult, ToolSpec

SCHEMA = {
    "type": "object",
    "properties": {
        "device": {"type": "string", "description": "Device name"},
        "commands": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["device"],
    "additionalProperties": False,
}


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["get_topology", "shell", "a", "A-b_9", "x" * 64, "update-config"])
def test_valid_tool_names(name: str) -> None:
    assert ToolSpec(name=name, description="d").name == name


@pytest.mark.parametrize(
    "name", ["", "x" * 65, "has space", "dot.name", "slash/name", "caf\u00e9", "tab\tname", "semi;colon"]
)
def test_invalid_tool_names_are_refused(name: str) -> None:
    with pytest.raises(ValidationError, match="must match"):
        ToolSpec(name=name, description="d")


def test_default_schema_is_an_object() -> None:
    assert ToolSpec(name="t", description="").input_schema == {"type": "object"}


# -- conversions ------------------------------------------------------------------------------


def test_to_openai_shape() -> None:
    spec = ToolSpec(name="shell", description="Run it", input_schema=SCHEMA)
    assert spec.to_openai() == {
        "type": "function",
        "function": {"name": "shell", "description": "Run it", "parameters": SCHEMA},
    }


def test_to_mcp_is_a_real_mcp_tool_with_hints() -> None:
    spec = ToolSpec(name="get_running_config", description="d", input_schema=SCHEMA, read_only=True)
    tool = spec.to_mcp()
    assert isinstance(tool, mcp_types.Tool)
    wire = tool.model_dump(by_alias=True, exclude_none=True)
    assert wire["name"] == "get_running_config"
    assert wire["inputSchema"] == SCHEMA
    assert wire["annotations"] == {"readOnlyHint": True, "destructiveHint": False}


def test_from_mcp_of_a_tool_built_by_mcp_itself() -> None:
    """A Tool parsed from MCP wire JSON (camelCase) converts back with its hints."""
    tool = mcp_types.Tool.model_validate(
        {
            "name": "rollback",
            "description": "undo",
            "inputSchema": SCHEMA,
            "annotations": {"readOnlyHint": False, "destructiveHint": True},
        }
    )
    spec = ToolSpec.from_mcp(tool)
    assert spec == ToolSpec(name="rollback", description="undo", input_schema=SCHEMA, destructive=True)


def test_from_mcp_without_annotations_or_description() -> None:
    tool = mcp_types.Tool(name="t", inputSchema={"type": "object"})
    assert ToolSpec.from_mcp(tool) == ToolSpec(name="t", description="")


# Arbitrary JSON-ish schemas: nested dicts/lists of scalars.
json_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=15,
)
specs = st.builds(
    ToolSpec,
    name=st.from_regex(r"^[a-zA-Z0-9_-]{1,64}$", fullmatch=True),
    description=st.text(max_size=200),
    input_schema=st.dictionaries(st.text(max_size=10), json_values, max_size=5).map(
        lambda d: {**d, "type": "object"}
    ),
    read_only=st.booleans(),
    destructive=st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(specs)
def test_mcp_round_trip_is_lossless(spec: ToolSpec) -> None:
    assert ToolSpec.from_mcp(spec.to_mcp()) == spec
    # and through MCP's own JSON wire form
    wire = json.loads(spec.to_mcp().model_dump_json(by_alias=True, exclude_none=True))
    assert ToolSpec.from_mcp(mcp_types.Tool.model_validate(wire)) == spec


@settings(max_examples=150, deadline=None)
@given(specs)
def test_openai_round_trip_is_lossless_for_what_chat_tools_carry(spec: ToolSpec) -> None:
    """Chat-completions tools have no hint fields: name, description and schema survive
    exactly (also through JSON); read_only/destructive come back as False (documented)."""
    wire = json.loads(json.dumps(spec.to_openai()))
    back = ToolSpec.from_openai(wire)
    assert back == spec.model_copy(update={"read_only": False, "destructive": False})


def test_openai_round_trip_exact_for_hintless_spec() -> None:
    spec = ToolSpec(name="shell", description="Run", input_schema=SCHEMA)
    assert ToolSpec.from_openai(spec.to_openai()) == spec


# -- results ----------------------------------------------------------------------------------


def test_success() -> None:
    r = ToolResult.success("done", {"x": 1}, changed=True)
    assert (r.ok, r.text, r.data, r.error, r.changed) == (True, "done", {"x": 1}, None, True)


def test_failure_defaults() -> None:
    r = ToolResult.failure(ErrorCode.UNKNOWN_DEVICE, "no r9")
    assert r.ok is False
    assert r.error == ErrorInfo(code=ErrorCode.UNKNOWN_DEVICE, message="no r9", retriable=False)
    assert r.text == "error [unknown_device]: no r9"
    assert r.changed is False and r.data is None


def test_failure_with_data_text_and_retriable() -> None:
    r = ToolResult.failure(
        ErrorCode.TIMEOUT, "timeout after 2 s", retriable=True, data={"stdout": "x"}, text="partial", changed=True
    )
    assert r.error is not None and r.error.retriable is True
    assert (r.text, r.data, r.changed) == ("partial", {"stdout": "x"}, True)


def test_result_json_round_trip_keeps_stable_code_string() -> None:
    r = ToolResult.failure(ErrorCode.COMMAND_FAILED, "exit status 3", data={"exit_status": 3})
    wire = json.loads(r.model_dump_json())
    assert wire["error"]["code"] == "command_failed"
    assert ToolResult.model_validate(wire) == r


# -- enums ------------------------------------------------------------------------------------


def test_levels() -> None:
    assert [lv.value for lv in Level] == ["a0", "a1", "a2", "a3t", "a3r", "a4"]
    assert Level("a3t") is Level.A3T


def test_error_codes_are_stable_strings() -> None:
    # agents and campaign statistics key on these strings: renaming one breaks them
    assert {c.name: c.value for c in ErrorCode} == {
        "UNKNOWN_TOOL": "unknown_tool",
        "INVALID_ARGUMENTS": "invalid_arguments",
        "UNKNOWN_DEVICE": "unknown_device",
        "NOT_ALLOWED": "not_allowed",
        "BLOCKED": "blocked",
        "COMMAND_FAILED": "command_failed",
        "ROLLED_BACK": "rolled_back",
        "ROLLBACK_FAILED": "rollback_failed",
        "TIMEOUT": "timeout",
        "UNKNOWN_SNAPSHOT": "unknown_snapshot",
        "DEVICE_UNREACHABLE": "device_unreachable",
        "INTERNAL": "internal",
        "INVALID_INTENT": "invalid_intent",
        "NOT_FOUND": "not_found",
        "CONFLICT": "conflict",
        "RESOURCE_EXHAUSTED": "resource_exhausted",
        "NON_CONVERGENT": "non_convergent",
        "LOCKED": "locked",
        "UNSUPPORTED": "unsupported",
    }


def test_adapter_protocol_is_structural() -> None:
    class Minimal:
        level = Level.A0

        def open(self) -> None: ...
        def close(self) -> None: ...
        def tools(self) -> list[ToolSpec]:
            return []

        def call(self, name, arguments):  # noqa: ANN001
            return ToolResult.success("")

    class MissingCall:
        level = Level.A0

        def open(self) -> None: ...
        def close(self) -> None: ...
        def tools(self) -> list[ToolSpec]:
            return []

    assert isinstance(Minimal(), Adapter)
    assert not isinstance(MissingCall(), Adapter)
