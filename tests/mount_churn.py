"""Mount churn like other labs' coming and going, for the A0 setup-race test and benchmark.

:func:`churn_run_dirs` mounts and unmounts tmpfs dirs ``/run/frr/ani-<prefix><random>-c<k>``
(mkdir, mount; umount, rmdir: what ``ani lab up`` / ``down`` do to each router's run dir) in a
tight loop in a thread. It touches only the dirs it made, and removes every mount and dir of
them when the ``with`` block ends, also on an error.
"""

from __future__ import annotations

import secrets
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def churn_run_dirs(n: int, prefix: str = "race") -> Iterator[list[Path]]:
    """Churn ``n`` run dirs while the block runs; yields their paths once the loop has cycled once."""
    tag = f"ani-{prefix}{secrets.token_hex(3)}"
    dirs = [Path("/run/frr") / f"{tag}-c{k}" for k in range(n)]
    stop, cycled = threading.Event(), threading.Event()

    def loop() -> None:
        while not stop.is_set():
            for d in dirs:
                d.mkdir(exist_ok=True)
                subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", tag, str(d)], check=False)
            for d in dirs:
                subprocess.run(["umount", str(d)], check=False)
                d.rmdir()
            cycled.set()

    t = threading.Thread(target=loop, daemon=True)
    try:
        t.start()
        if not cycled.wait(10):
            raise RuntimeError("the mount churn loop did not run")
        yield dirs
    finally:
        stop.set()
        t.join(10)
        for d in dirs:
            while d.is_dir() and subprocess.run(["mountpoint", "-q", str(d)], check=False).returncode == 0:
                subprocess.run(["umount", str(d)], check=False)
            if d.is_dir():
                d.rmdir()
