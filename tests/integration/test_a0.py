"""A0 adapter on a real lab: shell results, exact `changed`, caps, timeouts, errors, case 5."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from ani.errors import ErrorCode
from ani.registry import create_adapter
from ani.trajectory import Trajectory

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

TWO = Path(__file__).resolve().parents[1] / "data" / "a0_two.yaml"


def shell(adapter, device: str, command: str):  # noqa: ANN001, ANN201
    return adapter.call("shell", {"device": device, "command": command})


def test_tools_and_topology(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    adapter = create_adapter("a0", lab)
    with adapter:
        assert sorted(s.name for s in adapter.tools()) == ["get_topology", "shell"]
        r = adapter.call("get_topology", {})
    assert r.ok
    assert [n["name"] for n in r.data["topology"]["nodes"]] == ["r1", "r2"]
    assert r.data["topology"]["links"] == ["r1 eth-r2 <-> r2 eth-r1"]


def test_vtysh_change_is_real_and_exactly_reported(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    adapter = create_adapter("a0", lab)
    assert "192.0.2.0/24" not in lab.running_config("r1")

    r = shell(adapter, "r1", "vtysh -c 'configure terminal' -c 'ip route 192.0.2.0/24 Null0'")
    assert r.ok, r.text
    assert r.changed is True and "frr" in r.data["changed_parts"]
    assert r.data["exit_status"] == 0
    # seen out of band, on r1 only
    assert "ip route 192.0.2.0/24 Null0" in lab.running_config("r1")
    assert "192.0.2.0/24" not in lab.running_config("r2")

    # a read-only command changes nothing, and says so
    r = shell(adapter, "r1", "vtysh -c 'show running-config'; ip route; nft list ruleset")
    assert r.ok and r.changed is False
    assert "ip route 192.0.2.0/24 Null0" in r.data["stdout"]

    # the same line again: FRR accepts it, nothing changes
    r = shell(adapter, "r1", "vtysh -c 'configure terminal' -c 'ip route 192.0.2.0/24 Null0'")
    assert r.ok and r.changed is False


def test_kernel_state_changes(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    adapter = create_adapter("a0", lab)
    r = shell(adapter, "r1", "ip addr add 192.0.2.77/32 dev lo")
    assert r.ok and r.changed, r.text
    assert r.data["changed_parts"] == ["addr"]
    assert "192.0.2.77/32" in lab.exec("r1", ["ip", "-br", "addr", "show", "dev", "lo"]).stdout
    assert "192.0.2.77" not in lab.exec("r2", ["ip", "-br", "addr"]).stdout

    r = shell(adapter, "r1", "nft add table inet a0test && nft add chain inet a0test c")
    assert r.ok and r.data["changed_parts"] == ["nft"]
    assert "table inet a0test" in lab.exec("r1", ["nft", "list", "tables"]).stdout
    assert "a0test" not in lab.exec("r2", ["nft", "list", "tables"]).stdout

    r = shell(adapter, "r1", "ip route add 198.51.100.0/24 via 10.1.12.2")
    assert r.ok and r.data["changed_parts"] == ["route4"]

    r = shell(adapter, "r1", "ip link set eth-r2 down")
    assert r.ok and r.changed and "addr" in r.data["changed_parts"]
    assert "state DOWN" in lab.exec("r1", ["ip", "link", "show", "eth-r2"]).stdout

    # a failed change is not a change
    r = shell(adapter, "r1", "ip addr add 192.0.2.77/32 dev lo")
    assert r.ok is False and r.changed is False and r.data["changed_parts"] == []
    assert r.error.code is ErrorCode.COMMAND_FAILED
    assert "File exists" in r.data["stderr"] or "already assigned" in r.data["stderr"]


def test_case5_shell_reaches_r2s_frr_and_no_other(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    adapter = create_adapter("a0", lab)
    r = shell(adapter, "r2", "vtysh -c 'show running-config'")
    assert r.ok, r.text
    out = r.data["stdout"]
    assert re.search(r"^hostname r2$", out, re.M)
    assert "bgp router-id 10.255.2.2" in out and "ip route 203.0.113.2/32 Null0" in out
    assert "hostname r1" not in out and "10.255.1.1" not in out and "203.0.113.1/32" not in out
    # the same text the lab sees out of band
    assert out == lab.running_config("r2")

    r = shell(adapter, "r2", "vtysh -c 'show ip bgp json'")
    bgp = json.loads(r.data["stdout"])
    assert (bgp["routerId"], bgp["localAS"]) == ("10.255.2.2", 64502)

    r = shell(adapter, "r1", "vtysh -c 'show running-config'")
    assert "hostname r1" in r.data["stdout"] and "10.255.2.2" not in r.data["stdout"]

    # naming the other router's pathspace is an error, never a fallback
    r = shell(adapter, "r2", f"vtysh -N {lab.pathspace('r1')} -c 'show running-config'")
    assert r.ok is False and r.error.code is ErrorCode.COMMAND_FAILED
    assert r.data["exit_status"] != 0
    assert "10.255.1.1" not in r.text and "hostname r1" not in r.text


def test_nonzero_exit_is_command_failed_with_data(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    adapter = create_adapter("a0", lab)
    r = shell(adapter, "r1", "echo partial; ls /no/such/path; exit 3")
    assert r.ok is False
    assert (r.error.code, r.error.message, r.error.retriable) == (ErrorCode.COMMAND_FAILED, "exit status 3", False)
    assert r.data["exit_status"] == 3
    assert r.data["stdout"] == "partial\n"
    assert "No such file or directory" in r.data["stderr"]
    assert r.data["timed_out"] is False and r.changed is False
    assert r.text.startswith("partial\n[stderr]\n") and "[exit status: 3]" in r.text


def test_timeout_kills_and_next_call_works(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    adapter = create_adapter("a0", lab, options={"timeout_s": 2})
    t0 = time.monotonic()
    r = shell(adapter, "r1", "echo before; sleep 60")
    elapsed = time.monotonic() - t0
    assert r.ok is False and r.error.code is ErrorCode.TIMEOUT
    assert r.error.message == "timeout after 2 s" and r.error.retriable is True
    assert r.data["timed_out"] is True and r.data["exit_status"] is None
    assert r.data["stdout"] == "before\n"  # what was printed before the kill is kept
    assert elapsed < 20, elapsed  # killed at the bound, long before the 60 s sleep ends
    assert _sleepers(lab, "r1", "sleep 60") == []

    r = shell(adapter, "r1", "echo after")
    assert r.ok and r.data["stdout"] == "after\n"


def _sleepers(lab, router: str, needle: str) -> list[int]:  # noqa: ANN001
    """PIDs in the router's netns whose command line contains ``needle``."""
    pids = lab_pids(lab, router)
    out = []
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if needle in cmd:
            out.append(pid)
    return out


