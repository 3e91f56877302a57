"""The scripted baseline agent solves onboard-site at a3r on real FRR through the source of
truth (JSON Patches, one commit, reconciled), with every baseline invariant intact; the source of
truth lives in the lab's dir and leaves no trace once the lab is down."""

from __future__ import annotations

import pytest

from ani.agents import Budget, create_agent
from ani.observer import Observer, summarize
from ani.registry import create_adapter
from ani.scenario import get_task_class, load_scenario

pytestmark = pytest.mark.integration

SCENARIO = "scenarios/brownfield-small.yaml"


@pytest.mark.parametrize("seed", [0, 1])
def test_scripted_agent_onboards_site_at_a3r(make_lab, seed):
    scenario = load_scenario(SCENARIO)
    variant = get_task_class("onboard-site").variant(scenario, seed)
    lab = make_lab(variant.lab_topology(scenario), netconf=False)
    observer = Observer(lab)
    before = observer.evaluate(scenario.invariants, bound_s=20.0)
    assert all(r.passed for r in before), summarize(before)

    adapter = create_adapter("a3r", lab, options={"keep_repo": True})
    adapter.open()
    repo_path = adapter.repo_path
    try:
        run = create_agent({"kind": "scripted"}).run(variant.agent_view(), adapter, Budget(max_steps=40))
        log = adapter.repo.log(5)
    finally:
        adapter.close()
    assert run.stop_reason == "submitted", run.error
    assert run.steps == len(adapter.trajectory.calls)
    tools = [c["tool"] for c in adapter.trajectory.calls]
    assert tools.count("sot_commit") == 1 and tools[-1] == "drift", tools
    errors = [(c["tool"], c["arguments"], c["summary"]) for c in adapter.trajectory.calls if not c["ok"]]
    assert errors == [], errors
    # one commit on top of the initial one, with the explicit identity
    assert len(log) == 2 and log[0]["committer"] == "ani-sot <sot@ani.invalid>"
    p = variant.params
    assert f"devices/{p['edge']}.json" in log[0]["files"]

    hidden = observer.evaluate(variant.hidden_tests, bound_s=20.0)
    assert all(r.passed for r in hidden), summarize(hidden)
    after = observer.evaluate(scenario.invariants, bound_s=20.0)
    assert all(r.passed for r in after), summarize(after)
    cfg = lab.running_config(p["edge"])
    assert f"ip prefix-list PL-TENANTS seq 30 permit {p['prefix']}" in cfg
    assert f"interface to-nsite\n ip address {p['gateway']}/24" in cfg
    for e in scenario.edges:
        out = lab.exec(e, ["nft", "list", "set", "inet", "fw", f"tenant_{p['tenant']}"]).stdout
        assert p["prefix"] in out, (e, out)

    # the repository is inside the lab's own dir (kept after close: keep_repo) and goes with it
    assert repo_path is not None and repo_path.parent == lab.dir and (repo_path / ".git").is_dir()
    lab.down()
    assert not repo_path.exists() and not lab.dir.exists()
