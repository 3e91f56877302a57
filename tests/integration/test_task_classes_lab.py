"""The task classes change-set, decommission and troubleshoot on real FRR (brownfield-small).

For each class and seed: the lab of the variant comes up with every baseline invariant that the
variant does not supersede passing; the hidden tests FAIL before anything is changed (the
negative control); a reference solution makes them all PASS with every baseline invariant
intact. The reference solutions:

- change-set, decommission: the variant's file as typed service intents (``tenant-site``
  onboard / move / remove) compiled by A3-T's compiler (``ani.intents.compile_changes``) against
  the routers' running configs and applied per router by ``ani.device.apply.apply``;
- troubleshoot: the configuration the brownfield had before the fault was placed
  (``ani.intents.network_configs(scenario)``), applied to the routers the fault overrode.

One lab per variant (its topology or its startup configs differ), except decommission, whose
three seeds share the scenario's own lab (put back between seeds). The module's cases are
independent labs: they run three at a time in its first test (:mod:`side_by_side`, issue 28 §4),
each test taking its own case's outcome.
"""

from __future__ import annotations

import time
from functools import partial

import pytest
import yaml
from side_by_side import outcome, runner_deps, side_by_side, with_labs

from ani.observer import Observer, summarize
from ani.observer.checks import ReachCheck
from ani.scenario import get_task_class, load_scenario

pytestmark = pytest.mark.integration

SCENARIO = load_scenario("scenarios/brownfield-small.yaml")
BOUND_S = 20.0


def _baseline(variant):
    return [c for c in SCENARIO.invariants if c.name not in variant.superseded]


def _apply(lab, configs) -> None:
    from ani.device.apply import apply

    for router, cfg in sorted(configs.items()):
        apply(lab, router, cfg)


def _apply_changes(lab, changes) -> list[str]:
    from ani.device.apply import read
    from ani.intents import Pools, compile_changes

    configs = {r: read(lab, r) for r in lab.routers}
    result = compile_changes(changes, configs, pools=Pools.for_scenario(SCENARIO, configs))
    _apply(lab, result.configs)
    return result.routers


def _before_and_after(lab, variant, solve) -> None:
    obs = Observer(lab)
    base = _baseline(variant)
    t0 = time.monotonic()
    res = obs.evaluate(base, bound_s=BOUND_S)
    assert all(r.passed for r in res), summarize(res)
    hidden = obs.evaluate(variant.hidden_tests, bound_s=2.0)
    failing = [r.name for r in hidden if not r.passed]
    assert failing, f"{variant.variant_id}: the hidden tests pass before the agent acts"
    solve()
    res = obs.evaluate([*variant.hidden_tests, *base], bound_s=BOUND_S)
    assert all(r.passed for r in res), summarize(res)
    print(f"{variant.variant_id}: {len(failing)}/{len(hidden)} hidden tests failing before, all "
          f"{len(res)} pass after ({time.monotonic() - t0:.1f} s)")


def _file(variant) -> dict:
    tc = get_task_class(variant.task_class)
    return yaml.safe_load(variant.files[tc.intent_file])


def _change_set(make_lab, seed):
    v = get_task_class("change-set").variant(SCENARIO, seed)
    f = _file(v)
    lab = make_lab(v.lab_topology(SCENARIO), netconf=False)
    t = f["tenant"]
    changes = [
        {"type": "tenant-site", "action": "onboard", "tenant": t, "site": a["site"], "edge": a["edge"],
         "prefix": a["prefix"], "gateway": a["gateway"]} for a in f["add"]
    ] + [
        {"type": "tenant-site", "action": "move", "tenant": t, "site": m["site"], "edge": m["to_edge"]}
        for m in f["move"]
    ] + [{"type": "tenant-site", "action": "remove", "tenant": t, "site": r["site"]} for r in f["remove"]]
    _before_and_after(lab, v, lambda: _apply_changes(lab, changes))


def _decommission(make_lab):
    from ani.device.apply import read

    lab = make_lab(SCENARIO.topology, netconf=False)
    original = {r: read(lab, r) for r in lab.routers}
    for seed in (0, 1, 2):
        v = get_task_class("decommission").variant(SCENARIO, seed)
        assert v.lab_topology(SCENARIO) == SCENARIO.topology
        f = _file(v)
        change = {"type": "tenant-site", "action": "remove", "tenant": f["tenant"], "site": f["site"]}
        _before_and_after(lab, v, lambda: _apply_changes(lab, [change]))
        _apply(lab, {r: c for r, c in original.items() if read(lab, r) != c})  # back to the brownfield


def _troubleshoot_seeds() -> list[int]:
    """The first seed of each fault kind (all four kinds, so each fault's control is proven)."""
    from ani.scenario.tasks.troubleshoot import KINDS

    tc, seeds = get_task_class("troubleshoot"), {}
    for s in range(100):
        seeds.setdefault(tc.variant(SCENARIO, s).params["fault"], s)
    return [seeds[k] for k in KINDS]


