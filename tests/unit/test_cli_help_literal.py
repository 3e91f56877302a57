"""Every help string of every ``ani`` command shows in ``--help`` as written: typer's rich help
read ``[a, b]`` and ``[a-z0-9]{1,12}`` as markup tags and dropped them (new-user trial:
``ani run --help`` showed "a scalar, , {k: v}", ``ani lab up --help`` "lab id {1,12}").

The help strings are taken from the typer apps' own definitions (command help or docstring,
each shown parameter's help), not from the click objects the CLI renders, then looked up in the
rendered ``--help`` of their command (box characters and line breaks removed)."""

from __future__ import annotations

import inspect
import re

import pytest
import typer
from typer.models import ArgumentInfo, OptionInfo
from typer.testing import CliRunner
from typer.utils import get_params_from_function

from ani.cli import app

BOX = re.compile(r"[│╭╮╰╯─]")


def _command_name(info) -> str:  # noqa: ANN001 - typer's CommandInfo
    return info.name or info.callback.__name__.lower().replace("_", "-")


def _helps(t: typer.Typer, path: tuple[str, ...], own: str | None):
    """(command path, [help strings shown in that command's --help]) of ``t`` and below."""
    yield path, [own or t.info.help or ""]
    for info in t.registered_commands:
        doc = info.help or inspect.getdoc(info.callback) or ""
        strings = [doc.partition("\f")[0]]
        for meta in get_params_from_function(info.callback).values():
            p = meta.default
            if isinstance(p, OptionInfo | ArgumentInfo) and p.help and not p.hidden:
                strings.append(p.help)
        yield path + (_command_name(info),), strings
    for group in t.registered_groups:
        yield from _helps(group.typer_instance, path + (group.name,), group.help)


CASES = [(p, s) for p, strings in _helps(app, (), None) for s in strings if s]


def _flat(text: str) -> str:
    return " ".join(BOX.sub(" ", text).split())


def test_the_walk_sees_every_app_and_the_reported_strings():
    paths = {p for p, _ in CASES}
    assert {("lab", "up"), ("run",), ("campaign", "run"), ("mcp", "serve"), ("tasks", "import"),
            ("scenario", "generate"), ("doctor",)} <= paths
    bracketed = [s for _, s in CASES if "[" in s]
    assert any("[a-z0-9]{1,12}" in s for s in bracketed)
    assert any("[a, b], {k: v}" in s and "[check_device_status]" in s for s in bracketed)


_rendered: dict[tuple[str, ...], str] = {}


def _help_of(path: tuple[str, ...]) -> str:
    if path not in _rendered:
        res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "300"})
        assert res.exit_code == 0, res.output
        _rendered[path] = _flat(res.output)
    return _rendered[path]


@pytest.mark.parametrize(("path", "text"), [c for c in CASES if "[" in c[1]],
                         ids=lambda v: " ".join(v) if isinstance(v, tuple) else v[:40])
def test_a_bracketed_help_string_keeps_its_brackets(path, text):
    assert _flat(text) in _help_of(path)


def test_every_help_string_shows_as_written():
    missing = [(" ".join(p), s) for p, s in CASES if _flat(s) not in _help_of(p)]
    assert not missing
