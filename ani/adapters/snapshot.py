"""Snapshots and rollback of everything A1 can change on a router.

A snapshot holds the router's FRR running configuration (``show running-config``) and its
nftables ruleset (``nft -s list ruleset``: stateless, so counters moving with traffic are not
a change), read out of band by :func:`ani.device.state.read_state` (not through the agent's
CLI session), raw text: lines the device model cannot express are kept. Rollback restores both
with the device layer's one restore loop (:func:`ani.device.state.converge`) and then
VERIFIES:

- FRR: ``frr-reload.py --reload --pathspace <ps>`` run inside the router towards the snapshot's
  config (it computes and applies the delta against the running config; up to
  ``frr_reload_attempts`` passes), then the running config must equal the snapshot after
  normalisation (:func:`ani.device.state.frr_lines`: the header, ``!`` comments, blank lines
  and ``end`` dropped);
- nftables: one atomic ``nft -f -`` of ``flush ruleset`` + the saved ruleset, then the ruleset
  must equal the snapshot.

Every error line frr-reload and nft print on the way (``Failed to execute ...``, ``% ...``)
is in :attr:`RestoreReport.detail`, each once, whether or not the restore was verified.

Neither ever writes the startup configuration (no ``write memory``, frr.conf untouched):
frr-reload runs through :func:`ani.device.frr_reload.frr_reload`, which points ``--confdir``
at a temporary directory holding the target as ``frr.conf``.

A device reached through its CLI only (a real device of an inventory, :mod:`ani.inventory`: the
target has ``ssh_endpoint`` and ``vtysh`` but no ``exec``, so no shell to run nft or frr-reload) has no nftables part
(``nft`` is ``""``); its FRR configuration is read out of band (``target.vtysh``: an SSH exec
channel of its own, not the agent's session) and restored through the CLI with ``apply_lines``:
the configuration lines from the running config to the snapshot
(:func:`ani.device.remediation.frr_commands`, hier-config), up to ``frr_reload_attempts``
passes, then VERIFIED the same way.
Snapshot ids are per device and per store (adapter instance): ``r1-s1``, ``r1-s2``, ...
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from collections.abc import Callable

from ani.adapters.platform import Platform
from ani.device.changes import unified  # the text of a difference (ani.device.changes)
from ani.lab.protocol import Devices, Lab, SshCapable, provides
from ani.device.state import Converged, RouterState, Target, converge, frr_lines, nft_lines, read_frr, read_state

__all__ = ["RestoreReport", "RouterState", "Snapshot", "SnapshotStore", "key", "unified"]


def key(state: RouterState) -> tuple[list[str], list[str]]:
    """What two states are compared by: ``(frr_lines(state.frr), nft_lines(state.nft))``."""
    return frr_lines(state.frr), nft_lines(state.nft)


@dataclass
class Snapshot:
    """A stored state. ``created`` is a Unix time (s); ``label`` says who took it."""

    id: str
    device: str
    created: float
    label: str
    state: RouterState

    def summary(self) -> dict[str, Any]:
        frr, nft = key(self.state)
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
        detail: every tool error line on the way (frr-reload's, nft's), then, if not verified,
            what still differs.
    """

    verified: bool
    changed: bool
    frr_diff: str = ""
    nft_diff: str = ""
    detail: list[str] = field(default_factory=list)

    @property
    def diff(self) -> str:
        return "".join(x for x in (self.frr_diff, self.nft_diff) if x)


