"""FRR configuration text (``show running-config`` or ``frr.conf``) -> DeviceConfig.

Lines the model does not cover are never dropped: they are kept in ``DeviceConfig.unmodelled``
as ``"<block> / <line>"`` (``"router bgp 64500 / address-family ipv4 unicast / neighbor X
soft-reconfiguration inbound"``; a top-level line as itself), so a caller can detect them;
``render`` refuses a config that has any. Skipped as header: blank and ``!`` lines,
``Building configuration...``, ``Current configuration:``, ``frr version``, ``frr defaults``,
``end``, and the ``exit`` / ``exit-address-family`` lines that close blocks. The model has one
distance per static (prefix, next hop) (the YANG list key): a further ``ip route`` line for a
prefix and next hop already read (FRR keeps one per distance) is unmodelled.

Also read (the startup-config spellings FRR accepts and prints differently): ``router-id`` under
``router ospf``, ``passive-interface IFNAME`` (an interface's ``ip ospf passive``), and the
ipv4-unicast statements written directly under ``router bgp``.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address
from typing import Any

from ani.device.model import DeviceConfig
from ani.device.render import HEADER_PREFIXES

_TOP = {
    "route": re.compile(r"^ip route (\S+) (\S+)(?: (\d+))?$"),
    "pl": re.compile(r"^ip prefix-list (\S+) seq (\d+) (permit|deny) (\S+)(?: ge (\d+))?(?: le (\d+))?$"),
    "delay": re.compile(r"^bgp route-map delay-timer (\d+)$"),
    "fwd": re.compile(r"^(no )?ip(v6)? forwarding$"),
    "hostname": re.compile(r"^hostname (\S+)$"),
    "interface": re.compile(r"^interface (\S+)$"),
    "bgp": re.compile(r"^router bgp (\d+)$"),
    "ospf": re.compile(r"^router ospf$"),
    "rm": re.compile(r"^route-map (\S+) (permit|deny) (\d+)$"),
}
_IF = {
    "description": re.compile(r"^description (.+)$"),
    "address": re.compile(r"^ip address (\d+\.\d+\.\d+\.\d+/\d+)$"),
    "area": re.compile(r"^ip ospf area (\S+)$"),
    "network": re.compile(r"^ip ospf network (point-to-point|point-to-multipoint|non-broadcast|broadcast)$"),
    "hello_interval": re.compile(r"^ip ospf hello-interval (\d+)$"),
    "dead_interval": re.compile(r"^ip ospf dead-interval (\d+)$"),
    "passive": re.compile(r"^ip ospf passive$"),
}
_OSPF = {
    "router_id": re.compile(r"^(?:ospf )?router-id (\S+)$"),
    "passive": re.compile(r"^passive-interface (\S+)$"),
    "spf": re.compile(r"^timers throttle spf (\d+) (\d+) (\d+)$"),
    "lsa_all": re.compile(r"^timers throttle lsa all (\d+)$"),
    "min_arrival": re.compile(r"^timers lsa min-arrival (\d+)$"),
    "network": re.compile(r"^network (\S+) area (\S+)$"),
}
_BGP = {
    "router_id": re.compile(r"^bgp router-id (\S+)$"),
    "coalesce_time": re.compile(r"^coalesce-time (\d+)$"),
    "timers": re.compile(r"^timers bgp (\d+) (\d+)$"),
    "ebgp_requires_policy": re.compile(r"^(no )?bgp ebgp-requires-policy$"),
    "neighbor": re.compile(r"^neighbor (\S+) (.+)$"),
    "af": re.compile(r"^address-family (.+)$"),
}
_PEER = {
    "group": re.compile(r"^peer-group$"),
    "peer_group": re.compile(r"^peer-group (\S+)$"),
    "remote_as": re.compile(r"^remote-as (\d+|internal|external)$"),
    "description": re.compile(r"^description (.+)$"),
    "shutdown": re.compile(r"^shutdown$"),
    "update_source": re.compile(r"^update-source (\S+)$"),
    "timers_connect": re.compile(r"^timers connect (\d+)$"),
    "timers": re.compile(r"^timers (\d+) (\d+)$"),
}
_AF = {
    "network": re.compile(r"^network (\S+)$"),
    "redistribute": re.compile(r"^redistribute (kernel|connected|static|ospf)(?: route-map (\S+))?$"),
    "rrc": re.compile(r"^neighbor (\S+) route-reflector-client$"),
    "route_map": re.compile(r"^neighbor (\S+) route-map (\S+) (in|out)$"),
    "prefix_list": re.compile(r"^neighbor (\S+) prefix-list (\S+) (in|out)$"),
}
_RM = {
    "match_pl": re.compile(r"^match ip address prefix-list (\S+)$"),
    "community": re.compile(r"^set community (.+?)( additive)?$"),
    "local_pref": re.compile(r"^set local-preference (\d+)$"),
    "metric": re.compile(r"^set metric (\d+)$"),
}


def parse(text: str) -> DeviceConfig:
    """Parse FRR configuration text. Raises ValueError if there is no ``hostname`` line or a
    modelled line carries a value the model refuses (pydantic's ValidationError)."""
    return _Parser().run(text)


def _is_ipv4(s: str) -> bool:
    try:
        IPv4Address(s)
        return True
    except ValueError:
        return False


class _Parser:
    def __init__(self) -> None:
        self.d: dict[str, Any] = {"interfaces": {}, "static_routes": [], "prefix_lists": {}, "route_maps": {}}
        self.unmodelled: list[str] = []
        self.routes: set[tuple[str, str]] = set()  # (prefix, next hop) of the static routes read
        self.block: str | None = None  # header of the current top-level block
        self.kind: str | None = None  # interface | bgp | ospf | rm | unknown
        self.sub: str | None = None  # bgp: the address-family header ("ipv4 unicast" or other)
        self.cur: dict[str, Any] = {}

    def run(self, text: str) -> DeviceConfig:
        for raw in text.splitlines():
            line = raw.rstrip()
            stripped = line.strip()
            if not stripped or stripped == "!" or line == "end" or line.startswith(HEADER_PREFIXES):
                continue
            if line[0] != " ":
                self.kind = self.block = self.sub = None
                if line != "exit":
                    self.top(line)
                continue
            if self.kind is None:
                self.unmodelled.append(line.strip())
            else:
                self.inner(" ".join(stripped.split()))
        if "hostname" not in self.d:
            raise ValueError("no 'hostname' line")
        return DeviceConfig.model_validate({**self.d, "unmodelled": self.unmodelled})

    def keep(self, line: str) -> None:
        parts = [p for p in (self.block, self.sub and f"address-family {self.sub}", line) if p]
        self.unmodelled.append(" / ".join(parts))

    # -- top level ---------------------------------------------------------------------------

    def top(self, line: str) -> None:
        d = self.d
        if m := _TOP["hostname"].match(line):
            d["hostname"] = m.group(1)
        elif m := _TOP["fwd"].match(line):
            d["ipv6_forwarding" if m.group(2) else "ip_forwarding"] = m.group(1) is None
        elif m := _TOP["delay"].match(line):
            d["bgp_route_map_delay_timer"] = int(m.group(1))
        elif m := _TOP["route"].match(line):
            key = (m.group(1), m.group(2))
            if key in self.routes:  # the model has one distance per (prefix, next hop)
                self.unmodelled.append(line)
            else:
                self.routes.add(key)
                d["static_routes"].append({"prefix": m.group(1), "nexthop": m.group(2), "distance": int(m.group(3) or 1)})
        elif m := _TOP["pl"].match(line):
            name, seq, action, prefix, ge, le = m.groups()
            entry = {"seq": int(seq), "action": action, "prefix": None if prefix == "any" else prefix}
            entry |= {k: int(v) for k, v in (("ge", ge), ("le", le)) if v is not None}
            d["prefix_lists"].setdefault(name, {"entries": []})["entries"].append(entry)
        elif m := _TOP["interface"].match(line):
            self.block, self.kind = line, "interface"
            self.cur = self.interface(m.group(1))
        elif m := _TOP["bgp"].match(line):
            self.block, self.kind = line, "bgp"
            if "bgp" in d:  # a second BGP instance: keep it whole
                self.kind = "unknown"
                self.unmodelled.append(line)
            else:
                d["bgp"] = {"asn": int(m.group(1)), "peer_groups": {}, "neighbors": {},
                            "ipv4_unicast": {"networks": [], "redistribute": {}, "peers": {}}}
        elif _TOP["ospf"].match(line):
            self.block, self.kind = line, "ospf"
            d.setdefault("ospf", {"networks": []})
        elif m := _TOP["rm"].match(line):
            self.block, self.kind = line, "rm"
            self.cur = {"seq": int(m.group(3)), "action": m.group(2)}
            d["route_maps"].setdefault(m.group(1), {"entries": []})["entries"].append(self.cur)
        else:
            self.block, self.kind = line, "unknown"
            self.unmodelled.append(line)

    def interface(self, name: str) -> dict[str, Any]:
        return self.d["interfaces"].setdefault(name, {"addresses": [], "ospf": {}})

    # -- inside blocks -----------------------------------------------------------------------

    def inner(self, line: str) -> None:
        handler = {"interface": self.in_interface, "ospf": self.in_ospf, "bgp": self.in_bgp, "rm": self.in_rm}
        if self.kind not in handler or not handler[self.kind](line):
            self.keep(line)

    def in_interface(self, line: str) -> bool:
        i = self.cur
        for key, rx in _IF.items():
            if m := rx.match(line):
                if key == "description":
                    i["description"] = m.group(1)
                elif key == "address":
                    i["addresses"].append(m.group(1))
                elif key == "passive":
                    i["ospf"]["passive"] = True
                elif key in ("hello_interval", "dead_interval"):
                    i["ospf"][key] = int(m.group(1))
                else:
                    i["ospf"][key] = m.group(1)
                return True
        return False

    def in_ospf(self, line: str) -> bool:
        o = self.d["ospf"]
        if m := _OSPF["router_id"].match(line):
            o["router_id"] = m.group(1)
        elif m := _OSPF["passive"].match(line):
            if m.group(1) == "default":
                o["passive_default"] = True
            else:
                self.interface(m.group(1))["ospf"]["passive"] = True
        elif m := _OSPF["spf"].match(line):
            o["throttle_spf"] = tuple(int(g) for g in m.groups())
        elif m := _OSPF["lsa_all"].match(line):
            o["throttle_lsa_all"] = int(m.group(1))
        elif m := _OSPF["min_arrival"].match(line):
            o["lsa_min_arrival"] = int(m.group(1))
        elif m := _OSPF["network"].match(line):
            o["networks"].append({"prefix": m.group(1), "area": m.group(2)})
        else:
            return False
        return True

    def in_bgp(self, line: str) -> bool:
        b = self.d["bgp"]
        if line == "exit-address-family":
            self.sub = None
            return True
        if self.sub is not None:
            return self.sub == "ipv4 unicast" and self.in_af(line)
        if m := _BGP["af"].match(line):
            self.sub = m.group(1)
            if self.sub != "ipv4 unicast":
                self.unmodelled.append(f"{self.block} / {line}")
            return True
        if m := _BGP["router_id"].match(line):
            b["router_id"] = m.group(1)
            return True
        if m := _BGP["coalesce_time"].match(line):
            b["coalesce_time"] = int(m.group(1))
            return True
        if m := _BGP["timers"].match(line):
            b["timers"] = (int(m.group(1)), int(m.group(2)))
            return True
        if m := _BGP["ebgp_requires_policy"].match(line):
            b["ebgp_requires_policy"] = m.group(1) is None
            return True
        if self.in_af(line):  # ipv4-unicast statements written directly under router bgp
            return True
        if m := _BGP["neighbor"].match(line):
            return self.in_neighbor(b, m.group(1), m.group(2))
        return False

    def in_neighbor(self, b: dict[str, Any], name: str, rest: str) -> bool:
        if _PEER["group"].match(rest):
            if _is_ipv4(name):
                return False
            b["peer_groups"].setdefault(name, {})
            return True
        if _is_ipv4(name):
            peer = b["neighbors"].setdefault(name, {})
        elif name in b["peer_groups"]:
            peer = b["peer_groups"][name]
        else:
            return False
        for key, rx in _PEER.items():
            if m := rx.match(rest):
                if key == "shutdown":
                    peer["shutdown"] = True
                elif key == "timers_connect":
                    peer[key] = int(m.group(1))
                elif key == "timers":
                    peer[key] = (int(m.group(1)), int(m.group(2)))
                elif key == "remote_as":
                    v = m.group(1)
                    peer[key] = int(v) if v.isdigit() else v
                else:
                    peer[key] = m.group(1)
                return True
        return False

    def in_af(self, line: str) -> bool:
        af = self.d["bgp"]["ipv4_unicast"]
        if m := _AF["network"].match(line):
            af["networks"].append(m.group(1))
        elif m := _AF["redistribute"].match(line):
            af["redistribute"][m.group(1)] = m.group(2)
        elif m := _AF["rrc"].match(line):
            af["peers"].setdefault(m.group(1), {})["route_reflector_client"] = True
        elif m := _AF["route_map"].match(line):
            af["peers"].setdefault(m.group(1), {})[f"route_map_{m.group(3)}"] = m.group(2)
        elif m := _AF["prefix_list"].match(line):
            af["peers"].setdefault(m.group(1), {})[f"prefix_list_{m.group(3)}"] = m.group(2)
        else:
            return False
        return True

    def in_rm(self, line: str) -> bool:
        e = self.cur
        if m := _RM["match_pl"].match(line):
            e["match_prefix_list"] = m.group(1)
        elif m := _RM["community"].match(line):
            e["set_community"] = m.group(1).split()
            e["set_community_additive"] = m.group(2) is not None
        elif m := _RM["local_pref"].match(line):
            e["set_local_preference"] = int(m.group(1))
        elif m := _RM["metric"].match(line):
            e["set_metric"] = int(m.group(1))
        else:
            return False
        return True
