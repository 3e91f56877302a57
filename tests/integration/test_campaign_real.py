"""A real 3-cell (a0, a1, a2), 1-seed campaign on FRR labs, and one of its runs alone (case 9, real).

The module's five jobs (the level campaign, its a1 run alone, the case-9 campaign and its two
runs alone) share nothing but the machine: they run three at a time in threads (module fixture
:func:`jobs`, issue 28 §4: one after the other they took three minutes of a worker), each with its
own :class:`RunnerDeps` recording the labs it made; each test asserts on its own jobs' results."""

from __future__ import annotations

import functools
import json
import re
import subprocess
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from procs import track_labs

from ani.campaign.loop import run_campaign
from ani.campaign.results import read_runs
from ani.campaign.runner import RunnerDeps, run_one
from ani.campaign.spec import load_spec

pytestmark = pytest.mark.integration


def _netns() -> str:
    return subprocess.run(
        ["ip", "netns", "list"], capture_output=True, text=True, check=False
    ).stdout


LEVEL_CAMPAIGN = (
    "name: it-sweep\n"
    "scenario: scenarios/brownfield-small.yaml\n"
    "task: onboard-site\n"
    "variants: 1\n"
    "seed: 1\n"
    "agent: {kind: scripted}\n"
    "budget: {max_steps: 40, wall_clock_s: 300}\n"
    "cells:\n"
    "  - {name: a0, level: a0}\n"
    "  - {name: a1, level: a1}\n"
    "  - {name: a2, level: a2}\n"
)

CASE9_CAMPAIGN = (
    "name: it-case9\n"
    "scenario: scenarios/brownfield-small.yaml\n"
    "task: onboard-site\n"
    "variants: 1\n"
    "observer_bound_s: 8\n"
    "cells:\n"
    "  - {name: a0, level: a0}\n"
    "  - {name: a1, level: a1}\n"
)


class CrashingAgent:
    """Reads the topology through the adapter, then fails like a buggy agent."""

    name = "crashing"

    def run(self, task, adapter, budget):
        adapter.call("get_topology", {})
        adapter.call("no_such_tool", {})
        raise RuntimeError("agent bug: KeyError 'gateway'")


def tracking_deps():  # noqa: ANN201
    """Real runner deps that record every lab they make: ``(deps, labs)``."""
    deps = RunnerDeps()
    return deps, track_labs(deps)  # the runner's lab options (prefix, servers) kept


def _never_converges(topology):  # noqa: ANN001, ANN202
    """``topology`` whose lab cannot converge on any machine: its first BGP router gets a
    neighbor nobody answers (192.0.2.254, TEST-NET-1), and the bound is 1 s. (A bound of 0.05 s
    alone was not enough: under four workers a lab's start took long enough for its sessions to
    come up before the first look, and the run converged.)"""
    for name, spec in topology.routers.items():
        m = re.search(r"^router bgp \d+\n", spec.config, re.M)
        if m and "bgpd" in spec.daemons:
            config = spec.config[:m.end()] + " neighbor 192.0.2.254 remote-as 64999\n" + spec.config[m.end():]
            return topology.model_copy(update={
                "routers": {**topology.routers, name: spec.model_copy(update={"config": config})},
                "convergence": topology.convergence.model_copy(update={"timeout_s": 1.0})})
    raise AssertionError("the case 9 scenario has no BGP router")


def case9_deps(fail_first: bool = True):  # noqa: ANN201
    """Deps whose agent crashes and whose first lab (the first run of the plan: a0, seed 1)
    cannot converge (:func:`_never_converges`): ``(deps, labs)``."""
    deps = RunnerDeps()
    real_make_lab = deps.make_lab
    calls = {"n": 0}

    @functools.wraps(real_make_lab)  # its signature: the runner passes the lab options it takes
    def make_lab(topology, **kw):
        calls["n"] += 1
        if fail_first and calls["n"] == 1:  # the first run of the plan (a0, seed 1)
            topology = _never_converges(topology)
        return real_make_lab(topology, **kw)

    deps.make_lab = make_lab
    deps.create_agent = lambda cfg: CrashingAgent()
    return deps, track_labs(deps)


