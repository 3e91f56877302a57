"""The reference change set of each shipped task class: a task's request (the intent file's
mapping, :meth:`ani.scenario.tasks.base.TaskClass.read_request`) and the routers'
configurations -> the typed service changes (``ani.intents`` change mappings, in apply order)
that carry it out.

::

    changes = get_task_class("change-set").reference_changes(req, configs)
    # [{"type": "tenant-site", "action": "remove", ...}, ...]

It reads only the request and ``configs`` (``{router: DeviceConfig}``, nftables included),
never the hidden tests. The observer's reference end state (what a run was asked to change,
:func:`ani.observer.changes.reference_configs`) and the scripted baseline agent
(:mod:`ani.agents.scripted_tasks`) both take it from the task class, so editing the baseline
agent changes no measurement. Per class (``intents/<class>/``):

- ``onboard-site`` (``site.yaml``): one ``tenant-site`` ``onboard`` on ``to-<site>`` of the edge.
- ``change-set`` (``changes.yaml``: ``tenant``, ``add``, ``move``, ``remove``): the removals,
  then the moves (``edge`` = ``to_edge``, interface ``to-<site>``; prefix and gateway kept),
  then the additions, in the file's order within each group: a removed site's resources are
  free before anything is added.
- ``decommission`` (``decommission.yaml``: ``tenant``, ``site``, ``edge``): the site's
  ``tenant-site`` ``remove``, then, found with :class:`ani.intents.Inventory` on the state that
  leaves (repeated until nothing more is found), the ``remove`` of every other service that
  references the site's prefix (a network inside it, an address in it) or its interface on its
  edge and references no other site's prefix: prefix-list entries, static routes, floating
  addresses, BGP peerings of the site; then the route-map entries whose prefix-list is gone
  from every router they are on. Nothing any other site uses.
- ``troubleshoot`` (``symptom.yaml``): the diagnosis of :mod:`ani.scenario.tasks.diagnose`
  from the configs (the repair changes; TaskError saying what was checked when nothing is
  wrong).

Every error is :class:`~ani.errors.TaskError` naming the file / field / service.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Interface, IPv4Network, ip_address
from typing import Any

from ani.device.model import DeviceConfig
from ani.errors import TaskError

#: how many rounds decommission's discovery of what only the site used may take
MAX_ROUNDS = 8


def _field(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if value is None or value == "":
        raise TaskError(f"{where}: missing field {key!r}")
    return str(value)


def _items(data: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise TaskError(f"{where}: {key!r} must be a list of mappings")
    return value


def onboard(tenant: str, site: str, edge: str, prefix: Any, gateway: Any, interface: str | None = None) -> dict[str, Any]:
    """The ``tenant-site`` ``onboard`` change (interface ``to-<site>`` unless given)."""
    return {"type": "tenant-site", "action": "onboard", "tenant": tenant, "site": site, "edge": edge,
            "interface": interface or f"to-{site}", "prefix": str(IPv4Network(str(prefix))),
            "gateway": str(IPv4Address(str(gateway)))}


def onboard_site(req: dict[str, Any], configs: dict[str, DeviceConfig]) -> list[dict[str, Any]]:
    """onboard-site's reference change set (module doc). Raises TaskError."""
    w = "site.yaml"
    try:
        return [onboard(_field(req, "tenant", w), _field(req, "site", w), _field(req, "edge", w),
                        _field(req, "prefix", w), _field(req, "gateway", w))]
    except ValueError as exc:
        raise TaskError(f"{w}: {exc}") from None


def change_set(req: dict[str, Any], configs: dict[str, DeviceConfig]) -> list[dict[str, Any]]:
    """change-set's reference change set (module doc). Raises TaskError."""
    w = "changes.yaml"
    tenant = _field(req, "tenant", w)
    out: list[dict[str, Any]] = []
    for i, r in enumerate(_items(req, "remove", w)):
        ch = {"type": "tenant-site", "action": "remove", "tenant": tenant, "site": _field(r, "site", f"{w} remove.{i}")}
        if r.get("edge"):
            ch["edge"] = str(r["edge"])
        out.append(ch)
    for i, m in enumerate(_items(req, "move", w)):
        where = f"{w} move.{i}"
        site = _field(m, "site", where)
        out.append({"type": "tenant-site", "action": "move", "tenant": tenant, "site": site,
                    "edge": _field(m, "to_edge", where), "interface": f"to-{site}"})
    for i, a in enumerate(_items(req, "add", w)):
        where = f"{w} add.{i}"
        try:
            out.append(onboard(tenant, _field(a, "site", where), _field(a, "edge", where),
                               _field(a, "prefix", where), _field(a, "gateway", where)))
        except ValueError as exc:
            raise TaskError(f"{where}: {exc}") from None
    if not out:
        raise TaskError(f"{w}: no add, move or remove")
    return out


