"""The agent with a known error profile on a real lab (issue 25 §2): at A1 on the generated
default brownfield (``scenarios/default.yaml``, scenario seed 7), ``onboard-site`` variant 1,
``agent: {kind: scripted, mistakes: {rate: 1, kinds: [shared-entry-collision]}}`` through the
real campaign runner (``ani.campaign.runner.run_one``): the new site's prefix-list entry takes
the sequence number of another tenant's entry in the edge's shared ``PL-TENANTS``, replacing
it. The record carries the mistake; its footprint is in the routers' running configuration
(read out of band right after the agent); the invariants the kind expects to break
(computed from the scenario's own invariants) are exactly those that failed at grading.

One run, module-scoped (a 9-router lab: about a minute).
"""

from __future__ import annotations

from typing import Any

import pytest
from procs import track_labs

from ani.agents import create_agent
from ani.agents.mistakes import Made, get_mistake, reached
from ani.campaign.known_answer import made_of
from ani.campaign.runner import RunnerDeps, run_one
from ani.campaign.spec import parse_spec

pytestmark = pytest.mark.integration
LAB_NETCONF = False  # conftest's make_lab: no test here uses the lab's NETCONF server

KIND = "shared-entry-collision"
SOURCE = {"manifest": "scenarios/default.yaml", "scenario_seed": 7}
SEED = 1


class ReadsAfter:
    """The real agent, then an out-of-band read of the routers its mistake touched (the lab
    the runner made), before the runner grades and tears the lab down."""

    def __init__(self, inner: Any, labs: list[Any]) -> None:
        self.inner, self.labs, self.name = inner, labs, inner.name
        self.final: dict[str, Any] = {}

    def run(self, task: Any, adapter: Any, budget: Any) -> Any:
        from ani.device.apply import read

        out = self.inner.run(task, adapter, budget)
        for r in (out.mistake or {}).get("footprint", {}):
            self.final[r] = read(self.labs[-1], r)
        return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from conftest import _require_lab_host

    _require_lab_host()
    pytest.importorskip("ani.adapters.a1", reason="the A1 adapter has not landed")
    tmp = tmp_path_factory.mktemp("mistake")
    spec = parse_spec(
        {"name": "mistake", **SOURCE, "task": "onboard-site", "variants": 1, "seed": SEED,
         "agent": {"kind": "scripted", "mistakes": {"rate": 1.0, "kinds": [KIND]}},
         "cells": [{"name": "a1", "level": "a1"}], "budget": {"max_steps": 60, "wall_clock_s": 120},
         "observer_bound_s": 10},
        "test", tmp,
    )
    deps, agents = RunnerDeps(), []
    labs = track_labs(deps)  # the runner's lab options (prefix, servers) kept

    def make_agent(cfg):
        agents.append(ReadsAfter(create_agent(cfg), labs))
        return agents[-1]

    deps.create_agent = make_agent
    rec = run_one(spec, "a1", SEED, tmp / "out", deps=deps)
    return rec, agents[0].final, tmp / "out"


def test_the_record_carries_the_mistake_and_the_trajectory_says_it(run):
    from ani.trajectory import Trajectory

    rec, _final, _out = run
    assert rec.mistake is not None, (rec.label, rec.agent_error, rec.infra_error_reason)
    made = Made.model_validate(made_of(rec.mistake))  # the record adds the known answer's keys
    assert made.kind == KIND and made.expressed and made.target["tenant"] != "red"  # variant 1 onboards red
    events = [e for e in Trajectory.read(rec.trajectory) if e["event"] == "agent_mistake"]
    assert len(events) == 1 and events[0]["mistake"] == made_of(rec.mistake)


def test_the_footprint_reached_the_routers(run):
    rec, final, _out = run
    fp = rec.mistake["footprint"]
    edge = rec.mistake["target"]["router"]
    assert set(fp) == {edge} and any(ln.startswith("- ip prefix-list PL-TENANTS ") for ln in fp[edge])
    assert reached(fp, final) is True


def test_exactly_the_expected_invariants_fail(run):
    from ani.intents.inventory import network_configs
    from ani.scenario.generate import generate_scenario

    rec, _final, _out = run
    scenario = generate_scenario(SOURCE["manifest"], seed=SOURCE["scenario_seed"])
    made = Made.model_validate(made_of(rec.mistake))
    expected = get_mistake(KIND).expected_breaks(made, scenario.invariants, network_configs(scenario))
    flagged = [i.name for i in rec.invariants if not i.passed]
    assert expected and rec.damage_free is False
    assert sorted(flagged) == sorted(expected), (flagged, expected)
    # the known answer the campaign added after grading says the same (ani.campaign.known_answer)
    assert (rec.mistake["expected_breaks"], rec.mistake["flagged"]) == (expected, flagged)
    assert rec.mistake["reached"] is True and rec.mistake["prevented"] is False
    # the victim's service is what broke
    assert {i.service for i in rec.invariants if not i.passed} >= {f"tenant:{rec.mistake['target']['tenant']}"}
