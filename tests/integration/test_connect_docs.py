"""The ``ani.connect`` examples of README.md and docs/quickstart.md run as written, on a lab started
as they say (``ani lab up scenarios/brownfield-small.yaml --lab demo``, here with an id of its own),
and leave it running."""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from ani.lab import Lab

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = "scenarios/brownfield-small.yaml"


def example(doc: Path) -> str:
    text = doc.read_text()
    m = re.search(r"<!-- example:connect -->\s*```python\n(.*?)\n```", text, re.S)
    assert m, f"no example:connect block in {doc}"
    assert f"lab up {SCENARIO} --lab demo" in text and "lab down demo" in text  # how the lab is started
    assert text.index("lab up") < m.start() < text.index("lab down demo")
    return m.group(1)


@pytest.fixture(scope="module")
def lab_id():
    from ani.lab.capability import check_capabilities

    try:
        check_capabilities()
    except Exception as exc:  # noqa: BLE001 - CapabilityMissing: not a lab host
        pytest.skip(f"lab unavailable on this host: {exc}")
    lab_id = "qs" + secrets.token_hex(3)
    up = subprocess.run([sys.executable, "-m", "ani.cli", "lab", "up", SCENARIO, "--lab", lab_id], cwd=ROOT,
                        capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    try:
        assert up.returncode == 0, up.stderr
        yield lab_id
    finally:
        Lab.down_id(lab_id)


def run(code: str, lab_id: str, tmp_path: Path) -> list[str]:
    assert code.count('"demo"') >= 1
    script = tmp_path / "example.py"
    script.write_text(code.replace('"demo"', repr(lab_id)))
    res = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=240,
                         stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr[-3000:]
    assert [e["status"] for e in Lab.list_labs() if e["id"] == lab_id] == ["up"]  # left running
    return res.stdout.splitlines()


def test_readme_example(lab_id, tmp_path):
    lines = run(example(ROOT / "README.md"), lab_id, tmp_path)
    assert lines[0] == str(["execute_validation", "get_running_config", "get_topology", "list_snapshots",
                            "rollback", "snapshot", "update_config"])
    assert lines[1:] == ["True True", "False unknown_device"]


def test_quickstart_example(lab_id, tmp_path):
    lines = run(example(ROOT / "docs" / "quickstart.md"), lab_id, tmp_path)
    assert lines == ["True True", "True", "True True"]
    line = "ip prefix-list PL-TENANTS seq 30 permit 198.19.7.0/24"
    assert line not in Lab.attach(lab_id).running_config("e1")  # the example undid its change
