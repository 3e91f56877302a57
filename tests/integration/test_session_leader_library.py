"""A program that uses the SDK as a library while it leads its session (a script run by
``setsid``, as a systemd service, as a container's PID 1) is not killed by the pseudo-terminals
opened below it (``ani.lab.terminal.hold_controlling_terminal``): before the fix such a script died
of SIGHUP (exit 129) inside ``Lab.up()``, and with SIGHUP ignored its next vtysh session read EOF.
The ``ani`` command itself is covered by ``test_process_life.py``."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from procs import EMPTY, footprint  # the lab's footprint on the host (tests/procs.py)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent

SCRIPT = textwrap.dedent(
    """
    import os, signal, sys
    from ani.lab import Lab
    from ani.registry import create_adapter
    from ani.lab.topology import load_topology

    if sys.argv[1] == "ignore-hup":
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    print("leader", os.getsid(0) == os.getpid(), flush=True)
    lab = Lab(load_topology("tests/data/tri-ospf-ibgp.yaml"))
    print("lab", lab.id, flush=True)
    lab.up()
    try:
        adapter = create_adapter("a1", lab)
        adapter.open()
        for router in ["r1", "r2", "r1"]:  # each A1 call opens and closes a vtysh pty
            r = adapter.call("get_running_config", {"device": router})
            print("call", router, r.ok, "hostname " + router in r.text, flush=True)
        adapter.close()
    finally:
        lab.down()
    print("done", flush=True)
    """
)


@pytest.mark.parametrize("sighup", ["default", "ignore-hup"])
def test_a_session_leading_library_script_survives_its_vtysh_sessions(lab_host, sighup):
    p = subprocess.run([sys.executable, "-c", SCRIPT, sighup], cwd=ROOT, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, start_new_session=True, timeout=300)
    out = p.stdout + p.stderr
    lab_id = next((line.split()[1] for line in p.stdout.splitlines() if line.startswith("lab ")), None)
    if lab_id is not None:
        assert footprint(lab_id) == EMPTY or p.returncode != 0, footprint(lab_id)
    assert p.returncode != 128 + signal.SIGHUP, f"killed by SIGHUP:\n{out[-3000:]}"
    assert p.returncode == 0, out[-3000:]
    lines = p.stdout.splitlines()
    assert "leader True" in lines  # the script really led its session
    assert [x for x in lines if x.startswith("call ")] == [
        "call r1 True True", "call r2 True True", "call r1 True True"]
    assert lines[-1] == "done"
