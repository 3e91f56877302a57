"""The ``troubleshoot`` task class's diagnosis: a symptom -> the repair (its reference change
set, :meth:`ani.scenario.tasks.troubleshoot.Troubleshoot.reference_changes`, which the
observer's reference end state and the scripted baseline agent both take).

::

    d = diagnose({"tenant": "blue", "site": "blue3", "cannot_reach": ["blue1"]}, configs)
    d.findings    # ["e3: PL-TENANTS seq 5 deny 198.18.13.0/24 shadows seq 10 permit 198.18.13.0/24", ...]
    d.checked     # what was looked at, one line each
    d.changes     # the typed repair changes (ani.intents change mappings), in apply order

The symptom (``symptom.yaml``: ``tenant``, ``site``, and ``cannot_reach`` or
``reaches_other_tenant``) names no cause. The diagnosis reads the routers' configurations
(``{router: DeviceConfig}``, nftables included) for the kinds of misconfiguration a brownfield
really has, around the site's edge (the router with interface ``to-<site>``):

1. the site's prefix: the network its tenant's nftables sets and the edge's tenant prefix-list
   hold for the gateway address (majority), else the interface's own network;
2. the gateway's mask: the interface address must be ``<gateway>/<prefix length>``;
3. the edge's tenant prefix-list (the one ``redistribute connected``'s route-map matches, FRR's
   first-match semantics): the prefix must be permitted by an entry of its own; a deny entry
   matched first (a lower seq) shadows it; a missing entry means it is never advertised. The
   route-map's own entries are evaluated the same way (a deny entry matching the prefix first);
4. the tenant's nftables set ``tenant_<tenant>``: the prefix must be an element on every router
   that has the set, and every router with the set must carry the drop rules (both ways) to the
   other tenants' sets that the other routers carry.

Repairs are typed changes: a missing entry is a ``prefix-list-entry`` ``add``; a shadowing
entry a ``prefix-list-entry`` (or ``route-map-entry``) ``remove``. When the shadowing deny has
the site's own prefix, removing it (the model removes a list's entries by prefix) takes the
site's permit entry too, which is put back at a new seq next to the old one, never the same: on
FRR 8.4.4, deleting one of two entries of the same prefix while the other stays leaves the
route-map's prefix index without that prefix, and the connected route stays unredistributed
until an entry of the prefix is created again (measured: not even ``no redistribute connected``
and ``redistribute connected route-map ...`` bring it back; a new seq does); a missing set element or drop
rule a ``tenant-firewall`` ``apply`` on the routers that lack it, with the tenant's current
isolation (used only if it changes nothing but that); a wrong mask, or a set element the
firewall apply cannot restore, re-provisions the site: its gateway address as configured goes
(``floating-address`` ``remove``, the typed removal of an interface address) and the site is
onboarded again with the right prefix and gateway (``tenant-site`` ``onboard``), which keeps
its prefix-list entry and seq and adds only what is missing, so the routers see exactly the
fix (the mask, the set elements). The repair is compiled
(``ani.intents.compile_changes``) and the diagnosis run again on the result: it must find
nothing, or TaskError says what is left. Nothing wrong found: TaskError listing what was
checked. (The scripted agent re-raises each as its AgentFailed, same message:
:mod:`ani.agents.scripted_diagnose`.)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from ipaddress import IPv4Interface, IPv4Network
from typing import Any

from ani.errors import TaskError
from ani.device.model import DeviceConfig, PrefixList, RouteMap

#: repair rounds (each compiles the changes so far and diagnoses again)
MAX_ROUNDS = 4


@dataclass
class Diagnosis:
    """``findings`` (what is wrong, one line each), ``checked`` (what was looked at),
    ``changes`` (the repair, typed change mappings in apply order)."""

    findings: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Site:
    tenant: str
    site: str
    edge: str
    interface: str
    address: IPv4Interface  # as configured
    prefix: IPv4Network  # as intended


def plist_decision(plist: PrefixList | None, prefix: IPv4Network) -> tuple[str, Any]:
    """FRR's verdict of a prefix-list on ``prefix``: ``("permit" | "deny", first matching
    entry or None)``; no list or no match is an implicit deny."""
    for e in plist.entries if plist is not None else []:
        if _matches(e, prefix):
            return e.action, e
    return "deny", None


def _matches(e: Any, prefix: IPv4Network) -> bool:
    if e.prefix is None:  # any
        return True
    if not prefix.subnet_of(e.prefix):
        return False
    if e.ge is None and e.le is None:
        return prefix.prefixlen == e.prefix.prefixlen
    lo = e.ge if e.ge is not None else e.prefix.prefixlen
    hi = e.le if e.le is not None else 32
    return lo <= prefix.prefixlen <= hi


def routemap_decision(cfg: DeviceConfig, rmap: RouteMap | None, prefix: IPv4Network) -> tuple[str, Any]:
    """A route-map's verdict on ``prefix`` (matching on prefix-lists only): the first entry
    whose ``match ip address prefix-list`` permits it (or that has no match) decides; no entry:
    deny."""
    for e in rmap.entries if rmap is not None else []:
        if e.match_prefix_list is None or plist_decision(cfg.prefix_lists.get(e.match_prefix_list), prefix)[0] == "permit":
            return e.action, e
    return "deny", None


def _locate(tenant: str, site: str, configs: dict[str, DeviceConfig]) -> tuple[str, str, IPv4Interface]:
    ifname = f"to-{site}"
    found = [(r, ifname, a) for r, cfg in sorted(configs.items()) for n, i in cfg.interfaces.items() if n == ifname
             for a in i.addresses]
    if not found:
        raise TaskError(f"troubleshoot {tenant}/{site}: no router has interface {ifname} with an address "
                          f"(checked the interfaces of {', '.join(sorted(configs))})")
    return found[0]


def _intended_prefix(tenant: str, edge: str, address: IPv4Interface, configs: dict[str, DeviceConfig]) -> IPv4Network:
    from ani.intents.inventory import tenant_list, tenant_set

    votes: Counter[IPv4Network] = Counter()
    name = tenant_set(tenant)
    for cfg in configs.values():
        if cfg.firewall is not None and name in cfg.firewall.sets:
            votes.update(e for e in cfg.firewall.sets[name].elements if address.ip in e and e.prefixlen < 32)
    plist = tenant_list(configs[edge])
    if plist in configs[edge].prefix_lists:
        votes.update(e.prefix for e in configs[edge].prefix_lists[plist].entries
                     if e.prefix is not None and e.action == "permit" and address.ip in e.prefix and e.ge is None and e.le is None)
    if not votes:
        return address.network
    best = max(votes.values())
    tops = [n for n, c in votes.items() if c == best]
    return address.network if address.network in tops else sorted(tops, key=lambda n: n.prefixlen)[-1]


def _symptom(req: dict[str, Any]) -> tuple[str, str]:
    for key in ("tenant", "site"):
        if not req.get(key):
            raise TaskError(f"symptom.yaml: missing field {key!r}")
    if not req.get("cannot_reach") and not req.get("reaches_other_tenant"):
        raise TaskError("symptom.yaml: neither 'cannot_reach' nor 'reaches_other_tenant' is given")
    return str(req["tenant"]), str(req["site"])


def _reprovision(s: _Site, configs: dict[str, DeviceConfig]) -> list[dict[str, Any]]:
    """Changes making the site exactly (edge, interface, prefix, gateway) through its service,
    keeping its prefix-list entry (seq) where it has one: the gateway address as configured goes
    (``floating-address`` ``remove``: the typed removal of an interface address; the site is no
    longer discoverable then), and the site is onboarded again, which adds only what is missing
    (the entry if there is none, the address with its right mask, the set elements)."""
    from ani.scenario.tasks.reference import onboard

    return [{"type": "floating-address", "action": "remove", "address": str(s.address), "router": s.edge,
             "interface": s.interface},
            onboard(s.tenant, s.site, s.edge, s.prefix, s.address.ip, s.interface)]


def _seq_near(lst: PrefixList, seq: int) -> int | None:
    """A free seq of ``lst`` right after ``seq`` (before the next entry), else right before it
    (after the previous one); None if neither exists (the pool then allocates one)."""
    used = sorted(e.seq for e in lst.entries)
    nxt = min((q for q in used if q > seq), default=seq + 10)
    prev = max((q for q in used if q < seq), default=0)
    after = [q for q in range(seq + 1, nxt) if q not in used]
    before = [q for q in range(seq - 1, prev, -1) if q not in used]
    return (after or before or [None])[0]


def _with_seq(change: dict[str, Any], seq: int | None) -> dict[str, Any]:
    return {**change, "seq": seq} if seq is not None else dict(change)


def _firewall_repair(s: _Site, routers: list[str], configs: dict[str, DeviceConfig]) -> list[dict[str, Any]] | None:
    """A ``tenant-firewall`` ``apply`` on ``routers`` with the tenant's current isolation, if it
    compiles and changes nothing on them but the tenant's set elements and drop rules."""
    from ani.intents import IntentError, Inventory, compile_changes
    from ani.intents.inventory import tenant_set

    fw = Inventory(configs).get_service(f"tenant-firewall/{s.tenant}")
    if fw is None:
        return None
    change = {"type": "tenant-firewall", "action": "apply", "tenant": s.tenant,
              "isolate_from": list(fw.spec.isolate_from or []), "routers": sorted(routers)}
    try:
        res = compile_changes([change], configs)
    except IntentError:
        return None
    name = tenant_set(s.tenant)
    for r in routers:
        before, after = configs[r].firewall, res.configs.get(r, configs[r]).firewall
        if before is None or after is None or before.forward_policy != after.forward_policy:
            return None
        if {k: v for k, v in before.sets.items() if k != name} != {k: v for k, v in after.sets.items() if k != name}:
            return None
        if s.prefix not in after.sets[name].elements:
            return None
        if any(x not in after.forward_rules for x in before.forward_rules):
            return None  # a rule dropped
        kept = [x for x in after.forward_rules if x in before.forward_rules]
        drops_only = all(x.action == "drop" for x in after.forward_rules)
        if not drops_only and kept != before.forward_rules:
            return None  # the existing rules' order changed around an accept rule
    return [change]


