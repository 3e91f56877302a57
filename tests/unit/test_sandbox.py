"""The A0 sandbox argv builder and the capped, bounded runner (no lab needed)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from ani.adapters.a0 import A0Adapter, ShellArgs, format_output
from ani.adapters.sandbox import (
    TMPFS_BYTES,
    VAR_SYMLINKS,
    VISIBLE_ROOTS,
    CappedOutput,
    SandboxSpec,
    run_capped,
    sandbox_argv,
    truncation_marker,
)
from ani.errors import ConfigError
from ani.testing import FakeLab

SPEC = SandboxSpec(netns="ani-abc123-r2", pathspace="ani-abc123-r2", hostname="r2")


def _pairs(argv: list[str], flag: str) -> list[tuple[str, ...]]:
    """Arguments following each occurrence of ``flag`` (1 or 2 of them)."""
    width = {"--ro-bind": 2, "--bind": 2, "--tmpfs": 1, "--setenv": 2, "--cap-add": 1, "--ro-bind-data": 2}[flag]
    return [tuple(argv[i + 1 : i + 1 + width]) for i, a in enumerate(argv) if a == flag]


def test_argv_enters_the_router_netns_then_bwrap() -> None:
    argv = sandbox_argv(SPEC, "ip route")
    assert argv[:5] == ["ip", "netns", "exec", "ani-abc123-r2", "bwrap"]
    assert argv[-3:] == ["/bin/sh", "-c", "ip route"]


def test_argv_mounts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    etc = tmp_path / "ani-abc123-r2"
    etc.mkdir()
    for name in ("vtysh.conf", "frr.conf"):
        (etc / name).write_text("")
    (etc / "subdir").mkdir()
    monkeypatch.setattr(SandboxSpec, "etc_dir", property(lambda self: etc))
    argv = sandbox_argv(SPEC, "true", pam_fd=7)
    ro = _pairs(argv, "--ro-bind")
    rw = _pairs(argv, "--bind")
    tmp = _pairs(argv, "--tmpfs")
    # the host's root read-only first, one bind per top-level entry; later mounts override
    assert ro[:len(_top_dirs())] == [(p, p) for p in _top_dirs()]
    assert ("/run/frr/ani-abc123-r2", "/run/frr") in ro or ("/var/run/frr/ani-abc123-r2", "/run/frr") in ro
    assert ("/proc/sys", "/proc/sys") in ro
    # the only writable host paths: frr.conf of this router's FRR config dir (not the dir: new
    # files there would be on the host's disk) and its net sysctls; vtysh.conf is read-only
    # (the harness's vtysh reads it: agent text there would be read as the router's config)
    assert rw == [
        ("/proc/sys/net", "/proc/sys/net"),
        (str(etc / "frr.conf"), "/etc/frr/frr.conf"),
    ]
    assert (str(etc / "vtysh.conf"), "/etc/frr/vtysh.conf") in ro
    assert {("/tmp",), ("/run",), ("/etc/frr",), ("/dev/shm",), ("/var/tmp",)} <= set(tmp)
    # /run and /etc/frr are emptied (a tmpfs the user cannot write) before this router's files are bound on them
    assert argv.index("/run") < argv.index("/run/frr")
    i_tmp_etc = [i for i, a in enumerate(argv) if a == "--tmpfs" and argv[i + 1] == "/etc/frr"][0]
    assert argv[i_tmp_etc - 2 : i_tmp_etc] == ["--perms", "0755"]
    assert i_tmp_etc < argv.index(str(etc / "frr.conf"))
    # every file written is bounded (RLIMIT_FSIZE), the bound files included
    assert f"--fsize={TMPFS_BYTES}" in argv
    assert _pairs(argv, "--ro-bind-data") == [("7", "/etc/pam.d/frr")]


def _top_dirs() -> list[str]:
    """The allowlisted roots that are directories here (not symlinks): bound read-only."""
    return [p for p in VISIBLE_ROOTS if os.path.isdir(p) and not os.path.islink(p)]


def test_root_is_bound_per_top_level_entry_without_run() -> None:
    """Not ``--ro-bind / /``: /run holds other labs' mounts, which vanish under bwrap's remount
    walk when a lab goes down (docs/performance.md); it is an empty tmpfs in the sandbox anyway."""
    argv = sandbox_argv(SPEC, "true")
    assert ("/", "/") not in _pairs(argv, "--ro-bind")
    b = argv.index("bwrap") + 1
    head = argv[b:argv.index("--dev")]  # the root, before any other mount
    binds = [head[i + 1] for i, a in enumerate(head) if a == "--ro-bind"]
    assert binds == _top_dirs() and "/usr" in binds
    # the root is an allowlist: nothing else of the host's / (other checkouts, users, results)
    hidden = {"/" + n for n in os.listdir("/")} - set(VISIBLE_ROOTS) - {"/sys", "/dev", "/proc", "/tmp", "/run", "/var"}
    assert hidden and not hidden & {src for src, _ in _pairs(argv, "--ro-bind") + _pairs(argv, "--bind")}
    assert _pairs(argv, "--ro-bind").count(("/sys", "/sys")) == 1
    assert not any(src == "/run" or src.startswith("/run/") for src, _ in _pairs(argv, "--ro-bind"))
    links = {p: os.readlink(p) for p in VISIBLE_ROOTS if os.path.islink(p)}
    links |= {link: target for target, link in VAR_SYMLINKS}
    got = {argv[i + 2]: argv[i + 1] for i, a in enumerate(argv) if a == "--symlink"}
    assert got == links
    # bwrap's own root (holding the mount points) is read-only, after every mount is made
    i = argv.index("--remount-ro")
    assert argv[i + 1] == "/" and i > max(j for j, a in enumerate(argv) if a in ("--bind", "--ro-bind", "--tmpfs"))


def test_argv_with_the_vtysh_broker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    etc = tmp_path / "ani-abc123-r2"
    etc.mkdir()
    for name in ("vtysh.conf", "frr.conf"):
        (etc / name).write_text("")
    monkeypatch.setattr(SandboxSpec, "etc_dir", property(lambda self: etc))
    argv = sandbox_argv(SPEC, "true", pam_fd=7, vty=("/tmp/ani-vtybroker-x", 9), config_read_only=True)
    ro = _pairs(argv, "--ro-bind")
    # no daemon socket: /var/run/frr is an empty dir, the broker's dir and client are bound
    assert not any(src.startswith("/var/run/frr/") or src.startswith("/run/frr/") for src, _ in ro)
    assert argv[argv.index("--dir") + 1] == "/run/frr"
    assert ("/tmp/ani-vtybroker-x", "/run/vtysh-broker") in _pairs(argv, "--bind")
    assert ("9", "/usr/bin/vtysh") in _pairs(argv, "--ro-bind-data")
    # the blocklist ablation: the startup config is read-only too
    assert (str(etc / "frr.conf"), "/etc/frr/frr.conf") in ro
    assert _pairs(argv, "--bind") == [("/proc/sys/net", "/proc/sys/net"), ("/tmp/ani-vtybroker-x", "/run/vtysh-broker")]


def test_argv_namespaces_lifetime_and_identity() -> None:
    argv = sandbox_argv(SPEC, "true")
    for flag in ("--unshare-pid", "--unshare-uts", "--unshare-ipc", "--die-with-parent", "--new-session", "--clearenv"):
        assert flag in argv
    assert argv[argv.index("--hostname") + 1] == "r2"
    assert "--unshare-net" not in argv  # the router's netns is the point
    env = dict(_pairs(argv, "--setenv"))
    assert env["HOME"] == "/tmp" and env["PATH"].split(":")[-1] == "/bin"
    assert set(env) == {"PATH", "HOME", "LANG", "TERM", "USER"}


def test_argv_capabilities_and_user() -> None:
    argv = sandbox_argv(SPEC, "true")
    i_drop = argv.index("--cap-drop")
    assert argv[i_drop + 1] == "ALL"
    caps = [c for (c,) in _pairs(argv, "--cap-add")]
    assert all(argv.index("--cap-add") > i_drop for _ in caps)
    assert sorted(caps) == ["CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_SETGID", "CAP_SETPCAP", "CAP_SETUID"]
    setpriv = argv[argv.index("setpriv") : argv.index("/bin/sh")]
    assert "--reuid=frr" in setpriv and "--regid=frr" in setpriv and "--groups=frrvty" in setpriv
    assert "--bounding-set=-all,+net_admin,+net_raw" in setpriv
    assert "--ambient-caps=+net_admin,+net_raw" in setpriv
    assert "--no-new-privs" in setpriv


def test_command_is_one_argv_element_never_reparsed() -> None:
    cmd = "echo 'a b' \"$HOME\"; vtysh -c 'show run' | grep x && true\n`id`"
    argv = sandbox_argv(SPEC, cmd)
    assert argv[-1] == cmd and argv.count(cmd) == 1


def test_nul_byte_is_refused() -> None:
    with pytest.raises(ValueError, match="NUL"):
        sandbox_argv(SPEC, "echo a\x00b")


# -- capped output --------------------------------------------------------------------------


def test_capped_output_keeps_head_and_counts() -> None:
    c = CappedOutput(cap=10)
    c.feed(b"0123456")
    c.feed(b"789abcdef")
    assert (bytes(c.kept), c.total, c.truncated) == (b"0123456789", 16, True)
    assert c.text() == "0123456789" + truncation_marker(6, 10)
    assert "6 more bytes" in c.text()


def test_capped_output_exactly_at_cap_is_not_truncated() -> None:
    c = CappedOutput(cap=4)
    c.feed(b"abcd")
    assert c.truncated is False and c.text() == "abcd"


def test_capped_output_invalid_utf8_is_replaced() -> None:
    c = CappedOutput(cap=100)
    c.feed("é".encode()[:1] + b"ok")
    assert c.text() == "\ufffdok"


# -- the runner on real local processes -------------------------------------------------------


def test_run_capped_streams_and_status() -> None:
    r = run_capped(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout_s=10, max_bytes=1000)
    assert (r.exit_status, r.stdout, r.stderr, r.timed_out) == (3, "out\n", "err\n", False)
    assert not r.stdout_truncated and not r.stderr_truncated


def test_run_capped_big_output_is_drained_and_capped() -> None:
    t0 = time.monotonic()
    r = run_capped(["seq", "1", "2000000"], timeout_s=20, max_bytes=64 * 1024)
    assert r.exit_status == 0 and r.stdout_truncated and not r.timed_out
    # digits of 1..2,000,000 plus one newline each
    assert r.stdout_bytes == sum((min(2_000_000, 10**d - 1) - 10 ** (d - 1) + 1) * (d + 1) for d in range(1, 8))
    assert r.stdout.startswith("1\n2\n3\n")
    assert r.stdout.endswith(truncation_marker(r.stdout_bytes - 64 * 1024, 64 * 1024))
    assert time.monotonic() - t0 < 10


def test_run_capped_timeout_kills_the_whole_group() -> None:
    # the shell starts a background sleeper holding stdout; both must die at the timeout
    t0 = time.monotonic()
    r = run_capped(
        ["sh", "-c", "echo started; sleep 300 & echo $! ; sleep 301"], timeout_s=1.0, max_bytes=1000
    )
    elapsed = time.monotonic() - t0
    assert r.timed_out and r.exit_status is None
    assert 1.0 <= elapsed < 30  # killed at the bound, not after the 300 s sleep
    lines = r.stdout.split()
    assert lines[0] == "started"
    bg = int(lines[1])
    time.sleep(0.1)
    assert not os.path.exists(f"/proc/{bg}") or open(f"/proc/{bg}/stat").read().split()[2] == "Z"


def test_run_capped_no_stdin() -> None:
    r = run_capped([sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"], timeout_s=10, max_bytes=100)
    assert r.stdout == "''\n"


# -- the adapter's argument model and options ---------------------------------------------------


def _Lab() -> FakeLab:  # noqa: N802 - routers r1, r2 (the tool specs and arguments need no more)
    return FakeLab({"routers": {"r1": {}, "r2": {}}})


def test_shell_tool_spec() -> None:
    specs = {s.name: s for s in A0Adapter(_Lab()).tools()}
    assert set(specs) == {"get_topology", "shell"}
    shell = specs["shell"]
    assert shell.destructive and not shell.read_only
    assert shell.input_schema["required"] == ["device", "command"]
    assert shell.input_schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ({"device": "r1"}, "command: Field required"),
        ({"device": "r1", "command": ["ls"]}, "command: Input should be a valid string"),
        ({"device": "r1", "command": "ls", "timeout": 5}, "timeout: unknown argument"),
        ({"device": "r1", "command": ""}, "command: String should have at least 1 character"),
        ({"device": "r1", "command": "   "}, "command: must not be blank"),
        ({"device": "r1", "command": "ls\x00-la"}, "command: must not contain NUL bytes"),
        ({"command": "ls"}, "device: Field required"),
    ],
)
def test_malformed_shell_arguments_run_nothing(args: dict, fragment: str, monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = A0Adapter(_Lab())
    ran = []
    monkeypatch.setattr("ani.adapters.sandbox.run_in_sandbox", lambda *a, **k: ran.append(a))
    monkeypatch.setattr(A0Adapter, "state_of", lambda self, d: ran.append(d))
    r = adapter.call("shell", args)
    assert r.ok is False and r.error.code.value == "invalid_arguments"
    assert fragment in r.error.message
    assert ran == []


def test_unknown_device_lists_devices_and_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = A0Adapter(_Lab())
    monkeypatch.setattr("ani.adapters.sandbox.run_in_sandbox", lambda *a, **k: pytest.fail("ran"))
    r = adapter.call("shell", {"device": "r3", "command": "ls"})
    assert r.error.code.value == "unknown_device"
    assert r.error.message == "unknown device 'r3'; known: r1, r2"


def test_options() -> None:
    a = A0Adapter(_Lab(), options={"timeout_s": 2, "max_output_bytes": 100})
    assert (a.timeout_s, a.max_output_bytes) == (2.0, 100)
    with pytest.raises(ConfigError, match="unknown"):
        A0Adapter(_Lab(), options={"timeout": 2})
    with pytest.raises(ConfigError, match=r"^a0 options: timeout_s: Input should be greater than 0 \(known options: "
                       r"max_output_bytes, timeout_s, user\)$"):
        A0Adapter(_Lab(), options={"timeout_s": 0})
    with pytest.raises(ConfigError, match="max_output_bytes: Input should be a valid integer"):
        A0Adapter(_Lab(), options={"max_output_bytes": "lots"})
    with pytest.raises(ConfigError, match="user: Input should be a valid string"):
        A0Adapter(_Lab(), options={"user": 0})


def test_shell_args_accepts_shell_syntax() -> None:
    assert ShellArgs(device="r1", command="a | b; c && d `e` $(f)\n").command.endswith("$(f)\n")


def test_format_output() -> None:
    from ani.adapters.sandbox import RunResult

    r = RunResult(0, "a\n", "", False, False, 2, 0, False, 0.1)
    assert format_output(r) == "a\n[exit status: 0]"
    r = RunResult(2, "a", "bad", False, False, 1, 3, False, 0.1)
    assert format_output(r) == "a\n[stderr]\nbad\n[exit status: 2]"
    r = RunResult(None, "", "", False, False, 0, 0, True, 2.0)
    assert format_output(r) == "[exit status: killed (timeout)]"


# -- state normalisation for `changed` ----------------------------------------------------------


def test_norm_addr_ignores_what_changes_by_itself() -> None:
    from ani.adapters.a0 import _norm_addr

    def link(flags, addrs, operstate="UP"):  # noqa: ANN001, ANN202
        return [{"ifname": "eth-r2", "flags": flags, "operstate": operstate, "mtu": 1500, "addr_info": addrs}]

    v4 = {"family": "inet", "local": "10.1.12.1", "prefixlen": 30, "scope": "global",
          "valid_life_time": 4294967295, "preferred_life_time": 4294967295}
    ll = {"family": "inet6", "local": "fe80::1", "prefixlen": 64, "scope": "link", "tentative": True,
          "valid_life_time": 4294967295}
    boot = link(["BROADCAST", "MULTICAST", "UP", "NO-CARRIER"], [v4], operstate="DOWN")
    later = link(["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], [dict(v4, valid_life_time=1), ll])
    assert _norm_addr(boot) == _norm_addr(later)
    # what an agent does is seen: admin down, a new address, an MTU
    assert _norm_addr(link(["BROADCAST", "MULTICAST"], [v4])) != _norm_addr(boot)
    assert _norm_addr(link(["BROADCAST", "MULTICAST", "UP"], [v4, dict(v4, local="192.0.2.1")])) != _norm_addr(boot)
    g6 = {"family": "inet6", "local": "2001:db8::1", "prefixlen": 64, "scope": "global"}
    assert _norm_addr(link(["UP"], [v4, g6])) != _norm_addr(link(["UP"], [v4]))


def test_norm_routes_keeps_only_directly_set_routes() -> None:
    from ani.adapters.a0 import _norm_routes

    kernel = {"dst": "10.1.12.0/30", "dev": "eth-r2", "protocol": "kernel", "scope": "link"}
    bgp = {"dst": "198.18.0.0/24", "gateway": "10.1.12.2", "protocol": "bgp", "metric": 20}
    ospf = {"dst": "10.255.2.2", "gateway": "10.1.12.2", "protocol": "ospf", "flags": ["onlink"]}
    frr_static = {"dst": "203.0.113.1", "type": "blackhole", "protocol": "static", "metric": 20}
    by_hand = {"dst": "198.51.100.0/24", "gateway": "10.1.12.2", "dev": "eth-r2", "flags": ["linkdown"]}
    base = _norm_routes([kernel, frr_static])
    assert _norm_routes([kernel, bgp, ospf, frr_static]) == base  # learned routes come and go
    assert _norm_routes([frr_static]) == base  # kernel routes follow addresses
    assert _norm_routes([kernel, frr_static, by_hand]) != base  # `ip route add` (proto boot)
    assert _norm_routes([kernel]) != base  # FRR static removed
    assert _norm_routes([dict(by_hand, flags=[])]) == _norm_routes([by_hand])  # carrier flag
