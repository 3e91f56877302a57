"""One error tree for the whole SDK.

Agent-actionable failures (a bad argument, a refused command, a device that
rejected a line) are *not* exceptions: adapters return them as data in a
``ToolResult`` with ``ok=False`` and an ``ErrorInfo`` whose ``code`` is one of
the stable strings in :class:`ErrorCode`. Exceptions are for harness faults
and for failures inside a level that its tools turn into such results: a lab
that cannot start, a broken scenario file, a router that cannot be read.

Every exception ani raises is an :class:`AniError`; where a caller may rely on a
built-in kind too, the class also derives from it (``AniTimeout`` is a
``TimeoutError``; ``IntentError``, ``DocError``, ``XmlArgError`` and
``YangDataError`` are also ``ValueError``). Which :class:`ErrorCode` an exception
becomes in a tool's result is decided in one place,
:func:`ani.adapters.base.error_result`. ``tests/unit/test_error_tree.py`` walks
every class defined in ``ani`` and checks this tree.

::

    AniError                         base of every exception raised by ani
    +-- AniTimeout (TimeoutError)    a bound ran out: ``seconds`` (the bound), ``what`` timed out
    |   +-- ConvergenceTimeout       routing did not converge in time (also a LabError; ``pending``)
    |   +-- ReadTimeout              a router's state was not read in time (also a ReadError)
    |   +-- Busy                     ani.adapters.locking: another call of the adapter held what a call needs
    |   +-- SotBusy                  another writer held a lock of the source of truth (also a SotError)
    +-- ConfigError                  a file or option given by the user is invalid (names the field)
    |   +-- TopologyError            topology / scenario file
    |   +-- CampaignSpecError        campaign file
    |   +-- InventoryError           ani.inventory: an inventory of real devices, or a secret it names that cannot be read
    |   +-- FolderInUse              a results folder another campaign writes (``holder_pid``)
    |   +-- GeneratorError           scenario manifest that cannot be generated (names the field)
    |   +-- TaskError                task class / variant / task file
    |       +-- TaskFormatError      ani.netconfbench: a NetConfBench task file ("<file>: <json.path>: ...")
    |           +-- TemplateError    ani.netconfbench.templates: a template that cannot be instantiated
    |   +-- TrajectoryError          ani.trajectory_atif: a trajectory file (ani's JSONL or ATIF) that cannot be read
    +-- RegistryError                ani.plugin_registry: an unknown plug-in name (lists the known ones, a close one, how to install one), or one that cannot be loaded
    |   +-- LevelError               no level given, or an unknown one (also a ConfigError)
    +-- LabError                     the substrate failed (namespaces, veths, FRR)
    |   +-- LabIdError               a new lab's id (or prefix) malformed, or its id in use (also a ConfigError)
    |   +-- LabNotFound              no lab with that id
    |   +-- LabGone                  the lab was removed under the caller ("lab <id> is not running (...)")
    |   +-- ConvergenceTimeout
    |   +-- UnknownNode              no node of that name in the lab
    |   +-- CapabilityMissing        the kernel or the host lacks a needed feature, or the lab a capability (ani.lab.protocol)
    |   +-- StateReadError           ani.device.opstate: a node's operational state could not be read (``node``, ``command``, ``detail``)
    +-- HostFault                    the host or the harness failed, not the agent
    |   +-- ProgramMissing           a program the SDK runs is not installed (names the package)
    |   +-- SandboxSetupFailed       ani.adapters.sandbox: an A0 sandbox could not be set up (``attempts``)
    +-- DeviceError                  a router's configuration could not be read or applied
    |   +-- ApplyError               ani.device.outcome: refused / not reached (``restored``, ``lines``)
    |       +-- ReadError            ani.device.outcome: the state could not be read; nothing changed
    |           +-- ReadTimeout
    +-- ModelError                   data that does not fit the device model / YANG module
    |   +-- YangDataError (ValueError)   ani.device.yang: invalid RFC 7951 data (``issues``)
    |   +-- XmlDataError             ani.device.yang_xml: XML that does not fit (``tag``, ``path``)
    +-- AdapterError                 an adapter's own fault, or a level's failure its tools report
    |   +-- Refused                  ani.adapters.allowlist: an A1 command refused before sending
    |   +-- SessionError             ani.adapters.cli_session: an A1 vtysh session failed
    |   +-- XmlArgError (ValueError) ani.adapters.netconf_xml: an A2 XML / JSON argument
    |   +-- NetconfClientError       ani.netconf.client: the NETCONF client side
    |       +-- RpcFailed            a reply carried error-severity rpc-errors
    |       +-- SessionLost          no session, or it dropped (``outcome_unknown``)
    |           +-- Unsupported      the server's hello lacks what an operation needs
    +-- NetconfError                 ani.netconf: the server side of a NETCONF session
    |   +-- RpcError                 one rpc-error to send (RFC 6241 §4.3)
    |   +-- RpcErrors                several
    |   +-- FramingError             the peer broke RFC 6242 framing
    |   +-- JournalError             ani.netconf.journal: a journal file (pending commit, locks) not written
    |   |   +-- JournalCorrupt       ani.netconf.journal: a pending-commit record there but unreadable
    +-- IntentError (ValueError)     ani.intents.errors: a service change refused (``code``, ``path``)
    |   +-- PoolExhausted            a resource pool is empty
    +-- SotError                     ani.sot.errors: the source of truth
    |   +-- DocError (ValueError)    a desired-state document is invalid (``pointer``)
    |   |   +-- ServiceFileError     ani.sot.services: a service file (A4) does not compile
    |   +-- PatchError               a JSON Patch could not be applied (``index``, ``op``, ``path``)
    |   +-- Conflict                 a change overlaps what another writer committed since its base (``expected``, ``actual``, ``paths``)
    |   +-- SotPathError             no such file, or a path outside the repository
    |   +-- UnknownRevision          a revision that names no commit of the history
    |   +-- SotArgError (ValueError) an argument of the wrong form or size (a revision naming a path, a long commit message)
    |   +-- SotBusy
    +-- AgentError                   an agent's own failure (not the network's, not the harness's)
    |   +-- BudgetExceeded           ani.agents.base: a budget limit was hit (``reason``)
    |   +-- AgentFailed              ani.agents.scripted: the script cannot go on
    |   +-- EndpointError            ani.llm_endpoint: the model endpoint failed for good
    |   +-- NotACompletion           ani.llm_endpoint: an HTTP 200 body that is no completion
    |   +-- ErrorInBody              ani.llm_endpoint: an HTTP 200 body holding an error (transient)
    +-- ToolCallError                ani.integrations: a tool's ok=False result raised into a framework's error channel (``result``, ``code``, ``retriable``)
    |   +-- LangChainToolError       ani.integrations.langchain: the same, also a LangChain ``ToolException``
    +-- ObserverError                the observer could not evaluate a check
    +-- StopRun                      ani.campaign.execute: a phase found the run invalid (``reason``: the record's infra_error_reason)
    +-- FaultError                   ani.faults: a fault could not be injected / verified / removed
        +-- FaultNotApplicable       the run's own state stands in its way (skipped, run stays valid)
        +-- FaultUnavailable         this host cannot do the fault kind (the message says why)

Timeouts: every bound that runs out raises an :class:`AniTimeout` (or a subclass carrying
what its kind needs); ``seconds`` is always the bound, never the time spent.

Interrupts are not errors: they stay ``KeyboardInterrupt`` (an ``except Exception`` never
swallows a Ctrl-C). The one that carries data::

    KeyboardInterrupt
    +-- CampaignInterrupted          ani.campaign.loop: a Ctrl-C after the results folder was taken (``out``, ``ran``, ``again``)
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Stable error codes carried in ``ToolResult.error.code``.

    Agents and campaign statistics key on these strings; never rename one.
    """

    UNKNOWN_TOOL = "unknown_tool"  # the tool name is not offered by this adapter
    INVALID_ARGUMENTS = "invalid_arguments"  # arguments do not match the tool's JSON Schema
    UNKNOWN_DEVICE = "unknown_device"  # no device of that name in the topology
    NOT_ALLOWED = "not_allowed"  # refused by the allowlist / input sanitiser
    BLOCKED = "blocked"  # refused by the blocklist ablation
    COMMAND_FAILED = "command_failed"  # the device rejected a command
    ROLLED_BACK = "rolled_back"  # a multi-line change failed and was undone
    ROLLBACK_FAILED = "rollback_failed"  # undoing a failed change did not restore the state
    TIMEOUT = "timeout"  # the call exceeded its time bound
    UNKNOWN_SNAPSHOT = "unknown_snapshot"  # no snapshot with that id
    DEVICE_UNREACHABLE = "device_unreachable"  # the device's management plane did not answer
    INTERNAL = "internal"  # a harness fault surfaced to the agent as data
    INVALID_INTENT = "invalid_intent"  # a service change / desired state refused by validation; nothing reached a device
    NOT_FOUND = "not_found"  # no service, source-of-truth file, revision or router object (route-map, prefix-list, neighbor) of that name
    CONFLICT = "conflict"  # another writer changed the same source-of-truth file since the base revision; re-read and retry
    RESOURCE_EXHAUSTED = "resource_exhausted"  # a resource pool (addresses, seq numbers, names) has no free value
    NON_CONVERGENT = "non_convergent"  # reconciliation stopped: the same or the inverse drift came back
    LOCKED = "locked"  # another management session holds the device's configuration lock (a NETCONF <lock> on running, RFC 6241 §7.5); retriable once it is released
    UNSUPPORTED = "unsupported"  # the device does not announce what the tool needs (a NETCONF capability or YANG module in its hello): nothing was sent; a retry cannot help


