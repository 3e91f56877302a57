"""``ani lab ...``: the lab command (the CLI layer: it reads topologies, scenario files, NetConfBench
tasks and inventories, so it sits above them all; the helpers of every command that takes a lab,
``_pick`` and ``_fail``, are :mod:`ani.lab.cli`).

    ani lab up FILE [--lab ID] [--prefix P] [--timeout S]   start a detached lab, print its id and
                                                nodes (FILE: a topology, a scenario or a NetConfBench task)
    ani lab status [ID] [--prefix P]            labs (those of prefix P), or one lab's nodes: daemons,
                                                NETCONF and SSH ports
    ani lab exec [--lab ID] NODE -- CMD...      run CMD inside NODE; exits with CMD's status
    ani lab inventory [ID] [--password-env V] [--key]   an inventory (YAML) of the lab's routers
    ani lab down [ID] [--stale] [--all]         remove one lab / labs whose owner is gone / all
    ani lab down --prefix P                     remove the labs of prefix P whose owner is gone

With exactly one lab on the machine, or several of which exactly one is detached, ``ID`` /
``--lab`` may be left out (with several, the lab taken is named on stderr).
Exit codes: 0 ok, 1 the lab failed (start, convergence), 2 bad input (file, id: malformed or in
use, node),
124 ``exec`` timed out; otherwise ``exec`` exits with the command's status.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from rich.markup import escape
from rich.table import Table

from ani.cli_help import LiteralHelpGroup
from ani.errors import AniError
from ani.lab.cli import PREFIX_HELP, _checked_prefix, _fail, _pick, console, err_console

app = typer.Typer(cls=LiteralHelpGroup, no_args_is_help=True, add_completion=False)


def _server(lab, kind, pid: int | None, start: int | None) -> tuple[dict[str, int] | None, dict, str]:  # type: ignore[no-untyped-def]
    """({router: port} or None if the lab runs no such server, its info file, " (server not
    running)" or "") of the lab server ``kind`` (:class:`ani.lab.servers.ServerKind`)."""
    from ani.lab import servers

    info = servers.read_info(kind, lab.dir)
    if pid is None or info is None:
        return None, {}, ""
    running = servers.server_pids(kind, lab.id, lab.dir, pid, start)
    return info.get("ports") or {}, info, "" if running else " [red](server not running)[/red]"


def _netconf_ports(lab) -> tuple[dict[str, int] | None, str | None]:  # type: ignore[no-untyped-def]
    """({router: port} or None if the lab runs no NETCONF server, a caption or None)."""
    from ani.lab import netconf as nc

    st = lab._state
    ports, info, state = _server(lab, nc.KIND, st.netconf_pid if st else None, st.netconf_start if st else None)
    if ports is None:
        return None, None
    return ports, (f"NETCONF over SSH on {info.get('host', nc.HOST)}, user {info['username']}, password"
                   f" in {escape(str(nc.info_path(lab.dir)))} (mode 0600){state}")


def _ssh_ports(lab) -> tuple[dict[str, int] | None, str | None]:  # type: ignore[no-untyped-def]
    """({router: port} or None if the lab runs no SSH server, a caption or None)."""
    from ani.lab import ssh

    st = lab._state
    ports, info, state = _server(lab, ssh.KIND, st.ssh_pid if st else None, st.ssh_start if st else None)
    if ports is None:
        return None, None
    return ports, (f"CLI (vtysh) over SSH on {info.get('host', ssh.HOST)}, user {info['username']}, key "
                   f"{escape(str(info.get('client_key')))}, host keys in {escape(str(lab.known_hosts))}, "
                   f"password in {escape(str(ssh.info_path(lab.dir)))} (mode 0600){state}")