def _networks(value: Any) -> list[Any]:
    """The IPv4 networks / addresses a change mapping (JSON values) names, anywhere in it."""
    out: list[Any] = []
    if isinstance(value, dict):
        for v in value.values():
            out += _networks(v)
    elif isinstance(value, list):
        for v in value:
            out += _networks(v)
    elif isinstance(value, str):
        try:
            out.append(IPv4Interface(value).network if "/" in value else ip_address(value))
        except ValueError:
            pass
    return out


def _refers_to(net: Any, prefix: IPv4Network) -> bool:
    if isinstance(net, IPv4Network):
        return net.prefixlen >= prefix.prefixlen and net.subnet_of(prefix)
    return net in prefix


def _overlaps(net: Any, prefix: IPv4Network) -> bool:
    return net.overlaps(prefix) if isinstance(net, IPv4Network) else net in prefix


def _removal(spec: Any) -> dict[str, Any] | None:
    """The ``remove`` change of a discovered service's spec, or None if its type has none."""
    from ani.intents import IntentError, parse_change

    data = {**spec.model_dump(mode="json", exclude_none=True), "action": "remove"}
    try:
        parse_change(data)
    except IntentError:
        return None
    return data


def decommission(req: dict[str, Any], configs: dict[str, DeviceConfig]) -> list[dict[str, Any]]:
    """decommission's reference change set (module doc). Raises TaskError."""
    from ani.intents import IntentError, Inventory, compile_changes

    w = "decommission.yaml"
    tenant, site = _field(req, "tenant", w), _field(req, "site", w)
    edge = str(req["edge"]) if req.get("edge") else None
    inv = Inventory(configs)
    sid = f"tenant-site/{tenant}/{site}"
    svc = inv.get_service(sid)
    if svc is None:
        known = ", ".join(s.id for s in inv.list_services("tenant-site") if s.spec.tenant == tenant) or "none"
        raise TaskError(f"{w}: no service {sid} in the routers' configs (sites of {tenant}: {known})")
    if edge is not None and svc.spec.edge != edge:
        raise TaskError(f"{w}: {sid} is on {svc.spec.edge}, not {edge}")
    prefix, iface, where = svc.spec.prefix, svc.spec.interface, svc.spec.edge
    changes: list[dict[str, Any]] = [{"type": "tenant-site", "action": "remove", "tenant": tenant, "site": site,
                                      "edge": where}]
    for _round in range(MAX_ROUNDS):
        try:
            state = {**configs, **compile_changes(changes, configs).configs}
        except IntentError as exc:
            raise TaskError(f"decommission of {sid}: {exc}") from None
        now = Inventory(state)
        others = [s.spec.prefix for s in now.list_services("tenant-site")]
        new: list[dict[str, Any]] = []
        for s in now.list_services():
            if s.type in ("tenant-site", "tenant-firewall"):
                continue
            data = s.spec.model_dump(mode="json", exclude_none=True)
            nets = _networks({k: v for k, v in data.items() if k not in ("routers", "router")})
            mine = any(_refers_to(n, prefix) for n in nets)
            on_iface = data.get("interface") == iface and where in ([data.get("router")] + list(data.get("routers") or []))
            used_by_other = any(_overlaps(n, o) for n in nets for o in others)
            if (mine or on_iface) and not used_by_other:
                rm = _removal(s.spec)
                if rm is not None:
                    new.append(rm)
        for s in now.list_services("route-map-entry"):
            pl = s.spec.match_prefix_list
            if pl and all(pl not in state[r].prefix_lists for r in s.routers) and any(
                    pl in configs[r].prefix_lists for r in s.routers):
                rm = _removal(s.spec)
                if rm is not None:
                    new.append(rm)
        if not new:
            return changes
        changes += new
    raise TaskError(f"decommission of {sid}: what only it used kept growing after {MAX_ROUNDS} rounds: {changes}")


def troubleshoot(req: dict[str, Any], configs: dict[str, DeviceConfig]) -> list[dict[str, Any]]:
    """troubleshoot's reference change set: the diagnosis's repair (module doc). Raises TaskError."""
    from ani.scenario.tasks.diagnose import diagnose

    return diagnose(req, configs).changes
