"""The blocklist ablation: a wrapper that refuses destructive commands, by shape and by effect.

``BlocklistAdapter(inner, path)`` offers exactly the inner adapter's tools. Before a call
reaches the inner adapter, every command-bearing argument (``commands``: a list of strings,
``command``: a string, ``configs``: A1's ``{device: [commands]}`` or ``{device: "line\\n..."}``)
is split into segments (at newlines, ``;``, ``|``, ``&``, quotes and
`` -c ``, so shell strings of A0 are covered as well as A1's one-command items) and each
segment is searched for the blocklist's regexes. A match refuses the whole call with
``ErrorCode.BLOCKED``, naming the command and the rule; the inner adapter never sees it.

The rules come from the platform file's ``blocklist`` section (``adapters/frr.yaml``) or from
a YAML file given by path: either a platform file, or a file whose top level is ``blocklist:``
(a list of ``{pattern, reason}``) or simply such a list.

A shell string cannot be parsed into what it will do (``X=write; vtysh -c "$X t"``, vtysh's
abbreviations ``no rou bgp 1``), so for an inner adapter with ``set_blocklist`` (A0) the rules are
also handed to it and enforced where the commands arrive: every vtysh line at A0's FRR broker
(:mod:`ani.adapters.vtybroker`, abbreviations expanded) and every nftables ruleset change
(:mod:`ani.adapters.nftguard`, measured and undone). A1's allowlist refuses abbreviations, so
the wrapper sees full keywords there.

Effects (A0, A1): a destructive change need not have a destructive shape (``no ip prefix-list
PL seq 5`` then ``seq 10`` removes the prefix-list as ``no ip prefix-list PL`` does). So the
wrapper judges effects too: for a command-bearing call of a tool that is not read-only it reads
the running configuration of every router the call names (``device``, ``devices``,
``configs``) before and after the call, writes the
change as the commands it amounts to (:mod:`ani.adapters.frrguard`: an object gone as the
command removing it whole, a shut interface or session as its command) and matches them against
the same rules; on a hit the FRR configuration of every router of the call is restored (the
snapshot store's frr-reload, verified; the call's other changes stay, and ``changed`` says
whether any did) and the call answers ``BLOCKED`` with ``data["frr_blocked"]`` (``device, command,
rule, reason, restored``) and a ``blocked_effect`` trajectory event. A router whose state cannot
be read (a frozen daemon) is judged by shape only. Judged calls on one router run one at a time
(another call's change must not fall between the two readings, nor be undone by the restore).
What it does not stop: :data:`SCOPE`.

    >>> adapter = BlocklistAdapter(create_adapter("a1", lab))         # doctest: +SKIP
    >>> adapter.call("update_config", {"device": "r1", "commands": ["no router bgp 64500"]}).error.code
    'blocked'
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ani.adapters import frrguard
from ani.errors import ConfigError, ErrorCode, LabError
from ani.protocol import ToolResult, ToolSpec
from ani.validation import load_yaml

#: argument names that carry commands
COMMAND_ARGS = ("commands", "command")
#: A1's per-device argument ``{device: [commands]}`` or ``{device: "line\\nline"}``
#: (batch_configure_devices, apply_config)
CONFIGS_ARG = "configs"

#: levels whose calls are also judged by their effect on FRR
EFFECT_LEVELS = ("a0", "a1")

#: what the ablation does and does not stop, in one paragraph (the campaign report prints it
#: under a table with a blocklisted cell; docs/protocol.md "The blocklist ablation: what it judges")
SCOPE = (
    "blocklist: refuses a call whose commands match the list before anything is sent (at A0 each "
    "vtysh line as FRR runs it, abbreviations expanded), and at A0/A1 undoes and refuses a call whose "
    "effect amounts to a listed command (a prefix-list or route-map emptied entry by entry, a BGP "
    "neighbor or routing process gone, an interface or session shut, every BGP session of the "
    "instance shut, a neighbor deactivated in an address family; at A0 an nftables table deleted, "
    "re-created, made dormant or flushed, a chain's rules all replaced, a chain's policy set to drop, "
    "an accept-everything rule put before a chain's rules). It does not stop damage the list does not "
    "name (entries replaced by deny, a route-map action changed, a static route or address removed, "
    "OSPF made passive, kernel state changed with ip at A0), original content removed over several "
    "calls behind a placeholder, a firewall rule whose matches select every packet, and it inspects "
    "nothing at a2, a3t, a3r and a4."
)

_SPLIT_RE = re.compile(r"[\n\r;|&'\"`\u2028\u2029\u0085]+|\s-c\s")


class BlockRules:
    """A compiled blocklist.

    Args:
        rules: list of (regex source, reason).
    """

    def __init__(self, rules: list[tuple[str, str]]) -> None:
        self.rules: list[tuple[re.Pattern[str], str]] = []
        for src, reason in rules:
            try:
                self.rules.append((re.compile(src, re.IGNORECASE), reason))
            except re.error as exc:
                raise ConfigError(f"blocklist pattern {src!r}: {exc}") from exc

    @classmethod
    def load(cls, path: str | Path | None = None) -> BlockRules:
        """Rules of the default platform (None), a platform name, or a YAML file path.

        Raises ConfigError if the file has no usable blocklist.
        """
        if path is None or (isinstance(path, str) and not path.endswith((".yaml", ".yml"))
                            and not Path(path).exists()):
            from ani.adapters.platform import load_platform

            try:
                plat = load_platform(path or "frr")
            except FileNotFoundError:
                raise ConfigError(f"blocklist {str(path)[:80]!r}: neither a platform's name (frr) nor a "
                                  "YAML blocklist file; give True for the platform's default blocklist, "
                                  "or the path of a .yaml file") from None
            return cls([(b.pattern, b.reason) for b in plat.d.blocklist])
        p = Path(path)
        raw = load_yaml(p)
        items = raw.get("blocklist") if isinstance(raw, dict) else raw
        if not isinstance(items, list):
            raise ConfigError(f"{p}: expected a 'blocklist:' list of {{pattern, reason}}")
        rules = []
        for i, it in enumerate(items):
            if isinstance(it, str):
                rules.append((it, "on the blocklist"))
            elif isinstance(it, dict) and isinstance(it.get("pattern"), str):
                rules.append((it["pattern"], str(it.get("reason", "on the blocklist"))))
            else:
                raise ConfigError(f"{p}: blocklist[{i}]: expected a pattern string or {{pattern, reason}}")
        return cls(rules)

    @staticmethod
    def segments(text: str) -> list[str]:
        return [s.strip() for s in _SPLIT_RE.split(text) if s.strip()]

    def check(self, text: str) -> tuple[str, str, str] | None:
        """(segment, pattern, reason) of the first rule matching a segment of ``text``, or None."""
        for seg in self.segments(text):
            norm = " ".join(seg.split())
            for rx, reason in self.rules:
                if rx.search(norm):
                    return seg, rx.pattern, reason
        return None


class BlocklistAdapter:
    """Wraps any adapter; refuses blocklisted commands with ``ErrorCode.BLOCKED``.

    Args:
        inner: the adapter to protect (same ``tools()``).
        path: None for the default platform blocklist (``adapters/frr.yaml``), or a YAML path.
    """

    def __init__(self, inner: Any, path: str | Path | None = None) -> None:
        self.inner = inner
        self.rules = BlockRules.load(path)
        self.level = inner.level
        if hasattr(inner, "set_blocklist"):  # A0: enforced again where the commands arrive
            inner.set_blocklist([(rx.pattern, reason) for rx, reason in self.rules.rules])
        self._snapshots: Any = None
        self._read_only: frozenset[str] | None = None
        self._dev_locks: dict[str, threading.Lock] = {}
        self.blocked_calls = 0
        self._count_lock = threading.Lock()  # calls may come from several threads (as the inner's)

    @property
    def concurrent_calls(self) -> bool:
        """As safe from several threads as the inner adapter (the check itself is pure)."""
        return bool(getattr(self.inner, "concurrent_calls", False))

    def __getattr__(self, name: str) -> Any:  # lab, trajectory, devices, ... of the inner adapter
        return getattr(self.inner, name)

    def open(self) -> None:
        self.inner.open()

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> BlocklistAdapter:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tools(self) -> list[ToolSpec]:
        return self.inner.tools()

    @staticmethod
    def _commands(arguments: dict[str, Any]) -> list[tuple[str, str]]:
        """``(where, command)`` of every command-bearing argument: ``commands[i]``, ``command``,
        and A1's per-device ``configs`` (``configs.e1[i]`` of a list, ``configs.e1 line n`` of
        newline-separated text)."""
        out: list[tuple[str, str]] = []
        for key in COMMAND_ARGS:
            val = arguments.get(key)
            if isinstance(val, list):
                out += [(f"{key}[{i}]", x) for i, x in enumerate(val) if isinstance(x, str)]
            elif isinstance(val, str):
                out.append((key, val))
        configs = arguments.get(CONFIGS_ARG)
        for dev, val in (configs.items() if isinstance(configs, dict) else ()):
            if isinstance(val, list):
                out += [(f"{CONFIGS_ARG}.{dev}[{i}]", x) for i, x in enumerate(val) if isinstance(x, str)]
            elif isinstance(val, str):
                out += [(f"{CONFIGS_ARG}.{dev} line {n}", ln) for n, ln in enumerate(val.splitlines(), 1)]
        return out

    def check(self, arguments: Any) -> ToolResult | None:
        """A BLOCKED result if a command-bearing argument matches the blocklist, else None."""
        if not isinstance(arguments, dict):
            return None
        for where, item in self._commands(arguments):
            hit = self.rules.check(item)
            if hit is not None:
                seg, _pat, reason = hit
                return ToolResult.failure(
                    ErrorCode.BLOCKED,
                    f"{where} {item!r} is blocked ({reason}: {seg!r}); nothing was sent",
                    data={"argument": where, "command": item, "segment": seg, "reason": reason},
                )
        return None

    # -- effects (A0, A1): what the call did to the FRR objects the rules name ----------------

    def _store(self) -> Any:
        """The inner adapter's snapshot store (A1), or one over its lab (A0)."""
        if self._snapshots is None:
            store = getattr(self.inner, "snapshots", None)
            if store is None:
                from ani.adapters.platform import load_platform
                from ani.adapters.snapshot import SnapshotStore

                store = SnapshotStore(self.inner.lab, load_platform("frr"))
            self._snapshots = store
        return self._snapshots

    def _effect_devices(self, name: str, arguments: Any) -> list[str]:
        """The routers a command-bearing, not read-only call at A0/A1 names (``device``,
        ``devices``, ``configs`` keys); arguments of the wrong type name none (the inner adapter
        refuses them)."""
        if str(self.level) not in EFFECT_LEVELS or not isinstance(arguments, dict) or not self._commands(arguments):
            return []
        if self._read_only is None:
            self._read_only = frozenset(t.name for t in self.inner.tools() if t.read_only)
        if name in self._read_only:
            return []
        lab = getattr(self.inner, "lab", None)
        routers = set(getattr(lab, "routers", None) or ())
        configs, many = arguments.get(CONFIGS_ARG), arguments.get("devices")
        named = [arguments.get("device"), *(configs if isinstance(configs, dict) else ()),
                 *(many if isinstance(many, list) else ())]
        return sorted({d for d in named if isinstance(d, str) and d in routers})

    @contextlib.contextmanager
    def _holding(self, devices: list[str]) -> Iterator[None]:
        """Hold the wrapper's lock of each router (sorted: no deadlock) for a judged call, so that
        another call's change never falls between its readings, nor is undone by its restore."""
        with self._count_lock:
            locks = [self._dev_locks.setdefault(d, threading.Lock()) for d in sorted(devices)]
        with contextlib.ExitStack() as stack:
            for lock in locks:
                stack.enter_context(lock)
            yield

    def _read_frr(self, device: str) -> str | None:
        """``device``'s FRR running configuration (the snapshot store's read command), or None if
        it cannot be read now (e.g. a frozen daemon: the call is then judged by shape only)."""
        from ani.device.outcome import ReadError
        from ani.device.state import read_frr

        store = self._store()
        try:
            return read_frr(store.lab, device, store.timeout_s, store.platform.d.snapshot.frr_show)
        except (ReadError, OSError, LabError):
            return None

    def _read_before(self, devices: list[str]) -> dict[str, str]:
        """The FRR running configuration of each router that can be read now."""
        out = {}
        for dev in devices:
            text = self._read_frr(dev)
            if text is not None:
                out[dev] = text
        return out

    def _restore_frr(self, device: str, frr: str) -> bool:
        """Put ``device``'s FRR configuration back to ``frr`` (its nftables as they are now);
        True if verified."""
        from ani.adapters.snapshot import RouterState
        from ani.device.outcome import ReadError

        store = self._store()
        try:
            now = store.read(device)
            return store.restore(device, RouterState(frr=frr, nft=now.nft), before=now).verified
        except (ReadError, OSError, LabError):
            return False

    def _judge_effects(self, before: dict[str, str], result: ToolResult, arguments: dict[str, Any]) -> ToolResult:
        """``result``, or BLOCKED (the FRR configuration of every router of the call restored) if
        what the call did to a router's FRR configuration amounts to a blocklisted command
        (:mod:`ani.adapters.frrguard`)."""
        frr_rules = [(rx, r) for rx, r in self.rules.rules if "nft" not in rx.pattern]
        for dev, frr in before.items():
            after = self._read_frr(dev)
            hit = None if after is None else frrguard.blocked_change(frr, after, frr_rules)
            if hit is None:
                continue
            cmd, pattern, reason = hit
            restored = {d: self._restore_frr(d, text) for d, text in before.items()}
            undo = ("the FRR configuration was restored" if all(restored.values())
                    else "RESTORING THE FRR CONFIGURATION FAILED")
            msg = (f"what the call did on {dev} amounts to {cmd!r}: {reason} [rule: {pattern}]; {undo} "
                   "(the blocklist judges effects: an object the rules protect is gone however it was removed)")
            data = {"frr_blocked": {"device": dev, "command": cmd, "rule": pattern, "reason": reason,
                                    "restored": restored}, "inner": result.data}
            changed = not all(restored.values()) or self._changed_beside_frr(result, arguments)
            return ToolResult.failure(ErrorCode.BLOCKED, msg, data=data, changed=changed,
                                      text=f"{result.text}\nerror [blocked]: {msg}")
        return result

    def _changed_beside_frr(self, result: ToolResult, arguments: dict[str, Any]) -> bool:
        """Whether the call changed something the FRR restore leaves as it is: A0's measured parts
        other than ``frr`` (addresses, routes, nftables, ...), or at A1 an nft command of a call
        that changed the router."""
        parts = (result.data or {}).get("changed_parts")
        if isinstance(parts, list):
            return any(p != "frr" for p in parts)
        return result.changed and any(c.strip().startswith("nft ") for _, c in self._commands(arguments))

    def call(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """Refuse blocklisted commands; otherwise delegate to the inner adapter, and at A0/A1
        judge the call's effect on FRR (module doc)."""
        t0 = time.monotonic()
        refused = self.check(arguments)
        if refused is None:
            devices = self._effect_devices(name, arguments)
            with self._holding(devices):  # no other judged call on these routers in between
                before = self._read_before(devices)
                result = self.inner.call(name, arguments)
                judged = self._judge_effects(before, result, arguments) if before else result
            if judged is not result:
                with self._count_lock:
                    self.blocked_calls += 1
                judged.elapsed_s = time.monotonic() - t0
                traj = getattr(self.inner, "trajectory", None)
                if traj is not None:
                    traj.log("blocked_effect", tool=name, **judged.data["frr_blocked"])
            return judged
        with self._count_lock:
            self.blocked_calls += 1
        refused.elapsed_s = time.monotonic() - t0
        traj = getattr(self.inner, "trajectory", None)
        if traj is not None and isinstance(arguments, dict):
            traj.log_call(name, arguments, refused)
        return refused
