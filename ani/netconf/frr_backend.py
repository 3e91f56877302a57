"""The NETCONF server's view of one lab router: :class:`FrrBackend` implements
:class:`ani.netconf.backend.Backend` with :mod:`ani.device.apply` (configuration) and FRR's /
iproute2's JSON output (operational state).

``state()`` returns the RFC 7951 JSON of the ``frr-state`` container of ``yang/ani-frr.yang``::

    {"ani-frr:frr-state": {
      "interface": [{"name": "to-c1", "admin-status": "up", "oper-status": "up",
                     "address": ["100.64.1.1/31"], "mtu": 1500}, ...],
      "route": [{"prefix": "100.64.255.1/32", "protocol": "ospf", "distance": 110, "metric": 10,
                 "selected": true, "next-hop": ["100.64.1.0 via to-c1"]}, ...],
      "bgp-neighbor": [{"address": "100.64.255.1", "remote-as": 64500, "state": "Established",
                        "uptime-s": 121, "prefixes-received": 6}, ...],
      "ospf-neighbor": [{"router-id": "100.64.255.1", "interface": "to-c1",
                         "address": "100.64.1.0", "state": "Full/-"}, ...]}}

Sources (read through :mod:`ani.device.opstate`, the one reader of operational state):
``ip -j addr`` inside the router's netns (interfaces: admin-status from the ``UP``
flag, oper-status from ``operstate``: UP -> up, DOWN / LOWERLAYERDOWN / NOTPRESENT -> down,
anything else (``UNKNOWN`` on lo) -> unknown; IPv4 addresses only, host bits kept), ``show ip
route json`` (one entry per (prefix, protocol), the key of the YANG list: where FRR has several,
e.g. two static routes of one prefix at different distances, the selected one, else the one
of lowest distance; next hops ``ADDR via IFNAME``, ``IFNAME`` (directly connected),
``blackhole``, ``reject``, or a bare ``ADDR`` for a recursive next hop, whose resolving next
hops follow it), ``show bgp summary json`` (``state`` as FRR prints it, e.g. ``Idle (Admin)``;
``uptime-s``: time in the current state, whole seconds) and ``show ip ospf neighbor json``.
BGP / OSPF lists are empty when the router runs no bgpd / ospfd.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ani.device import apply as device_apply
from ani.device import opstate
from ani.device.opstate import split_json  # noqa: F401 - named here for this module's callers
from ani.device.model import DeviceConfig
from ani.errors import LabError
from ani.netconf.backend import ApplyError, ApplyReport

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

#: module-qualified name of the state container in RFC 7951 JSON
STATE = "ani-frr:frr-state"
#: seconds allowed per configuration line for one frr-reload run: it applies some 25-40 lines
#: a second on a loaded 2-core host; a run killed half way leaves FRR half configured
SECONDS_PER_LINE = 0.1

_OPER = {"UP": "up", "DOWN": "down", "LOWERLAYERDOWN": "down", "NOTPRESENT": "down"}


class FrrBackend:
    """Router ``router`` of ``lab`` (an :class:`ani.lab.Lab`), for the NETCONF server.

    Args:
        timeout: bound of each vtysh / frr-reload / nft run, seconds; for a large change an
            apply allows more: :data:`SECONDS_PER_LINE` per line of the running (as last
            read) and the intended configuration.
        write_startup: also write FRR's startup config after each apply (default False: the
            running configuration is the NETCONF ``running`` datastore; ``frr.conf`` is the
            lab's, untouched).
    """

    def __init__(self, lab: Lab, router: str, timeout: float = 30.0, write_startup: bool = False) -> None:
        lab.pathspace(router)  # UnknownNode for a host or an unknown name
        self.lab = lab
        self.router = router
        self.name = router
        self.timeout = timeout
        self.write_startup = write_startup
        self._running_lines = 0  # size of the configuration as last read / applied

    def __repr__(self) -> str:
        return f"FrrBackend(lab={self.lab.id!r}, router={self.router!r})"

    def read(self) -> DeviceConfig:
        """See :meth:`ani.netconf.backend.Backend.read` (:func:`ani.device.apply.read`)."""
        try:
            cfg = device_apply.read(self.lab, self.router)
        except LabError as exc:
            raise ApplyError(f"{self.router}: cannot read the configuration: {exc}", restored=True) from exc
        self._running_lines = _lines(cfg)
        return cfg

    def apply(self, intended: DeviceConfig, deadline: float | None = None) -> ApplyReport:
        """See :meth:`ani.netconf.backend.Backend.apply` (:func:`ani.device.apply.apply`).
        Each run is bounded by the larger of ``timeout`` and the size of the change (see the
        class doc): a bound that kills a healthy frr-reload half way through a large change
        leaves FRR half configured and its restore likely to fail. ``deadline``
        (``time.monotonic()``): the change stops then and the prior configuration is put back
        (``ApplyError.bound_passed``)."""
        size = _lines(intended)
        bound = max(self.timeout, SECONDS_PER_LINE * (size + self._running_lines))
        try:
            report = device_apply.apply(
                self.lab, self.router, intended, write_startup=self.write_startup, timeout=bound,
                deadline=deadline,
            )
        except LabError as exc:  # only the first read lets it through: nothing was changed
            raise ApplyError(f"{self.router}: cannot read the configuration: {exc}", restored=True) from exc
        self._running_lines = size
        return report

    def state(self) -> dict[str, Any]:
        """The ``frr-state`` container (see the module docstring). Raises ApplyError
        (restored=True: nothing changed) if FRR or ``ip`` cannot be read."""
        try:
            addrs = opstate.read_addresses(self.lab, self.router, timeout=self.timeout)
            docs = opstate.read_show(self.lab, self.router, self._commands(), timeout=self.timeout) or {}
        except (LabError, ValueError) as exc:
            raise ApplyError(f"{self.router}: cannot read the operational state: {exc}", restored=True) from exc
        return build_state(
            addrs,
            docs.get(opstate.ROUTES, {}),
            docs.get(opstate.BGP_SUMMARY, {}),
            docs.get(opstate.OSPF_NEIGHBORS, {}),
        )

    # -- helpers ---------------------------------------------------------------------------

    def _commands(self) -> list[str]:
        daemons = set(self.lab.topology.routers[self.router].daemons)
        cmds = [opstate.ROUTES]
        if "bgpd" in daemons:
            cmds.append(opstate.BGP_SUMMARY)
        if "ospfd" in daemons:
            cmds.append(opstate.OSPF_NEIGHBORS)
        return cmds


def _lines(cfg: DeviceConfig) -> int:
    """About how many configuration lines ``cfg`` is (FRR text, unmodelled lines, firewall
    elements). An estimate for a time bound: never raises (0 if it cannot tell)."""
    from ani.device.render import render

    try:
        n = len(render(cfg.model_copy(update={"unmodelled": []})).splitlines())
        n += len(cfg.unmodelled)
        if cfg.firewall is not None:
            n += sum(len(s.elements) for s in cfg.firewall.sets.values())
            n += len(cfg.firewall.forward_rules)
    except Exception:  # noqa: BLE001 - the model may refuse to render: no estimate then
        return 0
    return n


# -- building the state document -----------------------------------------------------------------


def build_state(addrs: list[dict[str, Any]], routes: dict[str, Any], bgp: dict[str, Any],
                ospf: dict[str, Any]) -> dict[str, Any]:
    """The RFC 7951 ``frr-state`` document from ``ip -j addr``, ``show ip route json``,
    ``show bgp summary json`` and ``show ip ospf neighbor json`` (parsed; ``{}`` for a daemon
    that does not run). Lists are in key order; empty lists are left out."""
    st: dict[str, Any] = {
        "interface": [_interface(i) for i in sorted(opstate.interfaces(addrs), key=lambda i: i.name or "")],
        "route": _routes(routes),
        "bgp-neighbor": _bgp(bgp),
        "ospf-neighbor": _ospf(ospf),
    }
    return {STATE: {k: v for k, v in st.items() if v}}


def _interface(i: opstate.Interface) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": i.name,
        "admin-status": "up" if i.admin_up else "down",
        "oper-status": _OPER.get(str(i.operstate or "").upper(), "unknown"),
    }
    if i.ipv4:
        out["address"] = list(i.ipv4)
    if i.mtu is not None:
        out["mtu"] = i.mtu
    return out


def _nexthop(nh: dict[str, Any]) -> str:
    if nh.get("blackhole"):
        return "blackhole"
    if nh.get("reject") or nh.get("unreachable"):
        return "reject"
    ip, ifname = nh.get("ip"), nh.get("interfaceName")
    if ip and ifname:
        return f"{ip} via {ifname}"
    return ip or ifname or "?"


def _routes(doc: dict[str, Any]) -> list[dict[str, Any]]:
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for prefix, entries in doc.items():
        for e in entries if isinstance(entries, list) else []:
            key = (e.get("prefix", prefix), str(e.get("protocol", "?")))
            old = best.get(key)
            rank = (not e.get("selected", False), e.get("distance", 255))
            if old is None or rank < (not old.get("selected", False), old.get("distance", 255)):
                best[key] = e
    out = []
    for (prefix, proto), e in sorted(best.items(), key=lambda kv: (_net_key(kv[0][0]), kv[0][1])):
        r: dict[str, Any] = {"prefix": prefix, "protocol": proto}
        for src, dst in (("distance", "distance"), ("metric", "metric")):
            if isinstance(e.get(src), int):
                r[dst] = e[src]
        r["selected"] = bool(e.get("selected", False))
        hops: list[str] = []
        for nh in e.get("nexthops", []):
            h = _nexthop(nh)
            if h not in hops:
                hops.append(h)
        if hops:
            r["next-hop"] = hops
        out.append(r)
    return out


def _net_key(prefix: str) -> tuple[int, ...]:
    addr, _, length = prefix.partition("/")
    try:
        return (*(int(x) for x in addr.split(".")), int(length or 32))
    except ValueError:
        return (999,)


def _bgp(doc: dict[str, Any]) -> list[dict[str, Any]]:
    peers = opstate.bgp_peers({"ipv4Unicast": doc.get("ipv4Unicast") or {}})
    out = []
    for p in sorted(peers, key=lambda p: _net_key(p.address)):
        n: dict[str, Any] = {"address": p.address}
        if p.remote_as is not None:
            n["remote-as"] = p.remote_as
        n["state"] = p.state if p.state is not None else "Idle"
        if p.uptime_ms is not None:
            n["uptime-s"] = p.uptime_ms // 1000
        if p.prefixes_received is not None:
            n["prefixes-received"] = p.prefixes_received
        out.append(n)
    return out


def _ospf(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for rid, entries in (doc.get("neighbors") or {}).items():
        for e in entries if isinstance(entries, list) else []:
            n: dict[str, Any] = {"router-id": rid, "interface": str(e.get("ifaceName", "?")).split(":")[0]}
            if e.get("address") or e.get("ifaceAddress"):
                n["address"] = e.get("address") or e.get("ifaceAddress")
            n["state"] = str(e.get("state") or e.get("nbrState") or "?")
            out.append(n)
    return sorted(out, key=lambda n: (_net_key(n["router-id"]), n["interface"]))
