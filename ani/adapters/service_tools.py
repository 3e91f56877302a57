"""The read-only service tools of A3-T (and A4): a mixin for an adapter.

::

    class A3TAdapter(ServiceReadTools, BaseAdapter): ...      # + apply
    class A4Adapter(ServiceReadTools, A3RAdapter): ...         # _service_configs = desired state

Tools (``data`` keys in brackets; every one read-only):

- ``list_service_types()`` [service_types: [{type, actions, id_format, description}]]
- ``get_service_schema(type)`` [type, schema] (JSON Schema, one ``oneOf`` branch per action);
  unknown type -> ``not_found`` naming the known types (``data``: type, suggestion, known)
- ``list_services(type=None)`` [services: [{id, type, routers, spec}]]; unknown type -> ``not_found``
- ``get_service(id)`` [service]; unknown id -> ``not_found`` naming the likely one and the known ids
  (``unknown service 'tenant-site/Blue/blue2'; did you mean 'tenant-site/blue/blue2'? ...``, the
  known ids of the id's type, or of every type when it names none; ``data``: id, suggestion, known)
- ``plan(changes)`` dry run [routers, diff {router: unified diff}, allocations, checks [names],
  changes (with allocated values filled in)]; nothing is sent to any router. Refused ->
  ``invalid_intent`` with ``data.errors`` [{code, message, path}] (the message names the field
  and the culprit, e.g. ``RM-UNDEF``); an empty pool -> ``resource_exhausted`` naming the pool
  (``data.errors``, ``data.pool``, ``data.size``)
- ``get_state(device, what)`` what in interfaces | routes | bgp | ospf | firewall | config
  [device, what, state, truncated] (``state`` is JSON for interfaces/routes/bgp/ospf, text for
  firewall and config)

A router whose configuration or state cannot be read -> ``device_unreachable`` (retriable).

What the host class provides:

- ``self.lab`` (a running ``ani.lab.Lab``; ``lab.topology`` for the checks and host links);
- ``_service_configs() -> {router: DeviceConfig}``: the configs inventory and plan work on
  (A3-T: the live configs, ``ani.device.apply.read`` of every router; A4: the desired state);
- optionally ``_service_pools(configs) -> Pools`` (default: :meth:`ServiceReadTools._service_pools`,
  from the attributes ``site_network`` (IPv4Network | None), ``site_prefixlen`` (int, 24) and
  ``seq_limit`` (int | None) if the host has them, and the networks of the topology's host
  links counted as used).

Shared helper for the host's own write tool: :meth:`ServiceReadTools._service_plan`
(``changes`` -> ``(before configs, CompileResult, checks)`` or a failure ToolResult).
"""

from __future__ import annotations

import json
import time
from ipaddress import IPv4Network
from typing import Any

from ani.adapters.a3t_args import GetStateArgs, ListServicesArgs, PlanArgs, ServiceIdArgs, ServiceTypeArgs
from ani.adapters.base import NoArgs, tool
from ani.adapters.error_map import error_result
from ani.errors import ErrorCode
from ani.lab.protocol import Lab
from ani.names import hint, suggest, unknown
from ani.protocol import ToolResult

#: cap on the text of a get_state answer, characters
MAX_STATE_CHARS = 65536

