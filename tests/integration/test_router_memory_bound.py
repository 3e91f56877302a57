"""Each router's memory bound (issue 23 §1), and what a router writes stays inside what the lab removes.

Mechanism (``ani.lab.memcg``): each router's FRR daemons, what runs through its ``enter`` script,
the A0 broker's vtysh for it and every A0 call on it (the call's memory cgroup is made inside
the router's) share one memory cgroup ``ani-frr-<lab id>-<router>``; kernel memory a call
charges (routes) stays charged to the router after the call. Past the bound the kernel's OOM
killer kills inside the router only.

The allocations here do not go through the A0 broker's line check (the host side runs
``vtysh -N`` directly), so they hold whatever the broker refuses; each lab gets a small bound
(:data:`BOUND`) so every test takes seconds and little memory.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from procs import EMPTY, footprint

from ani.adapters import sandbox
from ani.errors import ErrorCode
from ani.lab import cleanup, frr, memcg, proc
from ani.lab.frr import uts_argv
from ani.registry import create_adapter

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TWO = ROOT / "tests" / "data" / "a0_two.yaml"
LAB_NETCONF = False  # conftest's make_lab: these tests reach the routers through vtysh and A0 only
MiB = 1024 * 1024
#: the routers' bound in these tests (the default is memcg.DEFAULT_ROUTER_MEMORY_BYTES, 1 GiB)
BOUND = 64 * MiB
#: the issue's probe: a regular expression with nested repetition (bgpd 22 MB -> 1.16 GB unbounded)
NESTED = "(((.{1,100}){1,100}){1,100})"


@pytest.fixture
def two(make_lab):  # noqa: ANN001, ANN201
    return make_lab(TWO, router_memory_bytes=BOUND)


def host_vtysh(lab, router: str, *lines: str) -> proc.ExecResult:  # noqa: ANN001
    """``vtysh -N`` of ``router`` run by the host directly: outside every cgroup, no broker."""
    ps = lab.pathspace(router)
    cmd = "exec vtysh -N " + ps + "".join(f" -c {shlex.quote(x)}" for x in lines)
    return proc.run(uts_argv(lab.netns(router), router, cmd), timeout=60)


def procs_of(cg: Path) -> set[int]:
    return {int(p) for p in (cg / "cgroup.procs").read_text().split()}


def test_each_routers_frr_runs_in_its_own_bounded_cgroup_gone_at_teardown(two) -> None:  # noqa: ANN001
    lab = two
    for r in lab.routers:
        cg = memcg.path(lab.pathspace(r))
        assert cg.name == f"ani-frr-{lab.id}-{r}"
        assert memcg.usage(lab.pathspace(r)).limit == BOUND
        pids = lab.daemon_pids(r)
        assert set(pids) == {"zebra", "staticd", "bgpd"} and set(pids.values()) <= procs_of(cg), (pids, procs_of(cg))
    assert sorted(memcg.lab_cgroups(lab.id)) == sorted(memcg.path(lab.pathspace(r)) for r in lab.routers)
    lab.down()
    assert memcg.lab_cgroups(lab.id) == [] and footprint(lab.id) == EMPTY


def test_a_daemon_driven_past_the_bound_stops_at_it_inside_its_router(two) -> None:  # noqa: ANN001
    lab = two
    ps1, ps2 = lab.pathspace("r1"), lab.pathspace("r2")
    before2 = memcg.usage(ps2)
    t0 = time.monotonic()
    host_vtysh(lab, "r1", "configure terminal", f"bgp as-path access-list X permit {NESTED}")
    assert time.monotonic() - t0 < 20
    u = memcg.usage(ps1)
    assert u.oom_kills >= 1 and u.peak <= BOUND, u  # stopped at the bound, not at 1.16 GB
    assert lab.dead_daemons("r1") == ["bgpd"]  # the daemon that grew, and only it
    assert u.current < BOUND
    # the other router is untouched
    assert lab.dead_daemons("r2") == [] and memcg.usage(ps2).oom_kills == before2.oom_kills
    assert "hostname r2" in lab.running_config("r2") and "router bgp 64502" in lab.running_config("r2")
    # the vtysh the broker runs for a line (joined to the router's cgroup by memcg.wrap) is bounded too
    r = proc.run(memcg.wrap(ps1, uts_argv(lab.netns("r1"), "r1", f"exec vtysh -N {ps1} -c {shlex.quote('find ' + NESTED)}")),
                 timeout=60)
    assert r.rc == -signal.SIGKILL or r.rc == 128 + signal.SIGKILL, r
    assert memcg.usage(ps1).peak <= BOUND
    lab.down()
    assert footprint(lab.id) == EMPTY


def test_the_brokers_vtysh_and_an_a0_call_run_inside_the_routers_cgroup(two, monkeypatch) -> None:  # noqa: ANN001
    lab = two
    ps = lab.pathspace("r1")
    seen: list[list[str]] = []
    real = sandbox.run_capped

    def recording(argv, **kw):  # noqa: ANN001, ANN003, ANN202
        seen.append(list(argv))
        return real(argv, **kw)

    monkeypatch.setattr(sandbox, "run_capped", recording)
    a = create_adapter("a0", lab)
    r = a.call("shell", {"device": "r1", "command": "vtysh -c 'show running-config' | grep -c '^hostname r1'"})
    assert r.ok and r.data["stdout"] == "1\n", r.text
    # the broker runs vtysh through the lab's node_argv: the router's entry script, which joins
    # the router's memory cgroup before it enters the netns
    enter = lab.node_argv("r1", [])
    broker = [argv for argv in seen if "-N" in argv and ps in argv]
    assert broker and all(argv[:len(enter)] == enter for argv in broker), broker
    assert memcg.join_script(ps) in Path(enter[0]).read_text()
    call = [argv for argv in seen if "bwrap" in argv]
    assert call and all(any(str(memcg.path(ps)) in x for x in argv) for argv in call)  # nested memory cgroup


def test_kernel_routes_added_by_calls_stay_counted_against_the_router(make_lab) -> None:  # noqa: ANN001
    # the kernel offers no per-netns route limit (net.ipv4.route.max_size is gone, IPv6's no longer
    # bounds FIB entries, measured on Linux 6.18): the memory the routes take is charged to the
    # memory cgroup of the process that added them, so an A0 call's routes count against its
    # router, also after the call
    lab = make_lab(TWO, router_memory_bytes=2 * BOUND)  # room for zebra's backlog of route messages
    ps = lab.pathspace("r1")
    a = create_adapter("a0", lab)
    add = ("python3 -c 'import sys\nfor i in range({n}): print(\"route replace 10.%d.%d.%d/32 dev lo\" % "
           "(100 + (i >> 16), (i >> 8) & 255, i & 255))' | ip -batch - 2>/dev/null; ip -4 route show | wc -l")
    base = memcg.usage(ps).current
    r = a.call("shell", {"device": "r1", "command": add.format(n=5000)})
    assert r.ok and int(r.data["stdout"]) >= 5000, r.text
    assert memcg.usage(ps).current - base > 1 * MiB  # 5,000 routes, charged to r1 after the call
    # many more than the router's bound holds: stopped at it; the router stays within it
    r = a.call("shell", {"device": "r1", "command": add.format(n=1_000_000)})
    u = memcg.usage(ps)
    # the kernel killed the largest process of the router: the call's ip (as measured; counted in
    # the call's cgroup) or a daemon (counted in the router's)
    assert r.ok is False and (r.data["memory_exceeded"] or u.oom_kills >= 1), r.text
    if r.data["memory_exceeded"]:
        assert r.error.code == ErrorCode.RESOURCE_EXHAUSTED and f"router r1 ({2 * BOUND} bytes" in r.error.message
    assert u.peak <= 2 * BOUND and u.current <= 2 * BOUND
    assert int(lab.exec("r1", ["sh", "-c", "ip -4 route show | wc -l"], timeout=60).stdout) < 1_000_000
    assert lab.dead_daemons("r2") == []
    lab.down()
    assert footprint(lab.id) == EMPTY


def test_write_memory_stays_inside_what_the_lab_removes(two) -> None:  # noqa: ANN001
    # vtysh's `write memory` renames frr.conf to frr.conf.sav and writes a new frr.conf, in the
    # router's /etc/frr/<pathspace>: the lab's teardown removes that directory
    lab = two
    etc = frr.etc_dir(lab.pathspace("r1"))
    a = create_adapter("a0", lab)
    r = a.call("shell", {"device": "r1", "command": "vtysh -c 'write memory' && vtysh -c 'write memory'"})
    assert r.ok, r.text
    assert sorted(p.name for p in etc.iterdir()) == ["frr.conf", "frr.conf.sav", "vtysh.conf"]
    assert not any(p.name.endswith(".sav") for p in frr.ETC_ROOT.iterdir())  # nothing next to it
    lab.down()
    assert not etc.exists() and footprint(lab.id) == EMPTY


CRASHING_OWNER = textwrap.dedent("""
    import os, signal, sys
    from ani.lab import Lab
    from ani.registry import create_adapter
    lab = Lab(sys.argv[1], netconf=False, ssh=False, router_memory_bytes=int(sys.argv[2])).up()
    r = create_adapter("a0", lab).call("shell", {"device": "r1", "command": "vtysh -c 'write memory'"})
    print(lab.id, r.ok, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_crashed_labs_saved_config_and_cgroups_are_removed() -> None:
    """A lab whose owner died by SIGKILL after `write memory`: its reaper removes its FRR dirs
    (frr.conf.sav with them) and its routers' cgroups; ``Lab.down_stale`` runs the same
    ``cleanup.destroy`` for it (not run here: it would remove other people's stale labs)."""
    p = subprocess.run([sys.executable, "-c", CRASHING_OWNER, str(TWO), str(BOUND)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    lab_id, ok = p.stdout.split()[:2]
    assert ok == "True" and p.returncode == -signal.SIGKILL, p.stdout + p.stderr
    try:
        end = time.monotonic() + 30
        while footprint(lab_id) != EMPTY and time.monotonic() < end:
            time.sleep(0.2)
        assert footprint(lab_id) == EMPTY
    finally:
        cleanup.destroy(lab_id)


def test_stale_router_cgroups_are_found_and_removed_with_their_lab() -> None:
    """Router cgroups whose lab dir is gone (a crash mid-teardown) make the lab stale for
    ``Lab.down_stale`` and go with it, with an A0 call's cgroup left inside one."""
    lab_id = "zz" + os.urandom(3).hex()
    cg = memcg.create(f"ani-{lab_id}-r1", BOUND)
    (cg / f"{sandbox.CGROUP_PREFIX}999999999-deadbeef").mkdir()
    try:
        assert lab_id in memcg.lab_ids_present() and cleanup.exists(lab_id)
        cleanup.destroy(lab_id)
        assert not cg.exists() and memcg.lab_cgroups(lab_id) == []
    finally:
        memcg.remove_lab(lab_id)
