"""A directory where labs share what vtysh printed: ``ANI_VTYSH_CACHE``.

A vtysh process costs ~37 ms of CPU (it builds its command graph at every start), and labs of one
topology print the same texts again and again: every run of a campaign and every test starts
from the same configuration and often reaches the same ones. With ``ANI_VTYSH_CACHE`` naming a
directory, two kinds of vtysh output are kept there, each in a subdirectory named by its kind and
the vtysh program (path, size, modification time: the version prints in them, and a changed
vtysh starts empty)::

    subdir("runconf")  -> <dir>/runconf-<16 hex>   show running-config, by router name and the
                                                   daemons' own texts (ani.lab.runconf)
    subdir("marks")    -> <dir>/marks-<16 hex>     frr-reload's `vtysh -m` runs, by the text marked
                                                   (ani.device.frr_reload)
    subdir(...)        -> None                     the variable unset or empty: nothing shared

Only outputs that are a function of what names them are kept, and each reader checks what it
takes (see those modules). The directory is the caller's: nothing here creates or removes it
(the test suite makes one per session, tests/conftest.py); each kind bounds its own files.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from ani.errors import ProgramMissing
from ani.host.programs import program

#: the environment variable naming the shared directory
ENV = "ANI_VTYSH_CACHE"


def subdir(kind: str) -> Path | None:
    """``<ANI_VTYSH_CACHE>/<kind>-<16 hex digits of the vtysh identity>``, or None when the
    variable is unset or empty. Not created here. Raises nothing."""
    value = os.environ.get(ENV)
    if not value:
        return None
    return Path(value) / f"{kind}-{hashlib.sha256(vtysh_identity().encode()).hexdigest()[:16]}"


@functools.lru_cache(maxsize=1)
def vtysh_identity() -> str:
    """``path:size:mtime_ns`` of the vtysh program (its path alone if it cannot be read;
    ``"vtysh missing"`` without one, when nothing it prints can be kept anyway)."""
    try:
        path = program("vtysh")
    except ProgramMissing:
        return "vtysh missing"
    try:
        st = os.stat(path)
    except OSError:
        return path
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"
