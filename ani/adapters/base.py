"""Shared machinery of the built-in adapters.

A tool is a method decorated with :func:`tool`, taking one validated pydantic
argument model. :class:`BaseAdapter` builds the ToolSpecs (JSON Schema from the
model), validates arguments *before* anything reaches a device, checks device
names against the lab, times the call, logs it to the trajectory, and turns
agent mistakes into ``ok=False`` results with stable codes. A null given for an optional
argument that does not itself accept null means "not given" (the strict form of a schema sends
one for every optional: :mod:`ani.strict_schema`), so it is dropped before validation. A timeout a tool lets through
(:class:`ani.errors.AniTimeout`, ``subprocess.TimeoutExpired``) becomes ``ErrorCode.TIMEOUT``
through the one mapping of exceptions to results, :func:`ani.adapters.error_map.error_result`.
``call`` never raises: a host or
harness fault inside a tool (a program missing, a bug) becomes an ``internal`` result and a
``harness_fault`` trajectory event, which makes the run an infrastructure error.

Concurrency: ``call`` may be used from several threads at once. Each call holds the keys
:meth:`BaseAdapter.call_keys` names (:mod:`ani.adapters.locking`; by default the whole adapter)
and waits for them at most :meth:`BaseAdapter.call_bound_s` seconds counted from the call's
start; a call that could not get them answers ``timeout`` (retriable), naming what it waited
for and who holds it. A handler reads what is left of its bound with
:meth:`BaseAdapter.remaining_s` and how long it waited with :meth:`BaseAdapter.waited_s`.
"""

from __future__ import annotations

import copy
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ani.adapters.error_map import error_result
from ani.adapters.locking import WHOLE, Busy, CallLocks
from ani.errors import AdapterError, AniTimeout, ErrorCode, HostFault, ProgramMissing
from ani.lab.protocol import Devices
from ani.names import known_list, suggest, unknown
from ani.protocol import Level, ToolResult, ToolSpec
from ani.strict_schema import drop_absent_nulls
from ani.trajectory import Trajectory
from ani.validation import format_validation_error


def unknown_device_result(device: str, known: list[str], lab: Devices | None = None) -> ToolResult:
    """The ``unknown_device`` result of ``device`` (not one of ``known``, the routers an agent may
    address); a host of ``lab``'s topology is said to be one."""
    nodes = lab.topology.nodes if lab is not None else ()
    if device in nodes and device not in known:
        msg = f"{device!r} is a host, not a router; known routers: {known_list(known)}"
    else:
        msg = unknown("device", device, known)
    return ToolResult.failure(ErrorCode.UNKNOWN_DEVICE, msg,
                              data={"device": device, "suggestion": suggest(device, known), "known": list(known)})


def harness_fault_kind(exc: BaseException) -> str:
    """The ``kind`` of a ``harness_fault`` event: ``program_missing`` (ProgramMissing), ``host``
    (another HostFault), ``harness`` (any other exception: a fault of the SDK itself)."""
    if isinstance(exc, ProgramMissing):
        return "program_missing"
    return "host" if isinstance(exc, HostFault) else "harness"


def _cause(exc: BaseException) -> str:
    text = str(exc).strip()
    return text if isinstance(exc, HostFault) and text else f"{type(exc).__name__}: {text or repr(exc)}"


