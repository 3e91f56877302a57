"""The substrate seam: what the rest of ani may ask of a lab, written down.

:class:`Lab` is the contract every consumer of a lab (adapters, fault kinds, the observer, the
campaign runner, NetConfBench) relies on: the namespaces lab :class:`ani.lab.lab.Lab` and the
unit tests' :class:`ani.testing.FakeLab` both satisfy it (``tests/unit/test_lab_protocol.py``
compares every member, signatures included). What only some substrates offer is a *capability*,
a protocol of its own; a consumer that needs one declares it with :func:`require` (or asks
:func:`provides` where it has a fallback) instead of probing with ``getattr``:

=======================  ============================================  =========================
capability               members                                       who has it
=======================  ============================================  =========================
:class:`Devices`         ``id``, ``topology``, ``routers``, ``vtysh``  every lab, an inventory
:class:`Lab`             + ``hosts``, ``exec``, ``vtysh_json``, ...    namespaces lab, FakeLab
:class:`NetconfCapable`  ``netconf_endpoint``                          namespaces lab, inventory
:class:`NetconfLocks`    ``netconf_lock``                              namespaces lab
:class:`NetconfServer`   both, + ``netconf``, freezing                 namespaces lab
:class:`SshCapable`      ``ssh_endpoint``                              namespaces lab, inventory
:class:`LabFiles`        ``dir``                                       namespaces lab
:class:`LocalFrr`        + ``netns``, ``pathspace``, daemons           namespaces lab
=======================  ============================================  =========================

The servers a namespaces lab starts follow the same declarations: an adapter class and a fault
kind list the capabilities they need (``needs``; :meth:`ani.adapters.base.BaseAdapter.lab_needs`,
:meth:`ani.faults.base.FaultKind.lab_needs`), and :func:`servers_for` turns them into the lab's
``netconf=`` / ``ssh=`` (a campaign run's lab: :func:`ani.campaign.execute.lab_options`).

Names: a *node* is a router or a host of ``topology``; a *router* runs FRR. Every method taking
one raises :class:`~ani.errors.UnknownNode` for a name the lab does not have (a host where a
router is needed too). Times are seconds. Nothing here imports a substrate: lower layers
annotate with these names under ``if TYPE_CHECKING:`` only.

    >>> from ani.testing import FakeLab
    >>> lab = require(FakeLab(), Lab, "the observer")
    >>> provides(lab, LocalFrr)
    False
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from ani.errors import CapabilityMissing, LabError

if TYPE_CHECKING:
    from ani.lab.netconf import NetconfEndpoint, NetconfLock
    from ani.lab.proc import ExecResult
    from ani.lab.ssh import SshEndpoint
    from ani.lab.topology import Topology

__all__ = ["CAPABILITIES", "vtysh_json", "Devices", "Lab", "LabFiles", "LocalFrr", "NetconfCapable", "NetconfLocks", "NetconfServer",
           "SshCapable", "lacking", "members", "missing", "provides", "require", "servers_for"]

L = TypeVar("L")


@runtime_checkable
class Devices(Protocol):
    """Routers reached by their CLI: the least a target of an adapter is (a lab, or an
    :class:`ani.inventory.Inventory` of real devices)."""

    #: the lab's id (``[a-z0-9]{1,12}`` for a namespaces lab; ``inventory:<file>`` for devices)
    id: str
    #: the topology (:class:`ani.lab.topology.Topology`; an inventory gives the same fields:
    #: ``name``, ``routers``, ``hosts``, ``links``, ``aliases``, ``nodes``)
    topology: Topology

    @property
    def routers(self) -> list[str]:
        """The routers' names, in the topology's order."""
        ...

    def vtysh(self, router: str, commands: list[str] | str, timeout: float = 10.0) -> ExecResult:
        """``vtysh -c c1 -c c2 ...`` on ``router``'s FRR (and no other), bounded by ``timeout``
        seconds; vtysh stops at the first failing command. A failing command is no exception
        (``ExecResult.rc``). Raises UnknownNode, LabGone (the lab was removed), ProgramMissing."""
        ...


@runtime_checkable
class Lab(Devices, Protocol):
    """A running lab: routers and hosts one can run programs in, read, and take up and down."""

    @property
    def hosts(self) -> list[str]:
        """The hosts' names (nodes without FRR), in the topology's order."""
        ...

    def exec(self, node: str, argv: list[str], timeout: float = 10.0,
             input: str | bytes | None = None) -> ExecResult:  # noqa: A002 - the field's name
        """Run ``argv`` inside ``node`` (its network namespace; ``hostname`` prints the node's
        name; plain ``vtysh`` reaches its FRR only), ``input`` on stdin; after ``timeout`` seconds
        its process group is killed (``timed_out``). Returns ``ExecResult(rc, stdout, stderr,
        timed_out, elapsed_s)``; a failing command is no exception. Raises UnknownNode, LabGone,
        ProgramMissing (``argv[0]`` a registered program not installed)."""
        ...

    def vtysh_json(self, router: str, command: str, timeout: float = 10.0) -> dict | list:
        """A ``show ... json`` command (``json`` appended if missing), parsed: the top-level JSON
        value (dict or list, as the command gives). Raises UnknownNode, LabError (vtysh failed or
        timed out, or no JSON; the message carries vtysh's text)."""
        ...

    def running_config(self, router: str, timeout: float = 10.0) -> str:
        """``show running-config`` of ``router`` (text with FRR's header). Raises UnknownNode,
        ReadError / ReadTimeout (:mod:`ani.device.outcome`)."""
        ...

    def node_argv(self, node: str, argv: list[str]) -> list[str]:
        """A host-side argv that runs ``argv`` inside ``node`` as :meth:`exec` does (for a caller
        that runs it itself: a pseudo-terminal, a capped pipe). Raises UnknownNode; LabError where
        no host program can enter the node (:class:`ani.testing.FakeLab`)."""
        ...

    def dead_daemons(self, router: str) -> list[str]:
        """The FRR daemons the lab started on ``router`` that do not run now, sorted ([]: all
        run). Raises UnknownNode."""
        ...

    def harness_faults(self) -> list[str]:
        """What went wrong in the lab's own helpers so far (not the agent's doing), each cause
        once, as messages; [] when all is well."""
        ...

    def wait_converged(self, timeout_s: float | None = None) -> None:
        """Return once routing converged (every expected OSPF adjacency Full, BGP session
        Established); ``timeout_s`` default: the topology's. Raises ConvergenceTimeout
        (``pending`` lists what is missing)."""
        ...

    def up(self) -> Any:
        """Build the lab and wait for convergence; returns the lab. Raises LabError."""
        ...

    def down(self) -> None:
        """Remove what the lab made (idempotent); an attached lab is left running."""
        ...


@runtime_checkable
class NetconfCapable(Protocol):
    """Routers with a NETCONF server (RFC 6241 over SSH, RFC 6242)."""

    def netconf_endpoint(self, router: str) -> NetconfEndpoint:
        """Where ``router``'s NETCONF server listens: ``NetconfEndpoint(host, port, username,
        password, ...)``. Raises UnknownNode / InventoryError (unknown router), LabError (the lab
        runs no NETCONF server)."""
        ...


@runtime_checkable
class NetconfLocks(Protocol):
    """The lab can say who holds a NETCONF datastore lock (RFC 6241 §7.5) on a router, as its
    NETCONF server publishes it (a lab without a server: never locked)."""

    def netconf_lock(self, router: str, target: str = "running") -> NetconfLock | None:
        """The lock a session holds on ``router``'s ``target`` datastore (``running`` |
        ``candidate``), or None. Raises UnknownNode."""
        ...


@runtime_checkable
class NetconfServer(NetconfCapable, NetconfLocks, Protocol):
    """The lab runs the NETCONF server itself (:mod:`ani.netconf.server`): it says who holds a
    lock and can freeze one router's part of it."""

    #: whether the server runs (a namespaces lab started with ``netconf=False`` has none)
    netconf: bool

    def freeze_netconf(self, router: str, frozen: bool = True) -> dict[str, float]:
        """Freeze (or resume) ``router``'s part of the server; returns ``{router: since}`` (Unix
        seconds) of the routers frozen now. Raises UnknownNode, LabError (no server, no answer)."""
        ...

    def netconf_frozen(self) -> dict[str, float]:
        """``{router: since}`` (Unix seconds) of the routers whose part is frozen now."""
        ...


@runtime_checkable
class SshCapable(Protocol):
    """Routers whose CLI is reached over SSH."""

    def ssh_endpoint(self, router: str) -> SshEndpoint:
        """Where ``router``'s CLI listens: ``SshEndpoint(host, port, username, password,
        private_key, known_hosts, name)``. Raises UnknownNode / InventoryError, LabError (no SSH
        server), LabGone."""
        ...


@runtime_checkable
class LabFiles(Protocol):
    """The lab has a directory of its own on this machine, removed with it (where A3-R keeps
    its source of truth)."""

    #: the lab's directory (``/run/ani/labs/<id>`` for a namespaces lab)
    dir: Path


@runtime_checkable
class LocalFrr(LabFiles, Protocol):
    """FRR daemons on this machine, one pathspace per router (``-N``), in network namespaces:
    what reads PID files, FRR's own files and sockets, or starts a daemon."""

    def netns(self, node: str) -> str:
        """``node``'s network namespace name (``ani-<id>-<node>``). Raises UnknownNode."""
        ...

    def pathspace(self, router: str) -> str:
        """``router``'s FRR pathspace (``-N``). Raises UnknownNode (also for a host)."""
        ...

    def node_dir(self, node: str) -> Path:
        """``<lab dir>/<node>``. Raises UnknownNode."""
        ...

    def daemon_pid(self, router: str, daemon: str) -> int | None:
        """The pid of ``router``'s ``daemon`` if it runs now, else None. Raises UnknownNode."""
        ...

    def daemon_pids(self, router: str) -> dict[str, int]:
        """``{daemon: pid}`` of ``router``'s FRR daemons running now. Raises UnknownNode."""
        ...

    def start_daemon(self, router: str, daemon: str, timeout: float = 15.0) -> int:
        """Start ``router``'s ``daemon`` again (with no configuration); its pid. Raises
        UnknownNode, LabError."""
        ...


#: every protocol of this module, for tests and messages
CAPABILITIES: tuple[type, ...] = (Devices, Lab, NetconfCapable, NetconfLocks, NetconfServer, SshCapable, LabFiles,
                                   LocalFrr)


def members(cap: type) -> list[str]:
    """The names a capability asks for (its own and its bases'), sorted."""
    names: set[str] = set()
    for klass in cap.__mro__:
        if klass in CAPABILITIES:
            names.update(k for k in vars(klass) if not k.startswith("_"))
            names.update(vars(klass).get("__annotations__", {}))
    return sorted(names)


def missing(lab: object, cap: type) -> list[str]:
    """The members of ``cap`` that ``lab`` lacks (sorted; [] when it provides ``cap``)."""
    return [m for m in members(cap) if not hasattr(lab, m)]


def provides(lab: object, *caps: type) -> bool:
    """Whether ``lab`` has every member of each capability in ``caps`` (None has none)."""
    return lab is not None and all(not missing(lab, c) for c in caps)


def servers_for(needs: Iterable[type]) -> dict[str, bool]:
    """The servers a namespaces lab must start for a user that needs the capabilities ``needs``
    (an adapter's, a fault kind's ``needs``): ``{"netconf": bool, "ssh": bool}``, the keyword
    arguments of :class:`ani.lab.lab.Lab` (``netconf=False`` / ``ssh=False`` start none).
    :class:`NetconfCapable`, :class:`NetconfLocks` or :class:`NetconfServer` need the NETCONF
    server, :class:`SshCapable` the SSH one; the other capabilities neither.

        >>> servers_for([SshCapable, LocalFrr])
        {'netconf': False, 'ssh': True}
    """
    caps = set(needs)
    return {"netconf": bool(caps & {NetconfCapable, NetconfLocks, NetconfServer}), "ssh": SshCapable in caps}


def lacking(lab: object, caps: tuple[type, ...], what: str) -> str | None:
    """Why ``lab`` cannot serve ``what`` (who needs ``caps``: ``"fault kind daemon_restart"``):
    ``"<what> needs a lab with <Cap>: lab <id> (<type>) lacks <member>, ..."`` for the first
    capability it lacks (``"...: no lab"`` for None); None when it provides them all."""
    for cap in caps:
        lacks = missing(lab, cap)
        if lab is None or lacks:
            who = "no lab" if lab is None else f"lab {getattr(lab, 'id', '?')} ({type(lab).__name__})"
            return f"{what} needs a lab with {cap.__name__}: {who}" + ("" if lab is None else f" lacks {', '.join(lacks)}")
    return None


def require(lab: L, cap: type, what: str) -> L:
    """``lab`` itself if it provides ``cap``; ``what`` names who needs it (``"fault kind
    daemon_restart"``). Raises CapabilityMissing with :func:`lacking`'s message (the capability,
    the lab and the members it lacks)."""
    why = lacking(lab, (cap,), what)
    if why is not None:
        raise CapabilityMissing(why)
    return lab


def vtysh_json(lab: Lab, router: str, command: str, timeout: float = 10.0) -> dict | list:
    """``Lab.vtysh_json`` over ``lab.vtysh``, one implementation for every lab: ``command``
    (``json`` appended if missing) run with a bound of ``timeout`` seconds, its output parsed.
    Raises UnknownNode, LabGone (from ``lab.vtysh``), LabError (vtysh failed or timed out, or
    the output is not JSON; the message carries up to 500 characters of vtysh's text)."""
    import json

    if not command.rstrip().endswith("json"):
        command = command.rstrip() + " json"
    res = lab.vtysh(router, command, timeout=timeout)
    text = res.stdout.strip()
    try:
        if not res.ok:
            raise ValueError
        return json.loads(text)
    except ValueError:
        why = "timed out" if res.timed_out else f"exit {res.rc}"
        raise LabError(f"{router}: {command!r} ({why}) gave no JSON: {(text or res.stderr.strip())[:500]}") from None