def _troubleshoot(make_lab, seed):
    from ani.device.apply import read
    from ani.intents import network_configs

    v = get_task_class("troubleshoot").variant(SCENARIO, seed)
    lab = make_lab(v.lab_topology(SCENARIO), netconf=False)
    healthy = network_configs(SCENARIO)
    assert all(read(lab, r) != healthy[r] for r in v.overrides)  # the lab started from the overrides
    _before_and_after(lab, v, lambda: _apply(lab, {r: healthy[r] for r in v.overrides}))


class _IdleAgent:
    """Looks at one router and submits: the fault stays."""

    name = "idle"

    def run(self, task, adapter, budget):
        from ani.agents.base import AgentRun

        adapter.call("show", {"device": "e1", "command": "show ip route"})
        return AgentRun(stop_reason="submitted", steps=1, submitted=True)


def _the_runner_leaves_superseded_invariants_out_of_baseline_and_damage(tmp_path):
    """A troubleshoot variant whose fault breaks isolation invariants runs through run_one on a
    real lab: the baseline check passes (those invariants are superseded), the idle agent's
    run is a clean failure (the hidden tests fail, nothing else is damage) and the record lists
    the superseded names."""
    from ani.campaign.runner import run_one
    from ani.campaign.spec import parse_spec

    seed = _troubleshoot_seeds()[2]
    v = get_task_class("troubleshoot").variant(SCENARIO, seed)
    assert v.params["fault"] == "firewall-set-missing" and v.superseded
    spec = parse_spec(
        {"name": "sup", "scenario": "scenarios/brownfield-small.yaml", "task": "troubleshoot",
         "variants": 1, "seed": seed, "agent": {"kind": "scripted"}, "cells": [{"name": "a1", "level": "a1"}]},
        "test",
    )
    deps = runner_deps(create_agent=lambda cfg: _IdleAgent())
    rec = run_one(spec, "a1", seed, tmp_path, deps=deps)
    assert rec.label == "clean_failure", (rec.infra_error_reason, [t for t in rec.invariants if not t.passed])
    assert rec.superseded == v.superseded
    assert not {i.name for i in rec.invariants} & set(v.superseded)
    assert len(rec.invariants) == len(SCENARIO.invariants) - len(v.superseded)
    failed = {t.name for t in rec.tests if not t.passed}
    isolation = {c.name for c in v.hidden_tests if isinstance(c, ReachCheck) and not c.expect}
    assert failed and failed <= isolation  # the leak the fault made, and nothing else


def _negative_control_on_the_generated_default(make_lab, name):
    """The classes are written against the Scenario API: on the generated default scenario too,
    the baseline minus the superseded invariants holds when the variant's lab comes up, and the
    hidden tests fail before anyone acts (the scripted agent's tests solve them)."""
    from ani.scenario.generate import generate_scenario

    scen = generate_scenario("scenarios/default.yaml", seed=7)
    v = get_task_class(name).variant(scen, 0)
    lab = make_lab(v.lab_topology(scen), netconf=False)
    obs = Observer(lab)
    res = obs.evaluate([c for c in scen.invariants if c.name not in v.superseded], bound_s=BOUND_S)
    assert all(r.passed for r in res), summarize(res)
    hidden = obs.evaluate(v.hidden_tests, bound_s=2.0)
    assert not all(r.passed for r in hidden), f"{v.variant_id}: the hidden tests pass before the agent acts"


SEEDS = [0, 1, 2]
NAMES = ["change-set", "decommission", "troubleshoot"]


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    """``{case key: outcome}``, the cases three at a time (decommission's, the longest, first)."""
    return side_by_side({
        "decommission": with_labs(_decommission),
        **{("change-set", s): with_labs(_change_set, s) for s in SEEDS},
        **{("troubleshoot", s): with_labs(_troubleshoot, s) for s in _troubleshoot_seeds()},
        "superseded": partial(_the_runner_leaves_superseded_invariants_out_of_baseline_and_damage,
                              tmp_path_factory.mktemp("superseded")),
        **{("negative", n): with_labs(_negative_control_on_the_generated_default, n) for n in NAMES},
    })


@pytest.mark.timeout(1200)  # the module's cases, three at a time, in the first test's setup
@pytest.mark.parametrize("seed", SEEDS)
def test_change_set(cases, seed):
    outcome(cases, ("change-set", seed))


@pytest.mark.timeout(1200)  # as above
def test_decommission(cases):
    outcome(cases, "decommission")


@pytest.mark.timeout(1200)  # as above
@pytest.mark.parametrize("seed", _troubleshoot_seeds())
def test_troubleshoot(cases, seed):
    outcome(cases, ("troubleshoot", seed))


@pytest.mark.timeout(1200)  # as above
def test_the_runner_leaves_superseded_invariants_out_of_baseline_and_damage(cases):
    outcome(cases, "superseded")


@pytest.mark.timeout(1200)  # as above
@pytest.mark.parametrize("name", NAMES)
def test_negative_control_on_the_generated_default(cases, name):
    outcome(cases, ("negative", name))