def _node_table(lab) -> Table:  # type: ignore[no-untyped-def]
    from ani.lab import frr

    ports, caption = _netconf_ports(lab)
    sports, scaption = _ssh_ports(lab)
    caption = "\n".join(c for c in (caption, scaption) if c) or None
    label = f"{lab.topology.name}, prefix {lab.prefix}" if lab.prefix else lab.topology.name
    t = Table(title=escape(f"lab {lab.id} ({label})"), title_justify="left",
              caption=caption, caption_justify="left")
    # the management ports in one column, one line per server (netconf, then ssh): narrow enough
    # for an 80-column terminal, so the netns names are never cut
    servers = [name for name, p in (("netconf", ports), ("ssh", sports)) if p is not None]
    cols = ("node", "kind", "netns", "daemons") + (("\n".join(servers),) if servers else ()) + ("interfaces",)
    widest_ns = max((len(lab.netns(n)) for n in lab.topology.nodes), default=5)
    for col in cols:
        t.add_column(col, min_width=widest_ns if col == "netns" else None)
    for n in lab.topology.nodes:
        ifs = []
        for local, remote in lab.topology.links_of(n):
            addr = f" {local.address}" if local.address else ""
            ifs.append(f"{local.ifname}{addr} -> {remote.node}")
        if lab.topology.is_router(n):
            spec = lab.topology.routers[n]
            alive = frr.read_pids(lab.pathspace(n), spec.daemons)
            dstr = " ".join(d if d in alive else f"[red]{d}(down)[/red]" for d in spec.daemons)
            kind = "router"
        else:
            dstr, kind = "-", "host"
        mgmt = [str(p.get(n, "-")) for p in (ports, sports) if p is not None]
        t.add_row(n, kind, lab.netns(n), dstr, *(("\n".join(mgmt),) if mgmt else ()), escape(", ".join(ifs)))
    return t


def _read_kind(file: Path) -> str | None:
    """:func:`ani.lab.topology.other_kind` of ``file`` (None when it cannot be read or parsed:
    :func:`ani.scenario.read_topology` then says why)."""
    from ani.errors import TopologyError
    from ani.lab.topology import load_yaml, other_kind
    from ani.resources import resolve

    try:
        return other_kind(load_yaml(resolve(file)))
    except (TopologyError, FileNotFoundError, OSError):
        return None


def _task_topology(file: Path):  # type: ignore[no-untyped-def]
    """The lab topology of NetConfBench task ``file`` (its routers, links and startup configs,
    in the lab's names: :func:`ani.netconfbench.lab.task_scenario`). The cli layer: it may take
    the task module (the lab module itself never imports it)."""
    from ani.netconfbench.lab import task_scenario
    from ani.netconfbench.task import load_task

    return task_scenario(load_task(file), source=str(file)).topology


