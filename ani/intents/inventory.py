"""Existing service instances, discovered from the routers' DeviceConfigs.

::

    configs = network_configs(scenario)           # {router: DeviceConfig incl. firewall}
    inv = Inventory(configs)
    inv.list_services()                           # every Service, sorted by id
    inv.list_services("tenant-site")              # one type
    inv.get_service("tenant-site/blue/blue2")     # a Service, or None

A :class:`Service` is ``id``, ``type``, ``spec`` (the model of the change that would create it,
e.g. a :class:`TenantSiteOnboard`) and ``routers`` (where it is configured).

Each service class discovers its own instances (``discover`` of the classes in
``ani/intents/services/``, one module per class; what each recognises is in its module doc).
The inventory lists the instances of the classes that have changes (the service types an
agent can act on, ``SERVICE_TYPES``): ``underlay`` and ``ibgp`` discover instances for their
baseline invariants, which no change creates, so they are not services to list here
(``Inventory(configs, every_class=True)`` includes them).
"""

from __future__ import annotations

import re
from ipaddress import IPv4Network
from typing import Any

from ani.device.model import DeviceConfig, Firewall, FirewallRule, FirewallSet
from ani.intents.services.common import SET_PREFIX, Service, tenant_list, tenant_of, tenant_set

__all__ = ["SET_PREFIX", "Inventory", "Service", "network_configs", "parse_nft_text", "tenant_list", "tenant_set"]


# -- the network's configurations ------------------------------------------------------------------

_SET_RE = re.compile(r"set\s+(\S+)\s*\{(.*?)\}", re.S)
_ELEM_RE = re.compile(r"elements\s*=\s*\{([^}]*)")
_POLICY_RE = re.compile(r"policy\s+(accept|drop)\s*;")
_RULE_RE = re.compile(r"^\s*(?:ip saddr @(\S+)\s*)?(?:ip daddr @(\S+)\s*)?(accept|drop)\s*$")


def parse_nft_text(text: str) -> Firewall | None:
    """The Firewall of an ``nft -f`` script in the form ``ani.device.firewall.render`` writes
    (``table inet fw`` with IPv4 interval sets and a ``forward`` chain); None for an empty text.
    Raises ValueError on anything else."""
    if not text.strip():
        return None
    if "table inet fw" not in text:
        raise ValueError("no 'table inet fw' in the nftables text")
    sets = {}
    for m in _SET_RE.finditer(text):
        elems = _ELEM_RE.search(m.group(2))
        items = [e.strip() for e in elems.group(1).split(",") if e.strip()] if elems else []
        sets[m.group(1)] = FirewallSet(elements=[IPv4Network(e) for e in items])
    chain = text[text.index("chain forward") :] if "chain forward" in text else ""
    policy = _POLICY_RE.search(chain)
    rules = []
    for line in chain.splitlines()[1:]:
        line = line.strip()
        if not line or line.startswith(("type ", "}")):
            continue
        m = _RULE_RE.match(line)
        if m is None:
            raise ValueError(f"unsupported nftables rule: {line!r}")
        rules.append(FirewallRule(saddr_set=m.group(1), daddr_set=m.group(2), action=m.group(3)))
    return Firewall(sets=sets, forward_policy=policy.group(1) if policy else "accept", forward_rules=rules)


def network_configs(scenario: Any) -> dict[str, DeviceConfig]:
    """``{router: DeviceConfig}`` of a scenario's startup state: the FRR config
    (``scenario.device_configs``) with the firewall of the router's ``nftables`` text."""
    out = {}
    for name, cfg in scenario.device_configs.items():
        fw = parse_nft_text(scenario.topology.routers[name].nftables)
        out[name] = cfg.model_copy(deep=True, update={"firewall": fw}) if fw is not None else cfg.model_copy(deep=True)
    return out


# -- services --------------------------------------------------------------------------------------


class Inventory:
    """The services configured in ``configs`` (``{router: DeviceConfig}``); see the module doc."""

    def __init__(self, configs: dict[str, DeviceConfig], *, every_class: bool = False) -> None:
        self.configs = configs
        self.every_class = every_class
        self._services = {s.id: s for s in self._discover()}

    def list_services(self, service_type: str | None = None) -> list[Service]:
        """Every service (of ``service_type`` if given), sorted by id."""
        return [self._services[k] for k in sorted(self._services) if service_type in (None, self._services[k].type)]

    def get_service(self, service_id: str) -> Service | None:
        return self._services.get(service_id)

    def tenants(self) -> list[str]:
        """Tenants with a set ``tenant_<t>`` or a site, sorted."""
        names = {s.spec.tenant for s in self._services.values() if s.type in ("tenant-site", "tenant-firewall")}
        return sorted(names)

    def tenant_of(self, prefix: IPv4Network) -> str | None:
        """The tenant whose nftables set holds a network overlapping ``prefix`` (None: no set)."""
        return tenant_of(self.configs, prefix)

    # -- discovery -------------------------------------------------------------------------------

    def _discover(self) -> list[Service]:
        """Every class's instances, classes in registration order."""
        from ani.intents.services import service_classes

        out: list[Service] = []
        for cls in service_classes():
            if cls.changes or self.every_class:
                out += cls.discover(self.configs)
        return out
