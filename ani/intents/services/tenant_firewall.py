"""Service class ``tenant-firewall``: a tenant's isolation in nftables.

The nftables set ``tenant_<tenant>`` (``table inet fw``) holding the tenant's site prefixes,
and ``drop`` rules in chain ``forward`` both ways between it and each tenant of
``isolate_from``, on each router of ``routers``.

::

    {"type": "tenant-firewall", "action": "apply", "tenant": "green", "isolate_from": ["blue"]}
    # -> every router with a firewall: set tenant_green { <green's site prefixes> };
    #    ip saddr @tenant_green ip daddr @tenant_blue drop; ip saddr @tenant_blue ip daddr @tenant_green drop

- changes: :class:`TenantFirewallApply`, :class:`TenantFirewallRemove`; service id
  ``tenant-firewall/<tenant>``.
- discover: each set ``tenant_<t>``; ``isolate_from`` the tenants ``o`` with a drop rule
  ``@tenant_<t> -> @tenant_<o>``; ``routers`` those that have the set.
- invariants: none of its own (the ``isolation`` pairs of sites are ``tenant-site``'s).
- shares: the chain ``forward`` of ``table inet fw`` (every tenant's rules), the sets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from ipaddress import IPv4Network

from ani.names import unknown
from ani.device.model import Firewall, FirewallRule, FirewallSet
from ani.errors import GeneratorError
from ani.intents.errors import IntentError
from ani.intents.services.base import ServiceClass, register
from ani.intents.services.common import (
    MAX_LIST_ITEMS,
    SET_PREFIX,
    Intent,
    IntentRemove,
    RouterName,
    Service,
    TenantName,
    inventory,
    is_remove,
    router,
    tenant_set,
)
from ani.intents.services.realism import layer_options

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig
    from ani.intents.pools import Pools
    from ani.scenario.build import Build, Layer

__all__ = ["TenantFirewall", "TenantFirewallApply", "TenantFirewallRemove"]


class _TenantFirewall(Intent):
    """A tenant's isolation: nftables set ``tenant_<tenant>`` holding the tenant's site
    prefixes, and ``drop`` rules both ways between it and each tenant of ``isolate_from``."""

    type: Literal["tenant-firewall"] = "tenant-firewall"
    tenant: TenantName
    isolate_from: list[TenantName] | None = Field(
        default=None, max_length=MAX_LIST_ITEMS, description="tenants whose traffic with this one is dropped (default: every other tenant)"
    )
    routers: list[RouterName] | None = Field(
        default=None, max_length=MAX_LIST_ITEMS, description="routers carrying the policy (default: every router that has a firewall)"
    )

    def service_id(self) -> str:
        return f"tenant-firewall/{self.tenant}"


class TenantFirewallApply(_TenantFirewall):
    """Create or update the tenant's set and drop rules."""

    action: Literal["apply"] = "apply"


class TenantFirewallRemove(IntentRemove, _TenantFirewall):
    """Remove the tenant's drop rules and set (refused while a rule of another tenant uses it)."""


def _routers(ch: Any, state: dict[str, DeviceConfig]) -> list[str]:
    return list(ch.routers) if ch.routers is not None else [r for r, c in state.items() if c.firewall is not None]



# -- generator -----------------------------------------------------------------------------------


def _generate(build: Build, layer: Layer) -> None:
    """Tenant isolation on every edge: nftables ``table inet fw`` with a set ``tenant_<t>`` of each
    tenant's site prefixes and, in chain ``forward`` (policy accept), ``ip saddr @tenant_<a> ip
    daddr @tenant_<b> drop`` for every ordered pair of tenants. One instance per tenant with
    sites: isolation is a baseline invariant between every pair of tenants, so ``density`` does
    not apply (it is not a count of partial policies). Existing sets and rules are kept.
    Raises GeneratorError if there is no tenant site yet (put a tenant-site layer first)."""
    layer_options(layer, {})
    tenants = [t for t, sites in build.tenants.items() if sites]
    if not tenants:
        raise GeneratorError("needs tenant sites: put a tenant-site layer before it")
    for e in build.routers("edge"):
        cfg = build.configs[e]
        fw = cfg.firewall.model_copy(deep=True) if cfg.firewall is not None else Firewall()
        for t in tenants:
            name = tenant_set(t)
            have = set(fw.sets[name].elements) if name in fw.sets else set()
            fw.sets[name] = FirewallSet(elements=sorted(have | {IPv4Network(x["prefix"]) for x in build.tenants[t]},
                                                        key=lambda n: int(n.network_address)))
        for a in tenants:
            for b in tenants:
                rule = FirewallRule(saddr_set=tenant_set(a), daddr_set=tenant_set(b), action="drop")
                if a != b and rule not in fw.forward_rules:
                    fw.forward_rules.append(rule)
        cfg.firewall = Firewall.model_validate(fw.model_dump())
    build.instances.setdefault("tenant-firewall", []).extend(f"tenant-firewall/{t}" for t in tenants)