class AniError(Exception):
    """Base class of every exception raised by ani."""


class AniTimeout(AniError, TimeoutError):
    """A bound ran out.

    The message is ``"timeout after N s"`` plus `` (what)`` when ``what`` is given, unless
    ``message`` says it otherwise.

    Attributes:
        seconds: the bound that ran out, seconds.
        what: what timed out (``"reading the running config"``, ``"commit on r1"``), or "".
    """

    def __init__(self, seconds: float, what: str = "", message: str | None = None) -> None:
        self.seconds = float(seconds)
        self.what = what
        super().__init__(message if message is not None else timeout_message(seconds, what))


def timeout_message(seconds: float, what: str = "") -> str:
    """``"timeout after 10 s (what)"`` (seconds as ``%g``)."""
    return f"timeout after {seconds:g} s" + (f" ({what})" if what else "")


class ConfigError(AniError):
    """A user-supplied file is invalid. The message names the file and the bad field."""


class TopologyError(ConfigError):
    """A topology or scenario file is invalid."""


class CampaignSpecError(ConfigError):
    """A campaign file is invalid."""


class FolderInUse(ConfigError):
    """A results folder is being written by another process (a campaign coordinator holds its
    lock: :func:`ani.host.results_dirs.lock`). ``holder_pid`` is that process (None: unknown)."""

    def __init__(self, message: str, holder_pid: int | None = None) -> None:
        super().__init__(message)
        self.holder_pid = holder_pid


