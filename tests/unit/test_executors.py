"""Campaign executors (issue 24 §2): the same plans through serial, ``--jobs 3`` and a Dask
LocalCluster give the same records, each run id once; a dead worker costs its run only (an
infra_error); Ctrl-C and SIGTERM stop every run, leave no worker process and report nothing
for the interrupted runs; bad names and options are ConfigErrors. The run function is
:mod:`ani.testing.fake_execute` (no lab)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ani.campaign.executors import Executor, executor_names, get_executor, lost_record
from ani.campaign.plan import RunPlan, ScenarioRef
from ani.campaign.results import INFRA, RunRecord
from ani.errors import ConfigError
from procs import alive

ROOT = Path(__file__).resolve().parents[2]
FAKE = "ani.testing.fake_execute:execute"
#: fields that differ between two runs of the same plan (timings, where it ran)
TIMING = {"started", "ended", "wall_s", "agent_s"}


class Sink:
    """Records every sink call: ``begun`` (run ids started), ``events``, ``done`` (finished)."""

    def __init__(self) -> None:
        self.begun: list[str] = []
        self.events: dict[str, list[str]] = {}
        self.records: dict[str, RunRecord] = {}
        self.done: list[str] = []

    def started(self, plan: RunPlan) -> None:
        self.begun.append(plan.run_id)

    def event(self, run_id: str, event: dict[str, Any]) -> None:
        self.events.setdefault(run_id, []).append(event["event"])

    def finished(self, plan: RunPlan, record: RunRecord) -> None:
        assert record.run_id == plan.run_id
        self.done.append(plan.run_id)
        self.records[plan.run_id] = record


def plan(i: int, cell: str = "a1", **agent: Any) -> RunPlan:
    return RunPlan(run_id=f"{cell}-onboard-site-s{i}", campaign="exec", cell=cell, level=cell, task="onboard-site",
                   seed=i, stress={"density": 4}, density=4, blocklist=cell == "a1",
                   scenario=ScenarioRef(file="scenarios/default-s7-d4.yaml", hash="ab" * 32),
                   agent={"kind": "scripted", **agent})


def folder(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    (out / "scenarios").mkdir(parents=True)
    (out / "scenarios" / "default-s7-d4.yaml").write_text("name: default-s7-d4\n", encoding="utf-8")
    return out


def comparable(rec: RunRecord, out: Path) -> dict[str, Any]:
    data = json.loads(rec.model_dump_json(exclude=TIMING))
    assert data.pop("trajectory") == str(out / "trajectories" / f"{rec.run_id}.jsonl")
    return data


@pytest.fixture(scope="module")
def dask2():
    """One ``local:2`` Dask executor for the module (its LocalCluster closed at the end)."""
    pytest.importorskip("distributed")
    ex = get_executor("dask", scheduler="local:2", target=FAKE)
    client = ex.connect()
    pids = list(client.run(os.getpid).values())
    assert ex.slots == 2 and len(pids) == 2
    # the preload: a Ctrl-C reaches the runs' own processes, not the worker processes
    assert set(client.run(lambda: signal.getsignal(signal.SIGINT) == signal.SIG_IGN).values()) == {True}
    yield ex
    ex.close()  # the LocalCluster it started is gone with its worker processes
    assert not _still_alive(pids)


def run_all(ex: Any, plans: list[RunPlan], out: Path) -> Sink:
    sink = Sink()
    ex.run(plans, out, sink)
    return sink


def test_same_records_serial_jobs3_dask(tmp_path, dask2):
    plans = [plan(i, cell, sleep_s=0.2, fail=i == 2) for i in range(1, 3) for cell in ("a1", "a2")]
    ids = sorted(p.run_id for p in plans)
    results = {}
    for name, ex in (("serial", get_executor("serial", target=FAKE)),
                     ("local", get_executor("local", jobs=3, target=FAKE)), ("dask", dask2)):
        assert isinstance(ex, Executor) and ex.name == name
        out = folder(tmp_path, name)
        sink = run_all(ex, plans, out)
        if name != "dask":
            ex.close()
        assert sorted(sink.done) == ids, name  # each run id exactly once
        assert sorted(sink.begun) == ids, name
        assert all(sink.events[i] == ["fake_start", "tool_call"] for i in ids), name
        for rid in ids:  # the trajectory is in the results folder, whatever ran it
            lines = (out / "trajectories" / f"{rid}.jsonl").read_text().splitlines()
            assert [json.loads(x)["event"] for x in lines] == ["fake_start", "tool_call"]
        results[name] = {rid: comparable(sink.records[rid], out) for rid in ids}
    assert results["local"] == results["serial"]
    assert results["dask"] == results["serial"]
    labels = {rid: r["label"] for rid, r in results["serial"].items()}
    assert labels == {p.run_id: "clean_failure" if p.seed == 2 else "clean_success" for p in plans}


def test_a_dead_worker_costs_its_run_only_local(tmp_path):
    plans = [plan(i, sleep_s=0.3) for i in range(1, 6)]
    plans[1] = plan(2, die=True)
    out = folder(tmp_path, "local")
    ex = get_executor("local", jobs=2, target=FAKE)
    sink = run_all(ex, plans, out)
    ex.close()
    assert sorted(sink.done) == sorted(p.run_id for p in plans)
    dead = sink.records["a1-onboard-site-s2"]
    assert dead.label == INFRA and dead.infra_error_reason == "worker died: exit code 3"
    assert dead.success is None and dead.cell == "a1" and dead.stress == {"density": 4}
    assert [r.label for k, r in sorted(sink.records.items()) if k != dead.run_id] == ["clean_success"] * 4


def test_a_dead_dask_worker_is_an_infra_error(tmp_path, dask2):
    plans = [plan(1, sleep_s=0.3), plan(2, die="worker"), plan(3, die=True), plan(4, sleep_s=0.3)]
    out = folder(tmp_path, "dask")
    sink = run_all(dask2, plans, out)
    assert sorted(sink.done) == sorted(p.run_id for p in plans)
    killed = sink.records["a1-onboard-site-s2"].infra_error_reason or ""
    assert killed.startswith("worker died: the Dask worker running it was lost"), killed
    assert sink.records["a1-onboard-site-s3"].infra_error_reason == "worker died: exit code 3"
    assert sink.records["a1-onboard-site-s1"].label == sink.records["a1-onboard-site-s4"].label == "clean_success"


@pytest.mark.parametrize("name", ["serial", "local"])
def test_a_run_that_raises_is_an_infra_error(tmp_path, name):
    ex = get_executor(name, target=FAKE, **({"jobs": 2} if name == "local" else {}))
    sink = run_all(ex, [plan(1, **{"raise": "boom"}), plan(2)], folder(tmp_path, name))
    ex.close()
    assert sink.records["a1-onboard-site-s1"].infra_error_reason == "run raised RuntimeError: boom"
    assert sink.records["a1-onboard-site-s2"].label == "clean_success"


def test_a_scenario_file_missing_on_the_worker_is_noticed(tmp_path):
    """The fake reads the plan's scenario file in its working folder, as execute does: without
    it the run is an infra_error (so the Dask test above shows the file was shipped)."""
    ex = get_executor("serial", target=FAKE)
    sink = run_all(ex, [plan(1)], tmp_path)
    assert "scenario file scenarios/default-s7-d4.yaml not found" in str(sink.records["a1-onboard-site-s1"].infra_error_reason)


def test_lost_record_takes_every_factor_from_the_plan():
    p = RunPlan(run_id="llm-onboard-site-s3", campaign="c", cell="llm", level="a2", blocklist=False,
                adapter_options={"max_rows": 5}, task="onboard-site", form="ticket", seed=3,
                stress={"fault_rate": 0.2}, density=6, fault_rate=0.2,
                scenario=ScenarioRef(file="scenarios/x.yaml", hash="cd" * 32),
                agent={"kind": "llm", "model": "m1", "mode": "planner-executor", "recovery": True})
    rec = lost_record(p, "worker died: killed by SIGKILL")
    assert (rec.label, rec.success, rec.damage_free) == (INFRA, None, None)
    assert rec.infra_error_reason == "worker died: killed by SIGKILL"
    assert (rec.run_id, rec.campaign, rec.cell, rec.level, rec.task, rec.form, rec.seed) == (
        "llm-onboard-site-s3", "c", "llm", "a2", "onboard-site", "ticket", 3)
    assert (rec.adapter_options, rec.stress, rec.density, rec.fault_rate) == ({"max_rows": 5}, {"fault_rate": 0.2}, 6, 0.2)
    assert (rec.scenario_hash, rec.model, rec.agent_mode) == ("cd" * 32, "m1", "planner-executor+recovery")


def test_a_scheduler_that_does_not_answer_does_not_cost_the_run(monkeypatch):
    """first_attempt asks the scheduler (a named Event) whether the run started before; a comm
    failure (a timeout under load) must run the run, not lose it."""
    distributed = pytest.importorskip("distributed")
    from ani.campaign.executors import remote

    class Silent:
        def __init__(self, name: str) -> None:
            self.name = name

        def is_set(self) -> bool:
            raise OSError("Timed out during handshake")

    monkeypatch.setattr(distributed, "Event", Silent)
    assert remote.first_attempt("tok", "a1-onboard-site-s1") is True


# -- Ctrl-C and SIGTERM ---------------------------------------------------------------------


def _driver(tmp_path: Path, name: str, options: dict[str, Any], n: int,
            ignore_sigint: bool = False) -> subprocess.Popen[str]:
    """The driver in a session of its own; ``ignore_sigint``: started as ``cmd &`` from a script
    is (SIGINT ignored, inherited)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    pre = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    return subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "executor_driver.py"), str(tmp_path), name, json.dumps(options), str(n)],
        stdout=subprocess.PIPE, text=True, env=env, start_new_session=True, preexec_fn=pre)



