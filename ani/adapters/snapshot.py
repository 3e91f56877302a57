"""Snapshots and rollback of everything A1 can change on a router.

A snapshot holds the router's FRR running configuration (``show running-config``) and its
nftables ruleset (``nft -s list ruleset``: stateless, so counters moving with traffic are not
a change), read out-of-band through the lab (not through the
agent's CLI session). Rollback restores both and then VERIFIES:

- FRR: ``frr-reload.py --reload --pathspace <ps>`` run inside the router with the snapshot's
  config on stdin (it computes and applies the delta against the running config; up to
  ``frr_reload_attempts`` passes), then the running config must equal the snapshot after
  normalisation (``frr version``, ``!`` comments, blank lines, ``end``, the "Building
  configuration" header are dropped);
- nftables: one atomic ``nft -f -`` of ``flush ruleset`` + the saved ruleset, then the ruleset
  must equal the snapshot.

Neither ever writes the startup configuration (no ``write memory``, frr.conf untouched): frr-reload
runs through :func:`ani.lab.frr_reload.frr_reload`, which points ``--confdir`` at a temporary
directory holding the target as ``frr.conf``.
Snapshot ids are per device and per store (adapter instance): ``r1-s1``, ``r1-s2``, ...
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field
from typing import Any

from ani.adapters.platform import Platform
from ani.errors import AdapterError
from ani.lab.frr_reload import frr_reload


def normalise_frr(platform: Platform, text: str) -> list[str]:
    """Running-config lines that matter, in order (trivial lines dropped, trailing spaces cut)."""
    out = []
    for ln in text.splitlines():
        ln = ln.rstrip()
        if any(rx.fullmatch(ln) for rx in platform.normalise_drop):
            continue
        out.append(ln)
    return out


def normalise_nft(text: str) -> list[str]:
    """Ruleset lines, trailing spaces cut, blank lines dropped."""
    return [ln.rstrip() for ln in text.splitlines() if ln.strip()]


@dataclass
class DeviceState:
    """The A1-changeable state of one router: raw FRR running config and nft ruleset text."""

    frr: str
    nft: str

    def key(self, platform: Platform) -> tuple[list[str], list[str]]:
        return normalise_frr(platform, self.frr), normalise_nft(self.nft)


@dataclass
class Snapshot:
    """A stored state. ``created`` is a Unix time (s); ``label`` says who took it."""

    id: str
    device: str
    created: float
    label: str
    state: DeviceState

    def summary(self, platform: Platform) -> dict[str, Any]:
        frr, nft = self.state.key(platform)
        return {
            "id": self.id,
            "device": self.device,
            "created": self.created,
            "label": self.label,
            "frr_lines": len(frr),
            "nft_lines": len(nft),
        }


@dataclass
class RestoreReport:
    """What a rollback did.

    Attributes:
        verified: the state equals the snapshot afterwards.
        changed: the device state changed (before != after).
        frr_diff / nft_diff: unified diffs before -> after (empty if unchanged).
        detail: why verification failed, or tool messages.
    """

    verified: bool
    changed: bool
    frr_diff: str = ""
    nft_diff: str = ""
    detail: list[str] = field(default_factory=list)

    @property
    def diff(self) -> str:
        return "".join(x for x in (self.frr_diff, self.nft_diff) if x)


def unified(a: list[str], b: list[str], name: str) -> str:
    return "".join(
        ln if ln.endswith("\n") else ln + "\n"
        for ln in difflib.unified_diff(a, b, f"{name} (before)", f"{name} (after)", lineterm="")
    )


class ReadTimeout(AdapterError):
    """A read of a device's state ran out of its bound: ``"<device>: timeout after N s (what)"``.

    An :class:`AdapterError`, so every path that handles an unreadable device handles it too;
    tools report it as ``ErrorCode.TIMEOUT`` (retriable) rather than ``device_unreachable``.

    Attributes:
        device: the router; seconds: the bound that ran out.
    """

    def __init__(self, device: str, seconds: float, what: str) -> None:
        super().__init__(f"{device}: timeout after {seconds:g} s ({what})")
        self.device = device
        self.seconds = seconds


class SnapshotStore:
    """Reads, stores and restores device states through a lab.

    Args:
        lab: the :class:`ani.lab.Lab` (uses ``running_config``, ``exec``, ``pathspace``).
        platform: the compiled platform (commands and normalisation).
        timeout_s: bound of each read, seconds.
        rollback_timeout_s: bound of each frr-reload / nft restore run, seconds.
    """

    def __init__(self, lab: Any, platform: Platform, timeout_s: float = 10.0, rollback_timeout_s: float = 30.0) -> None:
        self.lab = lab
        self.platform = platform
        self.timeout_s = timeout_s
        self.rollback_timeout_s = rollback_timeout_s
        self._snaps: dict[str, list[Snapshot]] = {}
        self._counter: dict[str, int] = {}

    # -- reading ----------------------------------------------------------------------------

    def read(self, device: str) -> DeviceState:
        """Current state. Raises ReadTimeout (an AdapterError) when a read runs out of
        ``timeout_s`` (e.g. a frozen daemon), AdapterError if FRR or nft cannot be read, and LabError
        (e.g. UnknownNode) from ``lab.vtysh``/``lab.exec`` if the lab cannot run them."""
        res = self.lab.vtysh(device, self.platform.d.snapshot.frr_show, timeout=self.timeout_s)
        if res.timed_out:
            raise ReadTimeout(device, self.timeout_s, "reading the running config")
        if res.rc != 0:
            raise AdapterError(f"{device}: cannot read the running config: "
                               f"{res.stderr.strip() or res.stdout.strip() or f'vtysh exited {res.rc}'}")
        nres = self.lab.exec(device, self.platform.d.snapshot.nft_list, timeout=self.timeout_s)
        if nres.timed_out:
            raise ReadTimeout(device, self.timeout_s, "reading the nft ruleset")
        if nres.rc != 0:
            raise AdapterError(f"{device}: cannot read the nft ruleset: {nres.stderr.strip() or f'nft exited {nres.rc}'}")
        return DeviceState(frr=res.stdout, nft=nres.stdout)

    def same(self, a: DeviceState, b: DeviceState) -> bool:
        return a.key(self.platform) == b.key(self.platform)

    # -- storing ----------------------------------------------------------------------------

    def take(self, device: str, label: str = "snapshot", state: DeviceState | None = None) -> Snapshot:
        """Read (unless ``state`` is given) and store a snapshot; returns it."""
        st = state if state is not None else self.read(device)
        n = self._counter.get(device, 0) + 1
        self._counter[device] = n
        snap = Snapshot(f"{device}-s{n}", device, time.time(), label, st)
        self._snaps.setdefault(device, []).append(snap)
        return snap

    def get(self, device: str, snapshot_id: str) -> Snapshot | None:
        for s in self._snaps.get(device, []):
            if s.id == snapshot_id:
                return s
        return None

    def list(self, device: str) -> list[Snapshot]:
        return list(self._snaps.get(device, []))

    # -- restoring --------------------------------------------------------------------------

    def restore(self, device: str, target: DeviceState, before: DeviceState | None = None) -> RestoreReport:
        """Make ``device`` equal ``target`` and verify. Never raises for a failed restore:
        the report says ``verified=False`` with the reason (AdapterError if the state
        cannot be read at all; LabError, e.g. UnknownNode, from ``lab.exec``/``lab.vtysh``)."""
        p = self.platform
        before = before if before is not None else self.read(device)
        detail: list[str] = []
        want_frr, want_nft = target.key(p)
        cur = before
        if normalise_frr(p, cur.frr) != want_frr:
            for attempt in range(max(1, p.d.rollback.frr_reload_attempts)):
                msg = self._frr_reload(device, target.frr)
                cur = self.read(device)
                if normalise_frr(p, cur.frr) == want_frr:
                    break
                detail.append(f"frr-reload pass {attempt + 1} left differences{': ' + msg if msg else ''}")
        if normalise_nft(cur.nft) != want_nft:
            res = self.lab.exec(
                device,
                p.d.rollback.nft_restore,
                timeout=self.rollback_timeout_s,
                input="flush ruleset\n" + target.nft,
            )
            if res.rc != 0:
                detail.append(f"nft restore failed (exit {res.rc}): {res.stderr.strip()[:500]}")
            cur = self.read(device)
        after_frr, after_nft = cur.key(p)
        before_frr, before_nft = before.key(p)
        verified = after_frr == want_frr and after_nft == want_nft
        if not verified:
            if after_frr != want_frr:
                detail.append("FRR running config differs from the snapshot:\n" + unified(after_frr, want_frr, "running-config vs snapshot"))
            if after_nft != want_nft:
                detail.append("nft ruleset differs from the snapshot:\n" + unified(after_nft, want_nft, "ruleset vs snapshot"))
        return RestoreReport(
            verified=verified,
            changed=(after_frr, after_nft) != (before_frr, before_nft),
            frr_diff=unified(before_frr, after_frr, "running-config"),
            nft_diff=unified(before_nft, after_nft, "nft ruleset"),
            detail=detail,
        )

    def _frr_reload(self, device: str, config: str) -> str:
        """Run frr-reload.py inside the router towards ``config``; returns its error lines."""
        res = frr_reload(self.lab, device, config, timeout=self.rollback_timeout_s, argv=self.platform.d.rollback.frr_reload)
        if res.timed_out:
            return f"frr-reload timed out after {self.rollback_timeout_s:g} s"
        return res.message()
