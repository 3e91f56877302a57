"""The ``ani`` command.

    ani lab up FILE [--lab ID] | status | exec NODE -- CMD... | down [ID] [--stale]
    ani scenario generate MANIFEST --seed N [--density D] [--out FILE] | show FILE | check FILE
    ani scenario export FILE --format containerlab --out DIR   the scenario as a Containerlab lab
    ani campaign run FILE [--resume DIR]
    ani run ...            one task variant at one level (debugging)
    ani mcp serve --lab ID --level a1 [--http --port N]   an adapter's tools over MCP
    ani tasks import FILE|DIR [--into DIR] | export [FILE|DIR ...] --out DIR | show FILE   NetConfBench task files
    ani tasks validate FILE|DIR | final-cfg --lab ID | run-testcases FILE --lab ID   tasks on real labs
    ani adapters           list the registered adapters
    ani doctor             check this machine: programs, kernel features, root; the fix for each gap
    ani --version          ani-sdk X.Y.Z

Process life (:func:`main`, the console script, also ``python -m ani.cli``), before any command:
a process that leads its session (``setsid``, a CI runner) forks so that no pseudo-terminal it
opens can kill it (:mod:`ani.lab.terminal`), and SIGTERM / SIGHUP remove the labs the command
owns before it dies of the signal (:mod:`ani.lab.cleanup`). Whatever else ends the process
(SIGKILL, a crash) is covered by each lab's reaper (:mod:`ani.lab.reaper`).
"""

from __future__ import annotations

import sys
import warnings

import typer

from ani.cli_help import LiteralHelpGroup

from ani.campaign.cli import app as campaign_app
from ani.campaign.cli import run_one
from ani.campaign import harvest as _tasks_harvest  # noqa: F401  (ani tasks harvest: reads results folders)
from ani.cli_doctor import doctor
from ani.cli_lab import app as lab_app
from ani.mcp.cli import app as mcp_app
from ani.netconfbench.cli import app as tasks_app
from ani.netconfbench import cli_lab as _tasks_lab  # noqa: F401  (ani tasks validate / final-cfg / run-testcases)
from ani.scenario.cli import app as scenario_app

app = typer.Typer(cls=LiteralHelpGroup, no_args_is_help=True, add_completion=False, help="ani-sdk: Agent-Network Interface SDK")
app.add_typer(lab_app, name="lab", help="Start, inspect and remove FRR labs in network namespaces.")
app.add_typer(scenario_app, name="scenario", help="Generate brownfield scenarios from manifests; summarise, check and export scenario files.")
app.add_typer(campaign_app, name="campaign", help="Run benchmark campaigns.")
app.add_typer(mcp_app, name="mcp", help="Serve an adapter's tools to any MCP client (stdio or HTTP).")
app.add_typer(tasks_app, name="tasks", help="Import, export and show NetConfBench task files.")
app.command("run", help="Run one task variant at one level and print the trajectory.")(run_one)
app.command("doctor", help="Check that this machine has what every level needs; print the fix for each gap.")(doctor)


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    # a warning for the user (e.g. an unreadable runs.jsonl line) is one line, not Python's
    # "<file>:<line>: UserWarning: ..." followed by the source line that raised it
    print(f"warning: {message}", file=file if file is not None else sys.stderr)


def _version(value: bool) -> None:
    if value:
        from ani import __version__

        typer.echo(f"ani-sdk {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                 help="print the version (ani-sdk X.Y.Z) and exit"),
) -> None:
    warnings.showwarning = _warning_line


@app.command("adapters")
def adapters() -> None:
    """List the registered adapters (built-ins and entry point group ani.adapters)."""
    from ani.registry import available

    for name, target in available().items():
        typer.echo(f"{name:10s} {target}")


def main() -> None:
    """The ``ani`` command: :data:`app` after the process-life steps of the module doc."""
    from ani.lab.cleanup import install_signal_handlers
    from ani.lab.terminal import leave_session_leadership

    leave_session_leadership()  # first: before any thread or session exists
    install_signal_handlers()
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
