"""Reading and applying a lab router's whole configuration through the device model.

    cfg = read(lab, "e1")                       # DeviceConfig: FRR running config + nftables
    want = cfg.model_copy(deep=True); ...       # change the model
    report = apply(lab, "e1", want)             # ApplyReport(changed, diff, seconds, notes)

``read`` = ``parse(show running-config)`` with ``hostname`` = the router's name, plus
``firewall`` and the nft part of ``unmodelled`` from ``nft -j list ruleset``
(:mod:`ani.device.firewall`), both read by :func:`ani.device.state.read_state` (which says
when the lab is gone, a daemon is down, or a read timed out).

``apply`` changes only the difference, with the one restore loop of the device layer
(:func:`ani.device.state.converge`, also A1's rollback):

- FRR: only if ``render(running) != render(intended)``, FRR's own ``frr-reload.py`` towards
  ``frr defaults traditional`` + ``render(intended)`` (:mod:`ani.device.frr_reload`: a temporary
  confdir, so the startup config is not written), repeated up to ``passes`` times while the
  running config still differs (frr-reload sometimes needs a second run, and FRR 8.4 exit codes
  are no verdict).
- nftables: only if the firewall differs, ONE ``nft -f -`` of
  :func:`ani.device.firewall.replace_script` (atomic: ``table inet fw`` is replaced as a whole,
  other tables are never touched).
- Then ``read() == intended`` is checked. On any failure the prior configuration is put back the
  same way and verified, and :class:`ApplyError` is raised with ``restored`` saying whether
  that worked.
- Every error line frr-reload and nft print on the way (``Failed to execute ...``, ``% ...``)
  is kept, each once: in ``ApplyReport.notes`` after a verified apply, in ``ApplyError.notes``
  and its message (with the restore's) after a failed one.

``intended`` is taken in canonical form (:meth:`DeviceConfig.canonical`), so a model changed in
place (``want.static_routes.append(...)``, which pydantic does not validate or sort) applies
and verifies like the same model built afresh; e.g. ``bgp_route_map_delay_timer = 5`` (FRR's
default, never printed) becomes None.

Refused before anything is changed (``ApplyError(restored=True)``, nothing touched): the
in-place changes made ``intended`` invalid, running has ``unmodelled`` lines (applying would delete what the model cannot express; the message
names the lines), ``intended`` has ``unmodelled`` lines, or ``intended.hostname`` is not the
router's name (FRR prints the lab's UTS name whatever is configured).

The startup config (``lab.startup_config_path(router)``: ``/etc/frr/<pathspace>/frr.conf``) is written only with
``write_startup=True`` (``vtysh -c 'write memory'`` after a verified apply; the file is read back
and checked). nftables has no startup file in a lab.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from ani.device import firewall as fwmod
from ani.device.model import DeviceConfig
from ani.device.outcome import ApplyError, ApplyReport, ReadError
from ani.device.parse import parse
from ani.device.render import render
from ani.device.state import NFT_LIST_JSON, RouterState, Target, converge, read_state
from ani.errors import LabError

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = ["ApplyError", "ApplyReport", "apply", "context_lines", "frr_diff", "mismatch", "model_of", "read", "read_many"]

#: at most this many routers are read at once by :func:`read_many`
READ_WORKERS = 8

T = TypeVar("T")

#: prefixed to the rendered model: the lab's daemons run with ``-F traditional``
FRR_PREAMBLE = "frr defaults traditional\n"


# -- reading ---------------------------------------------------------------------------------


def model_of(router: str, frr_text: str, nft_json: str) -> DeviceConfig:
    """The model of a router's state as read (``show running-config`` text, ``nft -j list
    ruleset`` JSON, however they were read: here out of band, by an agent through its tools),
    ``hostname`` = ``router``. Raises ReadError if the ruleset is not nft JSON,
    ValueError if FRR printed what the parser cannot read."""
    m = parse(frr_text)
    try:
        fw, extra = fwmod.parse_ruleset(nft_json)
    except ValueError as exc:
        raise ReadError(f"{router}: cannot read the nftables ruleset: {exc}") from None
    return m.model_copy(update={"hostname": router, "firewall": fw, "unmodelled": [*m.unmodelled, *extra]})


def read(lab: Lab, router: str, timeout: float = 10.0) -> DeviceConfig:
    """The router's whole configuration now, read out of band (FRR + nftables, through
    :func:`ani.device.state.read_state`): ``parse(show running-config)`` with ``hostname`` =
    ``router``, ``firewall`` from ``nft -j list ruleset``; ``unmodelled``: FRR's
    (``"<block> / <line>"``) then nft's (``"nft / ..."``).

    ``timeout``: seconds per read. Raises ReadError (an ApplyError with ``restored=True``) if
    the lab is gone, an FRR daemon of the router is not running, or vtysh / nft fail;
    ReadTimeout (also an AniTimeout) if a read runs out of ``timeout``; UnknownNode for a name
    that is not a router of the lab."""
    st = read_state(lab, router, timeout, nft_argv=NFT_LIST_JSON)
    return model_of(router, st.frr, st.nft)


def read_many(lab: Lab, routers: Sequence[str], timeout: float = 10.0,
              reader: Callable[..., T] | None = None) -> dict[str, T]:
    """``{router: reader(lab, router)}`` in the order of ``routers`` (``reader``: default
    :func:`read`, called with ``timeout``), the routers read side by side (at most
    :data:`READ_WORKERS` at once): each read waits on its router's daemons, not on the CPU,
    so nine routers take about the time of the slowest instead of the sum.

    Raises what the first router in ``routers`` whose read failed raised (as reading them one
    after the other would; the other reads are done and dropped)."""
    from ani.host.threads import ContextPool

    names = list(routers)
    one = (lambda r: read(lab, r, timeout)) if reader is None else (lambda r: reader(lab, r))
    if len(names) < 2:
        return {r: one(r) for r in names}
    with ContextPool(max_workers=min(READ_WORKERS, len(names))) as pool:
        futures = [pool.submit(one, r) for r in names]
        return {r: f.result() for r, f in zip(names, futures, strict=True)}


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


def mismatch(got: DeviceConfig, want: DeviceConfig) -> list[str]:
    """What still differs (running ``got`` -> wanted ``want``), as diff lines: the modelled FRR
    lines (:func:`frr_diff`), then the lines the model cannot express (``- <line>`` for those
    only ``got`` has, ``+ <line>`` for those only ``want`` has), then the firewall's
    (:func:`ani.device.firewall.diff`). [] if they are equal (order of the unmodelled lines
    aside)."""
    bare = {"unmodelled": []}
    return (
        frr_diff(render(got.model_copy(update=bare)), render(want.model_copy(update=bare)))
        + [f"- {u}" for u in got.unmodelled if u not in want.unmodelled]
        + [f"+ {u}" for u in want.unmodelled if u not in got.unmodelled]
        + fwmod.diff(got.firewall, want.firewall)
    )


# -- applying --------------------------------------------------------------------------------


def _target(router: str, want: DeviceConfig) -> Target:
    """``want`` as a :class:`ani.device.state.Target`: FRR's part equal to ``want``'s with no
    unmodelled line; ``table inet fw`` equal to ``want.firewall`` (other tables untouched).

    FRR's part is done when it renders as ``want`` does, or when its model equals ``want``'s
    (the equality :func:`apply` verdicts by): a model's prefix-lists and route-maps are dicts,
    equal in any order, while FRR prints them in creation order, which frr-reload never changes;
    a ``want`` holding them in another order (e.g. the source of truth's, sorted by name) would
    otherwise cost every router two frr-reload runs that change nothing."""
    want_frr = render(want)
    want_frr_part = want.model_copy(update={"firewall": None})

    def frr_done(text: str) -> bool:
        m = parse(text).model_copy(update={"hostname": router})
        return not m.unmodelled and (render(m) == want_frr or m.model_copy(update={"firewall": None}) == want_frr_part)

    def nft_done(text: str) -> bool:
        try:
            fw, extra = fwmod.parse_ruleset(text)
        except ValueError as exc:
            raise ReadError(f"{router}: cannot read the nftables ruleset: {exc}") from None
        return fw == want.firewall and not any(fwmod.about_table(u) for u in extra)

    return Target(frr=FRR_PREAMBLE + want_frr, frr_done=frr_done,
                  nft=fwmod.replace_script(want.firewall), nft_done=nft_done, nft_read=NFT_LIST_JSON)


def _converge(lab: Lab, router: str, cur: RouterState, want: DeviceConfig, passes: int, timeout: float,
              notes: list[str], deadline: float | None = None) -> DeviceConfig:
    """Make the running config equal ``want`` starting from ``cur`` (as just read) with the one
    restore loop (:func:`ani.device.state.converge`); returns the model of what it reads at the
    end. Tool messages go to ``notes`` (each once). A mismatch is not raised here."""
    res = converge(lab, router, _target(router, want), cur, passes=passes, timeout=timeout,
                   deadline=deadline)
    notes.extend(n for n in res.notes if n not in notes)
    return model_of(router, res.state.frr, res.state.nft)


def apply(
    lab: Lab,
    router: str,
    intended: DeviceConfig,
    write_startup: bool = False,
    passes: int = 2,
    timeout: float = 30.0,
    deadline: float | None = None,
) -> ApplyReport:
    """Make ``router``'s running configuration equal ``intended`` (see the module docstring).

    Args:
        lab: an :class:`ani.lab.Lab` (uses ``vtysh``, ``exec``, ``startup_config_path``).
        intended: the whole wanted configuration (FRR part and ``firewall``).
        write_startup: also write FRR's startup config after a verified apply.
        passes: frr-reload runs at most this many times per apply (and per restore).
        timeout: bound of each frr-reload / vtysh / nft run, seconds.
        deadline: ``time.monotonic()`` after which the change stops (the caller's bound, e.g. a
            NETCONF commit's): a frr-reload still running then is killed (its process group:
            no vtysh of it goes on), a later step is not started, and the prior configuration
            is put back (the restore is bounded by ``timeout`` per run, not by the deadline).

    Returns:
        ApplyReport: ``changed`` (False when running already equalled ``intended``), ``diff``
        (``- line`` / ``+ line`` in :func:`context_lines` form, nft lines as
        ``+ nft / table inet fw / ...``), ``seconds`` (wall time).

    Raises:
        ApplyError: refused (``restored=True``, nothing changed), or the result differed from
            ``intended`` and the prior configuration was put back (``restored=True``, verified)
            or could not be (``restored=False``). ``lines``: what differed, or the unmodelled
            lines of a refusal; ``bound_passed`` when the deadline stopped it. LabError /
            UnknownNode: the lab itself is not usable.
    """
    t0 = time.monotonic()
    intended = _checked_intended(router, intended)
    state = read_state(lab, router, nft_argv=NFT_LIST_JSON)
    before = model_of(router, state.frr, state.nft)
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
        # each run ends by the deadline; reads keep the whole timeout (a router busy after a
        # killed run still answers)
        after = _converge(lab, router, state, intended, passes, timeout, notes, deadline=deadline)
        failed = after != intended
    except (ApplyError, LabError, ValueError) as exc:  # a read failed half-way, or FRR printed junk
        notes.append(str(exc))
        after, failed = None, True
    late = failed and deadline is not None and time.monotonic() >= deadline
    if not failed:
        if write_startup:
            _write_startup(lab, router, intended, timeout)
        return ApplyReport(changed=True, diff=diff, seconds=time.monotonic() - t0, notes=notes)

    left = mismatch(after, intended) if after is not None else []
    restored, rnotes = _restore(lab, router, before, passes, timeout)
    raise _not_reached(router, t0, late, left, notes, restored, rnotes)


def _checked_intended(router: str, intended: DeviceConfig) -> DeviceConfig:
    """``intended`` in canonical form, refused (ApplyError, ``restored=True``: nothing applied)
    when it is not valid, names another hostname than ``router`` or has unmodelled lines."""
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
    return intended


def _not_reached(router: str, t0: float, late: bool, left: list[str], notes: list[str], restored: bool,
                 rnotes: list[str]) -> ApplyError:
    """The ApplyError of an apply whose result differed from the intended configuration (or
    that the deadline stopped, ``late``): what still differs, the notes, and whether the prior
    configuration was put back."""
    msg = f"{router}: the running configuration did not reach the intended one"
    if late:
        msg = (f"{router}: stopped before the running configuration reached the intended one: the bound of "
               f"the change ran out ({time.monotonic() - t0:.1f} s after it started)")
    if left:
        msg += "; still different (running -> intended): " + "; ".join(left[:10])
    if notes:
        msg += "; " + "; ".join(notes)
    if restored:
        msg += "; prior configuration restored" + (" (on the way: " + "; ".join(rnotes) + ")" if rnotes else "")
    else:
        msg += "; RESTORING THE PRIOR CONFIGURATION FAILED: " + "; ".join(rnotes)
    return ApplyError(msg, restored=restored, lines=left, notes=[*notes, *(n for n in rnotes if n not in notes)],
                      bound_passed=late)


def _restore(lab: Lab, router: str, before: DeviceConfig, passes: int, timeout: float) -> tuple[bool, list[str]]:
    """Put ``before`` back and verify; (verified, notes: every tool error line on the way)."""
    notes: list[str] = []
    try:
        # unmodelled lines read here were added by the failed apply: they are removed
        cur = read_state(lab, router, timeout, nft_argv=NFT_LIST_JSON)
        after = _converge(lab, router, cur, before, passes, timeout, notes)
        if after == before:
            return True, notes
        notes.append("still different: " + "; ".join(mismatch(after, before)[:10]))
    except (ApplyError, LabError, ValueError) as exc:
        notes.append(str(exc))
    return False, notes


def _write_startup(lab: Lab, router: str, intended: DeviceConfig, timeout: float) -> None:
    """``write memory`` and check that ``frr.conf`` now holds ``intended``'s FRR part."""
    path = lab.startup_config_path(router)
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
