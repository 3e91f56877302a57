"""The issue's probe at the runner (issue 24 §1): 9 runs in threads of one process, one of them
meeting a missing program that its adapter turned into an ordinary failure; only that run is an
infrastructure error.

The runs overlap for sure (a barrier before and after every agent); the missing program is the
one run's thread's only (the registry's ``locate`` answers per thread: the host of that run).
Strict xfail until :mod:`ani.campaign.execute` reads the run's :func:`ani.host.programs.fault_scope`
instead of the process journal (``fault_mark`` / ``faults_since``: 9 of 9 here); then it passes
(checked with that change) and the marker goes.
"""

from __future__ import annotations

import threading

import pytest

from ani.campaign.runner import run_one
from ani.campaign.spec import parse_spec
from ani.host import programs
from test_host_faults_runner import Agent, World

RUNS, FAULTY = 9, 4


def test_nine_runs_in_threads_only_the_one_that_met_the_fault_is_an_infra_error(tmp_path, monkeypatch):
    (tmp_path / "scen.yaml").write_text("fake: true\n")
    spec = parse_spec({"name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": RUNS,
                       "cells": [{"name": "a1", "level": "a1"}]}, "test", tmp_path)
    gone = threading.local()
    real = programs.Program.locate
    monkeypatch.setattr(programs.Program, "locate",
                        lambda self: None if getattr(gone, "on", False) and self.name == "frr-reload.py" else real(self))
    together = threading.Barrier(RUNS, timeout=60)

    class Overlapping(Agent):
        def run(self, task, adapter, budget):  # noqa: ANN001, ANN201
            together.wait()  # every run's agent is under way
            try:
                return super().run(task, adapter, budget)
            finally:
                together.wait()  # every run's agent has finished before any is graded

    records = {}

    def run(k: int) -> None:
        world = World([("set", "site")] + ([("swallow", "x")] if k == FAULTY else []))
        deps = world.deps()
        deps.create_agent = lambda cfg: Overlapping(world)
        gone.on = k == FAULTY
        records[k] = run_one(spec, "a1", k + 1, tmp_path / f"r{k}", deps=deps)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(RUNS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(records) == list(range(RUNS))
    assert records[FAULTY].label == "infra_error"
    assert "frr-reload.py is missing" in (records[FAULTY].infra_error_reason or "")
    assert {k: r.label for k, r in records.items() if k != FAULTY} == {
        k: "clean_success" for k in range(RUNS) if k != FAULTY}
