"""Task class ``troubleshoot``: the variant places one misconfiguration in the brownfield; the
request gives only the symptom.

Drawn from the seed (any scenario with two tenants, one of them with at least two sites): a site
``S`` of tenant ``T`` on edge ``E`` (one whose edge carries other sites, when there is one), and
one of the fault kinds that applies to it:

======================  ===========================================================  ======================
kind                    what the lab starts with (``TaskVariant.overrides``)           symptom
======================  ===========================================================  ======================
prefix-list-missing     ``E``'s entry for ``S``'s prefix is missing from the shared    ``cannot_reach``: the
                        prefix-list of ``redistribute connected``                     sites of ``T`` on other
                                                                                      edges
prefix-list-shadowed    a lower-seq ``deny`` of an aggregate over ``S``'s prefix       as above
                        (``le`` its length; no other prefix of the list under it)
                        shadows ``S``'s entry
firewall-set-missing    ``S``'s prefix is missing from the nftables set               ``reaches_other_tenant``:
                        ``tenant_<T>`` on every router: isolation leaks              a site of another tenant
gateway-mask            ``S``'s gateway on ``E`` has a longer mask that leaves the     ``cannot_reach``: every
                        host outside (``/29`` for ``.1`` and ``.10`` of a ``/24``)    other site of ``T``
======================  ===========================================================  ======================

The file ``symptom.yaml``: ``{tenant: blue, site: blue3, cannot_reach: [blue1, blue2, blue4]}``
or ``{tenant: blue, site: blue3, reaches_other_tenant: red2}``; never the cause
(``params["fault"]`` holds the kind, never shown to the agent).

Superseded: the baseline invariants the fault breaks (``cannot_reach`` kinds: those that need
``S`` in service; ``firewall-set-missing``: ``S``'s isolation). Hidden tests: ``S`` reaches
every other site of ``T`` and no site of another tenant, ``S``'s prefix is on every other edge,
and every other site on ``E`` still reaches its tenant's sites (the list is shared).
"""

from __future__ import annotations

import re
from ipaddress import IPv4Network
from typing import Any

from ani.device.model import DeviceConfig
from ani.device.parse import parse as parse_frr
from ani.errors import TaskError
from ani.observer.checks import Check
from ani.scenario.manifest import Scenario, Site
from ani.scenario.tasks import situation as sit
from ani.scenario.tasks.base import Draw, TaskClass, parse_template, register

KINDS: tuple[str, ...] = ("prefix-list-missing", "prefix-list-shadowed", "firewall-set-missing", "gateway-mask")
CANNOT = "cannot reach {sites}"
REACHES = "reaches {site} of another tenant"