class InventoryError(ConfigError):
    """An inventory file (:mod:`ani.inventory`) is invalid (the message names the file and the
    field), or a secret it points to cannot be read (an unset variable, an unreadable file)."""


class GeneratorError(ConfigError):
    """A scenario manifest cannot be generated (a layer cannot hold its instances, a base is
    too small); the message names the manifest field (``layers.2.density: ...``)."""


class TaskError(ConfigError):
    """A task class, task variant or task file is invalid."""


class TaskFormatError(TaskError):
    """A NetConfBench task file (:mod:`ani.netconfbench.task`) does not fit the draft's schema,
    or a task cannot be used here (its platform). The message is ``"<file>: <json.path>:
    <message>"`` (``tasks/x.json: testcases[2].expected_output: not a valid regular expression:
    ...``); several problems are joined with ``"; "``."""


class TemplateError(TaskFormatError):
    """A NetConfArena-style task template (:mod:`ani.netconfbench.templates`) cannot be loaded or
    instantiated (an unresolved dependency, a constraint not met within the draw bound, a bad
    generator option); the message names the file and the parameter (``parameters.lo.prefix: ...``)."""


class TrajectoryError(ConfigError):
    """A trajectory file (ani's JSONL or an ATIF document) cannot be read, or an ATIF document
    does not validate (:mod:`ani.trajectory_atif`); the message names the file and the line or
    field, never its text."""