def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the driver's process group if the driver still runs (a test that failed midway)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _still_alive(pids: list[int], within_s: float = 10.0) -> list[int]:
    """The PIDs of ``pids`` still alive after waiting up to ``within_s`` seconds for them to go."""
    deadline = time.monotonic() + within_s
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return [p for p in pids if alive(p)]

def _read_until_running(proc: subprocess.Popen[str], n: int) -> tuple[list[dict[str, Any]], list[int]]:
    """Lines until ``n`` runs emitted their first event; returns (lines, their PIDs)."""
    lines, pids = [], []
    assert proc.stdout is not None
    while len(pids) < n:
        line = proc.stdout.readline()
        assert line, f"driver ended early: {lines}"
        msg = json.loads(line)
        lines.append(msg)
        if msg.get("data", {}).get("event") == "fake_start":
            pids.append(msg["data"]["pid"])
    return lines, pids


@pytest.mark.parametrize(("name", "how"), [("local", "ctrl-c"), ("local", "sigterm"), ("dask", "ctrl-c")])
def test_a_stop_ends_every_run_and_leaves_no_worker(tmp_path, name, how, request):
    """``--jobs 2``, or the module's Dask cluster joined as a remote one (``tcp://``: the
    coordinator's Ctrl-C does not reach its workers; the executor stops the runs through
    ``Client.run``); three plans of 120 s, stopped once two have started."""
    if name == "dask":
        options = {"scheduler": request.getfixturevalue("dask2").connect().scheduler.address}
    else:
        options = {"jobs": 2}
    proc = _driver(tmp_path, name, options, 3)
    try:
        lines, pids = _read_until_running(proc, 2)
        if how == "ctrl-c":  # a terminal's Ctrl-C reaches the whole process group
            os.killpg(proc.pid, signal.SIGINT)
        else:  # SIGTERM to the coordinator alone: it forwards SIGINT to its workers
            proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=90)
    finally:
        _kill_group(proc)
    msgs = lines + [json.loads(x) for x in rest.splitlines()]
    assert proc.returncode == 130 and msgs[-1] == {"interrupted": True}, msgs[-3:]
    assert not [m for m in msgs if "finished" in m], msgs  # the interrupted runs are not reported
    workers = next((m["dask_workers"] for m in msgs if "dask_workers" in m), [])
    assert not _still_alive(pids + workers)  # reaped by their parent, which has exited
    labs = tmp_path / "fake-labs"  # each run took its "lab" down (KeyboardInterrupt handling)
    assert not labs.exists() or not list(labs.iterdir())


