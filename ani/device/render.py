"""DeviceConfig -> FRR configuration text, in the form FRR 8.4's ``show running-config`` prints it.

``render(m)`` is the body of the running config: from ``hostname`` to the last ``!``, without
the header (``Building configuration...``, ``Current configuration:``, ``frr version``,
``frr defaults``) and the final ``end``; :func:`frr_body` cuts exactly that out of FRR's output,
so ``render(parse(running)) == frr_body(running)``. As a startup config (``frr.conf``, ``vtysh
-f``) prefix it with ``frr defaults traditional``.

Order, as FRR prints it (see ``docs/device-model.md``): global lines; static routes; interfaces (those with a description or
an address first, then those with only OSPF settings, each group in interface-name order, lines
of a block sorted as text); ``router bgp``; ``router ospf``; prefix-lists; route-maps.
"""

from __future__ import annotations

from ani.device.model import REDIST_ORDER, Bgp, DeviceConfig, Interface, Ospf, Peer, ifname_key

#: the banner vtysh prints before a running config (not configuration: ``vtysh -m`` refuses it)
BANNER_PREFIXES = ("Building configuration", "Current configuration")
#: the header of a running config: the banner, then ``frr version`` and ``frr defaults``; the one
#: list every reader of FRR text drops (parse, frr_body, ``ani.device.state.frr_lines``)
HEADER_PREFIXES = (*BANNER_PREFIXES, "frr version", "frr defaults")


def frr_body(text: str) -> str:
    """FRR's ``show running-config`` without its header lines and the final ``end``.

    Dropped: blank lines, ``Building configuration...``, ``Current configuration:``,
    ``frr version ...``, ``frr defaults ...``, ``end``, and the ``!`` lines before the first
    configuration line. Everything else (including the ``!`` separators) is kept verbatim.
    """
    lines = [ln.rstrip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(HEADER_PREFIXES) and ln != "end"]
    while lines and lines[0] == "!":
        lines.pop(0)
    return "\n".join(lines) + "\n" if lines else ""


def normalise(text: str) -> str:
    """:func:`frr_body` without any ``!`` separator lines (a looser comparison)."""
    return "".join(ln + "\n" for ln in frr_body(text).splitlines() if ln.strip() != "!")


def render(m: DeviceConfig) -> str:
    """The FRR configuration text of ``m``. Raises ValueError if ``m.unmodelled`` is not empty."""
    if m.unmodelled:
        raise ValueError(f"cannot render a config with unmodelled lines: {m.unmodelled[:3]}")
    out: list[str] = [f"hostname {m.hostname}"]
    if not m.ip_forwarding:
        out.append("no ip forwarding")
    if not m.ipv6_forwarding:
        out.append("no ipv6 forwarding")
    if m.bgp_route_map_delay_timer is not None:
        out.append(f"bgp route-map delay-timer {m.bgp_route_map_delay_timer}")
    out.append("!")
    if m.static_routes:
        for r in m.static_routes:
            out.append(f"ip route {r.prefix} {r.nexthop}" + (f" {r.distance}" if r.distance != 1 else ""))
        out.append("!")
    order = sorted(m.interfaces, key=lambda n: (not m.interfaces[n].has_zebra_lines(), ifname_key(n)))
    for name in order:
        out += [f"interface {name}", *_interface_lines(m.interfaces[name]), "exit", "!"]
    if m.bgp is not None:
        out += [*_bgp_lines(m.bgp), "exit", "!"]
    if m.ospf is not None:
        out += ["router ospf", *_ospf_lines(m.ospf), "exit", "!"]
    if m.prefix_lists:
        for name, pl in m.prefix_lists.items():
            for e in pl.entries:
                what = "any" if e.prefix is None else str(e.prefix)
                ge = f" ge {e.ge}" if e.ge is not None else ""
                le = f" le {e.le}" if e.le is not None else ""
                out.append(f"ip prefix-list {name} seq {e.seq} {e.action} {what}{ge}{le}")
        out.append("!")
    for name, rm in m.route_maps.items():
        for e in rm.entries:
            out.append(f"route-map {name} {e.action} {e.seq}")
            if e.match_prefix_list is not None:
                out.append(f" match ip address prefix-list {e.match_prefix_list}")
            if e.set_community is not None:
                out.append(" set community " + " ".join(e.set_community) + (" additive" if e.set_community_additive else ""))
            if e.set_local_preference is not None:
                out.append(f" set local-preference {e.set_local_preference}")
            if e.set_metric is not None:
                out.append(f" set metric {e.set_metric}")
            out += ["exit", "!"]
    return "\n".join(out) + "\n"


