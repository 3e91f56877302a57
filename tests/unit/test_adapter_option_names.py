"""Adapter option names differ by level (A0 ``timeout_s``, A1 ``command_timeout_s``, ...): each
level refuses a name it does not take, naming its own, and docs/mcp.md's table lists exactly
what each level accepts (issue 5 pass: the doc gave ``--option command_timeout_s=5`` for every
level, and A1/A2 silently ignored an unknown option)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ani.errors import ConfigError
from ani.registry import BUILTINS, get_adapter_class

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def documented() -> dict[str, set[str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### Adapter options per level", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        m = re.match(r"\| `(a\w+)` \| (.*?) \| .* \|$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    out: dict[str, set[str]] = {}
    for level, cell in rows.items():
        # option names are the backticked identifiers not in parentheses (defaults are)
        names = set(re.findall(r"`([a-z_]+)`(?! options)", re.sub(r"\([^)]*\)", "", cell)))
        out[level] = names
    out["a4"] = out["a3r"] | out["a3t"] if rows.get("a4", "").startswith("the `a3r` and `a3t`") else out["a4"]
    return out


def accepted(level: str) -> set[str]:
    """The names a level's refusal of an unknown option lists as known."""
    with pytest.raises(ConfigError) as exc:
        get_adapter_class(level)(None, options={"no_such_option": 1})
    msg = str(exc.value)
    assert "no_such_option" in msg and "known" in msg, msg
    known = msg.rsplit("known", 1)[1]
    return set(re.findall(r"[a-z][a-z_]+", known))


def test_the_doc_table_lists_every_builtin_level():
    assert set(documented()) == set(BUILTINS)


@pytest.mark.parametrize("level", sorted(BUILTINS))
def test_each_level_refuses_an_unknown_option_and_the_doc_lists_its_own(level):
    assert accepted(level) == documented()[level]


@pytest.mark.parametrize(("level", "foreign"), [
    ("a0", "command_timeout_s"), ("a1", "timeout_s"), ("a2", "command_timeout_s"),
    ("a3t", "rpc_timeout_s"), ("a3r", "confirm_timeout_s"), ("a4", "command_timeout_s"),
])
def test_another_levels_option_name_is_refused_not_ignored(level, foreign):
    with pytest.raises(ConfigError, match=foreign):
        get_adapter_class(level)(None, options={foreign: 5})


def test_a_levels_own_option_is_taken():
    assert get_adapter_class("a1")(None, options={"command_timeout_s": 5}).command_timeout_s == 5.0
    assert get_adapter_class("a2")(None, options={"rpc_timeout_s": 7}).rpc_timeout_s == 7.0
    assert get_adapter_class("a0")(None, options={"timeout_s": 3}).timeout_s == 3.0


@pytest.mark.parametrize(("level", "options", "says"), [
    ("a0", {"timeout_s": "5"}, "timeout_s: Input should be a valid number"),
    ("a0", {"timeout_s": -1}, "timeout_s: Input should be greater than 0"),
    ("a0", {"max_output_bytes": True}, "max_output_bytes: Input should be a valid integer"),
    ("a1", {"command_timeout_s": "5"}, "command_timeout_s: Input should be a valid number"),
    ("a1", {"call_timeout_s": 0}, "call_timeout_s: Input should be greater than 0"),
    ("a1", {"max_output_bytes": 0}, "max_output_bytes: Input should be greater than or equal to 1"),
    ("a1", {"platform": "no-such-platform"}, "platform: adapters/no-such-platform.yaml not found"),
    ("a2", {"rpc_timeout_s": False}, "rpc_timeout_s: Input should be a valid number"),
    ("a2", {"connect_timeout_s": 0}, "connect_timeout_s: Input should be greater than 0"),
])
def test_a0_a1_a2_values_are_checked_by_a_strict_model_naming_the_option(level, options, says):
    """A0, A1 and A2 used to coerce values by hand (``float("5")``, ``int(True)``) or not check
    them at all; they parse with the same strict models as A3-T, A3-R and A4 now."""
    with pytest.raises(ConfigError) as exc:
        get_adapter_class(level)(None, options=options)
    assert str(exc.value).startswith(f"{level} options: {says}"), str(exc.value)
    if "platform" not in options:  # the known options are named with the bad one
        assert "known options: " in str(exc.value)
