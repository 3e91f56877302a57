"""A0: a raw device shell, sandboxed.

Tools: ``get_topology`` (inherited) and ``shell(device, command)``. The command runs as
``/bin/sh -c COMMAND`` inside router ``device``'s network namespace, with plain ``vtysh``
bound to that router's FRR, in the bubblewrap sandbox of :mod:`ani.adapters.sandbox`
(what it permits and refuses is listed there and in ``docs/protocol.md``). ``vtysh`` there
reaches FRR only through the harness's broker (:mod:`ani.adapters.vtybroker`, one per call),
which checks every line vtysh will execute: a line that makes FRR touch host files (``copy FILE
running-config``, ``banner motd file``, ``log file``, ``line vty``, ...), a line vtysh would cut
or read otherwise (a control character, more than 4,095 bytes) and a regular expression past
:mod:`ani.adapters.regex_bound` refuse that vtysh run and the call answers ``NOT_ALLOWED``; under
the blocklist ablation (:meth:`A0Adapter.set_blocklist`) a blocklisted line, abbreviated or
not, answers ``BLOCKED``, and so does a blocklisted nftables change, which is measured and
undone (:mod:`ani.adapters.nftguard`; a ruleset that cannot be read back fails closed).
``data["refused"]`` / ``data["nft_blocked"]`` say what.

Result of ``shell``: ``data = {exit_status, stdout, stderr, stdout_truncated,
stderr_truncated, timed_out, stdout_bytes, stderr_bytes, memory_exceeded, pids_exceeded,
memory_peak_bytes, changed_parts}``.

- exit status 0: ``ok=True``;
- non-zero exit status: ``ok=False``, ``ErrorCode.COMMAND_FAILED`` ("exit status N"), data filled;
- the call reached its memory or task bound (``sandbox.CALL_MEMORY_BYTES``, or the router's
  memory bound, :mod:`ani.lab.memcg`, which the call shares with the router's FRR: the kernel's OOM
  killer killed a process of it; ``sandbox.CALL_PIDS_MAX``: a fork failed), whatever the exit
  status: ``ok=False``, ``ErrorCode.RESOURCE_EXHAUSTED`` naming the bound, data filled;
- timeout: ``ok=False``, ``ErrorCode.TIMEOUT`` ("timeout after N s"), retriable, the whole
  process tree killed, ``exit_status`` None, the output read so far in data;
- unknown device / malformed arguments: ``UNKNOWN_DEVICE`` / ``INVALID_ARGUMENTS`` (nothing runs);
- the router's namespace or FRR pathspace missing: ``DEVICE_UNREACHABLE`` (nothing runs).
- the sandbox could not be set up (bwrap died before exec'ing the command, told by its status fd,
  not by the output; e.g. another lab's run-dir mount vanished under bwrap's walk of the mount
  table): retried, at most ``sandbox.SETUP_ATTEMPTS`` setups within the timeout (the command
  never ran, so a retry is safe); if none succeeds, ``SandboxSetupFailed`` (a HostFault):
  ``BaseAdapter.call`` answers ``INTERNAL`` with a ``harness_fault`` event and the campaign
  runner makes the run an infrastructure error, never the agent's ``COMMAND_FAILED``.

``changed`` is measured: the router's state is captured before and after the call and
compared, and ``data["changed_parts"]`` names the parts that differ. The parts
(:data:`STATE_PARTS`): FRR ``show running-config``; ``nft -s list ruleset`` (stateless: no
counters); ``ip -j addr``; ``ip -j route show table all`` and its IPv6 twin; ``ip -j rule``
(v4, v6); the IPv4/IPv6 forwarding sysctls. What follows by itself is left out so that a
read-only call never reports a change: address lifetimes and DAD state, the kernel's own IPv6
link-local addresses, carrier flags and operstate (they follow the peer), kernel-derived routes
(``proto kernel``: from addresses and links, which are compared) and routes learned by routing
protocols (``proto bgp/ospf/...``: from FRR's configuration, which is compared, and from
neighbours). So a direct ``ip route del`` of a BGP-learned route is not seen; everything an agent
configures is. If a capture fails or takes more than 5 s (its process group is then killed), the
call reports ``changed=True`` with ``changed_parts=["unknown"]``. FRR's running config and the
ruleset are read by the device layer's one reader (:func:`ani.device.state.read_state`: a
router whose lab is gone or whose daemon is dead cannot be captured), the rest by one shell
script. One capture: ~50 ms for a brownfield-small router (``benchmarks/a0_capture.py``, see
docs/performance.md).

Concurrency: calls on one router run one at a time (the ``changed`` measurement compares the
router before and after the call, so another call's change must not fall in between); calls on
different routers run in parallel. A call waits for its router at most ``timeout_s`` from its
start and the command gets what is left of it (``timeout``, retriable, naming the call it
waited for, when nothing is left).

Options (``create_adapter("a0", lab, options={...})``, the strict model :class:`A0Options`: an
unknown key or a bad value is a ConfigError naming it and the known options):
    timeout_s (float > 0, default 30): bound on one command's wall time, seconds.
    max_output_bytes (int >= 1, default 65536): cap on each of stdout and stderr, bytes.
    user (str, default "frr"): the unprivileged user the shell runs as.
"""

