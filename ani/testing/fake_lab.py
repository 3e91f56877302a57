"""A lab without namespaces, for unit tests of agents and adapters (no root, no FRR).

:class:`FakeLab` answers the part of :class:`ani.lab.Lab`'s contract that an adapter or an agent
reaching devices through ``lab.exec`` / ``lab.vtysh`` uses: ``id``, ``topology``, ``routers``,
``hosts``, ``exec``, ``vtysh``, ``vtysh_json``, ``running_config``, ``node_argv``, ``dead_daemons``,
``harness_faults``, ``wait_converged``, ``up`` / ``down`` (and ``with``): the whole of
:class:`ani.lab.protocol.Lab` (``tests/unit/test_lab_protocol.py`` checks it, signatures included),
none of its capabilities (NETCONF, SSH, local FRR daemons). Each router is an in-memory device
with a running configuration (a flat list of lines, starting from the topology's startup ``config``) and an FRR-like ``vtysh``:

- ``vtysh -c C1 -c C2 ...`` runs the commands in order and stops at the first that fails, with
  exit status 1 and ``% Unknown command: <C>`` on stdout (as FRR 8.4's vtysh does, measured);
- exec mode: ``show running-config`` (the configuration, with FRR's header), ``show version``,
  ``configure terminal`` (or ``configure``) to enter configuration mode, anything registered
  with :meth:`FakeLab.on`; anything else is an unknown command;
- configuration mode: ``end`` / ``exit`` leave it; ``no <line>`` removes the first line equal to
  ``<line>`` (leading spaces ignored; a line that is not there is silently accepted, as FRR does
  for most negations); a line matching one of the ``reject`` regexes fails; any other line is
  appended unless already there. There are no blocks: a line is a line.

Other argv (``lab.exec(node, ["ip", "-j", "addr"])``) are answered by :meth:`FakeLab.on`
responders (first match of an argv prefix), else exit status 127; ``nft list ruleset`` (and
``nft -s list ruleset``, ``nft -j list ruleset``) answers an empty ruleset until told otherwise. :meth:`FakeLab.uninstall`
removes a registered program from the fake host: from then on an ``exec`` of it raises the
:class:`~ani.errors.ProgramMissing` a real lab raises (noted in the fault journal, in the fault
scope of the code that ran it: :func:`ani.host.programs.fault_scope`). Every ``exec`` is recorded in
``lab.calls`` as ``(node, argv)`` (``lab.vtysh_calls``: the vtysh ones as ``(router, commands)``).
No program of the host runs inside a fake node: ``node_argv`` gives an argv that exits 127 saying
so. After ``down()`` every ``exec`` raises :class:`~ani.errors.LabGone`, as a removed real lab does.
Thread-safe.

Scripted answers and failures (test controls, none of them needed for the default behaviour):

- :meth:`FakeLab.on_vtysh` / :meth:`FakeLab.on_exec`: a function that answers a whole vtysh call
  (``fn(router, commands)``) or exec (``fn(node, argv)``) before anything else: it returns an
  :class:`~ani.lab.proc.ExecResult`, a string (stdout, exit 0) or None (not mine: the built-in
  answer), or raises (an :class:`~ani.errors.AniTimeout`, a :class:`~ani.errors.LabGone` ...), which
  the caller gets, as from a real lab's ``exec``;
- ``vtysh_json`` parses the answer as the real lab does (LabError when it is not JSON);
- :meth:`FakeLab.kill_daemon`: the router's daemon (one of the topology's ``daemons``) is dead
  (``dead_daemons``, ``daemon_pids``; the live ones have this process's pid unless
  :meth:`FakeLab.set_daemon_pid` says otherwise); :meth:`FakeLab.add_harness_fault`: what
  ``harness_faults()`` reports;
- ``running=False``: the lab is made down (``up()`` starts it), as ``Lab(...)`` before ``up()``;
  ``fail_up`` / ``fail_down``: the exception ``up()`` / ``down()`` raise (``down()`` after marking
  the lab gone, as a teardown that half failed); ``downs``: how many times ``down()`` ran;
- ``netconf=True``: the lab runs a (pretend) NETCONF server: ``netconf_endpoint(router)`` gives
  ``127.0.0.1``, port 830 + the router's index (``router_at_port`` maps it back), user and
  password ``ani``; without it ``netconf_endpoint`` raises LabError as a lab started with
  ``netconf=False`` does; :meth:`FakeLab.hold_lock` makes ``netconf_lock`` report a NETCONF
  session's lock.

    >>> lab = FakeLab(reject=[r"^bogus"])
    >>> lab.vtysh("r1", ["configure terminal", "ip route 192.0.2.0/24 Null0"]).rc
    0
    >>> "ip route 192.0.2.0/24 Null0" in lab.running_config("r1")
    True
    >>> r = lab.vtysh("r1", ["configure terminal", "bogus 1", "ip route 198.51.100.0/24 Null0"])
    >>> r.rc, r.stdout
    (1, '% Unknown command: bogus 1\\n')
    >>> lab.on(["ip", "-j", "addr"], stdout="[]")
    >>> lab.exec("h1", ["ip", "-j", "addr"]).stdout
    '[]'
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ani.errors import HostFault, LabError, LabGone, UnknownNode
from ani.host import programs
from ani.host.proc import ExecResult
from ani.lab.netconf import NetconfEndpoint, NetconfLock
from ani.lab.topology import Topology, load_topology, parse_topology
from ani.names import unknown

__all__ = ["DEFAULT_TOPOLOGY", "FRR_VERSION", "NETCONF_PORT", "FakeLab", "FakeRouter"]

#: what ``show version`` and the running configuration's header say
FRR_VERSION = "8.4.4-fake"

#: the default topology (a file's form): routers r1 -- r2 without routing daemons, host h1 behind r1;
#: a real :class:`ani.lab.Lab` runs it too, so one test can use both
DEFAULT_TOPOLOGY: dict[str, Any] = {
    "name": "fake",
    "routers": {
        "r1": {"config": "frr defaults traditional\nhostname r1\n!\ninterface eth-h1\n ip address 198.18.1.1/24\nexit\n"},
        "r2": {"config": "frr defaults traditional\nhostname r2\n"},
    },
    "hosts": {"h1": {"gateway": "198.18.1.1"}},
    "links": [
        {"a": {"node": "r1", "ifname": "eth-r2"}, "b": {"node": "r2", "ifname": "eth-r1"}},
        {"a": {"node": "r1", "ifname": "eth-h1"}, "b": {"node": "h1", "ifname": "eth0", "address": "198.18.1.10/24"}},
    ],
}
#: the program ``node_argv`` gives: nothing of the host runs inside a fake node
_NO_PROGRAM = ("import sys; sys.stderr.write(f'fake node {sys.argv[1]}: no program runs inside a FakeLab node\\n'); "
               "sys.exit(127)")
#: what ``nft -j list ruleset`` prints for an empty ruleset (nftables 1.0.6)
EMPTY_RULESET_JSON = ('{"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", '
                      '"json_schema_version": 1}}]}\n')
#: the first NETCONF port: router i of the topology listens on NETCONF_PORT + i
NETCONF_PORT = 830
#: a scripted answer (:meth:`FakeLab.on_vtysh`, :meth:`FakeLab.on_exec`)
Answer = Callable[[str, list[str]], "ExecResult | str | None"]
_SKIP = re.compile(r"^\s*(?:!.*|end|frr version .*|Building configuration\.\.\.|Current configuration:)?\s*$")


@dataclass
class _Responder:
    match: tuple[str, ...] | str
    result: ExecResult
    node: str | None


class FakeRouter:
    """One fake router: ``lines`` is its running configuration (what ``show running-config``
    prints between the header and ``end``)."""

    def __init__(self, name: str, config: str = "") -> None:
        self.name = name
        self.lines: list[str] = [ln.rstrip() for ln in config.splitlines() if not _SKIP.match(ln)]

    def render(self) -> str:
        """``show running-config`` text: FRR's header, the lines, ``end``."""
        body = "".join(f"{ln}\n" for ln in self.lines)
        return f"Building configuration...\n\nCurrent configuration:\n!\nfrr version {FRR_VERSION}\n{body}!\nend\n"


