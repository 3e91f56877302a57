"""docs/protocol.md's runnable example runs as written (so the page cannot rot)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from procs import labs_owned_by, owner  # tests/procs.py

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "protocol.md"


def example_block(marker: str = "<!-- example:protocol -->") -> str:
    """The ```python block right after ``marker`` in docs/protocol.md."""
    text = DOC.read_text()
    m = re.search(re.escape(marker) + r"\s*```python\n(.*?)\n```", text, re.S)
    assert m, f"no python block after {marker} in {DOC}"
    return m.group(1)


def test_block_is_found_and_uses_the_public_api() -> None:
    code = example_block()
    assert "from ani.lab import Lab" in code and 'create_adapter("a0", lab)' in code
    compile(code, str(DOC), "exec")


def test_example_runs(make_lab, tmp_path: Path) -> None:  # noqa: ANN001
    del make_lab  # only for its capability check (skips on hosts without a lab)
    script = tmp_path / "example.py"
    script.write_text(example_block())
    proc = subprocess.Popen(
        [sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    who = owner(proc.pid)  # PID and start time, as its labs' state names their owner
    try:
        out, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-3000:]
    lines = out.splitlines()
    assert lines[0].startswith("get_topology read-only - Retrieve network topology")
    assert lines[1].startswith("shell  - Run a shell command on a router")
    assert lines[2] == "nodes: e1"
    assert "True 0 False" in lines
    # the BGP summary of e1 shows its sessions to both route reflectors, established
    summary = out[out.index("True 0 False") :]
    assert re.search(r"^100\.64\.255\.1\s+4\s+\d+.*\s\d+\s+\d+\s+N/A", summary, re.M), summary[:2000]
    assert "True True ['addr']" in lines
    assert any(ln.startswith("False unknown_device unknown device 'e9'; known: c1, c2, e1") for ln in lines)
    assert "False invalid_arguments shell: command: Field required" in lines
    assert lines[-1].startswith("shell {") and "'readOnlyHint': False, 'destructiveHint': True" in lines[-1]
    # the with-block downed the lab: nothing of it is left
    assert labs_owned_by({who}) == {}
