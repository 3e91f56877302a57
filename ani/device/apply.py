"""Reading and applying a lab router's whole configuration through the device model.

    cfg = read(lab, "e1")                       # DeviceConfig: FRR running config + nftables
    want = cfg.model_copy(deep=True); ...       # change the model
    report = apply(lab, "e1", want)             # ApplyReport(changed, diff, seconds)

``read`` = ``parse(show running-config)`` with ``hostname`` = the router's name, plus
``firewall`` and the nft part of ``unmodelled`` from ``nft -j list ruleset``
(:mod:`ani.device.firewall`).

``apply`` changes only the difference:

- FRR: only if ``render(running) != render(intended)``, FRR's own ``frr-reload.py`` towards
  ``frr defaults traditional`` + ``render(intended)`` (:mod:`ani.lab.frr_reload`: a temporary
  confdir, so the startup config is not written), repeated up to ``passes`` times while the
  running config still differs (frr-reload sometimes needs a second run, and FRR 8.4 exit codes
  are no verdict).
- nftables: only if the firewall differs, ONE ``nft -f -`` of
  :func:`ani.device.firewall.replace_script` (atomic: ``table inet fw`` is replaced as a whole,
  other tables are never touched).
- Then ``read() == intended`` is checked. On any failure the prior configuration is put back the
  same way and verified, and :class:`ApplyError` is raised with ``restored`` saying whether
  that worked.

``intended`` is taken in canonical form (:meth:`DeviceConfig.canonical`), so a model changed in
place (``want.static_routes.append(...)``, which pydantic does not validate or sort) applies
and verifies like the same model built afresh; e.g. ``bgp_route_map_delay_timer = 5`` (FRR's
default, never printed) becomes None.

Refused before anything is changed (``ApplyError(restored=True)``, nothing touched): the
in-place changes made ``intended`` invalid, running has ``unmodelled`` lines (applying would delete what the model cannot express; the message
names the lines), ``intended`` has ``unmodelled`` lines, or ``intended.hostname`` is not the
router's name (FRR prints the lab's UTS name whatever is configured).

The startup config (``/etc/frr/<pathspace>/frr.conf``) is written only with
``write_startup=True`` (``vtysh -c 'write memory'`` after a verified apply; the file is read back
and checked). nftables has no startup file in a lab.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

from ani.device import firewall as fwmod
from ani.device.model import DeviceConfig
from ani.device.outcome import ApplyError, ApplyReport
from ani.device.parse import parse
from ani.device.render import render
from ani.errors import LabError
from ani.lab.frr_reload import frr_reload

__all__ = ["ApplyError", "ApplyReport", "apply", "context_lines", "frr_diff", "read"]

#: prefixed to the rendered model: the lab's daemons run with ``-F traditional``
FRR_PREAMBLE = "frr defaults traditional\n"


# -- reading ---------------------------------------------------------------------------------


def read_frr(lab: Any, router: str, timeout: float = 10.0) -> DeviceConfig:
    """``parse(show running-config)`` with ``hostname`` = ``router`` (no firewall).
    Raises ApplyError(restored=True) if vtysh fails or times out (``timeout`` seconds; then
    ``timeout_s`` is set and the message says ``timeout after N s``), or if
    one of the router's FRR daemons is not running (``lab.dead_daemons``, when the lab has it):
    vtysh then leaves that daemon's part out and exits 0; or if the lab itself is gone (downed
    under the caller: ``<router>: lab <id> is not running``, not a dead-daemon report)."""
    node_argv = getattr(lab, "node_argv", None)
    if callable(node_argv):
        enter = Path(node_argv(router, [])[0])
        if not enter.exists():
            raise ApplyError(f"{router}: lab {getattr(lab, 'id', '?')} is not running (no {enter})", restored=True)
    dead = getattr(lab, "dead_daemons", None)
    gone = dead(router) if callable(dead) else []
    if gone:
        raise ApplyError(f"{router}: FRR daemon {', '.join(gone)} is not running; its running config "
                         "cannot be read whole (the router is down or degraded)", restored=True)
    res = lab.vtysh(router, "show running-config", timeout=timeout)
    if res.timed_out:
        raise ApplyError(f"{router}: timeout after {timeout:g} s (reading the running config)",
                         restored=True, timeout_s=timeout)
    if not res.ok or "Current configuration:" not in res.stdout:
        why = "timed out" if res.timed_out else f"exit {res.rc}"
        raise ApplyError(
            f"{router}: cannot read the running config ({why}): {(res.stderr or res.stdout).strip()[:300]}",
            restored=True,
        )
    m = parse(res.stdout)
    return m.model_copy(update={"hostname": router})


def read_nft(lab: Any, router: str, timeout: float = 10.0) -> tuple[Any, list[str]]:
    """``(Firewall | None, unmodelled "nft / ..." lines)`` from ``nft -j list ruleset``.
    Raises ApplyError(restored=True) if nft fails or prints no JSON ruleset."""
    res = lab.exec(router, ["nft", "-j", "list", "ruleset"], timeout=timeout)
    if res.timed_out:
        raise ApplyError(f"{router}: timeout after {timeout:g} s (reading the nftables ruleset)",
                         restored=True, timeout_s=timeout)
    try:
        if not res.ok:
            raise ValueError(res.stderr.strip()[:300])
        return fwmod.parse_ruleset(res.stdout)
    except ValueError as exc:
        raise ApplyError(f"{router}: cannot read the nftables ruleset: {exc}", restored=True) from None


def read(lab: Any, router: str, timeout: float = 10.0) -> DeviceConfig:
    """The router's whole configuration now, read out of band (FRR + nftables).

    ``unmodelled``: FRR's (``"<block> / <line>"``) then nft's (``"nft / ..."``).
    Raises ApplyError(restored=True) if either cannot be read (``timeout``: seconds per read),
    LabError / UnknownNode from the lab (lab not running, no such router)."""
    m = read_frr(lab, router, timeout)
    fw, extra = read_nft(lab, router, timeout)
    return m.model_copy(update={"firewall": fw, "unmodelled": [*m.unmodelled, *extra]})


# -- differences -----------------------------------------------------------------------------


def context_lines(text: str) -> list[str]:
    """FRR configuration text as one entry per configuration line, each prefixed by the
    headers of the blocks it is in (``"router bgp 64500 / address-family ipv4 unicast /
    redistribute connected"``), the form of ``DeviceConfig.unmodelled``. ``!``, ``exit``,
    ``exit-address-family`` and ``end`` are left out; a block header is an entry of its own."""
    out: list[str] = []
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        word = line.strip()
        if not word or word in ("!", "exit", "exit-address-family", "end"):
            continue
        depth = len(line) - len(line.lstrip(" "))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        out.append(" / ".join([*(h for _, h in stack), word]))
        if word.startswith(("interface ", "router ", "route-map ", "address-family ")):
            stack.append((depth, word))
    return out


def frr_diff(before: str, after: str) -> list[str]:
    """``- line`` for each context line only in ``before``, then ``+ line`` for each only in
    ``after`` (see :func:`context_lines`), in their own order."""
    a, b = Counter(context_lines(before)), Counter(context_lines(after))
    minus, plus = a - b, b - a
    out = []
    for sign, lines, extra in (("-", context_lines(before), minus), ("+", context_lines(after), plus)):
        left = Counter(extra)
        for ln in lines:
            if left[ln] > 0:
                left[ln] -= 1
                out.append(f"{sign} {ln}")
    return out


def _mismatch(got: DeviceConfig, want: DeviceConfig) -> list[str]:
    """What still differs (running -> wanted), as diff lines; lines the model cannot express
    that running has are ``- <line>`` (they are not in ``want``)."""
    modelled = got.model_copy(update={"unmodelled": []})
    return (
        frr_diff(render(modelled), render(want))
        + [f"- {u}" for u in got.unmodelled]
        + fwmod.diff(got.firewall, want.firewall)
    )


# -- applying --------------------------------------------------------------------------------


def _is_nft(line: str) -> bool:
    return line.startswith("nft / ")


def _converge(lab: Any, router: str, cur: DeviceConfig, want: DeviceConfig, passes: int, timeout: float,
              notes: list[str]) -> DeviceConfig:
    """Make the running config equal ``want`` starting from ``cur`` (as just read); returns
    what it reads at the end. Tool messages go to ``notes``. A mismatch is not raised here."""
    want_frr = render(want)
    frr_now = cur.model_copy(update={"unmodelled": [u for u in cur.unmodelled if not _is_nft(u)]})
    fw_now, fw_extra = cur.firewall, [u for u in cur.unmodelled if _is_nft(u)]

    def frr_same(m: DeviceConfig) -> bool:
        return not m.unmodelled and render(m) == want_frr

    if not frr_same(frr_now):
        for _ in range(max(1, passes)):
            rr = frr_reload(lab, router, FRR_PREAMBLE + want_frr, timeout=timeout)
            if not rr.ok:
                note = f"frr-reload: {rr.message() or f'exit {rr.rc}'}"
                if note not in notes:
                    notes.append(note)
            frr_now = read_frr(lab, router, timeout)  # FRR may still be busy after a long reload
            if frr_same(frr_now):
                break
    if fw_now != want.firewall or any(fwmod.about_table(u) for u in fw_extra):
        res = lab.exec(router, ["nft", "-f", "-"], timeout=timeout, input=fwmod.replace_script(want.firewall))
        if not res.ok:
            notes.append(f"nft -f (exit {res.rc}): {' '.join(res.stderr.split())[:500]}")
        fw_now, fw_extra = read_nft(lab, router, timeout)
    return frr_now.model_copy(update={"firewall": fw_now, "unmodelled": [*frr_now.unmodelled, *fw_extra]})


def apply(
    lab: Any,
    router: str,
    intended: DeviceConfig,
    write_startup: bool = False,
    passes: int = 2,
    timeout: float = 30.0,
) -> ApplyReport:
    """Make ``router``'s running configuration equal ``intended`` (see the module docstring).

    Args:
        lab: an :class:`ani.lab.Lab` (uses ``vtysh``, ``exec``, ``pathspace``).
        intended: the whole wanted configuration (FRR part and ``firewall``).
        write_startup: also write FRR's startup config after a verified apply.
        passes: frr-reload runs at most this many times per apply (and per restore).
        timeout: bound of each frr-reload / vtysh / nft run, seconds.

    Returns:
        ApplyReport: ``changed`` (False when running already equalled ``intended``), ``diff``
        (``- line`` / ``+ line`` in :func:`context_lines` form, nft lines as
        ``+ nft / table inet fw / ...``), ``seconds`` (wall time).

    Raises:
        ApplyError: refused (``restored=True``, nothing changed), or the result differed from
            ``intended`` and the prior configuration was put back (``restored=True``, verified)
            or could not be (``restored=False``). ``lines``: what differed, or the unmodelled
            lines of a refusal. LabError / UnknownNode: the lab itself is not usable.
    """
    t0 = time.monotonic()
    try:
        intended = intended.canonical()  # in-place edits are not validated: sort, fold defaults
    except ValueError as exc:
        raise ApplyError(f"{router}: the intended configuration is not valid; nothing applied: "
                         + " ".join(str(exc).split())[:500], restored=True) from None
    if intended.hostname != router:
        raise ApplyError(
            f"{router}: the intended hostname {intended.hostname!r} is not the router's name "
            f"(the lab fixes it to {router!r}); nothing applied",
            restored=True,
        )
    if intended.unmodelled:
        raise ApplyError(
            f"{router}: the intended configuration has lines the device model cannot apply; nothing applied: "
            + "; ".join(intended.unmodelled[:10]),
            restored=True,
            lines=intended.unmodelled,
        )
    before = read(lab, router)
    if before.unmodelled:
        raise ApplyError(
            f"{router}: the running configuration has {len(before.unmodelled)} line(s) the device model cannot "
            "express; applying would delete them, so nothing was applied: " + "; ".join(before.unmodelled[:10]),
            restored=True,
            lines=before.unmodelled,
        )
    diff = frr_diff(render(before), render(intended)) + fwmod.diff(before.firewall, intended.firewall)
    if before == intended:
        if write_startup:
            _write_startup(lab, router, intended, timeout)
        return ApplyReport(changed=False, diff=[], seconds=time.monotonic() - t0)

    notes: list[str] = []
    try:
        after = _converge(lab, router, before, intended, passes, timeout, notes)
        failed = after != intended
    except (ApplyError, LabError, ValueError) as exc:  # a read failed half-way, or FRR printed junk
        notes.append(str(exc))
        after, failed = None, True
    if not failed:
        if write_startup:
            _write_startup(lab, router, intended, timeout)
        return ApplyReport(changed=True, diff=diff, seconds=time.monotonic() - t0)

    left = _mismatch(after, intended) if after is not None else []
    restored, rnotes = _restore(lab, router, before, passes, timeout)
    msg = f"{router}: the running configuration did not reach the intended one"
    if left:
        msg += "; still different (running -> intended): " + "; ".join(left[:10])
    if notes:
        msg += "; " + "; ".join(notes)
    if restored:
        msg += "; prior configuration restored"
    else:
        msg += "; RESTORING THE PRIOR CONFIGURATION FAILED: " + "; ".join(rnotes)
    raise ApplyError(msg, restored=restored, lines=left)


def _restore(lab: Any, router: str, before: DeviceConfig, passes: int, timeout: float) -> tuple[bool, list[str]]:
    """Put ``before`` back and verify; (verified, notes)."""
    notes: list[str] = []
    try:
        cur = read(lab, router, timeout)  # unmodelled lines here were added by the failed apply: removed
        after = _converge(lab, router, cur, before, passes, timeout, notes)
        if after == before:
            return True, notes
        notes.append("still different: " + "; ".join(_mismatch(after, before)[:10]))
    except (ApplyError, LabError, ValueError) as exc:
        notes.append(str(exc))
    return False, notes


def _write_startup(lab: Any, router: str, intended: DeviceConfig, timeout: float) -> None:
    """``write memory`` and check that ``frr.conf`` now holds ``intended``'s FRR part."""
    from ani.lab import frr

    path = frr.etc_dir(lab.pathspace(router)) / "frr.conf"
    res = lab.vtysh(router, "write memory", timeout=timeout)
    try:
        ok = render(parse(path.read_text()).model_copy(update={"hostname": router})) == render(intended)
    except (OSError, ValueError):
        ok = False
    if not ok:
        raise ApplyError(
            f"{router}: applied and verified, but writing the startup config {path} failed: "
            f"{(res.stdout + res.stderr).strip()[:300]}",
            restored=False,
        )
