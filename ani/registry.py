"""Adapters by name.

Built-in adapters and third-party ones register in the entry-point group
``ani.adapters`` (name -> ``module:Class``); see ``adapters/_template/``.
Selection is by a config value (``level: a1`` in a campaign or run file) or the
environment variable ``ANI_LEVEL``.

    >>> from ani.registry import create_adapter
    >>> adapter = create_adapter("a1", lab)              # doctest: +SKIP
    >>> adapter = create_adapter(None, lab)              # uses $ANI_LEVEL  # doctest: +SKIP
"""

from __future__ import annotations

import os
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

from ani.errors import LevelError, RegistryError

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


def available() -> dict[str, str]:
    """Map of adapter name -> ``module:Class`` (built-ins plus entry points)."""
    out = dict(BUILTINS)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        out[ep.name] = ep.value
    return dict(sorted(out.items()))


def resolve_name(name: str | None = None) -> str:
    """The adapter name to use: ``name`` if given, else ``$ANI_LEVEL``.

    Raises LevelError (a RegistryError and a ConfigError) if neither is set or the name is
    unknown (lists the known names).
    """
    chosen = (name or os.environ.get(ENV_VAR) or "").strip().lower()
    known = available()
    if not chosen:
        raise LevelError(f"no adapter level given and ${ENV_VAR} is not set; known: {', '.join(known)}")
    if chosen not in known:
        raise LevelError(f"unknown adapter {chosen!r}; known: {', '.join(known)}")
    return chosen


def get_adapter_class(name: str | None = None) -> type:
    """Import and return the adapter class for ``name`` (or ``$ANI_LEVEL``)."""
    chosen = resolve_name(name)
    target = available()[chosen]
    module_name, _, attr = target.partition(":")
    try:
        module = import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise RegistryError(f"adapter {chosen!r} ({target}) cannot be loaded: {exc}") from exc


def create_adapter(name: str | None, lab: Any, *, blocklist: bool | str | None = None, **kwargs: Any) -> Any:
    """Instantiate the adapter ``name`` on ``lab``.

    Args:
        name: adapter name (``a0``, ``a1``, ...), or None for ``$ANI_LEVEL``.
        lab: a running :class:`ani.lab.Lab`.
        blocklist: wrap the adapter in the blocklist ablation (True: the platform's
            default blocklist; a string: path of a YAML blocklist file).
        **kwargs: passed to the adapter class (``trajectory=``, ``options=``).
    """
    cls = get_adapter_class(name)
    adapter = cls(lab, **kwargs)
    if blocklist:
        from ani.adapters.blocklist import BlocklistAdapter

        adapter = BlocklistAdapter(adapter, None if blocklist is True else str(blocklist))
    return adapter
