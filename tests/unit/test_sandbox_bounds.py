"""The A0 sandbox's user-namespace entry and per-call cgroups: argv shape and capability checks
(no lab needed; the kernel's side is tests/integration/test_a0_netns_isolation.py and
test_a0_bounds.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ani.adapters import sandbox
from ani.errors import CapabilityMissing

SPEC = sandbox.SandboxSpec(netns="ani-abc123-r2", pathspace="ani-abc123-r2", hostname="r2")


def _caps(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "--cap-add"]


def test_userns_fd_enters_the_routers_user_namespace_before_dropping_to_frr() -> None:
    argv = sandbox.sandbox_argv(SPEC, "ip link", userns_fd=7)
    i = argv.index("nsenter")
    assert argv[i : i + 4] == ["nsenter", "--user=/proc/self/fd/7", "--preserve-credentials", "--"]
    assert argv.index("bwrap") < i < argv.index("setpriv")
    assert "CAP_SYS_ADMIN" in _caps(argv)  # for setns(CLONE_NEWUSER) only; setpriv drops it


def test_without_userns_fd_no_nsenter_and_no_sys_admin() -> None:
    argv = sandbox.sandbox_argv(SPEC, "ip link")
    assert "nsenter" not in argv
    assert "CAP_SYS_ADMIN" not in _caps(argv)


def test_wrap_joins_both_cgroups_before_exec(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sandbox, "CGROUP_ROOT", tmp_path)
    cg = sandbox.CallCgroup()
    argv = cg.wrap(["ip", "netns", "exec", "x", "true"])
    assert argv[:2] == ["sh", "-c"] and argv[3] == "sh"
    assert argv[4:6] == [str(tmp_path / "memory" / cg.name / "cgroup.procs"),
                         str(tmp_path / "pids" / cg.name / "cgroup.procs")]
    assert argv[6:] == ["ip", "netns", "exec", "x", "true"]
    assert cg.name.startswith(f"{sandbox.CGROUP_PREFIX}{__import__('os').getpid()}-")


@pytest.mark.parametrize("present,missing", [((), "memory and pids"), (("memory",), "pids"), (("pids",), "memory")])
def test_missing_controller_is_capability_missing(
    present: tuple[str, ...], missing: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sandbox, "CGROUP_ROOT", tmp_path)
    for c in present:
        (tmp_path / c).mkdir()
        (tmp_path / c / "cgroup.procs").write_text("")
    with pytest.raises(CapabilityMissing, match=f"cgroup v1 {missing} controller") as exc:
        sandbox.CallCgroup.check_support()
    assert str(tmp_path) in str(exc.value)
    with pytest.raises(CapabilityMissing):
        with sandbox.CallCgroup():
            pass  # pragma: no cover - never entered