def _check(s: _Site, configs: dict[str, DeviceConfig], d: Diagnosis) -> list[dict[str, Any]]:
    """Findings of one pass into ``d``; returns the repair changes of this pass. Checked in the
    order an operator would: the gateway's mask, the edge's prefix-list, its route-map, then the
    tenant's firewall sets and drop rules; the first that finds a fault gives the repair."""
    cfg = configs[s.edge]
    d.checked.append(f"{s.edge} interface {s.interface}: {s.address} (the site's prefix {s.prefix})")
    if s.address.network != s.prefix:
        d.findings.append(f"{s.edge} interface {s.interface}: gateway {s.address} has the wrong mask (the site's prefix is {s.prefix})")
        return _reprovision(s, configs)
    repair = _check_prefix_list(s, cfg, d)
    if repair is None:
        repair = _check_route_map(s, cfg, d)
    return repair if repair is not None else _check_firewall(s, configs, d)


def _check_prefix_list(s: _Site, cfg: DeviceConfig, d: Diagnosis) -> list[dict[str, Any]] | None:
    """The edge's prefix-list behind ``redistribute connected``: the changes that let the site's
    prefix through (a missing entry added, a shadowing deny removed), None if it passes.
    Raises AgentFailed: no such prefix-list."""
    from ani.intents.inventory import tenant_list

    out: list[dict[str, Any]] = []
    plist = tenant_list(cfg)
    if plist is None:
        d.checked.append(f"{s.edge}: no prefix-list behind 'redistribute connected route-map'")
        d.findings.append(f"{s.edge}: 'redistribute connected' has no route-map with a prefix-list")
        raise TaskError("; ".join(d.findings) + " (no typed change repairs that)")
    lst = cfg.prefix_lists.get(plist)
    verdict, entry = plist_decision(lst, s.prefix)
    own = [e for e in (lst.entries if lst else []) if e.prefix == s.prefix and e.ge is None and e.le is None and e.action == "permit"]
    d.checked.append(f"{s.edge} prefix-list {plist} on {s.prefix}: {verdict}" + (f" by seq {entry.seq}" if entry else " (no entry matches)"))
    if verdict == "deny":
        add = {"type": "prefix-list-entry", "action": "add", "routers": [s.edge], "name": plist,
               "entry_action": "permit", "prefix": str(s.prefix)}
        if entry is None:  # nothing matches: the entry is missing; the next free seq is fine
            d.findings.append(f"{s.edge}: {plist} has no entry for {s.prefix} (it is never advertised)")
            return [add]
        what = f"{s.edge}: {plist} seq {entry.seq} deny {entry.prefix or 'any'}"
        rm: dict[str, Any] = {"type": "prefix-list-entry", "action": "remove", "routers": [s.edge], "name": plist,
                              "entry_action": "deny"}
        if entry.prefix is not None:
            rm["prefix"] = str(entry.prefix)
        if own:  # the site's own entry is there, a deny before it shadows it: the deny goes
            d.findings.append(f"{what} shadows seq {own[0].seq} permit {s.prefix}")
            out.append(rm)
            if entry.prefix == s.prefix:  # removing by prefix takes the permit too: put it back,
                # at another seq (FRR 8.4 keeps a redistributed route out when one of two entries
                # of its prefix is deleted and the other stays: see the module doc)
                out.append(_with_seq(add, _seq_near(lst, own[0].seq)))
        elif entry.prefix == s.prefix:  # the site's entry says deny: a permit entry instead
            d.findings.append(f"{what}: the site's own entry denies it")
            out += [rm, _with_seq(add, _seq_near(lst, entry.seq))]
        else:  # no entry of its own, a broader deny catches it: add the entry just before that deny
            used = {e.seq for e in lst.entries}
            free = [q for q in range(entry.seq - 1, 0, -1) if q not in used]
            if not free:
                raise TaskError(f"{what} catches {s.prefix}, which has no entry, and no seq is free before it")
            d.findings.append(f"{s.edge}: {plist} has no entry for {s.prefix}; {what} catches it")
            out.append({**add, "seq": free[0]})
        return out
    return None


