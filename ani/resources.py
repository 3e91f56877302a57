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
