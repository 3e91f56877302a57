# size: the A1 adapter's tools (allowlisted CLI, snapshot, rollback) are one class sharing its per-device state
"""A1: an allowlisted per-device CLI with snapshot and rollback (NMAA level A1).

Tools (NetConfBench names and argument schemas where they fit):

- ``get_topology(devices=[])`` (inherited)
- ``get_running_config(device)`` -> ``data.running_config`` (text; capped)
- ``execute_validation(device, command)`` -> ``data.output`` (capped, ``data.truncated``):
  one read-only command from the allowlist (``show ...`` in vtysh, ``nft list ...``); a
  ``show`` of a route-map, prefix-list or BGP neighbor the router does not have is
  ``not_found`` naming the ones it has (``e1: unknown route-map 'RM-FOO'; known: RM-A, ...``;
  ``data``: kind, name, suggestion, known, and FRR's own output), :mod:`ani.adapters.objects`
- ``update_config(device, commands)`` -> ``data.results``: ``[{command, status, message?}]``,
  status ``success`` | ``error`` | ``not_run``
- ``snapshot(device)`` -> ``data.snapshot_id`` (e.g. ``r1-s1``)
- ``rollback(device, snapshot_id)`` -> ``data.diff`` (unified diff of what changed), ``verified``
- ``list_snapshots(device)`` -> ``data.snapshots``

``update_config`` semantics (all or nothing):

1. Every item is sanitised and matched against the allowlist grammar of ``adapters/frr.yaml``,
   and the list is checked statically for block context (see :mod:`ani.adapters.allowlist`).
   Any refusal -> ``ok=False``, ``NOT_ALLOWED``, nothing sent; the refused item has status
   ``error``, every other ``not_run``.
2. An automatic snapshot of the pre-call state is taken (listed by ``list_snapshots`` with
   label ``auto: before update_config``).
3. Lines are sent one at a time (vtysh configuration mode through the scrapli session; nft
   statements as an argv inside the router). A line fails if the device prints a failure
   indicator (or any unknown ``%`` line) or nft exits non-zero; warnings (e.g. a route-map not
   defined yet) are ``success`` with the message; one naming a route-map or prefix-list still
   undefined after the whole call says so and names those the router has
   (``(still undefined on e1 after this call: unknown route-map 'RM-FOO'; known: RM-A)``).
4. On the first failure (or timeout): stop, roll back to the pre-call state, verify it, and
   return ``ok=False`` with ``ROLLED_BACK`` (or ``ROLLBACK_FAILED`` if verification fails),
   naming the failing line; lines that ran are listed in ``data.undone``; later lines are
   ``not_run``. Partial application never reports success.
5. ``changed`` is measured: running config + ruleset before vs after (so an exec-mode
   operation such as ``clear ip bgp *``, which resets sessions but changes no configuration,
   reports ``changed=False``; a rollback cannot undo such operations either).

A NETCONF lock on a router's running datastore (RFC 6241 §7.5: a lock keeps the other
management paths from changing the configuration) is honoured: while a session of the lab's
NETCONF server holds it (``lab.netconf_lock``), ``update_config`` and ``rollback`` on that router
send nothing and fail with ``locked`` (retriable), naming the session; a lock left by a server
that is no longer running counts as none. The check is made when the call starts.

Comment items (``!``/``#``), ``configure terminal``, ``end`` and a top-level ``exit`` are not
sent (status ``success`` with a note): the adapter manages configuration mode itself.

Devices reached through their CLI only (an inventory's, :mod:`ani.inventory`: the target has
``ssh_endpoint`` and ``vtysh`` but no ``exec``, so no shell): the same tools, except that nft
statements and commands are refused before anything is sent (``not_allowed``), snapshots hold
the FRR running config only, read over an SSH exec channel of their own, and a rollback sends the
configuration lines back to the snapshot through the CLI, verified as on a lab
(:class:`ani.adapters.snapshot.SnapshotStore`); ``check_device_status`` is refused as an option.

Concurrency: each router has one vtysh session, so calls on one router run one at a time and
calls on different routers in parallel. A call waits for its router at most its bound, counted
from its start: ``call_timeout_s`` for ``update_config`` and ``rollback``, ``command_timeout_s``
for the others (a read's command then gets what is left of it; ``update_config`` checks its bound
between lines). A call that could not get its router answers ``timeout`` (retriable),
naming the call that holds it; it never returns a false ``device_unreachable``.

Options (``options=`` of the constructor, the strict model :class:`A1Options`): ``platform``
(name or path, default ``frr``), ``transport`` (``auto``: ``local`` on a lab, ``ssh`` on a target
that offers only SSH, such as an inventory's devices; ``local``: vtysh run inside the router
through scrapli's bin transport; ``ssh``: the router's CLI over SSH through scrapli's ssh2
transport, ``lab.ssh_endpoint(router)``; the same tools and semantics either way: only the
agent's CLI session moves, snapshots and rollbacks are read and made out of band as before),
``command_timeout_s`` (10), ``call_timeout_s`` (60, whole
update_config / batch_configure_devices / apply_config), ``rollback_timeout_s`` (30),
``max_output_bytes`` (65536), ``extra_tools`` ([]: a list of ``batch_configure_devices``,
``check_device_status``), ``apply_config_shape`` (``netconfbench``: ``update_config``;
``netconfarena``: ``apply_config`` instead). An unknown key or a bad value (a timeout that is
not a number > 0, a platform that does not load, an unknown tool name) raises ConfigError
naming it and the known options.

Optional tools (off by default, so an A1 cell offers the same tools as before unless it asks):

- ``batch_configure_devices(devices, commands)`` (the NetConfBench draft §6.3.1, devices by
  name instead of ``device_ips``, no ``credential_id``) or ``batch_configure_devices(configs=
  {device: [commands]})``, option ``extra_tools``; and ``apply_config(configs={device:
  "line\nline"})`` (NetConfArena's action: newline-separated lines per device, configuration
  mode entered and left by the adapter: ``configure terminal`` / ``end`` lines are accepted
  and not sent twice), option ``apply_config_shape: netconfarena``. Both are **all or nothing
  across devices**: every device's list is vetted first (one refusal: ``not_allowed`` naming
  the device and the line, nothing sent to any device); a NETCONF lock on any device:
  ``locked``, nothing sent; then an automatic snapshot of every device (label ``auto: before
  <tool>``); then the devices in the order given, each as ``update_config`` sends its lines.
  At the first failing line on any device, that device and every device before it are rolled
  back to their snapshots and verified (``rolled_back``, naming the device and the line, or
  ``rollback_failed`` naming the devices not verified, also in ``data.not_restored``, which the
  run record's ``partial`` outcome reads); later devices get nothing.
  ``data``: ``devices`` = ``{device: {"status": applied | undone | failed | not_run | refused,
  "results": [...as update_config...], "pre_snapshot", "changed"?, "diff"?, "rolled_back"?,
  "rollback_detail"?}}``, ``failed_device``, ``failed_index``, ``rolled_back``, ``timed_out``.
  The call holds every device it names (one call per router at a time) and is bounded by
  ``call_timeout_s`` as a whole. Argument models: :mod:`ani.adapters.a1_args`.
- ``check_device_status(devices=[], metrics=["interface"])`` (the draft §6.3.2; ``metrics`` from
  its enum ``cpu``, ``memory``, ``interface``), option ``extra_tools``: read only, per router
  reachability, the state of each FRR daemon (``running``, ``frozen``, ``not_running``) and an
  overall ``up`` / ``degraded`` / ``down`` (:mod:`ani.adapters.device_status`). It never goes
  through vtysh (a frozen daemon would block it) and waits for no other call. ``ok`` is True
  whatever the status: a down router is an answer, not a failed call.
"""

