"""``ani.connect`` on a lab started by ``ani lab up`` (another process, detached), at A1 and A2.

What is checked, out of band (through the lab, never through the adapter): the adapter acts on
the lab (a change shows in the router's running config), closing it ends its sessions (A1: no
vtysh child left; A2: the server dropped the session's lock), the lab survives every close (its
state ``up``, every FRR daemon alive, the same routers answering), a second connect works, and
concurrent connects on one lab (threads at two levels, plus another process) all succeed.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from procs import vtysh_below

import ani
from ani.lab import Lab

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TOPOLOGY = ROOT / "tests" / "data" / "a1_pair.yaml"
A1_TOOLS = {"get_topology", "get_running_config", "update_config", "execute_validation",
            "snapshot", "rollback", "list_snapshots"}


def ani_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ani.cli", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def lab_id():
    """A lab started as a user starts one (``ani lab up``: detached, owned by no process here);
    removed at the end of the module by id."""
    from ani.lab.capability import check_capabilities

    try:
        check_capabilities()
    except Exception as exc:  # noqa: BLE001 - CapabilityMissing: not a lab host
        pytest.skip(f"lab unavailable on this host: {exc}")
    lab_id = "cx" + secrets.token_hex(3)
    up = ani_cli("lab", "up", str(TOPOLOGY), "--lab", lab_id)
    try:
        assert up.returncode == 0, up.stderr
        yield lab_id
    finally:
        Lab.down_id(lab_id)


def lab_is_intact(lab_id: str) -> None:
    """The lab is still up, with all of its FRR daemons (r1: zebra, staticd, ospfd, bgpd; r2:
    zebra, staticd, bgpd), and its BGP session is established."""
    (entry,) = [e for e in Lab.list_labs() if e["id"] == lab_id]
    assert entry["status"] == "up" and entry["detached"] is True
    assert entry["daemons"] == {"r1": 4, "r2": 3}, entry
    peers = Lab.attach(lab_id).vtysh_json("r1", "show bgp summary json")["ipv4Unicast"]["peers"]
    assert peers["10.0.12.2"]["state"] == "Established", peers


def test_a1_acts_on_the_lab_and_close_leaves_it_running(lab_id):
    lab = Lab.attach(lab_id)  # out of band
    line = "ip prefix-list PL-CONNECT seq 5 permit 198.51.100.0/24"
    with ani.connect(lab_id, "a1") as adapter:
        assert str(adapter.level) == "a1" and {t.name for t in adapter.tools()} == A1_TOOLS
        res = adapter.call("update_config", {"device": "r1", "commands": [line]})
        assert res.ok and res.changed, res.text
        assert line in lab.running_config("r1")
        read = adapter.call("get_running_config", {"device": "r1"})
        assert read.ok and line in read.text
        assert vtysh_below(os.getpid(), direct=True), "A1 keeps a vtysh session open while connected"
        undo = adapter.call("update_config", {"device": "r1", "commands": [f"no {line}"]})
        assert undo.ok, undo.text
    assert vtysh_below(os.getpid(), direct=True) == []  # close() ended the sessions
    assert line not in lab.running_config("r1")
    lab_is_intact(lab_id)

    again = ani.connect(lab_id, "a1")  # a second connect works; close() without `with`
    try:
        assert again.call("execute_validation", {"device": "r2", "command": "show bgp summary"}).ok
    finally:
        again.close()
    lab_is_intact(lab_id)


def test_a2_from_ANI_LEVEL_close_releases_its_lock(lab_id, monkeypatch):
    monkeypatch.setenv("ANI_LEVEL", "a2")
    lab = Lab.attach(lab_id)
    adapter = ani.connect(lab_id)
    try:
        assert str(adapter.level) == "a2"
        got = adapter.call("lock", {"device": "r1", "target": "candidate"})
        assert got.ok, got.text
        assert lab.netconf_lock("r1", "candidate") is not None  # held by this adapter's session
        read = adapter.call("get_config", {"device": "r1"})
        assert read.ok and "64501" in read.text
    finally:
        adapter.close()
    assert lab.netconf_lock("r1", "candidate") is None  # its NETCONF session is closed
    lab_is_intact(lab_id)


def test_options_reach_the_adapter(lab_id):
    with ani.connect(lab_id, "a1", command_timeout_s=4,
                     extra_tools=["check_device_status"]) as adapter:
        assert adapter.command_timeout_s == 4.0
        status = adapter.call("check_device_status", {"devices": ["r2"]})
        assert status.ok, status.text
    with pytest.raises(ani.errors.ConfigError, match="rpc_timeout_s"):
        ani.connect(lab_id, "a1", rpc_timeout_s=4)  # an A2 option at A1: refused, nothing opened
    lab_is_intact(lab_id)


def test_the_blocklist_ablation_at_a1_refuses_and_at_a2_is_refused(lab_id):
    """issue 23 §6: ``ani.connect`` takes the blocklist (as ``ani run --blocklist``) at a1, where
    the call is refused before it reaches FRR; at a2 (NETCONF XML) it would inspect nothing and
    is refused before anything opens."""
    before = Lab.attach(lab_id).running_config("r1")
    with ani.connect(lab_id, "a1", blocklist=True) as adapter:
        res = adapter.call("update_config", {"device": "r1", "commands": ["no router bgp 64501"]})
        assert (res.ok, res.error.code) == (False, "blocked") and "removes a routing process" in res.text
        assert adapter.call("get_running_config", {"device": "r1"}).ok
    with pytest.raises(ani.errors.ConfigError, match="level a2's tools send no CLI command lines"):
        ani.connect(lab_id, "a2", blocklist=True)
    assert Lab.attach(lab_id).running_config("r1") == before
    lab_is_intact(lab_id)


CHILD = """
import sys, ani
with ani.connect(sys.argv[1], "a1") as a:
    for _ in range(3):
        r = a.call("execute_validation", {"device": "r1", "command": "show ip route"})
        assert r.ok, r.text
print("child ok")
"""


def test_concurrent_connects_on_one_lab(lab_id):
    """Four threads of this process (three at A1, one at A2) and another process connect to
    the lab at once; each reads through its own adapter; every call succeeds."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, lab_id], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    results: list[tuple[str, bool, str]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def worker(level: str, router: str) -> None:
        try:
            start.wait(timeout=30)
            with ani.connect(lab_id, level) as adapter:
                for _ in range(3):
                    if level == "a1":
                        r = adapter.call("execute_validation", {"device": router, "command": "show bgp summary"})
                    else:
                        r = adapter.call("get_config", {"device": router})
                    results.append((level, r.ok, r.text[:200]))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=args)
               for args in (("a1", "r1"), ("a1", "r2"), ("a1", "r1"), ("a2", "r2"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    out, err = child.communicate(timeout=180)
    assert not errors, errors
    assert len(results) == 12 and all(ok for _, ok, _ in results), results
    assert child.returncode == 0 and out.strip() == "child ok", err[-2000:]
    assert vtysh_below(os.getpid(), direct=True) == []
    lab_is_intact(lab_id)