def test_a_coordinator_that_ignores_sigint_keeps_its_runs_through_a_group_sigint(tmp_path):
    """A campaign started with ``&`` from a script ignores SIGINT (docs/campaigns.md), and a
    Ctrl-C on the script's terminal reaches the script's whole process group. Before, the
    workers set their own SIGINT handler and died of it (each run recorded as an infra_error
    "worker died: exit code 130 (interrupted)"); their runs go on, and the coordinator's own
    stop (SIGTERM, forwarded as SIGINT) still ends them."""
    proc = _driver(tmp_path, "local", {"jobs": 2}, 2, ignore_sigint=True)
    try:
        lines, pids = _read_until_running(proc, 2)
        os.killpg(proc.pid, signal.SIGINT)  # the terminal's Ctrl-C, to the whole group
        time.sleep(1.0)  # let it land (before the fix the workers were gone by then)
        survived = [p for p in pids if alive(p)]
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=90)
    finally:
        _kill_group(proc)
    msgs = lines + [json.loads(x) for x in rest.splitlines()]
    assert survived == pids, msgs
    assert proc.returncode == 130 and msgs[-1] == {"interrupted": True}, msgs[-3:]
    assert not [m for m in msgs if "finished" in m], msgs  # no run recorded as an infra error
    assert not _still_alive(pids)


# -- bad input ------------------------------------------------------------------------------


def test_unknown_executor_lists_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown executor 'threads'; known: serial, local, dask"):
        get_executor("threads")
    assert executor_names() == ["serial", "local", "dask"]


@pytest.mark.parametrize("scheduler", ["local:0", "local:", "local:x", "remote:2", "tcp://host", "tcp://h:0",
                                       "tcp://h:99999", "http://h:8786", "", "tcp://h:8786/x"])