from __future__ import annotations

import functools
import json
from typing import Any, ClassVar

from pydantic import Field, field_validator

import time

from ani.adapters import nftguard, sandbox, vtybroker
from ani.adapters.base import BaseAdapter, DeviceArgs, tool
from ani.adapters.options import Options, parse_options
from ani.device.outcome import ReadError
from ani.device.state import frr_lines, lab_gone, nft_lines, read_state
from ani.errors import ErrorCode, LabError
from ani.lab.protocol import Lab, LocalFrr, require
from ani.protocol import Level, ToolResult

MAX_COMMAND_CHARS = 65536
#: keys of ``ip -j`` output that change by themselves (lifetimes count down, DAD finishes,
#: carrier follows the peer)
VOLATILE_KEYS = frozenset(
    {"valid_life_time", "preferred_life_time", "expires", "tentative", "optimistic", "operstate"}
)
#: link flags that follow the carrier (the peer's state), not this router's configuration
CARRIER_FLAGS = frozenset({"LOWER_UP", "NO-CARRIER", "M-DOWN", "DORMANT"})
#: route protocols whose routes the kernel or a routing protocol derives from configuration
#: and neighbours (numbers: FRR's ids without a name in /etc/iproute2/rt_protos)
DERIVED_ROUTE_PROTOCOLS = frozenset(
    {"kernel", "redirect", "ra", "bgp", "isis", "ospf", "rip", "eigrp", "babel", "nhrp", "ldp",
     "sharp", "pbr", "openfabric", "srte", "191", "193", "194", "195", "197", "198"}
)
#: bound on one state capture, seconds (a frozen FRR must not stall every call for long)
SNAPSHOT_TIMEOUT_S = 5.0
#: a capture larger than this is not trusted (and counts as a change)
SNAPSHOT_MAX_BYTES = 32 * 1024 * 1024

SHELL_DESCRIPTION = (
    "Run a shell command on a router (POSIX sh, as `sh -c COMMAND`) inside the router's "
    "network namespace. Linux networking tools (ip, nft, ping, ss, sysctl) act on this router; "
    "`vtysh -c '...'` talks to this router's FRR (e.g. vtysh -c 'configure terminal' -c "
    "'router bgp 65000' -c '...'). Returns exit status, stdout and stderr (each capped, with a "
    "truncation marker). The command is killed at the timeout; background processes do not "
    "survive the call. The host's files are read-only."
)


class ShellArgs(DeviceArgs):
    command: str = Field(
        min_length=1,
        max_length=MAX_COMMAND_CHARS,
        description="Shell command line, run as `sh -c COMMAND` on the router",
    )

    @field_validator("command")
    @classmethod
    def _no_nul(cls, v: str) -> str:
        if "\x00" in v:
            raise ValueError("must not contain NUL bytes")
        if not v.strip():
            raise ValueError("must not be blank")
        return v


class A0Options(Options):
    """The options of A0 (module doc)."""

    timeout_s: float = Field(sandbox.DEFAULT_TIMEOUT_S, gt=0, description="bound on one command, seconds")
    max_output_bytes: int = Field(sandbox.DEFAULT_MAX_OUTPUT_BYTES, ge=1, description="cap on stdout and on stderr, bytes")
    user: str = Field("frr", min_length=1, description="the unprivileged user the shell runs as")


def _strip_volatile(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip_volatile(v) for k, v in obj.items() if k not in VOLATILE_KEYS}
    if isinstance(obj, list):
        return [_strip_volatile(v) for v in obj]
    return obj


