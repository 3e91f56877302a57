"""The results folders of this machine's runs, so the A0 sandbox can hide every one of them.

    register(out_dir)      # the runner, before any agent acts: this run's folder
    known()                # the sandbox (ani.adapters.sandbox.hidden_dirs): all of them

A run's folder (``ani campaign run --out``, ``ani run --out``, or the default under
``results/``) holds records and trajectories: an agent that can read them (earlier runs'
answers, this run's own trajectory) is not the agent the benchmark measures (issue 12 §1 item 6).
Folders are kept in this process (always) and appended to a registry file that outlives it,
``$ANI_STATE_DIR/results-dirs`` (default ``/var/lib/ani/results-dirs``, one absolute path per
line), so later runs hide earlier runs' folders wherever they are. The registry's own directory
is hidden too (:func:`known` includes it). Writing the registry is best effort (a read-only
``/var/lib`` loses only the earlier-runs part; this process's folders stay hidden).
"""

from __future__ import annotations

import os
from pathlib import Path

_THIS_PROCESS: set[Path] = set()


def state_dir() -> Path:
    """``$ANI_STATE_DIR``, else ``/var/lib/ani`` (the registry's directory)."""
    return Path(os.environ.get("ANI_STATE_DIR") or "/var/lib/ani")


def registry_file() -> Path:
    return state_dir() / "results-dirs"


def _read() -> list[Path]:
    try:
        text = registry_file().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [Path(ln) for ln in text.splitlines() if ln.startswith("/")]


def register(folder: str | Path) -> Path:
    """Record ``folder`` (made absolute, symlinks resolved) as a results folder; returns it.

    Never raises for the registry file (best effort, see the module doc)."""
    real = Path(os.path.realpath(Path(folder).expanduser()))
    _THIS_PROCESS.add(real)
    if real in _read():
        return real
    try:
        state_dir().mkdir(mode=0o700, parents=True, exist_ok=True)
        with registry_file().open("a", encoding="utf-8") as fh:
            fh.write(f"{real}\n")
    except OSError:
        pass
    return real


def known() -> list[Path]:
    """Every results folder registered here or by earlier runs that exists now, plus the
    registry's directory (sorted, unique)."""
    found = {p for p in (*_THIS_PROCESS, *_read()) if p.is_dir()}
    if state_dir().is_dir():
        found.add(Path(os.path.realpath(state_dir())))
    return sorted(found)
