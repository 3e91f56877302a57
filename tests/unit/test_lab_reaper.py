"""ani.lab.reaper's decisions, with a real owner process (a ``sleep`` this test starts and kills)
and a lab dir in a temporary folder; ``cleanup.destroy`` is recorded, not run (the real removal
of a SIGKILLed owner's lab is tests/integration/test_process_life.py)."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from ani.lab import cleanup, reaper
from ani.lab.proc import start_time


@pytest.fixture
def owner():  # type: ignore[no-untyped-def]
    p = subprocess.Popen(["sleep", "60"])
    yield p
    if p.poll() is None:
        p.kill()
    p.wait()


@pytest.fixture
def destroyed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    got: list[str] = []
    monkeypatch.setattr(cleanup, "destroy", lambda lab_id, state=None: got.append(lab_id))
    return got


def lab(tmp_path: Path, owner: subprocess.Popen, **state: object) -> Path:
    d = tmp_path / "lab1"
    d.mkdir()
    st = {"id": "lab1", "owner_pid": owner.pid, "owner_start": start_time(owner.pid), "detached": False,
          "status": "up", **state}
    (d / "state.json").write_text(json.dumps(st))
    return d


def watch_in_thread(d: Path, owner: subprocess.Popen) -> tuple[threading.Thread, list[str]]:
    out: list[str] = []
    t = threading.Thread(target=lambda: out.append(reaper.watch("lab1", d, owner.pid, start_time(owner.pid) or 0)))
    t.start()
    return t, out


def test_the_owner_dying_removes_its_lab(tmp_path, owner, destroyed):
    d = lab(tmp_path, owner)
    t, out = watch_in_thread(d, owner)
    owner.kill()
    owner.wait()
    t.join(20)
    assert out == ["destroyed"] and destroyed == ["lab1"]
    assert not (d / reaper.PID_FILE).exists()  # start() writes it, never the watching reaper


def test_start_records_the_reaper_it_started(tmp_path, owner):
    d = lab(tmp_path, owner)
    p = reaper.start("lab1", d, owner=owner.pid)
    try:
        assert (d / reaper.PID_FILE).read_text().strip() == str(p.pid)
    finally:
        p.kill()
        p.wait()


def test_a_lab_handed_over_stays(tmp_path, owner, destroyed):
    d = lab(tmp_path, owner, detached=True, status="creating")
    t, out = watch_in_thread(d, owner)
    st = json.loads((d / "state.json").read_text())
    (d / "state.json").write_text(json.dumps({**st, "status": "up"}))  # ani lab up: handed over
    t.join(20)
    assert out == ["handed over"] and destroyed == [] and owner.poll() is None


def test_a_half_created_detached_lab_of_a_dead_owner_goes(tmp_path, owner, destroyed):
    d = lab(tmp_path, owner, detached=True, status="creating")
    t, out = watch_in_thread(d, owner)
    owner.kill()
    owner.wait()
    t.join(20)
    assert out == ["destroyed"] and destroyed == ["lab1"]


def test_a_lab_removed_normally_ends_the_reaper(tmp_path, owner, destroyed):
    d = lab(tmp_path, owner)
    t, out = watch_in_thread(d, owner)
    for f in d.iterdir():
        f.unlink()
    d.rmdir()
    t.join(20)
    assert out == ["removed"] and destroyed == [] and owner.poll() is None


def test_a_lab_whose_state_names_another_owner_is_left(tmp_path, owner, destroyed):
    d = lab(tmp_path, owner, owner_pid=1)
    owner.kill()
    owner.wait()
    assert reaper.watch("lab1", d, owner.pid, 0) == "not the owner's" and destroyed == []
