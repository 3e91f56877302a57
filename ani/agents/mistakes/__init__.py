"""Mistake kinds: plausible wrong versions of a variant's correct change, one module each (see
:mod:`ani.agents.mistakes.base`), made by the scripted agent with ``mistakes: {rate, kinds}``.

Importing this package registers every kind: each module of the package but ``base`` (and
names starting with ``_``) is imported, in name order, so adding a kind is one module plus its
tests and touches no list (a helper module such as ``effects`` registers nothing). :func:`mistake_kinds` is sorted by name whatever the import order.
"""

from importlib import import_module
from pkgutil import iter_modules

from ani.agents.mistakes.base import (
    DEVICE_LEVELS,
    LEVELS,
    Layer,
    Made,
    MistakeContext,
    MistakeKind,
    Mistaken,
    carry_out,
    config_lines,
    edit_distance,
    footprint,
    get_mistake,
    mistake_kinds,
    nearest,
    reached,
    register_mistake,
    unregister_mistake,
)

for _mod in sorted(m.name for m in iter_modules(__path__)):
    if _mod not in ("base", "effects") and not _mod.startswith("_"):
        import_module(f"{__name__}.{_mod}")

__all__ = [
    "DEVICE_LEVELS",
    "LEVELS",
    "Layer",
    "Made",
    "MistakeContext",
    "MistakeKind",
    "Mistaken",
    "carry_out",
    "config_lines",
    "edit_distance",
    "footprint",
    "get_mistake",
    "mistake_kinds",
    "nearest",
    "reached",
    "register_mistake",
    "unregister_mistake",
]