def _norm_addr(links: list[dict]) -> list[dict]:
    """``ip -j addr``: without lifetimes, DAD/carrier state and kernel-made IPv6 link-locals."""
    out = []
    for link in links:
        link = dict(link)
        link["flags"] = [f for f in link.get("flags", []) if f not in CARRIER_FLAGS]
        link["addr_info"] = [
            a for a in link.get("addr_info", []) if not (a.get("family") == "inet6" and a.get("scope") == "link")
        ]
        out.append(_strip_volatile(link))
    return out


def _norm_routes(routes: list[dict]) -> list[dict]:
    """``ip -j route``: only routes set directly (static, boot, ...); kernel-derived and
    protocol-learned routes follow from addresses, links, FRR config and neighbours."""
    keep = [r for r in routes if str(r.get("protocol", "boot")) not in DERIVED_ROUTE_PROTOCOLS]
    for r in keep:
        if "flags" in r:
            r["flags"] = [f for f in r["flags"] if f not in ("linkdown", "offload", "trap")]
    return _strip_volatile(keep)


#: the parts of a router's state, in the order ``state_of`` captures them, with their normaliser;
#: ``frr`` and ``nft`` are read by the device layer's one reader (:mod:`ani.device.state`), the
#: others by one shell script
STATE_PARTS: list[tuple[str, str | None, Any]] = [
    ("frr", None, None),
    ("nft", None, None),
    ("addr", "ip -j addr", _norm_addr),
    ("route4", "ip -j route show table all", _norm_routes),
    ("route6", "ip -j -6 route show table all", _norm_routes),
    ("rule4", "ip -j rule", None),
    ("rule6", "ip -j -6 rule", None),
    ("sysctl", "cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv6/conf/all/forwarding", None),
]
SEP = "@@ani-state@@"


