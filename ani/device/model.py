# size: the FRR configuration model: one pydantic model per configuration block, with its validation
"""A structured model of the FRR 8.4 configuration the scenarios use.

Shape (every field optional unless noted; ``None`` / empty means "not configured"):

```
DeviceConfig
  hostname: str
  ip_forwarding, ipv6_forwarding: bool                  (False renders "no ip[v6] forwarding")
  bgp_route_map_delay_timer: int | None                 ("bgp route-map delay-timer N", 0..600 s;
                                                         5 is FRR's default: canonical None)
  interfaces: {ifname: Interface}
    description: str | None                             (at most 4080 bytes of UTF-8)
    addresses: [IPv4Interface]                          (sorted as FRR prints them: by text;
                                                         not in 0/8, 127/8 or 224/3)
    ospf: InterfaceOspf(area, network, hello_interval, dead_interval, passive)
  static_routes: [StaticRoute(prefix, nexthop, distance=1)]   (one route per (prefix, nexthop))
    nexthop: IPv4 address | interface name | "Null0" | "blackhole" | "reject"
  ospf: Ospf | None
    router_id (not 0.0.0.0), passive_default, networks: [OspfNetwork(prefix, area)],
    throttle_spf: (delay, init_hold, max_hold) ms 0..600000, throttle_lsa_all: int, lsa_min_arrival: int
  bgp: Bgp | None
    asn (required), router_id (not 0.0.0.0), coalesce_time: ms 0..4294967295 ("coalesce-time N"),
    timers: (keepalive, holdtime) s: holdtime 0 or 3..65535, keepalive <= holdtime // 3
    ebgp_requires_policy: bool                          (False renders "no bgp ebgp-requires-policy")
    peer_groups: {name: Peer}        neighbors: {IPv4 address: Peer}
      Peer: remote_as (1..4294967295 | "internal" | "external"), peer_group, description, shutdown,
            update_source (interface name | IPv4 address), timers (keepalive, holdtime) s
            ("neighbor X timers K H", checked like "timers bgp"), timers_connect
      (a peer-group name is not an IPv4 address; "neighbor NAME description TEXT" fits in one
       FRR line)
    ipv4_unicast: BgpAf
      networks: [IPv4Network], redistribute: {kernel|connected|static|ospf: route-map | None},
      peers: {peer-group name or neighbor address: BgpAfPeer(route_reflector_client,
              prefix_list_in, prefix_list_out, route_map_in, route_map_out)}
  prefix_lists: {name: PrefixList(entries: [PrefixListEntry(seq, action, prefix, ge, le)])}
  route_maps: {name: RouteMap(entries: [RouteMapEntry(seq, action, match_prefix_list,
               set_community, set_community_additive, set_local_preference, set_metric)])}
  firewall: Firewall | None          (nftables ``table inet fw``; not part of the FRR text)
    sets: {name: FirewallSet(elements: [IPv4Network])}   (names nft accepts: see nft_names.py)
    forward_policy: accept|drop, forward_rules: [FirewallRule(saddr_set, daddr_set, action)]
  unmodelled: [str]   lines parse() could not place ("<block> / <line>"), never rendered
```

Canonical form (applied by validators, so equal configurations compare equal): keyed
collections are dicts (equality ignores their order; prefix-lists and route-maps keep their
creation order, which is the order FRR prints them in); addresses, static routes, networks and
list entries are sorted the way FRR prints them; interfaces without any setting are dropped
(FRR does not print them); a static route's distance 1 is the default; the values FRR 8.4
(``-F traditional``) takes as its defaults and then never prints are None: ``bgp route-map
delay-timer 5``, ``timers bgp 60 180`` (a neighbor's ``timers 60 180`` is printed and kept),
``ip ospf hello-interval 10``, ``timers throttle spf 0 50 5000``, ``timers throttle lsa all
5000``, ``timers lsa min-arrival 1000``; numbers are
written the way FRR prints them back: a decimal OSPF area and a community ``AA:NN`` without
leading zeros, a community with a well-known value by its name (``65535:65281`` is
``no-export``).

FRR's limits (measured on FRR 8.4.4, see ``docs/device-model.md``) are the model's: what FRR
refuses or rewrites at apply time is refused here, so that validation (A2's ``validate``, A3's
service checks) catches it before anything reaches a router. Lines are limited to
:data:`MAX_LINE_BYTES` bytes and :data:`MAX_COMMAND_WORDS` words (a description, a long ``set
community``).
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Interface, IPv4Network
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ani.device.nft_names import check_set_name

Action = Literal["permit", "deny"]
Asn = Annotated[int, Field(ge=1, le=4294967295)]
RemoteAs = Asn | Literal["internal", "external"]
Uint16 = Annotated[int, Field(ge=0, le=65535)]
SpfMs = Annotated[int, Field(ge=0, le=600000)]
OspfNetworkType = Literal["point-to-point", "point-to-multipoint", "non-broadcast", "broadcast"]
RedistSource = Literal["kernel", "connected", "static", "ospf"]

#: FRR's route-type order, used for ``redistribute`` lines.
REDIST_ORDER: tuple[str, ...] = ("kernel", "connected", "static", "ospf")
#: FRR 8.4's ``bgp route-map delay-timer`` (seconds) when none is configured; FRR never prints it.
DEFAULT_ROUTE_MAP_DELAY = 5
#: Static next hops that discard traffic (may not be mixed with forwarding next hops).
DISCARD_NEXTHOPS: tuple[str, ...] = ("Null0", "blackhole", "reject")
#: The longest configuration line (bytes of UTF-8, with its block indentation) FRR 8.4 takes
#: through ``vtysh -f``, which frr-reload uses to add lines: a line of 4094 or 4095 bytes hangs
#: vtysh, a longer one is cut at 4095 and refused (measured with FRR 8.4.4).
MAX_LINE_BYTES = 4093
#: The longest command (bytes of UTF-8, its indentation included) ``vtysh -c`` takes, which
#: frr-reload uses to remove lines (`` no <line>``): 4095 bytes hang vtysh, longer are refused.
MAX_COMMAND_BYTES = 4094
#: The most words one FRR command may have (vtysh refuses more: "% Unknown command"), e.g.
#: ``set community`` with 253 values (252 with ``additive``) (measured with FRR 8.4.4).
MAX_COMMAND_WORDS = 255
#: FRR 8.4's defaults (``-F traditional``) that it never prints when configured: canonical None.
DEFAULT_BGP_TIMERS = (60, 180)
DEFAULT_HELLO_INTERVAL = 10
DEFAULT_THROTTLE_SPF = (0, 50, 5000)
DEFAULT_THROTTLE_LSA_ALL = 5000
DEFAULT_LSA_MIN_ARRIVAL = 1000

_AREA_RE = re.compile(r"^(?:\d+|(?:0|[1-9]\d{0,2})(?:\.(?:0|[1-9]\d{0,2})){3})$")
_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,62}$")
_IFNAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,14}$")
_TEXT_RE = re.compile(r"^\S+(?: \S+)*$")  # FRR collapses runs of blanks in free text
_COMMUNITY_NUM_RE = re.compile(r"^(\d+):(\d+)$")
#: the communities FRR 8.4 prints by name (``set community 65535:1`` reads back as accept-own)
_WELL_KNOWN = {
    "internet": 0,
    "graceful-shutdown": 0xFFFF0000,
    "accept-own": 0xFFFF0001,
    "route-filter-translated-v4": 0xFFFF0002,
    "route-filter-v4": 0xFFFF0003,
    "route-filter-translated-v6": 0xFFFF0004,
    "route-filter-v6": 0xFFFF0005,
    "llgr-stale": 0xFFFF0006,
    "no-llgr": 0xFFFF0007,
    "accept-own-nexthop": 0xFFFF0008,
    "blackhole": 0xFFFF029A,
    "no-export": 0xFFFFFF01,
    "no-advertise": 0xFFFFFF02,
    "local-AS": 0xFFFFFF03,
    "no-peer": 0xFFFFFF04,
}
_BY_VALUE = {v: k for k, v in _WELL_KNOWN.items()}
#: interface addresses zebra refuses (``% Invalid address``): 0/8, 127/8, 224/4 and 240/4
_MARTIANS = (IPv4Network("0.0.0.0/8"), IPv4Network("127.0.0.0/8"), IPv4Network("224.0.0.0/3"))


def ifname_key(name: str) -> tuple:
    """FRR's interface-name order (``if_cmp_name``): digit runs compare as numbers."""
    return tuple(int(p) if i % 2 else p for i, p in enumerate(re.split(r"(\d+)", name)))


