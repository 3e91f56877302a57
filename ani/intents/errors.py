"""Typed errors of service intents.

::

    IntentError(code, message, path)     a change refused before apply (names the culprit); an
                                         ani.errors.AniError and a ValueError
    +-- PoolExhausted(pool, size)        a resource pool has nothing left to allocate

``code`` is one of the stable strings of :data:`CODES`; ``path`` is the offending field, as a
dotted path into the list of changes (``changes.0.route_map_in``) or ``""``.
"""

from __future__ import annotations

from typing import Any

from ani.errors import AniError

#: every code an IntentError may carry
CODES: tuple[str, ...] = (
    "schema",  # the change does not match its JSON Schema / pydantic model
    "unknown-router",  # a router that is not in the network
    "unknown-reference",  # a route-map, prefix-list, peer-group, set, interface that does not exist
    "nexthop-self",  # a static route's next hop is an address of the router itself
    "prefix-overlap",  # a prefix overlaps one already used by another service
    "seq-conflict",  # a list sequence number already used by another service / tenant
    "address-conflict",  # an address already configured elsewhere
    "service-exists",  # creating a service whose id is already in use
    "service-not-found",  # changing / removing a service that does not exist
    "invalid",  # a value that is well-formed but not usable here
    "yang",  # an intended configuration fails ani.device.yang validation
    "pool-exhausted",  # a resource pool is empty
    "too-large",  # the change set is over a bound (number of changes, lines changed on one router)
)


class IntentError(AniError, ValueError):
    """A refused change: ``code`` (one of :data:`CODES`), ``message``, ``path`` (the field)."""

    def __init__(self, code: str, message: str, path: str = "") -> None:
        if code not in CODES:
            raise ValueError(f"unknown intent error code {code!r}")
        self.code = code
        self.message = message
        self.path = path
        super().__init__(f"{code}: {path + ': ' if path else ''}{message}")

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "path": self.path, "message": self.message}


class PoolExhausted(IntentError):
    """Pool ``pool`` (of ``size`` resources) has nothing left to allocate."""

    def __init__(self, pool: str, size: int, path: str = "") -> None:
        self.pool = pool
        self.size = size
        super().__init__("pool-exhausted", f"pool {pool} is exhausted (size {size}, all in use)", path)