class Args(BaseModel):
    """Base of tool argument models: unknown keys are refused, and JSON types are strict (a
    boolean is not a number, ``"5"`` is not 5, ``5`` is not a string); a model may loosen one
    field on purpose (e.g. A2's ``confirm_timeout_s``, documented)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class NoArgs(Args):
    pass


class DeviceArgs(Args):
    device: str = Field(description="Device name (a router of the topology)")


class TopologyArgs(Args):
    devices: list[str] = Field(
        default_factory=list,
        description="List of device names. Leave empty for entire network topology.",
    )


def tool(
    *,
    args: type[Args],
    description: str,
    name: str | None = None,
    read_only: bool = False,
    destructive: bool = False,
) -> Callable[[Callable[..., ToolResult]], Callable[..., ToolResult]]:
    """Mark an adapter method as a tool taking one ``args`` model instance.

    Hints (MCP ``readOnlyHint`` / ``destructiveHint``; the rule is in docs/protocol.md, "Tool
    hints"): ``read_only`` = the tool changes nothing; ``destructive`` = it may change what a
    router runs (running configuration or ruleset). A tool that changes only a staging area (a
    candidate datastore, a snapshot store, the source of truth's working tree) is neither.

    Raises:
        ValueError: both ``read_only`` and ``destructive``.
    """
    if read_only and destructive:
        raise ValueError("a tool cannot be both read_only and destructive")

    def deco(fn: Callable[..., ToolResult]) -> Callable[..., ToolResult]:
        fn.__ani_tool__ = {  # type: ignore[attr-defined]
            "name": name or fn.__name__,
            "args": args,
            "description": description,
            "read_only": read_only,
            "destructive": destructive,
        }
        return fn

    return deco


def clean_schema(schema: Any) -> Any:
    """Drop pydantic's ``title`` keys so schemas read like hand-written ones."""
    if isinstance(schema, dict):
        return {
            k: clean_schema(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [clean_schema(v) for v in schema]
    return schema


#: the default of :meth:`BaseAdapter.call_bound_s`, seconds
DEFAULT_CALL_BOUND_S = 120.0
#: how long ``close()`` waits for the calls in flight before closing what they do not use, seconds
CLOSE_WAIT_S = 10.0


class BaseAdapter:
    """Base of the built-in adapters.

    Args:
        lab: the running :class:`ani.lab.Lab` the adapter acts on.
        trajectory: where calls are logged (a fresh in-memory one if None).
        options: adapter-specific settings (e.g. timeouts), from the campaign cell.
    """

    level: ClassVar[Level]
    #: ``call`` is safe from several threads at once (see the module doc); an MCP server then
    #: runs a client's concurrent tool calls in parallel instead of one at a time
    concurrent_calls: ClassVar[bool] = True
    #: the blocklist ablation can inspect this level's calls: its tools carry CLI command lines
    #: (``commands``, ``command``, ``configs``); when False, ``create_adapter(..., blocklist=...)``
    #: refuses the ablation (:func:`ani.registry.check_blocklist`)
    blocklist_inspects: ClassVar[bool] = False
    #: the capabilities (:mod:`ani.lab.protocol`) the adapter needs of its lab beyond
    #: :class:`~ani.lab.protocol.Devices`: ``(NetconfCapable,)`` starts the lab's NETCONF server,
    #: ``(SshCapable,)`` its SSH server (:func:`ani.lab.protocol.servers_for`); None: undeclared,
    #: the lab starts every server (what a plug-in adapter that does not say gets)
    needs: ClassVar[tuple[type, ...] | None] = None

    @classmethod
    def lab_needs(cls, options: dict | None = None) -> tuple[type, ...] | None:
        """The capabilities an adapter of this class with ``options`` (its cell's ``options:``,
        unparsed) needs of the lab (:attr:`needs`; None: undeclared, every server). Read before
        the lab starts (:func:`ani.campaign.execute.lab_options`); raises nothing."""
        return cls.needs

    def __init__(self, lab: Devices | None, *, trajectory: Trajectory | None = None, options: dict | None = None) -> None:
        self.lab = lab
        self.options = dict(options or {})
        self.trajectory = trajectory or Trajectory(level=str(getattr(self, "level", "")))
        self._tools: dict[str, tuple[dict[str, Any], Callable[..., ToolResult]]] = {}
        for attr in dir(type(self)):
            fn = getattr(type(self), attr, None)
            meta = getattr(fn, "__ani_tool__", None)
            if meta:
                self._tools[meta["name"]] = (meta, getattr(self, attr))
        self._schemas: dict[str, dict[str, Any]] = {}  # tool name -> input_schema (see _schema)
        self._opened = False
        self._closed = False  # close() was called and open() not since: calls are refused
        self._calls = CallLocks()  # what the calls in flight hold (see the module doc)
        self._call_ctx = threading.local()  # per thread: start and deadline of its call

    # -- lifecycle -------------------------------------------------------------------------

    def open(self) -> None:
        self._opened, self._closed = True, False

    def close(self) -> None:
        """Ends the adapter's sessions (subclasses: their own first, then this). A later
        :meth:`call` is refused (``internal``, nothing sent) until :meth:`open` is called again:
        it would otherwise reopen sessions that nobody closes (an ``internal`` result and a
        ``harness_fault`` event: the caller's fault, not the agent's)."""
        self._opened, self._closed = False, True

    def __enter__(self) -> BaseAdapter:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tools -----------------------------------------------------------------------------

    @property
    def devices(self) -> list[str]:
        """Device names an agent may address: the lab's routers."""
        return list(self.lab.topology.routers)

    def _schema(self, name: str) -> dict[str, Any]:
        """The ``input_schema`` of tool ``name`` (built once; callers must not change it)."""
        schema = self._schemas.get(name)
        if schema is None:
            schema = clean_schema(self._tools[name][0]["args"].model_json_schema())
            schema.setdefault("properties", {})
            self._schemas[name] = schema
        return schema

    def tools(self) -> list[ToolSpec]:
        specs = []
        for tname, (meta, _fn) in self._tools.items():
            specs.append(
                ToolSpec(
                    name=tname,
                    description=meta["description"],
                    input_schema=copy.deepcopy(self._schema(tname)),
                    read_only=meta["read_only"],
                    destructive=meta["destructive"],
                )
            )
        return specs

    def check_device(self, device: str) -> ToolResult | None:
        """None if ``device`` is a router of the lab, else an UNKNOWN_DEVICE result naming the
        routers and the likely one (:func:`ani.names.unknown`; a name in the wrong case is
        refused with the right spelling, never resolved: see :mod:`ani.names` for why), e.g.
        ``unknown device 'R1'; did you mean 'r1'? (names are case-sensitive); known: c1, e1, r1``.
        ``data``: ``device`` (as asked), ``suggestion`` (or None), ``known`` (the routers)."""
        known = self.devices
        if device in known:
            return None
        return unknown_device_result(device, known, self.lab)

    # -- concurrency -------------------------------------------------------------------------

    def call_keys(self, name: str, args: BaseModel) -> list[str]:
        """The keys call ``name`` holds while it runs (:mod:`ani.adapters.locking`). Default:
        the whole adapter, except ``get_topology`` (it reads only the lab's topology, which never
        changes). A level overrides it with what it can do better (e.g. one key per router)."""
        return [] if name == "get_topology" else [WHOLE]

    def call_bound_s(self, name: str, args: BaseModel) -> float:
        """Seconds call ``name`` may wait for other calls, counted from its start (its
        documented bound; default :data:`DEFAULT_CALL_BOUND_S`)."""
        return DEFAULT_CALL_BOUND_S

    def calls_in_flight(self) -> dict[str, str]:
        """``{key: tool}`` of the keys (:mod:`ani.adapters.locking`) held now by calls still
        running (``"*"``: the whole adapter); empty between calls."""
        return {k: h.call for k, h in self._calls.held().items()}

    def waited_s(self) -> float:
        """Seconds the call this thread runs waited for other calls (0 outside a call)."""
        return float(getattr(self._call_ctx, "waited", 0.0) or 0.0)

    def remaining_s(self) -> float | None:
        """Seconds left of the bound of the call this thread runs (None outside a call)."""
        deadline = getattr(self._call_ctx, "deadline", None)
        return None if deadline is None else deadline - time.monotonic()

    def _drain(self) -> Any:
        """For ``close()``: ``CallLocks.drain`` bounded by :data:`CLOSE_WAIT_S`; yields the keys
        of calls still running (their sessions must be left alone)."""
        return self._calls.drain(deadline=time.monotonic() + CLOSE_WAIT_S, call="close")

    def _hold(self, keys: list[str], bound_s: float, call: str) -> Any:
        """``CallLocks.hold`` of ``keys`` until ``bound_s`` seconds after this thread's call
        started (now, outside a call)."""
        start = getattr(self._call_ctx, "start", None) or time.monotonic()
        return self._calls.hold(keys, deadline=start + bound_s, call=call, bound_s=bound_s)

    def call(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """Run tool ``name``. Never raises (only KeyboardInterrupt / SystemExit pass): agent
        mistakes are ``ok=False`` results with their codes (module doc); a fault of the host or
        the harness inside the tool (:class:`~ani.errors.HostFault` such as ProgramMissing, or
        any other unexpected exception) is an ``internal`` result naming the cause (not
        retriable), and a ``harness_fault`` event (``tool``, ``cause``, ``kind``: see
        :func:`harness_fault_kind`) follows the call's ``tool_call`` event. The campaign runner
        makes a run with such an event an infrastructure error."""
        t0 = time.monotonic()
        args_in: Any = {} if arguments is None else arguments
        fault: Exception | None = None
        outer = getattr(self._call_ctx, "start", None)
        if outer is None:  # a call made from inside another (a wrapper) keeps the outer start
            self._call_ctx.start = t0
        try:
            if self._closed:  # the caller's (harness's) fault: an internal result and its event
                raise AdapterError(f"the {getattr(self, 'level', 'adapter')} adapter is closed (close() "
                                   "was called); nothing was sent: open() it again, or make a new one")
            result = self._dispatch(name, args_in)
        except Exception as exc:  # noqa: BLE001 - call never raises; the fault is logged below
            fault = exc
            result = ToolResult.failure(
                ErrorCode.INTERNAL,
                f"{name}: the harness failed, not your action ({_cause(exc)}); this call did "
                "not complete",
            )
        finally:
            if outer is None:
                self._call_ctx.start = None
                self._call_ctx.deadline = None
                self._call_ctx.waited = 0.0
        result.elapsed_s = time.monotonic() - t0
        self.trajectory.log_call(name, args_in if isinstance(args_in, dict) else {"_raw": repr(args_in)}, result)
        if fault is not None:
            self.trajectory.log("harness_fault", tool=name, cause=_cause(fault),
                                kind=harness_fault_kind(fault))
        return result

    def _dispatch(self, name: str, arguments: Any) -> ToolResult:
        entry = self._tools.get(name)
        if entry is None:
            return ToolResult.failure(
                ErrorCode.UNKNOWN_TOOL,
                f"unknown tool {name!r}; tools are: {', '.join(sorted(self._tools))}",
            )
        meta, fn = entry
        if not isinstance(arguments, dict):
            return ToolResult.failure(
                ErrorCode.INVALID_ARGUMENTS,
                f"arguments must be a JSON object, got {type(arguments).__name__}",
            )
        arguments = drop_absent_nulls(self._schema(name), arguments)  # strict-form "not given"
        try:
            parsed = meta["args"].model_validate(arguments)
        except ValidationError as exc:
            errs = format_validation_error(exc, top="arguments", unknown="unknown argument")
            return ToolResult.failure(ErrorCode.INVALID_ARGUMENTS, f"{name}: {errs}")
        for dev in self._devices_named(parsed):
            bad = self.check_device(dev)
            if bad is not None:
                return bad
        bound = self.call_bound_s(name, parsed)
        start = getattr(self._call_ctx, "start", None) or time.monotonic()
        self._call_ctx.deadline = start + bound
        t_wait = time.monotonic()
        try:
            with self._hold(self.call_keys(name, parsed), bound, name):
                self._call_ctx.waited = time.monotonic() - t_wait
                return fn(parsed)
        except Busy as exc:  # an AniTimeout: the wait for other calls of this adapter ran out
            return ToolResult.failure(
                ErrorCode.TIMEOUT,
                f"timeout after {bound:g} s waiting for {exc.describe()}; nothing was done",
                retriable=True,
                data={"waited_for": [k for k, _ in exc.holders], "busy_with": [h.call for _, h in exc.holders]},
            )
        except (AniTimeout, subprocess.TimeoutExpired) as exc:
            return error_result(exc)

    @staticmethod
    def _devices_named(parsed: BaseModel) -> list[str]:
        out: list[str] = []
        dev = getattr(parsed, "device", None)
        if isinstance(dev, str):
            out.append(dev)
        devs = getattr(parsed, "devices", None)
        if isinstance(devs, list):
            out.extend(d for d in devs if isinstance(d, str))
        return out

    # -- the tool every level offers --------------------------------------------------------

    @tool(
        args=TopologyArgs,
        read_only=True,
        description=(
            "Retrieve network topology information including nodes and their interconnections. "
            "Returns topology for specified devices or entire network if no devices specified."
        ),
    )
    def get_topology(self, args: TopologyArgs) -> ToolResult:
        topo = self.lab.topology
        aliases = getattr(topo, "aliases", None) or {}  # an imported task's own names
        wanted = set(args.devices) if args.devices else None
        nodes = []
        for n in topo.nodes:
            if wanted is not None and n not in wanted:
                continue
            node = {"name": n, "role": "router" if topo.is_router(n) else "host"}
            if n in aliases:
                node["original_name"] = aliases[n]
            nodes.append(node)
        links = []
        for link in topo.links:
            if wanted is not None and link.a.node not in wanted and link.b.node not in wanted:
                continue
            ends = []
            for ep in (link.a, link.b):
                end = {"node": ep.node, "interface": ep.ifname}
                if f"{ep.node}:{ep.ifname}" in aliases:
                    end["original_interface"] = aliases[f"{ep.node}:{ep.ifname}"]
                if ep.address is not None and not topo.is_router(ep.node):
                    end["address"] = str(ep.address)
                ends.append(end)
            links.append(ends)
        def orig(x: dict[str, Any]) -> str:
            return f" (task: {x['original_name']})" if "original_name" in x else ""

        def end_text(e: dict[str, Any]) -> str:
            alias = f" (task: {e['original_interface']})" if "original_interface" in e else ""
            return f"{e['node']} {e['interface']}{alias}"

        lines = [f"nodes: {', '.join(x['name'] + orig(x) + ('' if x['role'] == 'router' else ' (host)') for x in nodes)}"]
        lines.append("links:")
        for a, b in links:
            lines.append(f"  {end_text(a)} <-> {end_text(b)}")
        return ToolResult.success(
            "\n".join(lines),
            {
                "topology": {
                    "nodes": nodes,
                    "links": [f"{a['node']} {a['interface']} <-> {b['node']} {b['interface']}" for a, b in links],
                    "link_details": links,
                }
            },
        )
