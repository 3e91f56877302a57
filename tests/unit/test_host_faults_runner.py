"""A host or harness fault during a run is an infrastructure error naming its cause, never a
graded failure; a failure the harness cannot attribute is said in the record (issue 11, section 1).

The adapter is a real :class:`BaseAdapter` subclass (so ``call``'s harness-fault path is the
real one); the lab, observer and scenario are small fakes whose verdict depends on what the
agent did through the adapter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from rich.console import Console

from ani.adapters.base import Args, BaseAdapter, tool
from ani.campaign.loop import run_campaign
from ani.campaign.report import render_markdown, summarize
from ani.campaign.results import read_runs
from ani.campaign.runner import RunnerDeps, run_one
from ani.campaign.spec import parse_spec
from ani.errors import CampaignSpecError, CapabilityMissing, ErrorCode, HostFault, ProgramMissing
from ani.host import programs
from ani.protocol import Level, ToolResult
from ani.testing import FakeLab
from ani.testing.fake_campaign import FlagCheck as FCheck
from ani.testing.fake_campaign import FlagObserver, set_flag
from ani.testing.fake_lab import DEFAULT_TOPOLOGY


class FlagArgs(Args):
    flag: str


class FakeTopology:
    routers = {"r1": object(), "r2": object()}


#: the fake world's labs: DEFAULT_TOPOLOGY, r2 running bgpd (which ``kill`` stops)
TOPOLOGY = {**DEFAULT_TOPOLOGY, "routers": {**DEFAULT_TOPOLOGY["routers"], "r2": {"daemons": ["bgpd"]}}}


def make_lab(world: World) -> FakeLab:
    """One run's lab: a FakeLab reporting the world's ``lab_faults`` as harness faults."""
    lab = FakeLab(TOPOLOGY)
    for fault in world.lab_faults:
        lab.add_harness_fault(fault)
    world.labs.append(lab)
    return lab


class FaultyAdapter(BaseAdapter):
    """``set`` sets a lab flag (changed); ``reload`` meets a missing program the way frr_reload
    does; ``swallow`` meets one but turns it into an ordinary failure (as a careless caller
    would); ``crash`` has a bug; ``kill`` stops bgpd on r2 (as a bad config change might)."""

    level = Level.A1

    @tool(args=FlagArgs, description="set a flag")
    def set(self, args: FlagArgs) -> ToolResult:
        set_flag(self.lab, args.flag)
        return ToolResult.success("done", changed=True)

    @tool(args=FlagArgs, description="reload")
    def reload(self, args: FlagArgs) -> ToolResult:
        raise ProgramMissing("/usr/lib/frr/frr-reload.py", "frr-pythontools")

    @tool(args=FlagArgs, description="a caller that swallows the fault")
    def swallow(self, args: FlagArgs) -> ToolResult:
        try:
            programs.program("frr-reload.py")
        except ProgramMissing as exc:
            return ToolResult.failure(ErrorCode.COMMAND_FAILED, f"apply failed: {exc}")
        return ToolResult.success("ok")

    @tool(args=FlagArgs, description="a bug")
    def crash(self, args: FlagArgs) -> ToolResult:
        raise KeyError("oops")

    @tool(args=FlagArgs, description="stop a daemon")
    def kill(self, args: FlagArgs) -> ToolResult:
        self.lab.kill_daemon("r2", "bgpd")
        return ToolResult.success("applied", changed=args.flag == "changed")


class Agent:
    """Calls the tools named by ``world.plan`` (``(tool, flag)``); ``raise`` raises a HostFault."""

    def __init__(self, world: World) -> None:
        self.world = world

    def run(self, task: Any, adapter: Any, budget: Any) -> Any:
        for name, flag in self.world.plan:
            if name == "raise":
                raise HostFault("the harness helper crashed: broken pipe")
            res = adapter.call(name, {"flag": flag})
            if not res.ok and self.world.give_up:
                raise RuntimeError(f"gave up: {res.error.message}")

        @dataclass
        class Run:
            steps: int = len(self.world.plan)
            stop_reason: str = "submitted"
            submitted: bool = True

        return Run()


class World:
    def __init__(self, plan: list[tuple[str, str]], lab_faults: list[str] | None = None,
                 give_up: bool = True) -> None:
        self.plan = plan
        self.lab_faults = lab_faults or []
        self.give_up = give_up
        self.labs: list[FakeLab] = []
        self.unfit: dict[str, list[Any]] = {}
        self.host_checked: list[list[str]] = []

    @property
    def downs(self) -> int:
        return sum(lab.downs for lab in self.labs)

    def deps(self) -> RunnerDeps:
        class Scenario:
            hash = "h"
            invariants = [FCheck("no-damage", "damage", False)]
            topology = FakeTopology()

        class Variant:
            variant_id = "v"
            hidden_tests = [FCheck("site-reach", "site", True)]

            def lab_topology(self, scenario):  # noqa: ANN001
                return None

            def agent_view(self):
                return {}

        class Task:
            @staticmethod
            def variant(scenario, seed):  # noqa: ANN001
                return Variant()

        def check_host(levels, daemons):  # noqa: ANN001
            self.host_checked.append(list(levels))
            return {lv: f for lv, f in self.unfit.items() if lv in levels}

        return RunnerDeps(
            make_lab=lambda topo: make_lab(self),
            load_scenario=lambda path: Scenario(),
            get_task_class=lambda name: Task,
            make_observer=FlagObserver,
            create_adapter=lambda level, lab, blocklist=False, trajectory=None: FaultyAdapter(lab, trajectory=trajectory),
            create_agent=lambda cfg: Agent(self),
            check_host=check_host,
        )


@pytest.fixture
def spec(tmp_path):
    (tmp_path / "scen.yaml").write_text("fake: true\n")
    return parse_spec({"name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": 2,
                       "cells": [{"name": "a1", "level": "a1"}, {"name": "a2", "level": "a2"}]},
                      "test", tmp_path)


MISSING = "/usr/lib/frr/frr-reload.py is missing (apt-get install frr-pythontools)"


def test_a_tool_meeting_a_missing_program_is_an_internal_result_and_a_harness_fault_event(spec, tmp_path):
    w = World([("set", "site"), ("reload", "x")])
    rec = run_one(spec, "a1", 1, tmp_path, deps=w.deps())
    assert rec.label == "infra_error" and rec.success is None and rec.damage_free is None
    assert rec.infra_error_reason == f"host fault during the run: reload: {MISSING}"
    assert rec.tests == []  # not graded
    events = [e for e in _events(rec) if e["event"] in ("tool_call", "harness_fault")]
    assert [(e["event"], e.get("tool"), e.get("error_code"), e.get("kind")) for e in events] == [
        ("tool_call", "set", None, None),
        ("tool_call", "reload", "internal", None),
        ("harness_fault", "reload", None, "program_missing"),
    ]
    assert events[2]["cause"] == MISSING
    assert w.downs == 1


def test_a_fault_some_caller_turned_into_a_failure_is_still_seen(spec, tmp_path, monkeypatch):
    monkeypatch.setattr(programs, "EXTRA_PATH", ())
    monkeypatch.setattr(programs.Program, "locate", lambda self: None)
    w = World([("set", "site"), ("swallow", "x")])
    rec = run_one(spec, "a1", 1, tmp_path, deps=w.deps())
    assert rec.label == "infra_error"
    assert rec.infra_error_reason == f"host fault during the run: {MISSING}"


def test_an_adapter_bug_and_an_agent_side_host_fault_are_infrastructure_errors(spec, tmp_path):
    rec = run_one(spec, "a1", 1, tmp_path, deps=World([("crash", "x")]).deps())
    assert rec.label == "infra_error"
    assert rec.infra_error_reason == "host fault during the run: crash: KeyError: 'oops'"
    rec = run_one(spec, "a1", 1, tmp_path, deps=World([("set", "site"), ("raise", "")]).deps())
    assert rec.label == "infra_error" and rec.agent_error is None
    assert rec.infra_error_reason == "host fault during the run: the harness helper crashed: broken pipe"


def test_a_fault_of_the_labs_helpers_is_an_infrastructure_error(spec, tmp_path):
    w = World([("set", "site")], lab_faults=["lab x: its NETCONF server (pid 9) is not running"])
    rec = run_one(spec, "a2", 1, tmp_path, deps=w.deps())
    assert rec.label == "infra_error"
    assert rec.infra_error_reason == "host fault during the run: lab x: its NETCONF server (pid 9) is not running"


def test_without_a_fault_the_run_is_graded(spec, tmp_path):
    rec = run_one(spec, "a1", 1, tmp_path, deps=World([("set", "site")]).deps())
    assert rec.label == "clean_success" and rec.unattributed is None and rec.infra_error_reason is None
    rec = run_one(spec, "a1", 1, tmp_path, deps=World([("set", "damage")]).deps())
    assert rec.label == "destructive_failure"


def test_a_daemon_dead_after_the_agents_change_is_graded_and_said_unattributed(spec, tmp_path):
    rec = run_one(spec, "a1", 1, tmp_path, deps=World([("kill", "changed")]).deps())
    assert rec.label == "clean_failure"  # graded: it may be the agent's doing
    assert rec.unattributed == (
        "FRR daemon(s) not running at grading time: bgpd on r2, after 1 changing call(s) of the "
        "agent: the harness cannot tell whether the agent's change or the host stopped them")
    md = render_markdown(summarize([rec], {}))
    assert "## Failures the harness cannot attribute" in md
    assert f"- `{rec.run_id}` (clean_failure): {rec.unattributed}" in md


def test_a_daemon_dead_while_the_agent_changed_nothing_is_the_hosts_fault(spec, tmp_path):
    rec = run_one(spec, "a1", 1, tmp_path, deps=World([("kill", "unchanged")]).deps())
    assert rec.label == "infra_error" and rec.unattributed is None
    assert rec.infra_error_reason == (
        "host fault during the run: FRR daemon(s) stopped while the agent changed nothing: bgpd on r2")


def test_the_campaign_says_which_cells_how_many_and_why_and_resume_reruns_them(spec, tmp_path):
    out = tmp_path / "res"
    con = Console(file=open(tmp_path / "c.txt", "w"), width=300)
    w = World([("set", "site"), ("reload", "x")])
    res = run_campaign(spec, out, progress=False, deps=w.deps(), source="camp.yaml", console=con)
    con.file.close()
    assert [r.run_id for r in res.infra] == ["a1-onboard-site-s1", "a2-onboard-site-s1",
                                            "a1-onboard-site-s2", "a2-onboard-site-s2"]
    text = " ".join((tmp_path / "c.txt").read_text().split())
    assert ("infrastructure errors: 4 runs were infrastructure errors (a1: 2, a2: 2): host fault during the "
            f"run: reload: {MISSING} [a1-onboard-site-s1, a2-onboard-site-s1, a1-onboard-site-s2, "
            "a2-onboard-site-s2]; fix the cause (see 'ani doctor'), then rerun them with: ani campaign run "
            f"camp.yaml --resume {out}") in text
    assert "## Infrastructure errors (excluded from the rates)" in (out / "summary.md").read_text()
    # the program is back: --resume reruns exactly those runs
    res = run_campaign(spec, out, resume=True, progress=False, deps=World([("set", "site")]).deps())
    assert len(res.ran) == 4 and res.infra == []
    assert {r.label for r in read_runs(out)} == {"clean_success"}


@pytest.mark.parametrize("over", [{"variants": 1}, {}, {"bound": 0.6}], ids=["variants", "file", "bound"])
def test_the_printed_resume_command_resumes_the_campaign_that_was_started(tmp_path, over):
    """``ani campaign run FILE --variants 1`` that ends with infrastructure errors prints
    ``... FILE --resume OUT``; run as printed, --resume takes S from the folder (before, it took
    the file's ``variants: 2`` and grew the campaign: faults-density-levels --variants 1, 20
    runs became 60; issue 23 §3: 7 became 21)."""
    from ani.campaign.loop import load_for_run

    (tmp_path / "scen.yaml").write_text("fake: true\n")
    camp = tmp_path / "camp.yaml"
    camp.write_text("name: t\nscenario: scen.yaml\ntask: onboard-site\nvariants: 2\n"
                    "cells: [{name: a1, level: a1}, {name: a2, level: a2}]\n")
    spec = load_for_run(camp, variants=over.get("variants"), bound=over.get("bound"))
    out = tmp_path / "res"
    con = Console(file=open(tmp_path / "c.txt", "w"), width=400)
    run_campaign(spec, out, progress=False, deps=World([("set", "site"), ("reload", "x")]).deps(),
                 source=camp, console=con)
    con.file.close()
    text = " ".join((tmp_path / "c.txt").read_text().split())
    assert f"then rerun them with: ani campaign run {camp} --resume {out}" in text
    # run as printed, the resume plans exactly the runs the first command did
    again = load_for_run(camp, out)
    assert (again.variants, again.bound) == (spec.variants, spec.bound)
    res = run_campaign(again, out, resume=True, progress=False, deps=World([("set", "site")]).deps())
    assert len(read_runs(out)) == 2 * spec.variants and {r.label for r in res.ran} == {"clean_success"}


def test_resume_grows_only_with_an_explicit_variants_and_never_shrinks(tmp_path):
    from ani.campaign.loop import load_for_run

    (tmp_path / "scen.yaml").write_text("fake: true\n")
    camp = tmp_path / "camp.yaml"
    camp.write_text("name: t\nscenario: scen.yaml\ntask: onboard-site\nvariants: 3\n"
                    "cells: [{name: a1, level: a1}]\n")
    out = tmp_path / "res"
    run_campaign(load_for_run(camp, variants=1), out, progress=False, deps=World([("set", "site")]).deps())
    assert load_for_run(camp, out).variants == 1  # the folder's S, not the file's 3
    grown = load_for_run(camp, out, variants=2)
    res = run_campaign(grown, out, resume=True, progress=False, deps=World([("set", "site")]).deps())
    assert [r.seed for r in res.ran] == [2] and load_for_run(camp, out).variants == 2
    with pytest.raises(CampaignSpecError, match=r"S = 2 runs per cell; --resume can keep S .* not shrink it to 1"):
        run_campaign(load_for_run(camp, out, variants=1), out, resume=True, progress=False,
                     deps=World([("set", "site")]).deps())


def test_a_level_that_cannot_work_here_stops_the_campaign_before_any_lab(spec, tmp_path):
    from ani.host.checks import Finding

    gap = Finding(name="/usr/lib/frr/frr-reload.py", kind="program", ok=False, detail="not found",
                  fix="apt-get install frr-pythontools", needed_by=("a1", "a2"), package="frr-pythontools")
    w = World([("set", "site")])
    w.unfit = {"a2": [gap]}
    with pytest.raises(CapabilityMissing) as ei:
        run_campaign(spec, tmp_path / "res", progress=False, deps=w.deps())
    assert str(ei.value) == ("cell a2 cannot run on this machine: /usr/lib/frr/frr-reload.py is missing "
                             "(apt-get install frr-pythontools); see 'ani doctor'")
    assert w.labs == [] and w.host_checked == [["a1", "a2"]]
    # on --resume only the cells with runs left are checked: a1's runs are done, a2's are not
    run_campaign(spec, tmp_path / "r2", progress=False, deps=World([("set", "site")]).deps())
    runs = tmp_path / "r2" / "runs.jsonl"
    runs.write_text("".join(ln + "\n" for ln in runs.read_text().splitlines() if '"cell":"a1"' in ln))
    w2 = World([("set", "site")])
    w2.unfit = {"a1": [gap]}  # a1 would be refused, but it has nothing left to run
    run_campaign(spec, tmp_path / "r2", resume=True, progress=False, deps=w2.deps())
    assert w2.host_checked == [["a2"]] and len(w2.labs) == 2


def test_ani_campaign_run_exits_3_when_runs_were_infrastructure_errors(spec, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import ani.campaign.loop as loop
    from ani.cli import app

    camp = tmp_path / "c.yaml"
    camp.write_text("name: t\nscenario: scen.yaml\ntask: onboard-site\nvariants: 1\n"
                    "cells: [{name: a1, level: a1}]\n")
    w = World([("reload", "x")])
    monkeypatch.setattr(loop, "RunnerDeps", w.deps)
    res = CliRunner().invoke(app, ["campaign", "run", str(camp), "--out", str(tmp_path / "o"), "--no-progress", "--jobs", "1"])
    assert res.exit_code == 3, res.output
    assert "1 run was an infrastructure error (a1: 1)" in " ".join(res.output.split())
    monkeypatch.setattr(loop, "RunnerDeps", World([("set", "site")]).deps)
    res = CliRunner().invoke(app, ["campaign", "run", str(camp), "--resume", str(tmp_path / "o"),
                                   "--no-progress", "--retry-infra", "--jobs", "1"])  # the old flag still works
    assert res.exit_code == 0, res.output


def _events(rec: Any) -> list[dict[str, Any]]:
    from ani.trajectory import Trajectory

    return Trajectory.read(rec.trajectory)


def test_ani_run_prints_unattributed_and_the_host_fault_hint(tmp_path, monkeypatch):
    """``ani run`` shows a record's unattributed failure, and for a host fault says whose it was."""
    from datetime import UTC, datetime

    from typer.testing import CliRunner

    import ani.campaign.runner as runner
    from ani.campaign.results import RunRecord
    from ani.cli import app

    now = datetime.now(UTC)
    base = dict(run_id="a1-onboard-site-s1", campaign="run", cell="a1", level="a1", task="onboard-site",
                seed=1, started=now, ended=now)
    records = [
        RunRecord(**base, label="clean_failure", success=False, damage_free=True,
                  unattributed="FRR daemon(s) not running at grading time: bgpd on e1, after 2 changing call(s)"),
        RunRecord(**base, label="infra_error", infra_error_reason=f"host fault during the run: reload: {MISSING}"),
    ]
    for name in ("validate", "check_host"):
        monkeypatch.setattr(runner, name, lambda *a, **k: None)
    monkeypatch.setattr(runner, "preflight", lambda *a, **k: [])
    monkeypatch.setattr("ani.campaign.single.run_single", lambda *a, **k: records.pop(0))
    res = CliRunner().invoke(app, ["run", "--out", str(tmp_path / "o1")], env={"COLUMNS": "300"})
    assert res.exit_code == 1
    assert "unattributed: FRR daemon(s) not running at grading time: bgpd on e1, after 2 changing call(s)" in res.stdout
    res = CliRunner().invoke(app, ["run", "--out", str(tmp_path / "o2")], env={"COLUMNS": "300"})
    assert res.exit_code == 3
    assert f"verdict: infra_error (host fault during the run: reload: {MISSING})" in res.stdout
    assert "the host or the harness failed, not the agent: see 'ani doctor'" in res.stderr