@register
class Troubleshoot(TaskClass):
    """One misconfiguration, the symptom only (module doc)."""

    name = "troubleshoot"
    intent_file = "symptom.yaml"

    def ticket_fields(self, data: dict[str, Any]) -> dict[str, Any]:
        if "cannot_reach" in data:
            symptom = CANNOT.format(sites=", ".join(data["cannot_reach"]))
        else:
            symptom = REACHES.format(site=data["reaches_other_tenant"])
        return {"tenant": data["tenant"], "site": data["site"], "symptom": symptom}

    def parse_ticket(self, text: str) -> dict[str, Any]:
        """``symptom.yaml``'s mapping from a ticket (see :func:`parse_ticket`)."""
        where = "intents/troubleshoot/ticket.txt"
        got = parse_template(self.ticket_template, text, where=where, patterns={"symptom": r"[^\n]+?"})
        out: dict[str, Any] = {"tenant": got["tenant"], "site": got["site"]}
        symptom = got["symptom"].strip()
        if m := re.fullmatch(r"cannot reach ([a-z0-9]+(?:, [a-z0-9]+)*)", symptom):
            out["cannot_reach"] = m.group(1).split(", ")
        elif m := re.fullmatch(r"reaches ([a-z0-9]+) of another tenant", symptom):
            out["reaches_other_tenant"] = m.group(1)
        else:
            raise TaskError(f"the ticket does not follow {where}: unknown symptom {symptom!r} "
                            f"(forms: {CANNOT!r}, {REACHES!r})")
        return out

    def reference_changes(self, req: dict[str, Any], configs: dict[str, Any]) -> list[dict[str, Any]]:
        """:func:`ani.scenario.tasks.reference.troubleshoot`."""
        from ani.scenario.tasks import reference

        return reference.troubleshoot(req, configs)

    def draw(self, scenario: Scenario, seed: int) -> Draw:
        where = self.where(scenario)
        self.need_tenants(scenario)
        per_edge: dict[str, int] = {}
        for _t, s in scenario.sites:
            per_edge[s.edge] = per_edge.get(s.edge, 0) + 1
        rng = self.rng(scenario, seed)
        cands = [(t, s) for t, s in scenario.sites if len(scenario.tenants[t].sites) >= 2]
        shared = [(t, s) for t, s in cands if per_edge[s.edge] >= 2]
        if not cands:
            raise TaskError(f"{where} has no tenant with at least two sites (one to break, one it cannot reach)")
        # the first drawn site at which some kind applies (sites on shared edges first), then the kind
        rest = [c for c in cands if c not in shared]
        rng.shuffle(shared)
        rng.shuffle(rest)
        tried = []
        for tenant, site in shared + rest:
            faults = {k: f for k in KINDS if (f := _fault(k, scenario, tenant, site)) is not None}
            if faults:
                kind = rng.choice(sorted(faults))
                return self._situation(scenario, tenant, site, kind, faults[kind], rng)
            tried.append(site.host)
        raise TaskError(f"{where}: no fault kind ({', '.join(KINDS)}) applies at any site ({', '.join(tried)})")

    def _situation(self, scenario: Scenario, tenant: str, site: Site, kind: str,
                   overrides: dict[str, dict[str, str]], rng: Any) -> Draw:
        addr = scenario.host_address(site.host)
        own = [s for s in scenario.tenants[tenant].sites if s.host != site.host]
        foreign = [(t, s) for t, s in scenario.sites if t != tenant]
        file: dict[str, Any] = {"tenant": tenant, "site": site.host}
        if kind == "firewall-set-missing":
            file["reaches_other_tenant"] = rng.choice(foreign)[1].host
            # the set also admits the site to the shared services: their reaches break too
            hosts = {s.host for _t, s in scenario.sites}
            superseded = sit.superseded_by(scenario, lambda c: sit.isolation_of(c, site.host, site.prefix)
                                           or sit.granted_by_set(c, site.host, site.prefix, hosts))
        else:
            far = [s.host for s in own if kind == "gateway-mask" or s.edge != site.edge]
            file["cannot_reach"] = far
            superseded = sit.superseded_by(scenario, lambda c: sit.requires_site(c, site.host, site.prefix))
        hidden: list[Check] = [sit.reach(site.host, s.host, scenario.host_address(s.host), True) for s in own]
        hidden += [sit.reach(site.host, s.host, scenario.host_address(s.host), False) for _t, s in foreign]
        hidden += sit.routes([e for e in scenario.edges if e != site.edge], site.prefix, True)
        for t, n in scenario.sites:
            if n.edge == site.edge and n.host != site.host:
                hidden += [
                    sit.reach(n.host, o.host, scenario.host_address(o.host), True)
                    for o in scenario.tenants[t].sites
                    if o.host != n.host
                ]
        hidden += [c for c in scenario.invariants if c.name in superseded]
        params = {**file, "fault": kind, "edge": site.edge, "prefix": str(site.prefix), "host_address": str(addr)}
        return Draw(file=file, params=params, hidden_tests=sit.dedupe(hidden), overrides=overrides,
                    superseded=superseded)


# -- the faults -------------------------------------------------------------------------------------


def _fault(kind: str, scenario: Scenario, tenant: str, site: Site) -> dict[str, dict[str, str]] | None:
    """The overrides that place fault ``kind`` at ``site``, or None where it does not apply."""
    others = [s for s in scenario.tenants[tenant].sites if s.host != site.host]
    if kind == "firewall-set-missing":
        return _set_missing(scenario, tenant, site)
    if kind == "gateway-mask":
        return _gateway_mask(scenario, site) if others else None
    if not any(s.edge != site.edge for s in others):
        return None  # nothing the missing advertisement would cut off
    return _prefix_list(scenario, site, shadow=kind == "prefix-list-shadowed")


def _tenant_list(cfg: DeviceConfig) -> str | None:
    """The prefix-list matched by the route-map of ``redistribute connected`` (ani.intents'
    convention for the tenant list of an edge)."""
    if cfg.bgp is None:
        return None
    rmap = cfg.bgp.ipv4_unicast.redistribute.get("connected")
    if rmap is None or rmap not in cfg.route_maps:
        return None
    return next((e.match_prefix_list for e in cfg.route_maps[rmap].entries if e.match_prefix_list), None)


def _edited(scenario: Scenario, router: str, pattern: str, repl: str) -> tuple[str, DeviceConfig] | None:
    """The router's config with the one line matching ``pattern`` replaced (``repl`` may hold
    several lines, or none), parsed; None if no single line matches."""
    text = scenario.topology.routers[router].config
    rx = re.compile(pattern, re.MULTILINE)
    if len(rx.findall(text)) != 1:
        return None
    new = rx.sub(repl, text)
    try:
        return new, parse_frr(new)
    except ValueError:
        return None