class FakeLab:
    """A lab of fake routers (see the module doc).

    Args:
        topology: a :class:`~ani.lab.topology.Topology`, a topology / scenario file path, a
            mapping in the file's form, or None (routers r1 -- r2, host h1 behind r1).
        reject: regexes (searched in a configuration line) of lines the routers refuse.
        lab_id: the lab's id (default ``fake`` + 6 hex digits).
        running: False: made down, as a real lab before ``up()`` (default: running).
        fail_up: an exception ``up()`` raises (the lab stays down).
        fail_down: an exception ``down()`` raises (after the lab is gone).
        netconf: the lab has a NETCONF server (``netconf_endpoint``; module doc).

    Raises:
        TopologyError: a bad topology (names the field).
    """

    def __init__(self, topology: Topology | str | Path | dict[str, Any] | None = None, *,
                 reject: Iterable[str] = (), lab_id: str | None = None, running: bool = True,
                 fail_up: BaseException | None = None, fail_down: BaseException | None = None,
                 netconf: bool = False) -> None:
        if topology is None:
            topology = parse_topology(DEFAULT_TOPOLOGY, source="FakeLab default")
        elif isinstance(topology, dict):
            topology = parse_topology(topology, source="FakeLab topology")
        elif not isinstance(topology, Topology):
            topology = load_topology(topology)
        self.topology: Topology = topology
        self.id = lab_id or "fake" + secrets.token_hex(3)
        self.reject = [re.compile(p) for p in reject]
        self.devices: dict[str, FakeRouter] = {r: FakeRouter(r, spec.config or "")
                                               for r, spec in topology.routers.items()}
        #: every ``exec``: ``(node, argv)``
        self.calls: list[tuple[str, list[str]]] = []
        self.running = running
        self.fail_up, self.fail_down, self.netconf = fail_up, fail_down, netconf
        #: how many times ``down()`` ran
        self.downs = 0
        #: what ``harness_faults()`` reports (:meth:`add_harness_fault`, or a test appends)
        self.host_faults: list[str] = []
        self._responders: list[_Responder] = []
        self._answers: list[tuple[str, str | None, Answer]] = []
        self._uninstalled: set[str] = set()
        self._dead: dict[str, set[str]] = {}
        self._pids: dict[str, dict[str, int]] = {}
        self._locks: dict[tuple[str, str], NetconfLock] = {}
        self._lock = threading.RLock()
        for argv in (("nft", "-s", "list", "ruleset"), ("nft", "list", "ruleset")):  # an empty ruleset
            self.on(argv)
        self.on(("nft", "-j", "list", "ruleset"), stdout=EMPTY_RULESET_JSON)

    def __repr__(self) -> str:
        return f"FakeLab(id={self.id!r}, routers={self.routers})"

    # -- the Lab contract ---------------------------------------------------------------------

    @property
    def routers(self) -> list[str]:
        return list(self.topology.routers)

    @property
    def hosts(self) -> list[str]:
        return list(self.topology.hosts)

    def up(self) -> FakeLab:
        """Start the lab (again). Raises ``fail_up`` if given (the lab stays down)."""
        if self.fail_up is not None:
            raise self.fail_up
        self.running = True
        return self

    def down(self) -> None:
        """From now on every ``exec`` raises LabGone (the configurations are kept). Raises
        ``fail_down`` if given (the lab is gone all the same)."""
        self.running = False
        self.downs += 1
        if self.fail_down is not None:
            raise self.fail_down

    def __enter__(self) -> FakeLab:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()

    def wait_converged(self, timeout_s: float | None = None) -> None:
        """Fake routers have no routing to converge."""

    def dead_daemons(self, router: str) -> list[str]:
        """The daemons of ``router`` killed with :meth:`kill_daemon`, sorted ([] until then).
        Raises UnknownNode."""
        self._check(router)
        with self._lock:
            return sorted(self._dead.get(router, ()))

    def daemon_pids(self, router: str) -> dict[str, int]:
        """``{daemon: pid}`` of ``router``'s daemons that run (the topology's ``daemons`` but the
        killed ones), sorted by name. The pid is this test process's own (a live process whose
        ``/proc`` can be read) unless :meth:`set_daemon_pid` gave another. Raises UnknownNode
        (also for a host)."""
        spec = self._router(router)
        with self._lock:
            dead, pids = self._dead.get(router, set()), self._pids.get(router, {})
            return {d: pids.get(d, os.getpid()) for d in sorted(spec.daemons) if d not in dead}

    def netconf_endpoint(self, router: str) -> NetconfEndpoint:
        """``router``'s pretend NETCONF endpoint (module doc). Raises UnknownNode, LabError (made
        without ``netconf=True``)."""
        self._router(router)
        if not self.netconf:
            raise LabError(f"lab {self.id} has no NETCONF server for {router!r} (started with netconf=False?)")
        return NetconfEndpoint("127.0.0.1", NETCONF_PORT + self.routers.index(router), "ani", "ani",
                               credential="the fake lab")

    def netconf_lock(self, router: str, target: str = "running") -> NetconfLock | None:
        """The lock :meth:`hold_lock` put on ``router``'s ``target`` datastore, or None.
        Raises UnknownNode."""
        self._router(router)
        with self._lock:
            return self._locks.get((router, target))

    def harness_faults(self) -> list[str]:
        """A copy of ``host_faults``: what :meth:`add_harness_fault` (or a test appending to it)
        added, in order ([] when all is well)."""
        with self._lock:
            return list(self.host_faults)

    def node_argv(self, node: str, argv: list[str]) -> list[str]:
        """An argv that runs nothing of ``argv``: it exits 127 saying that no program runs inside a
        fake node (a caller running it itself, e.g. A1's local session, meets that). Raises
        UnknownNode."""
        self._check(node)
        return [sys.executable, "-c", _NO_PROGRAM, node, *argv]

    def exec(self, node: str, argv: Sequence[str], timeout: float = 10.0,
             input: str | bytes | None = None) -> ExecResult:  # noqa: A002 - the Lab's signature
        """Run ``argv`` on ``node`` (module doc). Raises UnknownNode, LabGone (after ``down()``)."""
        argv = [str(a) for a in argv]
        with self._lock:
            self._check(node)
            if not self.running:
                raise LabGone(self.id, "the fake lab was downed")
            gone = programs.lookup(argv[0]) if argv and self._uninstalled else None
            if gone is not None and gone.name in self._uninstalled:
                raise programs.missing(gone.name)  # before the command runs, as Lab.exec's check
            self.calls.append((node, list(argv)))
            answers = list(self._answers)
        is_vtysh = bool(argv) and Path(argv[0]).name == "vtysh" and node in self.devices
        # scripted answers run outside the lock: they may take time or exec again (at once, as a real lab's)
        scripted = _scripted(answers, node, "vtysh" if is_vtysh else "exec",
                             _commands(argv[1:]) if is_vtysh else list(argv))
        if scripted is not None:
            return scripted
        with self._lock:
            if is_vtysh:
                return self._vtysh(node, argv[1:])
            hit = self._responder(node, tuple(argv))
            if hit is not None:
                return hit
            return ExecResult(127, "", f"sh: 1: {argv[0] if argv else ''}: not found\n", False, 0.0)

    def vtysh(self, router: str, commands: list[str] | str, timeout: float = 10.0) -> ExecResult:
        """``vtysh -c c1 -c c2 ...`` on ``router``. Raises UnknownNode (also for a host), LabGone."""
        if router not in self.devices:
            self._check(router)
            raise UnknownNode(f"lab {self.id}: {router!r} is a host, not a router")
        cmds = [commands] if isinstance(commands, str) else list(commands)
        argv = ["vtysh"]
        for c in cmds:
            argv += ["-c", c]
        return self.exec(router, argv, timeout=timeout)

    def vtysh_json(self, router: str, command: str, timeout: float = 10.0) -> dict | list:
        """``command`` (``json`` appended if missing) through :meth:`vtysh`, parsed (register its
        answer with :meth:`on`). Raises UnknownNode, LabGone, LabError (the command failed or
        gave no JSON), as :meth:`ani.lab.lab.Lab.vtysh_json`."""
        from ani.lab.protocol import vtysh_json

        return vtysh_json(self, router, command, timeout)

    def running_config(self, router: str, timeout: float = 10.0) -> str:
        """``show running-config`` of ``router``, read out of band (not recorded in ``calls``)."""
        with self._lock:
            if router not in self.devices:
                self._check(router)
                raise UnknownNode(f"lab {self.id}: {router!r} is a host, not a router")
            if not self.running:
                raise LabGone(self.id, "the fake lab was downed")
            return self.devices[router].render()

    # -- test controls ------------------------------------------------------------------------

    def config(self, router: str) -> list[str]:
        """A copy of ``router``'s configuration lines."""
        with self._lock:
            return list(self.devices[router].lines)

    def set_config(self, router: str, text: str) -> None:
        """Replace ``router``'s running configuration with ``text`` (``show running-config``'s
        form or a startup file's; as a reload would). Raises UnknownNode (also for a host)."""
        self._router(router)
        with self._lock:
            self.devices[router] = FakeRouter(router, text)

    def on(self, command: str | Sequence[str], *, stdout: str = "", stderr: str = "", rc: int = 0,
           timed_out: bool = False, node: str | None = None) -> None:
        """Answer a command: a string is a vtysh command (exact, spaces collapsed), a sequence an
        argv prefix of ``exec``; ``node`` limits it to one node. Later registrations win.
        ``timed_out=True`` gives what a command killed by its timeout gives (rc -9)."""
        match: tuple[str, ...] | str = " ".join(command.split()) if isinstance(command, str) else tuple(command)
        res = ExecResult(-9 if timed_out else rc, stdout, stderr, timed_out, 0.0)
        with self._lock:
            self._responders.insert(0, _Responder(match, res, node))

    def uninstall(self, program: str) -> None:
        """Remove the registered program ``program`` (``"ping"``, ``"vtysh"``) from this lab's
        host: every later ``exec`` of it raises ProgramMissing (module doc). Raises HostFault if
        it is not in ``ani/host/packages.txt``."""
        p = programs.lookup(program)
        if p is None:
            raise HostFault(f"program {program!r} is not registered in {programs.PACKAGES_FILE}")
        with self._lock:
            self._uninstalled.add(p.name)

    def on_vtysh(self, fn: Answer, *, node: str | None = None) -> None:
        """Answer whole vtysh calls with ``fn(router, commands)`` first (module doc); ``node``
        limits it to one router. Later registrations are asked first."""
        with self._lock:
            self._answers.insert(0, ("vtysh", node, fn))

    def on_exec(self, fn: Answer, *, node: str | None = None) -> None:
        """Answer every other ``exec`` with ``fn(node, argv)`` first (module doc)."""
        with self._lock:
            self._answers.insert(0, ("exec", node, fn))

    @property
    def vtysh_calls(self) -> list[tuple[str, list[str]]]:
        """Every vtysh call so far, as ``(router, commands)``."""
        with self._lock:
            return [(n, _commands(a[1:])) for n, a in self.calls
                    if a and Path(a[0]).name == "vtysh" and n in self.devices]

    def kill_daemon(self, router: str, daemon: str) -> None:
        """``router``'s ``daemon`` is dead from now on (``dead_daemons``). Raises UnknownNode,
        LabError (not one of the router's daemons)."""
        self._daemon(router, daemon)
        with self._lock:
            self._dead.setdefault(router, set()).add(daemon)

    def set_daemon_pid(self, router: str, daemon: str, pid: int) -> None:
        """``daemon_pids`` gives ``pid`` for ``router``'s ``daemon`` (e.g. a stopped child
        process, as a frozen daemon). Raises UnknownNode, LabError (not one of its daemons)."""
        self._daemon(router, daemon)
        with self._lock:
            self._pids.setdefault(router, {})[daemon] = int(pid)

    def add_harness_fault(self, text: str) -> None:
        """Report ``text`` from ``harness_faults()`` (a fault of the lab's own helpers)."""
        with self._lock:
            self.host_faults.append(text)

    def hold_lock(self, router: str, session_id: int, target: str = "running") -> None:
        """A NETCONF session ``session_id`` holds the lock on ``router``'s ``target`` datastore."""
        self._router(router)
        with self._lock:
            self._locks[(router, target)] = NetconfLock(router, target, session_id, 1764430000.0, 4400)

    def router_at_port(self, port: int) -> str:
        """The router whose pretend NETCONF endpoint has ``port``. Raises UnknownNode."""
        i = port - NETCONF_PORT
        if not 0 <= i < len(self.routers):
            raise UnknownNode(f"lab {self.id}: no router at NETCONF port {port}")
        return self.routers[i]

    # -- internals ----------------------------------------------------------------------------

    def _router(self, router: str) -> Any:
        if router not in self.topology.routers:
            self._check(router)
            raise UnknownNode(f"lab {self.id}: {router!r} is a host, not a router")
        return self.topology.routers[router]

    def _daemon(self, router: str, daemon: str) -> None:
        spec = self._router(router)
        if daemon not in spec.daemons:
            raise LabError(f"{router}: {daemon} is not one of its daemons ({', '.join(spec.daemons)})")

    def _check(self, node: str) -> None:
        if node not in self.topology.routers and node not in self.topology.hosts:
            raise UnknownNode(f"lab {self.id}: " + unknown("node", node, self.topology.nodes))

    def _responder(self, node: str, key: tuple[str, ...] | str) -> ExecResult | None:
        for r in self._responders:
            if r.node not in (None, node):
                continue
            if isinstance(key, str) and r.match == key:
                return r.result
            if isinstance(key, tuple) and isinstance(r.match, tuple) and key[:len(r.match)] == r.match:
                return r.result
        return None

    def _vtysh(self, router: str, args: list[str]) -> ExecResult:
        cmds = _commands(args)
        dev = self.devices[router]
        out: list[str] = []
        config_mode = False
        for raw in cmds:
            cmd = " ".join(raw.split())
            if config_mode:
                if cmd in ("end", "exit"):
                    config_mode = False
                    continue
                if any(p.search(cmd) for p in self.reject):
                    return self._failed(out, cmd)
                if cmd.startswith("no "):
                    target = cmd[3:]
                    for i, ln in enumerate(dev.lines):
                        if ln.strip() == target:
                            del dev.lines[i]
                            break
                elif cmd not in (ln.strip() for ln in dev.lines):
                    dev.lines.append(cmd)
                continue
            hit = self._responder(router, cmd)
            if hit is not None:
                out.append(hit.stdout)
                if not hit.ok:
                    return ExecResult(hit.rc, "".join(out), hit.stderr, hit.timed_out, 0.0)
            elif cmd in ("configure terminal", "configure"):
                config_mode = True
            elif cmd == "show running-config":
                out.append(dev.render())
            elif cmd == "show version":
                out.append(f"FRRouting {FRR_VERSION} ({router}).\nuptime: 0 days (fake)\n")
            elif cmd not in ("end", "exit"):
                return self._failed(out, cmd)
        return ExecResult(0, "".join(out), "", False, 0.0)

    @staticmethod
    def _failed(out: list[str], cmd: str) -> ExecResult:
        out.append(f"% Unknown command: {cmd}\n")
        return ExecResult(1, "".join(out), "", False, 0.0)


def _commands(args: list[str]) -> list[str]:
    """The ``-c`` commands of a vtysh argv's arguments, in order."""
    cmds: list[str] = []
    it = iter(args)
    for a in it:
        if a == "-c":
            cmds.append(next(it, ""))
    return cmds


def _scripted(answers: list[tuple[str, str | None, Answer]], node: str, kind: str,
              args: list[str]) -> ExecResult | None:
    """The first scripted answer (:meth:`FakeLab.on_vtysh` / :meth:`FakeLab.on_exec`) that
    answers, as an ExecResult; None when none does."""
    for k, only, fn in answers:
        if k != kind or only not in (None, node):
            continue
        got = fn(node, args)
        if got is not None:
            return ExecResult(0, got, "", False, 0.0) if isinstance(got, str) else got
    return None
