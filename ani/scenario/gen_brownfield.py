"""Generator of ``scenarios/brownfield-small.yaml`` (the committed file is its output).

    python -m ani.scenario.gen_brownfield > scenarios/brownfield-small.yaml

Layout (AS 64500):

- cores ``c1``, ``c2``: BGP route reflectors, loopbacks 100.64.255.1 and .2;
- edges ``e1``..``e4``: loopbacks 100.64.255.11..14, iBGP to both reflectors over loopbacks;
- p2p /31 links: c1-c2 100.64.0.0/31, c1-ek 100.64.1.(2k-2)/31, c2-ek 100.64.2.(2k-2)/31
  (the core holds the even address); interface names ``to-<peer>``;
- OSPF area 0 on the p2p links and loopbacks, tuned timers (converges in about 1 s);
- tenants ``blue`` and ``red``: one site host per edge, blue on ek 198.18.1k.0/24, red
  198.18.2k.0/24, host .10, gateway .1 (the edge's ``to-<host>`` interface);
- shared state on every edge: one prefix-list ``PL-TENANTS`` (blue seq 10, red seq 20) used by
  route-map ``RM-TENANTS-OUT`` that filters ``redistribute connected``, and one nftables table
  ``inet fw`` with a set per tenant and a forward chain that drops inter-tenant traffic.
"""

from __future__ import annotations

import sys
from typing import Any

ASN = 64500
CORES = ("c1", "c2")
EDGES = ("e1", "e2", "e3", "e4")
TENANTS = {"blue": 1, "red": 2}  # tenant -> second octet digit of 198.18.<d><k>.0/24
POOL = "198.19.0.0/16"

OSPF_IF = (
    " ip ospf area 0\n"
    " ip ospf network point-to-point\n"
    " ip ospf hello-interval 1\n"
    " ip ospf dead-interval 3\n"
)
OSPF_ROUTER = (
    "router ospf\n"
    " ospf router-id {rid}\n"
    " timers throttle lsa all 0\n"
    " timers lsa min-arrival 0\n"
    " timers throttle spf 0 50 500\n"
    "exit\n"
)


def loopback(router: str) -> str:
    """Loopback address of a router of the brownfield."""
    if router in CORES:
        return f"100.64.255.{CORES.index(router) + 1}"
    return f"100.64.255.{EDGES.index(router) + 11}"


def p2p_links() -> list[tuple[str, str, str, str]]:
    """``(a, a_addr, b, b_addr)`` for each core-core and core-edge /31 link."""
    out = [("c1", "100.64.0.0/31", "c2", "100.64.0.1/31")]
    for ci, core in enumerate(CORES, start=1):
        for k, edge in enumerate(EDGES, start=1):
            base = 2 * (k - 1)
            out.append((core, f"100.64.{ci}.{base}/31", edge, f"100.64.{ci}.{base + 1}/31"))
    return out


def site_prefix(tenant: str, edge: str) -> str:
    return f"198.18.{TENANTS[tenant]}{EDGES.index(edge) + 1}.0/24"


def site_host(tenant: str, edge: str) -> str:
    return f"{tenant}{EDGES.index(edge) + 1}"


def _gw(prefix: str, last: int) -> str:
    return prefix.rsplit(".", 1)[0] + f".{last}"


def _interfaces(router: str) -> str:
    text = f"interface lo\n ip address {loopback(router)}/32\n ip ospf area 0\nexit\n!\n"
    for a, aa, b, ba in p2p_links():
        if router in (a, b):
            peer, addr = (b, aa) if router == a else (a, ba)
            text += f"interface to-{peer}\n ip address {addr}\n{OSPF_IF}exit\n!\n"
    if router in EDGES:
        for tenant in TENANTS:
            p = site_prefix(tenant, router)
            text += f"interface to-{site_host(tenant, router)}\n ip address {_gw(p, 1)}/24\nexit\n!\n"
    return text


