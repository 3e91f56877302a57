"""A scenario as a Containerlab lab: ``ani scenario export FILE --format containerlab -o DIR``.

What :func:`export` builds (``{relative path: text}``; :func:`write` puts it in a folder), in
the shape of Containerlab's own FRR example (``lab-examples/frr01``)::

    <name>.clab.yml         the topology: group ``routers`` (kind linux, an FRR image, forwarding
                            sysctls), group ``hosts`` (kind linux, a tool image); per router binds
                            of its ``daemons`` and ``frr.conf`` (and ``nftables.nft``); per host
                            ``exec`` lines for its addresses and default route; ``links`` as
                            endpoint pairs ``["c1:eth1", "c2:eth1"]``
    <router>/frr.conf       the router's startup config, interface names rewritten
    <router>/daemons        FRR's daemons file: exactly the router's daemons enabled
    <router>/nftables.nft   its nftables ruleset (routers that have one), loaded by an exec line
    interfaces.csv          the interface mapping: node, ani's name, Containerlab's, the peer
    check-invariants.sh     the scenario's baseline invariants, checked with docker exec
                            (:mod:`ani.scenario.clab_script`)

Interfaces: Containerlab's ``eth0`` is the management interface, so each node's links become
``eth1``, ``eth2``, ... in the order the scenario lists them; every whole-word occurrence of a
node's interface name in its ``frr.conf`` and ruleset is rewritten (``interface X`` blocks,
static routes through an interface, ``update-source``, ...). A name that is also the name of
something else in that config (a prefix-list, route-map, peer-group, nftables table / chain /
set, the hostname) cannot be rewritten unambiguously: the export is refused, naming it; so is a
rewritten ``frr.conf`` that does not parse (``ani.device.parse``) as the original with only its
interface names changed (an interface named like a word of the configuration, ``area``).

Left out (they do not exist in containers): ani's network namespaces and FRR pathspaces (each
router is a container with its own ``/etc/frr``), the lab's management plane (NETCONF / SSH
servers and their addresses, the A0 sandbox), the memory bounds, the convergence settings.
The topology file is checked against Containerlab's published schema
(:mod:`ani.scenario.clab_schema`) before anything is written.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import yaml

from ani.errors import TopologyError
from ani.lab.netns import IGMP_MAX_MEMBERSHIPS
from ani.lab.topology import Topology
from ani.scenario.clab_names import check_names, check_nft, check_rewrite, rename_interfaces
from ani.scenario.clab_schema import SCHEMA_VERSION, schema_errors

#: the FRR image of the routers: the 8.4 release Containerlab's own docs use (peering-lab),
#: the series ani's labs run (FRR 8.4.4)
ROUTER_IMAGE = "quay.io/frrouting/frr:8.4.1"
#: the hosts' image: the one of Containerlab's FRR example (frr01), which has ip and ping
HOST_IMAGE = "wbitt/network-multitool:3.22.2"
#: FRR 8.4's daemons file keys (tools/etc/frr/daemons); watchfrr, zebra and staticd always run
FRR_DAEMONS = ("bgpd", "ospfd", "ospf6d", "ripd", "ripngd", "isisd", "pimd", "pim6d", "ldpd", "nhrpd",
               "eigrpd", "babeld", "sharpd", "pbrd", "bfdd", "fabricd", "vrrpd", "pathd")
ALWAYS_RUN = ("zebra", "staticd")
#: Containerlab's default management subnet; a scenario that uses it gets another
MGMT_DEFAULT = IPv4Network("172.20.20.0/24")
MGMT_CANDIDATES = tuple(IPv4Network(n) for n in ("172.31.254.0/24", "10.254.254.0/24", "192.168.254.0/24"))
NFT_PATH = "/etc/nftables.nft"

_IMAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$")


class _Flow(list):
    """A list written in YAML's flow style (a link's ``endpoints: ["c1:eth1", "c2:eth1"]``)."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Flow, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))


def dump_yaml(doc: dict[str, Any]) -> str:
    """``doc`` as YAML in the style of Containerlab's examples: block style, a link's
    endpoints on one line."""
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)


