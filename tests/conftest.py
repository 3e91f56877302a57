"""Shared fixtures.

* ``make_lab(topology_or_path, **kw) -> Lab``: a factory returning a lab that is up (converged);
  every lab it made is downed at teardown, also when the test failed. ``kw`` goes to ``Lab``
  (``lab_id``, ``detached``, ``netconf``).
* ``level_servers(level, options=None) -> {"netconf": bool, "ssh": bool}``: the servers a lab
  needs for an adapter of ``level`` (its ``lab_needs``, as a campaign run's lab is started:
  ``ani.lab.protocol.servers_for``); for ``make_lab(topology, **level_servers(level))`` in tests
  that start one lab per level.
* ``module_lab``: ONE lab for a whole test module, up (converged), downed at the end of the
  module (also when a test or ``up()`` failed). The module says which, with module attributes:
  ``LAB_TOPOLOGY`` (a path or a Topology), ``LAB_PREFIX`` (a short ``[a-z0-9]`` tag; the lab id is
  the tag plus 6 random hex digits, so ids are unique per module and per run) and optionally
  ``LAB_NETCONF`` (start the lab's NETCONF server; default True) and ``LAB_SSH`` (its SSH
  server; default False: the tests of A1 over SSH, the inventory and the SSH server itself say
  True). Both are also ``make_lab``'s defaults in that module (a ``make_lab(..., netconf=,
  ssh=)`` argument wins): a server costs some 0.7 (NETCONF) / 0.25 (SSH) s of CPU per lab, and
  in a suite run 8 of 317 test labs started with an SSH server opened a session on it (74 of
  244 on their NETCONF server). A module usually renames it::

      LAB_TOPOLOGY, LAB_PREFIX = ROOT / "scenarios" / "brownfield-small.yaml", "h2a"

      @pytest.fixture(scope="module")
      def lab(module_lab):
          return module_lab

* ``tri_lab``: one session-wide lab of ``tests/data/tri-ospf-ibgp.yaml`` (r1 route reflector, r2, r3,
  hosts h1 behind r2 and h2 behind r3). Read-only: tests that change a lab make their own.
* ``TRI``: path of that topology file.
* ``open_adapter(adapter) -> adapter``: opens an adapter, closes it at teardown.
* ``run_doc_example(doc, marker, timeout=240) -> stdout``: runs the ```python block that follows
  ``<!-- example:MARKER -->`` in ``docs/DOC`` as a script from the repository root, with its own
  empty ``TMPDIR``; fails the test (with the end of its stderr) unless it exits 0 and leaves that
  directory empty (two examples left a ``/tmp/tmp*`` per run).

* ``lab_host``: skips the test unless this host can run labs (for tests that start labs
  through the CLI or the campaign runner rather than through the fixtures above).
* ``no_mcp_server_left``: after the test, no ``ani mcp serve`` process of ``module_lab`` runs.
* ``stop_before_lab``: ``ani run`` / campaign specs stop at ``runner.validate`` (the last step
  before a lab starts); the fixture's value is the list of specs that reached it.
* ``server``: a fake chat-completions server on 127.0.0.1 (``tests/chat_server.py``), closed
  at teardown; a module may define its own ``server`` (e.g. with a responder).

Tests that send SIGINT to an ``ani`` command expect Ctrl-C's default: a suite started where SIGINT
is ignored (``cmd &`` from a script, some CI runners) would pass that on to every child, so
:func:`pytest_configure` restores Python's handler first.

Tests that need root + FRR + namespaces carry the ``integration`` marker; the fixtures skip
them with the reason if the host lacks a capability (never on the project's test machine).
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

# the MCP client binds ``errlog=sys.stderr`` as a default argument when ``mcp`` is first
# imported: imported inside a CliRunner.invoke (an in-process `ani mcp serve` test), it kept
# CliRunner's stream, and every later stdio client in that worker failed with
# "UnsupportedOperation: fileno". Imported here, it binds the session's real stderr.
import mcp  # noqa: F401,E402

from ani.errors import CapabilityMissing

ROOT = Path(__file__).parent.parent


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` hands out the longest test file first (``tests/file_order.py``)."""
    if config.getoption("dist", "no") != "loadfile":
        return None
    from file_order import LongestFileFirst

    return LongestFileFirst(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """Before xdist starts its workers: pytest's assertion-rewrite cache of every test file,
    written once on every core, which each worker then reads instead of rewriting the whole suite
    itself where no process writes bytecode (``tests/rewrite_cache.py``)."""
    from rewrite_cache import build

    build(session.config)


#: the directories this session made for its environment variables (removed with it):
#: ``{variable: directory}``, see pytest_unconfigure
_OWN_DIRS = pytest.StashKey[dict[str, str]]()
#: the session's own directory for each variable: the results-folder registry
#: (ani.host.results_dirs; runs started by tests never write the machine's /var/lib/ani) and the
#: vtysh output its labs share (ani.host.vtysh_cache: a test's fresh lab reads the running config
#: an earlier lab of the same topology printed, and frr-reload marks a text marked before, with no
#: vtysh)
SESSION_DIRS = {"ANI_STATE_DIR": "ani-test-state-", "ANI_VTYSH_CACHE": "ani-test-vtysh-"}


def pytest_configure(config: pytest.Config) -> None:
    # an ignored SIGINT survives exec: every ani command a test starts would ignore Ctrl-C
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # likewise SIGHUP under nohup: ani keeps an ignored SIGHUP ignored (ani.lab.cleanup), so the
    # tests of what SIGHUP does would see a suite started with nohup ignore it
    if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
    # SESSION_DIRS: made here, under /tmp, unless the variable is set (xdist's workers inherit it)
    import tempfile

    from ani.host.proc import start_time

    made = config.stash.setdefault(_OWN_DIRS, {})
    for var, prefix in SESSION_DIRS.items():
        if not os.environ.get(var):
            _remove_dirs_of_dead_sessions(prefix)
            owner = f"{os.getpid()}.{start_time(os.getpid())}-"
            os.environ[var] = made[var] = tempfile.mkdtemp(prefix=prefix + owner)


def _remove_dirs_of_dead_sessions(prefix: str) -> None:
    """The ``<prefix><pid>.<start time>-*`` directories in the temporary directory whose session
    is gone without its pytest_unconfigure (killed: SIGTERM, SIGKILL); a live session's stay."""
    import shutil
    import tempfile

    from ani.host.proc import is_alive

    for d in Path(tempfile.gettempdir()).glob(prefix + "*.*-*"):
        owner = d.name[len(prefix):].split("-", 1)[0]
        pid, _, started = owner.partition(".")
        if pid.isdigit() and started.isdigit() and not is_alive(int(pid), int(started)):
            shutil.rmtree(d, ignore_errors=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The session's directories go with the session that made them (every ``make test`` left an
    ``ani-test-state-*`` directory in /tmp before); a session killed before this runs leaves them
    to the next session's pytest_configure (named by its PID and start time)."""
    import shutil

    for var, path in config.stash.get(_OWN_DIRS, {}).items():
        shutil.rmtree(path, ignore_errors=True)
        if os.environ.get(var) == path:
            del os.environ[var]


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything collection made (the test modules, ani, their libraries) moved out of the
    garbage collector's sight (``gc.freeze``): a worker's full collections then scan only what
    the tests make, not the whole imported suite again and again."""
    import gc

    gc.collect()
    gc.freeze()


DATA = Path(__file__).parent / "data"
TRI = DATA / "tri-ospf-ibgp.yaml"


def _require_lab_host() -> None:
    from ani.lab.capability import check_capabilities

    try:
        check_capabilities()
    except CapabilityMissing as exc:
        pytest.skip(f"lab unavailable on this host: {exc}")


def level_servers(level: str, options: dict | None = None) -> dict[str, bool]:
    """``{"netconf": bool, "ssh": bool}`` for a lab serving an adapter of ``level`` (module doc);
    every server when the adapter class does not declare what it needs."""
    from ani.lab.protocol import servers_for
    from ani.registry import get_adapter_class

    needs = get_adapter_class(level).lab_needs(options)
    return {"netconf": True, "ssh": True} if needs is None else servers_for(needs)


@contextmanager
def _owned_labs(module: Any = None) -> Iterator[Callable[..., Any]]:
    """A factory ``(topology_or_path, **kw) -> Lab`` (up); every lab it created, even one whose
    ``up()`` failed, is downed on exit. A teardown failure fails the test unless an error is
    already on its way out. ``netconf`` / ``ssh`` default to ``module``'s ``LAB_NETCONF`` /
    ``LAB_SSH`` (True / False without them)."""
    from ani.lab.lab import Lab

    _require_lab_host()
    labs: list[Lab] = []
    defaults = {"netconf": getattr(module, "LAB_NETCONF", True), "ssh": getattr(module, "LAB_SSH", False)}

    def factory(topology_or_path, **kw) -> Lab:  # type: ignore[no-untyped-def]
        lab = Lab(topology_or_path, **{**defaults, **kw})
        labs.append(lab)
        return lab.up()

    errors: list[str] = []
    try:
        yield factory
    finally:
        for lab in reversed(labs):
            try:
                lab.down()
            except Exception as exc:  # noqa: BLE001 - down every lab, then report
                errors.append(f"{lab.id}: {exc}")
    assert not errors, f"lab teardown failed: {errors}"


@pytest.fixture
def make_lab(request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    with _owned_labs(request.module) as factory:
        yield factory


@pytest.fixture(scope="module")
def module_lab(request: pytest.FixtureRequest) -> Iterator[Any]:
    mod = request.module
    with _owned_labs(mod) as factory:
        yield factory(mod.LAB_TOPOLOGY, lab_id=mod.LAB_PREFIX + secrets.token_hex(3))


@pytest.fixture(scope="session")
def tri_lab() -> Iterator[Any]:
    with _owned_labs() as factory:
        yield factory(TRI, netconf=True, ssh=True)  # one per worker: every test may use either


@pytest.fixture
def open_adapter() -> Iterator[Callable[[Any], Any]]:
    opened: list[Any] = []

    def open_(adapter: Any) -> Any:
        adapter.open()
        opened.append(adapter)
        return adapter

    yield open_
    for adapter in reversed(opened):
        adapter.close()


@pytest.fixture
def run_doc_example(tmp_path: Path) -> Callable[..., str]:
    def run(doc: str, marker: str, timeout: float = 240) -> str:
        text = (ROOT / "docs" / doc).read_text()
        m = re.search(rf"<!-- example:{re.escape(marker)} -->\s*```python\n(.*?)\n```", text, re.S)
        assert m, f"no example:{marker} block in docs/{doc}"
        script = tmp_path / f"example_{marker.replace(':', '_')}.py"
        script.write_text(m.group(1))
        scratch = tmp_path / f"tmp_{marker.replace(':', '_')}"  # the example's TMPDIR: it must leave it empty
        scratch.mkdir()
        proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout, env={**os.environ, "TMPDIR": str(scratch)})
        assert proc.returncode == 0, proc.stderr[-3000:]
        left = sorted(p.name for p in scratch.iterdir())
        assert left == [], f"the example left temporary files: {left}"
        return proc.stdout

    return run


@pytest.fixture
def lab_host() -> None:
    _require_lab_host()


@pytest.fixture
def no_mcp_server_left(module_lab: Any) -> Iterator[None]:
    """After the test, no ``ani mcp serve`` process of the module's lab is running (a module of
    MCP tests: ``pytestmark = pytest.mark.usefixtures("no_mcp_server_left")``)."""
    yield
    from procs import mcp_server_pids

    assert mcp_server_pids(module_lab.id) == [], "an ani mcp serve process of this lab is still running"


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    from chat_server import ChatServer

    s = ChatServer()
    yield s
    s.close()


@pytest.fixture
def stop_before_lab(monkeypatch) -> list[Any]:
    """Specs that reached ``ani.campaign.runner.validate``; the run stops there (an AniError,
    so the command exits 2 with the message 'stopped before the lab (test)')."""
    import ani.campaign.runner as runner
    from ani.errors import AniError

    got: list[Any] = []

    def validate(spec: Any, deps: Any) -> None:
        got.append(spec)
        raise AniError("stopped before the lab (test)")

    monkeypatch.setattr(runner, "validate", validate)
    return got
