"""Locate the data folders (``adapters/``, ``scenarios/``, ``campaigns/``, ...).

In a wheel they ship under ``ani/_data/``; in a source checkout (editable
install) they are top-level folders of the repository.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_path(relative: str) -> Path:
    """Absolute path of a shipped data file, e.g. ``data_path("adapters/frr.yaml")``.

    Raises FileNotFoundError naming both places looked at.
    """
    candidates = [_PKG / "_data" / relative, _PKG.parent / relative]
    for c in candidates:
        if c.exists():
            return c
    raise FileNotFoundError(f"{relative} not found (looked in {', '.join(str(c) for c in candidates)})")


def resolve(path_or_name: str | Path) -> Path:
    """A user path if it exists, else the shipped data file of that relative name."""
    p = Path(path_or_name)
    if p.exists():
        return p
    return data_path(str(path_or_name))


def shipped_like(path_or_name: str | Path, folder: str, suffixes: tuple[str, ...] = (".yaml", ".yml")) -> str | None:
    """The shipped file a missing ``path_or_name`` most likely meant, as a relative name that
    :func:`resolve` takes (``level-sweep`` -> ``campaigns/level-sweep.yaml``), or None.

    Tried in order: ``<folder>/<name>``, then ``<folder>/<name><suffix>`` and
    ``<name><suffix>`` for each suffix, where ``<name>`` is the text given (its last part when
    it names another folder). Only names inside the shipped data are returned.
    """
    name = Path(str(path_or_name)).name
    if not name or name in (".", ".."):
        return None
    tries = [f"{folder}/{name}"] + [f"{folder}/{name}{s}" for s in suffixes if not name.endswith(s)]
    for rel in tries:
        try:
            if data_path(rel).is_file():
                return rel
        except FileNotFoundError:
            continue
    return None