class RegistryError(AniError):
    """A plug-in (an adapter, ...: :class:`ani.plugin_registry.Registry`) is unknown or cannot
    be loaded; the message lists the known names (and a close one) or names the cause. A kind
    whose names come from users' files raises its own class instead (a ConfigError)."""


class LevelError(RegistryError, ConfigError):
    """No adapter level was given (no argument, no ``$ANI_LEVEL``), or the name is not a
    registered adapter; the message lists the known names. Also a ConfigError: bad user input."""


class LabError(AniError):
    """The substrate failed: namespaces, links, FRR daemons."""


class LabIdError(LabError, ConfigError):
    """A lab id given for a new lab is malformed (not ``[a-z0-9]{1,12}``) or already in use, or
    its prefix is malformed (:data:`ani.lab.state.PREFIX_RE`): bad input (a ConfigError too;
    ``ani lab up`` exits 2)."""


class LabNotFound(LabError):
    """No lab with the given id exists on this machine."""


class LabGone(LabError):
    """The lab was removed under the caller (``ani lab down`` of a lab an adapter is attached
    to): ``"lab <id> is not running (<what is missing>)"``. Raised by ``Lab.exec`` and the lab's
    NETCONF endpoint; the check a level makes is :func:`ani.device.state.lab_gone`.

    Attributes:
        lab_id: the lab; missing: what is gone (``"no /run/ani/labs/<id>/r1/enter"``,
            ``"network namespace ani-<id>-r1 is gone"``).
    """

    def __init__(self, lab_id: str, missing: str) -> None:
        self.lab_id = lab_id
        self.missing = missing
        super().__init__(f"lab {lab_id} is not running ({missing})")


class ConvergenceTimeout(LabError, AniTimeout):
    """Routing protocols did not converge within the bound (``seconds``).

    ``pending`` lists what did not come up, e.g.
    ``["e1: BGP neighbor 100.64.255.1 is Active, expected Established"]``.
    """

    def __init__(self, message: str, pending: list[str] | None = None, seconds: float = 0.0) -> None:
        AniTimeout.__init__(self, seconds, "routing convergence", message)
        self.pending = list(pending or [])


class UnknownNode(LabError):
    """No node of that name in the lab."""


class CapabilityMissing(LabError):
    """The kernel or the host lacks a feature the lab needs (e.g. the ``vrf`` link type), or a
    lab object lacks a capability its consumer needs (:func:`ani.lab.protocol.require`: a fault
    kind that stops FRR daemons on a lab without local FRR)."""


class StateReadError(LabError):
    """A node's operational state could not be read (:mod:`ani.device.opstate`): the command
    failed, ran out of its bound or printed no JSON. ``node``, ``command`` (as run), ``detail``
    (what it printed, at most 300 characters; never a file's contents), ``rc`` (its exit status;
    0: it ran and printed no JSON; None: unknown) and ``timed_out`` (killed by its bound)."""

    def __init__(self, message: str, *, node: str = "", command: str = "", detail: str = "",
                 rc: int | None = None, timed_out: bool = False) -> None:
        super().__init__(message)
        self.node = node
        self.command = command
        self.detail = detail
        self.rc = rc
        self.timed_out = timed_out


