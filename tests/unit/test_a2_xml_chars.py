"""Every A2 tool argument ends up in an RPC's XML, so text XML 1.0 cannot carry (C0 controls but
tab/LF/CR, lone surrogates, U+FFFE/U+FFFF) is the agent's ``invalid_arguments``, naming the
argument and the character's position, refused before anything is sent: never ``internal`` (a
harness fault the campaign runner turns into ``infra_error``; issue 23 §1, the probes
``get_schema identifier="ani-frr\\x00"``, ``version="\\ud800"``, ``get_config filter="\\ud800"``)."""

from __future__ import annotations

import sys
import typing
from pathlib import Path

import pytest

from ani.adapters.a2_args import A2Args, check_xml_chars
from ani.errors import ErrorCode
from ani.netconf.errors import non_xml_char

sys.path.insert(0, str(Path(__file__).parent))
from test_a2_reply import FakeManager, make  # noqa: E402, I001

BAD = {"NUL": "\x00", "ESC": "\x1b", "surrogate": "\ud800", "U+FFFE": "\ufffe"}
#: a valid value of each required argument an A2 tool has
REQUIRED = {"device": "r1", "devices": ["r1"], "config": '<frr xmlns="urn:ani:yang:ani-frr"/>'}


def _takes_text(annotation) -> str | None:
    """``"str"`` / ``"list"`` when the argument holds free text / a list of it, else None."""
    args = (annotation,) if typing.get_origin(annotation) is list else typing.get_args(annotation) or (annotation,)
    if any(typing.get_origin(a) is list for a in args):
        return "list"
    return "str" if str in args else None


def _text_arguments():
    a = make(FakeManager())
    for spec in a.tools():
        model = a._tools[spec.name][0]["args"]
        for field, info in model.model_fields.items():
            kind = _takes_text(info.annotation)
            if kind:
                yield spec.name, model, field, kind


CASES = list(_text_arguments())


def test_every_text_argument_of_every_a2_tool_is_walked():
    walked = {(tool, field) for tool, _, field, _ in CASES}
    assert ("get_schema", "identifier") in walked and ("get_schema", "version") in walked
    assert ("get_config", "filter") in walked and ("get_state", "filter") in walked
    assert ("edit_config", "config") in walked and ("commit", "devices") in walked
    assert {tool for tool, _ in walked} >= {"get_config", "get_state", "get_schema", "compare",
                                            "edit_config", "validate", "discard_changes", "lock",
                                            "unlock", "commit", "confirm_commit", "cancel_commit"}


@pytest.mark.parametrize("char", list(BAD.values()), ids=list(BAD))
@pytest.mark.parametrize("tool,model,field,kind", CASES, ids=[f"{c[0]}.{c[2]}" for c in CASES])
def test_non_xml_text_is_invalid_arguments_naming_where_and_nothing_is_sent(tool, model, field, kind, char):
    m = FakeManager()
    a = make(m)
    args = {k: v for k, v in REQUIRED.items() if k in model.model_fields}
    long_value = "x" * 5000 + char + "y"
    args[field] = ["r1", long_value] if kind == "list" else long_value
    res = a.call(tool, args)
    assert not res.ok and res.error.code != ErrorCode.INTERNAL, res
    assert m.calls == []  # nothing reached the device
    if issubclass(model, A2Args):  # every tool but the SDK's own get_topology, which sends no XML
        assert res.error.code == ErrorCode.INVALID_ARGUMENTS
        msg = res.error.message
        assert f"{tool}: {field}" in msg or f"arguments.{field}" in msg, msg
        assert f"position 5000 is U+{ord(char):04X}" in msg
        assert ("entry 1: " in msg) == (kind == "list")
        assert len(msg) < 300 and "xxxxxxxxxx" not in msg  # the value is never echoed


def test_allowed_whitespace_and_other_text_pass():
    text = "a\tb\nc\rd é \u2028 \U0001f600 \ufffd"
    assert non_xml_char(text) is None and check_xml_chars(text) == text
    assert check_xml_chars(["r1", text]) == ["r1", text] and check_xml_chars(None) is None
    assert non_xml_char("ab\x7f\x0b") == (3, "U+000B (a control character)")
    assert non_xml_char("\udc00") == (0, "U+DC00 (a lone surrogate)")
    assert non_xml_char("\uffff") == (0, "U+FFFF (a noncharacter)")
