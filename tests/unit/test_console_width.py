"""The CLI consoles' width follows ``$COLUMNS`` when they print, not when their module was
imported (ani/console.py): under pytest-xdist a CLI module first imported inside
``CliRunner(env={"COLUMNS": "80"})`` had frozen every later command's output at 80 columns."""

from __future__ import annotations

import importlib
import sys

from typer.testing import CliRunner


def test_the_width_is_read_at_print_time(monkeypatch):
    from ani.console import consoles

    monkeypatch.setenv("COLUMNS", "40")
    out, err = consoles()
    assert out.width == 40 and err.width == 40 and err.stderr
    monkeypatch.setenv("COLUMNS", "300")
    assert out.width == 300 and err.width == 300
    import os

    assert os.environ["COLUMNS"] == "300"  # consoles() gives $COLUMNS back


def test_a_cli_module_imported_under_a_narrow_columns_prints_wide_later(monkeypatch):
    monkeypatch.setenv("COLUMNS", "50")
    for name in ("ani.host.cli", "ani.cli"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    importlib.import_module("ani.host.cli")
    from ani.cli import app

    monkeypatch.delenv("COLUMNS")
    res = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "250"})
    assert "…" not in res.output, res.output  # no cell cut to fit 50 columns
