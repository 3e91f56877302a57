"""Every results folder of a run is hidden from A0 shells, wherever it is (issue 12 §1 item 6).

The kernel mechanism: bwrap mounts an empty tmpfs over each folder of
``ani.adapters.sandbox.hidden_dirs`` in the call's own mount namespace; the runner registers its
``--out`` folder (``ani.host.results_dirs``) before any agent acts, and the registry outlives the
run so later runs hide earlier runs' folders. Before, only the checkout and the working
directory were hidden: a run writing to another folder left its records readable.

The folders here are siblings of the checkout (outside it, outside the working directory and
outside /tmp, which is private inside the sandbox anyway); each test removes its own.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from chat_server import ChatServer, call, reply

from ani.registry import create_adapter

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

ROOT = Path(__file__).resolve().parents[2]
TWO = ROOT / "tests" / "data" / "a0_two.yaml"
CANARY = "results-canary-" + secrets.token_hex(4)


@pytest.fixture
def outside():
    folder = ROOT.parent / f".a0-results-{secrets.token_hex(4)}"
    folder.mkdir()
    (folder / "earlier-run.json").write_text(CANARY + "\n")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_an_a0_agent_cannot_read_its_own_runs_out_folder(outside, tmp_path):
    """``ani run --level a0 --out <outside>`` with a scripted model whose one shell command reads
    the folder: the command sees no such file; the folder is there for the harness."""
    cmd = f"cat {outside}/earlier-run.json; ls -A {outside} | wc -l"
    s = ChatServer()
    s.script = [reply(call("shell", {"device": "e1", "command": cmd}, "c0")),
                reply(call("submit", {"summary": "read"}, "c1"))]
    cfg = tmp_path / "agent.yaml"
    cfg.write_text(f"kind: llm\nbase_url: {s.url}\nmodel: scripted\napi_key_env: null\nretry_backoff_s: 0\n")
    try:
        res = subprocess.run([sys.executable, "-m", "ani.cli", "run", "--level", "a0", "--agent-config",
                              str(cfg), "--wall-clock", "240", "--out", str(outside)],
                             cwd=ROOT, capture_output=True, text=True, timeout=600,
                             env={**os.environ, "COLUMNS": "200"})
    finally:
        s.close()
    assert (outside / "run.json").exists(), res.stdout[-3000:] + res.stderr[-3000:]
    tool = [m for m in s.requests[1]["messages"] if m["role"] == "tool"]
    assert len(tool) == 1, s.requests[1]["messages"]
    seen = tool[0]["content"]
    assert CANARY not in seen and "No such file or directory" in seen, seen
    assert (outside / "earlier-run.json").read_text() == CANARY + "\n"  # there, for the harness


def test_a_later_run_hides_an_earlier_runs_folder(outside, make_lab):
    """A folder registered by an earlier run (another process) is hidden from this process's A0
    shells through the registry alone; the router's own FRR is still reachable."""
    subprocess.run([sys.executable, "-c", f"from ani.host import results_dirs; results_dirs.register({str(outside)!r})"],
                   cwd=ROOT, check=True, env=dict(os.environ))
    lab = make_lab(TWO)
    a = create_adapter("a0", lab)
    r = a.call("shell", {"device": "r1", "command": f"cat {outside}/earlier-run.json"})
    assert r.ok is False and CANARY not in r.data["stdout"]
    assert "No such file or directory" in r.data["stderr"]
    r = a.call("shell", {"device": "r1", "command": "vtysh -c 'show running-config' | grep -c '^hostname r1'"})
    assert r.ok and r.data["stdout"].strip() == "1"
    assert json.dumps(str(outside)) not in json.dumps(r.data)