def community_key(value: str) -> int:
    """The 32-bit value of a community; FRR prints a community list in this order."""
    if value in _WELL_KNOWN:
        return _WELL_KNOWN[value]
    high, low = value.split(":")
    return (int(high) << 16) | int(low)


def _check(regex: re.Pattern[str], what: str, value: str | None) -> str | None:
    if value is not None and not regex.match(value):
        raise ValueError(f"invalid {what}: {value!r}")
    return value


def check_line(line: str, what: str, removed_by_no: bool = False) -> None:
    """Raise ValueError unless FRR can take the configuration line ``line`` (with its
    indentation): at most :data:`MAX_LINE_BYTES` bytes of UTF-8 and :data:`MAX_COMMAND_WORDS`
    words; with ``removed_by_no`` (frr-reload removes or changes such a line by sending ``no
    <line>``) that command must also fit in :data:`MAX_COMMAND_BYTES`, or the line could be
    added but never changed again."""
    n = len(line.encode("utf-8"))
    # frr-reload sends the removal as the line with "no " after its indentation
    limit = min(MAX_LINE_BYTES, MAX_COMMAND_BYTES - len("no ")) if removed_by_no else MAX_LINE_BYTES
    if n > limit:
        why = " (frr-reload changes it with 'no ...', which must fit too)" if removed_by_no else ""
        raise ValueError(f"{what} is too long: its FRR line {line[:40].strip()!r}... is {n} bytes "
                         f"of UTF-8, FRR takes at most {limit}{why}")
    words = len(line.split())
    if words > MAX_COMMAND_WORDS:
        raise ValueError(f"{what} has too many words: its FRR line has {words}, FRR takes at most "
                         f"{MAX_COMMAND_WORDS}")


