"""Faults of the lab's own parts during a real run (issue 11, section 1): who is to blame.

- the lab's NETCONF server dies under an A2 run (a harness helper crashed): infrastructure error
  naming it, not graded;
- an FRR daemon dies while the agent changed nothing: the host's fault, infrastructure error;
- an FRR daemon dies after the agent changed a configuration: the harness cannot tell whether
  the change killed it, so the run is graded and ``unattributed`` says so (summary.md too).

The faults are made for real (SIGKILL of the verified PID of this lab's process) by a wrapper
around the scripted agent, through the campaign runner.
"""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest

from ani.campaign.report import render_markdown, summarize
from ani.campaign.runner import RunnerDeps, _real_create_agent, run_one
from ani.campaign.spec import parse_spec

pytestmark = pytest.mark.integration


def _spec(tmp_path, level: str) -> Any:  # noqa: ANN001
    return parse_spec({"name": "faults", "scenario": "scenarios/brownfield-small.yaml", "task": "onboard-site",
                       "variants": 1, "agent": {"kind": "scripted"}, "budget": {"max_steps": 40, "wall_clock_s": 300},
                       "cells": [{"name": level, "level": level}]}, "test", tmp_path)


def _kill_daemon(lab: Any, router: str, daemon: str) -> int:
    from ani.lab import frr

    pid = lab._state.pids[router][daemon]
    assert frr.owns(pid, lab.pathspace(router))  # this lab's daemon, verified
    os.kill(pid, signal.SIGKILL)
    return pid


class Wrapped:
    """The scripted agent, with ``before(adapter)`` / ``after(adapter)`` around its run."""

    def __init__(self, inner: Any, before=None, after=None) -> None:  # noqa: ANN001
        self.inner, self.before, self.after = inner, before, after

    def run(self, task: Any, adapter: Any, budget: Any) -> Any:
        if self.before:
            self.before(adapter)
        out = self.inner.run(task, adapter, budget)
        if self.after:
            self.after(adapter)
        return out


def _deps(**kw: Any) -> RunnerDeps:
    return RunnerDeps(create_agent=lambda cfg: Wrapped(_real_create_agent(cfg), **kw))


def test_the_netconf_server_dying_under_an_a2_run_is_an_infra_error(lab_host, tmp_path):
    from ani.lab import netconf as nc

    killed: list[int] = []

    def kill_server(adapter: Any) -> None:
        lab = adapter.lab
        pids = nc.server_pids(lab.id, lab.dir, lab._state.netconf_pid, lab._state.netconf_start)
        assert pids
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        killed.extend(pids)

    rec = run_one(_spec(tmp_path, "a2"), "a2", 1, tmp_path / "out", deps=_deps(before=kill_server))
    assert killed
    assert rec.label == "infra_error" and rec.success is None
    assert f"its NETCONF server (pid {killed[0]}) is not running" in rec.infra_error_reason
    assert rec.infra_error_reason.startswith("host fault during the run: ")


def test_a_daemon_dying_while_the_agent_changed_nothing_is_the_hosts_fault(lab_host, tmp_path):
    class Idle:
        def run(self, task: Any, adapter: Any, budget: Any) -> Any:
            assert adapter.call("get_running_config", {"device": "e2"}).ok  # reads only
            _kill_daemon(adapter.lab, "e2", "bgpd")

    deps = RunnerDeps(create_agent=lambda cfg: Idle())
    rec = run_one(_spec(tmp_path, "a1"), "a1", 1, tmp_path / "out", deps=deps)
    assert rec.label == "infra_error" and rec.changed_calls == 0
    assert rec.infra_error_reason == (
        "host fault during the run: FRR daemon(s) stopped while the agent changed nothing: bgpd on e2")


def test_a_daemon_dying_after_the_agents_change_is_graded_and_unattributed(lab_host, tmp_path):
    rec = run_one(_spec(tmp_path, "a1"), "a1", 1, tmp_path / "out",
                  deps=_deps(after=lambda adapter: _kill_daemon(adapter.lab, "e1", "bgpd")))
    assert rec.label != "infra_error" and rec.changed_calls > 0
    assert rec.success is False  # e1's BGP is down: its sites are unreachable
    assert rec.unattributed == (
        f"FRR daemon(s) not running at grading time: bgpd on e1, after {rec.changed_calls} changing call(s) "
        "of the agent: the harness cannot tell whether the agent's change or the host stopped them")
    md = render_markdown(summarize([rec], {}))
    assert f"- `{rec.run_id}` ({rec.label}): {rec.unattributed}" in md