def _check_route_map(s: _Site, cfg: DeviceConfig, d: Diagnosis) -> list[dict[str, Any]] | None:
    """The route-map on ``redistribute connected``: the removal of a deny entry that matches the
    site's prefix first, None if it passes."""
    rmap = cfg.bgp.ipv4_unicast.redistribute.get("connected") if cfg.bgp else None
    rverdict, rentry = routemap_decision(cfg, cfg.route_maps.get(rmap), s.prefix)
    d.checked.append(f"{s.edge} route-map {rmap} on {s.prefix}: {rverdict}" + (f" by seq {rentry.seq}" if rentry else ""))
    if rverdict == "deny" and rentry is not None:
        d.findings.append(f"{s.edge}: route-map {rmap} seq {rentry.seq} deny matches {s.prefix} first")
        spec = {"type": "route-map-entry", "action": "remove", "routers": [s.edge], "name": rmap, "seq": rentry.seq,
                "entry_action": "deny"}
        if rentry.match_prefix_list:
            spec["match_prefix_list"] = rentry.match_prefix_list
        return [spec]
    return None


def _check_firewall(s: _Site, configs: dict[str, DeviceConfig], d: Diagnosis) -> list[dict[str, Any]]:
    """The tenant's nftables set on every router holding it (the site's prefix in it) and its
    drop rules: the repair, or [] when all is present. Raises AgentFailed: the edge has no set."""
    from ani.intents.inventory import tenant_set

    name = tenant_set(s.tenant)
    holders = [r for r, c in sorted(configs.items()) if c.firewall is not None and name in c.firewall.sets]
    missing = [r for r in holders if s.prefix not in configs[r].firewall.sets[name].elements]
    d.checked.append(f"set {name} on {', '.join(holders) or 'no router'}: {s.prefix} "
                     + (f"missing on {', '.join(missing)}" if missing else "present"))
    if s.edge not in holders:
        d.findings.append(f"{s.edge} has no nftables set {name}")
        raise TaskError("; ".join(d.findings) + " (no typed change repairs that)")
    rules_missing = []
    wanted = {(x.saddr_set, x.daddr_set) for r in holders for x in configs[r].firewall.forward_rules
              if x.action == "drop" and name in (x.saddr_set, x.daddr_set)}
    for r in holders:
        fw = configs[r].firewall
        have = {(x.saddr_set, x.daddr_set) for x in fw.forward_rules if x.action == "drop"}
        lack = [w for w in wanted if w not in have and all(n in fw.sets for n in w if n)]
        if lack:
            rules_missing.append(r)
            d.findings.append(f"{r}: chain forward lacks " + ", ".join(f"@{a} -> @{b} drop" for a, b in sorted(lack, key=str)))
    d.checked.append(f"drop rules of {name} on {', '.join(holders)}: " + ("missing on " + ", ".join(rules_missing) if rules_missing else "all present"))
    if missing:
        d.findings.append(f"set {name} lacks {s.prefix} on {', '.join(missing)}")
    if missing or rules_missing:
        return _firewall_repair(s, sorted(set(missing) | set(rules_missing)), configs) or _reprovision(s, configs)
    return []


