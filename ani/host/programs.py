"""The program registry: every external program the SDK runs, from ``ani/host/packages.txt``.

One place knows the programs: the data file (also read by ``scripts/setup.sh``) names, for each,
the Debian package that provides it, which levels need it and what for. Code asks here::

    program("frr-reload.py")      -> "/usr/lib/frr/frr-reload.py"   (or raises ProgramMissing)
    program("nft")                -> "/usr/sbin/nft"                 (looked up on PATH, /usr/sbin, /sbin)
    require(["nft", "-f", "-"])   -> None; raises ProgramMissing if argv[0] is a registered
                                     program that is not installed (unregistered argv[0]: no check)
    missing("ping")               -> the ProgramMissing those raise for it (noted; not raised)

Presence is checked at every call, not cached: a program removed while a campaign runs is
found missing at the moment it is needed, and the run that needed it becomes an
infrastructure error (see :mod:`ani.campaign.runner`).

The fault journal: every ``ProgramMissing`` raised here is also noted (:func:`note_fault`), so
that a fault that some caller turned into an ordinary failure (a refused commit, a failed check)
is still seen by the runner:

- in the *fault scope* of the run whose code met it (:func:`fault_scope`, a context variable:
  with several runs in threads of one process, a missing program met by one run lands in that
  run's scope only; the threads and pools a run starts carry its scope, :mod:`ani.host.threads`)::

      with fault_scope() as scope:
          ...                       # the run, and every thread it starts
          scope.faults()            # -> ["ping is missing (apt-get install iputils-ping)"]

- in this process's journal, scoped or not (:func:`fault_mark` / :func:`faults_since`: the
  process-wide view, right only when one run at a time runs in the process);
- when the environment variable ``ANI_HOST_FAULTS`` names a file, as one JSON line appended to
  it (the lab sets it for the helper processes it starts, e.g. its NETCONF server).

Kept light (standard library only): the NETCONF server process imports it.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ani.errors import HostFault, ProgramMissing

#: the data file: package, program, needed-by, used-for (see its header)
PACKAGES_FILE = Path(__file__).with_name("packages.txt")

#: the ANI levels (``ani.protocol.Level`` values; a unit test keeps the two equal)
LEVELS: tuple[str, ...] = ("a0", "a1", "a2", "a3t", "a3r", "a4")

#: the needed-by words of the data file besides the levels
FEATURES = {
    "test": "the test suite only (e.g. the HTML report's browser test)",  # report-html (issue 14)
    "lab": "starting any lab (every level, and `ani lab up`)",
    "observer": "grading (every level)",
    "daemon": "topologies that run this FRR daemon",
    "setup": "scripts/setup.sh only",
    "faults": "fault injection (campaigns with a fault_rate, docs/faults.md)",
}

#: directories searched after PATH (a non-root PATH often lacks the sbin directories)
EXTRA_PATH = ("/usr/local/sbin", "/usr/sbin", "/sbin")

#: environment variable naming a file that receives one JSON line per ProgramMissing raised
FAULT_LOG_ENV = "ANI_HOST_FAULTS"


@dataclass(frozen=True)
class Program:
    """One line of the data file.

    Attributes:
        name: the registry key: the program's name, or the basename of its absolute path
            (``frr-reload.py``, ``zebra``); ``-`` lines have none (a package without a program).
        package: the Debian package that provides it.
        path: the absolute path the code runs, or None (looked up on PATH, then /usr/sbin, /sbin).
        needed_by: the needed-by words (``lab``, ``observer``, ``daemon``, ``setup``, ``test``, levels).
        used_for: what the SDK does with it.
    """

    name: str
    package: str
    path: str | None
    needed_by: tuple[str, ...]
    used_for: str

    @property
    def shown(self) -> str:
        """How messages name it: the absolute path if the file gives one, else the name."""
        return self.path or self.name

    @property
    def levels(self) -> tuple[str, ...]:
        """The levels that cannot work without it (``lab`` / ``observer``: all of them;
        ``daemon``: none by itself: see :func:`ani.host.checks.levels_broken`)."""
        return levels_of(self.needed_by)

    @property
    def fix(self) -> str:
        return f"apt-get install {self.package}"

    def locate(self) -> str | None:
        """Its absolute path if it is installed (an executable file) now, else None."""
        if self.path is not None:
            return self.path if _executable(self.path) else None
        search = os.pathsep.join([os.environ.get("PATH", os.defpath), *EXTRA_PATH])
        return shutil.which(self.name, path=search)


def levels_of(needed_by: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """The levels named by needed-by words, in level order (``lab``, ``observer``: all)."""
    if "lab" in needed_by or "observer" in needed_by:
        return LEVELS
    return tuple(lv for lv in LEVELS if lv in needed_by)


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def parse(text: str, source: str = str(PACKAGES_FILE)) -> list[Program]:
    """The lines of a packages file, in order. Raises HostFault naming the line if one is
    malformed (the file ships with the SDK: a bad line is the SDK's fault)."""
    known = set(LEVELS) | set(FEATURES)
    out: list[Program] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 3)
        if len(parts) < 4:
            raise HostFault(f"{source}:{n}: expected 'package program needed-by used-for', got {raw!r}")
        package, prog, needed, used_for = parts
        words = tuple(w for w in needed.split(",") if w)
        bad = [w for w in words if w not in known]
        if bad or not words:
            raise HostFault(f"{source}:{n}: unknown needed-by {bad or needed!r}; known: {', '.join(sorted(known))}")
        path = prog if prog.startswith("/") else None
        name = "-" if prog == "-" else os.path.basename(prog)
        if name != "-":
            if name in seen:
                raise HostFault(f"{source}:{n}: program {name!r} is listed twice (line {seen[name]})")
            seen[name] = n
        out.append(Program(name=name, package=package, path=path, needed_by=words, used_for=used_for))
    return out


