"""Help text is literal text: the click group class of every ``ani`` typer app.

typer's default ``rich_markup_mode="rich"`` parses every command, argument and option help as
rich markup, so ``[a, b]`` or ``[a-z0-9]{1,12}`` in a help string vanished from ``--help`` (rich
took them for style tags). Mode ``None`` would show them but drops typer's rich help layout
(panels, colours) and its rich usage errors; mode ``"markdown"`` would read ``*``, ``_`` and
backticks. So the mode stays ``"rich"`` and :class:`LiteralHelpGroup` escapes the help strings
of its whole command tree (its own, every sub-command's and sub-group's, every parameter's) once,
when typer builds the click group: help strings carry no markup, brackets show as written.

    app = typer.Typer(cls=LiteralHelpGroup, ...)
"""

from __future__ import annotations

from typing import Any

import click
import typer.core
from rich.markup import escape
from typer.core import TyperGroup

_DONE = "_ani_literal_help"  # set on a command or parameter whose help is escaped already


def literal_help(command: click.Command) -> None:
    """Escape (rich markup) the help, short help and epilog of ``command``, of its parameters and,
    for a group, of every command under it; each object at most once."""
    if getattr(command, _DONE, False):
        return
    setattr(command, _DONE, True)
    for attr in ("help", "short_help", "epilog"):
        _escape_attr(command, attr)
    for param in command.params:
        if not getattr(param, _DONE, False):
            setattr(param, _DONE, True)
            _escape_attr(param, "help")
    for sub in getattr(command, "commands", {}).values():
        literal_help(sub)


def _escape_attr(obj: Any, attr: str) -> None:
    value = getattr(obj, attr, None)
    if isinstance(value, str):
        setattr(obj, attr, escape(value))


class LiteralHelpGroup(TyperGroup):
    """A typer group whose help strings (and those of every command under it) are shown as
    written, not read as rich markup (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # only rich mode reads markup; in plain click help (TYPER_USE_RICH=0) a "\[" would show
        if typer.core.HAS_RICH and self.rich_markup_mode == "rich":
            literal_help(self)