@dataclass(frozen=True)
class Port:
    """One interface of the export: ``node``'s ani name ``ifname`` is Containerlab's ``clab``;
    its link's other end is ``peer`` (node) ``peer_clab``; ``address`` (hosts') or None."""

    node: str
    ifname: str
    clab: str
    peer: str
    peer_clab: str
    address: str | None


def lab_name(name: str) -> str:
    """A Containerlab lab name for scenario ``name`` (schema: ``^[a-zA-Z0-9][a-zA-Z0-9-._]*$``):
    other characters become ``-``; ``ani`` when nothing is left."""
    out = re.sub(r"[^A-Za-z0-9._-]", "-", name).lstrip("-._")
    return out or "ani"


def ports(topo: Topology) -> list[Port]:
    """Every interface of ``topo`` mapped to Containerlab's names: each node's links, in the
    topology's link order, are ``eth1``, ``eth2``, ... (``eth0`` is the management interface)."""
    names: dict[tuple[str, str], str] = {}
    count: dict[str, int] = {}
    for link in topo.links:
        for ep in (link.a, link.b):
            count[ep.node] = count.get(ep.node, 0) + 1
            names[(ep.node, ep.ifname)] = f"eth{count[ep.node]}"
    out = []
    for link in topo.links:
        for ep, other in ((link.a, link.b), (link.b, link.a)):
            out.append(Port(ep.node, ep.ifname, names[(ep.node, ep.ifname)], other.node,
                            names[(other.node, other.ifname)], str(ep.address) if ep.address else None))
    return sorted(out, key=lambda p: (topo.nodes.index(p.node), int(p.clab[3:])))


def daemons_file(daemons: list[str]) -> str:
    """FRR 8.4's ``/etc/frr/daemons`` enabling exactly ``daemons`` (zebra and staticd always run
    and have no line). Raises TopologyError for a daemon FRR 8.4's file does not know."""
    unknown = [d for d in daemons if d not in FRR_DAEMONS and d not in ALWAYS_RUN]
    if unknown:
        raise TopologyError(f"daemon {unknown[0]!r} has no line in FRR 8.4's daemons file")
    lines = ["# FRR daemons file (FRR 8.4), written by ani scenario export: the router's daemons",
             "# are enabled, no other; watchfrr, zebra and staticd are always started."]
    lines += [f"{d}={'yes' if d in daemons else 'no'}" for d in FRR_DAEMONS]
    lines += ["", "vtysh_enable=yes",
              "# the defaults ani's labs start every daemon with (-F traditional)",
              'frr_profile="traditional"',
              'zebra_options="  -A 127.0.0.1 -s 90000000"']
    lines += [f'{d}_options="  -A {"::1" if d in ("ospf6d", "ripngd", "pim6d") else "127.0.0.1"}"'
              for d in FRR_DAEMONS if d in daemons]
    lines.append('staticd_options="-A 127.0.0.1"')
    return "\n".join(lines) + "\n"


def _mgmt(used: list[IPv4Network]) -> dict[str, Any] | None:
    """The ``mgmt`` section when the scenario uses Containerlab's default management subnet."""
    if not any(n.overlaps(MGMT_DEFAULT) for n in used):
        return None
    for cand in MGMT_CANDIDATES:
        if not any(n.overlaps(cand) for n in used):
            return {"network": "ani-clab-mgmt", "ipv4-subnet": str(cand)}
    raise TopologyError(f"the scenario uses {MGMT_DEFAULT} and every other management subnet ani tries "
                        f"({', '.join(map(str, MGMT_CANDIDATES))})")


def _host_exec(topo: Topology, host: str, by_node: dict[str, list[Port]]) -> list[str]:
    """The exec lines of ``host``: links up, addresses, its default route (or none)."""
    lines = []
    for p in by_node.get(host, []):
        lines.append(f"ip link set {p.clab} up")
        if p.address:
            lines.append(f"ip addr add {p.address} dev {p.clab}")
    gw = topo.hosts[host].gateway
    if gw is None:
        lines.append("ip route del default")  # as in ani's lab: no default route at all
        return lines
    dev = next((p.clab for p in by_node.get(host, []) if p.address and gw in IPv4Network(p.address, strict=False)), None)
    lines.append(f"ip route replace default via {gw}" + (f" dev {dev}" if dev else ""))
    return lines