@functools.lru_cache(maxsize=1)
def entries() -> tuple[Program, ...]:
    """Every line of ``ani/host/packages.txt`` (read once per process)."""
    return tuple(parse(PACKAGES_FILE.read_text(encoding="utf-8")))


def registry() -> dict[str, Program]:
    """``{name: Program}`` of every program the SDK runs."""
    return {p.name: p for p in entries() if p.name != "-"}


def packages() -> list[str]:
    """Every package of the data file, once each, in file order (what the set-up installs)."""
    return list(dict.fromkeys(p.package for p in entries()))


def lookup(name_or_path: str) -> Program | None:
    """The registered program called ``name_or_path`` (its name, or its absolute path), or None."""
    reg = registry()
    if name_or_path in reg:
        return reg[name_or_path]
    if name_or_path.startswith("/"):
        for p in reg.values():
            if p.path == name_or_path:
                return p
        base = reg.get(os.path.basename(name_or_path))
        if base is not None and base.path is None:  # /usr/sbin/nft: a PATH program by its path
            return base
    return None


def program(name: str) -> str:
    """The absolute path of the registered program ``name`` (``"nft"``, ``"frr-reload.py"``,
    ``"zebra"``), checked now.

    Raises:
        ProgramMissing: it is not installed (names the package that provides it); noted in the
            fault journal.
        HostFault: ``name`` is not in ``ani/host/packages.txt`` (a bug of the SDK).
    """
    p = registry().get(name)
    if p is None:
        raise HostFault(f"program {name!r} is not registered in {PACKAGES_FILE} (an SDK bug)")
    found = p.locate()
    if found is None:
        raise _missing(p)
    return found


def require(argv: list[str] | tuple[str, ...]) -> None:
    """Check that ``argv[0]`` is installed if it is a registered program (by name or absolute
    path); anything else is not checked. Raises ProgramMissing (noted in the fault journal)."""
    if not argv:
        return
    head = str(argv[0])
    p = lookup(head)
    if p is None:
        return
    if head.startswith("/") and p.path is None:  # a PATH program given by its own path
        if not _executable(head):
            raise _missing(p, shown=head)
        return
    if p.locate() is None:
        raise _missing(p)


