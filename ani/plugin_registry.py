"""One registry shape for every kind of plug-in: adapters, agents, service classes, fault
kinds, task classes, campaign executors, NetConfBench platforms, the scripted agent's mistake
kinds.

::

    ADAPTERS = Registry("adapter", group="ani.adapters", hint="pip install the package ...")
    ADAPTERS.register("a1", "ani.adapters.a1:A1Adapter")   # by module:attr, imported on use
    ADAPTERS.register("mine", MyAdapter)                  # or by object
    @ADAPTERS.register_class                              # or a class, under its ``name``
    class Other: name = "other"
    ADAPTERS.names()          # ["a1", "mine", "myvendor", "other"]: ordered (below), no import
    ADAPTERS.load("a1")       # the object; a module:attr target is imported now
    ADAPTERS.load("pkg.mod:Cls", paths=True)   # also any module:attr, registered or not
    ADAPTERS.load("a7")       # RegistryError: unknown adapter 'a7'; known: a1, ...;
                              #   did you mean 'a1'?; pip install the package ...

What a registry holds, in this order of precedence (a name found earlier wins):

1. what was registered in this process (:meth:`Registry.register`, :meth:`register_class`:
   built-ins and a user's run-time additions);
2. the entry points of its group (``[project.entry-points."ani.adapters"]`` in an installed
   distribution's metadata: ``name = "module:attr"``), read once per process
   (:meth:`Registry.refresh` reads them again), never imported until :meth:`Registry.load`; a
   built-in name is never replaced by an entry point of the same name.

Order (explicit, never the order modules happened to be imported in): the names of
``order`` first, in that order, then every other name sorted. A ``loader`` (a function that
imports the modules that register the built-ins) runs once, before the first listing.

Errors are the classes a registry is built with, those of :mod:`ani.errors` (default
:class:`~ani.errors.RegistryError`, ``internal`` when a tool result carries it,
:func:`ani.adapters.error_map.error_result`; a kind whose names come from users' files passes
:class:`~ani.errors.ConfigError` or a subclass; the service classes keep the KeyError and
ValueError their callers catch):
``unknown <what> 'x'; known: a, b; did you mean 'a'?; <hint>`` (the close name from
:func:`difflib.get_close_matches`, the hint saying how to get one), ``<what> 'x' (m:a) cannot
be loaded: ModuleNotFoundError: ...``, ``<what> 'x' is registered twice``. Names are data:
a name is quoted with ``repr`` and never imported unless it is a registered target or
(``paths=True``) written as ``module:attr``.

This module imports only :mod:`ani.errors` and the standard library (it sits at the bottom of
the layers, so any layer may hold a registry).
"""

from __future__ import annotations

import contextlib
import difflib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from ani.errors import RegistryError

T = TypeVar("T")

#: ``package.module:attribute`` (dotted names; the attribute may be ``Class.method``)
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
MODULE_ATTR = re.compile(f"{_DOTTED}:{_DOTTED}")


def is_path(spec: str) -> bool:
    """Whether ``spec`` is written as ``module:attr`` (a dotted module, a colon, a dotted
    attribute), i.e. names an object to import rather than a registered name."""
    return bool(MODULE_ATTR.fullmatch(spec))


