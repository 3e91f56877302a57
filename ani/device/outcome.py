"""The outcome of applying a configuration to a router (``ani.device.apply``): a report on
success, :class:`ApplyError` otherwise. Shared by the NETCONF backend contract
(``ani.netconf.backend``), which the device layer must not import."""

from __future__ import annotations

from dataclasses import dataclass, field

from ani.errors import AniError


class ApplyError(AniError):
    """The router refused or did not reach the intended configuration.

    Attributes:
        message: what failed (FRR's / nft's own words where there are some).
        restored: True if the router was put back to the configuration it had before the apply
            and that was verified; False if that restore failed or could not be verified (then
            the router is in an unknown state and the caller must say so).
        lines: the configuration lines involved, if known.
        timeout_s: the bound (seconds) that ran out when the failure is a timeout (a frozen
            daemon: ``"<router>: timeout after N s (reading the running config)"``), else None;
            adapters report such a failure as ``ErrorCode.TIMEOUT``.
    """

    def __init__(self, message: str, restored: bool, lines: list[str] | None = None,
                 timeout_s: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.restored = restored
        self.lines = list(lines or [])
        self.timeout_s = timeout_s


def is_timeout(exc: BaseException) -> bool:
    """True if ``exc`` is a read or apply that ran out of its bound (``ApplyError.timeout_s``)."""
    return getattr(exc, "timeout_s", None) is not None


@dataclass
class ApplyReport:
    """A successful apply. ``changed``: the running configuration changed; ``diff``: the FRR /
    nft lines added (``+ ...``) and removed (``- ...``); ``seconds``: wall time."""

    changed: bool
    diff: list[str] = field(default_factory=list)
    seconds: float = 0.0