def router_config(router: str) -> str:
    """FRR startup config (frr.conf text) of ``router``."""
    rid = loopback(router)
    # bgpd holds every peer after a config load until its route-map update timer fires
    # (5 s by default). 1 s keeps route-map/prefix-list changes applied automatically
    # (0 would disable that) and must come before any route-map (docs/performance.md).
    text = (
        f"frr defaults traditional\nhostname {router}\nno ipv6 forwarding\n"
        "bgp route-map delay-timer 1\n!\n"
    )
    text += _interfaces(router)
    text += OSPF_ROUTER.format(rid=rid) + "!\n"
    if router in EDGES:
        for seq, tenant in enumerate(TENANTS, start=1):
            text += f"ip prefix-list PL-TENANTS seq {seq * 10} permit {site_prefix(tenant, router)}\n"
        text += "!\nroute-map RM-TENANTS-OUT permit 10\n match ip address prefix-list PL-TENANTS\nexit\n!\n"
        group, peers = "RR", [loopback(c) for c in CORES]
    else:
        group, peers = "EDGES", [loopback(e) for e in EDGES]
    text += (
        f"router bgp {ASN}\n"
        f" bgp router-id {rid}\n"
        " coalesce-time 0\n"  # announce at once, not after bgpd's ~1 s subgroup coalesce timer
        " timers bgp 1 3\n"
        f" neighbor {group} peer-group\n"
        f" neighbor {group} remote-as {ASN}\n"
        f" neighbor {group} update-source lo\n"
        f" neighbor {group} timers connect 1\n"
    )
    for p in peers:
        text += f" neighbor {p} peer-group {group}\n"
    text += " !\n address-family ipv4 unicast\n"
    if router in EDGES:
        text += "  redistribute connected route-map RM-TENANTS-OUT\n"
    else:
        text += f"  neighbor {group} route-reflector-client\n"
    text += " exit-address-family\nexit\n!\n"
    return text


def edge_nftables() -> str:
    """The nftables ruleset of every edge: a set per tenant, inter-tenant traffic dropped."""
    text = "table inet fw {\n"
    for tenant in TENANTS:
        elems = ", ".join(site_prefix(tenant, e) for e in EDGES)
        text += (
            f"  set tenant_{tenant} {{\n"
            "    type ipv4_addr\n"
            "    flags interval\n"
            f"    elements = {{ {elems} }}\n"
            "  }\n"
        )
    text += (
        "  chain forward {\n"
        "    type filter hook forward priority 0; policy accept;\n"
        "    ip saddr @tenant_blue ip daddr @tenant_red drop\n"
        "    ip saddr @tenant_red ip daddr @tenant_blue drop\n"
        "  }\n"
        "}\n"
    )
    return text


def scenario() -> dict[str, Any]:
    """The brownfield-small scenario as a plain mapping."""
    routers: dict[str, Any] = {}
    for r in CORES + EDGES:
        spec: dict[str, Any] = {"daemons": ["zebra", "staticd", "ospfd", "bgpd"], "config": router_config(r)}
        if r in EDGES:
            spec["nftables"] = edge_nftables()
        routers[r] = spec
    links: list[dict[str, Any]] = [
        {"a": {"node": a, "ifname": f"to-{b}"}, "b": {"node": b, "ifname": f"to-{a}"}}
        for a, _aa, b, _ba in p2p_links()
    ]
    hosts: dict[str, Any] = {}
    tenants: dict[str, Any] = {}
    for tenant in TENANTS:
        sites = []
        for edge in EDGES:
            host, prefix = site_host(tenant, edge), site_prefix(tenant, edge)
            hosts[host] = {"gateway": _gw(prefix, 1)}
            links.append(
                {
                    "a": {"node": edge, "ifname": f"to-{host}"},
                    "b": {"node": host, "ifname": "eth0", "address": _gw(prefix, 10) + "/24"},
                }
            )
            sites.append({"host": host, "edge": edge, "prefix": prefix, "gateway": _gw(prefix, 1)})
        tenants[tenant] = {"sites": sites}
    return {
        "name": "brownfield-small",
        "description": (
            "Six FRR routers (2 core route reflectors, 4 edges), OSPF underlay, iBGP over loopbacks; "
            "two tenants (blue, red) with one site per edge, whose prefixes every edge advertises "
            "through ONE shared prefix-list/route-map and isolates with ONE shared nftables table."
        ),
        "topology": {
            "name": "brownfield-small",
            "routers": routers,
            "hosts": hosts,
            "links": links,
            "convergence": {"timeout_s": 30.0, "ospf": True, "bgp": True},
        },
        "tenants": tenants,
        "pools": {"sites": {"network": POOL, "prefixlen": 24}},
    }


HEADER = (
    "# brownfield-small: generated by `python -m ani.scenario.gen_brownfield`; edit the generator,\n"
    "# not this file (tests/unit/test_scenario_file.py checks they agree). See docs/scenarios.md.\n"
)


def render() -> str:
    """The YAML text of the scenario file."""
    from ani.scenario.generate import render_yaml

    return render_yaml(scenario(), header=HEADER)


def main() -> None:  # pragma: no cover - thin CLI
    sys.stdout.write(render())


if __name__ == "__main__":  # pragma: no cover
    main()
