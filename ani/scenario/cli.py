"""``ani scenario ...`` (owned by the scenario package).

    ani scenario generate MANIFEST --seed N [--density D] [--out FILE]   write a scenario file, print its hash
    ani scenario show FILE                                           summarise a scenario file
    ani scenario check FILE [--lab ID] [--bound S]                   a running lab against FILE's baseline invariants
    ani scenario export FILE --format containerlab --out DIR         the scenario as a Containerlab lab

``generate`` writes ``<manifest name>-s<seed>-d<density>.yaml`` in the current directory unless
``--out`` names a file (``--out -``: stdout, the hash then goes to stderr; ``-o`` / ``--output``,
the old names, still work with a warning). ``--seed`` defaults to the
manifest's ``seed``. Exit codes: 0 ok, 1 ``check``: an invariant fails, 2 bad input (manifest, file, option, lab,
an export folder that is not empty).
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from ani.cli_help import LiteralHelpGroup
from ani.console import consoles
from rich.markup import escape
from rich.table import Table

from ani.errors import AniError

app = typer.Typer(cls=LiteralHelpGroup, no_args_is_help=True, add_completion=False)
console, err_console = consoles()


def _fail(exc: BaseException | str, code: int = 2) -> typer.Exit:
    err_console.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True, highlight=False)
    return typer.Exit(code)


@app.command("generate")
def generate_cmd(
    manifest: Annotated[Path, typer.Argument(help="manifest file (e.g. scenarios/default.yaml)")],
    seed: Annotated[int | None, typer.Option("--seed", help="seed (default: the manifest's seed)", min=0)] = None,
    density: Annotated[int | None, typer.Option("--density", help="instances per service class (default: the manifest's)",
                                                min=0, max=10_000)] = None,
    output: Annotated[str | None, typer.Option("--out", help="output file, '-' for stdout "
                                               "(default: <name>-s<seed>-d<density>.yaml here)")] = None,
    old_output: Annotated[str | None, typer.Option("-o", "--output", hidden=True,
                                                   help="(deprecated: --out)")] = None,
) -> None:
    """Generate a scenario file from a manifest and a seed; print the scenario hash."""
    from ani.scenario.generate import generate, load_manifest, render_yaml
    from ani.scenario.manifest import parse_scenario

    if old_output is not None:  # the old name of --out (one spelling per option: --out everywhere)
        if output is not None and output != old_output:
            raise _fail(f"-o/--output {old_output} and --out {output}: give one (-o/--output is the old name of --out)")
        err_console.print("warning: -o/--output is deprecated: use --out", highlight=False)
        output = old_output

    try:
        m = load_manifest(manifest)
        s = m.seed if seed is None else seed
        data = generate(m, seed=s, density=density)
        text = render_yaml(data)
        scenario_hash = parse_scenario(data, source="<generated>").hash
    except AniError as exc:
        raise _fail(exc) from None
    g = data["generated"]
    if output == "-":
        sys.stdout.write(text)
        err_console.print(scenario_hash, highlight=False)
        return
    path = Path(output) if output else Path(f"{g['manifest']}-s{g['seed']}-d{g['density']}.yaml")
    try:
        path.write_text(text)
    except OSError as exc:
        raise _fail(f"{path}: cannot write the scenario file: {exc.strerror or exc}") from None
    topo = data["topology"]
    err_console.print(f"wrote {path}: {len(topo['routers'])} routers, {len(topo['hosts'])} hosts, "
                      f"{len(data['invariants'])} invariants (start it with: ani lab up {path})", highlight=False, soft_wrap=True)
    console.print(scenario_hash, highlight=False)


def _group(service: str | None) -> str:
    """The service tag of an invariant without the instance: ``tenant:blue`` -> ``tenant``,
    ``floating-address/198.51.100.7`` -> ``floating-address``."""
    if not service:
        return "-"
    return service.split("/", 1)[0].split(":", 1)[0]


@app.command("show")
def show_cmd(file: Annotated[Path, typer.Argument(help="scenario file (ani scenario generate writes one)")]) -> None:
    """Summarise a scenario file: routers by role, sites per tenant, services per class, invariants."""
    from ani.intents.inventory import Inventory, network_configs
    from ani.scenario.manifest import load_scenario

    try:
        s = load_scenario(file)
        configs = network_configs(s)
    except AniError as exc:
        raise _fail(exc) from None
    head = f"[bold]{escape(s.name)}[/bold]  hash {s.hash}"
    if s.generated is not None:
        g = s.generated
        head += f"\ngenerated from manifest {escape(g.manifest)}, seed {g.seed}, density {g.density}"
    console.print(head, highlight=False, soft_wrap=True)

    roles: dict[str, list[str]] = {}
    edges = set(s.edges)
    asns = Counter(cfg.bgp.asn for cfg in configs.values() if cfg.bgp is not None)
    own_as = asns.most_common(1)[0][0] if asns else None
    for r, cfg in configs.items():
        rr = cfg.bgp is not None and any(p.route_reflector_client for p in cfg.bgp.ipv4_unicast.peers.values())
        if cfg.bgp is not None and cfg.bgp.asn != own_as:
            role = f"external (AS {cfg.bgp.asn})"
        elif rr:
            role = "core (route reflector)"
        else:
            role = "edge" if r in edges or r.startswith("e") else "core"
        roles.setdefault(role, []).append(r)
    t = Table(title="routers", title_justify="left")
    t.add_column("role"), t.add_column("n", justify="right"), t.add_column("routers")
    for role, rs in roles.items():
        t.add_row(role, str(len(rs)), " ".join(rs))
    console.print(t)

    t = Table(title="sites per tenant", title_justify="left")
    t.add_column("tenant"), t.add_column("n", justify="right"), t.add_column("sites (host@edge prefix)")
    for tenant, ten in s.tenants.items():
        t.add_row(tenant, str(len(ten.sites)), ", ".join(f"{x.host}@{x.edge} {x.prefix}" for x in ten.sites))
    per_edge = Counter(x.edge for _t, x in s.sites)
    console.print(t)
    console.print("sites per edge: " + ", ".join(f"{e} {per_edge.get(e, 0)}" for e in s.topology.routers
                                                 if e in roles.get("edge", [])), highlight=False)

    t = Table(title="services per class (ani.intents.Inventory)", title_justify="left")
    t.add_column("class"), t.add_column("n", justify="right")
    for cls, n in Counter(x.type for x in Inventory(configs).list_services()).items():
        t.add_row(cls, str(n))
    console.print(t)

    t = Table(title=f"baseline invariants ({'from the file' if s.listed_invariants is not None else 'computed'})",
              title_justify="left")
    t.add_column("service"), t.add_column("kinds"), t.add_column("n", justify="right")
    groups: dict[str, Counter[str]] = {}
    for c in s.invariants:
        groups.setdefault(_group(c.service), Counter())[c.kind] += 1
    for g, kinds in groups.items():
        t.add_row(g, ", ".join(f"{k} {n}" for k, n in kinds.items()), str(sum(kinds.values())))
    t.add_row("[bold]total[/bold]", "", str(len(s.invariants)))
    console.print(t)


@app.command("check")
def check_cmd(
    file: Annotated[Path, typer.Argument(help="scenario file the lab was started from (ani lab up FILE)")],
    lab_id: Annotated[str | None, typer.Option("--lab", help="lab id (optional if one lab runs)")] = None,
    bound: Annotated[float, typer.Option("--bound", help="seconds each positive check is retried for", min=0.1)] = 20.0,
) -> None:
    """Check a running lab against the scenario's baseline invariants; exit 1 if any fails.

    The observer grades out of band (pings and vtysh inside the lab's namespaces), exactly as a
    campaign's baseline check does. Exit codes: 0 every invariant holds, 1 some fail, 2 bad
    input (file, no such lab, the lab lacks a node the scenario names).
    """
    from ani.lab.cli import _pick
    from ani.lab.lab import Lab
    from ani.observer import Observer
    from ani.scenario.manifest import load_scenario

    try:
        s = load_scenario(file)
        lab = Lab.attach(_pick(lab_id, "name one: ani scenario check FILE --lab ID"))
        missing = sorted(set(s.topology.nodes) - set(lab.topology.nodes))
        if missing:
            raise _fail(f"lab {lab.id} has no node {missing[0]!r} of {file}: was it started from another file?")
        with console.status(f"checking {len(s.invariants)} invariants on lab {lab.id}"):
            results = Observer(lab).evaluate(s.invariants, bound_s=bound)
    except AniError as exc:
        raise _fail(exc) from None
    groups: dict[str, list[int]] = {}
    for r in results:
        g = groups.setdefault(_group(r.service), [0, 0])
        g[0 if r.passed else 1] += 1
    t = Table(title=f"baseline invariants of {file.name} on lab {lab.id}", title_justify="left")
    t.add_column("service"), t.add_column("passed", justify="right"), t.add_column("failed", justify="right")
    for g, (ok, bad) in groups.items():
        t.add_row(g, str(ok), f"[red]{bad}[/red]" if bad else "0")
    console.print(t)
    failed = [r for r in results if not r.passed]
    for r in failed:
        console.print(f"[red]FAIL[/red] {escape(r.name)}: {escape(r.detail)}", highlight=False, soft_wrap=True)
    console.print(f"{len(results) - len(failed)}/{len(results)} invariants hold", highlight=False)
    if failed:
        raise typer.Exit(1)


@app.command("export")
def export_cmd(
    file: Annotated[Path, typer.Argument(help="scenario file (ani scenario generate writes one) or topology file")],
    fmt: Annotated[str, typer.Option("--format", help="export format: containerlab")] = "containerlab",
    out: Annotated[Path | None, typer.Option("--out", help="folder to write (created; must be empty "
                                             "unless --force)")] = None,
    short_out: Annotated[Path | None, typer.Option("-o", hidden=True, help="--out (the issue's spelling; "
                                                   "-o is --option's elsewhere)")] = None,
    force: Annotated[bool, typer.Option("--force", help="write into a folder that is not empty (the "
                                        "export's files are overwritten, nothing else is touched)")] = False,
    router_image: Annotated[str | None, typer.Option("--router-image", help="FRR image of the routers "
                                                     "(default: quay.io/frrouting/frr:8.4.1)")] = None,
    host_image: Annotated[str | None, typer.Option("--host-image", help="image of the hosts "
                                                   "(default: wbitt/network-multitool:3.22.2)")] = None,
) -> None:
    """Export a scenario for Containerlab: <name>.clab.yml, one folder per router (frr.conf,
    daemons), interfaces.csv (ani's interface names -> eth1, eth2, ...) and check-invariants.sh
    (the baseline invariants, checked with docker exec); docs/scenarios.md, Containerlab."""
    from ani.scenario import containerlab as clab

    if fmt != "containerlab":
        raise _fail(f"--format {fmt}: unknown export format (known: containerlab)")
    if short_out is not None:
        if out is not None and out != short_out:
            raise _fail(f"-o {short_out} and --out {out}: give one")
        out = short_out
    if out is None:
        raise _fail("give the folder to write: --out DIR")
    try:
        s = clab.load_for_export(file)
        files = clab.export(s, router_image=router_image or clab.ROUTER_IMAGE,
                            host_image=host_image or clab.HOST_IMAGE)
        clab.write(files, out, force=force)
    except AniError as exc:
        raise _fail(exc) from None
    name = next(f for f in files if f.endswith(".clab.yml"))
    n_routers = len(s.topology.routers)
    err_console.print(f"wrote {escape(str(out))}: {escape(name)}, {n_routers} router folders, interfaces.csv, "
                      f"check-invariants.sh ({len(s.invariants)} invariants)", highlight=False, soft_wrap=True)
    console.print(escape(f"containerlab deploy -t {out / name} && {out / 'check-invariants.sh'}"),
                  highlight=False, soft_wrap=True)

