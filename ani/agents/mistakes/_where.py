"""Where things are, for the mistake kinds' ``expected_breaks`` (a private helper: not a kind).

The baseline invariants name hosts (``ReachCheck.src``), addresses (``ReachCheck.dst``,
``LoopbackCheck.address``), prefixes and routers (``RouteCheck``); the kinds' targets name
prefixes and routers. This module joins them through the routers' configurations before the
run (``{router: DeviceConfig}``):

    att = Attachments(invariants, before, moves)   # moves: {site: new edge | None}, the task's
    att.router_of_host("red1")          # "e1": the router whose interface to-red1 the host is on
    att.router_of_address(addr)         # "e1": the router with an interface network holding addr
    att.host_in("red1", prefix)         # whether a host's address is inside prefix
    att.reach_touches(check, prefix)    # whether an end of a reach check is inside prefix
    att.far_end_router(check, prefix)   # the router of a reach check's end outside prefix
    site_prefix_breaks(invariants, before, prefix, unless_at="e1")   # what needs prefix announced

A site's host is named as the site (its edge interface is ``to-<site>``), so a task's moves
and removals (``moves``, from :func:`ani.agents.mistakes._changes.site_moves`, kept in the
mistake's target) say where it is after the correct change. A host's address is the
destination address of a reach check to it (``dst_node``); a host that is never a destination
(the first site in the topology's order) is taken as inside its attachment network's half that
holds the gateway (the scenario's hosts sit next to their
gateway, ``.10`` of a ``/24``). Checks are read by their fields (``kind``, ``expect``), so this
module does not import the observer.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ani.device.model import DeviceConfig


def site_interfaces(before: dict[str, DeviceConfig]) -> dict[str, tuple[str, IPv4Network, IPv4Address]]:
    """``{host: (router, network, gateway)}`` for every router interface ``to-<host>`` whose
    ``<host>`` is not a router (a site or a shared-service host), its first address."""
    out = {}
    for r in sorted(before):
        for ifname, iface in before[r].interfaces.items():
            name = ifname[3:] if ifname.startswith("to-") else None
            if name and name not in before and iface.addresses:
                a = iface.addresses[0]
                out.setdefault(name, (r, a.network, a.ip))
    return out


class Attachments:
    """Hosts, addresses and the routers they hang off (see the module doc)."""

    def __init__(self, invariants: list[Any], before: dict[str, DeviceConfig],
                 moves: dict[str, str | None] | None = None) -> None:
        self.before = before
        self.sites = site_interfaces(before)
        self.moves = dict(moves or {})
        self.addresses: dict[str, IPv4Address] = {}
        for c in invariants:
            if getattr(c, "kind", None) == "reach" and c.dst_node:
                self.addresses.setdefault(c.dst_node, c.dst)

    def router_of_host(self, host: str) -> str | None:
        """The router whose interface ``to-<host>`` faces it once the task's changes are made
        (``moves``: ``{site: new edge, or None if removed}``); else the router of its address."""
        if host in self.moves:
            return self.moves[host]
        if host in self.sites:
            return self.sites[host][0]
        addr = self.addresses.get(host)
        return self.router_of_address(addr) if addr is not None else None

    def router_of_address(self, addr: IPv4Address) -> str | None:
        """The router with a non-loopback interface network (shorter than /32) holding ``addr``."""
        for r in sorted(self.before):
            for ifname, iface in self.before[r].interfaces.items():
                if ifname != "lo" and any(a.network.prefixlen < 32 and addr in a.network for a in iface.addresses):
                    return r
        return None

    def host_in(self, host: str, prefix: IPv4Network) -> bool:
        """Whether ``host``'s address is inside ``prefix`` (see the module doc for a host never
        named as a destination)."""
        addr = self.addresses.get(host)
        if addr is not None:
            return addr in prefix
        if host not in self.sites:
            return False
        _r, net, gw = self.sites[host]
        if net.prefixlen >= prefix.prefixlen:
            return net.subnet_of(prefix)
        return prefix.subnet_of(net) and gw in prefix

    def reach_touches(self, check: Any, prefix: IPv4Network) -> bool:
        """Whether one end of a reach check (its source host or its destination) is in ``prefix``."""
        return check.dst in prefix or self.host_in(check.src, prefix)

    def far_end_router(self, check: Any, prefix: IPv4Network) -> str | None:
        """The router of the end of a reach check that is NOT in ``prefix`` (None if unknown)."""
        if check.dst in prefix:
            return self.router_of_host(check.src)
        if check.dst_node:
            return self.router_of_host(check.dst_node)
        return self.router_of_address(check.dst)


def reaches(invariants: list[Any], *, expect: bool = True) -> list[Any]:
    """The reach checks of ``invariants`` with ``expect``."""
    return [c for c in invariants if getattr(c, "kind", None) == "reach" and c.expect is expect]


def routes(invariants: list[Any], *, expect: bool = True) -> list[Any]:
    """The route checks of ``invariants`` with ``expect``."""
    return [c for c in invariants if getattr(c, "kind", None) == "route" and c.expect is expect]


def names_in_order(invariants: list[Any], chosen: list[Any]) -> list[str]:
    """The names of ``chosen``, in ``invariants``' order, each once."""
    ids = {id(c) for c in chosen}
    out: list[str] = []
    for c in invariants:
        if id(c) in ids and c.name not in out:
            out.append(c.name)
    return out


def held_by_static(check: Any, before: dict[str, DeviceConfig]) -> bool:
    """Whether a route check (expected present) holds whatever BGP does: its router has a
    static route to exactly its prefix and the check asks nothing of a BGP path (no
    ``local_pref`` / ``community``, no protocol but ``static``)."""
    cfg = before.get(check.router)
    if cfg is None or check.local_pref is not None or check.community is not None:
        return False
    if check.protocol not in (None, "static"):
        return False
    return any(r.prefix == check.prefix for r in cfg.static_routes)


def site_prefix_breaks(invariants: list[Any], before: dict[str, DeviceConfig], prefix: IPv4Network,
                       *, unless_at: str | None = None, moves: dict[str, str | None] | None = None) -> list[str]:
    """The invariants that need the site at ``prefix`` announced and attached where it was:
    route checks (expected present) of a prefix inside it on a router other than ``unless_at``
    (but those a static route of the router holds: :func:`held_by_static`),
    reach checks (expected to succeed) with an end inside it whose other end is not on
    ``unless_at`` (traffic that stays on that router does not need the announcement)."""
    att = Attachments(invariants, before, moves)
    hit = [c for c in routes(invariants) if c.prefix.subnet_of(prefix) and c.router != unless_at
           and not held_by_static(c, before)]
    for c in reaches(invariants):
        if att.reach_touches(c, prefix) and (unless_at is None or att.far_end_router(c, prefix) != unless_at):
            hit.append(c)
    return names_in_order(invariants, hit)
