"""What the A0 sandbox permits and refuses, on a real lab with real bwrap.

Each test states one line of the table in docs/protocol.md ("A0 sandbox").
"""

from __future__ import annotations

import os
import pwd
import uuid
from pathlib import Path

import pytest

from ani.registry import create_adapter

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

TWO = Path(__file__).resolve().parents[1] / "data" / "a0_two.yaml"


@pytest.fixture
def two(make_lab):  # noqa: ANN001, ANN201
    lab = make_lab(TWO)
    return lab, create_adapter("a0", lab)


def sh(adapter, command: str, device: str = "r1"):  # noqa: ANN001, ANN201
    return adapter.call("shell", {"device": device, "command": command})


# -- refused --------------------------------------------------------------------------------------


def test_host_files_are_read_only(two) -> None:  # noqa: ANN001
    lab, a = two
    tag = uuid.uuid4().hex[:8]
    other_etc = Path("/etc/frr") / lab.pathspace("r2")
    targets = [
        f"/root/a0-{tag}",
        f"/etc/a0-{tag}",
        f"/usr/local/a0-{tag}",
        f"/var/lib/a0-{tag}",
        f"{lab.dir}/a0-{tag}",
        f"{other_etc}/a0-{tag}",
        f"/etc/frr/../frr-{tag}",
    ]
    r = sh(a, "; ".join(f"touch {t} && echo WROTE {t}" for t in targets))
    assert "WROTE" not in r.data["stdout"], r.text
    assert r.ok is False  # the last touch failed
    for t in targets:
        assert not Path(t).exists(), t
    # the other router's config is untouched and was not even visible
    r = sh(a, f"ls {other_etc}")
    assert r.ok is False and "No such file or directory" in r.data["stderr"]


def test_scratch_space_is_private_and_gone_after_the_call(two) -> None:  # noqa: ANN001
    _, a = two
    tag = uuid.uuid4().hex[:8]
    r = sh(a, f"echo hi > /tmp/a0-{tag} && cat /tmp/a0-{tag} && ls -A /tmp | wc -l")
    assert r.ok and r.data["stdout"] == "hi\n1\n"  # an empty /tmp of its own
    assert not Path(f"/tmp/a0-{tag}").exists()
    r = sh(a, f"cat /tmp/a0-{tag}")
    assert r.ok is False  # not kept between calls


def test_kernel_sysctls_are_read_only_net_ones_are_the_routers(two) -> None:  # noqa: ANN001
    lab, a = two
    r = sh(a, "cat /proc/sys/kernel/hung_task_warnings > /proc/sys/kernel/hung_task_warnings")
    assert r.ok is False and "Read-only file system" in r.data["stderr"]
    r = sh(a, "sysctl -w net.ipv4.ip_default_ttl=77")
    assert r.ok, r.text
    assert lab.exec("r1", ["sysctl", "-n", "net.ipv4.ip_default_ttl"]).stdout.strip() == "77"
    assert lab.exec("r2", ["sysctl", "-n", "net.ipv4.ip_default_ttl"]).stdout.strip() != "77"
    assert Path("/proc/sys/net/ipv4/ip_default_ttl").read_text().strip() != "77"  # not the host's


def test_other_routers_frr_is_invisible(two) -> None:  # noqa: ANN001
    lab, a = two
    r = sh(a, "ls -A /var/run/frr /run/frr /etc/frr; ls -A /run")
    assert r.ok, r.text
    out = r.data["stdout"]
    assert "ani-" not in out and lab.pathspace("r2") not in out
    # its own config files are there; no FRR socket at all (the daemons' vty sockets stay
    # outside: vtysh reaches them through the broker, ani.adapters.vtybroker)
    assert "frr.conf" in out and ".vty" not in out and "zserv" not in out
    # /run holds only frr (empty) and the broker's socket dir
    assert r.data["stdout"].rstrip().splitlines()[-2:] == ["frr", "vtysh-broker"]
    for cmd in (
        f"vtysh -N {lab.pathspace('r2')} -c 'show running-config'",
        f"ls /var/run/frr/{lab.pathspace('r2')}",
        f"ls /etc/frr/{lab.pathspace('r2')}",
    ):
        r = sh(a, cmd)
        assert r.ok is False, cmd
        assert "hostname r2" not in r.text and "10.255.2.2" not in r.text


def test_other_namespaces_are_invisible_and_unreachable(two) -> None:  # noqa: ANN001
    lab, a = two
    r = sh(a, "ip netns list; ls -A /run/netns")
    assert lab.netns("r2") not in r.text
    assert r.data["stdout"] == ""
    # no CAP_SYS_ADMIN: cannot enter or make namespaces, cannot mount
    for cmd in ("unshare -n true", "nsenter -t 1 -n true", "mount -t tmpfs none /mnt", "chroot / true"):
        r = sh(a, cmd)
        assert r.ok is False, cmd