def _router_node(router: str, spec: Any, router_ports: list[Port]) -> dict[str, Any]:
    node: dict[str, Any] = {"group": "routers",
                            "binds": [f"{router}/daemons:/etc/frr/daemons", f"{router}/frr.conf:/etc/frr/frr.conf"]}
    execs = [f"ip addr add {p.address} dev {p.clab}" for p in router_ports if p.address]
    if spec.nftables.strip():
        node["binds"].append(f"{router}/nftables.nft:{NFT_PATH}")
        # the FRR image has no nft: installed from Alpine's packages when missing
        execs.append(f"sh -c 'command -v nft >/dev/null || apk add --no-cache -q nftables; nft -f {NFT_PATH}'")
    if execs:
        node["exec"] = execs
    return node


def topology_doc(scenario: Any, *, router_image: str = ROUTER_IMAGE, host_image: str = HOST_IMAGE) -> dict[str, Any]:
    """The Containerlab topology of ``scenario`` (a parsed ``<name>.clab.yml``)."""
    topo: Topology = scenario.topology
    all_ports = ports(topo)
    by_node: dict[str, list[Port]] = {}
    for p in all_ports:
        by_node.setdefault(p.node, []).append(p)
    groups: dict[str, Any] = {
        "routers": {"kind": "linux", "image": router_image,
                    "sysctls": {"net.ipv4.ip_forward": 1, "net.ipv6.conf.all.forwarding": 1,
                                "net.ipv4.igmp_max_memberships": IGMP_MAX_MEMBERSHIPS}},
    }
    if topo.hosts:
        groups["hosts"] = {"kind": "linux", "image": host_image}
    nodes: dict[str, Any] = {r: _router_node(r, spec, by_node.get(r, [])) for r, spec in topo.routers.items()}
    for h in topo.hosts:
        nodes[h] = {"group": "hosts", "exec": _host_exec(topo, h, by_node)}
    names = {(p.node, p.ifname): p.clab for p in all_ports}
    links = [{"endpoints": _Flow([f"{lk.a.node}:{names[(lk.a.node, lk.a.ifname)]}",
                            f"{lk.b.node}:{names[(lk.b.node, lk.b.ifname)]}"])} for lk in topo.links]
    doc: dict[str, Any] = {"name": lab_name(scenario.name)}
    mgmt = _mgmt(scenario.used_networks())
    if mgmt is not None:
        doc["mgmt"] = mgmt
    doc["topology"] = {"groups": groups, "nodes": nodes, "links": links}
    return doc


#: the columns of ``interfaces.csv`` (a tuple: a list starting with "node" reads as an argv)
CSV_HEADER = ("node", "ani_ifname", "clab_ifname", "peer_node", "peer_clab_ifname", "address")


