"""The scripted baseline agent solves onboard-site at every built-in level (a0, a1, a2, a3t, a3r,
a4) on real FRR, damage-free, making no tool error; at A3-T and A4 with the exact tool sequence
of its script, at A3-R with one commit of the source of truth (which lives in the lab's dir and
goes with it).

Every case is its own lab: they run three at a time in the module's first test
(:mod:`side_by_side`, issue 28 §4), each test taking its own case's outcome.
"""

from __future__ import annotations

import importlib.util
import time

import pytest
from conftest import level_servers
from side_by_side import outcome, side_by_side, with_labs

from ani.agents import Budget, create_agent
from ani.observer import Observer, summarize
from ani.registry import create_adapter
from ani.scenario import get_task_class, load_scenario

pytestmark = pytest.mark.integration

SCENARIO = "scenarios/brownfield-small.yaml"
SEEDS = [0, 1, 2]
LEVELS = ["a0", "a1", "a2", "a3t", "a3r", "a4"]


def _have(level: str) -> bool:
    return importlib.util.find_spec(f"ani.adapters.{level}") is not None


#: the exact tool sequence of the script where it has no level-specific reads to make
SEQUENCES = {
    "a3t": ["get_topology", "list_services", "plan", "apply", "get_state"],
    "a4": ["get_topology", "sot_list", "sot_patch", "sot_commit", "get_service"],
}


@pytest.fixture(scope="module")
def cases():
    """``{(level, seed) | "budget": outcome}``, the cases three at a time, each with its own labs."""
    todo = {(level, seed): with_labs(_onboards_site, level, seed) for seed in SEEDS for level in LEVELS}
    return side_by_side({**todo, "budget": with_labs(_budget_is_respected)})


@pytest.mark.timeout(1200)  # the module's cases, three at a time, in the first test's setup
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", SEEDS)
def test_scripted_agent_onboards_site(cases, level, seed):
    outcome(cases, (level, seed))


@pytest.mark.timeout(1200)  # as above
def test_budget_is_respected(cases):
    outcome(cases, "budget")


def _onboards_site(make_lab, level, seed):
    if not _have(level):
        pytest.skip(f"adapter {level} not available yet")
    scenario = load_scenario(SCENARIO)
    variant = get_task_class("onboard-site").variant(scenario, seed)
    options = {"keep_repo": True} if level == "a3r" else {}
    lab = make_lab(variant.lab_topology(scenario), **level_servers(level, options))  # the level's servers only
    observer = Observer(lab)

    before = observer.evaluate(scenario.invariants, bound_s=20.0)
    assert all(r.passed for r in before), summarize(before)
    hidden_before = observer.evaluate(variant.hidden_tests, bound_s=1.0)
    assert not any(r.passed for r, c in zip(hidden_before, variant.hidden_tests) if c.expect)

    adapter = create_adapter(level, lab, **({"options": options} if options else {}))
    adapter.open()
    try:
        t0 = time.monotonic()
        run = create_agent({"kind": "scripted"}).run(variant.agent_view(), adapter, Budget(max_steps=40))
        agent_s = time.monotonic() - t0
        log = adapter.repo.log(5) if level == "a3r" else None
    finally:
        adapter.close()
    assert run.stop_reason == "submitted", run.error
    assert run.submitted and 5 <= run.steps <= 40
    tools = [c["tool"] for c in adapter.trajectory.calls]
    if level in SEQUENCES:
        assert tools == SEQUENCES[level]
    if level == "a3r":
        assert tools.count("sot_commit") == 1 and tools[-1] == "drift", tools
        # one commit on top of the initial one, with the explicit identity, touching the edge
        assert len(log) == 2 and log[0]["committer"] == "ani-sot <sot@ani.invalid>"
        assert f"devices/{variant.params['edge']}.json" in log[0]["files"]
    assert run.steps == len(adapter.trajectory.calls)
    assert {c["tool"] for c in adapter.trajectory.calls} <= {t.name for t in adapter.tools()}
    errors = [(c["tool"], c["arguments"], c["summary"]) for c in adapter.trajectory.calls if not c["ok"]]
    assert errors == [], errors  # a baseline that makes no tool errors

    hidden = observer.evaluate(variant.hidden_tests, bound_s=20.0)
    assert all(r.passed for r in hidden), summarize(hidden)
    after = observer.evaluate(scenario.invariants, bound_s=20.0)
    assert all(r.passed for r in after), summarize(after)

    # the change followed the brownfield's conventions on the edge
    p = variant.params
    cfg = lab.running_config(p["edge"])
    assert f"ip prefix-list PL-TENANTS seq 30 permit {p['prefix']}" in cfg
    assert f"interface to-nsite\n ip address {p['gateway']}/24" in cfg
    for e in scenario.edges:
        out = lab.exec(e, ["nft", "list", "set", "inet", "fw", f"tenant_{p['tenant']}"]).stdout
        assert p["prefix"] in out, (e, out)
    print(f"{variant.variant_id} {level}: {run.steps} steps, {agent_s:.2f} s")
    if level == "a3r":
        # the repository and the adapter's worktree of it are inside the lab's own dir (kept after
        # close: keep_repo) and go with it
        repo_path, shared = adapter.repo_path, adapter.shared_path
        assert repo_path is not None and repo_path.parent == lab.dir == shared.parent
        assert (repo_path / ".git").is_file() and (shared / "HEAD").is_file()
        lab.down()
        assert not repo_path.exists() and not shared.exists() and not lab.dir.exists()


def _budget_is_respected(make_lab):
    if not _have("a0"):
        pytest.skip("adapter a0 not available yet")
    scenario = load_scenario(SCENARIO)
    variant = get_task_class("onboard-site").variant(scenario, 0)
    lab = make_lab(variant.lab_topology(scenario), **level_servers("a0"))
    adapter = create_adapter("a0", lab)
    run = create_agent({"kind": "scripted"}).run(variant.agent_view(), adapter, Budget(max_steps=3))
    assert run.stop_reason == "max_steps" and run.steps == 3 and not run.submitted
    assert len(adapter.trajectory.calls) == 3
