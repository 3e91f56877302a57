"""``ani campaign rerun DIR RUN_ID --replay`` before any lab (issue 27 §3): the plan replayed is the
recorded one with only its agent replaced (scenario, variant, level, faults, budget kept), the
trajectory is found in the folder even when the record names another machine's path, and a
missing trajectory or a stray ``--trajectory`` is one line, exit 2, no folder made. The real
replays: tests/integration/test_replay_rerun.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from ani.campaign.plan import read_plans
from ani.campaign.rerun import recorded, recorded_trajectory, replay_plan
from ani.cli import app

KA = Path(__file__).resolve().parents[1] / "data" / "campaign-results" / "known-answer"
RUN = "a3r-onboard-site-s1"


def test_the_replayed_plan_is_the_recorded_one_with_the_replay_agent(tmp_path):
    plan = next(p for p in read_plans(KA) if p.run_id == RUN)
    old = recorded(KA, RUN)
    assert old is not None and not old.trajectory.startswith(str(KA))  # written in another folder
    assert recorded_trajectory(KA, RUN, old) == KA / "trajectories" / f"{RUN}.jsonl"  # the folder's own
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text("{}\n")
    assert recorded_trajectory(tmp_path, RUN, old.model_copy(update={"trajectory": str(elsewhere)})) == elsewhere
    new = replay_plan(KA, plan, tmp_path, old)
    kept = tmp_path / "replayed" / f"{RUN}.jsonl"
    assert new.agent == {"kind": "replay", "trajectory": str(kept.resolve()), "stop_reason": "submitted"}
    assert kept.read_bytes() == (KA / "trajectories" / f"{RUN}.jsonl").read_bytes()
    same = {k: v for k, v in plan.model_dump().items() if k != "agent"}
    assert {k: v for k, v in new.model_dump().items() if k != "agent"} == same
    assert plan.agent["kind"] == "scripted"


def test_a_run_without_its_trajectory_is_refused_before_any_folder(tmp_path):
    src = tmp_path / "ka"
    shutil.copytree(KA, src)
    (src / "trajectories" / f"{RUN}.jsonl").unlink()
    lines = [json.loads(x) for x in (src / "runs.jsonl").read_text().splitlines()]
    for r in lines:  # and the path the record names is gone too
        r["trajectory"] = str(tmp_path / "gone" / f"{r['run_id']}.jsonl")
    (src / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["campaign", "rerun", str(src), RUN, "--replay", "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert f"run {RUN}: its trajectory is missing" in res.stderr and "nothing to replay" in res.stderr
    assert not out.exists()


def test_trajectory_needs_replay_and_a_bad_one_names_the_file(tmp_path):
    res = CliRunner().invoke(app, ["campaign", "rerun", str(KA), RUN, "--trajectory", "x.json"])
    assert res.exit_code == 2 and "--trajectory: only with --replay" in res.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema_version": "ATIF-v1.8", "steps": "private words"}))
    plan = next(p for p in read_plans(KA) if p.run_id == RUN)
    from ani.agents import create_agent
    from ani.errors import TrajectoryError

    new = replay_plan(KA, plan, tmp_path / "out", None, bad)
    try:
        create_agent(dict(new.agent))
    except TrajectoryError as exc:
        assert "private words" not in str(exc)
    else:
        raise AssertionError("a bad ATIF document was accepted")


def test_ani_run_replay_is_the_replay_agent_and_a_missing_file_stops_before_any_lab(tmp_path):
    missing = tmp_path / "no: such.jsonl"  # a path YAML would misread, passed as data
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", "--level", "a3r", "--replay", str(missing), "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert f"{missing}: cannot read the trajectory (FileNotFoundError)" in res.stderr
    assert not out.exists()
    res = CliRunner().invoke(app, ["run", "--level", "a3r", "--agent", "llm", "--replay", str(missing)])
    assert res.exit_code == 2 and "--replay: the agent is the replay agent, not --agent llm" in res.stderr
