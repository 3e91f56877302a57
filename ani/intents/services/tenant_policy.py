"""Service class ``tenant-policy``: BGP routing policy per tenant through ONE shared route-map.

On every tenant edge (a router whose ``redistribute connected`` route-map matches a prefix-list)
the iBGP peer-group towards the route reflectors (``RR`` in brownfield-small) sends its routes
through the shared route-map ``RM-POLICY-OUT``::

    ip prefix-list PL-POL-blue-10 seq 10 permit 198.18.11.0/24     (one list per instance)
    route-map RM-POLICY-OUT permit 10                               (one entry per instance)
     match ip address prefix-list PL-POL-blue-10
     set community 64500:101
     set local-preference 200
    route-map RM-POLICY-OUT permit 65535                            (the catch-all: every route
    !                                                                no policy names passes as is)
    router bgp 64500
     address-family ipv4 unicast
      neighbor RR route-map RM-POLICY-OUT out

The remote edges see the tenant's prefixes with that community / local preference (the route
reflectors keep both). What tenant isolation does not protect: the route-map is one object for
every tenant: an entry at another tenant's seq replaces it, a ``deny`` without a match or over a
too-broad list drops every tenant's routes after it, a removed catch-all (seq 65535) drops every
prefix no entry names (every tenant without a policy, and the external routes).

Changes (``type: tenant-policy``)::

    {action: apply, tenant: blue, seq: 10, prefixes: [198.18.11.0/24], local_pref: 200,
     community: "64500:101"}          prefixes: None = every prefix of the set tenant_blue
    {action: remove, tenant: blue, seq: 10}

Service id ``tenant-policy/<tenant>/<seq>``. Baseline invariants: for each prefix of each
instance, a ``route`` check on one remote tenant edge (the first, sorted, other than the
prefix's own edge) with the local preference / community the route-map gives the prefix on its
edge (FRR's first-match order, so a shadowed entry is graded by what really applies), service
``tenant-policy/<tenant>/<seq>``.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from ani.names import unknown
from ani.device.model import BgpAfPeer, PrefixList, PrefixListEntry, RouteMap, RouteMapEntry, community
from ani.errors import GeneratorError
from ani.intents.errors import IntentError
from ani.intents.services.common import MAX_LIST_ITEMS, Service
from ani.intents.services._shared import (
    InstanceClass,
    ibgp_group,
    known_tenants,
    origin_router,
    route_map_result,
    tenant_edges,
    tenant_prefixes,
)
from ani.intents.services.base import register
from ani.observer.checks import RouteCheck

ROUTE_MAP = "RM-POLICY-OUT"
#: the catch-all entry's seq (permit, no match); instances use 1..65534
CATCH_ALL = 65535
LIST_PREFIX = "PL-POL-"

TenantName = Field(pattern=r"^[a-z][a-z0-9_]{0,15}$", description="a tenant of the scenario (e.g. blue)")


def list_name(tenant: str, seq: int) -> str:
    """The prefix-list of instance (``tenant``, ``seq``)."""
    return f"{LIST_PREFIX}{tenant}-{seq}"


class _Policy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["tenant-policy"] = "tenant-policy"
    tenant: str = TenantName
    seq: StrictInt = Field(ge=1, le=CATCH_ALL - 1, description="the entry of RM-POLICY-OUT (65535 is the catch-all)")

    def service_id(self) -> str:
        return f"tenant-policy/{self.tenant}/{self.seq}"


class TenantPolicyApply(_Policy):
    """Give ``prefixes`` of ``tenant`` a community and / or local preference on every edge."""

    prefixes: list[IPv4Network] | None = Field(default=None, max_length=MAX_LIST_ITEMS, description="None: every prefix of the set tenant_<tenant>")
    local_pref: StrictInt | None = Field(default=None, ge=0, le=4294967295)
    community: str | None = Field(default=None, description="AA:NN")
    action: Literal["apply"] = "apply"

    @field_validator("community")
    @classmethod
    def _community(cls, v: str | None) -> str | None:
        return None if v is None else community(v)

    @field_validator("prefixes")
    @classmethod
    def _prefixes(cls, v: list[IPv4Network] | None) -> list[IPv4Network] | None:
        if v is None:
            return None
        if not v:
            raise ValueError("prefixes: give at least one prefix, or leave it out for every prefix of the tenant")
        if len(set(v)) != len(v):
            raise ValueError("prefixes: duplicate prefix")
        return sorted(v, key=lambda n: (n.network_address, n.prefixlen))

    @model_validator(mode="after")
    def _something(self) -> TenantPolicyApply:
        if self.local_pref is None and self.community is None:
            raise ValueError("a tenant policy sets local_pref, community or both")
        return self


class TenantPolicyRemove(_Policy):
    action: Literal["remove"] = "remove"


def _edges(state: dict[str, Any], path: str) -> list[str]:
    edges = [r for r in tenant_edges(state) if ibgp_group(state[r]) is not None]
    if not edges:
        raise IntentError("invalid", "no tenant edge with an iBGP peer-group to send the policy on", path)
    return edges


def _entry_owner(cfg: Any, seq: int) -> str | None:
    rm = cfg.route_maps.get(ROUTE_MAP)
    for e in rm.entries if rm else []:
        if e.seq == seq:
            return e.match_prefix_list or "(no match)"
    return None


@register
class TenantPolicy(InstanceClass):
    name = "tenant-policy"
    id_format = "tenant-policy/<tenant>/<seq>"
    description = ("BGP policy of a tenant: an entry of the shared route-map RM-POLICY-OUT (every edge, out to the "
                   "route reflectors) matching the tenant's prefixes and setting a community and/or a local "
                   "preference; seq 65535 is the catch-all every other route passes through.")
    pinned = {"apply": ("prefixes",)}
    changes = (TenantPolicyApply, TenantPolicyRemove)
    shares = (f"route-map {ROUTE_MAP} (one entry per instance, catch-all permit {CATCH_ALL})",
              "neighbor <iBGP peer-group> route-map RM-POLICY-OUT out on every edge",
              "community values <asn>:<n>")

    # -- check / allocate / apply ------------------------------------------------------------

    def check(self, ch: Any, path: str, state: dict[str, Any]) -> None:
        edges = _edges(state, path)
        owner = _entry_owner(state[edges[0]], ch.seq)
        mine = list_name(ch.tenant, ch.seq)
        if isinstance(ch, TenantPolicyRemove):
            if owner != mine:
                raise IntentError("service-not-found", f"no {ROUTE_MAP} entry {ch.seq} of tenant {ch.tenant}", f"{path}.seq")
            return
        if owner is not None and owner != mine:
            raise IntentError("seq-conflict", f"{ROUTE_MAP} seq {ch.seq} is used by {owner}", f"{path}.seq")
        known = tenant_prefixes(state, ch.tenant)
        if known is None:
            raise IntentError("unknown-reference", f"tenant {ch.tenant} has no set tenant_{ch.tenant}; "
                              + unknown("tenant", ch.tenant, known_tenants(state)), f"{path}.tenant")
        for i, p in enumerate(ch.prefixes or []):
            if not any(p.subnet_of(k) for k in known):
                raise IntentError("invalid", f"{p} is not a prefix of tenant {ch.tenant}", f"{path}.prefixes.{i}")
        for r in edges:
            group = ibgp_group(state[r])
            af = state[r].bgp.ipv4_unicast.peers.get(group)
            if af is not None and af.route_map_out not in (None, ROUTE_MAP):
                raise IntentError("invalid", f"{r}: neighbor {group} already sends through route-map "
                                  f"{af.route_map_out}", path)

    def allocate(self, ch: Any, path: str, state: dict[str, Any], pools: Any, alloc: dict[str, Any]) -> Any:
        if isinstance(ch, TenantPolicyApply) and ch.prefixes is None:
            prefixes = tenant_prefixes(state, ch.tenant) or []
            if not prefixes:
                raise IntentError("invalid", f"tenant {ch.tenant} has no prefix to apply a policy to", f"{path}.prefixes")
            alloc[f"{path}.prefixes"] = [str(p) for p in prefixes]
            return ch.model_copy(update={"prefixes": sorted(prefixes, key=lambda n: (n.network_address, n.prefixlen))})
        return ch

    def apply(self, ch: Any, path: str, state: dict[str, Any], pools: Any, alloc: dict[str, Any]) -> None:
        name = list_name(ch.tenant, ch.seq)
        for r in _edges(state, path):
            cfg = state[r]
            group = ibgp_group(cfg)
            rm = cfg.route_maps.get(ROUTE_MAP)
            entries = [e for e in (rm.entries if rm else [RouteMapEntry(seq=CATCH_ALL, action="permit")]) if e.seq != ch.seq]
            if isinstance(ch, TenantPolicyRemove):
                cfg.prefix_lists.pop(name, None)
                if all(e.seq == CATCH_ALL and e.match_prefix_list is None for e in entries):  # the last policy
                    cfg.route_maps.pop(ROUTE_MAP, None)
                    af = cfg.bgp.ipv4_unicast.peers.get(group)
                    if af is not None and af.route_map_out == ROUTE_MAP:
                        cfg.bgp.ipv4_unicast.peers[group] = af.model_copy(update={"route_map_out": None})
                else:
                    cfg.route_maps[ROUTE_MAP] = RouteMap(entries=entries)
                continue
            cfg.prefix_lists[name] = PrefixList(entries=[
                PrefixListEntry(seq=10 * (i + 1), action="permit", prefix=p) for i, p in enumerate(ch.prefixes or [])])
            entries.append(RouteMapEntry(seq=ch.seq, action="permit", match_prefix_list=name,
                                         set_community=[ch.community] if ch.community else None,
                                         set_local_preference=ch.local_pref))
            cfg.route_maps[ROUTE_MAP] = RouteMap(entries=entries)
            af = cfg.bgp.ipv4_unicast.peers.get(group) or BgpAfPeer()
            cfg.bgp.ipv4_unicast.peers[group] = af.model_copy(update={"route_map_out": ROUTE_MAP})

    # -- discovery / invariants --------------------------------------------------------------

    def discover(self, configs: dict[str, Any]) -> list[Service]:
        found: dict[str, Service] = {}
        for r in tenant_edges(configs):
            cfg = configs[r]
            rm = cfg.route_maps.get(ROUTE_MAP)
            for e in rm.entries if rm else []:
                name = e.match_prefix_list
                if e.action != "permit" or not name or not name.startswith(LIST_PREFIX) or name not in cfg.prefix_lists:
                    continue
                tenant = name[len(LIST_PREFIX):].rsplit("-", 1)[0]
                comms = [c for c in (e.set_community or []) if c != "none"]
                try:
                    spec = TenantPolicyApply(
                        tenant=tenant, seq=e.seq, local_pref=e.set_local_preference,
                        community=comms[0] if comms else None,
                        prefixes=[x.prefix for x in cfg.prefix_lists[name].entries if x.action == "permit" and x.prefix])
                except ValueError:
                    continue  # not an entry this class writes (no set, several communities, a foreign name)
                sid = spec.service_id()
                if sid in found:
                    found[sid].routers.append(r)
                else:
                    found[sid] = Service(id=sid, type=self.name, spec=spec, routers=[r])
        return [found[k] for k in sorted(found)]

    def invariants(self, configs: dict[str, Any], topology: Any) -> list[RouteCheck]:
        edges = [r for r in tenant_edges(configs) if ROUTE_MAP in configs[r].route_maps]
        out: list[RouteCheck] = []
        seen: set[str] = set()
        for svc in self.discover(configs):
            for p in svc.spec.prefixes or []:
                origin = origin_router(configs, p, edges)
                remote = next((r for r in edges if r != origin), None)
                if origin is None or remote is None or str(p) in seen:
                    continue
                seen.add(str(p))
                decided = route_map_result(configs[origin], configs[origin].route_maps[ROUTE_MAP], p)
                if decided is None or decided.action == "deny":
                    out.append(RouteCheck(router=remote, prefix=p, expect=False, service=svc.id))
                    continue
                comms = [c for c in (decided.set_community or []) if c != "none" and ":" in c]
                out.append(RouteCheck(router=remote, prefix=p, expect=True, local_pref=decided.set_local_preference,
                                      community=comms[0] if comms else None, service=svc.id))
        return out

    def named_tenants(self, ch: Any, known: set[str]) -> set[str]:
        return {ch.tenant}

    def named_networks(self, ch: Any) -> list[IPv4Network]:
        return list(getattr(ch, "prefixes", None) or [])

    # -- generator -----------------------------------------------------------------------------

    def generate(self, build: Any, layer: Any) -> None:
        """``layer.density`` entries of RM-POLICY-OUT, each over 1..3 sites of one tenant
        (tenants Zipf-drawn, sites not yet under a policy); seqs 10 apart, a trap's seq right
        after the previous one (no room to insert between); communities ``<asn>:<100+i>``,
        local preferences drawn from options ``local_prefs`` (default 50, 150, 200, 300; None
        = community only). Options: ``seq_step`` (10). Raises GeneratorError when the tenants
        have fewer sites than instances or no edge has an iBGP peer-group."""
        rng = build.rng(layer.stream)
        step = int(layer.options.get("seq_step", 10))
        lps = list(layer.options.get("local_prefs", [50, 150, 200, 300, None]))
        free = {t: [IPv4Network(s["prefix"]) for s in sites] for t, sites in build.tenants.items()}
        total = sum(len(v) for v in free.values())
        if layer.density > total:
            raise GeneratorError(f"layer {self.name}: density {layer.density} needs {layer.density} tenant sites "
                                 f"without a policy; the build has {total}")
        if not [r for r in tenant_edges(build.configs) if ibgp_group(build.configs[r]) is not None]:
            raise GeneratorError(f"layer {self.name}: no tenant edge with an iBGP peer-group")
        seq = 0
        for i in range(layer.density):
            tenants = [t for t, v in free.items() if v]
            tenant = build.zipf_choice(rng, tenants)
            spare = sum(len(v) for v in free.values()) - (layer.density - i - 1)  # leave one site per instance to come
            k = max(1, min(len(free[tenant]), spare, build.zipf_choice(rng, [1, 2, 3])))
            chosen = rng.sample(free[tenant], k)
            free[tenant] = [p for p in free[tenant] if p not in chosen]
            trap = i > 0 and rng.random() < layer.trap_rate
            seq = seq + 1 if trap else seq + step
            if seq >= CATCH_ALL:
                raise GeneratorError(f"layer {self.name}: seq {seq} passes the catch-all {CATCH_ALL}; lower seq_step")
            ch = TenantPolicyApply(tenant=tenant, seq=seq, prefixes=chosen, community=f"{build.asn}:{100 + i + 1}",
                                   local_pref=rng.choice(lps))
            try:
                self.check(ch, f"layers.{self.name}.{i}", build.configs)
                self.apply(ch, f"layers.{self.name}.{i}", build.configs, None, {})
                build.instances.setdefault(self.name, []).append(ch.service_id())
            except IntentError as exc:
                raise GeneratorError(f"layer {self.name}: {exc}") from None
        for r in build.configs:
            build.configs[r] = build.configs[r].canonical()
