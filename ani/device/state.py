"""One reader and one restorer of a lab router's state: FRR's running configuration and the
nftables ruleset, read out of band through the lab (never through an agent's session).

Every level reads routers here (A0's change detection, A1's snapshots, the device model of
A2's NETCONF backend, A3-T, A3-R and A4), and restores them here (A1's rollback to a snapshot,
:func:`ani.device.apply.apply` and its restore); so does anything below the ANI that freezes,
restarts or rewrites a router (the fault injector). The levels keep their scopes: A1 restores
raw text, lines the device model cannot express included; ``ani.device.apply`` works on the
model.

    why = lab_gone(lab, "r1")                  # "lab 3fa9c1 is not running (...)", or None
    text = read_frr(lab, "r1", timeout=10)     # `show running-config`, checked (below)
    rules = read_nft(lab, "r1")                # `nft -s list ruleset` (argv=NFT_LIST_JSON: -j)
    st = read_state(lab, "r1")                 # RouterState(frr, nft): both, as text
    frr_lines(st.frr), nft_lines(st.nft)       # normalised, for comparing two states
    res = converge(lab, "r1", target, st)      # frr-reload + nft -f until the target runs

Reading checks, in this order, and raises :class:`~ani.device.outcome.ReadError` (an
``ApplyError`` with ``restored=True``: nothing was changed) naming the router:

1. the lab is gone (:func:`lab_gone`: its node entry script or the router's network namespace
   no longer exists): ``"r1: lab <id> is not running (...)"``;
2. one of the router's FRR daemons is not running (``lab.dead_daemons``): vtysh would leave
   that daemon's part out and exit 0, so ``"r1: FRR daemon bgpd is not running; ..."``;
3. the read ran out of its bound: :class:`~ani.device.outcome.ReadTimeout` (also an
   :class:`ani.errors.AniTimeout`), ``"r1: timeout after 10 s (reading the running config)"``;
4. vtysh / nft failed, or vtysh printed no ``Current configuration:``.

:func:`converge` is the one restore loop: up to ``passes`` runs of frr-reload
(:mod:`ani.device.frr_reload`: never writes the startup config) while FRR's running config is
not the target, then one ``nft -f -`` if the ruleset is not; every error line of every run
(frr-reload's ``Failed to execute ...``, vtysh's ``% ...``, nft's) is kept in
``Converged.notes``, each once, so a report can carry all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ani.device.frr_reload import DEFAULT_ARGV, frr_reload
from ani.device.outcome import ReadError, ReadTimeout
from ani.device.render import HEADER_PREFIXES
from ani.errors import LabGone

if TYPE_CHECKING:
    from ani.lab.protocol import Lab

__all__ = [
    "NFT_LIST", "NFT_LIST_JSON", "NFT_LOAD", "SHOW_RUNNING", "Converged", "RouterState", "Target",
    "converge", "frr_lines", "lab_gone", "nft_lines", "read_frr", "read_nft", "read_state",
]

SHOW_RUNNING = "show running-config"
#: the ruleset as text, stateless (counters and quotas move with traffic: state, not configuration)
NFT_LIST: tuple[str, ...] = ("nft", "-s", "list", "ruleset")
#: the ruleset as libnftables JSON (what :func:`ani.device.firewall.parse_ruleset` reads)
NFT_LIST_JSON: tuple[str, ...] = ("nft", "-j", "list", "ruleset")
#: loads an nft script from stdin in one transaction
NFT_LOAD: tuple[str, ...] = ("nft", "-f", "-")


@dataclass(frozen=True)
class RouterState:
    """A router's state as read: ``frr`` (``show running-config`` text), ``nft`` (the ruleset,
    text or JSON as the reader was asked)."""

    frr: str
    nft: str


# -- the lab ---------------------------------------------------------------------------------


def lab_gone(lab: Lab, node: str) -> str | None:
    """Why ``node`` of ``lab`` cannot be reached because the lab is gone (removed under the
    caller, e.g. ``ani lab down`` of a lab an adapter is attached to), in the words of
    :class:`ani.errors.LabGone`: ``"lab <id> is not running (network namespace ani-<id>-r1 is
    gone)"`` or ``"... (no <lab dir>/r1/enter)"``; ``"network namespace ... is gone"`` alone
    when only the namespace went. None if the node is there, or if ``lab`` cannot tell (an
    object without ``node_argv``, e.g. a test's fake; one without ``netns`` is judged by its
    entry script alone). Raises UnknownNode for a name that is not a node of the lab."""
    try:
        enter = Path(lab.node_argv(node, [])[0])
    except (AttributeError, TypeError, IndexError):
        return None
    try:
        ns: str | None = lab.netns(node)
    except (AttributeError, TypeError):
        ns = None
    ns_gone = ns is not None and not Path("/run/netns", ns).exists()
    if not enter.exists():
        return str(LabGone(getattr(lab, "id", "?"), f"network namespace {ns} is gone" if ns_gone else f"no {enter}"))
    if ns_gone:
        return f"network namespace {ns} is gone"
    return None


def _check_reachable(lab: Lab, router: str) -> None:
    gone = lab_gone(lab, router)
    if gone:
        raise ReadError(f"{router}: {gone}", gone=True)
    dead = getattr(lab, "dead_daemons", None)
    down = dead(router) if callable(dead) else []
    if down:
        raise ReadError(f"{router}: FRR daemon {', '.join(down)} is not running; its running config "
                        "cannot be read whole (the router is down or degraded)")


# -- reading ---------------------------------------------------------------------------------


def read_frr(lab: Lab, router: str, timeout: float = 10.0, command: str = SHOW_RUNNING,
             checked: bool = True) -> str:
    """``show running-config`` of ``router`` (text, as FRR prints it), after the checks of the
    module doc (``checked=False``: the caller made them just before, e.g. :func:`read_state`).

    ``timeout``: seconds. Raises ReadError / ReadTimeout (see the module doc); UnknownNode if
    ``router`` is not a router of the lab."""
    if checked:
        _check_reachable(lab, router)
    try:
        res = lab.vtysh(router, command, timeout=timeout)
    except LabGone as exc:
        raise ReadError(f"{router}: {exc}", gone=True) from None
    if res.timed_out:
        raise ReadTimeout(router, timeout, "reading the running config")
    if not res.ok or "Current configuration:" not in res.stdout:
        why = f"exit {res.rc}" if not res.ok else "no 'Current configuration:'"
        raise ReadError(f"{router}: cannot read the running config ({why}): "
                        f"{(res.stderr or res.stdout).strip()[:300]}")
    return res.stdout


def read_nft(lab: Lab, router: str, timeout: float = 10.0, argv: Sequence[str] = NFT_LIST,
             checked: bool = True) -> str:
    """The nftables ruleset of ``router`` as ``argv`` prints it (default ``nft -s list
    ruleset``; :data:`NFT_LIST_JSON` for JSON). ``timeout``: seconds. Raises ReadError /
    ReadTimeout (``"... (reading the nftables ruleset)"``)."""
    if checked:
        gone = lab_gone(lab, router)
        if gone:
            raise ReadError(f"{router}: {gone}", gone=True)
    try:
        res = lab.exec(router, list(argv), timeout=timeout)
    except LabGone as exc:
        raise ReadError(f"{router}: {exc}", gone=True) from None
    if res.timed_out:
        raise ReadTimeout(router, timeout, "reading the nftables ruleset")
    if not res.ok:
        raise ReadError(f"{router}: cannot read the nftables ruleset: "
                        f"{res.stderr.strip()[:300] or f'nft exited {res.rc}'}")
    return res.stdout


def read_state(lab: Lab, router: str, timeout: float = 10.0, command: str = SHOW_RUNNING,
               nft_argv: Sequence[str] = NFT_LIST) -> RouterState:
    """Both parts of ``router``'s state (see :func:`read_frr`, :func:`read_nft`; ``timeout``:
    seconds per read). Raises ReadError / ReadTimeout."""
    frr = read_frr(lab, router, timeout, command)
    return RouterState(frr=frr, nft=read_nft(lab, router, timeout, nft_argv, checked=False))


# -- normalising -----------------------------------------------------------------------------


def frr_lines(text: str) -> list[str]:
    """The configuration lines of a running config, in order, trailing spaces cut: without
    the header (:data:`ani.device.render.HEADER_PREFIXES`: ``Building configuration...``,
    ``Current configuration:``, ``frr version``, ``frr defaults``), ``!`` lines, blank lines and
    ``end``. Two running configs are the same configuration iff their lines are equal."""
    out = []
    for raw in text.splitlines():
        ln = raw.rstrip()
        word = ln.strip()
        if not word or word == "end" or word.startswith("!") or ln.startswith(HEADER_PREFIXES):
            continue
        out.append(ln)
    return out


def nft_lines(text: str) -> list[str]:
    """Ruleset lines, trailing spaces cut, blank lines dropped."""
    return [ln.rstrip() for ln in text.splitlines() if ln.strip()]


# -- restoring -------------------------------------------------------------------------------


@dataclass
class Target:
    """What :func:`converge` makes a router run.

    Attributes:
        frr: the FRR configuration text frr-reload is given (a snapshot's ``show
            running-config``, or ``frr defaults traditional`` + a rendered model).
        frr_done: ``show running-config`` text -> True when FRR runs the target.
        nft: the script ``nft -f -`` is given when the ruleset is not the target (None: leave
            nftables alone).
        nft_done: ruleset text (as ``nft_read`` prints it) -> True when nftables runs the target.
        nft_read: argv that reads the ruleset (:data:`NFT_LIST` or :data:`NFT_LIST_JSON`).
        frr_read: the vtysh command that reads FRR's part (:data:`SHOW_RUNNING`).
    """

    frr: str
    frr_done: Callable[[str], bool]
    nft: str | None = None
    nft_done: Callable[[str], bool] = lambda _text: True
    nft_read: Sequence[str] = NFT_LIST
    frr_read: str = SHOW_RUNNING


@dataclass
class Converged:
    """What :func:`converge` ended with: ``state`` (as last read), ``frr_ok`` / ``nft_ok``
    (each part runs the target), ``notes`` (every tool error line, in order, each once),
    ``reloads`` (frr-reload runs)."""

    state: RouterState
    frr_ok: bool
    nft_ok: bool
    notes: list[str] = field(default_factory=list)
    reloads: int = 0

    @property
    def ok(self) -> bool:
        return self.frr_ok and self.nft_ok


def converge(
    lab: Lab,
    router: str,
    target: Target,
    current: RouterState,
    *,
    passes: int = 2,
    timeout: float = 30.0,
    read_timeout: float | None = None,
    reload_argv: Sequence[str] = DEFAULT_ARGV,
    nft_argv: Sequence[str] = NFT_LOAD,
    deadline: float | None = None,
) -> Converged:
    """Make ``router`` run ``target``, starting from ``current`` (as just read): frr-reload at
    most ``passes`` times while FRR's part is not the target (FRR 8.4's exit codes are no
    verdict, and some changes take a second run), re-reading after each run; then one
    ``nft_argv`` run with ``target.nft`` if the ruleset is not the target, re-read.

    ``timeout``: seconds per frr-reload / nft run; ``read_timeout``: per read (default
    ``timeout``); ``deadline`` (``time.monotonic()``): no run lasts past it (a run still going
    then is killed, with its process group) and none starts after it. A part that stays
    different is not raised: see ``Converged``. Raises ReadError / ReadTimeout when a read fails
    half way (the router may be changed then).
    """
    rt = timeout if read_timeout is None else read_timeout
    notes: list[str] = []
    frr, nft = current.frr, current.nft
    reloads = 0
    frr_ok = target.frr_done(frr)
    for _ in range(max(1, passes) if not frr_ok else 0):
        bound = _bound(timeout, deadline)
        if bound <= 0:
            _note(notes, "frr-reload: not run, the bound of the change had passed")
            break
        rr = frr_reload(lab, router, target.frr, timeout=bound, argv=reload_argv)
        reloads += 1
        if rr.timed_out:
            _note(notes, f"frr-reload: timed out after {bound:g} s")
        for line in rr.errors:
            _note(notes, f"frr-reload: {line}")
        if not rr.timed_out and not rr.errors and rr.rc != 0:
            _note(notes, f"frr-reload: exit {rr.rc}")
        frr = read_frr(lab, router, rt, target.frr_read)  # FRR may still be busy after a long reload: the bound holds
        frr_ok = target.frr_done(frr)
        if frr_ok:
            break
    nft_ok = target.nft is None or target.nft_done(nft)
    if not nft_ok and _bound(timeout, deadline) > 0:
        bound = _bound(timeout, deadline)
        res = lab.exec(router, list(nft_argv), timeout=bound, input=target.nft)
        if res.timed_out:
            _note(notes, f"nft -f: timed out after {bound:g} s")
        elif not res.ok:
            _note(notes, f"nft -f (exit {res.rc}): {' '.join(res.stderr.split())[:500]}")
        nft = read_nft(lab, router, rt, target.nft_read)
        nft_ok = target.nft_done(nft)
    return Converged(RouterState(frr, nft), frr_ok, nft_ok, notes, reloads)


def _bound(timeout: float, deadline: float | None) -> float:
    """Seconds the next run may take: ``timeout``, cut to what is left before ``deadline``."""
    import time

    return timeout if deadline is None else min(timeout, round(deadline - time.monotonic(), 3))


def _note(notes: list[str], line: str) -> None:
    if line not in notes:
        notes.append(line)
