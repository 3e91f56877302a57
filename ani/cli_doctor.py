"""``ani doctor``: what this machine has of what the SDK needs, and the fix for what it lacks.

The checks are the host's (:mod:`ani.host.checks`); the command is the CLI layer's, because it
reads topology and scenario files (the FRR daemons they run) above the host.

    ani doctor [--level L]... [--scenario FILE]

Prints one row per check (programs, root and FRR's accounts, kernel features probed in a
throw-away network namespace), then each missing item with its fix and the levels it breaks.
A kernel probe that could not run because of a missing item (root, a program it runs) is
``untested``, not missing: it is named on one ``not tested:`` line, not with a fix of its own.
Exit codes: 0 every level asked for (default: all) can run here, 1 something one of them needs
is missing, 2 bad input (unknown level, bad scenario file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich import box
from ani.console import consoles
from rich.markup import escape
from rich.table import Table

from ani.host.checks import Finding, findings, follows_from
from ani.host.programs import LEVELS

#: the table's section titles
KIND_TITLE = {"program": "programs", "package": "set-up (scripts/setup.sh)",
              "privilege": "privilege, accounts", "account": "privilege, accounts",
              "kernel": "kernel features"}

console, err_console = consoles()


def shipped_daemons() -> set[str]:
    """The FRR daemons the shipped scenarios run (what ``make demo`` needs)."""
    from ani.errors import AniError
    from ani.scenario.manifest import read_topology
    from ani.resources import data_path

    out: set[str] = set()
    try:
        folder = data_path("scenarios")
    except FileNotFoundError:
        return out
    for f in sorted(folder.glob("*.yaml")):
        try:
            out.update(d for r in read_topology(f).routers.values() for d in r.daemons)
        except AniError:
            continue
    return out


def needed_by_text(f: Finding, daemons: set[str]) -> str:
    """The needed-by column: ``every level``, ``a1 a2 a3t a3r a4``, ``topologies using it``."""
    words = set(f.needed_by)
    if words & {"lab", "observer"}:
        return "every level"
    if "daemon" in words:
        return "every level" if Path(f.name).name in daemons else "topologies using it"
    if "setup" in words:
        return "make setup"
    if "faults" in words:  # faults (issue 14)
        return "fault kinds"
    if "test" in words:  # report-html (issue 14): the test suite only
        return "make test"
    return " ".join(lv for lv in LEVELS if lv in words)


def doctor(
    level: Annotated[
        list[str] | None,
        typer.Option("--level", help="only these levels decide the exit code (repeatable; default all)"),
    ] = None,
    scenario: Annotated[
        Path | None,
        typer.Option("--scenario", help="count the FRR daemons of this scenario or topology file "
                     "(default: those of the shipped scenarios)"),
    ] = None,
) -> None:
    """Check every program, kernel feature and privilege the SDK uses; print the fix for each
    missing item and the levels it breaks. Exits 1 if something a level needs is missing."""
    wanted = _wanted_levels(level)
    daemons = _daemons_of(scenario)
    found = findings()
    missing = [f for f in found if not f.ok]
    untested = [f for f in missing if follows_from(f, missing)]  # kept from running by root, ...
    console.print(_findings_table(found, untested, daemons))
    broken = _say_missing(missing, untested, daemons)
    pkgs = sorted({f.package for f in missing if f.package and (f.breaks(daemons) or f.kind == "package")})
    if pkgs:
        console.print(f"fix: apt-get install {' '.join(pkgs)}  (or: sudo make setup)", soft_wrap=True,
                      highlight=False)
    can = [lv for lv in LEVELS if lv not in broken]
    console.print(f"levels that can run here: {', '.join(can) or 'none'}"
                  + (f"; cannot: {', '.join(lv for lv in LEVELS if lv in broken)}" if broken else ""),
                  highlight=False)
    if any(lv in broken for lv in wanted):
        raise typer.Exit(1)


def _wanted_levels(level: list[str] | None) -> list[str]:
    """The levels --level names (default all); an unknown one exits 2 naming the known ones."""
    wanted = [lv.strip().lower() for lv in (level or [])] or list(LEVELS)
    unknown = [lv for lv in wanted if lv not in LEVELS]
    if unknown:
        from ani.registry import unknown_level

        err_console.print(f"[red]error:[/red] --level: {escape(str(unknown_level(unknown[0], LEVELS)))}",
                          soft_wrap=True)
        raise typer.Exit(2)
    return wanted


def _daemons_of(scenario: Path | None) -> set[str]:
    """The FRR daemons of --scenario's routers (a bad file exits 2), else the shipped scenarios'."""
    from ani.errors import AniError

    if scenario is None:
        return shipped_daemons()
    from ani.scenario.manifest import read_topology

    try:
        return {d for r in read_topology(scenario).routers.values() for d in r.daemons}
    except AniError as exc:
        err_console.print(f"[red]error:[/red] --scenario: {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None


def _findings_table(found: list[Finding], untested: list[Finding], daemons: set[str]) -> Table:
    """Every check under its kind's title: ok, untested, MISSING (breaks a level) or missing."""
    table = Table(title="ani doctor: what this machine has of what ani-sdk needs", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False,
                  caption="kernel features are probed in a throw-away network namespace",
                  caption_justify="left")
    table.add_column("check", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("package", no_wrap=True)
    table.add_column("needed by", no_wrap=True)
    kind = None
    for f in found:
        title = KIND_TITLE[f.kind]
        if title != kind:
            table.add_row(f"[bold]{title}[/bold]", "", "", "", "")
        kind = title
        breaks = f.breaks(daemons)
        if f.ok:
            status = "[green]ok[/green]"
        elif f in untested:
            status = "[yellow]untested[/yellow]"
        else:
            status = "[red]MISSING[/red]" if breaks else "[yellow]missing[/yellow]"
        table.add_row(escape(f.name), status, escape(f.package or ""), needed_by_text(f, daemons))
    return table


def _say_missing(missing: list[Finding], untested: list[Finding], daemons: set[str]) -> dict[str, list[Finding]]:
    """One line per missing item (what it breaks, or who needs it), one for the untested ones;
    returns the levels broken, each with what breaks it."""
    broken: dict[str, list[Finding]] = {}
    for f in missing:
        breaks = f.breaks(daemons)
        for lv in breaks:
            broken.setdefault(lv, []).append(f)
        if f in untested:
            continue
        console.print(
            f"[red]missing[/red]: {escape(f.line())}: "
            + (f"breaks {', '.join(breaks)}" if breaks else
               "needed by scripts/setup.sh (make setup) only" if f.kind == "package" else
               "no level needs it (a fault kind is unavailable without it: docs/faults.md)"
               if "faults" in f.needed_by else
               "no level needs it (the test suite only: make test)" if "test" in f.needed_by else
               "no level needs it for the scenarios in question"),
            soft_wrap=True, highlight=False,
        )
    if untested:
        causes = sorted({f.detail.removeprefix("not tested: ") for f in untested})
        console.print(
            f"[yellow]not tested[/yellow]: {escape(', '.join(f.name for f in untested))}: "
            f"{escape('; '.join(causes))}; run ani doctor again after the fix",
            soft_wrap=True, highlight=False,
        )
    return broken