@app.command("up")
def up(
    file: Annotated[Path, typer.Argument(help="topology file, scenario file with a 'topology:' key, or a "
                                        "NetConfBench task file (its routers with their startup configs)")],
    lab_id: Annotated[str | None, typer.Option("--lab", help="lab id [a-z0-9]{1,12} (default: random)")] = None,
    prefix: Annotated[str | None, typer.Option("--prefix", help=PREFIX_HELP)] = None,
    old_id: Annotated[str | None, typer.Option("--id", hidden=True, help="(deprecated: --lab)")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="convergence bound, seconds")] = None,
) -> None:
    """Start a detached lab (it stays up after this command) and wait until it has converged.

    Given a NetConfBench task file, the lab is the task's network, for ``ani tasks
    run-testcases FILE --lab ID`` and ``ani tasks final-cfg --lab ID``. Bad input (a file, an
    id that is malformed or in use) exits 2, a lab that fails to start 1."""
    from ani.lab.lab import Lab
    from ani.lab.topology import NCB_TASK
    from ani.scenario.manifest import read_topology

    if old_id is not None:
        if lab_id is not None and lab_id != old_id:
            raise _fail(f"--id {old_id} and --lab {lab_id}: give one (--id is the old name of --lab)", 2)
        err_console.print("warning: --id is deprecated: use --lab", highlight=False)
        lab_id = old_id
    if timeout is not None and not timeout > 0:  # the topology's own bound is validated too
        raise _fail(f"--timeout: the convergence bound must be > 0 seconds, got {timeout:g}", 2)
    lab: Lab | None = None
    task = _read_kind(file) == NCB_TASK
    try:
        topo = _task_topology(file) if task else read_topology(file)
        if timeout is not None:
            topo.convergence.timeout_s = timeout
        t0 = time.monotonic()
        lab = Lab(topo, lab_id=lab_id, detached=True, prefix=prefix)
        lab.up()  # on any exception, Ctrl-C included, up() removes what it had built
    except AniError as exc:
        raise _fail(exc) from None
    except KeyboardInterrupt:
        what = (f"lab {lab.id} was not started (what it had built is removed)" if lab
                else "no lab started")
        err_console.print(f"interrupted: {what}", soft_wrap=True, highlight=False)
        raise typer.Exit(130) from None
    assert lab is not None
    console.print(f"lab [bold]{lab.id}[/bold] up and converged in {time.monotonic() - t0:.1f} s")
    console.print(_node_table(lab))
    if task:
        console.print(f"the task's testcases: ani tasks run-testcases {escape(str(file))} --lab {lab.id}; "
                      f"its configurations: ani tasks final-cfg --lab {lab.id}", soft_wrap=True, highlight=False)
    console.print(f"remove it with: ani lab down {lab.id}", highlight=False)


@app.command("status")
def status(
    lab_id: Annotated[str | None, typer.Argument(help="show this lab's nodes")] = None,
    prefix: Annotated[str | None, typer.Option("--prefix", help="only the labs of this prefix")] = None,
) -> None:
    """List the labs on this machine (their prefix in a column of its own), or the nodes and
    live daemons of one lab."""
    from ani.lab.lab import Lab

    prefix = _checked_prefix(prefix)
    if lab_id:
        if prefix is not None:
            raise _fail("give a lab id or --prefix, not both", 2)
        try:
            console.print(_node_table(Lab.attach(lab_id)))
        except AniError as exc:
            raise _fail(exc) from None
        return
    labs = Lab.list_labs()
    if prefix is not None:
        labs = [e for e in labs if e["prefix"] == prefix]
    if not labs:
        console.print("no labs" if prefix is None else f"no labs of prefix {escape(prefix)}", highlight=False)
        return
    console.print(_labs_table(labs))


def _labs_table(labs: list[dict]) -> Table:  # type: ignore[type-arg]
    """The table of ``ani lab status``: one row per entry of :meth:`Lab.list_labs`."""
    t = Table()
    for col in ("id", "prefix", "name", "status", "owner", "nodes", "daemons alive", "age"):
        t.add_column(col)
    for e in labs:
        if e["detached"]:
            owner = "detached"
        else:
            owner = f"pid {e['owner_pid']}" + ("" if e["alive"] else " [red](gone: stale)[/red]")
        alive = sum(e["daemons"].values())
        age = f"{time.time() - e['created']:.0f} s" if e["created"] else "?"
        t.add_row(e["id"], escape(e["prefix"] or "-"), escape(e["name"]), e["status"], owner,
                  str(len(e["nodes"])), str(alive), age)
    return t


