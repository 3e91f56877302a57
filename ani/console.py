"""The rich consoles of the CLI modules (``ani lab``, ``ani run`` / ``ani campaign``, ``ani
scenario``, ``ani tasks``, ``ani doctor``).

    console, err_console = consoles()                                  # stdout, stderr
    console, err_console = consoles(highlight=False, soft_wrap=True)   # Console keywords
    console = FullWidthConsole()                                       # one, e.g. a library default

Their width is looked up each time they print: ``$COLUMNS`` if set, else the terminal's when
they print to a terminal, else :data:`NOT_A_TERMINAL_WIDTH` (a log file, CI, ``| tee``,
``nohup``: a table is printed whole, never cut to 80 columns so that rows such as fault rate 0.0
and 0.3 read the same). rich alone takes the width of any terminal among stdin, stdout and
stderr, else 80, whatever the console writes to.

The width is never frozen when the module is imported: rich's ``Console()`` fixes its width at
construction whenever ``$COLUMNS`` is set at that moment, so a CLI module first imported by a
caller with ``COLUMNS=80`` (an in-process runner such as typer's ``CliRunner(env=...)``) wrapped
every later caller's output at 80: what a command printed depended on who imported it first.
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console, ConsoleDimensions

#: the width of a console that does not print to a terminal (and has no ``$COLUMNS``): wider
#: than any table ani prints, so each is printed at its natural width
NOT_A_TERMINAL_WIDTH = 1000


class FullWidthConsole(Console):
    """A ``rich.console.Console`` that prints at full width when its output is not a terminal
    (module docstring); a ``width=`` given, ``$COLUMNS`` and a terminal are as in rich."""

    @property
    def size(self) -> ConsoleDimensions:
        dims = super().size
        if self._width is None and not self._environ.get("COLUMNS", "").isdigit() and not self.is_terminal:
            return ConsoleDimensions(NOT_A_TERMINAL_WIDTH, dims.height)
        return dims

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


def consoles(**kw: Any) -> tuple[Console, Console]:
    """``(stdout console, stderr console)`` (:class:`FullWidthConsole`) with the same
    ``rich.console.Console`` keywords ``kw``; the width follows ``$COLUMNS`` / the terminal /
    full width at print time (module docstring)."""
    columns = os.environ.pop("COLUMNS", None)  # read at print time instead (rich's size)
    try:
        return FullWidthConsole(**kw), FullWidthConsole(stderr=True, **kw)
    finally:
        if columns is not None:
            os.environ["COLUMNS"] = columns