def _interface_lines(i: Interface) -> list[str]:
    lines = [f"ip address {a}" for a in i.addresses]
    if i.description is not None:
        lines.append(f"description {i.description}")
    o = i.ospf
    if o.area is not None:
        lines.append(f"ip ospf area {o.area}")
    if o.network is not None:
        lines.append(f"ip ospf network {o.network}")
    if o.hello_interval is not None:
        lines.append(f"ip ospf hello-interval {o.hello_interval}")
    if o.dead_interval is not None:
        lines.append(f"ip ospf dead-interval {o.dead_interval}")
    if o.passive:
        lines.append("ip ospf passive")
    return [" " + ln for ln in sorted(lines)]  # vtysh sorts the lines of an interface block


def _ospf_lines(o: Ospf) -> list[str]:
    lines = []
    if o.router_id is not None:
        lines.append(f"ospf router-id {o.router_id}")
    if o.throttle_spf is not None:
        lines.append("timers throttle spf {} {} {}".format(*o.throttle_spf))
    if o.throttle_lsa_all is not None:
        lines.append(f"timers throttle lsa all {o.throttle_lsa_all}")
    if o.lsa_min_arrival is not None:
        lines.append(f"timers lsa min-arrival {o.lsa_min_arrival}")
    if o.passive_default:
        lines.append("passive-interface default")
    lines += [f"network {n.prefix} area {n.area}" for n in o.networks]
    return [" " + ln for ln in lines]


def _peer_lines(name: str, p: Peer, group: bool) -> list[str]:
    n = f" neighbor {name}"
    lines = [f"{n} peer-group"] if group else []
    if p.remote_as is not None:
        lines.append(f"{n} remote-as {p.remote_as}")
    if p.peer_group is not None:
        lines.append(f"{n} peer-group {p.peer_group}")
    if p.description is not None:
        lines.append(f"{n} description {p.description}")
    if p.shutdown:
        lines.append(f"{n} shutdown")
    if p.update_source is not None:
        lines.append(f"{n} update-source {p.update_source}")
    if p.timers is not None:
        lines.append(f"{n} timers {p.timers[0]} {p.timers[1]}")
    if p.timers_connect is not None:
        lines.append(f"{n} timers connect {p.timers_connect}")
    return lines


def _bgp_lines(b: Bgp) -> list[str]:
    lines = [f"router bgp {b.asn}"]
    if b.router_id is not None:
        lines.append(f" bgp router-id {b.router_id}")
    if not b.ebgp_requires_policy:
        lines.append(" no bgp ebgp-requires-policy")
    if b.coalesce_time is not None:
        lines.append(f" coalesce-time {b.coalesce_time}")
    if b.timers is not None:
        lines.append(" timers bgp {} {}".format(*b.timers))
    for name in b.peer_order():
        group = name in b.peer_groups
        lines += _peer_lines(name, (b.peer_groups if group else b.neighbors)[name], group)
    af = b.ipv4_unicast
    if not af.is_empty():
        lines += [" !", " address-family ipv4 unicast"]
        lines += [f"  network {n}" for n in af.networks]
        for src in REDIST_ORDER:
            if src in af.redistribute:
                rm = af.redistribute[src]  # type: ignore[index]
                lines.append(f"  redistribute {src}" + (f" route-map {rm}" if rm else ""))
        for name in b.peer_order():
            ap = af.peers.get(name)
            if ap is None:
                continue
            if ap.route_reflector_client:
                lines.append(f"  neighbor {name} route-reflector-client")
            if ap.prefix_list_in is not None:
                lines.append(f"  neighbor {name} prefix-list {ap.prefix_list_in} in")
            if ap.prefix_list_out is not None:
                lines.append(f"  neighbor {name} prefix-list {ap.prefix_list_out} out")
            if ap.route_map_in is not None:
                lines.append(f"  neighbor {name} route-map {ap.route_map_in} in")
            if ap.route_map_out is not None:
                lines.append(f"  neighbor {name} route-map {ap.route_map_out} out")
        lines.append(" exit-address-family")
    return lines
