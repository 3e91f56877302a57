"""``hold_controlling_terminal`` (ani.lab.terminal): a session leader without a terminal gets one
it keeps, so a pty opened later (as scrapli opens vtysh's, without O_NOCTTY) is not acquired and
its hang-up cannot kill the process; a process that does not lead its session is left alone. Run
in real child processes: the controlling terminal is per session."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import os, signal
    from ani.lab.terminal import _has_terminal, hold_controlling_terminal

    before = _has_terminal()
    first, second = hold_controlling_terminal(), hold_controlling_terminal()
    # what scrapli does: open a fresh pty's slave without O_NOCTTY, then close both ends
    m, s = os.openpty()
    path = os.ttyname(s)
    os.close(s)
    fd = os.open(path, os.O_RDWR)       # would become the controlling terminal of a bare leader
    got_hup = []
    signal.signal(signal.SIGHUP, lambda *a: got_hup.append(1))
    os.close(fd)
    os.close(m)                          # the hang-up of that pty
    print(before, first, second, _has_terminal(), bool(got_hup))
    """
)


def run(new_session: bool) -> str:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL, start_new_session=new_session)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def test_a_session_leader_gets_a_terminal_of_its_own_once_and_no_hangup():
    # no terminal before; held now (True), not again (False); has one; the later pty's hang-up
    # did not reach it
    assert run(new_session=True) == "False True False True False"


def test_a_process_that_does_not_lead_its_session_is_left_alone():
    out = run(new_session=False).split()
    assert out[1:3] == ["False", "False"]  # nothing done, whatever terminal pytest runs under