def ospf_area(value: str | None) -> str | None:
    """An OSPF area as FRR takes and prints it: a decimal 0..4294967295 (written without
    leading zeros, as FRR prints it) or a dotted quad of 0..255 without leading zeros (kept as
    written: ``0`` and ``0.0.0.0`` stay distinct). Raises ValueError otherwise."""
    if value is None:
        return None
    _check(_AREA_RE, "OSPF area", value)
    if "." not in value:
        if int(value) > 4294967295:
            raise ValueError(f"invalid OSPF area: {value!r} (a decimal area is at most 4294967295)")
        return str(int(value))
    if any(int(o) > 255 for o in value.split(".")):
        raise ValueError(f"invalid OSPF area: {value!r} (a dotted area has octets 0..255)")
    return value


def community(value: str) -> str:
    """A community as FRR prints it: a well-known name, or ``AA:NN`` (each 0..65535, no leading
    zeros); a number with a well-known value becomes its name. Raises ValueError otherwise."""
    if value in _WELL_KNOWN:
        return value
    m = _COMMUNITY_NUM_RE.match(value)
    if not m or int(m.group(1)) > 65535 or int(m.group(2)) > 65535:
        raise ValueError(f"invalid community: {value!r} (AA:NN with AA and NN in 0..65535, or a "
                         f"well-known name: {', '.join(_WELL_KNOWN)})")
    v = (int(m.group(1)) << 16) | int(m.group(2))
    return _BY_VALUE.get(v, f"{int(m.group(1))}:{int(m.group(2))}")