def interfaces_csv(all_ports: list[Port]) -> str:
    """The mapping as CSV: ``node,ani_ifname,clab_ifname,peer_node,peer_clab_ifname,address``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for p in all_ports:
        w.writerow([p.node, p.ifname, p.clab, p.peer, p.peer_clab, p.address or ""])
    return buf.getvalue()


def router_files(scenario: Any, all_ports: list[Port]) -> dict[str, str]:
    """``{"<router>/frr.conf": ..., "<router>/daemons": ..., "<router>/nftables.nft": ...}``,
    interface names rewritten. Raises TopologyError (a name clash, an unknown daemon)."""
    out: dict[str, str] = {}
    header = f"! {scenario.name}: exported by ani scenario export (interface names: ../interfaces.csv)\n"
    for r, spec in scenario.topology.routers.items():
        mapping = {p.ifname: p.clab for p in all_ports if p.node == r}
        check_names(r, scenario.device_configs[r], spec.nftables, set(mapping))
        text = spec.config if spec.config.endswith("\n") or not spec.config else spec.config + "\n"
        renamed = rename_interfaces(text, mapping)
        check_rewrite(r, scenario.device_configs[r], renamed, mapping)
        out[f"{r}/frr.conf"] = header + renamed
        out[f"{r}/daemons"] = daemons_file(list(spec.daemons))
        if spec.nftables.strip():
            check_nft(r, spec.nftables, mapping)
            out[f"{r}/nftables.nft"] = rename_interfaces(spec.nftables, mapping).rstrip("\n") + "\n"
    return out


def export(scenario: Any, *, router_image: str = ROUTER_IMAGE, host_image: str = HOST_IMAGE) -> dict[str, str]:
    """Every file of the Containerlab export of ``scenario`` (an :class:`ani.scenario.Scenario`):
    ``{relative path: text}`` (see the module doc), the topology checked against Containerlab's
    schema. Raises TopologyError (an interface name that cannot be rewritten, a daemon FRR's
    daemons file lacks, a topology the schema refuses: the first errors named)."""
    from ani.scenario.clab_script import invariants_script

    for what, image in (("router image", router_image), ("host image", host_image)):
        if not _IMAGE_RE.match(image):
            raise TopologyError(f"{what} {image[:80]!r}: not an image reference (registry/name:tag, no spaces)")
    doc = topology_doc(scenario, router_image=router_image, host_image=host_image)
    errors = schema_errors(doc)
    if errors:
        raise TopologyError(f"the Containerlab topology breaks Containerlab's schema ({SCHEMA_VERSION}): "
                            + "; ".join(errors[:5]))
    all_ports = ports(scenario.topology)
    name = doc["name"]
    head = (f"# {name}: the ani scenario {scenario.name} (hash {scenario.hash[:12]}) for Containerlab,\n"
            f"# written by ani scenario export; valid against Containerlab's schema {SCHEMA_VERSION}.\n"
            f"#   containerlab deploy -t {name}.clab.yml && ./check-invariants.sh\n")
    files = {f"{name}.clab.yml": head + dump_yaml(doc),
             "interfaces.csv": interfaces_csv(all_ports),
             "check-invariants.sh": invariants_script(name, scenario.name, list(scenario.invariants))}
    files.update(router_files(scenario, all_ports))
    return files


def load_for_export(path: str | Path) -> Any:
    """The :class:`ani.scenario.Scenario` to export from ``path``: a scenario file, or a plain
    topology file (routers, hosts, links: a scenario without tenants, its invariants computed
    from its configs). Raises TopologyError: missing, not YAML, invalid (the field named), or a
    manifest, campaign or NetConfBench file (what it is said, nothing of its content)."""
    from ani.lab.topology import load_yaml, other_kind, parse_topology
    from ani.resources import resolve
    from ani.scenario.generate import is_manifest
    from ani.scenario.manifest import Scenario, parse_scenario

    try:
        p = resolve(path)
    except FileNotFoundError:
        raise TopologyError(f"{path}: no such scenario file") from None
    data = load_yaml(p)
    if (kind := other_kind(data)) is not None:
        raise TopologyError(f"{path}: this is a {kind} file, not a scenario or topology file")
    if is_manifest(data):
        raise TopologyError(f"{path}: this is a scenario manifest, not a scenario file: generate one first "
                            f"(ani scenario generate {path} --seed N) and export that")
    if isinstance(data, dict) and "topology" not in data and "routers" in data:
        topo = parse_topology(data, source=str(path))
        return Scenario(name=topo.name, topology=topo, tenants={})
    return parse_scenario(data, source=str(path))


def write(files: dict[str, str], out: Path, *, force: bool = False) -> list[Path]:
    """Write ``files`` under folder ``out`` (created if missing); ``check-invariants.sh`` is made
    executable. Returns the paths written. Raises TopologyError if ``out`` is a file, or a folder
    holding anything and ``force`` is not given (with ``force`` only the export's own files are
    overwritten; nothing else is removed), or cannot be written."""
    if out.exists() and not out.is_dir():
        raise TopologyError(f"{out}: not a folder")
    if out.is_dir() and any(out.iterdir()) and not force:
        raise TopologyError(f"{out}: the folder is not empty (give --force to overwrite the export's files in it)")
    written = []
    try:
        for rel, text in files.items():
            p = out / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
            if rel.endswith(".sh"):
                p.chmod(0o755)
            written.append(p)
    except OSError as exc:
        raise TopologyError(f"{out}: cannot write the export: {exc.strerror or exc}") from None
    return written