def _campaign(text: str, folder: Path, make_deps, *, with_source: bool = True):  # noqa: ANN001, ANN202
    """The campaign ``text`` run in ``folder`` with ``make_deps()`` (the file passed as its
    source with ``with_source``): ``(spec, camp, out, result, labs)``."""
    folder.mkdir(parents=True)
    camp = folder / "c.yaml"
    camp.write_text(text)
    spec = load_spec(camp)
    deps, labs = make_deps()
    out = folder / "res"
    res = run_campaign(spec, out, progress=False, deps=deps, source=camp if with_source else None)
    return spec, camp, out, res, labs


def _alone(text: str, cell: str, folder: Path, make_deps):  # noqa: ANN001, ANN202
    """Run ``cell``'s seed 1 of the campaign ``text`` alone in ``folder``: ``(record, labs)``."""
    folder.mkdir(parents=True)
    camp = folder / "c.yaml"
    camp.write_text(text)
    deps, labs = make_deps()
    return run_one(load_spec(camp), cell, 1, folder / "alone", deps=deps), labs


@pytest.fixture(scope="module")
def jobs(request, tmp_path_factory) -> Iterator[dict[str, Future]]:  # noqa: ANN001
    """The module's five jobs, three at a time (module doc): ``{name: future}``; a test takes
    its jobs' results (an exception of a job is raised in the test that takes it). The level
    campaign is started first, as the longest; only the jobs of the tests selected (``-k``).
    Waits for every job at the module's end."""
    from conftest import _require_lab_host

    pytest.importorskip("ani.adapters.a1", reason="the A1 adapter has not landed")
    pytest.importorskip("ani.adapters.a2", reason="the A2 adapter has not landed")
    _require_lab_host()
    root = tmp_path_factory.mktemp("campaign-real")
    todo = {
        "level": lambda: _campaign(LEVEL_CAMPAIGN, root / "level", tracking_deps),
        "case9": lambda: _campaign(CASE9_CAMPAIGN, root / "case9", case9_deps, with_source=False),
        "level-alone-a1": lambda: _alone(LEVEL_CAMPAIGN, "a1", root / "level-a1", tracking_deps),
        # each run alone: same verdict (a0 alone meets the same unconvergeable lab)
        "case9-alone-a0": lambda: _alone(CASE9_CAMPAIGN, "a0", root / "case9-a0", lambda: case9_deps(True)),
        "case9-alone-a1": lambda: _alone(CASE9_CAMPAIGN, "a1", root / "case9-a1", lambda: case9_deps(False)),
    }
    selected = {item.name for item in request.session.items}
    test_of = {"level": "test_real_level_campaign", "case9": "test_real_case9_lab_failure_and_agent_crash"}
    with ThreadPoolExecutor(3) as pool:
        yield {name: pool.submit(job) for name, job in todo.items() if test_of[name.split("-")[0]] in selected}


