"""A campaign folder cannot be corrupted or silently grown (issue 23 §3): one coordinator at a
time (a real second process holds the lock), SIGTERM / SIGHUP stop as Ctrl-C does, and the
interrupted message counts what runs.jsonl holds. The runs are the fakes of test_campaign_runner.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest
from rich.console import Console
from test_campaign_runner import Setup, World, spec  # noqa: F401 - the fixture and fakes

from ani.campaign import results as results_mod
from ani.campaign.loop import run_campaign
from ani.campaign.results import read_runs
from ani.errors import FolderInUse
from ani.host import results_dirs

HOLDER = textwrap.dedent("""
    import subprocess, sys, time
    from ani.host import results_dirs
    held = results_dirs.lock(sys.argv[1])
    child = subprocess.Popen(["sleep", "120"])  # a program it starts (as a run starts a lab)
    print(child.pid, flush=True)
    time.sleep(120)
""")


def _console(path):
    return Console(file=open(path, "w"), width=300)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: signal.Signals(s).name)
def test_sigterm_and_sighup_stop_the_campaign_as_ctrl_c_with_the_resume_command(spec, tmp_path, sig):  # noqa: F811
    from ani.lab.cleanup import install_signal_handlers

    install_signal_handlers()  # as the ani command does first (run_campaign does it too)
    before = signal.getsignal(sig)
    s = Setup(World(), {("a1", 2): int(sig)})
    out = tmp_path / "res"
    con = _console(tmp_path / "c.txt")
    res = run_campaign(spec, out, progress=False, deps=s.deps(), source="camp.yaml", console=con)
    con.file.close()
    text = " ".join((tmp_path / "c.txt").read_text().split())
    assert res.interrupted and res.stopped_by == sig
    assert s.world.up_labs == []  # the run's lab was taken down
    assert len(read_runs(out)) == 4  # the runs before the signal; the stopped one is not a record
    name = signal.Signals(sig).name
    assert (f"interrupted ({name}): 4 runs finished in this session and kept in {out}; "
            f"resume with: ani campaign run camp.yaml --resume {out}") in text
    assert signal.getsignal(sig) == before  # the labs' handler again: the campaign's is gone after it


def test_the_interrupted_message_counts_a_record_whose_write_was_interrupted(spec, tmp_path, monkeypatch):  # noqa: F811
    """Ctrl-C while the second record is fsynced: it is in runs.jsonl, so it is counted
    (before: "1 run(s) finished" where runs.jsonl held 2)."""
    calls = []
    real = results_mod.os.fsync

    def fsync(fd):
        calls.append(fd)
        real(fd)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(results_mod.os, "fsync", fsync)
    out = tmp_path / "res"
    con = _console(tmp_path / "c.txt")
    res = run_campaign(spec, out, progress=False, deps=Setup(World()).deps(), source="c.yaml", console=con)
    con.file.close()
    assert res.interrupted and len(read_runs(out)) == 2
    assert [r.run_id for r in res.ran] == ["a0-onboard-site-s1", "a1-onboard-site-s1"]
    assert "interrupted: 2 runs finished in this session" in " ".join((tmp_path / "c.txt").read_text().split())


def test_a_second_coordinator_is_refused_with_the_holders_pid_and_kill_9_frees_the_folder(spec, tmp_path):  # noqa: F811
    out = tmp_path / "res"
    small = spec.model_copy(update={"variants": 1})
    run_campaign(small, out, progress=False, deps=Setup(World()).deps())
    lines = (out / "runs.jsonl").read_text()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdout=subprocess.PIPE, text=True)
    child = None
    try:
        child = int(holder.stdout.readline())  # the lock is held from here
        s = Setup(World())
        with pytest.raises(FolderInUse) as ei:
            run_campaign(spec, out, resume=True, progress=False, deps=s.deps())
        assert ei.value.holder_pid == holder.pid
        assert f"--resume {out}: in use by another campaign (PID {holder.pid})" in str(ei.value)
        assert s.world.labs == [] and (out / "runs.jsonl").read_text() == lines  # nothing started or written
        holder.kill()  # kill -9: no handler runs; its child (a program it started) lives on
        holder.wait(30)
        assert subprocess.run(["kill", "-0", str(child)]).returncode == 0
        res = run_campaign(spec, out, resume=True, progress=False, deps=Setup(World()).deps())
        assert len(res.ran) == 6 and len(read_runs(out)) == 9
    finally:
        holder.kill()
        holder.wait(30)
        if child is not None:
            subprocess.run(["kill", "-9", str(child)], check=False)


def test_the_lock_is_released_and_taken_again(tmp_path):
    with results_dirs.lock(tmp_path) as held:
        with pytest.raises(FolderInUse, match="in use by another campaign"):
            results_dirs.lock(tmp_path, "--out")
    assert held._fd == -1
    results_dirs.lock(tmp_path).release()


def _interrupt_the_summary(monkeypatch):
    """A Ctrl-C after the loop ended (as a second copy of one landed): while the summary is
    written, the catch-all's path."""
    from ani.campaign import loop

    def finish(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "_finish", finish)


def test_a_ctrl_c_that_escapes_the_loop_carries_the_records_this_session_stored(spec, tmp_path, monkeypatch):  # noqa: F811
    from ani.campaign.loop import CampaignInterrupted

    out = tmp_path / "res"
    small = spec.model_copy(update={"variants": 1})
    run_campaign(small, out, progress=False, deps=Setup(World()).deps())  # 3 runs before this session
    _interrupt_the_summary(monkeypatch)
    with pytest.raises(CampaignInterrupted) as ei:
        run_campaign(spec, out, resume=True, progress=False, deps=Setup(World()).deps(), source="c.yaml")
    assert len(read_runs(out)) == 9 and len(ei.value.ran) == 6  # this session's, not the folder's
    assert ei.value.message() == (f"interrupted: 6 runs finished in this session and kept in {out}; "
                                  f"resume with: ani campaign run c.yaml --resume {out}")


def test_ani_campaign_run_counts_the_stored_runs_when_a_ctrl_c_escapes_the_loop(spec, tmp_path, monkeypatch):  # noqa: F811
    """Before: "interrupted before the first run started; nothing to keep" (exit 130) with 2
    records in runs.jsonl and no resume command (issue 23 §3, 2 of 5 Ctrl-C tries on a pty)."""
    from typer.testing import CliRunner

    from ani.campaign import loop
    from ani.cli import app

    real = loop.run_campaign
    monkeypatch.setattr(loop, "load_for_run", lambda *a, **k: spec)
    monkeypatch.setattr(loop, "run_campaign", lambda *a, **k: real(*a, **{**k, "deps": Setup(World()).deps()}))
    _interrupt_the_summary(monkeypatch)
    f = tmp_path / "camp.yaml"
    f.write_text("name: t\n")
    out = tmp_path / "res"
    res = CliRunner().invoke(app, ["campaign", "run", str(f), "--out", str(out), "--no-progress", "--jobs", "1"])
    assert res.exit_code == 130, res.output
    text = " ".join(res.stderr.split())
    assert len(read_runs(out)) == 9
    assert (f"interrupted: 9 runs finished in this session and kept in {out}; "
            f"resume with: ani campaign run {f} --resume {out}") in text
    assert "nothing to keep" not in text