class DeviceError(AniError):
    """A router's configuration could not be read or applied (:mod:`ani.device`); the message
    names the router. See :class:`ani.device.outcome.ApplyError`."""


class ModelError(AniError):
    """Data that does not fit the device model or its YANG module (:mod:`ani.device.yang`,
    :mod:`ani.device.yang_xml`)."""
class HostFault(AniError):
    """The host or the harness failed, not the agent: a program is missing, a harness helper
    could not start or crashed. A run that meets one is an infrastructure error (never graded);
    ``BaseAdapter.call`` turns one into an ``internal`` result and a ``harness_fault`` event."""


class ProgramMissing(HostFault):
    """A program the SDK runs is not installed (at the moment it is needed).

    Attributes:
        program: what is missing, as the code names it (``/usr/lib/frr/frr-reload.py``, ``nft``).
        package: the Debian package that provides it (``frr-pythontools``), from
            ``ani/host/packages.txt``.
    """

    def __init__(self, program: str, package: str, message: str | None = None) -> None:
        super().__init__(message or f"{program} is missing (apt-get install {package})")
        self.program = program
        self.package = package


class SandboxSetupFailed(HostFault):
    """The A0 sandbox (:mod:`ani.adapters.sandbox`) could not be set up, every bounded attempt:
    bwrap died before it started the command (e.g. a mount of another lab vanished under its walk
    of the mount table), so the command never ran. Not the agent's failure.

    Attributes:
        attempts: how many setups were tried (each failed).
        stderr: what the last attempt's setup wrote to stderr (bwrap's message).
    """

    def __init__(self, message: str, *, attempts: int, stderr: str) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.stderr = stderr


class AdapterError(AniError):
    """An adapter's own fault (not something the agent did wrong), or a failure inside a level
    (a session, a reply) that its tools turn into a result."""


class NetconfError(AniError):
    """The server side of a NETCONF session (:mod:`ani.netconf`): an rpc-error to send, or a
    peer that broke the framing."""


class AgentError(AniError):
    """An agent's own failure: a budget hit, a script that cannot go on, a model endpoint that
    failed, an agent-loop action the trajectory does not know."""


class ToolCallError(AniError):
    """A tool call that returned ``ok=False``, raised into an agent framework's error channel by
    :mod:`ani.integrations` (the framework shows the model the message and goes on; it is not a
    harness fault). The message is the JSON payload the model reads
    (:func:`ani.integrations._common.error_payload`).

    Attributes:
        result: the :class:`~ani.protocol.ToolResult`.
        code: its error code (a stable :class:`ErrorCode` string), or None if it carried none.
        retriable: the same call unchanged may succeed.
    """

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result
        err = getattr(result, "error", None)
        self.code = None if err is None else str(err.code)
        self.retriable = bool(err is not None and err.retriable)


class ObserverError(AniError):
    """The observer could not evaluate a check (not the same as a failed check)."""


# --- faults (issue 14, faults-core) ---------------------------------------------------------
class FaultError(AniError):
    """A fault (:mod:`ani.faults`) could not be injected, verified or removed; the message names
    the kind and its target (``"link_down e1-c1: ip link set ... failed: ..."``). A run that meets
    one is ``environment_invalid``, never the agent's failure."""


class FaultNotApplicable(FaultError):
    """The fault cannot act now because of the run's own state, not the host's or the harness's
    (a held-lock fault whose ``<lock>`` is denied because the agent's session holds the datastore
    or has uncommitted changes in it, RFC 6241 §7.5): recorded as not injected, with this
    message, and the run stays valid (it is the agent's situation, a measured outcome)."""


class FaultUnavailable(FaultError):
    """This host cannot do the fault kind; the message says why and what it would need
    (``"latency needs the sch_netem kernel module; this kernel has no netem (...)"``)."""