def test_processes_outside_are_invisible_and_unkillable(two) -> None:  # noqa: ANN001
    lab, a = two
    zebra_pid = int((Path("/var/run/frr") / lab.pathspace("r1") / "zebra.pid").read_text())
    r = sh(a, "ls /proc | grep -E '^[0-9]+$' | wc -l; kill -9 $(cat /var/run/frr/zebra.pid); echo rc=$?")
    count, rc = r.data["stdout"].split()
    assert int(count) <= 5  # bwrap's init, sh, ls, grep, wc
    assert rc != "rc=0"
    assert os.path.exists(f"/proc/{zebra_pid}")
    assert "hostname r1" in lab.running_config("r1")  # FRR still answers


def test_identity_capabilities_environment(two, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    _, a = two
    monkeypatch.setenv("ANI_A0_SECRET", "leak")
    r = sh(a, "id -un; id -Gn; grep -E '^Cap(Eff|Bnd)|^NoNewPrivs' /proc/self/status; env | sort")
    assert r.ok, r.text
    lines = r.data["stdout"].splitlines()
    assert lines[0] == "frr"
    assert set(lines[1].split()) == {"frr", "frrvty"}
    caps = dict(line.split(":\t") for line in lines[2:5])
    assert caps == {"CapEff": "0000000000003000", "CapBnd": "0000000000003000", "NoNewPrivs": "1"}
    env = dict(line.split("=", 1) for line in lines[5:])
    assert "ANI_A0_SECRET" not in env and "VIRTUAL_ENV" not in env
    assert env["HOME"] == "/tmp" and env["USER"] == "frr"
    r = sh(a, "cat /etc/shadow")
    assert r.ok is False and "Permission denied" in r.data["stderr"]
    assert pwd.getpwnam("frr")  # the test's premise


def test_hostname_and_sysfs_are_the_routers(two) -> None:  # noqa: ANN001
    _, a = two
    r = sh(a, "hostname; uname -n; ls /sys/class/net | sort | tr '\\n' ' '", device="r2")
    assert r.data["stdout"] == "r2\nr2\neth-r1 lo "


# -- permitted ------------------------------------------------------------------------------------


def test_router_network_tools_work(two) -> None:  # noqa: ANN001
    lab, a = two
    r = sh(a, "ping -c 1 -W 2 10.1.12.2 >/dev/null && echo reach; ss -ltn >/dev/null && echo ss; tc qdisc show dev lo >/dev/null && echo tc")
    assert r.ok, r.text
    assert r.data["stdout"].split() == ["reach", "ss", "tc"]
    r = sh(a, "ip link add a0v0 type veth peer name a0v1 && ip link set a0v0 up && ip -br link show a0v0")
    assert r.ok and r.changed, r.text
    assert "a0v0" in lab.exec("r1", ["ip", "-br", "link"]).stdout
    assert "a0v0" not in lab.exec("r2", ["ip", "-br", "link"]).stdout


def test_write_memory_writes_this_routers_config_only(two) -> None:  # noqa: ANN001
    lab, a = two
    conf1 = Path("/etc/frr") / lab.pathspace("r1") / "frr.conf"
    conf2 = Path("/etc/frr") / lab.pathspace("r2") / "frr.conf"
    before2 = conf2.read_bytes()
    r = sh(a, "vtysh -c 'configure terminal' -c 'ip route 192.0.2.128/25 Null0' && vtysh -c 'write memory'")
    assert r.ok, r.text
    assert "ip route 192.0.2.128/25 Null0" in conf1.read_text()
    assert conf2.read_bytes() == before2


def test_the_routers_config_dir_cannot_fill_the_host_disk(two) -> None:  # noqa: ANN001
    # /etc/frr/<pathspace> is on the host's disk: new files there, or a config file grown
    # without bound, would fill it (and outlive the call); only the existing files are writable,
    # each at most the tmpfs size
    lab, a = two
    etc = Path("/etc/frr") / lab.pathspace("r1")
    before = {p.name for p in etc.iterdir()}
    r = sh(a, "dd if=/dev/zero of=/etc/frr/a0-big bs=1M count=80; dd if=/dev/zero of=/etc/frr/frr.conf bs=1M count=80")
    assert r.ok is False
    assert {p.name for p in etc.iterdir()} == before
    assert (etc / "frr.conf").stat().st_size <= 64 * 1024 * 1024
    assert sum(p.stat().st_size for p in etc.iterdir()) <= 2 * 64 * 1024 * 1024
    # write memory still writes this router's frr.conf
    r = sh(a, "vtysh -c 'configure terminal' -c 'hostname r1' && vtysh -c 'write memory'")
    assert r.ok, r.text
    assert "hostname r1" in (etc / "frr.conf").read_text()


def test_frr_daemons_cannot_be_made_to_write_host_files(two) -> None:  # noqa: ANN001
    # the daemons run outside the sandbox: `log file PATH` sent through vtysh makes them open
    # PATH, so their own mount namespace keeps the host's file systems read-only
    lab, a = two
    tag = uuid.uuid4().hex[:8]
    targets = [f"/tmp/a0-log-{tag}", f"/etc/frr/{lab.pathspace('r2')}/a0-log-{tag}", f"/var/lib/a0-log-{tag}"]
    r = sh(a, "vtysh -c 'configure terminal' " + " ".join(f"-c 'log file {t}'" for t in targets))
    for t in targets:
        assert not Path(t).exists(), (t, r.text)
    # the daemons still work: FRR configuration and forwarding sysctls through zebra
    r = sh(a, "vtysh -c 'configure terminal' -c 'no log file' -c 'ip route 192.0.2.0/25 Null0' -c 'ip forwarding'")
    assert r.ok, r.text
    assert "ip route 192.0.2.0/25 Null0" in lab.running_config("r1")
    assert lab.exec("r1", ["cat", "/proc/sys/net/ipv4/ip_forward"]).stdout.strip() == "1"


def test_vtysh_prints_no_pam_noise(two) -> None:  # noqa: ANN001
    _, a = two
    r = sh(a, "vtysh -c 'show version'")
    assert r.ok and r.data["stderr"] == "", r.data["stderr"]
    assert "FRRouting" in r.data["stdout"]


def test_resource_bounds(two) -> None:  # noqa: ANN001
    lab, a = two
    before = set(_netns_pids(lab))
    # a fork bomb in slow motion: dash gives up at the first refused fork
    r = sh(a, "for i in $(seq 1 600); do sleep 4325 & echo $i; done")
    assert r.ok is False and "Cannot fork" in r.data["stderr"]
    started = int(r.data["stdout"].split()[-1])
    assert 100 < started < 600
    assert r.elapsed_s < 20
    assert set(_netns_pids(lab)) == before  # and none of them survived
    r = sh(a, "head -c 40000000 /dev/zero > /tmp/big1 && head -c 40000000 /dev/zero > /tmp/big2")
    assert r.ok is False and "No space left on device" in r.data["stderr"]
    r = sh(a, "prlimit --fsize --output SOFT --noheadings")
    assert r.data["stdout"].strip() == str(64 * 1024**2)
    r = sh(a, "prlimit --as --output SOFT --noheadings")
    assert r.data["stdout"].strip() == str(4 * 1024**3)


def _netns_pids(lab) -> list[int]:  # noqa: ANN001
    import subprocess

    out = subprocess.run(["ip", "netns", "pids", lab.netns("r1")], capture_output=True, text=True, check=True)
    return [int(p) for p in out.stdout.split()]


def test_a_dying_harness_takes_the_sandbox_with_it(two, tmp_path: Path) -> None:  # noqa: ANN001
    """SIGKILL of the Python process mid-call: --die-with-parent kills the whole call."""
    import signal
    import subprocess
    import sys
    import time

    lab, _ = two
    script = tmp_path / "harness.py"
    script.write_text(
        "import sys\n"
        "from ani.lab.lab import Lab\n"
        "from ani.registry import create_adapter\n"
        "a = create_adapter('a0', Lab.attach(sys.argv[1]))\n"
        "print('calling', flush=True)\n"
        "a.call('shell', {'device': 'r1', 'command': 'sleep 4399 & sleep 4398'})\n"
    )
    p = subprocess.Popen([sys.executable, str(script), lab.id], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "calling"
        deadline = time.monotonic() + 10
        while not _pids_with(b"sleep\x00439") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(_pids_with(b"sleep\x00439")) == 2
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    deadline = time.monotonic() + 3
    while _pids_with(b"sleep\x00439") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _pids_with(b"sleep\x00439") == []
    # the call's vtysh broker socket dir lives in the lab's dir (removed with the lab)
    assert list(lab.node_dir("r1").glob("ani-vtybroker-*"))  # left by the killed harness, removed at down()


def _pids_with(needle: bytes) -> list[int]:
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if needle in (p / "cmdline").read_bytes():
                    out.append(int(p.name))
            except OSError:
                pass
    return out


def test_the_harness_is_hidden(two) -> None:  # noqa: ANN001
    # an agent must not read task classes, hidden-test logic or earlier runs' records
    _, a = two
    repo = Path(__file__).resolve().parents[2]
    tasks = repo / "ani" / "scenario" / "tasks" / "base.py"  # task classes and their hidden tests
    assert tasks.exists()  # visible from the harness
    # the checkout is an empty tmpfs (or, under /tmp, absent: /tmp is private): nothing listed
    r = sh(a, f"ls -A {repo} 2>/dev/null | wc -l; ls -A /root | wc -l; ls -A /home | wc -l")
    assert r.data["stdout"].split() == ["0", "0", "0"]
    r = sh(a, f"cat {tasks}")
    assert r.ok is False and r.data["stdout"] == ""
    assert r.data["stderr"] == f"cat: {tasks}: No such file or directory\n"
    # the router's own FRR is still reachable (hiding did not cover what the command needs)
    r = sh(a, "vtysh -c 'show running-config' | grep -c '^hostname r1'")
    assert r.ok and r.data["stdout"].strip() == "1"


@pytest.fixture
def marker_repos(tmp_path: Path):  # noqa: ANN201
    """A repository with a hidden test in each kind of place a host keeps checkouts: next to this
    checkout (``/work``-like), under ``/root``, ``/home``, ``/srv``, ``/opt``, ``/mnt``, ``/var/lib``
    and a temporary dir of the host, each holding a canary; removed afterwards."""
    tag = uuid.uuid4().hex[:8]
    canary = f"a0-canary-{tag}"
    parents = [Path(__file__).resolve().parents[3], Path("/root"), Path("/home"), Path("/srv"), Path("/opt"),
               Path("/mnt"), Path("/var/lib"), tmp_path]
    repos = []
    try:
        for p in parents:
            repo = p / f".ani-marker-{tag}"
            (repo / ".git").mkdir(parents=True)
            (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
            (repo / "tests").mkdir()
            (repo / "tests" / "test_hidden.py").write_text(f"SECRET = {canary!r}\n")
            os.chmod(repo, 0o755)
            repos.append(repo)
        yield tag, canary, repos
    finally:
        import shutil

        for repo in repos:
            shutil.rmtree(repo, ignore_errors=True)


def test_no_other_checkout_of_the_host_is_visible(two, marker_repos) -> None:  # noqa: ANN001
    # issue 23 §1: the sandbox shows the system's programs and the router's own files; no other
    # repository (with its tests) of the host, wherever it is
    _, a = two
    tag, canary, repos = marker_repos
    cmd = "; ".join(f"cat {r}/tests/test_hidden.py; ls -A {r}" for r in repos)
    r = sh(a, cmd + f"; find / -name '.ani-marker-{tag}*' 2>/dev/null; echo END")
    assert canary not in r.data["stdout"] + r.data["stderr"], r.text
    assert r.data["stdout"] == "END\n", r.text
    for repo in repos:
        assert f"cat: {repo}/tests/test_hidden.py: No such file or directory" in r.data["stderr"]
    # the host's top-level tree is an allowlist: no /work, /root, /home, /srv, /opt, /mnt, /boot
    r = sh(a, "ls -A /")
    assert r.ok, r.text
    assert set(r.data["stdout"].split()) <= {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc",
                                             "run", "sbin", "sys", "tmp", "usr", "var"}, r.text
    r = sh(a, "ls -A /var")
    assert sorted(r.data["stdout"].split()) == ["lock", "run", "tmp"], r.text  # not the host's /var
    for repo in repos:
        assert (repo / "tests" / "test_hidden.py").read_text() == f"SECRET = {canary!r}\n"  # there on the host


def test_the_tools_agents_need_still_work(two) -> None:  # noqa: ANN001
    lab, a = two
    r = sh(a, "ip -br addr show dev eth-r2 && nft list tables && ping -c 1 -W 2 10.1.12.2 >/dev/null && echo PING; "
              "vtysh -c 'show running-config' | grep '^hostname'; sysctl -n net.ipv4.ip_forward; "
              "echo a,b | awk -F, '{print $2}' | sed s/b/c/ | grep -c c; ls /usr/bin/vtysh /etc/frr")
    assert r.ok, r.text
    out = r.data["stdout"]
    assert "10.1.12.1/30" in out and "PING" in out and "hostname r1" in out, out
    assert out.split()[-4:] == ["/usr/bin/vtysh", "/etc/frr:", "frr.conf", "vtysh.conf"], out
