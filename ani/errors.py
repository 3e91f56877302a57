"""One error tree for the whole SDK.

Agent-actionable failures (a bad argument, a refused command, a device that
rejected a line) are *not* exceptions: adapters return them as data in a
``ToolResult`` with ``ok=False`` and an ``ErrorInfo`` whose ``code`` is one of
the stable strings in :class:`ErrorCode`. Exceptions are for harness faults
only: a lab that cannot start, a broken scenario file, a campaign spec that
does not parse.

::

    AniError                         base of every exception raised by ani
    +-- ConfigError                  a file given by the user is invalid (names the field)
    |   +-- TopologyError            topology / scenario file
    |   +-- CampaignSpecError        campaign file
    |   +-- TaskError                task class / variant / task file
    +-- RegistryError                unknown adapter name (lists the known ones)
    +-- LabError                     the substrate failed (namespaces, veths, FRR)
    |   +-- LabNotFound              no lab with that id
    |   +-- ConvergenceTimeout       routing did not converge in time (names the session)
    |   +-- UnknownNode              no node of that name in the lab
    |   +-- CapabilityMissing        the kernel or the host lacks a needed feature
    +-- HostFault                    the host or the harness failed, not the agent
    |   +-- ProgramMissing           a program the SDK runs is not installed (names the package)
    +-- AdapterError                 an adapter's own fault (not the agent's)
    +-- ObserverError                the observer could not evaluate a check
"""

from __future__ import annotations

from enum import StrEnum


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
    NOT_FOUND = "not_found"  # no service, source-of-truth file or revision of that name
    CONFLICT = "conflict"  # the base revision is stale (HEAD moved); re-read and retry
    RESOURCE_EXHAUSTED = "resource_exhausted"  # a resource pool (addresses, seq numbers, names) has no free value
    NON_CONVERGENT = "non_convergent"  # reconciliation stopped: the same or the inverse drift came back


class AniError(Exception):
    """Base class of every exception raised by ani."""


class ConfigError(AniError):
    """A user-supplied file is invalid. The message names the file and the bad field."""


class TopologyError(ConfigError):
    """A topology or scenario file is invalid."""


class CampaignSpecError(ConfigError):
    """A campaign file is invalid."""


class TaskError(ConfigError):
    """A task class, task variant or task file is invalid."""


class RegistryError(AniError):
    """An adapter name is unknown; the message lists the known names."""


class LabError(AniError):
    """The substrate failed: namespaces, links, FRR daemons."""


class LabNotFound(LabError):
    """No lab with the given id exists on this machine."""


class ConvergenceTimeout(LabError):
    """Routing protocols did not converge within the bound.

    ``pending`` lists what did not come up, e.g.
    ``["e1: BGP neighbor 100.64.255.1 is Active, expected Established"]``.
    """

    def __init__(self, message: str, pending: list[str] | None = None) -> None:
        super().__init__(message)
        self.pending = list(pending or [])


class UnknownNode(LabError):
    """No node of that name in the lab."""


class CapabilityMissing(LabError):
    """The kernel or the host lacks a feature the lab needs (e.g. the ``vrf`` link type)."""


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


class AdapterError(AniError):
    """An adapter's own fault (not something the agent did wrong)."""


class ObserverError(AniError):
    """The observer could not evaluate a check (not the same as a failed check)."""
