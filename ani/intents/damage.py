"""Damage magnitude by service class: which pre-existing service instances a run damaged.

    damaged_by_class(record.invariants)   # {"tenant-site": ["tenant:red"], "ibgp": ["bgp"], ...}

Every baseline invariant carries the service tag of what it protects (``Check.service``, set
by the service class that emitted it, :mod:`ani.scenario.invariants`). The tags in use and
their service class (:func:`service_class_of`):

==========================================  =====================================
tag                                         service class
==========================================  =====================================
``<class>/<instance>`` (a service id:       ``<class>`` (``static-route``,
``static-route/e1/198.18.7.0/24/...``)      ``tenant-policy``, ``ebgp-peering``, ...)
``tenant:<tenant>``                         ``tenant-site`` (its sites reach each other)
``isolation``                               ``tenant-site`` (sites of different tenants
                                            do not reach each other)
``bgp``                                     ``ibgp``
``underlay``                                ``underlay``
``task``                                    ``task`` (a task situation's own checks)
none                                        ``untagged``
==========================================  =====================================

A tag none of these rules knows is its own class (said, not guessed). The magnitude of a run's
damage is then the number of distinct damaged tags per class. It reads the service classes'
registry, so it lives with them, above the observer that grades the invariants
(docs/architecture.md, "Layers").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["UNTAGGED", "damaged_by_class", "service_class_of"]

UNTAGGED = "untagged"
_FIXED = {"isolation": "tenant-site", "bgp": "ibgp", "underlay": "underlay", "task": "task"}


def _known_classes() -> set[str]:
    try:
        from ani.intents.services import service_classes

        return {c.name for c in service_classes()}
    except Exception:  # noqa: BLE001 - without the registry, a service id's prefix is trusted
        return set()


def service_class_of(tag: str | None, known: set[str] | None = None) -> str:
    """The service class of a service tag (see the module table); ``known``: the registered
    class names (default: :func:`ani.intents.services.service_classes`)."""
    if not tag:
        return UNTAGGED
    if tag in _FIXED:
        return _FIXED[tag]
    if tag.startswith("tenant:"):
        return "tenant-site"
    if "/" in tag:
        head = tag.split("/", 1)[0]
        names = _known_classes() if known is None else known
        if not names or head in names:
            return head
    return tag


def damaged_by_class(outcomes: Iterable[Any]) -> dict[str, list[str]]:
    """``{service class: [damaged service tags, sorted]}`` from graded invariants (anything with
    ``passed`` and ``service``: CheckOutcome, CheckResult); classes sorted, only those damaged.
    An untagged failed invariant counts under ``untagged`` as its name."""
    known = _known_classes()
    out: dict[str, set[str]] = {}
    for o in outcomes:
        if getattr(o, "passed", True):
            continue
        tag = getattr(o, "service", None)
        out.setdefault(service_class_of(tag, known), set()).add(tag or str(getattr(o, "name", "?")))
    return {k: sorted(v) for k, v in sorted(out.items())}