def missing(name: str) -> ProgramMissing:
    """The fault :func:`program` raises when the registered program ``name`` (its name, or its
    absolute path) is not installed, noted in the fault journal like it; for a stand-in host
    that removes programs (:meth:`ani.testing.FakeLab.uninstall`).

    Raises:
        HostFault: ``name`` is not in ``ani/host/packages.txt``.
    """
    p = lookup(name)
    if p is None:
        raise HostFault(f"program {name!r} is not registered in {PACKAGES_FILE}")
    return _missing(p)


def _missing(p: Program, shown: str | None = None) -> ProgramMissing:
    exc = ProgramMissing(shown or p.shown, p.package)
    note_fault(exc)
    return exc


# --- the fault journal ---------------------------------------------------------------------------

_journal: list[str] = []
_journal_lock = threading.Lock()


class FaultScope:
    """The host faults met by one run's code (see the module doc); made by :func:`fault_scope`.

    A fault noted in a scope is also noted in every scope enclosing it (a run's sub-scope is
    still the run's) and in the process journal. Thread-safe.
    """

    def __init__(self, parent: FaultScope | None = None) -> None:
        self.parent = parent
        self._causes: list[str] = []
        self._lock = threading.Lock()

    def note(self, cause: str) -> None:
        """Add ``cause`` here and in the enclosing scopes."""
        scope: FaultScope | None = self
        while scope is not None:
            with scope._lock:
                scope._causes.append(cause)
            scope = scope.parent

    def mark(self) -> int:
        """A position in this scope (pass it to :meth:`faults`)."""
        with self._lock:
            return len(self._causes)

    def faults(self, since: int = 0) -> list[str]:
        """The causes noted in this scope (since the position ``since``), each once, in order."""
        with self._lock:
            return list(dict.fromkeys(self._causes[since:]))


_scope: contextvars.ContextVar[FaultScope | None] = contextvars.ContextVar("ani_fault_scope", default=None)


@contextlib.contextmanager
def fault_scope() -> Iterator[FaultScope]:
    """A new fault scope for the code of this block (this thread, and the threads it starts
    through :mod:`ani.host.threads`); nested in the current one if there is one. The scope
    stays readable after the block (a thread of the run that outlives it still notes into it)."""
    scope = FaultScope(_scope.get())
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)


def current_fault_scope() -> FaultScope | None:
    """The fault scope of the code calling it, or None (outside every scope)."""
    return _scope.get()


def note_fault(exc: BaseException) -> None:
    """Record a host fault: in the current fault scope (and those enclosing it), in this
    process's journal and, if ``$ANI_HOST_FAULTS`` names a file, as a JSON line ``{"cause",
    "kind", "pid", "time"}`` appended to it. Never raises."""
    cause = str(exc)
    scope = _scope.get()
    if scope is not None:
        scope.note(cause)
    with _journal_lock:
        _journal.append(cause)
    path = os.environ.get(FAULT_LOG_ENV)
    if not path:
        return
    kind = "program_missing" if isinstance(exc, ProgramMissing) else "host"
    line = json.dumps({"cause": cause, "kind": kind, "pid": os.getpid(), "time": time.time()})
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except OSError:
        pass


def fault_mark() -> int:
    """A position in this process's fault journal (pass it to :func:`faults_since`). The
    journal is process-wide: with runs in threads of one process, use :func:`fault_scope`."""
    with _journal_lock:
        return len(_journal)


def faults_since(mark: int) -> list[str]:
    """The causes noted in this process (in any scope or none) since ``mark``, each once, in
    order."""
    with _journal_lock:
        return list(dict.fromkeys(_journal[mark:]))


def read_fault_log(path: str | Path) -> list[str]:
    """The causes in a fault log file (see :func:`note_fault`), each once; [] if there is none."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out: list[str] = []
    for line in text.splitlines():
        try:
            cause = json.loads(line).get("cause")
        except (ValueError, AttributeError):
            continue
        if isinstance(cause, str) and cause not in out:
            out.append(cause)
    return out