def _prefix_list(scenario: Scenario, site: Site, *, shadow: bool) -> dict[str, dict[str, str]] | None:
    cfg = scenario.device_configs[site.edge]
    plist = _tenant_list(cfg)
    if plist is None or plist not in cfg.prefix_lists or _advertised_otherwise(cfg, plist, site.prefix):
        return None
    entries = cfg.prefix_lists[plist].entries
    mine = [e for e in entries if e.prefix == site.prefix and e.action == "permit" and e.ge is None and e.le is None]
    if len(mine) != 1:
        return None
    seq = mine[0].seq
    line = rf"^ip prefix-list {re.escape(plist)} seq {seq} permit {re.escape(str(site.prefix))}[ \t]*\n"
    if not shadow:
        got = _edited(scenario, site.edge, line, "")
        left = got[1].prefix_lists.get(plist) if got is not None else None
        if got is None or (left is not None and any(e.prefix == site.prefix for e in left.entries)):
            return None
        return {site.edge: {"config": got[0]}}
    used = {e.seq for e in entries}
    free = [s for s in range(seq - 1, 0, -1) if s not in used]
    if not free:
        return None
    dseq = next((s for s in free if s <= seq - 5), free[0])
    others = [e.prefix for e in entries if e.prefix is not None and e.seq > dseq and e is not mine[0]]
    agg = site.prefix
    for length in range(site.prefix.prefixlen - 1, max(site.prefix.prefixlen - 4, 8) - 1, -1):
        wider = site.prefix.supernet(new_prefix=length)
        if any(o.subnet_of(wider) for o in others):
            break
        agg = wider
    deny = f"ip prefix-list {plist} seq {dseq} deny {agg}" + (f" le {site.prefix.prefixlen}" if agg != site.prefix else "")
    got = _edited(scenario, site.edge, line, deny + "\n" + rf"\g<0>")
    if got is None:
        return None
    return {site.edge: {"config": got[0]}}


def _advertised_otherwise(cfg: DeviceConfig, plist: str, prefix: IPv4Network) -> bool:
    """Could ``prefix`` pass the ``redistribute connected`` route-map other than through
    ``plist`` (a permit entry without a match, or another list with an entry over it)? Then
    the prefix-list kinds would not cut the site off: they do not apply."""
    assert cfg.bgp is not None
    rmap = cfg.route_maps[cfg.bgp.ipv4_unicast.redistribute["connected"]]
    for entry in rmap.entries:
        if entry.action != "permit" or entry.match_prefix_list == plist:
            continue
        if entry.match_prefix_list is None:
            return True
        other = cfg.prefix_lists.get(entry.match_prefix_list)
        if other is not None and any(e.prefix is None or e.prefix.overlaps(prefix) for e in other.entries):
            return True
    return False


def _gateway_mask(scenario: Scenario, site: Site) -> dict[str, dict[str, str]] | None:
    host = scenario.host_address(site.host)
    length = next(
        (n for n in range(site.prefix.prefixlen + 1, 31)
         if host not in IPv4Network(f"{site.gateway}/{n}", strict=False)),
        None,
    )
    if length is None:
        return None
    cfg = scenario.device_configs[site.edge]
    ifaces = [n for n, i in cfg.interfaces.items() if any(a.ip == site.gateway for a in i.addresses)]
    if len(ifaces) != 1:
        return None
    gw = re.escape(f"{site.gateway}/{site.prefix.prefixlen}")
    got = _edited(scenario, site.edge, rf"^([ \t]+ip address ){gw}[ \t]*$", rf"\g<1>{site.gateway}/{length}")
    if got is None:
        return None
    addrs = got[1].interfaces[ifaces[0]].addresses
    if not any(a.ip == site.gateway and a.network.prefixlen == length for a in addrs):
        return None
    return {site.edge: {"config": got[0]}}


def _set_missing(scenario: Scenario, tenant: str, site: Site) -> dict[str, dict[str, str]] | None:
    from ani.device import firewall
    from ani.intents.inventory import parse_nft_text, tenant_set

    name = tenant_set(tenant)
    out: dict[str, dict[str, str]] = {}
    for router, spec in scenario.topology.routers.items():
        if not spec.nftables.strip():
            continue
        try:
            fw = parse_nft_text(spec.nftables)
        except ValueError:
            return None  # a ruleset the model cannot hold: not this kind
        if fw is None or name not in fw.sets or site.prefix not in fw.sets[name].elements:
            continue
        if fw.forward_policy != "accept":
            return None  # without its set entry the site would be cut off, not leak
        sets = dict(fw.sets)
        sets[name] = sets[name].model_copy(update={"elements": [e for e in sets[name].elements if e != site.prefix]})
        out[router] = {"nftables": firewall.render(fw.model_copy(update={"sets": sets}))}
    return out or None


# -- the ticket ---------------------------------------------------------------------------------------


def parse_ticket(text: str) -> dict[str, Any]:
    """``symptom.yaml``'s mapping (``{tenant, site, cannot_reach: [...]}`` or ``{tenant, site,
    reaches_other_tenant}``, strings) from a troubleshoot ticket. Raises TaskError."""
    return Troubleshoot().parse_ticket(text)
