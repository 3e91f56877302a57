"""Pure parts of the lab: JSON stream parsing, convergence verdicts, process identity, state file."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from ani.lab import converge
from ani.lab.proc import ExecResult, cmdline, is_alive, run, start_time


def test_parse_json_stream_skips_text_between_documents():
    text = '% warning\n{"a": 1}\n{"b": [1, 2]}trailing [3]'
    assert converge.parse_json_stream(text) == [{"a": 1}, {"b": [1, 2]}, [3]]
    assert converge.parse_json_stream("no json here") == []


def test_bgp_pending_names_each_non_established_peer_and_skips_admin_down():
    doc = {"ipv4Unicast": {"peers": {
        "10.0.0.1": {"state": "Established", "peerState": "OK"},
        "10.0.0.2": {"state": "Active", "peerState": "OK"},
        "10.0.0.3": {"state": "Idle (Admin)", "peerState": "Admin"},
        "10.0.0.4": {"state": "Connect"},
    }}}
    assert converge._bgp_pending("e1", doc) == [
        "e1: BGP neighbor 10.0.0.2 is Active (expected Established)",
        "e1: BGP neighbor 10.0.0.4 is Connect (expected Established)",
    ]
    assert converge._bgp_pending("e1", {}) == []


def test_ospf_neighbor_states_by_interface_full_wins():
    doc = {"neighbors": {
        "1.1.1.1": [{"nbrState": "Init/-", "ifaceName": "to-c1:10.0.0.1"}],
        "2.2.2.2": [{"nbrState": "Full/DR", "ifaceName": "to-c2:10.0.1.1"},
                    {"nbrState": "ExStart/-", "ifaceName": "to-c2:10.0.1.1"}],
    }}
    assert converge._ospf_neighbor_states(doc) == {"to-c1": "Init", "to-c2": "Full"}


def test_ospf_ifaces_excludes_passive_down_and_disabled():
    doc = {"interfaces": {
        "a": {"ifUp": True, "ospfEnabled": True},
        "b": {"ifUp": True, "ospfEnabled": True, "timerPassiveIface": True},
        "c": {"ifUp": False, "ospfEnabled": True},
        "d": {"ifUp": True, "ospfEnabled": False},
    }}
    assert sorted(converge._ospf_ifaces(doc)) == ["a"]


def test_run_captures_rc_and_times_out_the_whole_group():
    res = run(["sh", "-c", "echo hi; echo oops >&2; exit 4"])
    assert (res.rc, res.stdout, res.stderr, res.timed_out) == (4, "hi\n", "oops\n", False)
    assert not res.ok
    res = run(["sh", "-c", "sleep 30 & echo $! ; wait"], timeout=1.5)
    assert res.timed_out and res.rc == -9 and res.elapsed_s < 5
    child = int(res.stdout.split()[0])
    deadline = time.monotonic() + 2  # SIGKILL delivery and reaping are asynchronous
    while is_alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not is_alive(child)  # the background sleep died with the group


def test_run_decodes_invalid_utf8_with_replacement():
    res = run(["printf", "\\377ok"])
    assert res.stdout == "\ufffdok"
    assert isinstance(res, ExecResult)


def test_pid_identity_guards_against_reuse():
    me = os.getpid()
    st = start_time(me)
    assert st is not None and is_alive(me, st)
    assert not is_alive(me, st + 1)  # same PID, other start time: not the same process
    p = subprocess.Popen(["true"])
    p.wait()
    assert not is_alive(p.pid)
    assert "python" in cmdline(me)[0]
    assert cmdline(p.pid) == []  # gone (reaped): no argv


def test_state_round_trip(tmp_path, monkeypatch):
    from ani.lab import state

    monkeypatch.setattr(state, "LABS_ROOT", tmp_path)
    st = state.new_state("abc123", name="t", namespaces=["ani-abc123-r1"], topology={"routers": {}})
    state.write_state(st)
    back = state.read_state("abc123")
    assert back == st and back.owner_alive()
    assert state.lab_ids() == ["abc123"]
    (tmp_path / "abc123" / "state.json").write_text("{half")
    assert state.read_state("abc123") is None
    (tmp_path / "NotAnId").mkdir()
    assert state.lab_ids() == ["abc123"]


@pytest.mark.parametrize("bad", ["", "UPPER", "a-b", "x" * 13])
def test_bad_lab_ids_are_refused(bad):
    from ani.errors import LabError
    from ani.lab import Lab, parse_topology

    with pytest.raises(LabError, match="must match"):
        Lab(parse_topology({"routers": {"r1": {}}}), lab_id=bad)


def test_router_start_runs_the_remount_with_this_interpreter_not_a_path_lookup():
    # `python3` looked up in PATH was a pyenv shim here: ~34 bash runs and 90 ms of CPU per router
    from ani.lab import frr

    script = frr.daemons_argv("ns", "r1", "ps", "true")[-1]
    assert f"{sys.executable} -S -c " in script
    assert "{ python3 " not in script


def test_remount_python_falls_back_to_python3_without_an_executable(monkeypatch):
    from ani.lab import frr

    monkeypatch.setattr(sys, "executable", "")
    assert frr.remount_python() == "python3"


def test_owns_with_a_daemon_name_refuses_another_program_of_the_same_pathspace():
    # a router's vtysh carries `-N <pathspace>` as its daemons do: a dead daemon's PID reused by
    # one read as the daemon running (pid_max 32768 wraps in minutes under the suite's load)
    from ani.lab import frr

    p = subprocess.Popen(["/bin/sh", "-c", "sleep 30", "vtysh", "-N", "owns-ps"])
    try:
        deadline = time.monotonic() + 5
        while "-N" not in cmdline(p.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert frr.owns(p.pid, "owns-ps")  # the pathspace alone: any program of it
        assert frr.owns(p.pid, "owns-ps", "sh")
        assert not frr.owns(p.pid, "owns-ps", "bgpd")
        assert not frr.owns(p.pid, "other-ps", "sh")
    finally:
        p.kill()
        p.wait()
    assert not frr.owns(p.pid, "owns-ps", "sh")
