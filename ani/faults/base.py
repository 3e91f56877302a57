"""Fault kinds and scheduled faults: the base every kind module builds on (issue 14, §1).

A *fault* acts on the substrate (the lab's namespaces, links, FRR daemons, files), never inside
an adapter, so every level meets the same physical event. Each kind is one module under
:mod:`ani.faults.kinds` holding one :class:`FaultKind` subclass decorated with :func:`register`.

A :class:`FaultSpec` is one scheduled fault, part of the task variant (drawn by
:func:`ani.faults.schedule.draw_schedule` from the seed and the rate, never from the level).
Its *point* ``at_step`` is an agent step: the fault is injected after the agent's
``at_step``-th tool call returned and before the next one runs (0: before the first call);
see ``docs/faults.md`` for why steps and not seconds.

The life of one fault, driven by :class:`ani.faults.session.FaultSession`::

    why = kind.unavailable(lab)            # None, or why this host cannot do the kind
    handle = kind.inject(lab, spec)        # raises FaultError; handle: state for the others
    ok, detail = kind.verify(lab, spec, handle)    # took effect?
    ok, detail = kind.present(lab, spec, handle)   # still in effect? (default: verify)
    kind.remove(lab, spec, handle)         # idempotent; raises FaultError
    ok, detail = kind.removed(lab, spec, handle)   # gone?

Example (a kind with nothing to do, for illustration)::

    @register
    class Noop(FaultKind):
        name = "noop"
        def draw(self, rng, scenario, variant): return {}, {}
        def inject(self, lab, spec): return None
        def verify(self, lab, spec, handle): return True, "nothing to verify"
        def remove(self, lab, spec, handle): pass
        def removed(self, lab, spec, handle): return True, "nothing to remove"
"""

from __future__ import annotations

import importlib
import pkgutil
import random
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ani.errors import ConfigError
from ani.lab.protocol import Lab, lacking
from ani.plugin_registry import Registry

__all__ = ["FaultSpec", "FaultKind", "register", "fault_kinds", "get_fault_kind", "target_label", "target_routers"]


@dataclass(frozen=True)
class FaultSpec:
    """One scheduled fault; part of the task variant.

    Attributes:
        kind: registered kind name (``"link_down"``, ``"packet_loss"``, ``"frozen_router"``, ...).
        at_step: the point: injected after the agent's ``at_step``-th tool call returned, before
            the next one runs (0: before the first call). Agent steps, not seconds.
        duration_s: seconds the fault stays, or None: until the end of the agent's run. It is
            ended at the first tool-call boundary after the duration passed (or at the end).
        target: kind-specific: ``{"router": "e1"}``, ``{"link": ["e1", "c1"]}``, ...
        params: kind-specific: ``{"loss_pct": 30}``, ``{"daemon": "bgpd"}``, ...
        at_s: the point in seconds of the agent's time instead (``faults.placement: time``):
            injected ``at_s`` seconds after the agent started, whatever it is doing then (the
            session's watcher injects it, between or during calls); None: ``at_step`` places it.
    """

    kind: str
    at_step: int
    duration_s: float | None = None
    target: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    at_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the shape :meth:`from_dict` reads; ``at_s`` only when set)."""
        out = {"kind": self.kind, "at_step": self.at_step, "duration_s": self.duration_s,
               "target": dict(self.target), "params": dict(self.params)}
        if self.at_s is not None:
            out["at_s"] = self.at_s
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "FaultSpec":
        """Build from :meth:`to_dict`'s shape; raises ConfigError naming a missing / bad field."""
        if not isinstance(d, dict):
            raise ConfigError(f"fault: expected a mapping, got {type(d).__name__}")
        try:
            kind = str(d["kind"])
            at_step = int(d["at_step"])
        except KeyError as e:
            raise ConfigError(f"fault: missing field {e.args[0]!r}") from None
        except (TypeError, ValueError):
            raise ConfigError(f"fault {d.get('kind')!r}: at_step must be an integer, got {d.get('at_step')!r}") from None
        if at_step < 0:
            raise ConfigError(f"fault {kind!r}: at_step must be >= 0, got {at_step}")
        dur = d.get("duration_s")
        if dur is not None:
            try:
                dur = float(dur)
            except (TypeError, ValueError):
                raise ConfigError(f"fault {kind!r}: duration_s must be seconds or null, got {dur!r}") from None
            if dur <= 0:
                raise ConfigError(f"fault {kind!r}: duration_s must be > 0, got {dur}")
        at_s = d.get("at_s")
        if at_s is not None:
            if not isinstance(at_s, (int, float)) or isinstance(at_s, bool) or not 0 <= at_s < float("inf"):
                raise ConfigError(f"fault {kind!r}: at_s must be seconds >= 0 or null, got {at_s!r}")
            at_s = float(at_s)
        return cls(kind=kind, at_step=at_step, duration_s=dur, target=dict(d.get("target") or {}),
                   params=dict(d.get("params") or {}), at_s=at_s)


def target_label(target: dict[str, Any]) -> str:
    """A short human name of a target: ``{"link": ["e1", "c1"]}`` -> ``"e1-c1"``,
    ``{"router": "e1"}`` -> ``"e1"``."""
    parts = []
    for _k, v in sorted(target.items()):
        parts.append("-".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v))
    return ",".join(parts) or "-"


def target_routers(target: dict[str, Any]) -> set[str]:
    """The routers a fault acts on: its target's ``router`` / ``routers`` and ``link`` ends
    (``{"link": ["e1", "c1"]}`` -> ``{"e1", "c1"}``)."""
    out: set[str] = set()
    for key in ("router", "link", "routers"):
        v = target.get(key)
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, (list, tuple)):
            out.update(str(x) for x in v)
    return out