from __future__ import annotations

import re
import time
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from ani.adapters.a1_args import ApplyConfigArgs, BatchArgs, StatusArgs
from ani.adapters.allowlist import Refused, Step, check_show, plan_config
from ani.adapters.base import Args, BaseAdapter, DeviceArgs, tool
from ani.adapters.cli_session import CliSession, SessionError, classify
from ani.adapters.device_status import format_status, read_status
from ani.adapters.error_map import error_result
from ani.adapters.objects import known_objects, show_target
from ani.adapters.options import Options, parse_options
from ani.adapters.platform import Platform, load_platform
from ani.adapters.sandbox import CappedOutput
from ani.adapters.snapshot import RouterState, Snapshot, SnapshotStore, key, unified
from ani.device.outcome import ReadError
from ani.device.parse import parse
from ani.device.state import lab_gone
from ani.errors import AniTimeout, ConfigError, ErrorCode, LabError
from ani.host.programs import program
from ani.lab.protocol import Devices, Lab, NetconfLocks, SshCapable, missing, provides
from ani.names import suggest, unknown
from ani.protocol import Level, ToolResult


#: FRR's words for a shown object that does not exist (``'route-map X' not found``, ``% Can't find
#: specified prefix-list``, ``% No such neighbor``): only then is the running config read to say which exist
_NOT_FOUND = re.compile(r"not found|can't find|no such|malformed", re.IGNORECASE)
#: FRR's warnings for a line applied with a reference to an object not defined (frr.yaml warning_patterns)
_DANGLING = re.compile(r"The route-map '(?P<rm>[^']+)' does not exist|% Route-map (?P<rm2>\S+) does not exist"
                       r"|% Prefix-list (?P<pl>\S+) does not exist")


