"""A0 sandbox setup racing other labs' run-dir mounts (real bwrap, real namespaces).

Every router of every lab on the host has its FRR run dir as its own tmpfs under
``/run/frr/ani-<lab>-<router>`` (:mod:`ani.lab.frr`). A lab that comes or goes while a sandbox is
being set up changes the mount table under bwrap's walk of it; before the fix a sandboxed call
then failed with ``bwrap: Can't bind mount /oldroot/run/frr/... : No such file or directory`` and
the agent was shown that as its command's failure (measured here before the fix: 3 of 60
``run_in_sandbox`` calls and 1 of 30 ``shell`` calls). Here a thread mounts and unmounts tmpfs dirs
under ``/run/frr/ani-<this test's id>-*`` (only those: never another lab's) in a tight loop while
many sandboxed commands run. The fix has two parts, both exercised: the sandbox no longer binds
``/run`` from the host (``sandbox.root_binds``), and a setup that fails all the same (told by
bwrap's status fd, never by the command's output) is retried, then raised as SandboxSetupFailed.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from ani.adapters import sandbox
from ani.errors import SandboxSetupFailed
from ani.registry import create_adapter
from mount_churn import churn_run_dirs  # tests/, on sys.path by its conftest

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

TWO = Path(__file__).resolve().parents[1] / "data" / "a0_two.yaml"
#: sandboxed calls per test (before the fix 3 of 60 failed; docs/performance.md)
CALLS = 60
CHURN_DIRS = 8


@pytest.fixture
def churn() -> Iterator[list[Path]]:
    """Run dirs ``/run/frr/ani-race<random>-c<k>`` mounted and unmounted in a loop during the test."""
    with churn_run_dirs(CHURN_DIRS) as dirs:
        yield dirs


def test_run_in_sandbox_survives_mount_churn(make_lab, churn) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    spec = create_adapter("a0", lab).sandbox_spec("r1")
    bad = []
    for i in range(CALLS):
        r = sandbox.run_in_sandbox(spec, f"echo call-{i}; hostname")
        if r.exit_status != 0 or r.stdout != f"call-{i}\nr1\n":
            bad.append((i, r.exit_status, r.stderr.strip()))
    assert bad == [], f"{len(bad)}/{CALLS} sandboxed calls failed under mount churn: {bad[:3]}"


def test_shell_survives_mount_churn(make_lab, churn) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    a = create_adapter("a0", lab)
    bad = []
    for i in range(CALLS // 2):
        r = a.call("shell", {"device": "r2", "command": f"echo shell-{i}"})
        if not r.ok or r.data["stdout"] != f"shell-{i}\n":
            bad.append((i, r.error, r.data.get("stderr") if r.data else None))
    assert bad == [], f"{len(bad)}/{CALLS // 2} shell calls failed under mount churn: {bad[:3]}"


def test_churn_leaves_nothing() -> None:
    """The churn helper itself: it removes every mount and dir it made."""
    with churn_run_dirs(3) as dirs:
        assert all(d.parent == Path("/run/frr") for d in dirs)
    assert not any(d.exists() for d in dirs)


def test_command_printing_a_bwrap_error_is_its_own_result(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    a = create_adapter("a0", lab)
    fake = "bwrap: Can't bind mount /oldroot/ on /newroot/: No such file or directory"
    r = a.call("shell", {"device": "r1", "command": f"echo \"{fake}\" >&2; exit 1"})
    assert r.ok is False and r.error.code == "command_failed", r.text
    assert r.data["exit_status"] == 1 and r.data["stderr"] == fake + "\n"
    assert not any(e.get("event") == "harness_fault" for e in a.trajectory.events)
    res = sandbox.run_in_sandbox(a.sandbox_spec("r1"), f"echo \"{fake}\" >&2; exit 1")
    assert (res.exit_status, res.attempts, res.setup_failed) == (1, 1, False)


def test_persistent_setup_failure_is_a_host_fault(make_lab) -> None:  # noqa: ANN001
    """A real bwrap whose setup always fails (the run dir it binds does not exist) ran nothing:
    SandboxSetupFailed after every attempt, not a command result."""
    lab = make_lab(TWO)
    spec = create_adapter("a0", lab).sandbox_spec("r1")
    broken = sandbox.SandboxSpec(netns=spec.netns, pathspace=f"ani-missing{secrets.token_hex(3)}", hostname="r1")
    with pytest.raises(SandboxSetupFailed) as info:
        sandbox.run_in_sandbox(broken, "echo RAN")
    assert info.value.attempts == sandbox.SETUP_ATTEMPTS
    assert "bwrap:" in info.value.stderr and "never ran" in str(info.value)


def test_shell_setup_failure_is_internal_with_a_host_fault_event(make_lab, monkeypatch) -> None:  # noqa: ANN001
    """Through the A0 adapter: a setup that always fails (a real bwrap told to bind a source that
    does not exist) is an ``internal`` result and a ``harness_fault`` of kind ``host``: the
    runner's infra_error, never the agent's command_failed."""
    lab = make_lab(TWO)
    a = create_adapter("a0", lab)
    real = sandbox.sandbox_argv
    missing = f"/nonexistent-ani-race-{secrets.token_hex(3)}"

    def broken(*args, **kw):  # noqa: ANN002, ANN003, ANN202
        argv = real(*args, **kw)
        i = argv.index("--die-with-parent")
        return argv[:i] + ["--ro-bind", missing, "/mnt/x"] + argv[i:]

    monkeypatch.setattr(sandbox, "sandbox_argv", broken)
    r = a.call("shell", {"device": "r1", "command": "echo RAN"})
    assert r.ok is False and r.error.code == "internal", r.text
    assert "could not be set up (3 attempt(s))" in r.error.message and missing in r.error.message
    faults = [e for e in a.trajectory.events if e.get("event") == "harness_fault"]
    assert [f["kind"] for f in faults] == ["host"]
