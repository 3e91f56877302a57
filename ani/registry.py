"""Adapters by name.

Built-in adapters and third-party ones register in the entry-point group
``ani.adapters`` (name -> ``module:Class``); see ``adapters/_template/``. The names are held
by :data:`ADAPTERS`, an :class:`ani.plugin_registry.Registry` (``ADAPTERS.register("mine",
"pkg.mod:MyAdapter")`` adds one in this process; names sorted).
Selection is by a config value (``level: a1`` in a campaign or run file) or the
environment variable ``ANI_LEVEL``.

    >>> from ani.registry import create_adapter
    >>> adapter = create_adapter("a1", lab)              # doctest: +SKIP
    >>> adapter = create_adapter(None, lab)              # uses $ANI_LEVEL  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ani.errors import ConfigError, LevelError, RegistryError
from ani.plugin_registry import Registry

if TYPE_CHECKING:
    from ani.lab.protocol import Devices

ENTRY_POINT_GROUP = "ani.adapters"
ENV_VAR = "ANI_LEVEL"

#: fallbacks when the distribution metadata is absent (e.g. running from a source tree)
BUILTINS: dict[str, str] = {
    "a0": "ani.adapters.a0:A0Adapter",
    "a1": "ani.adapters.a1:A1Adapter",
    "a2": "ani.adapters.a2:A2Adapter",
    "a3r": "ani.adapters.a3r:A3RAdapter",
    "a3t": "ani.adapters.a3t:A3TAdapter",
    "a4": "ani.adapters.a4:A4Adapter",
}


INSTALL_HINT = (
    "pip install the package that provides it (entry-point group ani.adapters; "
    "docs/vendor-adapter.md)"
)

#: the adapters by name: the built-ins, :meth:`Registry.register`'s, the entry points; an unknown
#: name is a LevelError (also a RegistryError and a ConfigError)
ADAPTERS: Registry[type] = Registry("adapter", group=ENTRY_POINT_GROUP, hint=INSTALL_HINT, error=LevelError,
                                   duplicate_error=RegistryError, load_error=RegistryError, replace=True)
for _name, _target in BUILTINS.items():
    ADAPTERS.register(_name, _target)


def available() -> dict[str, Any]:
    """Map of adapter name -> ``module:Class`` (or the class registered), sorted by name:
    the built-ins (which an entry point of the same name does not replace), the run-time
    registrations and the ``ani.adapters`` entry points."""
    return ADAPTERS.targets()


def resolve_name(name: str | None = None) -> str:
    """The adapter name to use: ``name`` if given, else ``$ANI_LEVEL``.

    Raises LevelError (a RegistryError and a ConfigError) if neither is set or the name is
    unknown (lists the known names, a close one and how to install one).
    """
    chosen = (name or os.environ.get(ENV_VAR) or "").strip().lower()
    known = ADAPTERS.names()
    if not chosen:
        raise LevelError(f"no adapter level given and ${ENV_VAR} is not set; known: {', '.join(known)}")
    if chosen not in known:
        raise ADAPTERS.unknown(chosen, known)
    return chosen


def unknown_level(name: str, known: Sequence[str] | None = None) -> LevelError:
    """The LevelError of an unknown level ``name``, in the words every option and field naming a
    level uses: ``unknown level 'a11'; known: a0, a1, ...; did you mean 'a1'?; pip install ...``
    (``known`` replaces the names listed, default every registered adapter)."""
    return ADAPTERS.unknown(name, known, what="level")


def get_adapter_class(name: str | None = None) -> type:
    """Import and return the adapter class for ``name`` (or ``$ANI_LEVEL``)."""
    chosen = resolve_name(name)
    return ADAPTERS.load(chosen)


def blocklist_inspects(name: str, cls: Any = None) -> bool:
    """Can the blocklist ablation inspect the calls of the adapter ``name`` (a resolved name;
    ``cls``: its class, when loaded already)? True when the class says its tools carry CLI
    command lines (``blocklist_inspects``: the built-in ``a0`` and ``a1``); an A2 / A3-T / A3-R /
    A4 call carries NETCONF XML, intents, a JSON Patch or service files, where the blocklist's
    command rules match nothing. Raises RegistryError if the adapter cannot be loaded."""
    return bool(getattr(cls if cls is not None else get_adapter_class(name), "blocklist_inspects", False))


def blocklist_levels() -> list[str]:
    """The available adapters whose calls the blocklist ablation inspects (those that load)."""
    out = []
    for name in available():
        try:
            if blocklist_inspects(name):
                out.append(name)
        except RegistryError:
            continue
    return out


def check_blocklist(name: str, cls: Any = None) -> None:
    """Refuse the blocklist ablation at a level whose calls it cannot inspect.

    Raises ConfigError: ``level a2's tools send no CLI command lines, so the blocklist
    ablation would inspect nothing there (...); it applies at: a0, a1``. RegistryError if
    ``name`` cannot be loaded. ``cls``: its class, when loaded already."""
    if not blocklist_inspects(name, cls):
        raise ConfigError(
            f"level {name}'s tools send no CLI command lines, so the blocklist ablation would inspect "
            f"nothing there (and a report would still call it blocklisted); it applies at: "
            f"{', '.join(blocklist_levels())}")


def create_adapter(name: str | None, lab: Devices | None, *, blocklist: bool | str | None = None, **kwargs: Any) -> Any:
    """Instantiate the adapter ``name`` on ``lab``.

    Args:
        name: adapter name (``a0``, ``a1``, ...), or None for ``$ANI_LEVEL``.
        lab: a running :class:`ani.lab.Lab`.
        blocklist: wrap the adapter in the blocklist ablation (True: the platform's
            default blocklist; a string: path of a YAML blocklist file); only at a level whose
            calls it inspects (:func:`check_blocklist`: ``a0``, ``a1``).
        **kwargs: passed to the adapter class (``trajectory=``, ``options=``).

    Raises:
        RegistryError: an unknown adapter, or one that cannot be loaded.
        ConfigError: ``blocklist`` at a level whose calls it cannot inspect (nothing created).
    """
    cls = get_adapter_class(name)
    if blocklist:
        check_blocklist(resolve_name(name), cls)
    adapter = cls(lab, **kwargs)
    if blocklist:
        from ani.adapters.blocklist import BlocklistAdapter

        adapter = BlocklistAdapter(adapter, None if blocklist is True else str(blocklist))
    return adapter
