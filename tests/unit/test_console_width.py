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
    for name in ("ani.cli_doctor", "ani.cli"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    importlib.import_module("ani.cli_doctor")
    from ani.cli import app

    monkeypatch.delenv("COLUMNS")
    res = CliRunner().invoke(app, ["doctor"], env={"COLUMNS": "250"})
    assert "…" not in res.output, res.output  # no cell cut to fit 50 columns


def test_not_a_terminal_prints_whole_tables(monkeypatch, tmp_path):
    """A log file, CI, ``| tee``, ``nohup`` (issue 23 §6): before, rich took 80 columns (or the
    width of a terminal on stdin/stderr) and cut the fault-rate cells, so 0.0 and 0.3 read the
    same; now a console that does not print to a terminal prints each table whole."""
    from rich.table import Table

    from ani.console import NOT_A_TERMINAL_WIDTH, consoles

    monkeypatch.delenv("COLUMNS", raising=False)
    out, _ = consoles()
    assert out.width == NOT_A_TERMINAL_WIDTH  # pytest's stdout is captured: not a terminal
    table = Table("cell", *(f"metric number {i}" for i in range(12)))
    table.add_row("a1 fault_rate=0.3", *("0.123456" for _ in range(12)))
    with open(tmp_path / "log.txt", "w") as fh:
        out.file = fh
        out.print(table)
    text = (tmp_path / "log.txt").read_text()
    assert "…" not in text and "a1 fault_rate=0.3" in text and max(map(len, text.splitlines())) > 150
    monkeypatch.setenv("COLUMNS", "90")  # $COLUMNS still wins
    assert out.width == 90


def test_doctor_under_a_pipe_is_not_cut(monkeypatch):
    from ani.cli import app

    monkeypatch.delenv("COLUMNS", raising=False)
    res = CliRunner().invoke(app, ["doctor"])  # CliRunner's output is not a terminal
    assert "…" not in res.output, res.output