class ServiceReadTools:
    """Read-only service tools (see the module doc). Mix in before ``BaseAdapter``."""

    lab: Lab
    # the A3-T options (ani.adapters.a3t_args.A3TOptions), attributes of the host
    confirm_timeout_s: int
    site_network: IPv4Network | None
    site_prefixlen: int
    seq_limit: int | None
    check_bound_s: float

    # -- what the host provides -------------------------------------------------------------

    def _service_configs(self) -> dict[str, Any]:  # pragma: no cover - the host overrides
        raise NotImplementedError

    def _service_pools(self, configs: dict[str, Any]) -> Any:
        """Pools over ``configs`` (see the module doc)."""
        from ani.intents.pools import SEQ_LIMIT, Pools

        used: list[IPv4Network] = []
        for link in self.lab.topology.links:
            for ep in (link.a, link.b):
                if ep.address is not None and ep.address.network.prefixlen < 32:
                    used.append(ep.address.network)
        seq_limit = getattr(self, "seq_limit", None)
        return Pools.from_configs(
            configs,
            site_network=getattr(self, "site_network", None),
            site_prefixlen=getattr(self, "site_prefixlen", 24),
            seq_limit=SEQ_LIMIT if seq_limit is None else seq_limit,
            extra_used=used,
        )

    def _configs_or_failure(self) -> dict[str, Any] | ToolResult:
        """:meth:`_service_configs`, or ``device_unreachable`` (retriable) when a router's config
        cannot be read (``timeout`` when the read ran out of its bound)."""
        from ani.device.outcome import ApplyError
        from ani.errors import LabError

        try:
            return self._service_configs()
        except (LabError, ApplyError, OSError) as exc:
            return error_result(exc, what="cannot read the routers' configurations")

    def _service_plan(self, changes: list[Any]) -> tuple[dict[str, Any], Any, list[Any]] | ToolResult:
        """``(before, CompileResult, active checks)`` of ``changes`` against
        :meth:`_service_configs`, or the failure ToolResult (``invalid_intent`` /
        ``resource_exhausted``; see :func:`ani.adapters.error_map.error_result`). Nothing is sent to a router.

        Bounds (options of the host, defaults in :mod:`ani.adapters.a3t_args`): more than
        ``max_changes`` changes, or a router whose configuration would change by more than
        ``max_router_lines`` lines, is ``invalid_intent`` (code ``too-large``, the bound named);
        compiling longer than ``plan_bound_s`` seconds stops with ``timeout``."""
        from ani.adapters.a3t_args import MAX_CHANGES, PLAN_BOUND_S
        from ani.errors import AniTimeout
        from ani.intents.checks import active_checks
        from ani.intents.errors import IntentError
        from ani.intents.validate import plan

        limit = getattr(self, "max_changes", MAX_CHANGES)
        if len(changes) > limit:
            return error_result(IntentError(
                "too-large", f"{len(changes)} changes in one call; at most {limit} (option max_changes): "
                "split the change set into several calls", "changes"))
        before = self._configs_or_failure()
        if isinstance(before, ToolResult):
            return before
        deadline = time.monotonic() + getattr(self, "plan_bound_s", PLAN_BOUND_S)
        try:
            result = plan(changes, before, pools=self._service_pools(before), deadline=deadline)
            self._check_router_lines(before, result)
        except IntentError as exc:
            return error_result(exc)
        except AniTimeout as exc:
            return error_result(exc, what="plan")
        checks = active_checks(result.changes, before, result, self.lab.topology)
        return before, result, checks

    def _check_router_lines(self, before: dict[str, Any], result: Any) -> None:
        """IntentError ``too-large`` if a router's configuration would change by more lines than
        ``max_router_lines`` (what the lab's NETCONF server takes in one commit)."""
        from ani.adapters.a3t_args import MAX_ROUTER_LINES
        from ani.device.apply import mismatch
        from ani.intents.errors import IntentError

        limit = getattr(self, "max_router_lines", MAX_ROUTER_LINES)
        for r in result.routers:
            n = len(mismatch(before[r], result.configs[r])) if r in before else 0
            if n > limit:
                raise IntentError(
                    "too-large", f"{r}: the change set would change {n} configuration lines; at most {limit} "
                    "per router in one call (option max_router_lines): split it into several calls", "changes")

    def _topology_warnings(self, changes: list[Any]) -> list[str]:
        """What the topology says will not work although the change is valid: a tenant site
        onboarded / moved onto an edge interface that has no link in the topology (FRR accepts
        the address, but nothing is cabled there: the gateway is unreachable and active
        validation fails)."""
        links = self.lab.topology.links
        cabled = {(ep.node, ep.ifname) for link in links for ep in (link.a, link.b)}
        out = []
        for ch in changes:
            if getattr(ch, "type", None) == "tenant-site" and ch.action in ("onboard", "move") and ch.edge:
                ifname = ch.interface or f"to-{ch.site}"
                if (ch.edge, ifname) not in cabled:
                    out.append(f"{ch.edge} has no interface {ifname} in the topology (nothing is cabled there): "
                               f"the gateway of {ch.service_id()} will be unreachable and active validation will fail")
        return out

    # -- tools ------------------------------------------------------------------------------

    @tool(args=NoArgs, read_only=True,
          description=("List the service types this network offers: each type's actions, the format of its "
                       "service ids and what it is. Read a type's fields with get_service_schema."))
    def list_service_types(self, args: NoArgs) -> ToolResult:
        from ani.intents.models import SERVICE_TYPES
        from ani.intents.services import get_service_class

        out = []
        for t, classes in SERVICE_TYPES.items():
            cls = get_service_class(t)
            out.append({"type": t, "actions": [c.model_fields["action"].default for c in classes],
                        "id_format": cls.id_format or f"{t}/...", "description": cls.description})
        text = "\n".join(f"{x['type']} ({' | '.join(x['actions'])}): id {x['id_format']}. {x['description']}" for x in out)
        return ToolResult.success(text, {"service_types": out})

    @tool(args=ServiceTypeArgs, read_only=True,
          description=("The JSON Schema of a service type's changes (one oneOf branch per action): every field, "
                       "its type, default and meaning. A change is a JSON object with type, action and these fields."))
    def get_service_schema(self, args: ServiceTypeArgs) -> ToolResult:
        from ani.intents.models import SERVICE_TYPES, type_schema

        if args.type not in SERVICE_TYPES:
            return _unknown_type(args.type, list(SERVICE_TYPES))
        schema = type_schema(args.type)
        return ToolResult.success(json.dumps(schema, indent=1, sort_keys=True), {"type": args.type, "schema": schema})

    @tool(args=ListServicesArgs, read_only=True,
          description=("List the services the network runs now (discovered from the routers' configurations), "
                       "optionally of one type: id, type, routers and spec (the change that would create it)."))
    def list_services(self, args: ListServicesArgs) -> ToolResult:
        from ani.intents.inventory import Inventory
        from ani.intents.models import SERVICE_TYPES

        if args.type is not None and args.type not in SERVICE_TYPES:
            return _unknown_type(args.type, list(SERVICE_TYPES))
        configs = self._configs_or_failure()
        if isinstance(configs, ToolResult):
            return configs
        services = [s.to_dict() for s in Inventory(configs).list_services(args.type)]
        lines = [f"{s['id']} on {', '.join(s['routers'])}" for s in services]
        return ToolResult.success("\n".join(lines) if lines else "no services", {"services": services})

    @tool(args=ServiceIdArgs, read_only=True,
          description="One service by id (e.g. tenant-site/blue/blue2): type, routers and spec.")
    def get_service(self, args: ServiceIdArgs) -> ToolResult:
        from ani.intents.inventory import Inventory
        from ani.intents.models import SERVICE_TYPES

        configs = self._configs_or_failure()
        if isinstance(configs, ToolResult):
            return configs
        s = Inventory(configs).get_service(args.id)
        if s is None:
            kind = args.id.split("/")[0]
            ids = [x.id for x in Inventory(configs).list_services(kind if kind in SERVICE_TYPES else None)]
            if kind in SERVICE_TYPES:
                msg = unknown("service", args.id, ids, listed_by="list_services")
            else:  # the id does not even start with a type: name the types, not every id
                msg = (f"unknown service {args.id!r}: an id starts with its service type (e.g. tenant-site/...), "
                       f"and {kind!r} is none" + hint(kind, list(SERVICE_TYPES)))
            return ToolResult.failure(ErrorCode.NOT_FOUND, msg,
                                      data={"id": args.id, "suggestion": suggest(args.id, ids), "known": ids})
        d = s.to_dict()
        return ToolResult.success(json.dumps(d, sort_keys=True), {"service": d})

    @tool(args=PlanArgs, read_only=True,
          description=("Dry run of service changes: validates them (schema, references, conflicts, pools, YANG) "
                       "and returns, without touching any router, the routers that would change, a unified diff "
                       "per router (FRR config and nftables), the values allocated from the pools and the names "
                       "of the checks apply would run as active validation."))
    def plan(self, args: PlanArgs) -> ToolResult:
        got = self._service_plan(args.changes)
        if isinstance(got, ToolResult):
            return got
        before, result, checks = got
        diff = result.diff(before)
        warnings = self._topology_warnings(result.changes)
        data = {"routers": result.routers, "diff": diff, "allocations": dict(result.allocations),
                "checks": [c.name for c in checks], "warnings": warnings,
                "changes": [c.model_dump(mode="json", exclude_none=True) for c in result.changes]}
        lines = [f"warning: {w}" for w in warnings]
        lines.append(f"routers: {', '.join(result.routers) or '(none: nothing would change)'}")
        if result.allocations:
            lines.append("allocated: " + ", ".join(f"{k}={v}" for k, v in result.allocations.items()))
        lines += [diff[r] for r in result.routers]
        lines.append(f"checks ({len(checks)}): " + "; ".join(c.name for c in checks))
        return ToolResult.success("\n".join(lines), data)

    @tool(args=GetStateArgs, read_only=True,
          description=("Read-only operational view of a router: interfaces, routes (IPv4 routing table), bgp "
                       "(summary), ospf (neighbors), firewall (nftables ruleset) or config (FRR running config)."))
    def get_state(self, args: GetStateArgs) -> ToolResult:
        from ani.device.outcome import ReadError
        from ani.errors import LabError

        try:
            state = _read_state(self.lab, args.device, args.what)
        except (LabError, ReadError, OSError) as exc:
            return error_result(exc, device=args.device, what=f"cannot read {args.what}")
        except ValueError as exc:  # FRR printed what is not JSON
            return error_result(LabError(str(exc)), device=args.device, what=f"cannot read {args.what}")
        text = state if isinstance(state, str) else json.dumps(state, indent=1, sort_keys=True)
        truncated = len(text) > MAX_STATE_CHARS
        if truncated:
            text = text[:MAX_STATE_CHARS] + "\n... [truncated]"
        return ToolResult.success(text, {"device": args.device, "what": args.what, "state": state, "truncated": truncated})