@register
class TenantFirewall(ServiceClass):
    """Tenant firewall policy (see the module doc)."""

    name = "tenant-firewall"
    changes = (TenantFirewallApply, TenantFirewallRemove)
    id_format = "tenant-firewall/<tenant>"
    description = ("A tenant's isolation: nftables set tenant_<tenant> and drop rules both ways with each tenant "
                   "of isolate_from (default every other tenant). apply, remove.")
    shares = ("nftables table inet fw, chain forward (every tenant's drop rules)", "nftables sets tenant_<t>")

    def check(self, ch: Any, path: str, state: dict[str, DeviceConfig]) -> None:
        inv = inventory(state)
        sets = {n for c in state.values() if c.firewall for n in c.firewall.sets}
        for i, r in enumerate(ch.routers or []):
            router(state, r, f"{path}.routers.{i}")
        if is_remove(ch, tenant_set(ch.tenant) in sets, path, f"no service {ch.service_id()}"):
            return
        known = set(inv.tenants())  # a new tenant is allowed: apply creates its (empty) set
        for i, o in enumerate(ch.isolate_from or []):
            if o not in known or tenant_set(o) not in sets:
                raise IntentError("unknown-reference", unknown("tenant", o, sorted(known)) + f" (no nftables set {tenant_set(o)})",
                                  f"{path}.isolate_from.{i}")
            if o == ch.tenant:
                raise IntentError("invalid", f"tenant {o} cannot be isolated from itself", f"{path}.isolate_from.{i}")
        for i, r in enumerate(ch.routers or []):
            fw = state[r].firewall
            for o in ch.isolate_from or []:
                if fw is None or tenant_set(o) not in fw.sets:
                    raise IntentError("unknown-reference", f"{r} has no nftables set {tenant_set(o)}", f"{path}.routers.{i}")

    def named_tenants(self, ch: Any, known: set[str]) -> set[str]:
        """The tenant and those it is isolated from (every other known one by default)."""
        return {ch.tenant} | (set(ch.isolate_from) if ch.isolate_from is not None else known - {ch.tenant})

    def apply(self, ch: Any, path: str, state: dict[str, DeviceConfig], pools: Pools, alloc: dict[str, Any]) -> None:
        name = tenant_set(ch.tenant)
        if ch.action == "remove":
            for r in _routers(ch, state):
                fw = state[r].firewall
                if fw is None:
                    continue
                fw.forward_rules = [x for x in fw.forward_rules if name not in (x.saddr_set, x.daddr_set)]
                fw.sets.pop(name, None)
            return
        inv = inventory(state)
        others = ch.isolate_from if ch.isolate_from is not None else [t for t in inv.tenants() if t != ch.tenant]
        prefixes = [s.spec.prefix for s in inv.list_services("tenant-site") if s.spec.tenant == ch.tenant]
        for r in _routers(ch, state):
            cfg = state[r]
            fw = cfg.firewall.model_copy(deep=True) if cfg.firewall is not None else Firewall()
            elems = set(fw.sets[name].elements) if name in fw.sets else set()
            fw.sets[name] = FirewallSet(elements=sorted(elems | set(prefixes)))
            rules = [x for x in fw.forward_rules if not (x.action == "drop" and name in (x.saddr_set, x.daddr_set)
                                                          and {x.saddr_set, x.daddr_set} - {name} <= {tenant_set(o) for o in others})]
            for o in sorted(others):
                for s, d in ((name, tenant_set(o)), (tenant_set(o), name)):
                    rule = FirewallRule(saddr_set=s, daddr_set=d, action="drop")
                    if rule not in rules:
                        rules.append(rule)
            fw.forward_rules = rules
            cfg.firewall = fw

    def discover(self, configs: dict[str, DeviceConfig]) -> list[Service]:
        found: dict[str, tuple[set[str], list[str]]] = {}
        for r, cfg in configs.items():
            if cfg.firewall is None:
                continue
            for name in cfg.firewall.sets:
                if not name.startswith(SET_PREFIX):
                    continue
                tenant = name[len(SET_PREFIX) :]
                iso, routers = found.setdefault(tenant, (set(), []))
                routers.append(r)
                for rule in cfg.firewall.forward_rules:
                    if rule.action == "drop" and rule.saddr_set == name and rule.daddr_set and rule.daddr_set.startswith(SET_PREFIX):
                        iso.add(rule.daddr_set[len(SET_PREFIX) :])
        out = []
        for tenant, (iso, routers) in found.items():
            spec = TenantFirewallApply(tenant=tenant, isolate_from=sorted(iso), routers=routers)
            out.append(Service(spec.service_id(), "tenant-firewall", spec, routers))
        return out

    def generate(self, build: Build, layer: Layer) -> None:
        _generate(build, layer)