class A0Adapter(BaseAdapter):
    """Level A0: ``get_topology`` and a sandboxed ``shell(device, command)``.

    Args:
        lab: a running :class:`ani.lab.Lab`: a :class:`ani.lab.protocol.Lab` (``topology``;
            ``node_argv`` for the state reads and nft) with :class:`ani.lab.protocol.LocalFrr`
            (``netns``, ``pathspace``, ``node_dir``: the sandbox).
        trajectory: where calls are logged.
        options: ``timeout_s``, ``max_output_bytes``, ``user`` (see the module doc).

    Raises ConfigError for an invalid option; CapabilityMissing (at ``open()`` or the first
    ``shell`` call) if the host lacks bwrap, setpriv, root or the user, or the lab local FRR.
    """

    level = Level.A0
    needs: ClassVar[tuple[type, ...] | None] = ()  # vtysh and exec in the router: no server of the lab
    blocklist_inspects: ClassVar[bool] = True  # shell command strings (and every vtysh line at the broker)

    def __init__(self, lab: Lab, *, trajectory: Any = None, options: dict | None = None) -> None:
        super().__init__(lab, trajectory=trajectory, options=options)
        self.settings = parse_options(A0Options, self.options, str(self.level))
        self.timeout_s = self.settings.timeout_s
        self.max_output_bytes = self.settings.max_output_bytes
        self.user = self.settings.user
        self._supported = False
        #: blocklist enforced at the FRR entry point (set by the blocklist ablation)
        self.block_rules: tuple[tuple[str, str], ...] = ()

    def set_blocklist(self, rules: list[tuple[str, str]]) -> None:
        """Enforce ``rules`` ((regex, reason) pairs) on every vtysh line the sandbox sends
        (:mod:`ani.adapters.vtybroker`): a hit refuses that vtysh run, the call is ``blocked``."""
        self.block_rules = tuple(rules)

    def _nft_rules(self) -> list[tuple[Any, str]]:
        """The blocklist's nft rules (compiled), checked against measured ruleset changes."""
        import re

        return [(re.compile(p, re.IGNORECASE), r) for p, r in self.block_rules if "nft" in p]

    def open(self) -> None:
        self._check_support()
        routers = self.lab.routers
        if routers:  # FRR's command set now (cached per vtysh binary), not in the first vtysh run
            try:
                vtybroker.checker_for(self.block_rules, self.sandbox_spec(routers[0]).pathspace)
            except OSError:
                pass  # the first call retries and reports
        super().open()

    def _check_support(self) -> None:
        if not self._supported:
            sandbox.check_support(sandbox.SandboxSpec("", "", "", user=self.user))
            self._supported = True

    def call_keys(self, name: str, args: Any) -> list[str]:
        """One router at a time (see the module doc)."""
        return self._devices_named(args) or super().call_keys(name, args)

    def call_bound_s(self, name: str, args: Any) -> float:
        return self.timeout_s

    def sandbox_spec(self, device: str) -> sandbox.SandboxSpec:
        """The sandbox of router ``device``. Raises CapabilityMissing (no LocalFrr), UnknownNode."""
        lab = require(self.lab, LocalFrr, "A0's sandbox")
        return sandbox.SandboxSpec(
            netns=lab.netns(device),
            pathspace=lab.pathspace(device),
            hostname=device,
            user=self.user,
        )

    # -- state capture for `changed` -------------------------------------------------------

    def state_of(self, device: str) -> dict[str, str] | None:
        """Router ``device``'s state, canonical text per part (see :data:`STATE_PARTS`), or
        None if it could not be captured. Runs outside the sandbox, as root: FRR's running
        config and the ruleset through :func:`ani.device.state.read_state` (normalised by
        ``frr_lines`` / ``nft_lines``), the rest in one process."""
        spec = self.sandbox_spec(device)
        try:
            st = read_state(self.lab, device, timeout=SNAPSHOT_TIMEOUT_S)
        except (ReadError, LabError, OSError):
            return None
        script = f"; echo {SEP}; ".join(cmd for _, cmd, _ in STATE_PARTS if cmd is not None)
        try:
            res = sandbox.run_capped(
                self.lab.node_argv(device, ["sh", "-c", script]),
                timeout_s=SNAPSHOT_TIMEOUT_S,
                max_bytes=SNAPSHOT_MAX_BYTES,
            )
        except OSError:
            return None
        if res.exit_status != 0 or res.stdout_truncated:
            return None
        shell_parts = [(name, norm) for name, cmd, norm in STATE_PARTS if cmd is not None]
        texts = res.stdout.split(SEP + "\n")
        if len(texts) != len(shell_parts):
            return None
        out: dict[str, str] = {"frr": "\n".join(frr_lines(st.frr)), "nft": "\n".join(nft_lines(st.nft))}
        for (name, norm), text in zip(shell_parts, texts):
            if norm is not None:
                try:
                    text = json.dumps(norm(json.loads(text)), sort_keys=True)
                except (ValueError, TypeError, AttributeError):
                    pass
            out[name] = text
        return out

    # -- the tool --------------------------------------------------------------------------

    @tool(args=ShellArgs, description=SHELL_DESCRIPTION, destructive=True)
    def shell(self, args: ShellArgs) -> ToolResult:
        self._check_support()
        spec = self.sandbox_spec(args.device)
        gone = lab_gone(self.lab, args.device)
        if gone:
            return ToolResult.failure(ErrorCode.DEVICE_UNREACHABLE, f"{args.device}: {gone}")
        if not spec.run_dir.is_dir() or not spec.etc_dir.is_dir():
            return ToolResult.failure(
                ErrorCode.DEVICE_UNREACHABLE,
                f"{args.device}: FRR pathspace {spec.pathspace!r} is missing "
                f"({spec.run_dir} / {spec.etc_dir}); not falling back to another FRR",
            )
        waited = self.waited_s()  # waiting for the router counts against timeout_s
        timeout_s = max(0.0, self.timeout_s - waited)
        before = self.state_of(args.device)
        nft_rules = self._nft_rules()
        in_router = functools.partial(self.lab.node_argv, args.device)
        nft_before = nftguard.read(in_router) if nft_rules else None
        if nft_rules and nft_before is None:  # fail closed: an effect that cannot be judged
            msg = nftguard.unreadable_reason() + "; the command did not run"
            return ToolResult.failure(ErrorCode.BLOCKED, msg, data={"nft_blocked": {
                "command": None, "rule": nftguard.UNREADABLE_RULE, "reason": msg, "restored": None}})
        broker = vtybroker.VtyBroker(
            in_router, spec.pathspace, args.device,
            lambda: vtybroker.checker_for(self.block_rules, spec.pathspace),
            deadline=time.monotonic() + timeout_s, max_bytes=sandbox.TMPFS_BYTES,
            parent_dir=str(self.lab.node_dir(args.device)),
        )
        try:
            res = sandbox.run_in_sandbox(
                spec, args.command, timeout_s=timeout_s, max_bytes=self.max_output_bytes,
                vty_dir=broker.dir, config_read_only=bool(self.block_rules),
            )
        finally:
            broker.close()
        nft_hit = None  # (command, rule, reason, restored)
        if nft_before is not None:
            hit = nftguard.blocked_change(nft_before, nftguard.read(in_router), nft_rules)
            if hit is not None:
                nft_hit = (*hit, nftguard.restore(in_router, nft_before))
        after = self.state_of(args.device)
        # state that cannot be captured counts as changed: never report "unchanged" unmeasured
        if before is None or after is None:
            changed_parts = ["unknown"]
        else:
            changed_parts = [name for name, _, _ in STATE_PARTS if before.get(name) != after.get(name)]
        changed = bool(changed_parts)
        data = {
            "exit_status": res.exit_status,
            "stdout": res.stdout,
            "stderr": res.stderr,
            "stdout_truncated": res.stdout_truncated,
            "stderr_truncated": res.stderr_truncated,
            "timed_out": res.timed_out,
            "stdout_bytes": res.stdout_bytes,
            "stderr_bytes": res.stderr_bytes,
            "memory_exceeded": res.memory_exceeded,
            "pids_exceeded": res.pids_exceeded,
            "memory_peak_bytes": res.memory_peak_bytes,
            "changed_parts": changed_parts,
        }
        text = format_output(res)
        if nft_hit is not None:
            cmd, rule, reason, restored = nft_hit
            data["nft_blocked"] = {"command": cmd, "rule": rule, "reason": reason, "restored": restored}
            undo = "the ruleset was restored" if restored else "RESTORING THE RULESET FAILED"
            what = "" if rule == nftguard.UNREADABLE_RULE else f"the nftables change amounts to {cmd!r}: "
            msg = f"{what}{reason} [rule: {rule}]; {undo}"
            return ToolResult.failure(ErrorCode.BLOCKED, msg, data=data, changed=changed, text=f"{text}\nerror [blocked]: {msg}")
        if broker.refusals:
            first = broker.refusals[0]
            code = ErrorCode.BLOCKED if any(r.code == "blocked" for r in broker.refusals) else ErrorCode.NOT_ALLOWED
            if code is ErrorCode.BLOCKED:
                first = next(r for r in broker.refusals if r.code == "blocked")
            data["refused"] = [
                {"line": r.line, "meaning": r.meaning, "rule": r.rule, "reason": r.reason, "code": r.code}
                for r in broker.refusals
            ]
            msg = first.message() + "; nothing of that vtysh run was sent to FRR"
            return ToolResult.failure(code, msg, data=data, changed=changed, text=f"{text}\nerror [{code}]: {msg}")
        if res.timed_out:
            msg = f"timeout after {self.timeout_s:g} s"
            if waited >= 0.05:
                msg += f" ({waited:.1f} s of it waiting for other calls on {args.device})"
            return ToolResult.failure(
                ErrorCode.TIMEOUT, msg, retriable=True, data=data, changed=changed,
                text=f"{text}\nerror [timeout]: {msg}; the command was killed",
            )
        if res.memory_exceeded or res.pids_exceeded:
            bounds = []
            if res.memory_exceeded:
                router = (f" or of router {args.device} ({res.router_memory_bytes} bytes, shared with its FRR "
                          "and the kernel state earlier calls added)") if res.router_memory_bytes else ""
                bounds.append(f"memory bound of the call ({sandbox.CALL_MEMORY_BYTES} bytes){router} reached: "
                              "the kernel killed a process of it")
            if res.pids_exceeded:
                bounds.append(f"task bound of the call ({sandbox.CALL_PIDS_MAX} processes/threads) "
                              "reached: a fork failed")
            msg = "; ".join(bounds)
            return ToolResult.failure(
                ErrorCode.RESOURCE_EXHAUSTED, msg, data=data, changed=changed,
                text=f"{text}\nerror [resource_exhausted]: {msg}",
            )
        if res.exit_status != 0:
            msg = f"exit status {res.exit_status}"
            return ToolResult.failure(
                ErrorCode.COMMAND_FAILED, msg, data=data, changed=changed,
                text=f"{text}\nerror [command_failed]: {msg}",
            )
        return ToolResult.success(text, data, changed=changed)


def format_output(res: sandbox.RunResult) -> str:
    """What the agent reads: stdout, then stderr under a header, then the exit status line."""
    parts = []
    if res.stdout:
        parts.append(res.stdout if res.stdout.endswith("\n") else res.stdout + "\n")
    if res.stderr:
        err = res.stderr if res.stderr.endswith("\n") else res.stderr + "\n"
        parts.append("[stderr]\n" + err)
    status = "killed (timeout)" if res.timed_out else str(res.exit_status)
    parts.append(f"[exit status: {status}]")
    return "".join(parts)
