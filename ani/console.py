"""The rich consoles of the CLI modules (``ani lab``, ``ani run`` / ``ani campaign``, ``ani
scenario``, ``ani tasks``, ``ani doctor``).

    console, err_console = consoles()                                  # stdout, stderr
    console, err_console = consoles(highlight=False, soft_wrap=True)   # Console keywords

Their width is looked up each time they print (``$COLUMNS`` if set, else the terminal's, else
80), never frozen when the module is imported. rich's ``Console()`` fixes its width at
construction whenever ``$COLUMNS`` is set at that moment, so a CLI module first imported by a
caller with ``COLUMNS=80`` (an in-process runner such as typer's ``CliRunner(env=...)``) wrapped
every later caller's output at 80: what a command printed depended on who imported it first.
"""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console


def consoles(**kw: Any) -> tuple[Console, Console]:
    """``(stdout console, stderr console)`` with the same ``rich.console.Console`` keywords
    ``kw``; the width follows ``$COLUMNS`` / the terminal at print time (module docstring)."""
    columns = os.environ.pop("COLUMNS", None)  # read at print time instead (rich's size)
    try:
        return Console(**kw), Console(stderr=True, **kw)
    finally:
        if columns is not None:
            os.environ["COLUMNS"] = columns