class A1Options(Options):
    """The options of A1 (module doc)."""

    platform: str = Field("frr", min_length=1, description="platform file: a name under adapters/ or a path")
    transport: Literal["auto", "local", "ssh"] = Field(
        "auto", description="the CLI session: local (bin transport, vtysh in the router), ssh (the "
        "device's SSH endpoint), auto (local on a lab, else ssh)")
    command_timeout_s: float = Field(10.0, gt=0, description="bound of one CLI command and of opening vtysh, seconds")
    call_timeout_s: float = Field(60.0, gt=0, description="bound of a whole update_config, seconds")
    rollback_timeout_s: float = Field(30.0, gt=0, description="bound of each frr-reload / nft restore run, seconds")
    max_output_bytes: int = Field(65536, ge=1, description="cap on a command's output, bytes")
    extra_tools: list[Literal["batch_configure_devices", "check_device_status"]] = Field(
        default_factory=list,
        description="the NetConfBench draft's optional tools (§6.3) to offer beside the core ones",
    )
    apply_config_shape: Literal["netconfbench", "netconfarena"] = Field(
        "netconfbench",
        description=("netconfbench: update_config(device, commands); netconfarena: "
                     "apply_config(configs={device: 'line\\n...'}) instead"),
    )

    @field_validator("extra_tools")
    @classmethod
    def _unique_tools(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError("a tool is named more than once")
        return v


class ValidationArgs(Args):
    device: str = Field(description="Device name or identifier to execute command on")
    command: str = Field(
        description=(
            "Read-only command to execute (e.g., show commands): one of show running-config, "
            "show ip route ..., show bgp ..., show ip bgp ..., show ip ospf ..., show interface ..., "
            "show ip prefix-list ..., show route-map ..., nft list ruleset|table|set|chain ..."
        )
    )


class UpdateArgs(Args):
    device: str = Field(description="Device name or identifier to apply configuration to")
    commands: list[str] = Field(
        description=(
            "Ordered list of CLI commands to execute on the device, one per item, full keywords "
            "(FRR configuration statements with their block lines, e.g. 'router bgp 64500' then "
            "'neighbor ...', and 'nft add|delete element inet <table> <set> { <prefix> }')"
        )
    )


class RollbackArgs(Args):
    device: str = Field(description="Device name")
    snapshot_id: str = Field(description="Snapshot id returned by snapshot or list_snapshots (e.g. 'r1-s1')")


#: why an nft statement is refused on a target reached through its CLI only (an inventory's devices)
_NO_SHELL = ("nft statements and commands need a shell on the device; it is reached through its CLI "
             "only (an inventory device)")
#: tools offered only when named in the option ``extra_tools``
_OPTIONAL_TOOLS = ("batch_configure_devices", "check_device_status")
#: tools bounded by ``call_timeout_s`` (the others: ``command_timeout_s``)
_CHANGING_TOOLS = frozenset({"update_config", "rollback", "batch_configure_devices", "apply_config"})


class A1Adapter(BaseAdapter):
    """Allowlisted per-device CLI over FRR's vtysh (scrapli 2.0), with snapshot and rollback.

    Args:
        lab: a running :class:`ani.lab.Lab`.
        trajectory: where calls are logged.
        options: see the module docstring.
    """

    level: ClassVar[Level] = Level.A1
    blocklist_inspects: ClassVar[bool] = True  # CLI command lines (commands, configs)

    @classmethod
    def lab_needs(cls, options: dict | None = None) -> tuple[type, ...] | None:
        """``(SshCapable,)`` with option ``transport: ssh`` (the routers' CLI over the lab's SSH
        server), else none: ``auto`` and ``local`` run vtysh in the router on a lab."""
        return (SshCapable,) if dict(options or {}).get("transport") == "ssh" else ()

    def __init__(self, lab: Devices | None, *, trajectory: Any = None, options: dict | None = None) -> None:
        super().__init__(lab, trajectory=trajectory, options=options)
        self.settings = parse_options(A1Options, self.options, str(self.level))
        try:
            self.platform: Platform = load_platform(self.settings.platform)
        except FileNotFoundError as exc:
            raise ConfigError(f"a1 options: platform: {exc}") from None
        self.command_timeout_s = self.settings.command_timeout_s
        self.call_timeout_s = self.settings.call_timeout_s
        self.max_output = self.settings.max_output_bytes
        self.snapshots = SnapshotStore(
            lab,
            self.platform,
            timeout_s=self.command_timeout_s,
            rollback_timeout_s=self.settings.rollback_timeout_s,
            apply_lines=self._apply_lines,
        )
        self._sessions: dict[str, CliSession] = {}
        # "auto" is resolved at the first session (constructing the adapter does not touch the
        # lab); a named transport is checked against the target now. No target (lab None): the
        # options alone are being checked (ani run --option, a campaign cell), before any lab
        self._transport = (None if self.settings.transport == "auto" or lab is None
                           else self._pick_transport(self.settings.transport))
        if isinstance(getattr(type(lab), "platforms", None), property):  # an inventory: one platform
            other = {d: p for d, p in lab.platforms.items()
                     if load_platform(p).path != self.platform.path}
            if other:
                raise ConfigError(f"a1 options: platform: {self.platform.name!r}, but the target's devices "
                                  + ", ".join(f"{d} ({p})" for d, p in other.items()) + " have another one")
        if "check_device_status" in self.settings.extra_tools and lab is not None and self.snapshots.cli_only:
            raise ConfigError(f"a1 options: extra_tools: check_device_status reads the devices' processes: "
                              f"the target {type(lab).__name__} offers their CLI only")
        for name in set(_OPTIONAL_TOOLS) - set(self.settings.extra_tools):
            self._tools.pop(name, None)
        self._tools.pop("update_config" if self.settings.apply_config_shape == "netconfarena" else "apply_config")

    # -- lifecycle -------------------------------------------------------------------------

    def open(self) -> None:
        """Sessions open lazily, on a device's first use."""
        super().open()

    def close(self) -> None:
        """Close every session; waits (at most ``CLOSE_WAIT_S``) for calls in flight and leaves
        the sessions of calls that are still running alone."""
        with self._drain() as busy:
            for dev, s in list(self._sessions.items()):
                if dev not in busy:
                    s.close()
                    del self._sessions[dev]
        super().close()

    def call_keys(self, name: str, args: Any) -> list[str]:
        """One call per router at a time (its one vtysh session); a batch holds every router it
        names; ``check_device_status`` uses no session and waits for no call (module doc)."""
        if name == "check_device_status":
            return []
        return self._devices_named(args) or super().call_keys(name, args)

    def call_bound_s(self, name: str, args: Any) -> float:
        return self.call_timeout_s if name in _CHANGING_TOOLS else self.command_timeout_s

    @staticmethod
    def _devices_named(parsed: BaseModel) -> list[str]:
        """The devices a call names: ``device``, ``devices`` and the keys of ``configs``
        (batch_configure_devices, apply_config), in order, each once."""
        out = BaseAdapter._devices_named(parsed)
        configs = getattr(parsed, "configs", None)
        if isinstance(configs, dict):
            out.extend(d for d in configs if isinstance(d, str))
        return list(dict.fromkeys(out))

    @property
    def transport(self) -> str:
        """The CLI session's transport, ``local`` or ``ssh`` (option ``transport``)."""
        if self._transport is None:
            self._transport = self._pick_transport(self.settings.transport)
        return self._transport

    def _pick_transport(self, wanted: str) -> str:
        """``local`` or ``ssh`` (option ``transport``). Raises ConfigError for one the target
        cannot offer."""
        local, ssh = provides(self.lab, Lab), provides(self.lab, SshCapable)
        if wanted == "auto":
            return "local" if local or not ssh else "ssh"
        if not (local if wanted == "local" else ssh):
            what = (f"runs no vtysh here (not a Lab: no {', '.join(missing(self.lab, Lab))})" if wanted == "local"
                    else "has no SSH endpoints (no ssh_endpoint)")
            raise ConfigError(f"a1 options: transport: {wanted!r}: the target {type(self.lab).__name__} {what}")
        return wanted

    def session(self, device: str) -> CliSession:
        s = self._sessions.get(device)
        if s is None:
            if self.transport == "ssh":
                s = CliSession.over_ssh(device, lambda: self.lab.ssh_endpoint(device), self.platform,
                                        self.command_timeout_s)
            else:
                s = CliSession(device, self.lab.node_argv(device, ["vtysh"]), self.platform, self.command_timeout_s)
            self._sessions[device] = s
        return s

    def _cli(self, device: str, command: str, mode: str, read: bool = False) -> tuple[str, bool]:
        """(output, scrapli-failed) of one line. Raises AniTimeout when the bound ran out,
        SessionError for a session fault (``lab <id> is not running`` when the lab was removed
        under the adapter: :func:`ani.device.state.lab_gone`)."""
        # a read's bound is command_timeout_s less what it waited for the router (update_config's
        # lines keep theirs: its own bound, call_timeout_s, is checked between lines)
        waited = self.waited_s() if read else 0.0
        try:
            r = self.session(device).send(command, mode=mode, timeout_s=max(0.05, self.command_timeout_s - waited))
        except AniTimeout as exc:
            what = exc.what + (f"; {waited:.1f} s of it waiting for other calls on {device}" if waited >= 0.05 else "")
            raise AniTimeout(self.command_timeout_s, what) from exc  # the bound the call was given
        except SessionError as exc:
            gone = lab_gone(self.lab, device)
            if gone:
                err = SessionError(gone)
                err.gone = True  # type: ignore[attr-defined] - a retry cannot succeed (error_result)
                raise err from exc
            if self.transport == "local":
                program("vtysh")  # ProgramMissing (a host fault) if the session failed for want of it
            raise
        return r.output, r.failed

    def _plan(self, commands: list[str]) -> list[Step]:
        """:func:`ani.adapters.allowlist.plan_config`, and on a target reached through its CLI only,
        an nft statement refused (nothing can run it there). Raises Refused."""
        steps = plan_config(self.platform, commands)
        if self.snapshots.cli_only:
            for st in steps:
                if st.kind == "nft":
                    raise Refused(st.index, st.command, _NO_SHELL)
        return steps

    def _apply_lines(self, device: str, lines: list[str]) -> list[str]:
        """Send configuration ``lines`` to ``device`` through its CLI session (a rollback on a target
        reached through its CLI only, :class:`ani.adapters.snapshot.SnapshotStore`); every line is
        sent. Returns the device's error lines (``"'line': message"``); a session failure ends it."""
        cfg, errors = self.platform.d.config_mode, []
        try:
            self.session(device).to_exec()
            for line in lines:
                out, failed = self._cli(device, line, cfg)
                v = classify(self.platform, out, failed)
                if v.status == "error":
                    errors.append(f"{line.strip()!r}: {v.message}")
        except (AniTimeout, SessionError) as exc:
            errors.append(f"the CLI session failed: {exc}")
        finally:
            self._end_session(device)
        return errors

    def _netconf_locked(self, device: str, what: str) -> ToolResult | None:
        """``locked`` (retriable) if a NETCONF session holds the lock on ``device``'s running
        datastore (see the module doc); None if not, or if the lab has no NETCONF server (a
        lab object without ``netconf_lock`` has none)."""
        held = self.lab.netconf_lock(device) if provides(self.lab, NetconfLocks) else None
        if held is None:
            return None
        return ToolResult.failure(
            ErrorCode.LOCKED,
            f"{device}: {held.describe()}; {what} sends nothing while it is held (RFC 6241 §7.5): "
            "retry once it is released", retriable=True,
            data={"netconf_session": held.session_id, "target": held.target, "since": held.since})

    def _unreachable(self, device: str, exc: Exception) -> ToolResult:
        """A device that could not be read or driven (see :func:`ani.adapters.error_map.error_result`):
        ``timeout`` when a bound ran out, else ``device_unreachable``. The message names the
        device once."""
        return error_result(exc, device=device)

    # -- read-only tools ---------------------------------------------------------------------

    @tool(
        args=DeviceArgs,
        read_only=True,
        description=(
            "Retrieve the active running configuration from a network device. Returns the "
            "complete configuration as a text string."
        ),
    )
    def get_running_config(self, args: DeviceArgs) -> ToolResult:
        try:
            out, failed = self._cli(args.device, self.platform.d.snapshot.frr_show, self.platform.d.exec_mode,
                                    read=True)
        except (SessionError, AniTimeout) as exc:
            return self._unreachable(args.device, exc)
        if failed:
            return ToolResult.failure(ErrorCode.COMMAND_FAILED, f"{args.device}: {out.strip()}")
        capped = CappedOutput(self.max_output)
        capped.feed(out.encode("utf-8", errors="replace"))
        text, truncated, total = capped.text(), capped.truncated, capped.total
        return ToolResult.success(text, {"running_config": text, "truncated": truncated, "bytes": total})

    @tool(
        args=ValidationArgs,
        read_only=True,
        description=(
            "Execute a read-only validation command on a network device to verify configuration "
            "or check device status. This command must not alter the device state. One command "
            "per call; no pipes, separators or control characters."
        ),
    )
    def execute_validation(self, args: ValidationArgs) -> ToolResult:
        try:
            cmd = check_show(self.platform, args.command)
        except Refused as exc:
            return error_result(exc, data={"command": args.command})
        if cmd.kind == "nft" and self.snapshots.cli_only:
            return ToolResult.failure(ErrorCode.NOT_ALLOWED, f"{args.device}: {_NO_SHELL}; nothing was run",
                                      data={"command": args.command})
        if cmd.kind == "nft":
            try:
                res = self.lab.exec(args.device, cmd.argv, timeout=self.command_timeout_s)
            except LabError as exc:
                return self._unreachable(args.device, exc)
            if res.timed_out:
                raise AniTimeout(self.command_timeout_s, cmd.command)
            out, failed = res.stdout + (res.stderr if res.rc else ""), res.rc != 0
        else:
            try:
                out, failed = self._cli(args.device, cmd.command, self.platform.d.exec_mode, read=True)
            except (SessionError, AniTimeout) as exc:
                return self._unreachable(args.device, exc)
        capped = CappedOutput(self.max_output)
        capped.feed(out.encode("utf-8", errors="replace"))
        text, truncated, total = capped.text(), capped.truncated, capped.total
        data = {"command": cmd.command, "output": text, "truncated": truncated, "bytes": total}
        if cmd.kind != "nft" and _NOT_FOUND.search(out) and (missing := self._unknown_object(args.device, cmd.command)):
            kind, name, known = missing
            return ToolResult.failure(
                ErrorCode.NOT_FOUND, unknown(kind, name, known, where=args.device),
                data={**data, "kind": kind, "name": name, "suggestion": suggest(name, known), "known": known})
        if failed:
            return ToolResult.failure(
                ErrorCode.COMMAND_FAILED, f"{args.device}: {cmd.command!r}: {out.strip()[:500]}", data=data
            )
        return ToolResult.success(text, data)

    @tool(
        args=DeviceArgs,
        read_only=True,
        description="List the snapshots taken of a device (yours and the automatic pre-change ones).",
    )
    def list_snapshots(self, args: DeviceArgs) -> ToolResult:
        snaps = [s.summary() for s in self.snapshots.list(args.device)]
        lines = [f"{s['id']}  {time.strftime('%H:%M:%S', time.localtime(s['created']))}  {s['label']}" for s in snaps]
        return ToolResult.success("\n".join(lines) or f"no snapshots of {args.device}", {"snapshots": snaps})

    def _unknown_object(self, device: str, command: str) -> tuple[str, str, list[str]] | None:
        """``(kind, name, known names)`` when ``command`` shows one object (a route-map, a
        prefix-list, a BGP neighbor: :func:`ani.adapters.objects.show_target`) that ``device``'s
        running configuration does not have; None otherwise, and when it cannot be read (FRR's
        own answer then stands)."""
        target = show_target(command)
        if target is None:
            return None
        kind, name = target
        try:
            text, failed = self._cli(device, self.platform.d.snapshot.frr_show, self.platform.d.exec_mode, read=True)
            known = [] if failed else known_objects(parse(text), kind)
        except (SessionError, AniTimeout, ValueError):
            return None
        return None if failed or name in known else (kind, name, known)

    # -- state-changing tools ----------------------------------------------------------------

    @tool(
        args=DeviceArgs,
        description=(
            "Take a snapshot of a device's FRR running configuration and nftables ruleset. "
            "Returns its id, for rollback. Does not change the device."
        ),
    )
    def snapshot(self, args: DeviceArgs) -> ToolResult:
        try:
            snap = self.snapshots.take(args.device, label="snapshot")
        except (ReadError, LabError) as exc:
            return self._unreachable(args.device, exc)
        return ToolResult.success(f"snapshot {snap.id} taken", {"snapshot_id": snap.id, **snap.summary()})

    @tool(
        args=RollbackArgs,
        destructive=True,
        description=(
            "Restore a device's FRR running configuration and nftables ruleset exactly to a "
            "snapshot, verify it, and report what changed (unified diff)."
        ),
    )
    def rollback(self, args: RollbackArgs) -> ToolResult:
        snap = self.snapshots.get(args.device, args.snapshot_id)
        if snap is None:
            known = ", ".join(s.id for s in self.snapshots.list(args.device)) or "none"
            return ToolResult.failure(
                ErrorCode.UNKNOWN_SNAPSHOT, f"no snapshot {args.snapshot_id!r} of {args.device} (known: {known})"
            )
        if (locked := self._netconf_locked(args.device, "rollback")) is not None:
            return locked
        self._end_session(args.device)
        try:
            rep = self.snapshots.restore(args.device, snap.state)
        except (ReadError, LabError) as exc:
            return self._unreachable(args.device, exc)
        data = {
            "snapshot_id": snap.id,
            "verified": rep.verified,
            "diff": rep.diff,
            "frr_diff": rep.frr_diff,
            "nft_diff": rep.nft_diff,
            "detail": rep.detail,
        }
        if not rep.verified:
            return ToolResult.failure(
                ErrorCode.ROLLBACK_FAILED,
                f"{args.device}: rollback to {snap.id} could not be verified: " + " | ".join(rep.detail)[:2000],
                data=data,
                changed=rep.changed,
            )
        text = f"rolled back {args.device} to {snap.id}" + (f"; changes:\n{rep.diff}" if rep.diff else "; nothing to change")
        return ToolResult.success(text, data, changed=rep.changed)

    @tool(
        args=UpdateArgs,
        destructive=True,
        description=(
            "Apply configuration commands to a network device. Executes a sequence of CLI "
            "commands and returns detailed status for each command. All or nothing: if a "
            "command fails, the device is rolled back to its state before the call."
        ),
    )
    def update_config(self, args: UpdateArgs) -> ToolResult:
        dev = args.device
        cmds = args.commands
        if not cmds:
            return ToolResult.failure(ErrorCode.INVALID_ARGUMENTS, "update_config: commands is empty")
        try:
            steps = self._plan(list(cmds))
        except Refused as exc:
            results = [
                {"command": c, "status": "error", "message": exc.reason} if i == exc.index
                else {"command": c, "status": "not_run"}
                for i, c in enumerate(cmds)
            ]
            return ToolResult.failure(
                ErrorCode.NOT_ALLOWED,
                exc.message + "; nothing was sent",
                data={"results": results, "failed_index": exc.index, "rolled_back": False},
            )
        if (locked := self._netconf_locked(dev, "update_config")) is not None:
            return locked
        try:
            pre = self.snapshots.take(dev, label="auto: before update_config")
        except (ReadError, LabError) as exc:
            return self._unreachable(dev, exc)

        results: list[dict[str, Any]] = [{"command": c, "status": "not_run"} for c in cmds]
        failed, timed_out = self._send(dev, steps, results)

        if failed is None:
            try:
                post = self.snapshots.read(dev)
            except (ReadError, LabError) as exc:
                return self._unreachable(dev, exc)
            changed = not self.snapshots.same(pre.state, post)
            self._note_dangling(dev, results, post.frr)
            diff = self._diff(pre.state, post)
            n = sum(1 for s in steps if s.kind != "noop")
            text = self._results_text(results) + (f"\n{n} command(s) applied" + ("" if changed else " (no change to the device)"))
            return ToolResult.success(
                text,
                {"results": results, "pre_snapshot": pre.id, "diff": diff, "rolled_back": False},
                changed=changed,
            )

        step, why = failed
        results[step.index] = {"command": step.command, "status": "error", "message": why}
        try:
            rep = self.snapshots.restore(dev, pre.state)
        except (ReadError, LabError) as exc:
            return ToolResult.failure(
                ErrorCode.ROLLBACK_FAILED,
                f"command {step.index + 1} {step.command!r} failed ({why}); rolling back failed: {exc}",
                data={"results": results, "failed_index": step.index, "rolled_back": False},
                changed=True,
            )
        ran = self._mark_undone(steps, results, rep.verified)
        data = {
            "results": results,
            "failed_index": step.index,
            "ran": [cmds[i] for i in ran],
            "undone": [cmds[i] for i in ran if steps[i].kind != "exec"] if rep.verified else [],
            "rolled_back": rep.verified,
            "pre_snapshot": pre.id,
            "timed_out": timed_out,
            "rollback_detail": rep.detail,  # every frr-reload / nft error line of the rollback
        }
        head = (
            f"command {step.index + 1} {step.command!r} failed: {why}. "
            f"{len(ran)} earlier command(s) had run"
        )
        if rep.verified:
            msg = head + f"; the device was rolled back to its state before the call ({pre.id}): nothing of this call remains"
            return ToolResult.failure(
                ErrorCode.ROLLED_BACK, msg, data=data, changed=False,
                text=self._results_text(results) + f"\nerror [{ErrorCode.ROLLED_BACK.value}]: {msg}",
            )
        msg = head + f"; rolling back to {pre.id} could NOT be verified: " + " | ".join(rep.detail)[:2000]
        return ToolResult.failure(
            ErrorCode.ROLLBACK_FAILED, msg, data=data, changed=True,
            text=self._results_text(results) + f"\nerror [{ErrorCode.ROLLBACK_FAILED.value}]: {msg}",
        )

    # -- optional tools (options extra_tools, apply_config_shape) ------------------------------

    @tool(
        args=BatchArgs,
        destructive=True,
        description=(
            "Apply configuration commands to multiple network devices in one call: the same "
            "commands to every device of 'devices', or a list per device in 'configs'. Returns "
            "the status of each command on each device. All or nothing across devices: if a "
            "command fails on any device, every device is rolled back to its state before the call."
        ),
    )
    def batch_configure_devices(self, args: BatchArgs) -> ToolResult:
        return self._apply_many("batch_configure_devices", args.plan())

    @tool(
        name="apply_config",
        args=ApplyConfigArgs,
        destructive=True,
        description=(
            "Apply configuration to one or more network devices: configs maps each device to its "
            "configuration lines separated by newlines. Configuration mode is entered and left "
            "automatically. Returns the status of each line. All or nothing: if a line fails on "
            "any device, every device is rolled back to its state before the call."
        ),
    )
    def apply_config(self, args: ApplyConfigArgs) -> ToolResult:
        return self._apply_many("apply_config", args.plan())

    @tool(
        args=StatusArgs,
        read_only=True,
        description=(
            "Check the operational status of network devices: reachability, the state of each "
            "routing daemon (running, frozen, not running), and on request interface link state "
            "and counters, CPU time and memory of the daemons. Does not change the devices."
        ),
    )
    def check_device_status(self, args: StatusArgs) -> ToolResult:
        devs = args.devices or self.devices
        statuses = [read_status(self.lab, d, args.metrics, timeout_s=self.command_timeout_s) for d in devs]
        return ToolResult.success("\n".join(format_status(st) for st in statuses),
                                  {"devices": {st["device"]: st for st in statuses}, "metrics": list(args.metrics)})

    def _apply_many(self, tool: str, plan: dict[str, list[str]]) -> ToolResult:
        """Apply ``{device: commands}`` in order, all or nothing across the devices (module doc,
        "batch_configure_devices and apply_config")."""
        devs = list(plan)
        per: dict[str, dict[str, Any]] = {
            d: {"status": "not_run", "results": [{"command": c, "status": "not_run"} for c in plan[d]]} for d in devs
        }
        steps: dict[str, list[Step]] = {}
        for dev in devs:
            try:
                steps[dev] = self._plan(list(plan[dev]))
            except Refused as exc:
                per[dev]["status"] = "refused"
                if exc.index < len(plan[dev]):
                    per[dev]["results"][exc.index] = {"command": plan[dev][exc.index], "status": "error",
                                                      "message": exc.reason}
                return ToolResult.failure(
                    ErrorCode.NOT_ALLOWED, f"{dev}: {exc.message}; nothing was sent to any device",
                    data={"devices": per, "failed_device": dev, "failed_index": exc.index, "rolled_back": False})
        for dev in devs:
            if (locked := self._netconf_locked(dev, tool)) is not None:
                return locked
        pre: dict[str, Snapshot] = {}
        for dev in devs:
            try:
                pre[dev] = self.snapshots.take(dev, label=f"auto: before {tool}")
            except (ReadError, LabError) as exc:
                return self._unreachable(dev, exc)
            per[dev]["pre_snapshot"] = pre[dev].id

        failed: tuple[str, Step, str] | None = None
        timed_out = False
        for dev in devs:
            per[dev]["status"] = "applied"
            bad, timed_out = self._send(dev, steps[dev], per[dev]["results"])
            if bad is not None:
                failed = (dev, *bad)
                break

        if failed is None:
            changed_any, lines = False, []
            for dev in devs:
                try:
                    post = self.snapshots.read(dev)
                except (ReadError, LabError) as exc:
                    return self._unreachable(dev, exc)
                changed = not self.snapshots.same(pre[dev].state, post)
                changed_any = changed_any or changed
                self._note_dangling(dev, per[dev]["results"], post.frr)
                per[dev].update(changed=changed, diff=self._diff(pre[dev].state, post))
                n = sum(1 for s in steps[dev] if s.kind != "noop")
                lines.append(f"{dev}:\n" + self._results_text(per[dev]["results"], indent="  ")
                             + f"\n  {n} command(s) applied" + ("" if changed else " (no change to the device)"))
            return ToolResult.success("\n".join(lines), {"devices": per, "rolled_back": False}, changed=changed_any)

        fdev, step, why = failed
        per[fdev]["status"] = "failed"
        per[fdev]["results"][step.index] = {"command": step.command, "status": "error", "message": why}
        touched = devs[: devs.index(fdev) + 1]
        unverified: list[str] = []
        ran_on: list[str] = []
        n_ran = 0
        for dev in touched:
            try:
                rep = self.snapshots.restore(dev, pre[dev].state)
                ok, detail = rep.verified, rep.detail
            except (ReadError, LabError) as exc:
                ok, detail = False, [f"rolling back failed: {exc}"]
            ran = self._mark_undone(steps[dev], per[dev]["results"], ok)
            n_ran += len(ran)
            if ran:
                ran_on.append(dev)
            if dev != fdev:
                per[dev]["status"] = "undone"
            per[dev].update(rolled_back=ok, rollback_detail=detail)
            if not ok:
                unverified.append(dev)
        data = {"devices": per, "failed_device": fdev, "failed_index": step.index,
                "rolled_back": not unverified, "timed_out": timed_out}
        head = (f"{fdev}: command {step.index + 1} {step.command!r} failed: {why}. {n_ran} earlier command(s) had run"
                + (f" (on {', '.join(ran_on)})" if ran_on else ""))
        text = "\n".join(f"{d}:\n" + self._results_text(per[d]["results"], indent="  ") for d in devs)
        if not unverified:
            snaps = ", ".join(pre[d].id for d in touched)
            msg = (head + f"; {'every device was' if len(touched) > 1 else 'the device was'} rolled back to its "
                   f"state before the call ({snaps}): nothing of this call remains"
                   + (f"; not sent to {', '.join(devs[len(touched):])}" if len(touched) < len(devs) else ""))
            return ToolResult.failure(ErrorCode.ROLLED_BACK, msg, data=data, changed=False,
                                      text=text + f"\nerror [{ErrorCode.ROLLED_BACK.value}]: {msg}")
        data["not_restored"] = unverified  # the run record's ``partial`` outcome names them
        why_not = " | ".join(f"{d}: " + " | ".join(per[d]["rollback_detail"]) for d in unverified)[:2000]
        msg = head + f"; rolling back could NOT be verified on {', '.join(unverified)}: {why_not}"
        return ToolResult.failure(ErrorCode.ROLLBACK_FAILED, msg, data=data, changed=True,
                                  text=text + f"\nerror [{ErrorCode.ROLLBACK_FAILED.value}]: {msg}")

    # -- helpers ------------------------------------------------------------------------------

    def _send(self, dev: str, steps: list[Step], results: list[dict[str, Any]]) -> tuple[tuple[Step, str] | None, bool]:
        """Send planned ``steps`` to ``dev`` one line at a time, filling ``results`` (one per
        command, by index); stop at the first failure. Returns ``(failed, timed_out)``:
        ``failed`` is ``(step, why)`` of the failing line or None. Nothing is rolled back here."""
        failed: tuple[Step, str] | None = None
        timed_out = False
        cfg = self.platform.d.config_mode
        step = steps[0]
        try:
            self.session(dev).to_exec()
            for step in steps:
                left = self.remaining_s()  # counted from the call's start (waiting included)
                if left is not None and left <= 0:
                    failed, timed_out = (step, f"call exceeded its bound of {self.call_timeout_s:g} s"), True
                    break
                for nav in step.nav:
                    out, sfail = self._cli(dev, nav, cfg)
                    v = classify(self.platform, out, sfail)
                    if v.status == "error":
                        failed = (step, f"navigation {nav!r} before this line failed: {v.message}")
                        break
                if failed:
                    break
                if step.kind == "noop":
                    results[step.index] = {"command": step.command, "status": "success", "message": step.note}
                    continue
                if step.kind == "nft":
                    res = self.lab.exec(dev, step.argv, timeout=self.command_timeout_s)
                    if res.timed_out:
                        failed, timed_out = (step, f"timeout after {self.command_timeout_s:g} s"), True
                        break
                    if res.rc != 0:
                        failed = (step, (res.stderr or res.stdout).strip() or f"nft exited {res.rc}")
                        break
                    results[step.index] = {"command": step.command, "status": "success"}
                    continue
                mode = self.platform.d.exec_mode if step.kind == "exec" else cfg
                out, sfail = self._cli(dev, step.norm, mode)
                v = classify(self.platform, out, sfail)
                if v.status == "error":
                    failed = (step, v.message)
                    break
                r: dict[str, Any] = {"command": step.command, "status": "success"}
                if v.message:
                    r["message"] = v.message
                results[step.index] = r
        except AniTimeout as exc:
            failed, timed_out = (step, str(exc)), True
        except SessionError as exc:
            failed = (step, f"session failed: {exc}")
        finally:
            if self.session(dev).is_open:
                self.session(dev).to_exec()

        return failed, timed_out

    @staticmethod
    def _mark_undone(steps: list[Step], results: list[dict[str, Any]], verified: bool) -> list[int]:
        """After a rollback: the indices of the commands that had run (not noops), each marked
        ``undone`` (= ``verified``), or, for an exec-mode operation, said to be beyond undoing."""
        ran = [i for i, r in enumerate(results) if r["status"] == "success" and steps[i].kind != "noop"]
        for i in ran:
            if steps[i].kind == "exec":
                results[i]["message"] = "an operation, not configuration: a rollback cannot undo it"
            else:
                results[i]["undone"] = verified
        return ran

    @staticmethod
    def _note_dangling(device: str, results: list[dict[str, Any]], frr_after: str) -> None:
        """A line FRR applied with a warning that it names a route-map / prefix-list that does not
        exist (a reference, legitimate before the object is defined) gets, when the object is
        still undefined after the whole call, the names ``device`` has: ``... does not exist.
        (still undefined on e1 after this call: unknown route-map 'RM-FOO'; known: RM-A)``."""
        try:
            cfg = parse(frr_after)
        except ValueError:
            return
        for r in results:
            m = _DANGLING.search(str(r.get("message", "")))
            if not m:
                continue
            kind = "route-map" if (m.group("rm") or m.group("rm2")) else "prefix-list"
            name = m.group("rm") or m.group("rm2") or m.group("pl")
            known = known_objects(cfg, kind)
            if name not in known:
                r["message"] += f" (still undefined on {device} after this call: {unknown(kind, name, known)})"

    def _end_session(self, device: str) -> None:
        s = self._sessions.get(device)
        if s is not None and s.is_open:
            s.to_exec()

    @staticmethod
    def _diff(a: RouterState, b: RouterState) -> str:
        (af, an), (bf, bn) = key(a), key(b)
        return unified(af, bf, "running-config") + unified(an, bn, "nft ruleset")

    @staticmethod
    def _results_text(results: list[dict[str, Any]], indent: str = "") -> str:
        lines = []
        for i, r in enumerate(results, 1):
            ln = f"{indent}{i}. [{r['status']}] {r['command']}"
            if r.get("message"):
                ln += f"  -> {r['message']}"
            if r.get("undone"):
                ln += "  (undone by rollback)"
            lines.append(ln)
        return "\n".join(lines)