def _unprinted(default: object) -> classmethod:  # type: ignore[type-arg]
    """A field validator for a value FRR never prints when it is its default ``default``: that
    value is None (canonical), so a configuration that writes it reads back equal."""
    def none_if_default(cls: type, v: object) -> object:
        same = tuple(v) == default if isinstance(v, (list, tuple)) else v == default
        return None if v is not None and same else v

    return classmethod(none_if_default)


def _router_id(value: IPv4Address | None) -> IPv4Address | None:
    if value is not None and int(value) == 0:
        raise ValueError("router-id 0.0.0.0 is not a router id (FRR takes it as none and prints nothing)")
    return value


def _bgp_timers(v: tuple[int, int] | None, line: str, unprinted_default: bool) -> tuple[int, int] | None:
    """``(keepalive, holdtime)`` of ``timers bgp K H`` or ``neighbor X timers K H`` (``line``
    names which); with ``unprinted_default`` (``timers bgp``) FRR's default 60 180 is None: FRR
    never prints it (a neighbor's ``timers 60 180`` is printed, measured on FRR 8.4.4). Raises
    ValueError for a hold time of 1 or 2 (FRR refuses it) or a keepalive above a third of the
    hold time (FRR lowers it to that, so it would never read back)."""
    if v is None:
        return None
    keepalive, hold = v
    if hold in (1, 2):
        raise ValueError(f"{line} {keepalive} {hold}: the hold time must be 0 or 3..65535 "
                         "(FRR: 'hold time value must be either 0 or greater than 3')")
    if keepalive > hold // 3:
        raise ValueError(f"{line} {keepalive} {hold}: the keepalive must be at most a third "
                         f"of the hold time ({hold // 3}); FRR would set it to that")
    return None if unprinted_default and tuple(v) == DEFAULT_BGP_TIMERS else v


def _by_seq(entries: list) -> list:
    """Entries sorted by ``seq``; a seq used twice is an error."""
    if len({e.seq for e in entries}) != len(entries):
        raise ValueError("duplicate seq")
    return sorted(entries, key=lambda e: e.seq)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


# -- interfaces ------------------------------------------------------------------------------


class InterfaceOspf(_Model):
    """``ip ospf ...`` lines of an interface. ``area``: as written (``0``, ``0.0.0.1``)."""

    area: str | None = None
    network: OspfNetworkType | None = None
    hello_interval: int | None = Field(default=None, ge=1, le=65535)
    dead_interval: int | None = Field(default=None, ge=1, le=65535)
    passive: bool = False

    @field_validator("area")
    @classmethod
    def _area(cls, v: str | None) -> str | None:
        return ospf_area(v)

    _hello = field_validator("hello_interval")(_unprinted(DEFAULT_HELLO_INTERVAL))
    _network = field_validator("network")(_unprinted("broadcast"))  # the default type

    def is_empty(self) -> bool:
        return self == InterfaceOspf()


class Interface(_Model):
    """One ``interface NAME`` block."""

    description: str | None = None
    addresses: list[IPv4Interface] = Field(default_factory=list)
    ospf: InterfaceOspf = Field(default_factory=InterfaceOspf)

    @field_validator("description")
    @classmethod
    def _desc(cls, v: str | None) -> str | None:
        _check(_TEXT_RE, "description", v)
        if v is not None:
            check_line(f" description {v}", "the interface description")
        return v

    @field_validator("addresses")
    @classmethod
    def _sort(cls, v: list[IPv4Interface]) -> list[IPv4Interface]:
        if len(set(v)) != len(v):
            raise ValueError("duplicate interface address")
        for a in v:
            if any(a.ip in net for net in _MARTIANS):
                raise ValueError(f"interface address {a} is not a unicast host address (FRR refuses "
                                 "0.0.0.0/8, 127.0.0.0/8 and 224.0.0.0/3: '% Invalid address')")
        return sorted(v, key=str)  # vtysh sorts an interface block's lines as text

    def is_empty(self) -> bool:
        return self.description is None and not self.addresses and self.ospf.is_empty()

    def has_zebra_lines(self) -> bool:
        """True if zebra prints this interface (description or address); FRR lists those first."""
        return self.description is not None or bool(self.addresses)


