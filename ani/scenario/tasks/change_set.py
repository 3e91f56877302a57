"""Task class ``change-set``: on a live tenant, two site additions, two moves and one removal.

Drawn from the seed (any scenario with two tenants, one of them with at least three sites, two
edges and a ``sites`` pool):

- the tenant ``T`` (one with >= 3 sites), three of its sites: two to move, one to remove;
- each move's new edge: another edge that carries sites of other tenants (if any does);
- addition 1: a free block next to a site prefix of another tenant (``198.18.25.0/24`` beside
  red4's ``198.18.24.0/24``), on that neighbour's edge; addition 2: a free block of the
  ``sites`` pool on a drawn edge; their names are one edit away from the removed / a moved
  site (``blue40`` next to the removed ``blue4``); gateway ``.1``, host ``.10``.

The file ``changes.yaml``::

    tenant: blue
    add:
    - {site: blue40, edge: e4, prefix: 198.18.25.0/24, gateway: 198.18.25.1}
    - {site: blue2b, edge: e1, prefix: 198.19.87.0/24, gateway: 198.19.87.1}
    move:
    - {site: blue2, from_edge: e2, to_edge: e1}
    - {site: blue3, from_edge: e3, to_edge: e2}
    remove:
    - {site: blue4, edge: e4}

The lab: the added sites' hosts cabled to ``<edge>:to-<site>``; each moved site's host
recabled to ``<to_edge>:to-<site>`` (``TaskVariant.recabled``; the old edge still holds its
configuration). Superseded: the baseline invariants that need a moved or the removed site
where it was. Hidden tests: every added and moved site reaches every site of ``T`` after the
change and no site of another tenant, and its prefix is on every other edge; the removed site's
host is unreachable from every site of ``T`` and its prefix is on no edge; the neighbour tenant
(the owner of the prefix next to addition 1) still reaches its own sites.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Network
from typing import Any

from ani.errors import TaskError
from ani.observer.checks import Check
from ani.scenario.manifest import Scenario
from ani.scenario.tasks import situation as sit
from ani.scenario.tasks.base import Draw, TaskClass, parse_template, register

N_ADD, N_MOVE, N_REMOVE = 2, 2, 1

ADD_LINE = "- add site {site} on {edge}: prefix {prefix}, gateway {gateway}"
MOVE_LINE = "- move site {site} from {from_edge} to {to_edge}"
REMOVE_LINE = "- remove site {site} from {edge}"
_KEYS = {"add": ("site", "edge", "prefix", "gateway"), "move": ("site", "from_edge", "to_edge"), "remove": ("site", "edge")}
_LINES = {"add": ADD_LINE, "move": MOVE_LINE, "remove": REMOVE_LINE}


@register
class ChangeSet(TaskClass):
    """Two additions, two moves, one removal on one tenant (module doc)."""

    name = "change-set"
    intent_file = "changes.yaml"

    def ticket_fields(self, data: dict[str, Any]) -> dict[str, Any]:
        lines = [_LINES[op].format(**item) for op in ("add", "move", "remove") for item in data[op]]
        return {"tenant": data["tenant"], "changes": "\n".join(lines)}

    def parse_ticket(self, text: str) -> dict[str, Any]:
        """``changes.yaml``'s mapping from a ticket (see :func:`parse_ticket`)."""
        where = "intents/change-set/ticket.txt"
        got = parse_template(self.ticket_template, text, where=where, patterns={"changes": r"(?:- [^\n]+\n)*- [^\n]+"})
        out: dict[str, Any] = {"tenant": got["tenant"], "add": [], "move": [], "remove": []}
        for line in got["changes"].splitlines():
            for op in _LINES:
                if line.strip().startswith(f"- {op} "):
                    out[op].append(_line(op, line.strip(), where))
                    break
            else:
                raise TaskError(f"the ticket does not follow {where}: unknown change line {line.strip()!r}")
        return out

    def reference_changes(self, req: dict[str, Any], configs: dict[str, Any]) -> list[dict[str, Any]]:
        """:func:`ani.scenario.tasks.reference.change_set`."""
        from ani.scenario.tasks import reference

        return reference.change_set(req, configs)

    def draw(self, scenario: Scenario, seed: int) -> Draw:
        where = self.where(scenario)
        self.need_tenants(scenario)
        pool = scenario.pools.get("sites")
        if pool is None:
            raise TaskError(f"{where} has no 'sites' pool (where added sites get their prefix)")
        need = N_MOVE + N_REMOVE
        eligible = [t for t in sorted(scenario.tenants) if len(scenario.tenants[t].sites) >= need]
        if not eligible:
            sizes = ", ".join(f"{t} {len(v.sites)}" for t, v in scenario.tenants.items())
            raise TaskError(f"{where} has no tenant with at least {need} sites ({N_MOVE} to move, {N_REMOVE} to remove); sites: {sizes}")
        edges = scenario.edges
        if len(edges) < 2:
            raise TaskError(f"{where} has {len(edges)} edge router with sites; a move needs two")
        rng = self.rng(scenario, seed)
        tenant = rng.choice(eligible)
        own = list(scenario.tenants[tenant].sites)
        others = [(t, s) for t, s in scenario.sites if t != tenant]
        chosen = rng.sample(own, need)
        moved, removed = chosen[:N_MOVE], chosen[N_MOVE]
        shared = {s.edge for _t, s in others}

        moves = []
        for m in moved:
            cands = [e for e in edges if e != m.edge and e in shared] or [e for e in edges if e != m.edge]
            moves.append({"site": m.host, "from_edge": m.edge, "to_edge": rng.choice(cands)})

        used = sit.used_networks(scenario)
        taken = set(scenario.topology.nodes)
        adds: list[dict[str, str]] = []
        # the neighbour: a site of another tenant with a free block beside its prefix
        beside = [(t, s) for t, s in others if sit.adjacent_free(s.prefix, used)]
        _nt, neighbour = rng.choice(beside or others)
        adjacent = sit.adjacent_free(neighbour.prefix, used)
        for i, base in enumerate((removed.host, moved[0].host)):
            if i == 0 and adjacent:
                prefix, edge = rng.choice(adjacent), neighbour.edge
            else:
                free = sit.free_blocks(pool.network, pool.prefixlen, used)
                if not free:
                    raise TaskError(f"{where}: pool {pool.network} has no free /{pool.prefixlen}")
                prefix, edge = rng.choice(free), rng.choice(edges)
            names = sit.near_miss_names(base, taken)
            if not names:
                raise TaskError(f"{where}: no free node name near {base!r}")
            site = rng.choice(names)
            taken.add(site)
            used.append(prefix)
            adds.append({"site": site, "edge": edge, "prefix": str(prefix), "gateway": str(sit.gateway_of(prefix))})
        file = {
            "tenant": tenant,
            "add": adds,
            "move": moves,
            "remove": [{"site": removed.host, "edge": removed.edge}],
        }
        return self._situation(scenario, file, neighbour.host)

    def _situation(self, scenario: Scenario, file: dict[str, Any], neighbour: str) -> Draw:
        """Lab, superseded invariants and hidden tests of a change set ``file``."""
        tenant = file["tenant"]
        edges = scenario.edges
        moved = {m["site"]: m["to_edge"] for m in file["move"]}
        removed = [sit.site_of(scenario, r["site"])[1] for r in file["remove"]]
        gone = {s.host for s in removed}
        # (host, address, prefix, edge after the change) of every site of the tenant afterwards
        final = [
            (s.host, scenario.host_address(s.host), s.prefix, moved.get(s.host, s.edge))
            for s in scenario.tenants[tenant].sites
            if s.host not in gone
        ]
        for a in file["add"]:
            p = IPv4Network(a["prefix"])
            final.append((a["site"], sit.host_address_of(p).ip, p, a["edge"]))
        foreign = [(s.host, scenario.host_address(s.host)) for t, s in scenario.sites if t != tenant]
        changed = [f for f in final if f[0] in moved or f[0] in {a["site"] for a in file["add"]}]

        superseded = sit.superseded_by(
            scenario,
            lambda c: any(
                sit.requires_site(c, s.host, s.prefix)
                for t, s in scenario.sites
                if s.host in moved or s.host in gone
            ),
        )
        hidden: list[Check] = []
        for host, _addr, prefix, edge in changed:
            hidden += [sit.reach(host, h, a, True) for h, a, _p, _e in final if h != host]
            hidden += [sit.reach(host, h, a, False) for h, a in foreign]
            hidden += sit.routes([e for e in edges if e != edge], prefix, True)
        for s in removed:
            addr = scenario.host_address(s.host)
            hidden += [sit.reach(h, s.host, addr, False) for h, _a, _p, _e in final]
            hidden += sit.routes(edges, s.prefix, False)
        n_tenant, n_site = sit.site_of(scenario, neighbour)
        hidden += [
            sit.reach(n_site.host, s.host, scenario.host_address(s.host), True)
            for s in scenario.tenants[n_tenant].sites
            if s.host != n_site.host
        ]
        # what the scenario itself says a moved site needs (e.g. a generated policy's route)
        hidden += [
            c for c in scenario.invariants
            if c.name in superseded
            and any(sit.requires_site(c, h, sit.site_of(scenario, h)[1].prefix) for h in moved)
            and not any(sit.requires_site(c, s.host, s.prefix) for s in removed)
        ]
        extra = sit.merge_extra(*(sit.new_host(a["site"], a["edge"], IPv4Network(a["prefix"])) for a in file["add"]))
        params = dict(file)
        params["neighbour"] = neighbour
        params["host_addresses"] = {h: str(a) for h, a, _p, _e in final}
        return Draw(
            file=file,
            params=params,
            hidden_tests=sit.dedupe(hidden),
            extra_topology=extra,
            superseded=superseded,
            recabled=moved,
        )


def parse_ticket(text: str) -> dict[str, Any]:
    """``changes.yaml``'s mapping (``{tenant, add: [...], move: [...], remove: [...]}``, strings,
    as ``yaml.safe_load`` reads the file) from a change-set ticket. Raises TaskError."""
    return ChangeSet().parse_ticket(text)


def _line(op: str, line: str, where: str) -> dict[str, str]:
    pattern = re.escape(_LINES[op])
    for key in _KEYS[op]:
        pattern = pattern.replace(re.escape("{" + key + "}"), f"(?P<{key}>[^\\s,:]+)")
    m = re.fullmatch(pattern, line)
    if m is None:
        raise TaskError(f"the ticket does not follow {where}: bad {op} line {line!r} (form: {_LINES[op]!r})")
    return {k: m.group(k) for k in _KEYS[op]}
