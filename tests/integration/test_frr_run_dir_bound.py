"""FRR's disk use is bounded per router, whatever path a ``log file`` names (issue 12 §1 item 3).

The mechanism: each router's run dir ``/var/run/frr/<pathspace>`` is its own tmpfs of
``ani.lab.frr.RUN_DIR_BYTES`` (32 MiB; mounted by ``frr.prepare``, unmounted by every teardown),
and in the daemons' private mount namespace every other host file system is read-only (their
``/var/tmp`` is a private 16 MiB tmpfs). Before, the run dir was a plain directory on the host's
disk (``/run`` is not a tmpfs here): ``log file .../big.log debugging`` plus debug logging wrote
2.1 GB. The daemons run outside the A0 sandbox, so the bound must hold at the lab level: a
full run dir makes the log target's writes fail (ENOSPC) and the daemons go on routing; the
other router is untouched. (A0's vtysh broker also refuses ``log file``: this bound is the one
that holds whatever path reaches the daemons.) One lab of tests/data/a0_two.yaml per test.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ani.lab import frr
from ani.registry import create_adapter

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

TWO = Path(__file__).resolve().parents[1] / "data" / "a0_two.yaml"
DEBUG = ["debug zebra events", "debug zebra rib detailed", "debug zebra kernel", "debug zebra packet detail",
         "debug zebra nexthop detail"]


def run_mount(pathspace: str) -> tuple[str, str] | None:
    """(fstype, super options) of the run dir's mount, None if it is not a mount point."""
    target = os.path.realpath(frr.run_dir(pathspace))
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        if left.split(" ")[4] == target:
            fstype, _source, opts = right.split(" ")[:3]
            return fstype, opts
    return None


def churn(lab, router: str, rounds: int) -> None:
    for n in range(rounds):
        lab.vtysh(router, ["configure terminal", *[f"ip route 10.{n % 200}.{i}.0/24 Null0" for i in range(100)]],
                  timeout=30)
        lab.vtysh(router, ["configure terminal", *[f"no ip route 10.{n % 200}.{i}.0/24 Null0" for i in range(100)]],
                  timeout=30)


def test_each_run_dir_is_a_bounded_tmpfs_and_teardown_unmounts_it(make_lab):
    lab = make_lab(TWO)
    pss = [lab.pathspace(r) for r in lab.routers]
    for ps in pss:
        fstype, opts = run_mount(ps)
        assert fstype == "tmpfs" and f"size={frr.RUN_DIR_BYTES // 1024}k" in opts, opts
    lab.down()
    assert [run_mount(ps) for ps in pss] == [None, None]
    assert not any(frr.run_dir(ps).exists() for ps in pss)


def test_a_log_file_fills_only_its_routers_bounded_space_and_frr_keeps_routing(make_lab):
    lab = make_lab(TWO)
    a0 = create_adapter("a0", lab)
    rd = frr.run_dir(lab.pathspace("r1"))
    log = rd / "big.log"
    steps = ["configure terminal", f"log file /var/run/frr/{rd.name}/big.log debugging", "log commands", *DEBUG]
    # the issue's steps from the A0 shell of r1: refused at A0's FRR entry point (the broker)
    r = a0.call("shell", {"device": "r1", "command": "vtysh " + " ".join(f"-c '{c}'" for c in steps)})
    assert not r.ok and r.error.code == "not_allowed" and not log.exists(), r.text
    # the bound holds whatever path reaches the daemons: the same steps through the harness's vtysh
    res = lab.vtysh("r1", steps)
    assert res.ok, res.stdout + res.stderr
    # the harness pre-fills the space to 1 MiB short of the bound (faster than minutes of
    # churn), then the daemon's own debug logging runs into the bound
    with open(rd / "filler", "wb") as fh:
        try:
            fh.write(b"\0" * (frr.RUN_DIR_BYTES - 2**20 - log.stat().st_size))
        except OSError:
            pass
    churn(lab, "r1", 30)
    st = os.statvfs(rd)
    used = (st.f_blocks - st.f_bfree) * st.f_frsize
    assert st.f_bfree == 0 and used <= frr.RUN_DIR_BYTES, (used, frr.RUN_DIR_BYTES)
    assert log.stat().st_size < 2 * 2**20  # the daemon wrote up to the bound and no further
    size = log.stat().st_size
    churn(lab, "r1", 5)
    assert log.stat().st_size == size  # full: writes fail, nothing more lands
    # FRR goes on: every daemon alive, config still changes, r2 untouched
    assert lab.dead_daemons("r1") == [] and lab.dead_daemons("r2") == []
    res = lab.vtysh("r1", ["configure terminal", "ip route 198.51.100.0/24 Null0"])
    assert res.ok, res.stdout + res.stderr
    time.sleep(0.5)
    assert "198.51.100.0/24" in lab.vtysh("r1", "show ip route 198.51.100.0/24").stdout
    assert "hostname r2" in lab.running_config("r2")
    r2 = frr.run_dir(lab.pathspace("r2"))
    assert os.statvfs(r2).f_bfree * os.statvfs(r2).f_frsize > frr.RUN_DIR_BYTES - 2**20