def diagnose(req: dict[str, Any], configs: dict[str, DeviceConfig]) -> Diagnosis:
    """The diagnosis of the symptom ``req`` (``symptom.yaml``'s mapping) on ``configs`` (see
    the module doc). Raises TaskError when nothing is wrong (listing what was checked), when
    what is wrong has no typed repair, or when the repair does not make the diagnosis clean."""
    from ani.intents import IntentError, compile_changes

    tenant, site = _symptom(req)
    edge, ifname, address = _locate(tenant, site, configs)
    prefix = _intended_prefix(tenant, edge, address, configs)
    d = Diagnosis()
    state = configs
    for _round in range(MAX_ROUNDS):
        edge, ifname, address = _locate(tenant, site, state)
        s = _Site(tenant, site, edge, ifname, address, prefix)
        found = len(d.findings)
        repair = _check(s, state, d)
        if not repair:
            if not d.changes:
                raise TaskError(f"troubleshoot {tenant}/{site}: found nothing wrong; checked: " + "; ".join(d.checked))
            return d
        d.changes += repair
        try:
            state = {**configs, **compile_changes(d.changes, configs).configs}
        except IntentError as exc:
            raise TaskError(f"troubleshoot {tenant}/{site}: the repair of {'; '.join(d.findings[found:])} "
                              f"does not compile: {exc}") from None
    raise TaskError(f"troubleshoot {tenant}/{site}: still wrong after {MAX_ROUNDS} repairs: {'; '.join(d.findings)}")


__all__ = ["Diagnosis", "diagnose", "plist_decision", "routemap_decision"]
