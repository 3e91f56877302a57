"""``ani mcp ...``: put any MCP-capable agent under test.

    ani mcp serve [--lab ID | --inventory FILE] [--level a1] [--option KEY=VALUE ...]
                  [--blocklist] [--trajectory FILE] [--http [--port N]]

Serves the tools of one adapter (level) acting on a running lab (``ani lab up FILE``), or with
``--inventory`` on the devices of an inventory file (A1 over SSH, A2 over NETCONF:
docs/real-devices.md), over stdio (default; what desktop agents spawn) or streamable HTTP on
``http://127.0.0.1:N/mcp``. The lab is attached, never owned: stopping the server leaves the
lab up. Every message of this
command goes to stderr (stdout is the MCP wire under stdio). ``--blocklist``: the adapter wrapped
in the blocklist ablation, as ``ani run --blocklist`` (a0 and a1 only: the levels whose calls
carry CLI command lines; refused at any other).

Started as a session leader (MCP clients spawn stdio servers with ``setsid``), the server is not
killed by the pseudo-terminals A1's sessions open: the ``ani`` command leaves session leadership
first (:mod:`ani.lab.terminal`).

Stopping: the client closing stdin (stdio), SIGTERM (what MCP clients and supervisors send)
or SIGINT (Ctrl-C) close the adapter (its device sessions end; at most ``CLOSE_BOUND_S`` s) and
exit 0; the lab stays up. A second signal while closing exits at once (130 / 143).

The level: ``--level``, else ``$ANI_LEVEL``; with neither the server refuses to start (an MCP
client spawns a stdio server with the environment of its config entry, not the user's shell, so
``$ANI_LEVEL`` set in a terminal does not reach it: the message says to put ``--level`` in the
args or ``ANI_LEVEL`` in the entry's ``env``).

Exit codes: 0 the client closed the connection (stdio) or the server was stopped by SIGTERM or
SIGINT (either transport),
2 bad input (no such lab, no level or an unknown one, a bad option or option value, --blocklist at
a level it cannot inspect, an HTTP port
that is in use or out of range, a bad inventory file or an unreadable secret, a level that cannot
act on an inventory, both --lab and --inventory) or the ``mcp`` package missing (the message says how to install
it), 1 the adapter could not be opened. Over stdio, a server that cannot start also answers the
client's requests with the reason (:mod:`ani.mcp.refusal`: the client shows it) before exiting.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ani.cli_help import LiteralHelpGroup

from ani.errors import AniError, CapabilityMissing, ConfigError, LabNotFound, LevelError, RegistryError
from ani.validation import yaml_problem

app = typer.Typer(cls=LiteralHelpGroup, no_args_is_help=True, add_completion=False)


def _err(msg: str, code: int) -> typer.Exit:
    print(f"error: {msg}", file=sys.stderr)
    return typer.Exit(code)


#: what to install when the ``mcp`` package is missing (pyproject.toml's requirement)
MCP_REQUIREMENT = "mcp>=1.24,!=2.0.*,!=2.1.*,!=2.2.*,<3"


def _cannot_serve(msg: str, code: int, *, stdio: bool) -> typer.Exit:
    """The error line on stderr; over stdio, when a client may be listening, the same reason
    is also the answer to its requests (:mod:`ani.mcp.refusal`) before the exit ``code``."""
    print(f"error: {msg}", file=sys.stderr, flush=True)
    if stdio:
        from ani.mcp import refusal

        if refusal.client_may_listen():
            refusal.refuse(msg)
    return typer.Exit(code)


#: seconds a signal-stop waits for ``adapter.close()`` before exiting anyway
CLOSE_BOUND_S = 15.0


def stop_on_signals(adapter: Any) -> None:
    """On SIGTERM or SIGINT: close ``adapter`` (bounded by ``CLOSE_BOUND_S``), say so on stderr
    and exit 0, leaving the lab up; a second signal meanwhile exits at once (128 + signal).

    The exit is immediate (``os._exit``): the stdio transport reads stdin in a worker thread
    that a cancellation would wait for until the client writes or closes it, so unwinding the
    event loop could hang; the adapter is closed first, so its sessions end either way.
    """
    import os
    import signal
    import threading

    from ani.host.threads import thread

    stopping = threading.Event()

    def stop(signum: int, _frame: Any) -> None:
        if stopping.is_set():
            os._exit(128 + signum)
        stopping.set()
        name = signal.Signals(signum).name
        print(f"ani mcp: {name}: closing the adapter (the lab stays up)", file=sys.stderr, flush=True)
        closer = thread(_close_quietly, adapter, name="ani-mcp-close")
        closer.start()
        closer.join(CLOSE_BOUND_S)
        if closer.is_alive():
            print(f"ani mcp: the adapter did not close within {CLOSE_BOUND_S:g} s; exiting",
                  file=sys.stderr, flush=True)
        sys.stderr.flush()
        os._exit(0)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)


def _close_quietly(adapter: Any) -> None:
    try:
        adapter.close()
    except Exception as exc:  # noqa: BLE001 - reported; the process is exiting
        print(f"ani mcp: closing the adapter failed: {type(exc).__name__}: {exc}",
              file=sys.stderr, flush=True)


def parse_options(items: list[str]) -> dict[str, Any]:
    """``["command_timeout_s=1", "platform=frr"]`` -> ``{"command_timeout_s": 1, "platform": "frr"}``.

    Values are YAML (numbers, booleans, strings, and flow lists such as
    ``extra_tools=[batch_configure_devices, check_device_status]``). Raises ConfigError naming
    a bad item.
    """
    import yaml

    out: dict[str, Any] = {}
    for item in items:
        key, sep, val = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--option {item!r}: expected KEY=VALUE")
        try:
            out[key] = yaml.safe_load(val) if val.strip() else ""
        except yaml.YAMLError as exc:
            raise ConfigError(f"--option {item!r}: value is not a YAML scalar: {yaml_problem(exc)}") from None
    return out


def open_adapter(lab_id: str | None, level: str | None, options: dict[str, Any],
                 trajectory: Path | None = None, blocklist: bool = False) -> tuple[Any, Any]:
    """(lab, opened adapter) for ``level`` (default ``$ANI_LEVEL``; no default beyond it) on the
    running lab ``lab_id`` (attached, not owned), through :func:`ani.connect.open_on_lab`;
    ``blocklist``: wrapped in the blocklist ablation (the platform's default blocklist).

    Raises LabNotFound, LevelError (no level, or an unknown one), ConfigError (bad input,
    including an option value the adapter cannot use and ``blocklist`` at a level it cannot
    inspect, both before the lab is read), CapabilityMissing (the level cannot work on this
    machine: ``ani doctor``'s checks) or AniError (open failed).
    """
    from ani.connect import attach_running, open_on_lab
    from ani.host.checks import describe_unfit, unfit
    from ani.lab.cli import _pick
    from ani.registry import check_blocklist
    from ani.trajectory import Trajectory

    name = resolve_level(level)
    if blocklist:
        check_blocklist(name)
    bad = unfit([name])  # a level that cannot work on this machine: refused before the lab is read
    if bad:
        raise CapabilityMissing(describe_unfit({name: name}, bad, noun="level"))
    try:
        target = _pick(lab_id, "name one: ani mcp serve --lab ID --level LEVEL")
    except typer.Exit:
        raise LabNotFound("no lab chosen (see the message above); name one with --lab ID") from None
    lab = attach_running(target)  # attached: the server never removes the lab
    try:
        traj = Trajectory(run_id=f"mcp-{target}", level=name, path=trajectory)
    except OSError as exc:
        raise ConfigError(f"--trajectory {trajectory}: cannot write it ({exc.strerror or exc})") from None
    return lab, open_on_lab(lab, name, options, trajectory=traj, check_host=False, blocklist=blocklist)


#: the levels that act on an inventory's devices (A1 over SSH, A2 over NETCONF: docs/real-devices.md)
INVENTORY_LEVELS = ("a1", "a2")


def open_on_inventory(path: Path, level: str | None, options: dict[str, Any],
                      trajectory: Path | None = None, blocklist: bool = False) -> tuple[Any, Any]:
    """(inventory, opened adapter) for ``level`` (default ``$ANI_LEVEL``) acting on the devices
    of the inventory file ``path`` (:meth:`ani.inventory.Inventory.connect`: A1 over SSH, A2
    over NETCONF; every secret read first).

    Raises LevelError (no level, an unknown one), ConfigError (a level other than A1 / A2 and
    their variants, a bad option, ``blocklist`` at a level it cannot inspect), InventoryError (a
    bad file, an unreadable secret), AniError (open failed: a device unreachable, a host key
    that is not the known one).
    """
    from ani.inventory import load_inventory
    from ani.registry import check_blocklist
    from ani.trajectory import Trajectory

    name = resolve_level(level)
    if not name.lower().startswith(INVENTORY_LEVELS):
        raise ConfigError(f"--inventory: level {name} cannot act on an inventory's devices; levels "
                          f"that can: {', '.join(INVENTORY_LEVELS)}")
    if blocklist:
        check_blocklist(name)
    inv = load_inventory(path)
    try:
        traj = Trajectory(run_id=f"mcp-{path.stem}", level=name, path=trajectory)
    except OSError as exc:
        raise ConfigError(f"--trajectory {trajectory}: cannot write it ({exc.strerror or exc})") from None
    return inv, inv.connect(name, trajectory=traj, blocklist=blocklist, **options)


def device_notes(adapter: Any) -> list[str]:
    """What an inventory's devices cannot do at this level (A2: a device whose NETCONF hello
    lacks ``ani-frr`` or a capability its tools use: :meth:`ani.adapters.a2.A2Adapter.support_notes`),
    each printed on stderr (``ani mcp: r1 does not serve ani-frr ...``); [] for a level that
    checks nothing at start."""
    notes = list(getattr(adapter, "support_notes", lambda: [])())
    for n in notes:
        print(f"ani mcp: {n}", file=sys.stderr, flush=True)
    return notes


def resolve_level(level: str | None) -> str:
    """``--level``, else ``$ANI_LEVEL`` (:func:`ani.registry.resolve_name`). Raises LevelError;
    with neither, its message says where a stdio client puts the level (args or ``env``)."""
    import os

    from ani.registry import ENV_VAR, available, resolve_name

    if not (level or os.environ.get(ENV_VAR, "").strip()):
        raise LevelError(
            f"no level: pass --level LEVEL in the server's args, or {ENV_VAR} in its env (an MCP "
            f"client starts a stdio server with its own environment, not yours: put "
            f'"env": {{"{ENV_VAR}": "a1"}} in the server entry); levels: {", ".join(available())}')
    return resolve_name(level)


@app.command("serve")
def serve(
    lab_id: Annotated[str | None, typer.Option("--lab", help="lab id (optional if one lab runs)")] = None,
    inventory: Annotated[Path | None, typer.Option("--inventory", help="act on the devices of this "
                                                   "inventory file instead of a lab (a1, a2; "
                                                   "docs/real-devices.md)")] = None,
    level: Annotated[str | None, typer.Option("--level", help="adapter: a0, a1, a2, a3t, a3r, a4 "
                                              "(default: $ANI_LEVEL)")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", "-o", help="adapter option KEY=VALUE "
                                                     "(repeatable), e.g. command_timeout_s=5")] = None,
    blocklist: Annotated[bool, typer.Option("--blocklist", help="wrap the adapter in the blocklist "
                                            "ablation, as ani run --blocklist (a0, a1)")] = False,
    trajectory: Annotated[Path | None, typer.Option("--trajectory", help="append every call as a "
                                                    "JSON line to this file")] = None,
    http: Annotated[bool, typer.Option("--http", help="streamable HTTP on 127.0.0.1 instead of stdio")] = False,
    port: Annotated[int, typer.Option("--port", help="HTTP port, 0-65535 (0: a free one, printed)")] = 8765,
) -> None:
    """Serve one adapter's tools over MCP (stdio by default)."""
    try:
        import anyio

        from ani.mcp.server import (
            DEFAULT_HOST,
            build_server,
            serve_http,
            serve_stdio,
        )
    except ImportError as exc:
        raise _cannot_serve(
            f"ani mcp serve needs the official MCP SDK, a dependency of ani-sdk that is not "
            f"importable here ({exc}); install it into this environment: "
            f"{Path(sys.executable).name} -m pip install {MCP_REQUIREMENT!r} (or reinstall: pip install -e .)",
            2, stdio=not http) from None

    sock = _listen(http, port)
    adapter, where, nodes, notes = _open(lab_id, inventory, level, option, trajectory, blocklist, sock, http)
    stop_on_signals(adapter)  # SIGTERM / SIGINT: close the adapter, leave the lab, exit 0
    what = f"level {adapter.level}" + (" with the blocklist ablation" if blocklist else "")
    try:
        server = build_server(
            adapter,
            instructions=f"ANI {what} on {where} (routers: {', '.join(nodes)})"
            + "".join(f". {n}" for n in notes),
        )
        if http:
            def ready(url: str) -> None:
                print(f"ani mcp: serving {what} of {where} at {url}",
                      file=sys.stderr, flush=True)

            try:
                anyio.run(lambda: serve_http(server, host=DEFAULT_HOST, port=port, on_ready=ready,
                                             sock=sock))
            except KeyboardInterrupt:
                pass
        else:
            print(f"ani mcp: serving {what} of {where} on stdio", file=sys.stderr, flush=True)
            anyio.run(serve_stdio, server)
    finally:
        adapter.close()


def _listen(http: bool, port: int) -> Any:
    """The HTTP socket, bound before the lab is attached (None for stdio): a port out of range
    or in use is bad input (exit 2), nothing opened."""
    from ani.mcp.server import DEFAULT_HOST, listen_socket

    if not 0 <= port <= 65535:  # one line, like every other bad input (not click's usage box)
        raise _err(f"--port {port}: out of range (0-65535; 0 picks a free port)", 2)
    if not http:
        return None
    try:
        return listen_socket(DEFAULT_HOST, port)
    except OSError as exc:
        raise _err(f"--port {port}: cannot listen on {DEFAULT_HOST}:{port}: "
                   f"{exc.strerror or exc} (pick another port, or 0 for a free one)", 2) from None


def _open(lab_id: str | None, inventory: Path | None, level: str | None, option: list[str] | None,
          trajectory: Path | None, blocklist: bool, sock: Any, http: bool) -> tuple[Any, str, Any, list[str]]:
    """(adapter, where, its nodes, notes) on the inventory's devices or on the lab; a bad
    input exits 2, an adapter that cannot open exits 1 (the socket closed either way)."""
    try:
        options = parse_options(option or [])
        if inventory is not None:
            if lab_id is not None:
                raise ConfigError("--lab and --inventory: give one (a lab, or the devices of an inventory)")
            inv, adapter = open_on_inventory(inventory, level, options, trajectory, blocklist)
            return adapter, f"inventory {inventory}", inv.devices, device_notes(adapter)
        lab, adapter = open_adapter(lab_id, level, options, trajectory, blocklist)
        return adapter, f"lab {lab.id}", lab.routers, []
    except (LabNotFound, RegistryError, ConfigError) as exc:
        if sock is not None:
            sock.close()
        raise _cannot_serve(str(exc), 2, stdio=not http) from None
    except AniError as exc:
        if sock is not None:
            sock.close()
        raise _cannot_serve(f"cannot open the adapter: {exc}", 1, stdio=not http) from None