@pytest.mark.parametrize("path", ["/run/netns/{tag}.log", "/tmp/{tag}.log", "/var/lib/{tag}.log",
                                  "/dev/shm/{tag}.log", "/etc/frr/{tag}.log", "/sys/fs/cgroup/{tag}.log"])
def test_a_log_file_anywhere_else_on_the_host_is_refused_by_the_daemons(make_lab, path):
    """Read-only host file systems in the daemons' mount namespace (``/run/netns`` too: only its
    nsfs files stay writable, ``frr.KEEP_RW_MOUNTS``)."""
    lab = make_lab(TWO)
    target = path.format(tag=f"ani-{lab.id}-log")
    res = lab.vtysh("r1", ["configure terminal", f"log file {target} debugging"])
    assert f"can't open logfile {target}" in res.stdout + res.stderr
    assert not Path(target).exists()


def _daemon_mounts(lab, router: str = "r1") -> tuple[set[str], str, tuple[int, int, int]]:
    """In ``router``'s zebra's mount namespace: the writable mount points outside
    ``frr.KEEP_RW_MOUNTS`` (its pathspace spelled ``PS``), ``/``'s options, and ``/var/tmp/frr``'s
    (mode, uid, gid)."""
    pid = int(frr.pid_file(lab.pathspace(router), "zebra").read_text())
    ps = lab.pathspace(router)
    top: dict[str, str] = {}  # the last mount on each point: the one seen (a stack hides the rest)
    for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines():
        f = line.split(" ")
        top[f[4]] = f[5]
    rw = {t.replace(ps, "PS") for t, opts in top.items()
          if "rw" in opts.split(",") and not t.startswith(frr.KEEP_RW_MOUNTS)}
    root_opts = top["/"]
    st = os.stat(f"/proc/{pid}/root/var/tmp/frr")
    return rw, root_opts, (st.st_mode & 0o777, st.st_uid, st.st_gid)


def test_the_daemons_mount_namespace_is_the_same_through_the_shell_steps(make_lab, monkeypatch):
    """frr.REMOUNT_RO_PY makes the daemons' mounts in one process; where that Python cannot run,
    the shell steps make the same: / read-only, the run dir and a private /var/tmp writable, and
    /var/tmp/frr the frr user's, 0700."""
    import pwd

    first = make_lab(TWO)
    one = _daemon_mounts(first)
    monkeypatch.setattr(frr, "remount_python", lambda: "/nonexistent/python3")
    second = make_lab(TWO)
    other = _daemon_mounts(second)
    frr_user = pwd.getpwnam("frr")
    # the one process made the first lab's mounts (at every router): with the run dir under
    # /var/run, a link to /run, it failed everywhere and the shell steps made them (2026-12-07)
    for r in first.routers:
        assert not (frr.run_dir(first.pathspace(r)) / frr.SETUP_ERRORS).exists(), r
    assert "/nonexistent/python3" in (frr.run_dir(second.pathspace("r1")) / frr.SETUP_ERRORS).read_text()
    assert one == other
    rw, root_opts, var_tmp_frr = one
    assert rw == {"/run/frr/PS", "/var/tmp"} or rw == {"/var/run/frr/PS", "/var/tmp"}, rw
    assert root_opts.startswith("ro") and var_tmp_frr == (0o700, frr_user.pw_uid, frr_user.pw_gid)
