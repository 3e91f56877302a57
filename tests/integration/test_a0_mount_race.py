"""A0 sandbox setup racing other labs' run-dir mounts (real bwrap, real namespaces).

Every router of every lab on the host has its FRR run dir as its own tmpfs under
``/run/frr/ani-<lab>-<router>`` (:mod:`ani.lab.frr`). A lab that comes or goes while a sandbox is
being set up changes the mount table under bwrap's walk of it; before the fix a sandboxed call
then failed with ``bwrap: Can't bind mount /oldroot/run/frr/... : No such file or directory`` and
the agent was shown that as its command's failure. Here a thread mounts and unmounts tmpfs dirs
under ``/run/frr/ani-<this test's id>-*`` (only those: never another lab's) in a tight loop while
many sandboxed commands run.
"""

from __future__ import annotations

import secrets
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ani.adapters import sandbox
from ani.registry import create_adapter

pytestmark = pytest.mark.integration

TWO = Path(__file__).resolve().parents[1] / "data" / "a0_two.yaml"
#: sandboxed calls per test; before the fix about 1 in 10 of them failed (docs/performance.md)
CALLS = 60
CHURN_DIRS = 8


@pytest.fixture
def churn() -> Iterator[threading.Event]:
    """Mount/unmount tmpfs dirs ``/run/frr/ani-<random>-c<k>`` in a loop until the test ends; yields
    an event set once the loop has cycled at least once. Removes every mount and dir it made."""
    tag = f"ani-race{secrets.token_hex(3)}"
    dirs = [Path("/run/frr") / f"{tag}-c{k}" for k in range(CHURN_DIRS)]
    stop, cycled = threading.Event(), threading.Event()

    def loop() -> None:  # what lab up / lab down do to a run dir: mkdir, mount; umount, rmdir
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
        assert cycled.wait(10), "the mount loop did not run"
        yield cycled
    finally:
        stop.set()
        t.join(10)
        for d in dirs:
            while d.is_dir() and subprocess.run(["mountpoint", "-q", str(d)], check=False).returncode == 0:
                subprocess.run(["umount", str(d)], check=False)
            if d.is_dir():
                d.rmdir()


def test_run_in_sandbox_survives_mount_churn(make_lab, churn) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    spec = create_adapter("a0", lab).sandbox_spec("r1")
    bad = []
    for i in range(CALLS):
        r = sandbox.run_in_sandbox(spec, f"echo call-{i}; hostname")
        if r.exit_status != 0 or r.stdout != f"call-{i}\nr1\n":
            bad.append((i, r.exit_status, r.stderr.strip()))
    assert bad == [], f"{len(bad)}/{CALLS} sandboxed calls failed under mount churn: {bad[:3]}"


def test_shell_survives_mount_churn(make_lab, churn) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    a = create_adapter("a0", lab)
    bad = []
    for i in range(CALLS // 2):
        r = a.call("shell", {"device": "r2", "command": f"echo shell-{i}"})
        if not r.ok or r.data["stdout"] != f"shell-{i}\n":
            bad.append((i, r.error, r.data.get("stderr") if r.data else None))
    assert bad == [], f"{len(bad)}/{CALLS // 2} shell calls failed under mount churn: {bad[:3]}"
