"""Telling a failed A0 sandbox setup from the command's own result, and retrying it (no lab:
a fake bwrap that speaks bubblewrap 0.8's ``--json-status-fd`` protocol)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ani.adapters import sandbox
from ani.adapters.sandbox import RunResult, bwrap_exit_code, retry_setup, run_with_status, setup_failed
from ani.errors import HostFault, SandboxSetupFailed

#: bwrap 0.8 as seen from its status fd: ``child-pid`` after the clone; then either the setup dies
#: (message, exit 1, no ``exit-code``) or the command runs and ``exit-code`` follows its exit.
#: The setup fails while the file named by $FAIL_FILE holds a positive count (decremented per try).
FAKE_BWRAP = r'''
import os, subprocess, sys
argv = sys.argv[1:]
fd = int(argv[argv.index("--json-status-fd") + 1])
cmd = argv[argv.index("--") + 1:]
os.write(fd, b'{ "child-pid": 4242, "pid-namespace": 4026532000 }\n')
fail = os.environ.get("FAIL_FILE")
left = int(open(fail).read()) if fail else 0
if left > 0:
    open(fail, "w").write(str(left - 1))
    sys.stderr.write("bwrap: Can't bind mount /oldroot/ on /newroot/: Unable to apply mount flags: "
                     'remount "/newroot/run/frr/ani-x-r1": No such file or directory\n')
    sys.exit(1)
rc = subprocess.run(cmd, pass_fds=()).returncode
os.write(fd, ('{ "exit-code": %d }\n' % rc).encode())
sys.exit(rc)
'''


@pytest.fixture
def fake_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    script = tmp_path / "bwrap.py"
    script.write_text(FAKE_BWRAP)
    count = tmp_path / "fail"

    def attempts(fail_times: int, command: str, timeout_s: float = 10.0) -> RunResult:
        count.write_text(str(fail_times))
        monkeypatch.setenv("FAIL_FILE", str(count))
        calls = []

        def attempt(seconds: float) -> RunResult:
            calls.append(seconds)
            res, status = run_with_status(
                lambda fd: [sys.executable, str(script), "--json-status-fd", str(fd), "--", "/bin/sh", "-c", command],
                timeout_s=seconds, max_bytes=4096,
            )
            res.setup_failed = setup_failed(res, status)
            return res

        monkeypatch.setattr(sandbox, "SETUP_RETRY_PAUSE_S", 0.0)
        res = retry_setup(attempt, timeout_s, what="r1 (ani-x-r1)")
        assert len(calls) == res.attempts
        return res

    return attempts


def test_exit_code_read_from_the_status_objects() -> None:
    assert bwrap_exit_code(b'{ "child-pid": 7, "mnt-namespace": 1 }\n{ "exit-code": 3 }\n') == 3
    assert bwrap_exit_code(b'{ "child-pid": 7 }\n') is None  # setup died: no exit-code
    assert bwrap_exit_code(b"") is None  # died before its clone
    assert bwrap_exit_code(b'{ "child-pid": 7 }\n{ "exit-co') is None  # cut short
    assert bwrap_exit_code(b'{ "exit-code": "1" }\n') is None  # not bwrap's shape
    assert bwrap_exit_code(b'{ "exit-code": 0 }\n') == 0


def _res(**kw: object) -> RunResult:
    base = dict(exit_status=1, stdout="", stderr="", stdout_truncated=False, stderr_truncated=False,
                stdout_bytes=0, stderr_bytes=0, timed_out=False, elapsed_s=0.1)
    return RunResult(**{**base, **kw})  # type: ignore[arg-type]


def test_setup_failed_only_without_exit_code_and_not_killed() -> None:
    started = b'{ "child-pid": 7 }\n{ "exit-code": 1 }\n'
    died = b'{ "child-pid": 7 }\n'
    assert setup_failed(_res(), died) is True
    assert setup_failed(_res(), started) is False
    # killed at the timeout or by the OOM killer: bwrap wrote nothing more, yet the command ran
    assert setup_failed(_res(exit_status=None, timed_out=True), died) is False
    assert setup_failed(_res(exit_status=-9, memory_exceeded=True), died) is False


def test_a_transient_setup_failure_is_retried(fake_bwrap) -> None:  # noqa: ANN001
    res = fake_bwrap(2, "echo ran")
    assert (res.exit_status, res.stdout, res.stderr, res.attempts) == (0, "ran\n", "", 3)


def test_a_persistent_setup_failure_is_a_host_fault(fake_bwrap) -> None:  # noqa: ANN001
    with pytest.raises(SandboxSetupFailed) as info:
        fake_bwrap(sandbox.SETUP_ATTEMPTS + 5, "echo ran")
    exc = info.value
    assert isinstance(exc, HostFault) and exc.attempts == sandbox.SETUP_ATTEMPTS
    assert str(exc).startswith("r1 (ani-x-r1): the A0 sandbox could not be set up (3 attempt(s))")
    assert "Can't bind mount /oldroot/ on /newroot/" in str(exc) and "\n" not in str(exc)
    assert "ani-x-r1" in exc.stderr


def test_a_command_printing_a_bwrap_error_is_its_own_result(fake_bwrap) -> None:  # noqa: ANN001
    msg = "bwrap: Can't bind mount /oldroot/ on /newroot/: No such file or directory"
    res = fake_bwrap(0, f"echo \"{msg}\" >&2; exit 1")
    assert (res.exit_status, res.stderr, res.attempts, res.setup_failed) == (1, msg + "\n", 1, False)


def test_no_retry_past_the_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "SETUP_RETRY_PAUSE_S", 0.0)
    tried = []

    def attempt(seconds: float) -> RunResult:
        tried.append(seconds)
        return _res(setup_failed=True, stderr="bwrap: boom\n")

    with pytest.raises(SandboxSetupFailed) as info:
        retry_setup(attempt, 0.0, what="r1")
    assert tried == [0.0] and info.value.attempts == 1 and str(info.value).endswith(": bwrap: boom")


def test_argv_passes_the_status_fd_to_bwrap_only() -> None:
    spec = sandbox.SandboxSpec(netns="ani-abc123-r2", pathspace="ani-abc123-r2", hostname="r2")
    argv = sandbox.sandbox_argv(spec, "true", status_fd=11)
    i = argv.index("--json-status-fd")
    assert argv[i + 1] == "11" and argv.index("bwrap") < i < argv.index("--")
    assert "--json-status-fd" not in sandbox.sandbox_argv(spec, "true")