# -- static routes ---------------------------------------------------------------------------


class StaticRoute(_Model):
    """``ip route PREFIX NEXTHOP [DISTANCE]``."""

    prefix: IPv4Network
    nexthop: str
    distance: int = Field(default=1, ge=1, le=255)

    @field_validator("nexthop")
    @classmethod
    def _nexthop(cls, v: str) -> str:
        if v in DISCARD_NEXTHOPS:
            return v
        try:
            return str(IPv4Address(v))
        except ValueError:
            return _check(_IFNAME_RE, "next hop", v)  # type: ignore[return-value]

    def nexthop_kind(self) -> int:
        """FRR's next-hop type order within a distance: interface, address, discard."""
        if self.nexthop in DISCARD_NEXTHOPS:
            return 2
        try:
            IPv4Address(self.nexthop)
            return 1
        except ValueError:
            return 0

    def sort_key(self) -> tuple:
        """FRR's order: prefix length, address, distance, next-hop kind, next hop."""
        kind = self.nexthop_kind()
        addr = int(IPv4Address(self.nexthop)) if kind == 1 else 0
        return (self.prefix.prefixlen, self.prefix.network_address, self.distance, kind, addr, self.nexthop)


# -- OSPF ------------------------------------------------------------------------------------


class OspfNetwork(_Model):
    """``network PREFIX area AREA``."""

    prefix: IPv4Network
    area: str

    @field_validator("area")
    @classmethod
    def _area(cls, v: str | None) -> str | None:
        return ospf_area(v)


class Ospf(_Model):
    """``router ospf``. Per-interface passive is ``InterfaceOspf.passive`` (FRR 8.4 turns
    ``passive-interface IFNAME`` into ``ip ospf passive``); only ``passive-interface default``
    stays here."""

    router_id: IPv4Address | None = None
    passive_default: bool = False
    networks: list[OspfNetwork] = Field(default_factory=list)
    throttle_spf: tuple[SpfMs, SpfMs, SpfMs] | None = None
    throttle_lsa_all: int | None = Field(default=None, ge=0, le=5000)
    lsa_min_arrival: int | None = Field(default=None, ge=0, le=600000)

    @field_validator("networks")
    @classmethod
    def _sort(cls, v: list[OspfNetwork]) -> list[OspfNetwork]:
        if len({n.prefix for n in v}) != len(v):
            raise ValueError("duplicate OSPF network prefix")
        return sorted(v, key=lambda n: (n.prefix.network_address, n.prefix.prefixlen))

    @field_validator("router_id")
    @classmethod
    def _rid(cls, v: IPv4Address | None) -> IPv4Address | None:
        return _router_id(v)

    _spf = field_validator("throttle_spf")(_unprinted(DEFAULT_THROTTLE_SPF))
    _lsa = field_validator("throttle_lsa_all")(_unprinted(DEFAULT_THROTTLE_LSA_ALL))
    _arrival = field_validator("lsa_min_arrival")(_unprinted(DEFAULT_LSA_MIN_ARRIVAL))


# -- BGP -------------------------------------------------------------------------------------