def lab_pids(lab, router: str) -> list[int]:  # noqa: ANN001
    import subprocess

    res = subprocess.run(["ip", "netns", "pids", lab.netns(router)], capture_output=True, text=True, check=True)
    return [int(p) for p in res.stdout.split()]


def test_background_processes_do_not_survive(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    adapter = create_adapter("a0", lab)
    before = set(lab_pids(lab, "r1"))
    r = shell(
        adapter,
        "r1",
        "sleep 4321 & setsid sleep 4322 & nohup sleep 4323 >/dev/null 2>&1 & "
        "(sh -c 'sleep 4324 &' &) ; echo spawned",
    )
    assert r.ok and r.data["stdout"] == "spawned\n"
    assert r.elapsed_s < 5  # the call did not wait for the sleepers
    time.sleep(0.2)
    assert _sleepers(lab, "r1", "sleep 432") == []
    assert set(lab_pids(lab, "r1")) == before  # nothing new lives in the router's netns
    # and on the whole host
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                assert b"sleep\x00432" not in (p / "cmdline").read_bytes()
            except OSError:
                pass


def test_output_is_capped_with_marker_and_flag(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    adapter = create_adapter("a0", lab)
    r = shell(adapter, "r1", "seq 1 10000000")
    assert r.ok
    d = r.data
    assert d["stdout_truncated"] is True and d["stderr_truncated"] is False
    assert d["stdout_bytes"] == 78888897  # all of seq's output was read (and dropped past the cap)
    assert d["stdout"].startswith("1\n2\n3\n")
    head, marker = d["stdout"][: 64 * 1024], d["stdout"][64 * 1024 :]
    assert "truncated" not in head
    assert marker == f"\n[... output truncated: {78888897 - 65536} more bytes not shown (cap 65536 bytes) ...]\n"
    assert marker in r.text
    assert r.elapsed_s < 30

    small = create_adapter("a0", lab, options={"max_output_bytes": 100})
    r = shell(small, "r1", "seq 1 100000 >&2; echo out")
    assert r.data["stderr_truncated"] is True and r.data["stdout_truncated"] is False
    assert r.data["stderr"].startswith("1\n2\n") and "output truncated" in r.data["stderr"]
    assert r.data["stdout"] == "out\n"


def test_agent_mistakes_run_nothing(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    etc = Path("/etc/frr") / lab.pathspace("r1")
    traj = Trajectory(run_id="t-a0", level="a0")
    adapter = create_adapter("a0", lab, trajectory=traj)
    conf = etc / "frr.conf"
    touch = "echo '! a0-marker' >> /etc/frr/frr.conf"

    r = shell(adapter, "r9", touch)
    assert r.ok is False and r.error.code is ErrorCode.UNKNOWN_DEVICE
    assert r.error.message == "unknown device 'r9'; known: r1, r2"

    bad = [
        {"device": "r1"},  # missing command
        {"device": "r1", "command": 42},  # wrong type
        {"device": "r1", "command": touch, "sudo": True},  # extra key
        {"device": ["r1"], "command": touch},
    ]
    for args in bad:
        r = adapter.call("shell", args)
        assert r.ok is False and r.error.code is ErrorCode.INVALID_ARGUMENTS, args
    r = adapter.call("shel", {"device": "r1", "command": touch})
    assert r.error.code is ErrorCode.UNKNOWN_TOOL
    assert "a0-marker" not in conf.read_text()

    # the sandbox user can write its own FRR config, so the marker proves the control works
    r = shell(adapter, "r1", touch)
    assert r.ok and "a0-marker" in conf.read_text()
    assert [c["error_code"] for c in traj.calls] == [
        "unknown_device", "invalid_arguments", "invalid_arguments", "invalid_arguments",
        "invalid_arguments", "unknown_tool", None,
    ]


class _NoPathspace:
    """The lab, except that r2's FRR pathspace names nothing."""

    def __init__(self, lab) -> None:  # noqa: ANN001
        self._lab = lab
        self.topology = lab.topology

    def netns(self, node: str) -> str:
        return self._lab.netns(node)

    def pathspace(self, node: str) -> str:
        return self._lab.pathspace(node) + "-missing"

    def __getattr__(self, name: str):  # noqa: ANN204 - the rest of the Lab and LocalFrr A0 requires
        return getattr(self._lab, name)


def test_missing_pathspace_is_an_error_not_a_fallback(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    adapter = create_adapter("a0", _NoPathspace(lab))
    r = shell(adapter, "r2", "vtysh -c 'show running-config'")
    assert r.ok is False and r.error.code is ErrorCode.DEVICE_UNREACHABLE
    assert "not falling back" in r.error.message
    assert "hostname" not in r.text


def test_case6_big_route_table_is_capped_and_next_call_works(make_lab) -> None:  # noqa: ANN001
    lab = make_lab(TWO)
    adapter = create_adapter("a0", lab, options={"timeout_s": 30})
    gen = (
        "awk 'BEGIN{for(i=0;i<5000;i++) "
        "printf \"ip route 10.%d.%d.0/24 Null0\\n\", 100+int(i/256), i%256}' > /tmp/routes.conf"
        " && vtysh -f /tmp/routes.conf >/dev/null && vtysh -c 'show ip route static json' | grep -c '\"prefix\"'"
    )
    r = shell(adapter, "r1", gen)
    assert r.ok, r.text
    assert int(r.data["stdout"].strip()) == 5001  # 5000 + the topology's own static route
    assert "frr" in r.data["changed_parts"]

    t0 = time.monotonic()
    r = shell(adapter, "r1", "vtysh -c 'show ip route'")
    assert time.monotonic() - t0 < 30
    assert r.ok and r.data["stdout_truncated"] is True
    assert r.data["stdout_bytes"] > 5000 * 40
    assert "output truncated" in r.data["stdout"] and "output truncated" in r.text
    assert len(r.data["stdout"].encode()) < 64 * 1024 + 200

    r = shell(adapter, "r1", "vtysh -c 'show ip route 10.119.135.0/24'")
    assert r.ok and "10.119.135.0/24" in r.data["stdout"] and "blackhole" in r.data["stdout"].lower()
