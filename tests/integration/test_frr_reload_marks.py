"""frr-reload's mark runs answered from ``ANI_VTYSH_CACHE`` (ani.device.frr_reload.MARK_SHIM) on a
real router: the shim prints what FRR's vtysh prints for a mark, from a file and from stdin, keeps
only clean marks; a reload through it ends where one through FRR's vtysh ends, with the same error
lines; a reload repeated marks nothing again.

One router (tests/data/frr_limits.yaml: bgpd and ospfd), put back to its start after each test.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from ani.device.frr_reload import frr_reload, vtysh_bindir
from ani.device.parse import parse
from ani.host import vtysh_cache
from ani.host.programs import program

pytestmark = pytest.mark.integration

LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = Path(__file__).parent.parent / "data" / "frr_limits.yaml", "mrk", False
ADD = (" neighbor 10.0.0.2 description marks test\n", " timers bgp 10 30\n")


@pytest.fixture(scope="module")
def lab(module_lab: Any) -> Any:
    return module_lab


@pytest.fixture
def start(lab: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """r1's running config at the start; r1 put back to it after the test, by FRR's vtysh."""
    text = lab.running_config("r1")
    yield text
    monkeypatch.delenv(vtysh_cache.ENV, raising=False)
    frr_reload(lab, "r1", text)
    assert parse(lab.running_config("r1")) == parse(text)


def _changed(text: str) -> str:
    """``text`` with :data:`ADD`'s lines in ``router bgp``."""
    head, _, tail = text.partition(" neighbor 10.0.0.2 shutdown\n")
    return head + " neighbor 10.0.0.2 shutdown\n" + "".join(ADD) + tail


def _marks() -> dict[str, int]:
    d = vtysh_cache.subdir("marks")
    return {p.name: p.stat().st_mtime_ns for p in d.iterdir()} if d and d.is_dir() else {}


def test_the_shim_marks_as_vtysh_does(lab: Any, start: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(vtysh_cache.ENV, str(tmp_path))
    run = tmp_path / "run"
    (run / "ps").mkdir(parents=True)
    (run / "ps" / "vtysh.conf").write_text("")
    shim = Path(vtysh_bindir(run)) / "vtysh"
    good, bad = run / "good.conf", run / "bad.conf"
    good.write_text(_changed(start.partition("Current configuration:\n")[2]))  # as frr-reload marks it
    bad.write_text("router bgp 64500\n bogus line\n")
    common = ["--config_dir", str(run), "-N", "ps", "-m", "-f"]

    def mark(vtysh: str, path: Path, stdin: bool) -> subprocess.CompletedProcess[str]:
        return subprocess.run([vtysh, *common, "-" if stdin else str(path)], input=path.read_text() if stdin else "",
                              capture_output=True, text=True, timeout=30)

    for path in (good, bad):
        want = mark(program("vtysh"), path, False)
        for stdin in (False, True, False, True):  # a miss, then answers from the cache
            got = mark(str(shim), path, stdin)
            assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr), (path, stdin)
    assert want.returncode != 0 and "Unknown command" in want.stderr  # the bad text: a failed mark
    assert len(_marks()) == 1  # the clean mark only
    assert subprocess.run([str(shim), *common[:4], "-c", "show version"], capture_output=True, text=True,
                          timeout=30).stdout == subprocess.run([program("vtysh"), *common[:4], "-c", "show version"],
                                                               capture_output=True, text=True, timeout=30).stdout


def test_a_reload_through_the_shim_ends_as_one_through_vtysh(lab: Any, start: str, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    target = _changed(start)
    plain = frr_reload(lab, "r1", target)
    after_plain = lab.running_config("r1")
    assert plain.ok and all(line.strip() in after_plain for line in ADD)
    frr_reload(lab, "r1", start)
    monkeypatch.setenv(vtysh_cache.ENV, str(tmp_path))
    cached = frr_reload(lab, "r1", target)  # every mark a miss: kept
    assert cached.ok and lab.running_config("r1") == after_plain and cached.errors == plain.errors
    assert len(_marks()) == 3  # target, running before and after pass 1
    back = frr_reload(lab, "r1", start)
    assert back.ok and parse(lab.running_config("r1")) == parse(start)
    kept = _marks()
    again = frr_reload(lab, "r1", target)  # every text marked before: no mark ran (none re-kept)
    assert again.ok and lab.running_config("r1") == after_plain
    assert _marks() == kept
