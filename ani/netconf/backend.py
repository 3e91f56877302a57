"""What the NETCONF server needs from a router: the contract between ``ani.netconf`` and the
substrate. :class:`ani.netconf.frr_backend.FrrBackend` implements it on a lab router; unit tests
of the datastore logic use an in-memory fake.
"""

from __future__ import annotations

from typing import Any, Protocol

from ani.device.model import DeviceConfig
from ani.device.outcome import ApplyError, ApplyReport

__all__ = ["ApplyError", "ApplyReport", "Backend"]


class Backend(Protocol):
    """One router, as seen by its NETCONF server. Calls are blocking and may take a second;
    the server serialises them per router."""

    name: str

    def read(self) -> DeviceConfig:
        """The router's running configuration now (FRR ``show running-config`` + nftables),
        read out of band each call: a change made by anyone else is visible. Raises
        ApplyError(restored=True) if it cannot be read (daemon down, timeout)."""
        ...

    def apply(self, intended: DeviceConfig, deadline: float | None = None) -> ApplyReport:
        """Make the running configuration equal ``intended``, changing only the difference,
        never writing the startup config; afterwards ``read() == intended`` is checked.
        Raises ApplyError (after trying to restore the previous configuration) otherwise.
        ``deadline`` (``time.monotonic()``, None: none): the change must stop by then and the
        previous configuration be restored (ApplyError with ``bound_passed=True``)."""
        ...

    def state(self) -> dict[str, Any]:
        """Operational state in the RFC 7951 JSON encoding of the ``frr-state`` container of
        ``yang/ani-frr.yang`` (routes, BGP neighbor states, interface status)."""
        ...
