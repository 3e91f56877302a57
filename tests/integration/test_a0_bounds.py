"""The per-call memory and task bounds of the A0 sandbox (issue 12, 1.4), on a real lab.

Mechanism: each call runs in cgroups of its own, cgroup v1 ``memory`` (``memory.limit_in_bytes``
and ``memory.memsw.limit_in_bytes`` = ``sandbox.CALL_MEMORY_BYTES``: past it the kernel's memcg
OOM killer kills inside the call) and ``pids`` (``pids.max`` = ``sandbox.CALL_PIDS_MAX``: fork
fails with EAGAIN), made before the call and removed after it, also when it times out.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from ani.adapters import sandbox
from ani.errors import ErrorCode
from ani.lab import memcg
from ani.registry import create_adapter

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

TWO = Path(__file__).resolve().parents[1] / "data" / "a0_two.yaml"
MiB = 1024 * 1024


@pytest.fixture
def two(make_lab):  # noqa: ANN001, ANN201
    lab = make_lab(TWO)
    return lab, create_adapter("a0", lab)


def call_cgroups() -> list[Path]:
    """This process's call cgroups present now, in both controllers (a memory one inside its
    router's memory cgroup, ani.lab.memcg)."""
    prefix = f"{sandbox.CGROUP_PREFIX}{os.getpid()}-"
    return sorted(p for c in ("memory", "pids", "memory/ani-frr-*") for p in (sandbox.CGROUP_ROOT).glob(f"{c}/{prefix}*"))


def mem_available() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no MemAvailable")


#: six processes of 400 MiB each (under the 4 GiB address-space limit of one process, 2.4 GiB in
#: all), every page written, then held
HOG = (
    "for i in 1 2 3 4 5 6; do "
    "python3 -c 'import time; b = bytearray(400 << 20); b[::4096] = b\"x\" * len(b[::4096]); time.sleep(3)' & "
    "done; wait; echo HOG-DONE"
)


def test_a_call_past_the_memory_bound_is_stopped_and_the_host_unharmed(two) -> None:  # noqa: ANN001
    lab, a = two
    low = [mem_available()]
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            low.append(mem_available())
            time.sleep(0.05)

    w = threading.Thread(target=watch)
    w.start()
    avail0 = low[0]
    try:
        t0 = time.monotonic()
        r = a.call("shell", {"device": "r1", "command": HOG})
        elapsed = time.monotonic() - t0
    finally:
        stop.set()
        w.join()
    assert r.ok is False and r.error.code == ErrorCode.RESOURCE_EXHAUSTED, r.text
    assert "memory bound" in r.error.message
    assert r.data["memory_exceeded"] is True and r.data["timed_out"] is False
    # the call never held more than its bound (the kernel's own high-water mark of its memcg) ...
    assert 0 < r.data["memory_peak_bytes"] <= sandbox.CALL_MEMORY_BYTES, r.data
    assert r.data["memory_peak_bytes"] > sandbox.CALL_MEMORY_BYTES - 200 * MiB  # ... and reached it
    # ... and the host lost at most the bound plus slack (other helpers' labs move it too), far
    # less than the 2.4 GiB the command asked for
    assert avail0 - min(low) < sandbox.CALL_MEMORY_BYTES + 600 * MiB, (avail0, min(low))
    # the memcg OOM killer killed inside the call only: the shell lived on to the end
    assert "HOG-DONE" in r.data["stdout"] and elapsed < 15
    assert call_cgroups() == []
    # the router is fine afterwards, and the next call is bounded afresh
    r = a.call("shell", {"device": "r1", "command": "vtysh -c 'show running-config' | grep -c hostname"})
    assert r.ok and r.data["memory_exceeded"] is False and r.data["memory_peak_bytes"] < 200 * MiB, r.text


def test_within_the_bound_is_untouched(two) -> None:  # noqa: ANN001
    _, a = two
    cmd = "python3 -c 'b = bytearray(300 << 20); b[::4096] = b\"x\" * len(b[::4096]); print(len(b))'"
    r = a.call("shell", {"device": "r1", "command": cmd})
    assert r.ok, r.text
    assert r.data["stdout"].strip() == str(300 << 20)
    assert 300 * MiB <= r.data["memory_peak_bytes"] <= sandbox.CALL_MEMORY_BYTES


def test_the_task_bound_stops_a_fork_flood(two) -> None:  # noqa: ANN001
    _, a = two
    cmd = f"i=0; while [ $i -lt {sandbox.CALL_PIDS_MAX + 50} ]; do sleep 30 & i=$((i+1)); done; echo FORKED"
    t0 = time.monotonic()
    r = a.call("shell", {"device": "r1", "command": cmd})
    assert time.monotonic() - t0 < 20, "the sleeps outlived the failed forks"
    assert r.ok is False and r.error.code == ErrorCode.RESOURCE_EXHAUSTED, r.text
    assert r.data["pids_exceeded"] is True and "task bound" in r.error.message
    assert call_cgroups() == []


def test_cgroups_exist_during_the_call_and_go_with_it_also_on_timeout(two) -> None:  # noqa: ANN001
    lab, _ = two
    a = create_adapter("a0", lab, options={"timeout_s": 3})
    seen: list[list[Path]] = []
    tasks: list[int] = []
    stop = threading.Event()
    nap = f"60.{os.getpid() % 1000:03d}{int(time.time()) % 1000:03d}"  # no other test's sleep

    def watch() -> None:
        while not stop.is_set():
            cgs = call_cgroups()
            if cgs:
                seen.append(cgs)
                try:
                    tasks.append(len((cgs[0] / "cgroup.procs").read_text().split()))
                except OSError:
                    pass
            time.sleep(0.05)

    w = threading.Thread(target=watch)
    w.start()
    try:
        # a process that ignores SIGTERM, a new session, a double fork: all die with the call
        r = a.call("shell", {"device": "r1", "command":
                             f"setsid sh -c 'trap \"\" TERM; sleep {nap}' & (sleep {nap} &) ; sleep {nap}"})
    finally:
        stop.set()
        w.join()
    assert r.ok is False and r.error.code == ErrorCode.TIMEOUT, r.text
    assert seen and {p.parent.name for p in seen[-1]} == {memcg.name(lab.pathspace("r1")), "pids"}
    assert max(tasks) >= 4  # the wrappers and the sleeps were in it
    assert call_cgroups() == []
    leftover = subprocess.run(["pgrep", "-u", "frr", "-f", f"^sleep {nap}$"], capture_output=True, text=True)
    assert leftover.stdout == "", leftover.stdout


def test_cgroups_of_a_dead_harness_are_swept(two) -> None:  # noqa: ANN001
    _, a = two
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = [sandbox.CGROUP_ROOT / c / f"{sandbox.CGROUP_PREFIX}{gone.pid}-deadbeef" for c in ("memory", "pids")]
    for d in stale:
        d.mkdir()
    try:
        r = a.call("shell", {"device": "r1", "command": "true"})
        assert r.ok, r.text
        assert not any(d.exists() for d in stale)
    finally:
        for d in stale:
            if d.exists():
                d.rmdir()