class FaultKind:
    """One kind of fault. Subclasses set ``name`` and implement ``draw``, ``inject``, ``verify``,
    ``remove`` and ``removed``; ``unavailable`` and ``present`` have defaults.

    Every method that touches the lab takes the lab the run uses (an :class:`ani.lab.protocol.Lab`;
    a kind that needs more lists the capabilities in :attr:`needs`). ``inject``
    and ``remove`` raise :class:`ani.errors.FaultError` (``FaultUnavailable`` when the host
    cannot do the kind); the checks return ``(ok, detail)`` with a one-line detail that the run
    record keeps.
    """

    name: ClassVar[str] = ""

    #: the capabilities (:mod:`ani.lab.protocol`: ``LocalFrr``, ``NetconfServer``) the kind needs
    #: of a lab beyond :class:`ani.lab.protocol.Lab`; a lab lacking one cannot take the kind
    needs: ClassVar[tuple[type, ...]] = ()

    def lab_needs(self, spec: FaultSpec) -> tuple[type, ...]:
        """The capabilities a fault ``spec`` of this kind needs of the run's lab, read before the
        lab starts to choose its servers (:func:`ani.lab.protocol.servers_for`; e.g.
        ``NetconfServer`` starts the NETCONF server). The default: :attr:`needs`; a kind whose
        needs depend on its params says so (``frozen_router``'s ``management``)."""
        return self.needs

    def unavailable(self, lab: Lab | None) -> str | None:
        """Why this host cannot do the kind (one line naming what is missing), or None. ``lab``
        is None for the host-level check made before any lab starts. The default: the first of
        :attr:`needs` that ``lab`` lacks (:func:`ani.lab.protocol.lacking`)."""
        return None if lab is None else lacking(lab, self.needs, f"fault kind {self.name}")

    #: True for a kind under which no other fault can act on the same router (a frozen router's
    #: processes answer nothing): a fault of another kind due there waits until it is removed
    #: (:class:`ani.faults.session.FaultSession`). False: other kinds act beside it.
    blocks_router: bool = False

    #: True for a kind that writes the routers' configuration (a concurrent writer's line, a
    #: pool reservation): the session reads the configuration of its routers around its
    #: injection and removal and records what it changed (``FaultRecord.wrote``), so the
    #: observer never counts a fault's own lines as changes the run made nobody asked for.
    writes_config: bool = False

    def overlap_key(self, spec: FaultSpec) -> Any:
        """What two faults of this kind must not both act on at once (hashable). A fault due
        while another with the same key is in effect is *merged* into it (the one in effect
        lasts until the later end) instead of injected twice: removing the first would
        otherwise undo the second. Default: the kind and its target."""
        return (self.name, repr(sorted(spec.target.items())))

    def draw(self, rng: random.Random, scenario: Any, variant: Any) -> tuple[dict, dict] | None:
        """Pick ``(target, params)`` for one fault from ``rng`` (the only randomness allowed), or
        None when the scenario has no target for this kind. Must not depend on the level."""
        raise NotImplementedError

    def inject(self, lab: Lab, spec: FaultSpec) -> Any:
        """Inject the fault; returns a handle passed to the other methods. Raises FaultError."""
        raise NotImplementedError

    def verify(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        """Did the fault take effect (right after ``inject``)?"""
        raise NotImplementedError

    def present(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        """Is the fault still in effect? Default: :meth:`verify`."""
        return self.verify(lab, spec, handle)

    def remove(self, lab: Lab, spec: FaultSpec, handle: Any) -> None:
        """Undo the fault. Idempotent (a second call, or a call after the fault vanished, is
        fine). Raises FaultError when it cannot be undone."""
        raise NotImplementedError

    def removed(self, lab: Lab, spec: FaultSpec, handle: Any) -> tuple[bool, str]:
        """Is the fault gone (after ``remove``)?"""
        raise NotImplementedError


def _load_kinds() -> None:
    """Import every module of :mod:`ani.faults.kinds` (each registers its kind when imported):
    :data:`FAULT_KINDS`' loader, run once before its first listing."""
    from ani.faults import kinds as pkg

    for info in pkgutil.iter_modules(pkg.__path__, pkg.__name__ + "."):
        importlib.import_module(info.name)


#: the fault kinds by name (an :class:`ani.plugin_registry.Registry`, sorted by name): the
#: modules of :mod:`ani.faults.kinds`, :func:`register`'s (a later class of a name replaces the
#: earlier, so a test may register a fake; ``with FAULT_KINDS.isolated():`` undoes it), and the
#: entry points of the group ``ani.faults``. An unknown name is a ConfigError.
FAULT_KINDS: Registry[type[FaultKind]] = Registry(
    "fault kind", group="ani.faults", loader=_load_kinds, replace=True, error=ConfigError,
    hint="pip install the package that provides it (entry-point group ani.faults; docs/faults.md)")


def register(kind_cls: type[FaultKind]) -> type[FaultKind]:
    """Class decorator: register a kind under its ``name`` (a later class of the same name
    replaces the earlier one, so a test may register a fake). Returns the class. Raises
    ConfigError for a class without a name."""
    return FAULT_KINDS.register_class(kind_cls)


def fault_kinds() -> list[str]:
    """The registered kind names, sorted."""
    return FAULT_KINDS.names()


def get_fault_kind(name: str) -> FaultKind:
    """A fresh instance of the kind ``name``; raises ConfigError listing the known kinds (and
    a close one: ``unknown fault kind 'link_dwn'; known: ...; did you mean 'link_down'?``)."""
    return FAULT_KINDS.load(name)()
