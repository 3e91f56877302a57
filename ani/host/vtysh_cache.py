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
takes (see those modules). Each kind bounds its own files. The directory is the caller's; for a
block of work :func:`scoped` makes one and removes it afterwards (a campaign's loop:
:func:`ani.campaign.loop.run_campaign`; the test suite makes one per session, tests/conftest.py)::

    with scoped() as d:      # d: the directory (a new one under /tmp, or the one already set)
        ...                  # labs started here, and the processes they start, share it
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
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


@contextlib.contextmanager
def scoped() -> Iterator[Path]:
    """``ANI_VTYSH_CACHE`` for the block: when unset, a new directory (``/tmp/ani-vtysh-*``,
    0700) named by it for the block and removed, with the variable, at its end; when set, that
    directory, left as it is. Processes started in the block inherit it."""
    if os.environ.get(ENV):
        yield Path(os.environ[ENV])
        return
    made = tempfile.mkdtemp(prefix="ani-vtysh-")
    os.environ[ENV] = made
    try:
        yield Path(made)
    finally:
        if os.environ.get(ENV) == made:
            del os.environ[ENV]
        shutil.rmtree(made, ignore_errors=True)