class SnapshotStore:
    """Reads, stores and restores device states through a lab.

    Args:
        lab: the :class:`ani.lab.Lab` (uses ``vtysh``, ``exec``, ``pathspace``), or a target
            reached through its CLI only (``ssh_endpoint``, ``vtysh``, no ``exec``: module doc).
        platform: the compiled platform (the read, frr-reload and nft commands).
        timeout_s: bound of each read, seconds.
        rollback_timeout_s: bound of each frr-reload / nft restore run, seconds.
        apply_lines: for a CLI-only target: ``(device, lines) -> [error line, ...]`` sends
            configuration lines through the device's CLI (configuration mode).
    """

    def __init__(self, lab: Devices, platform: Platform, timeout_s: float = 10.0, rollback_timeout_s: float = 30.0,
                 apply_lines: Callable[[str, list[str]], list[str]] | None = None) -> None:
        self.lab = lab
        self.platform = platform
        self.timeout_s = timeout_s
        self.rollback_timeout_s = rollback_timeout_s
        self.apply_lines = apply_lines
        self._snaps: dict[str, list[Snapshot]] = {}
        self._counter: dict[str, int] = {}

    @property
    def cli_only(self) -> bool:
        """The target offers its devices' CLI only (:class:`~ani.lab.protocol.SshCapable` but no
        :class:`~ani.lab.protocol.Lab`: no shell for nft or frr-reload, e.g. an inventory; module
        doc); False for a lab."""
        return provides(self.lab, SshCapable) and not provides(self.lab, Lab)

    # -- reading ----------------------------------------------------------------------------

    def read(self, device: str) -> RouterState:
        """Current state (:func:`ani.device.state.read_state` with the platform's commands).
        Raises ReadError (the lab is gone, an FRR daemon is down, vtysh / nft failed) or its
        ReadTimeout (a read ran out of ``timeout_s``, e.g. a frozen daemon); UnknownNode."""
        snap = self.platform.d.snapshot
        if self.cli_only:
            return RouterState(frr=read_frr(self.lab, device, self.timeout_s, snap.frr_show), nft="")
        return read_state(self.lab, device, self.timeout_s, snap.frr_show, snap.nft_list)

    @staticmethod
    def same(a: RouterState, b: RouterState) -> bool:
        return key(a) == key(b)

    # -- storing ----------------------------------------------------------------------------

    def take(self, device: str, label: str = "snapshot", state: RouterState | None = None) -> Snapshot:
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

    def restore(self, device: str, target: RouterState, before: RouterState | None = None) -> RestoreReport:
        """Make ``device`` equal ``target`` and verify. Never raises for a failed restore:
        the report says ``verified=False`` with the reason. Raises ReadError / ReadTimeout if
        the state cannot be read at all (before, or half way), UnknownNode."""
        p = self.platform
        before = before if before is not None else self.read(device)
        want_frr, want_nft = key(target)
        if self.cli_only:
            res = self._converge_cli(device, target, before)
        else:
            res = converge(
                self.lab, device,
                Target(frr=target.frr, frr_done=lambda t: frr_lines(t) == want_frr,
                       nft="flush ruleset\n" + target.nft, nft_done=lambda t: nft_lines(t) == want_nft,
                       nft_read=p.d.snapshot.nft_list, frr_read=p.d.snapshot.frr_show),
                before,
                passes=p.d.rollback.frr_reload_attempts, timeout=self.rollback_timeout_s,
                read_timeout=self.timeout_s, reload_argv=p.d.rollback.frr_reload, nft_argv=p.d.rollback.nft_restore,
            )
        (after_frr, after_nft), (before_frr, before_nft) = key(res.state), key(before)
        detail = list(res.notes)
        if not res.frr_ok:
            detail.append(f"FRR running config differs from the snapshot after {res.reloads} frr-reload "
                          "pass(es):\n" + unified(after_frr, want_frr, "running-config vs snapshot"))
        if not res.nft_ok:
            detail.append("nft ruleset differs from the snapshot:\n" + unified(after_nft, want_nft, "ruleset vs snapshot"))
        return RestoreReport(
            verified=res.ok,
            changed=(after_frr, after_nft) != (before_frr, before_nft),
            frr_diff=unified(before_frr, after_frr, "running-config"),
            nft_diff=unified(before_nft, after_nft, "nft ruleset"),
            detail=detail,
        )

    def _converge_cli(self, device: str, target: RouterState, current: RouterState) -> Converged:
        """A CLI-only target (module doc): send the lines from ``current`` to ``target`` through
        ``apply_lines``, re-read, at most ``frr_reload_attempts`` passes."""
        from ani.device.remediation import frr_commands  # pure: hier-config on two device models
        from ani.device.parse import parse

        if self.apply_lines is None:
            raise ValueError("SnapshotStore: a target without a shell needs apply_lines")
        want = frr_lines(target.frr)
        frr, notes, passes = current.frr, [], 0
        for _ in range(max(1, self.platform.d.rollback.frr_reload_attempts)):
            if frr_lines(frr) == want:
                break
            try:
                lines = frr_commands(parse(frr), parse(target.frr))
            except ValueError as exc:
                notes.append(f"the configuration lines back to the snapshot cannot be computed: {exc}")
                break
            if not lines:
                notes.append("no configuration line expresses what still differs")
                break
            passes += 1
            for line in self.apply_lines(device, lines):
                if line not in notes:
                    notes.append(line)
            frr = self.read(device).frr
        return Converged(RouterState(frr, ""), frr_lines(frr) == want, True, notes, passes)