def test_bad_scheduler_strings(scheduler):
    pytest.importorskip("distributed")
    with pytest.raises(ConfigError, match=r"expected local:N .* or tcp://HOST:PORT"):
        get_executor("dask", scheduler=scheduler)


def test_good_scheduler_strings():
    from ani.campaign.executors.dask_executor import parse_scheduler

    assert parse_scheduler("local:3") == ("local", 3)
    assert parse_scheduler("tcp://10.0.0.5:8786") == ("address", "tcp://10.0.0.5:8786")
    assert parse_scheduler("tcp://sched.lan:8786") == ("address", "tcp://sched.lan:8786")


@pytest.mark.parametrize(("name", "options", "match"), [
    ("local", {"jobs": 0}, r"--jobs: expected a whole number >= 1, got 0"),
    ("local", {"jobs": True}, r"--jobs: expected a whole number >= 1"),
    ("local", {"jobs": 2, "workers": 3}, r"executor 'local': .*workers"),
    ("dask", {}, r"executor 'dask': missing a required argument: 'scheduler'"),
    ("serial", {"target": "ani.nowhere:execute"}, r"executor target 'ani.nowhere:execute' cannot be loaded"),
    ("serial", {"target": "execute"}, r"expected 'module:function'"),
])
def test_bad_options(name, options, match):
    with pytest.raises(ConfigError, match=match):
        get_executor(name, **options)


def test_dask_without_distributed_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(ConfigError, match=r"needs the 'distributed' package: pip install 'ani-sdk\[dask\]'"):
        get_executor("dask", scheduler="local:2")


def test_a_killed_coordinator_takes_its_workers_with_it(tmp_path):
    """kill -9 of the coordinator: each worker gets SIGTERM from the kernel (PR_SET_PDEATHSIG),
    its run takes its lab down, and it exits."""
    proc = _driver(tmp_path, "local", {"jobs": 2}, 2)
    try:
        _, pids = _read_until_running(proc, 2)
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 30
        while any(alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of its group (nothing, if it passes)
        except ProcessLookupError:
            pass
    assert not [p for p in pids if alive(p)]
    assert not list((tmp_path / "fake-labs").iterdir())


def test_a_scheduler_address_where_nothing_listens_is_refused_at_once():
    """``--scheduler tcp://127.0.0.1:PORT`` with nothing listening: the error says so after one
    refused TCP connection (before: Dask's Client retried for its whole 30 s timeout)."""
    import socket

    from ani.campaign.executors.dask_executor import DaskExecutor

    with socket.socket() as s:  # a free port, closed again: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ex = DaskExecutor(f"tcp://127.0.0.1:{port}", connect_timeout_s=120.0)
    with pytest.raises(ConfigError, match=rf"--scheduler tcp://127.0.0.1:{port}: cannot connect \(nothing listens there\)"):
        ex.connect()
    assert ex._client is None


class _ForeignServer:
    """A TCP server on 127.0.0.1 that is not a Dask scheduler: on each connection it reads what
    comes, sends ``answer`` and closes (a web server's ``HTTP/1.0 400``, or bytes that Dask's
    framing reads as an exabyte-long frame)."""

    def __init__(self, answer: bytes) -> None:
        import socket
        import threading

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.answer = answer
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(4096)
                    conn.sendall(self.answer)
                except OSError:
                    pass


@pytest.mark.timeout(60)
@pytest.mark.parametrize("answer", [
    b"HTTP/1.0 400 Bad request\r\nContent-Type: text/html\r\n\r\n<html>bad</html>\r\n",  # the dashboard's port
    b"\xff" * 64,  # read as a frame count and an exabyte length (before: MemoryError, a traceback)
])
def test_a_scheduler_address_where_something_else_listens_is_refused(answer):
    """``--scheduler tcp://HOST:PORT`` where a server that is not Dask's listens (e.g. the
    dashboard's HTTP port 8787 given for the scheduler's 8786): one line saying so within the
    probe's bound (before: Dask's Client hung past its own timeout, or raised MemoryError)."""
    from ani.campaign.executors.dask_executor import REACH_S, DaskExecutor

    server = _ForeignServer(answer)
    ex = DaskExecutor(f"tcp://127.0.0.1:{server.port}", connect_timeout_s=120.0)
    t0 = time.monotonic()
    try:
        with pytest.raises(ConfigError, match=rf"--scheduler tcp://127.0.0.1:{server.port}: cannot connect "
                                              r"\(not a Dask scheduler: "):
            ex.connect()
    finally:
        server.sock.close()
    assert time.monotonic() - t0 < REACH_S + 5
    assert ex._client is None