@app.command(
    "exec",
    context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True},
)
def exec_(
    node: Annotated[str, typer.Argument(help="router or host name")],
    cmd: Annotated[list[str], typer.Argument(help="command and its arguments (after --)")],
    lab_id: Annotated[str | None, typer.Option("--lab", help="lab id (optional if one lab runs)")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="bound, seconds")] = 60.0,
) -> None:
    """Run CMD inside NODE (its netns and hostname; on routers plain `vtysh` is that router's)."""
    from ani.lab.lab import Lab

    if "--" in cmd:  # options written after NODE (`exec r1 --lab X -- cmd`) land here
        cut = cmd.index("--")
        pre, cmd = cmd[:cut], cmd[cut + 1 :]
        while pre:
            opt = pre.pop(0)
            key, _, val = opt.partition("=")
            if key in ("--lab", "--timeout") and (val or pre):
                val = val or pre.pop(0)
                if key == "--lab":
                    lab_id = val
                else:
                    try:
                        timeout = float(val)
                    except ValueError:
                        raise _fail(f"--timeout: not a number: {val!r}", 2) from None
            else:
                raise _fail(f"unexpected argument {opt!r} before '--'", 2)
    if not cmd:
        raise _fail("no command given: ani lab exec NODE -- CMD...", 2)
    try:
        lab = Lab.attach(_pick(lab_id, "name one: ani lab exec --lab ID NODE -- CMD"))
        res = lab.exec(node, cmd, timeout=timeout)
    except AniError as exc:
        raise _fail(exc) from None
    except FileNotFoundError as exc:
        raise _fail(f"cannot run {cmd[0]!r}: {exc.strerror}", 1) from None
    typer.echo(res.stdout, nl=False)
    typer.echo(res.stderr, nl=False, err=True)
    if res.timed_out:
        raise _fail(f"{node}: command timed out after {timeout:g} s and was killed", 124)
    raise typer.Exit(res.rc if res.rc >= 0 else 128 - res.rc)


@app.command("inventory")
def inventory(
    lab_id: Annotated[str | None, typer.Argument(help="lab id (optional if one lab runs)")] = None,
    password_env: Annotated[str, typer.Option("--password-env", help="the environment variable the "
                                              "inventory names for the password")] = "ANI_LAB_PASSWORD",
    key: Annotated[bool, typer.Option("--key", help="name the lab's client key file instead (SSH only)")] = False,
) -> None:
    """Print an inventory (YAML, docs/real-devices.md) of the lab's routers: their SSH and NETCONF
    ports, the secret named, never written."""
    from ani.inventory import lab_inventory
    from ani.lab.lab import Lab

    try:
        lab = Lab.attach(_pick(lab_id, "name one: ani lab inventory ID"))
        typer.echo(lab_inventory(lab, password_env=password_env, key=key), nl=False)
    except AniError as exc:
        raise _fail(exc) from None


@app.command("down")
def down(
    lab_id: Annotated[str | None, typer.Argument(help="lab id (optional if one lab runs)")] = None,
    stale: Annotated[bool, typer.Option("--stale", help="remove labs whose owner process is gone")] = False,
    all_: Annotated[bool, typer.Option("--all", help="remove every lab on this machine")] = False,
    prefix: Annotated[str | None, typer.Option("--prefix", help="remove the labs of this prefix whose owner "
                                               "process is gone (never a live one)")] = None,
) -> None:
    """Remove a lab: its namespaces, FRR processes and files."""
    from ani.lab.lab import Lab

    prefix = _checked_prefix(prefix)
    if prefix is not None and (lab_id or all_):
        raise _fail("--prefix removes the labs of a prefix whose owner is gone: give no lab id and no --all", 2)
    try:
        if prefix is not None:
            ids = Lab.down_stale(prefix)
            console.print(f"removed {len(ids)} lab(s) of prefix {escape(prefix)} whose owner is gone"
                          + (f": {', '.join(ids)}" if ids else ""), highlight=False)
            return
        if stale or all_:
            ids = Lab.down_stale()
            if all_:
                for e in Lab.list_labs():
                    Lab.down_id(e["id"])
                    ids.append(e["id"])
            console.print(f"removed {len(ids)} lab(s)" + (f": {', '.join(sorted(ids))}" if ids else ""))
            return
        target = _pick(lab_id, "name one: ani lab down ID")
        Lab.down_id(target)
    except AniError as exc:
        raise _fail(exc) from None
    console.print(f"lab {target} removed")
