"""How much one NETCONF call may ask of a router: the bounds of the lab's NETCONF server.

FRR applies a large change slowly and not linearly (``docs/performance.md``: 1,000 prefix-list
entries take about 20 s through frr-reload on an idle 2-core host, 20,000 would take hours), and
the router's datastores are held while it does. So the server bounds what one call can create
and how long one commit may apply, and says so before anything is changed:

========================  ===========================  =======  ==========================================
bound                     environment variable         default  when it is exceeded
========================  ===========================  =======  ==========================================
elements in one           ``ANI_NETCONF_MAX_EDIT_``    20000    ``edit-config`` refused, error-tag
``edit-config``           ``ELEMENTS``                          ``too-big``, app-tag ``edit-too-large``;
``<config>``                                                    nothing set
configuration lines one   ``ANI_NETCONF_MAX_COMMIT_``  1000     ``commit`` refused, ``too-big``, app-tag
``commit`` changes        ``LINES``                             ``commit-too-large``; nothing applied, the
                                                                candidate keeps its edits
seconds one ``commit``    ``ANI_NETCONF_COMMIT_``      90       the apply is stopped, running is put back
may apply                 ``BOUND_S``                           to what it was before the commit (RFC 6241:
                                                                a failed commit leaves running unchanged),
                                                                ``operation-failed``, app-tag
                                                                ``commit-bound``
========================  ===========================  =======  ==========================================

The commit bound stays below A2's RPC timeout (``rpc_timeout_s``, 120 s by default): the client
reads the server's answer, and the server never goes on applying after its client was told
``timeout``. Lines are counted as :func:`ani.device.apply.frr_diff` counts them (one per
added or removed configuration line, nftables elements and rules included).

    limits = Limits.from_env()          # the lab's server (ani.lab.netconf_server)
    Device(..., limits=Limits(commit_lines=10))
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ani.errors import ConfigError

__all__ = ["ENV", "Limits"]

#: environment variable of each bound (read by :meth:`Limits.from_env`)
ENV = {
    "edit_elements": "ANI_NETCONF_MAX_EDIT_ELEMENTS",
    "commit_lines": "ANI_NETCONF_MAX_COMMIT_LINES",
    "commit_bound_s": "ANI_NETCONF_COMMIT_BOUND_S",
}


@dataclass(frozen=True)
class Limits:
    """The bounds of one router's datastores (see the module docstring).

    Attributes:
        edit_elements: most XML elements in the ``<config>`` of one edit-config.
        commit_lines: most configuration lines one commit may add or remove.
        commit_bound_s: seconds one commit may spend applying (counted from its start).
    """

    edit_elements: int = 20000
    commit_lines: int = 1000
    commit_bound_s: float = 90.0

    def __post_init__(self) -> None:
        for name in ("edit_elements", "commit_lines", "commit_bound_s"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"NETCONF limit {name} must be above 0, got {getattr(self, name)!r}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The defaults, overridden by the variables of :data:`ENV` that are set. Raises
        ConfigError naming the variable whose value is not a positive number."""
        env = os.environ if environ is None else environ
        kw: dict[str, float | int] = {}
        for field, var in ENV.items():
            raw = env.get(var)
            if raw is None or not raw.strip():
                continue
            try:
                value = float(raw) if field == "commit_bound_s" else int(raw)
            except ValueError:
                raise ConfigError(f"{var}={raw[:40]!r}: not a number") from None
            if not value > 0:
                raise ConfigError(f"{var}={raw[:40]!r}: must be above 0")
            kw[field] = value
        return cls(**kw)  # type: ignore[arg-type]