def import_path(spec: str) -> Any:
    """The object ``module:attr`` names (``attr`` may be dotted). Raises ImportError /
    AttributeError as :func:`importlib.import_module` and ``getattr`` do, ValueError when
    ``spec`` is not ``module:attr``."""
    if not is_path(spec):
        raise ValueError(f"{spec!r} is not module:attr")
    module_name, _, attr = spec.partition(":")
    obj: Any = import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def did_you_mean(name: str, known: Sequence[str]) -> str | None:
    """The known name closest to ``name`` (:func:`difflib.get_close_matches`, cutoff 0.6), or
    None when none is close."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return close[0] if close else None


class Registry(Generic[T], Mapping[str, "T | str"]):
    """Named plug-ins of one kind (see the module doc). A read-only mapping ``{name: target}``
    (a target is the registered object or its ``module:attr`` string), ordered.

    Args:
        what: the kind's name in messages (``"adapter"``, ``"service class"``).
        group: the entry-point group (``"ani.adapters"``), or None for none.
        hint: how to get another one (appended to the unknown-name error), or "".
        order: names listed first, in this order; the rest follow sorted.
        loader: imports the modules that register the built-ins; called once, lazily.
        replace: whether a second registration of a name replaces the first (else it is an
            error, unless it registers the same object again, or another instance of the
            same class: a module imported twice).
        error: the exception class of an unknown name.
        duplicate_error: the exception class of a name registered twice (default ``error``).
        load_error: the exception class of a target that cannot be loaded (default ``error``).
        prefix: put before every message (``"agent.kind: "``).
    """

    def __init__(self, what: str, *, group: str | None = None, hint: str = "", order: Sequence[str] = (),
                 loader: Callable[[], None] | None = None, replace: bool = False,
                 error: Callable[[str], Exception] = RegistryError,
                 duplicate_error: Callable[[str], Exception] | None = None,
                 load_error: Callable[[str], Exception] | None = None, prefix: str = "") -> None:
        self.what, self.group, self.hint, self.order = what, group, hint, tuple(order)
        self.replace, self.error, self.prefix = replace, error, prefix
        self.duplicate_error = duplicate_error or error
        self.load_error = load_error or error
        self._loader, self._loaded = loader, loader is None
        self._own: dict[str, T | str] = {}
        self._eps: tuple[Callable[..., Any], dict[str, str]] | None = None
        self._ordered: tuple[Any, dict[str, T | str]] | None = None

    # -- registering -------------------------------------------------------------------------

    def register(self, name: str, target: T | str) -> T | str:
        """Add ``name`` -> ``target`` (an object, or a ``module:attr`` string imported on use);
        returns ``target``. Raises ``duplicate_error`` for a name already registered with
        another target (unless ``replace``), ``error`` for an empty name or a string target
        that is not ``module:attr``."""
        if not isinstance(name, str) or not name:
            raise self.error(f"{self.prefix}a {self.what} needs a name, got {name!r}")
        if isinstance(target, str) and not is_path(target):
            raise self.error(f"{self.prefix}{self.what} {name!r}: target {target!r} is not module:attr")
        old = self._own.get(name)
        if old is not None and not self.replace and not _same(old, target):
            raise self.duplicate_error(f"{self.prefix}{self.what} {name!r} is registered twice")
        self._own[name] = target
        return target

    def register_class(self, cls: Any) -> Any:
        """Class decorator: register ``cls`` under ``cls.name``; returns ``cls``."""
        name = getattr(cls, "name", "")
        if not name:
            raise self.error(f"{self.prefix}{self.what} {getattr(cls, '__qualname__', cls)!s} has no name")
        self.register(name, cls)
        return cls

    def unregister(self, name: str) -> None:
        """Remove ``name`` registered in this process (an entry point stays). Raises KeyError."""
        del self._own[name]

    @contextlib.contextmanager
    def isolated(self) -> Iterator[Registry[T]]:
        """Within the block, registrations and removals are undone afterwards (for tests that
        register a fake of their own)."""
        self._ensure_loaded()
        saved = dict(self._own)
        try:
            yield self
        finally:
            self._own.clear()
            self._own.update(saved)

    # -- reading -----------------------------------------------------------------------------

    def entry_points(self) -> dict[str, str]:
        """``{name: "module:attr"}`` of the installed entry points of :attr:`group`. Read once
        per process (reading the distributions' metadata takes ~15 ms; a registry is listed on
        every use): :meth:`refresh` reads them again, e.g. after a ``pip install``."""
        if not self.group:
            return {}
        reader = entry_points  # looked up on each call: a test's fake of the module's name is seen
        if self._eps is None or self._eps[0] is not reader:
            self._eps = (reader, {ep.name: ep.value for ep in reader(group=self.group)})
        return dict(self._eps[1])

    def refresh(self) -> None:
        """Forget the entry points read (:meth:`entry_points` reads them again)."""
        self._eps = None

    def targets(self) -> dict[str, T | str]:
        """``{name: target}``, ordered (module doc); nothing is imported. (Computed again only
        after a registration changed or the entry points were read again.)"""
        self._ensure_loaded()
        eps = self.entry_points()
        key = (tuple(self._own.items()), tuple(eps.items()))
        if self._ordered is None or self._ordered[0] != key:
            found: dict[str, T | str] = {**eps, **self._own}
            first = [n for n in self.order if n in found]
            rest = sorted(n for n in found if n not in self.order)
            self._ordered = (key, {n: found[n] for n in first + rest})
        return dict(self._ordered[1])

    def objects(self) -> list[T]:
        """Every registered object, ordered (module doc); ``module:attr`` targets imported now.
        Raises ``load_error`` for one that cannot be loaded."""
        return [self._resolve(name, target) for name, target in self.targets().items()]

    def names(self) -> list[str]:
        """The names, ordered (module doc)."""
        return list(self.targets())

    def load(self, name: str, *, paths: bool = False) -> T:
        """The object registered as ``name`` (a ``module:attr`` target imported now); with
        ``paths``, an unregistered ``module:attr`` is imported too. Raises ``error`` for an
        unknown name (:meth:`unknown`), ``load_error`` for a target that cannot be loaded.
        (``registry.get(name)`` is the mapping's: the target, unloaded, or None.)"""
        targets = self.targets()
        if isinstance(name, str) and name in targets:  # a list or mapping: unknown, not a TypeError
            return self._resolve(name, targets[name])
        if paths and isinstance(name, str) and is_path(name):
            return self._resolve(name, name)
        raise self.unknown(name, list(targets))

    def unknown(self, name: Any, known: Sequence[str] | None = None, *, what: str | None = None) -> Exception:
        """The error (``error``) for an unknown ``name``; its text is :meth:`unknown_text`."""
        return self.error(self.unknown_text(name, known, what=what))

    def unknown_text(self, name: Any, known: Sequence[str] | None = None, *, what: str | None = None) -> str:
        """``unknown <what> 'x'; known: a, b; did you mean 'a'?; <hint>`` (``(none)`` when
        nothing is registered): the one wording of an unknown name, also for a caller that must
        raise another class (a pydantic validator's ValueError). ``known`` replaces the names
        listed (default :meth:`names`), ``what`` the kind's word (``"level"`` for an adapter)."""
        names = self.names() if known is None else list(known)
        msg = f"{self.prefix}unknown {what or self.what} {name!r}; known: {', '.join(names) or '(none)'}"
        close = did_you_mean(name, names) if isinstance(name, str) else None
        if close is not None:
            msg += f"; did you mean {close!r}?"
        if self.hint:
            msg += f"; {self.hint}"
        return msg

    def _resolve(self, name: str, target: T | str) -> T:
        if not isinstance(target, str):
            return target
        try:
            return import_path(target)
        except (ImportError, AttributeError) as exc:
            raise self.load_error(
                f"{self.prefix}{self.what} {name!r} ({target}) cannot be loaded: {type(exc).__name__}: {exc}"
            ) from None

    def _ensure_loaded(self) -> None:
        if not self._loaded and self._loader is not None:
            self._loaded = True  # first: a loader's own registrations call back into the registry
            self._loader()

    # -- Mapping -----------------------------------------------------------------------------

    def __getitem__(self, name: str) -> T | str:
        return self.targets()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.targets())

    def __setitem__(self, name: str, target: T | str) -> None:
        """``registry[name] = target``: register ``name``, replacing what was registered in this
        process under it (a test's ``monkeypatch.setitem``; a user's ``AGENT_KINDS[k] = f``)."""
        self._own.pop(name, None)
        self.register(name, target)

    def __delitem__(self, name: str) -> None:
        """``del registry[name]``: :meth:`unregister`."""
        self.unregister(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.targets()

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {self.names()!r})"


def _same(old: Any, new: Any) -> bool:
    """The same registration again: the same object, or two instances of one class (a
    registry of instances whose module was imported twice)."""
    if old is new or old == new:
        return True
    return not isinstance(old, (type, str)) and not isinstance(new, (type, str)) and type(old) is type(new)
