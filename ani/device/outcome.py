"""The outcome of reading or applying a router's configuration (:mod:`ani.device.state`,
:mod:`ani.device.apply`): a report on success, :class:`ApplyError` (or its read failures)
otherwise. Shared by the NETCONF backend contract (``ani.netconf.backend``), which the device
layer must not import.

::

    DeviceError (ani.errors)
    +-- ApplyError          refused, or the router did not reach the intended configuration
        +-- ReadError       the router's state could not be read; nothing was changed
            +-- ReadTimeout the read ran out of its bound (also an ani.errors.AniTimeout)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ani.errors import AniTimeout, DeviceError, timeout_message


class ApplyError(DeviceError):
    """The router refused or did not reach the intended configuration.

    Attributes:
        message: what failed (FRR's / nft's own words where there are some).
        restored: True if the router was put back to the configuration it had before the apply
            and that was verified; False if that restore failed or could not be verified (then
            the router is in an unknown state and the caller must say so).
        lines: the configuration lines involved, if known.
        notes: every error line of the tools run on the way (frr-reload's, nft's), in order,
            each once, including those of a restore; the message carries them too.
        bound_passed: the apply was stopped because its deadline passed (the caller's time
            bound, e.g. a NETCONF commit's), not because the router refused anything.
    """

    def __init__(self, message: str, restored: bool, lines: list[str] | None = None,
                 notes: list[str] | None = None, *, bound_passed: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.restored = restored
        self.lines = list(lines or [])
        self.notes = list(notes or [])
        self.bound_passed = bound_passed


class ReadError(ApplyError):
    """A router's state (FRR running config, nftables ruleset) could not be read: the lab is
    gone, one of its FRR daemons is not running, or vtysh / nft failed. Nothing was changed
    (``restored`` is True). The message starts with the router's name; ``gone``: the lab itself
    was removed (a retry cannot succeed)."""

    def __init__(self, message: str, gone: bool = False) -> None:
        super().__init__(message, restored=True)
        self.gone = gone


class ReadTimeout(ReadError, AniTimeout):
    """A read ran out of its bound (a frozen daemon): ``"<router>: timeout after N s (reading the
    running config)"``. Attributes: ``router``, ``seconds`` (the bound), ``what``."""

    def __init__(self, router: str, seconds: float, what: str) -> None:
        self.router = router
        self.gone = False
        AniTimeout.__init__(self, seconds, what, f"{router}: {timeout_message(seconds, what)}")
        self.message = str(self)
        self.restored = True
        self.lines = []
        self.notes = []


@dataclass
class ApplyReport:
    """A successful apply. ``changed``: the running configuration changed; ``diff``: the FRR /
    nft lines added (``+ ...``) and removed (``- ...``); ``seconds``: wall time; ``notes``: the
    tools' error lines on the way (e.g. frr-reload's ``Failed to execute ...`` for a line it then
    removed in a shorter form), each once."""

    changed: bool
    diff: list[str] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
