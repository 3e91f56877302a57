"""ani.lab.netconf without a lab: credentials file, readiness failures, PID verification."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ani.errors import LabError
from ani.lab import netconf as nc


def test_credentials_are_private_and_random(tmp_path):
    a = nc.write_credentials(tmp_path)
    assert (tmp_path / "netconf.json").stat().st_mode & 0o777 == 0o600
    assert a["username"] == "ani" and len(a["password"]) >= 20
    assert nc.write_credentials(tmp_path)["password"] != a["password"]
    assert nc.read_info(tmp_path)["username"] == "ani"
    assert nc.read_info(tmp_path / "nowhere") is None


def test_endpoint_needs_ports(tmp_path):
    with pytest.raises(LabError, match="netconf=False"):
        nc.endpoint("x1", tmp_path, "r1")
    info = nc.write_credentials(tmp_path)
    with pytest.raises(LabError, match="no NETCONF server for 'r1'"):
        nc.endpoint("x1", tmp_path, "r1")
    nc.write_json_private(tmp_path / "netconf.json", {**info, "ports": {"r1": 4242}})
    ep = nc.endpoint("x1", tmp_path, "r1")
    assert (ep.host, ep.port, ep.username, ep.password) == ("127.0.0.1", 4242, "ani", info["password"])
    assert info["password"] not in repr(ep)


def test_host_key_is_made_once_and_private(tmp_path):
    k1 = nc.ensure_host_key(tmp_path / "hk")
    assert (tmp_path / "hk").stat().st_mode & 0o777 == 0o600
    k2 = nc.ensure_host_key(tmp_path / "hk")
    assert k1.export_public_key() == k2.export_public_key()


def test_wait_ready_reports_an_early_exit_with_the_log(tmp_path):
    with open(tmp_path / nc.LOG_FILE, "ab") as log:
        p = subprocess.Popen([sys.executable, "-c", "import sys; print('boom: no datastore', file=sys.stderr);"
                              " sys.exit(3)"], stdout=log, stderr=log)
    with pytest.raises(LabError, match=r"exited \(3\)[\s\S]*boom: no datastore"):
        nc.wait_ready("x1", tmp_path, p, timeout_s=20)


def test_wait_ready_times_out_with_the_log(tmp_path):
    (tmp_path / nc.LOG_FILE).write_text("still importing\n")
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(LabError, match=r"not ready after 0.3 s[\s\S]*still importing"):
            nc.wait_ready("x1", tmp_path, p, timeout_s=0.3)
    finally:
        p.kill()
        p.wait()


def test_wait_ready_needs_ports_that_accept(tmp_path):
    import socket

    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    nc.write_json_private(tmp_path / "netconf.json", {"ports": {"r1": port}})
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert nc.wait_ready("x1", tmp_path, p, timeout_s=5) == {"r1": port}
        srv.close()
        with pytest.raises(LabError, match="not ready"):
            nc.wait_ready("x1", tmp_path, p, timeout_s=0.3)
    finally:
        p.kill()
        p.wait()


def test_is_server_of_checks_module_lab_id_and_start_time(tmp_path):
    from ani.lab.proc import start_time

    code = "import time; time.sleep(30)"
    # argv shaped like the server's: python -c CODE ani.lab.netconf_server --lab x1
    p = subprocess.Popen([sys.executable, "-c", code, nc.MODULE, "--lab", "x1"])
    other = subprocess.Popen([sys.executable, "-c", code, nc.MODULE, "--lab", "x12"])
    try:
        assert nc.is_server_of(p.pid, "x1")
        assert nc.is_server_of(p.pid, "x1", start_time(p.pid))
        assert not nc.is_server_of(p.pid, "x1", (start_time(p.pid) or 0) + 1)  # PID reused
        assert not nc.is_server_of(other.pid, "x1")  # another lab's (x12 is not x1)
        assert not nc.is_server_of(os.getpid(), "x1")
        assert not nc.is_server_of(None, "x1")
        (tmp_path / "netconf.json").write_text(json.dumps({"pid": other.pid}))
        assert nc.server_pids("x1", tmp_path, p.pid, None) == [p.pid]  # the file's pid is not x1's
    finally:
        for q in (p, other):
            q.kill()
            q.wait()


def test_lock_holder_reads_the_published_lock_and_ignores_a_dead_servers(tmp_path):
    from ani.lab.proc import start_time
    from ani.netconf.journal import Journal

    code = "import time; time.sleep(30)"
    srv = subprocess.Popen([sys.executable, "-c", code, nc.MODULE, "--lab", "x1"])
    try:
        j = Journal(tmp_path / nc.JOURNAL_DIR, {"pid": srv.pid, "start": start_time(srv.pid)})
        j.router("r1").publish_locks({"running": {"session-id": 3, "since": 1764430000.0}})
        held = nc.lock_holder("x1", tmp_path, "r1")
        assert (held.router, held.target, held.session_id, held.server_pid) == ("r1", "running", 3, srv.pid)
        assert "NETCONF session 3 holds the lock on r1's running datastore" in held.describe()
        assert nc.lock_holder("x1", tmp_path, "r1", "candidate") is None  # not locked
        assert nc.lock_holder("x1", tmp_path, "r2") is None  # nothing published
        assert nc.lock_holder("x2", tmp_path, "r1") is None  # not lab x2's server
        # the same PID with another start time: reused by another process
        Journal(tmp_path / nc.JOURNAL_DIR, {"pid": srv.pid, "start": (start_time(srv.pid) or 0) + 1}) \
            .router("r1").publish_locks({"running": {"session-id": 3, "since": 1.0}})
        assert nc.lock_holder("x1", tmp_path, "r1") is None
        j.router("r1").publish_locks({"running": {"session-id": 3, "since": 1.0}})
    finally:
        srv.kill()
        srv.wait()
    assert nc.lock_holder("x1", tmp_path, "r1") is None  # the server died: its lock is no lock
