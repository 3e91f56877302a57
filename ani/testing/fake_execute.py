"""A fake run function for unit tests of executors and coordinators: the signature of
:func:`ani.campaign.execute.execute`, no lab, no agent.

    get_executor("local", jobs=3, target="ani.testing.fake_execute:execute")

What a plan's ``agent`` block asks of it (a real agent block is never read otherwise):

- ``sleep_s``: seconds it "runs" (default 0);
- ``die``: ``True``: the process exits at once (``os._exit(DIE_CODE)``) mid-run, as a crashed
  worker; ``"worker"``: it kills the Dask worker process that started it with SIGKILL (only
  there: the run host's parent must be the PID in ``$ANI_DASK_WORKER_PID``, else it is ``True``);
- ``raise``: it raises RuntimeError with that text (a harness fault);
- ``fail``: the verdict is a clean failure (default: clean success).

A relative scenario file (``plan.scenario.file``) must be in ``workdir`` (ConfigError if not),
as ``execute`` reads it there.

It writes ``<workdir>/trajectories/<run_id>.jsonl`` (its events), emits a ``fake_start``
event (with its ``pid``) and a ``tool_call`` event through ``on_event``, and holds a "lab"
while it runs: ``<workdir>/fake-labs/<run_id>`` (holding its PID), removed on the way out, a
KeyboardInterrupt included (then re-raised, as ``execute`` does). The record's verdict and
factors depend on the plan only; ``deps`` is accepted and ignored.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ani.campaign.executors.remote import DASK_WORKER_ENV
from ani.campaign.plan import RunPlan
from ani.campaign.results import CheckOutcome, RunRecord
from ani.errors import ConfigError

#: exit code of a run told to ``die``
DIE_CODE = 3


def lab_marker(workdir: str | Path, run_id: str) -> Path:
    """The file that stands for the run's lab while it runs."""
    return Path(workdir) / "fake-labs" / run_id


def execute(plan: RunPlan, workdir: str | Path, *, deps: Any = None,
            on_event: Callable[[dict[str, Any]], None] | None = None) -> RunRecord:
    """Run ``plan`` as described in the module doc; returns its RunRecord.

    Raises:
        RuntimeError: the plan's agent block has ``raise``.
        KeyboardInterrupt: after removing its lab marker.
    """
    del deps
    work = Path(workdir)
    _scenario(plan, work)
    agent = dict(plan.agent)
    started, t0 = datetime.now(UTC), time.monotonic()
    traj = work / "trajectories" / f"{plan.run_id}.jsonl"
    traj.parent.mkdir(parents=True, exist_ok=True)
    marker = lab_marker(work, plan.run_id)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(os.getpid()), encoding="utf-8")
    try:
        with traj.open("w", encoding="utf-8") as fh:
            _emit(fh, on_event, {"event": "fake_start", "run_id": plan.run_id, "pid": os.getpid()})
            _misbehave(agent)
            time.sleep(float(agent.get("sleep_s", 0) or 0))
            _emit(fh, on_event, {"event": "tool_call", "run_id": plan.run_id, "level": plan.level,
                                 "tool": "get_topology", "arguments": {}, "ok": True, "changed": False})
    finally:
        marker.unlink(missing_ok=True)
    return _record(plan, agent, traj, started, t0)


def _scenario(plan: RunPlan, work: Path) -> None:
    """Read the plan's scenario file as execute does (relative to the working folder).
    Raises ConfigError when it is not there."""
    rel = plan.scenario.file
    if rel and not (work / rel).is_file():
        raise ConfigError(f"scenario file {rel} not found in the working folder")


def _misbehave(agent: dict[str, Any]) -> None:
    if agent.get("raise"):
        raise RuntimeError(str(agent["raise"]))
    die = agent.get("die")
    if die == "worker" and os.environ.get(DASK_WORKER_ENV) == str(os.getppid()):
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(30)  # the kernel's SIGTERM (PR_SET_PDEATHSIG) ends this
    if die:
        os._exit(DIE_CODE)


def _emit(fh: Any, on_event: Callable[[dict[str, Any]], None] | None, event: dict[str, Any]) -> None:
    fh.write(json.dumps(event) + "\n")
    fh.flush()
    if on_event is not None:
        on_event(event)


def _record(plan: RunPlan, agent: dict[str, Any], traj: Path, started: datetime, t0: float) -> RunRecord:
    success = not agent.get("fail")
    return RunRecord(
        run_id=plan.run_id, campaign=plan.campaign, cell=plan.cell, level=plan.level,
        blocklist=plan.blocklist, adapter_options=dict(plan.adapter_options), task=plan.task,
        seed=plan.seed, scenario_hash=plan.scenario.hash, density=plan.density, stress=dict(plan.stress),
        label="clean_success" if success else "clean_failure", success=success, damage_free=True,
        tests=[CheckOutcome(name="reach", passed=success)], invariants=[CheckOutcome(name="baseline", passed=True)],
        steps=1, tool_calls=1, stop_reason="submitted", form=plan.form, fault_rate=plan.fault_rate,
        wall_s=round(time.monotonic() - t0, 3), agent_s=0.0, started=started, ended=datetime.now(UTC),
        trajectory=str(traj),
    )
