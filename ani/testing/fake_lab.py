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
``nft -s list ruleset``) answers an empty ruleset until told otherwise; a vtysh responder
answers ``vtysh_json`` too (a responder's ``stdout`` is the JSON). :meth:`FakeLab.uninstall`
removes a registered program from the fake host: from then on an ``exec`` of it raises the
:class:`~ani.errors.ProgramMissing` a real lab raises (noted in the fault journal, in the fault
scope of the code that ran it: :func:`ani.host.programs.fault_scope`). Every ``exec`` is recorded in
``lab.calls`` as ``(node, argv)``. No program of the host runs inside a fake node: ``node_argv``
gives an argv that exits 127 saying so. ``harness_faults()`` gives ``lab.host_faults`` (a test
appends what its lab's helpers met). After ``down()`` every ``exec`` raises
:class:`~ani.errors.LabGone`, as a removed real lab does. Thread-safe.

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

import json
import re
import secrets
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ani.errors import HostFault, LabError, LabGone, UnknownNode
from ani.host import programs
from ani.host.proc import ExecResult
from ani.lab.topology import Topology, load_topology, parse_topology
from ani.names import unknown

__all__ = ["DEFAULT_TOPOLOGY", "FRR_VERSION", "FakeLab", "FakeRouter"]

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

    Raises:
        TopologyError: a bad topology (names the field).
    """

    def __init__(self, topology: Topology | str | Path | dict[str, Any] | None = None, *,
                 reject: Iterable[str] = (), lab_id: str | None = None) -> None:
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
        self.running = True
        #: what ``harness_faults()`` reports (a test appends messages)
        self.host_faults: list[str] = []
        self._responders: list[_Responder] = []
        self._uninstalled: set[str] = set()
        self._lock = threading.RLock()
        for argv in (("nft", "-s", "list", "ruleset"), ("nft", "list", "ruleset")):  # an empty ruleset
            self.on(argv)

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
        self.running = True
        return self

    def down(self) -> None:
        """From now on every ``exec`` raises LabGone (the configurations are kept)."""
        self.running = False

    def __enter__(self) -> FakeLab:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()

    def wait_converged(self, timeout_s: float | None = None) -> None:
        """Fake routers have no routing to converge."""

    def dead_daemons(self, router: str) -> list[str]:
        """Fake routers have no daemons to die: always []."""
        self._check(router)
        return []

    def harness_faults(self) -> list[str]:
        """A copy of ``host_faults`` (a test's own entries; [] by default)."""
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
            if argv and Path(argv[0]).name == "vtysh" and node in self.devices:
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
        if not command.rstrip().endswith("json"):
            command = command.rstrip() + " json"
        res = self.vtysh(router, command, timeout=timeout)
        text = res.stdout.strip()
        try:
            if not res.ok:
                raise ValueError
            return json.loads(text)
        except ValueError:
            why = "timed out" if res.timed_out else f"exit {res.rc}"
            raise LabError(f"{router}: {command!r} ({why}) gave no JSON: {(text or res.stderr.strip())[:500]}") from None

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

    # -- internals ----------------------------------------------------------------------------

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
        cmds: list[str] = []
        it = iter(args)
        for a in it:
            if a == "-c":
                cmds.append(next(it, ""))
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
