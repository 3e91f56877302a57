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

#: the command groups, ``name -> (module, attribute, help)``: a group's module is imported only
#: when the group is used (``ani mcp serve`` does not load the campaign, scenario and doctor
#: modules: about 0.1 s of CPU to start instead of about 0.5 s), or for the whole :data:`app`
GROUPS: dict[str, tuple[str, str, str]] = {
    "lab": ("ani.cli_lab", "app", "Start, inspect and remove FRR labs in network namespaces."),
    "scenario": ("ani.scenario.cli", "app",
                 "Generate brownfield scenarios from manifests; summarise, check and export scenario files."),
    "campaign": ("ani.campaign.cli", "app", "Run benchmark campaigns."),
    "mcp": ("ani.mcp.cli", "app", "Serve an adapter's tools to any MCP client (stdio or HTTP)."),
    "tasks": ("ani.netconfbench.cli", "app", "Import, export and show NetConfBench task files."),
}
#: modules that add commands to a group's app when imported (``ani tasks harvest`` reads results
#: folders; ``ani tasks validate / final-cfg / run-testcases`` run tasks on real labs)
GROUP_EXTRAS: dict[str, tuple[str, ...]] = {"tasks": ("ani.campaign.harvest", "ani.netconfbench.cli_lab")}
#: the top-level commands defined in other modules, ``name -> (module, attribute, help)``
COMMANDS: dict[str, tuple[str, str, str]] = {
    "run": ("ani.campaign.cli", "run_one", "Run one task variant at one level and print the trajectory."),
    "doctor": ("ani.cli_doctor", "doctor",
               "Check that this machine has what every level needs; print the fix for each gap."),
}


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ANN001
    # a warning for the user (e.g. an unreadable runs.jsonl line) is one line, not Python's
    # "<file>:<line>: UserWarning: ..." followed by the source line that raised it
    print(f"warning: {message}", file=file if file is not None else sys.stderr)


def _version(value: bool) -> None:
    if value:
        from ani import __version__

        typer.echo(f"ani-sdk {__version__}")
        raise typer.Exit(0)


def _main(
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                 help="print the version (ani-sdk X.Y.Z) and exit"),
) -> None:
    warnings.showwarning = _warning_line


def adapters() -> None:
    """List the registered adapters (built-ins and entry point group ani.adapters)."""
    from ani.registry import available

    for name, target in available().items():
        typer.echo(f"{name:10s} {target}")


def make_app(only: str | None = None) -> typer.Typer:
    """The ``ani`` app: every group and command, or (``only``, a name of :data:`GROUPS` or
    :data:`COMMANDS`) just that one beside ``adapters``, so a command imports only its own
    modules. Raises ImportError when a group's module cannot be imported."""
    import importlib

    new = typer.Typer(cls=LiteralHelpGroup, no_args_is_help=True, add_completion=False,
                      help="ani-sdk: Agent-Network Interface SDK")
    new.callback()(_main)
    for name, (module, attr, help_text) in GROUPS.items():
        if only in (None, name):
            for extra in GROUP_EXTRAS.get(name, ()):
                importlib.import_module(extra)
            new.add_typer(getattr(importlib.import_module(module), attr), name=name, help=help_text)
    for name, (module, attr, help_text) in COMMANDS.items():
        if only in (None, name):
            new.command(name, help=help_text)(getattr(importlib.import_module(module), attr))
    new.command("adapters")(adapters)
    return new


def __getattr__(name: str) -> typer.Typer:
    """``ani.cli.app``: the whole app (every group), made on first use."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    global app
    app = make_app()
    return app


def main() -> None:
    """The ``ani`` command: :func:`make_app` of the command named (the whole app for ``--help``,
    ``--version`` or an unknown name) after the process-life steps of the module doc."""
    from ani.lab.cleanup import install_signal_handlers
    from ani.lab.terminal import leave_session_leadership

    leave_session_leadership()  # first: before any thread or session exists
    install_signal_handlers()
    first = sys.argv[1] if len(sys.argv) > 1 else None
    make_app(first if first in GROUPS or first in COMMANDS else None)()


if __name__ == "__main__":  # pragma: no cover
    main()
