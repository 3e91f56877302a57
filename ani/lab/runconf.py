"""``show running-config`` of a lab router without a vtysh process when nothing changed.

vtysh's ``show running-config`` (FRR ``vtysh_write_terminal``) is a function of what it reads
when it runs: each connected daemon's own ``write terminal`` (on the daemon's vty socket,
``/var/run/frr/<pathspace>/<daemon>.vty``), merged with vtysh's own lines (its ``vtysh.conf``,
``/etc/frr/<pathspace>/vtysh.conf``, and the hostname of the node's UTS namespace, which the
node's ``enter`` script sets to the node's name at every run). A vtysh process costs ~37 ms of
CPU (it builds its command graph at every start); reading the daemons' parts on their sockets
costs well under 1 ms. The harness reads each router's running config dozens of times per
campaign run, mostly with nothing changed in between.

:class:`RunningConfigs` (one per :class:`ani.lab.Lab` object) keeps, per router, the last text
vtysh printed together with its *sources*: ``vtysh.conf``'s bytes and, for every ``*.vty``
socket of the run dir, the daemon's ``write terminal`` answer. A read first takes the sources;
if they equal the kept ones, the kept text is the answer (byte for byte what vtysh would print);
otherwise vtysh runs, and its text is kept only if the sources read just after equal those read
just before (no change raced the run) and the text is made of their lines (:func:`consistent`: no
change made and undone during the run). Anything unexpected on a socket (missing, refusing, a
non-zero status, an answer without its end) means no cached answer: vtysh runs, as without this
module. ``ANI_VTY_FAST=0`` turns it off with the other socket reads (:data:`ani.lab.vty.FAST_ENV`).

Texts are kept by their sources, not only the last one: a router put back where it was (a
rollback, a fault's restore) reads the text kept for those sources. And with a ``store``
directory (the lab's ``<lab dir>/<router>/runconf/``), every :class:`RunningConfigs` of the lab,
in any process (the test or campaign process, each campaign worker, the NETCONF server), keeps
them there too, one file per sources (named by their SHA-256), at most :data:`KEEP` per router:
a process reading a router for the first time takes what another one's vtysh printed. A kept
text is used only if it is still :func:`consistent` with the sources just read.

Labs can share them too: with ``ANI_VTYSH_CACHE`` naming a directory (:mod:`ani.host.vtysh_cache`),
every lab's readers keep their texts in its ``runconf-*`` subdirectory as well, named by the
router's name (the hostname of its UTS namespace, which vtysh prints) and the sources, at most
:data:`SHARED_KEEP`: a router of a new lab whose daemons print what a router of that name printed
in another lab (the same topology and configuration: the next run of a campaign, the next test)
reads that text with no vtysh. The test suite sets it to a directory of its own for the session;
unset, nothing is shared.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ani.errors import LabError
from ani.host import vtysh_cache
from ani.host.proc import ExecResult
from ani.lab import vty

#: the one command served (exactly this text, alone)
COMMAND = "show running-config"
#: what vtysh sends each daemon for ``show running-config`` (after ``enable``: the socket starts in
#: view mode)
DAEMON_COMMANDS = ("enable", "do write terminal")

Sources = tuple[bytes | None, tuple[tuple[str, str], ...]]

#: texts kept per router (in memory, and in the store): the last ones by sources
KEEP = 16

#: texts kept in the shared directory (the oldest quarter goes when it holds more)
SHARED_KEEP = 1024


#: what :func:`sources` gives when a daemon did not answer before the deadline (a frozen daemon)
TIMED_OUT = "timed out"


def sources(run_dir: Path, vtysh_conf: Path, deadline: float) -> Sources | str | None:
    """``(vtysh.conf bytes or None if absent, ((daemon, write terminal text), ...))`` sorted by
    daemon; None when a socket cannot be read cleanly (the caller runs vtysh); :data:`TIMED_OUT`
    when the ``deadline`` (a ``time.monotonic()`` value) passed while reading. Raises nothing."""
    try:
        conf = vtysh_conf.read_bytes()
    except FileNotFoundError:
        conf = None
    except OSError:
        return None
    try:
        socks = sorted(p for p in os.listdir(run_dir) if p.endswith(".vty"))
    except OSError:
        return None
    parts = []
    for name in socks:
        try:
            answers = vty.query(run_dir / name, list(DAEMON_COMMANDS), timeout=deadline - time.monotonic(),
                                deadline=deadline)
        except LabError:
            return TIMED_OUT if time.monotonic() >= deadline else None
        if any(status != 0 for status, _text in answers):
            return None
        parts.append((name[: -len(".vty")], answers[-1][1]))
    return conf, tuple(parts)


#: the lines of vtysh's ``show running-config`` that come from vtysh itself, not from a daemon
#: (besides those of its ``vtysh.conf``)
VTYSH_OWN = frozenset({"Building configuration...", "Current configuration:", "end"})


def _lines(text: str) -> set[str]:
    return {s for ln in text.splitlines() if (s := ln.strip()) and s != "!"}


def consistent(text: str, src: Sources) -> bool:
    """Whether vtysh's ``text`` is made of exactly the lines of ``src``: every line of the
    daemons' answers is in it, and every other line of it is vtysh's own (:data:`VTYSH_OWN`, a
    line of ``vtysh.conf``). Equal sources before and after a vtysh run do not rule out a change
    made and undone during the run (A, B, A): vtysh's text would then hold B's lines; this
    check keeps such a text from being kept. False only costs a vtysh run at the next read."""
    conf, parts = src
    daemons = set().union(*(_lines(answer) for _name, answer in parts))
    own = VTYSH_OWN | _lines((conf or b"").decode("utf-8", errors="replace"))
    got = _lines(text)
    return daemons <= got and got - daemons <= own


class RunningConfigs:
    """The ``show running-config`` texts of each router of one lab, kept by their sources.

    Args:
        run_dir: ``run_dir(router) -> Path`` (``/var/run/frr/<pathspace>``).
        vtysh_conf: ``vtysh_conf(router) -> Path`` (``/etc/frr/<pathspace>/vtysh.conf``).
        store: ``store(router) -> Path``, a directory (made 0700 when first written) that every
            reader of the lab shares; None: this object's memory only.
    """

    def __init__(self, run_dir: Callable[[str], Path], vtysh_conf: Callable[[str], Path],
                 store: Callable[[str], Path] | None = None):
        self._run_dir, self._vtysh_conf, self._store = run_dir, vtysh_conf, store
        self._kept: dict[str, dict[str, ExecResult]] = {}  # router -> {sources key: result}, oldest first
        self._lock = threading.Lock()

    def read(self, router: str, timeout: float, run_vtysh: Callable[[float], ExecResult]) -> ExecResult:
        """What ``vtysh -c 'show running-config'`` prints on ``router``: the text kept for the
        sources read now, else ``run_vtysh(seconds left)``'s result (kept when clean).
        ``timeout``: seconds for the whole read; a daemon that does not answer in time gives
        ``ExecResult(rc=-9, timed_out=True)`` as a vtysh killed at its timeout. Raises what
        ``run_vtysh`` raises."""
        if os.environ.get(vty.FAST_ENV) == "0":
            return run_vtysh(timeout)
        t0 = time.monotonic()
        deadline = t0 + timeout
        before = sources(self._run_dir(router), self._vtysh_conf(router), deadline)
        if before == TIMED_OUT:
            return ExecResult(rc=-9, stdout="", stderr="", timed_out=True, elapsed_s=time.monotonic() - t0)
        if before is not None and (kept := self._kept_for(router, before)) is not None:
            return replace(kept, elapsed_s=time.monotonic() - t0)
        res = run_vtysh(max(0.0, deadline - time.monotonic()))
        if before is None or not res.ok or res.stderr or "Current configuration:" not in res.stdout:
            return res
        if time.monotonic() < deadline and sources(self._run_dir(router), self._vtysh_conf(router),
                                                   deadline) == before and consistent(res.stdout, before):
            self._keep(router, before, res)
        return replace(res, elapsed_s=time.monotonic() - t0)

    def _kept_for(self, router: str, src: Sources) -> ExecResult | None:
        key = _key(src)
        with self._lock:
            res = self._kept.get(router, {}).get(key)
        if res is not None:
            return res
        shared = shared_dir()
        for path in ((self._store(router) / key) if self._store else None,
                     (shared / shared_key(router, key)) if shared else None):
            if path is None:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeError):
                continue
            if consistent(text, src):
                res = ExecResult(rc=0, stdout=text, stderr="", timed_out=False, elapsed_s=0.0)
                self._remember(router, key, res)
                return res
        return None

    def _keep(self, router: str, src: Sources, res: ExecResult) -> None:
        key = _key(src)
        self._remember(router, key, res)
        if self._store is not None:
            _write(self._store(router), key, res.stdout)
        if (shared := shared_dir()) is not None:
            _write(shared, shared_key(router, key), res.stdout, keep=SHARED_KEEP, drop=SHARED_KEEP // 4)

    def _remember(self, router: str, key: str, res: ExecResult) -> None:
        with self._lock:
            kept = self._kept.setdefault(router, {})
            kept.pop(key, None)
            kept[key] = res
            while len(kept) > KEEP:
                del kept[next(iter(kept))]


def _key(src: Sources) -> str:
    conf, parts = src
    h = hashlib.sha256(conf if conf is not None else b"\0absent")
    for name, text in parts:
        h.update(b"\0" + name.encode() + b"\0" + text.encode("utf-8", errors="surrogatepass"))
    return h.hexdigest()


def shared_dir() -> Path | None:
    """The ``runconf`` subdirectory of ``ANI_VTYSH_CACHE`` (:mod:`ani.host.vtysh_cache`), or None."""
    return vtysh_cache.subdir("runconf")


def shared_key(router: str, key: str) -> str:
    """The name of a text in the shared directory: SHA-256 (hex) of the router's name and the
    sources' :func:`_key` (the directory's name carries the vtysh program's identity)."""
    return hashlib.sha256(f"{router}\0{key}".encode()).hexdigest()


def _write(store: Path, key: str, text: str, keep: int = KEEP, drop: int = 0) -> None:
    """``text`` into ``store/key`` (atomically); beyond ``keep`` files, the oldest removed down to
    ``keep - drop``. Raises nothing: the store is only a saving."""
    try:
        store.mkdir(mode=0o700, exist_ok=True)
        tmp = store / f".{key}.{os.getpid()}.{threading.get_ident()}"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, store / key)
        names = [n for n in os.listdir(store) if not n.startswith(".")]
        if len(names) > keep:
            files = sorted((store / n for n in names), key=_mtime)
            for p in files[: len(files) - keep + drop]:
                p.unlink(missing_ok=True)
    except OSError:
        pass


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0