class Peer(_Model):
    """A BGP neighbor or peer-group (the global, non-address-family settings)."""

    remote_as: RemoteAs | None = None
    peer_group: str | None = None  # neighbors only: the group it belongs to
    description: str | None = None
    shutdown: bool = False
    update_source: str | None = None  # interface name or IPv4 address
    timers: tuple[Uint16, Uint16] | None = None  # (keepalive, holdtime) s: "neighbor X timers K H"
    timers_connect: int | None = Field(default=None, ge=1, le=65535)

    @field_validator("timers")
    @classmethod
    def _timers(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        return _bgp_timers(v, "neighbor timers", unprinted_default=False)

    @field_validator("description")
    @classmethod
    def _desc(cls, v: str | None) -> str | None:
        return _check(_TEXT_RE, "description", v)

    @field_validator("update_source")
    @classmethod
    def _source(cls, v: str | None) -> str | None:
        if v is None:
            return v
        try:
            return str(IPv4Address(v))
        except ValueError:
            return _check(_IFNAME_RE, "update-source", v)


class BgpAfPeer(_Model):
    """Per address-family settings of a neighbor or peer-group."""

    route_reflector_client: bool = False
    prefix_list_in: str | None = None  # "neighbor X prefix-list NAME in"
    prefix_list_out: str | None = None
    route_map_in: str | None = None
    route_map_out: str | None = None

    def is_empty(self) -> bool:
        return self == BgpAfPeer()


class BgpAf(_Model):
    """``address-family ipv4 unicast``."""

    networks: list[IPv4Network] = Field(default_factory=list)
    redistribute: dict[RedistSource, str | None] = Field(default_factory=dict)  # source -> route-map
    peers: dict[str, BgpAfPeer] = Field(default_factory=dict)

    @field_validator("networks")
    @classmethod
    def _sort(cls, v: list[IPv4Network]) -> list[IPv4Network]:
        if len(set(v)) != len(v):
            raise ValueError("duplicate BGP network")
        return sorted(v, key=lambda n: (n.network_address, n.prefixlen))

    @field_validator("peers")
    @classmethod
    def _drop_empty(cls, v: dict[str, BgpAfPeer]) -> dict[str, BgpAfPeer]:
        return {k: p for k, p in v.items() if not p.is_empty()}

    def is_empty(self) -> bool:
        return not (self.networks or self.redistribute or self.peers)


class Bgp(_Model):
    """``router bgp ASN``. Neighbor keys are IPv4 addresses; peer-group keys are names."""

    asn: int = Field(ge=1, le=4294967295)
    router_id: IPv4Address | None = None
    coalesce_time: int | None = Field(default=None, ge=0, le=4294967295)  # ms; printed when set
    timers: tuple[Uint16, Uint16] | None = None  # (keepalive, holdtime)
    ebgp_requires_policy: bool = True  # False: "no bgp ebgp-requires-policy" (FRR 8.4 defaults to on)
    peer_groups: dict[str, Peer] = Field(default_factory=dict)
    neighbors: dict[str, Peer] = Field(default_factory=dict)
    ipv4_unicast: BgpAf = Field(default_factory=BgpAf)

    @field_validator("router_id")
    @classmethod
    def _rid(cls, v: IPv4Address | None) -> IPv4Address | None:
        return _router_id(v)

    @field_validator("timers")
    @classmethod
    def _timers(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        return _bgp_timers(v, "timers bgp", unprinted_default=True)

    @field_validator("peer_groups")
    @classmethod
    def _groups(cls, v: dict[str, Peer]) -> dict[str, Peer]:
        for name, p in v.items():
            _check(_NAME_RE, "peer-group name", name)
            if re.fullmatch(r"[0-9.]+", name):
                raise ValueError(f"peer-group name {name} looks like an address")
            if p.peer_group is not None:
                raise ValueError(f"peer-group {name} cannot be in a peer-group")
        return v

    @field_validator("neighbors")
    @classmethod
    def _neighbors(cls, v: dict[str, Peer]) -> dict[str, Peer]:
        out = {str(IPv4Address(k)): p for k, p in v.items()}
        if len(out) != len(v):
            raise ValueError("duplicate neighbor address")
        return out

    @model_validator(mode="after")
    def _refs(self) -> Bgp:
        for addr, p in self.neighbors.items():
            if p.remote_as is None and p.peer_group is None:
                raise ValueError(f"neighbor {addr} needs remote_as or peer_group")
            if p.peer_group is not None and p.peer_group not in self.peer_groups:
                raise ValueError(f"neighbor {addr}: unknown peer-group {p.peer_group}")
        for key in self.ipv4_unicast.peers:
            if key not in self.peer_groups and key not in self.neighbors:
                raise ValueError(f"address-family ipv4 unicast: unknown neighbor {key}")
        for name, p in [*self.peer_groups.items(), *self.neighbors.items()]:
            if p.description is not None:
                check_line(f" neighbor {name} description {p.description}", f"the description of {name}",
                           removed_by_no=True)
        return self

    def peer_order(self) -> list[str]:
        """The order FRR prints peers in (bgpd's ``peer_cmp``): peer-groups by name, then the
        neighbors in a peer-group by (group name, address), then the others by address."""
        def key(addr: str) -> tuple:
            group = self.neighbors[addr].peer_group
            return (group is None, group or "", IPv4Address(addr))

        return sorted(self.peer_groups) + sorted(self.neighbors, key=key)


# -- prefix-lists and route-maps ---------------------------------------------------------------


class PrefixListEntry(_Model):
    """``ip prefix-list NAME seq SEQ ACTION PREFIX [ge N] [le N]``; ``prefix`` None means ``any``."""

    seq: int = Field(ge=1, le=4294967295)
    action: Action
    prefix: IPv4Network | None = None
    ge: int | None = Field(default=None, ge=0, le=32)
    le: int | None = Field(default=None, ge=0, le=32)

    @model_validator(mode="after")
    def _lengths(self) -> PrefixListEntry:
        if self.prefix is None and (self.ge is not None or self.le is not None):
            raise ValueError("'any' takes no ge/le")
        if self.prefix is not None:
            lo = self.ge if self.ge is not None else self.prefix.prefixlen
            if self.ge is not None and self.ge < self.prefix.prefixlen:  # FRR 8.4 takes ge == length
                raise ValueError("ge must be >= the prefix length")
            if self.le is not None and self.le < lo:
                raise ValueError("le must be >= ge and >= the prefix length")
        return self


class PrefixList(_Model):
    entries: list[PrefixListEntry] = Field(min_length=1)

    @field_validator("entries")
    @classmethod
    def _sort(cls, v: list[PrefixListEntry]) -> list[PrefixListEntry]:
        return _by_seq(v)


class RouteMapEntry(_Model):
    """``route-map NAME ACTION SEQ`` with its match / set lines."""

    seq: int = Field(ge=1, le=65535)
    action: Action
    match_prefix_list: str | None = None
    set_community: list[str] | None = None  # ["none"] for ``set community none``
    set_community_additive: bool = False
    set_local_preference: int | None = Field(default=None, ge=0, le=4294967295)
    set_metric: int | None = Field(default=None, ge=0, le=4294967295)

    @field_validator("set_community")
    @classmethod
    def _communities(cls, v: list[str] | None) -> list[str] | None:
        if v is None or v == ["none"]:
            return v
        if not v:
            raise ValueError("set community needs values")
        out = [community(c) for c in v]
        if len(set(out)) != len(out):
            raise ValueError("set community needs distinct values")
        return sorted(out, key=community_key)

    @model_validator(mode="after")
    def _additive(self) -> RouteMapEntry:
        if self.set_community_additive and self.set_community in (None, ["none"]):
            raise ValueError("additive needs communities")
        if self.set_community is not None:
            check_line(" set community " + " ".join(self.set_community)
                       + (" additive" if self.set_community_additive else ""), "set community")
        return self


class RouteMap(_Model):
    entries: list[RouteMapEntry] = Field(min_length=1)

    @field_validator("entries")
    @classmethod
    def _sort(cls, v: list[RouteMapEntry]) -> list[RouteMapEntry]:
        return _by_seq(v)


# -- firewall (nftables) -----------------------------------------------------------------------


class FirewallSet(_Model):
    """An nftables set of IPv4 prefixes (``type ipv4_addr; flags interval``) in ``table inet fw``.

    ``elements``: sorted by (address, length); a /32 is printed by nft as a bare address.
    Overlapping elements are refused (nft refuses them in an interval set)."""

    elements: list[IPv4Network] = Field(default_factory=list)

    @field_validator("elements")
    @classmethod
    def _sort(cls, v: list[IPv4Network]) -> list[IPv4Network]:
        out = sorted(set(v), key=lambda n: (n.network_address, n.prefixlen))
        if len(out) != len(v):
            raise ValueError("duplicate set element")
        for a, b in zip(out, out[1:]):
            if a.overlaps(b):
                raise ValueError(f"overlapping set elements {a} and {b}")
        return out


class FirewallRule(_Model):
    """One rule of ``chain forward``: ``ip saddr @SRC ip daddr @DST ACTION`` (either match may
    be absent). Rules keep their order (the chain is evaluated top down)."""

    saddr_set: str | None = None
    daddr_set: str | None = None
    action: Literal["accept", "drop"]

    @field_validator("saddr_set", "daddr_set")
    @classmethod
    def _set(cls, v: str | None) -> str | None:
        return check_set_name(v)


class Firewall(_Model):
    """``table inet fw``: named IPv4 prefix sets and the ``forward`` filter chain
    (``type filter hook forward priority 0; policy <forward_policy>;``). Set names are those
    nft accepts (:func:`ani.device.nft_names.check_set_name`: a letter or ``_`` first, not an
    nft keyword such as ``drop``, ``ip``, ``type``)."""

    sets: dict[str, FirewallSet] = Field(default_factory=dict)
    forward_policy: Literal["accept", "drop"] = "accept"
    forward_rules: list[FirewallRule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _refs(self) -> Firewall:
        for name in self.sets:
            check_set_name(name)
        for i, r in enumerate(self.forward_rules):
            for s in (r.saddr_set, r.daddr_set):
                if s is not None and s not in self.sets:
                    raise ValueError(f"forward rule {i + 1}: unknown set @{s}")
        return self


# -- the device ------------------------------------------------------------------------------


class DeviceConfig(_Model):
    """The configuration of one FRR router (see the module docstring for the shape)."""

    hostname: str
    ip_forwarding: bool = True
    ipv6_forwarding: bool = True
    bgp_route_map_delay_timer: int | None = Field(default=None, ge=0, le=600)
    interfaces: dict[str, Interface] = Field(default_factory=dict)
    static_routes: list[StaticRoute] = Field(default_factory=list)
    ospf: Ospf | None = None
    bgp: Bgp | None = None
    prefix_lists: dict[str, PrefixList] = Field(default_factory=dict)
    route_maps: dict[str, RouteMap] = Field(default_factory=dict)
    firewall: Firewall | None = None  # nftables, not FRR: read / applied separately (not in render)
    unmodelled: list[str] = Field(default_factory=list)

    def canonical(self) -> DeviceConfig:
        """This configuration validated again, in canonical form. Pydantic does not validate
        in-place changes (``m.static_routes.append(r)``, ``m.bgp_route_map_delay_timer = 5``), so
        such a model may hold lists out of FRR's order or a default value, and compare unequal to
        the same configuration read back; this fixes that. Raises ValidationError (a ValueError)
        if the changes made it invalid."""
        return type(self).model_validate(self.model_dump())

    _delay = field_validator("bgp_route_map_delay_timer")(_unprinted(DEFAULT_ROUTE_MAP_DELAY))

    @field_validator("interfaces")
    @classmethod
    def _interfaces(cls, v: dict[str, Interface]) -> dict[str, Interface]:
        for name in v:
            _check(_IFNAME_RE, "interface name", name)
        if "lo" in v and v["lo"].ospf.network is not None:
            raise ValueError("interface lo: ip ospf network: FRR refuses a network type on the "
                             "loopback ('This is a loopback interface. Can't set network type.')")
        return {k: v[k] for k in sorted(v, key=ifname_key) if not v[k].is_empty()}

    @field_validator("static_routes")
    @classmethod
    def _routes(cls, v: list[StaticRoute]) -> list[StaticRoute]:
        if len({(r.prefix, r.nexthop) for r in v}) != len(v):
            raise ValueError("duplicate static route (one distance per prefix and next hop)")
        return sorted(v, key=StaticRoute.sort_key)

    @field_validator("prefix_lists", "route_maps")
    @classmethod
    def _names(cls, v: dict) -> dict:
        for name in v:
            _check(_NAME_RE, "name", name)
        return v