def _unknown_type(name: str, known: list[str]) -> ToolResult:
    """``not_found`` for an unknown service type, naming the known ones (:func:`ani.names.unknown`)."""
    return ToolResult.failure(ErrorCode.NOT_FOUND, unknown("service type", name, known),
                              data={"type": name, "suggestion": suggest(name, known), "known": known})


def _read_state(lab: Lab, device: str, what: str) -> Any:
    """The ``what`` view of ``device`` (see ``get_state``); ``config`` and ``firewall`` through
    the device layer's reader (:mod:`ani.device.state`), the operational views through its
    reader of operational state (:mod:`ani.device.opstate`). Raises LabError (StateReadError:
    a command failed or printed no JSON), ReadError (ReadTimeout when a read runs out of its
    bound), ValueError."""
    from ani.device import opstate
    from ani.device.state import read_frr, read_nft

    if what == "config":
        return read_frr(lab, device)
    if what == "routes":
        return opstate.read_routes(lab, device)
    if what == "bgp":
        return opstate.read_bgp_summary(lab, device, ipv4_unicast=True)
    if what == "ospf":
        return opstate.read_ospf_neighbors(lab, device)
    if what == "firewall":
        return read_nft(lab, device, argv=("nft", "list", "ruleset"))  # with counters: a view of state
    if what == "interfaces":
        return [{"name": i.name, "state": i.operstate, "up": i.admin_up, "mac": i.mac, "addresses": list(i.ipv4)}
                for i in opstate.interfaces(opstate.read_addresses(lab, device))]
    raise ValueError(f"unknown view {what!r}")
