"""tests/conftest.py's session directories (``SESSION_DIRS``): a session killed before its
pytest_unconfigure leaves its ``ani-test-*`` directories to the next session, which removes
those whose owner (PID and start time in the name) is gone, and no other."""

from __future__ import annotations

import os
import tempfile

from conftest import SESSION_DIRS, _remove_dirs_of_dead_sessions

from ani.host.proc import start_time


def test_only_the_directories_of_dead_sessions_go(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    prefix = SESSION_DIRS["ANI_VTYSH_CACHE"]
    me = os.getpid()
    alive = tmp_path / f"{prefix}{me}.{start_time(me)}-abc"
    restarted = tmp_path / f"{prefix}{me}.{start_time(me) + 1}-abc"  # this PID, another process's start
    dead = tmp_path / f"{prefix}4194305.1-xyz"  # above any pid_max
    other = tmp_path / f"{prefix}made-by-hand"
    unrelated = tmp_path / "ani-test-other-1.1-x"
    for d in (alive, restarted, dead, other, unrelated):
        d.mkdir()
        (d / "f").write_text("x")
    _remove_dirs_of_dead_sessions(prefix)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (alive, other, unrelated))
