"""``--executor dask``: runs on a Dask cluster (``distributed``, the ``dask`` extra).

``--scheduler local:N`` starts a ``LocalCluster`` here (N worker processes, one thread each,
each offering one ``labs`` resource) and closes it at the end; ``--scheduler tcp://HOST:PORT``
uses a running cluster (docs/campaigns.md: workers over SSH). Each plan is one task asking for
one ``labs`` unit (``resources={"labs": 1}``, ``pure=False``, ``retries=0``), so a worker
process runs one run at a time and a host runs at most as many as its workers offer.

A worker does not have the results folder: the task gets the plan and the files it needs (its
scenario file, when relative to the results folder), runs it in a temporary folder on the
worker (:func:`ani.campaign.executors.remote.run_remote`) and returns the record and the
trajectory's text; the executor writes ``out_dir/trajectories/<run_id>.jsonl`` and points the
record at it. Events: the task relays the run's trajectory events on a per-campaign topic
(``Worker.log_event``, ``Client.subscribe_topic``; the scheduler keeps at most
``distributed.admin.low-level-log-length`` of them, 1000 by default).

A worker process that dies mid-run and a run whose own process dies are ``infra_error``
records that ``--resume`` runs again. The scheduler reschedules every task the dead worker held
(it queues more than one per worker, whatever its resources): the ones only queued there run
elsewhere, the one that had started is not run again
(:func:`ani.campaign.executors.remote.first_attempt`); a task whose workers died more often
than the scheduler allows (``distributed.scheduler.allowed-failures``, 3) is ``KilledWorker``,
also an ``infra_error``. (With ``allowed-failures: 0`` every task queued on a dead worker
would be lost with it.) Ctrl-C / SIGTERM /
SIGHUP: :func:`ani.campaign.executors.remote.stop_campaign` on every worker (``Client.run``)
stops the runs in flight (each takes its lab down), the executor waits for their tasks, reports
none of them and raises KeyboardInterrupt.
"""

from __future__ import annotations

import logging
import queue
import re
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ani.campaign.executors.base import DEFAULT_TARGET, RunSink, error_text, load_target, lost_record
from ani.campaign.executors.local import STOP_GRACE_S, _forward_stop_signals
from ani.campaign.plan import RunPlan
from ani.campaign.results import RunRecord
from ani.errors import ConfigError

INSTALL_HINT = "pip install 'ani-sdk[dask]'"
#: the worker resource a run takes one unit of (a worker offering ``labs=1`` runs one at a time)
RESOURCE = "labs"
_LOCAL = re.compile(r"^local:([1-9][0-9]{0,3})$")
_ADDRESS = re.compile(r"^(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$")
#: seconds to wait for a worker offering the ``labs`` resource before giving up
WORKER_WAIT_S = 30.0


def parse_scheduler(text: str) -> tuple[str, int | str]:
    """``("local", N)`` for ``local:N``, ``("address", "tcp://HOST:PORT")`` for an address.

    Raises:
        ConfigError: anything else (names the accepted forms).
    """
    s = str(text).strip()
    m = _LOCAL.match(s)
    if m:
        return "local", int(m.group(1))
    m = _ADDRESS.match(s)
    if m and 0 < int(m.group(3)) < 65536:
        return "address", s
    raise ConfigError(f"--scheduler {text!r}: expected local:N (N worker processes here, N >= 1) "
                      "or tcp://HOST:PORT (a running Dask scheduler)")


#: how long the scheduler's port may take to accept a TCP connection (seconds): a refused or
#: unroutable address is said at once, not after Dask's whole connect timeout
REACH_S = 5.0


def reachable(address: str, timeout_s: float = REACH_S) -> None:
    """One TCP connection to ``tcp://HOST:PORT`` (closed at once).

    Raises:
        ConfigError: ``--scheduler <address>: cannot connect (<reason>)``, e.g. connection refused:
            nothing listens there.
    """
    import socket

    m = _ADDRESS.match(address)
    if m is None:  # parse_scheduler accepted it: cannot happen
        return
    host = m.group(2).strip("[]")
    try:
        socket.create_connection((host, int(m.group(3))), timeout=timeout_s).close()
    except OSError as exc:
        why = "nothing listens there" if isinstance(exc, ConnectionRefusedError) else error_text(exc)
        raise ConfigError(f"--scheduler {address}: cannot connect ({why})") from None


async def _identity(address: str, timeout_s: float) -> Any:
    from distributed import Security
    from distributed.comm import connect

    # the client's connection arguments from Dask's configuration (tls:// certificates), as the Client's
    comm = await connect(address, timeout=timeout_s, **Security().get_connection_args("client"))
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def speaks_dask(address: str, timeout_s: float = REACH_S) -> None:
    """Ask ``address`` who it is (Dask's ``identity`` operation), within ``timeout_s`` in all.

    Something that accepts the TCP connection but is not a Dask scheduler (a web server, an
    SSH daemon, a proxy) would otherwise hang Dask's Client past its own timeout, or make it
    read a length from foreign bytes and try to allocate exabytes (MemoryError).

    Raises:
        ConfigError: ``--scheduler <address>: cannot connect (not a Dask scheduler: <why>)``.
    """
    import asyncio

    try:
        info = asyncio.run(asyncio.wait_for(_identity(address, timeout_s), timeout_s))
    except asyncio.TimeoutError:
        why = f"no Dask answer within {timeout_s:g} s"
    except Exception as exc:  # noqa: BLE001 - foreign bytes fail anywhere in Dask's framing
        why = error_text(exc)
    else:
        if isinstance(info, dict) and info.get("type") == "Scheduler":
            return
        why = f"it answered as {info.get('type')!r}" if isinstance(info, dict) else "an unexpected answer"
    raise ConfigError(f"--scheduler {address}: cannot connect (not a Dask scheduler: {why})")


