"""ani.host.vtysh_cache: the shared directory's subdirectories and the scope a campaign's loop
runs in (its users: tests/unit/test_lab_runconf.py, tests/integration/test_frr_reload_marks.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ani.host import vtysh_cache


def test_subdirectories_are_named_by_kind_and_vtysh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(vtysh_cache.ENV, raising=False)
    assert vtysh_cache.subdir("marks") is None
    monkeypatch.setenv(vtysh_cache.ENV, "")
    assert vtysh_cache.subdir("marks") is None
    monkeypatch.setenv(vtysh_cache.ENV, str(tmp_path))
    marks, runconf = vtysh_cache.subdir("marks"), vtysh_cache.subdir("runconf")
    assert marks.parent == runconf.parent == tmp_path and not marks.exists()
    assert marks.name.startswith("marks-") and runconf.name.startswith("runconf-")
    assert marks.name[len("marks-"):] == runconf.name[len("runconf-"):] and len(marks.name) == len("marks-") + 16
    vtysh_cache.vtysh_identity.cache_clear()
    monkeypatch.setattr(vtysh_cache, "program", lambda name: str(tmp_path / "other-vtysh"))
    try:
        assert vtysh_cache.subdir("marks") != marks  # another vtysh: other texts
    finally:
        vtysh_cache.vtysh_identity.cache_clear()


def test_scoped_makes_a_directory_for_the_block_and_removes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(vtysh_cache.ENV, raising=False)
    with vtysh_cache.scoped() as d:
        assert os.environ[vtysh_cache.ENV] == str(d) and d.is_dir() and d.stat().st_mode & 0o777 == 0o700
        (d / "marks-x").mkdir()
        seen = subprocess.run([sys.executable, "-c", f"import os; print(os.environ['{vtysh_cache.ENV}'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        assert seen == str(d)  # a process started in the block shares it
    assert vtysh_cache.ENV not in os.environ and not d.exists()


def test_scoped_keeps_a_directory_already_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(vtysh_cache.ENV, str(tmp_path))
    with pytest.raises(RuntimeError), vtysh_cache.scoped() as d:
        assert d == tmp_path
        raise RuntimeError("the block failed")
    assert os.environ[vtysh_cache.ENV] == str(tmp_path) and tmp_path.is_dir()