@pytest.mark.timeout(900)  # waits for its jobs, run three at a time with the other test's
def test_real_level_campaign(jobs):
    spec, camp, out, res, labs = jobs["level"].result(timeout=800)
    assert not res.interrupted
    recs = {r.run_id: r for r in read_runs(out)}
    assert sorted(recs) == ["a0-onboard-site-s1", "a1-onboard-site-s1", "a2-onboard-site-s1"]
    for r in recs.values():
        assert r.label != "infra_error", r.infra_error_reason
        assert r.success == all(t.passed for t in r.tests) and r.damage_free == all(
            i.passed for i in r.invariants
        )
        assert r.tests and r.invariants and r.tool_calls > 0 and r.lab_up_s is not None
        # the scripted baseline solves onboard-site at a0, a1 (issue 2) and a2 (issue 3) without damage
        failed = [t for t in r.tests + r.invariants if not t.passed]
        assert r.label == "clean_success", (r.run_id, failed, r.agent_error)
        events = [json.loads(x) for x in open(r.trajectory)]
        assert len([e for e in events if e["event"] == "tool_call"]) == r.tool_calls
        assert r.tool_errors == sum(1 for e in events if e["event"] == "tool_call" and not e["ok"])
        assert {e["level"] for e in events} == {r.level}
    md = (out / "summary.md").read_text()
    assert (
        "| a0 | a0 | - | 1 | 0 | 1/1 (1.00) |" in md
        and "| a1 | a1 | - | 1 | 0 | 1/1 (1.00) |" in md
        and "| a2 | a2 | - | 1 | 0 | 1/1 (1.00) |" in md
    )
    assert "no discordant pairs" in md

    # issue 26 §3: provenance of a real run, and the report against another reference cell through the CLI
    from typer.testing import CliRunner

    from ani.campaign.provenance import environment
    from ani.cli import app

    dpkg = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "frr"], capture_output=True, text=True, check=False)
    for r in recs.values():
        assert r.provenance["frr"] == (dpkg.stdout.strip() or r.provenance["frr"]) and r.provenance["frr"]
        assert r.provenance["agent"] == {"kind": "scripted"} and r.provenance["kernel"] == environment()["kernel"]
    assert json.loads((out / "provenance.json").read_text())["sessions"][0]["agents"]["a2"] == {"kind": "scripted"}
    res = CliRunner().invoke(app, ["campaign", "report", str(out), "--reference", "a2"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "Holm-adjusted over 2 comparisons per outcome" in text
    assert ("a0 vs a2 (1 paired seed): damage-free 1.00 vs 1.00, difference +0.00 [-0.79, +0.79], p = 1 (Holm); "
            "success 1.00 vs 1.00, difference +0.00 [-0.79, +0.79], p = 1 (Holm)") in text
    assert "## Paired comparisons against `a2`" in (out / "summary.md").read_text()

    # every lab is gone: no namespace of theirs is left
    assert len(labs) == 3
    left = _netns()
    assert not [lab.id for lab in labs if f"ani-{lab.id}-" in left]

    # the same run alone gives the same verdict (case 9)
    alone, alone_labs = jobs["level-alone-a1"].result(timeout=800)
    ref = recs["a1-onboard-site-s1"]
    assert alone.label == ref.label and alone.variant_id == ref.variant_id
    assert len(alone_labs) == 1 and f"ani-{alone_labs[-1].id}-" not in _netns()


@pytest.mark.timeout(900)  # waits for its jobs, run three at a time with the other test's
def test_real_case9_lab_failure_and_agent_crash(jobs):
    """Case 9 on real labs: a0's lab cannot converge (real ConvergenceTimeout), a1's agent crashes."""
    spec, camp, out, res, labs = jobs["case9"].result(timeout=800)
    recs = {r.run_id: r for r in read_runs(out)}
    a0, a1 = recs["a0-onboard-site-s1"], recs["a1-onboard-site-s1"]
    assert a0.label == "infra_error" and "ConvergenceTimeout" in a0.infra_error_reason
    assert a0.success is None and a0.tool_calls == 0
    assert a1.label == "clean_failure" and "agent bug" in a1.agent_error, (a1.infra_error_reason, a1.agent_error)
    assert (a1.tool_calls, a1.tool_errors) == (
        2,
        1,
    )  # unknown tool: ok=False, counted from the flag
    md = (out / "summary.md").read_text()
    assert "| a0 | a0 | - | 0 | 1 | 0/0 |" in md  # excluded from the denominator ...
    assert (
        "- `a0-onboard-site-s1` (cell a0, seed 1): lab up: ConvergenceTimeout" in md
    )  # ... but listed
    assert "| a1 | 0 |" in md  # no valid pair
    left = _netns()
    assert not [lab.id for lab in labs if f"ani-{lab.id}-" in left]

    # each run alone: same verdict (a0 alone meets the same unconvergeable lab)
    for cell, ref in (("a0", a0), ("a1", a1)):
        alone, labs_alone = jobs[f"case9-alone-{cell}"].result(timeout=800)
        assert alone.label == ref.label, (cell, alone.infra_error_reason, alone.agent_error)
        assert alone.success == ref.success and alone.damage_free == ref.damage_free
        assert not [lab.id for lab in labs_alone if f"ani-{lab.id}-" in _netns()]