def require_distributed() -> None:
    """Raises ConfigError with the install hint when ``distributed`` is not installed."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise ConfigError(f"--executor dask needs the 'distributed' package: {INSTALL_HINT}") from None


class DaskExecutor:
    """Runs plans as tasks of a Dask cluster.

    Args:
        scheduler: ``local:N`` or ``tcp://HOST:PORT``.
        target: the run function, ``module:function`` (importable on the workers too).
        connect_timeout_s: how long to wait for the scheduler, then for a worker with the
            ``labs`` resource.

    Raises:
        ConfigError: a bad ``scheduler``, ``distributed`` missing, a ``target`` that cannot
            be loaded (nothing is started).
    """

    name = "dask"

    def __init__(self, scheduler: str, *, target: str = DEFAULT_TARGET,
                 connect_timeout_s: float = WORKER_WAIT_S) -> None:
        self.kind, self.where = parse_scheduler(scheduler)
        require_distributed()
        load_target(target)
        self.target = target
        self.connect_timeout_s = connect_timeout_s
        #: runs at once: N for local:N; for a cluster, its workers' ``labs`` at connection
        self.slots = int(self.where) if self.kind == "local" else 0
        self._client: Any = None
        self._cluster: Any = None

    # -- the cluster --------------------------------------------------------------------------

    def connect(self) -> Any:
        """The Client (started on first use; a LocalCluster too for ``local:N``).

        Raises:
            ConfigError: the scheduler cannot be reached, or no worker offers ``labs``
                within ``connect_timeout_s``.
        """
        if self._client is not None:
            return self._client
        from distributed import Client, LocalCluster

        if self.kind == "local":
            self._cluster = LocalCluster(
                n_workers=int(self.where), threads_per_worker=1, processes=True,
                resources={RESOURCE: 1}, dashboard_address=":0", silence_logs=logging.ERROR,
                preload=["ani.campaign.executors.remote"])
            self._client = Client(self._cluster)
        else:
            reachable(str(self.where), min(REACH_S, self.connect_timeout_s))
            speaks_dask(str(self.where), min(REACH_S, self.connect_timeout_s))
            try:
                self._client = Client(str(self.where), timeout=self.connect_timeout_s)
            except (OSError, TimeoutError) as exc:
                raise ConfigError(f"--scheduler {self.where}: cannot connect ({error_text(exc)})") from None
        self.slots = self._wait_capacity()
        return self._client

    def _wait_capacity(self) -> int:
        deadline = time.monotonic() + self.connect_timeout_s
        while True:
            n = labs_capacity(self._client.scheduler_info())
            if n or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if not n:
            raise ConfigError(f"--scheduler {self.where}: no worker offers the '{RESOURCE}' resource "
                              f"(start workers with --nthreads 1 --resources {RESOURCE}=1)")
        return n

    def close(self) -> None:
        """Close the Client, and the LocalCluster this executor started."""
        client, cluster, self._client, self._cluster = self._client, self._cluster, None, None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()

    # -- running ------------------------------------------------------------------------------

    def run(self, plans: Sequence[RunPlan], out_dir: Path, sink: RunSink) -> None:
        """Run ``plans`` on the cluster (see :class:`ani.campaign.executors.base.Executor`).

        Raises:
            KeyboardInterrupt: stopped; the runs in flight are not reported.
            ConfigError: as :meth:`connect`.
        """
        if not plans:
            return
        from distributed import as_completed

        out = Path(out_dir)
        files = {p.run_id: files_for(p, out) for p in plans}  # a missing file: before any task
        client = self.connect()
        token = uuid.uuid4().hex[:16]
        topic = f"ani-events-{token}"
        inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        client.subscribe_topic(topic, lambda ev: inbox.put(ev[1]))
        from ani.campaign.executors.remote import run_remote

        futures = {
            client.submit(run_remote, p.to_line(), files[p.run_id], self.target, token, topic,
                          key=f"ani-run-{token}-{p.run_id}", resources={RESOURCE: 1}, pure=False,
                          retries=0): p
            for p in plans
        }
        run = _DaskRun(futures, inbox, sink, out)
        try:
            with _forward_stop_signals():
                run.wait(as_completed(list(futures)))
        except BaseException:
            self._stop(client, token, run)
            raise
        finally:
            try:
                client.unsubscribe_topic(topic)
            except Exception:  # noqa: BLE001 - a closing client
                pass

    def _stop(self, client: Any, token: str, run: _DaskRun) -> None:
        """Stop the campaign's runs on every worker, wait for their tasks (reporting the ones
        that finished first), cancel what is left."""
        from distributed import wait

        from ani.campaign.executors.remote import stop_campaign

        try:
            client.run(stop_campaign, token, on_error="ignore")
            wait(list(run.futures), timeout=STOP_GRACE_S)
            run.collect(stopping=True)
        except KeyboardInterrupt:
            pass  # a second Ctrl-C: stop waiting
        except Exception:  # noqa: BLE001 - the cluster is going; the runs take their labs down
            logging.getLogger("ani.campaign.executors").warning("dask: stopping the runs failed", exc_info=True)
        client.cancel(list(run.futures))


class _DaskRun:
    """The state of one :meth:`DaskExecutor.run`: futures left, events, what was reported."""

    def __init__(self, futures: dict[Any, RunPlan], inbox: queue.SimpleQueue[Any], sink: RunSink, out: Path) -> None:
        self.futures, self.inbox, self.sink, self.out = futures, inbox, sink, out
        self.by_id = {p.run_id: p for p in futures.values()}
        self.started: set[str] = set()
        self.done: set[str] = set()

    def wait(self, ac: Any) -> None:
        while self.futures:
            self.events(0.2)
            if ac.has_ready():
                for fut in ac.next_batch(block=False):
                    self.events(0.0)
                    self.finish(fut)

    def collect(self, stopping: bool) -> None:
        """Report the futures done now (while stopping: only real records)."""
        self.events(0.0)
        for fut in [f for f in self.futures if f.done()]:
            self.finish(fut, stopping=stopping)

    def events(self, timeout: float) -> None:
        """Pass on the events that arrived (waiting up to ``timeout`` s for the first)."""
        try:
            msg = self.inbox.get(timeout=timeout) if timeout else self.inbox.get_nowait()
        except queue.Empty:
            return
        while True:
            self.on_event(msg)
            try:
                msg = self.inbox.get_nowait()
            except queue.Empty:
                return

    def on_event(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            return
        plan = self.by_id.get(str(msg.get("run_id")))
        if plan is None or plan.run_id in self.done:
            return
        if msg.get("kind") == "started":
            self._started(plan)
        elif msg.get("kind") == "event" and isinstance(msg.get("event"), dict):
            self._started(plan)
            self.sink.event(plan.run_id, msg["event"])

    def _started(self, plan: RunPlan) -> None:
        if plan.run_id not in self.started:
            self.started.add(plan.run_id)
            self.sink.started(plan)

    def finish(self, fut: Any, stopping: bool = False) -> None:
        plan = self.futures.pop(fut, None)
        if plan is None:
            return
        record = self.outcome(fut, plan, stopping)
        if record is None:
            return
        self._started(plan)
        self.done.add(plan.run_id)
        self.sink.finished(plan, record)

    def outcome(self, fut: Any, plan: RunPlan, stopping: bool) -> RunRecord | None:
        """The record of a finished task (None: an interrupted run, reported by no one)."""
        if fut.status == "finished":
            result = fut.result()
            if "record" in result:
                return self.store(plan, result)
            if result.get("interrupted"):
                return None if stopping else lost_record(plan, "interrupted on its worker")
            return None if stopping else lost_record(plan, str(result.get("lost") or "lost"))
        if stopping:
            return None
        if fut.status == "error":
            exc = fut.exception()
            if type(exc).__name__ == "KilledWorker":
                return lost_record(plan, f"worker died: {error_text(exc)}")
            return lost_record(plan, f"dask task failed: {error_text(exc)}")
        return lost_record(plan, f"dask task {fut.status}")

    def store(self, plan: RunPlan, result: dict[str, Any]) -> RunRecord:
        """Write the trajectory into the results folder; the record points at it."""
        record = RunRecord.model_validate(result["record"])
        text = result.get("trajectory")
        path = None
        if text is not None:
            path = self.out / "trajectories" / f"{plan.run_id}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return record.model_copy(update={"trajectory": str(path) if path else None})


def files_for(plan: RunPlan, out_dir: Path) -> dict[str, bytes]:
    """The files a worker needs that only the results folder has: the plan's scenario file when
    it is relative to ``out_dir`` (``{"scenarios/default-s7-d4.yaml": b"..."}``). An absolute
    one must exist on the workers (the same path on every host). Raises ConfigError if the
    relative file is missing."""
    rel = plan.scenario.file
    if not rel or Path(rel).is_absolute():
        return {}
    path = out_dir / rel
    try:
        return {rel: path.read_bytes()}
    except OSError as exc:
        raise ConfigError(f"run {plan.run_id}: scenario file {rel} in {out_dir} cannot be read "
                          f"({exc.strerror or type(exc).__name__})") from None


def labs_capacity(info: dict[str, Any]) -> int:
    """The ``labs`` units the cluster's workers offer (``Client.scheduler_info()``)."""
    workers = info.get("workers", {}) if isinstance(info, dict) else {}
    total = 0.0
    for w in workers.values():
        total += float((w.get("resources") or {}).get(RESOURCE, 0) or 0)
    return int(total)
