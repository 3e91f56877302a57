"""``ani campaign compare`` (issue 27 §4): pairing by plan, the refusal naming the differing
field, the paired statistics against hand-computed values, runs in no pair, provenance, the CLI.

The two campaign folders are built from the recorded fixture ``tests/data/campaign-results/
known-answer`` (a real plan line and a real record), copied per seed with the verdicts set.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ani.campaign.compare import compare_dirs, render_markdown
from ani.campaign.plan import RunPlan, write_plans
from ani.campaign.results import RunRecord
from ani.errors import CampaignSpecError

FIXTURE = Path(__file__).parents[1] / "data" / "campaign-results" / "known-answer"
HASH = "f161abbb3a6a2c5fb864e9a343e394b4961dfb61c1dc88d7efa4642f735edcf5"
#: per cell, per seed 1..10: (success, damage_free) of campaign A and of campaign B
#: a1 success: 5 both yes, 4 A only (b), 1 both no -> McNemar p = 2 * 0.5^4 = 0.125
#: a3t success: 5 B only (c), 5 both yes -> p = 2 * 0.5^5 = 0.0625; damage-free all yes
A1_A = [True] * 9 + [False]
A1_B = [True] * 5 + [False] * 5
A3T_A = [True] * 5 + [False] * 5
A3T_B = [True] * 10


def _fixture_plan(cell: str) -> RunPlan:
    for line in (FIXTURE / "plan.jsonl").read_text().splitlines():
        p = RunPlan.from_line(line)
        if p.cell == cell:
            return p
    raise AssertionError(cell)


def _fixture_record() -> RunRecord:
    line = (FIXTURE / "runs.jsonl").read_text().splitlines()[4]  # a3t: clean_success
    return RunRecord.model_validate_json(line)


def make_campaign(out: Path, name: str, verdicts: dict[str, list[bool]], *, agent: dict | None = None,
                  scenario_hash: str = HASH, budget: dict | None = None, seeds: int = 10,
                  infra: set[str] = frozenset(), provenance: dict | None = None,
                  damage: dict[str, list[bool]] | None = None) -> Path:
    """A campaign folder: plan.jsonl and runs.jsonl, ``seeds`` seeds per cell, success as given."""
    out.mkdir(parents=True)
    plans, lines = [], []
    rec0 = _fixture_record()
    for seed in range(1, seeds + 1):
        for cell, succ in verdicts.items():
            p0 = _fixture_plan(cell)
            scen = p0.scenario.model_copy(update={"hash": scenario_hash})
            upd = {"run_id": f"{cell}-onboard-site-s{seed}", "seed": seed, "campaign": name, "scenario": scen}
            if agent is not None:
                upd["agent"] = agent
            if budget is not None:
                upd["budget"] = budget
            plan = p0.model_copy(update=upd)
            plans.append(plan)
            if plan.run_id in infra:
                rec = rec0.model_copy(update={"run_id": plan.run_id, "cell": cell, "level": plan.level, "seed": seed,
                                              "campaign": name, "label": "infra_error", "success": None,
                                              "damage_free": None, "infra_error_reason": "lab did not converge"})
            else:
                s = succ[seed - 1]
                d = damage[cell][seed - 1] if damage else True
                label = ("clean_" if d else ("dangerous_" if s else "destructive_")) + ("success" if s else "failure")
                rec = rec0.model_copy(update={"run_id": plan.run_id, "cell": cell, "level": plan.level, "seed": seed,
                                              "campaign": name, "success": s, "damage_free": d, "label": label,
                                              "scenario_hash": scenario_hash, "provenance": provenance})
            lines.append(RunRecord.model_validate(rec.model_dump()).model_dump_json())
    write_plans(out, plans)
    (out / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return out


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    a = make_campaign(tmp_path / "a", "sweep", {"a1": A1_A, "a3t": A3T_A},
                      agent={"kind": "scripted", "mistakes": {"rate": 1.0}})
    b = make_campaign(tmp_path / "b", "sweep", {"a1": A1_B, "a3t": A3T_B}, agent={"kind": "scripted"})
    return a, b


def test_paired_statistics_match_hand_computed_values(two: tuple[Path, Path]) -> None:
    c = compare_dirs(*two)
    assert c.factor == "agent"
    assert c.factor_values == ("scripted+mistakes", "scripted")
    rows = {r.name: r for r in c.rows}
    a1, a3t = rows["a1"], rows["a3t"]
    assert a1.pairs == 10 and a3t.pairs == 10
    assert a1.rates["success"] == (9, 5)
    assert (a1.mcnemar["success"].b, a1.mcnemar["success"].c) == (4, 0)
    assert a1.mcnemar["success"].p_value == pytest.approx(0.125)
    assert (a3t.mcnemar["success"].b, a3t.mcnemar["success"].c) == (0, 5)
    assert a3t.mcnemar["success"].p_value == pytest.approx(0.0625)
    # Holm over 2 rows: 0.0625 * 2 = 0.125; max(0.125, 1 * 0.125) = 0.125
    assert a1.holm["success"] == pytest.approx(0.125) and a3t.holm["success"] == pytest.approx(0.125)
    # Newcombe method 10 by hand: Wilson(9/10) = (0.59585, 0.98212), Wilson(5/10) = (0.23659, 0.76341);
    # e=5 f=4 g=0 h=1: B = eh - fg = 5 <= n/2 -> phi = 0, so the limits are the plain hybrid score
    d = a1.diff["success"]
    z = 1.959963984540054

    def wil(k: int, n: int) -> tuple[float, float]:
        p = k / n
        mid, half = (p + z * z / (2 * n)), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return (mid - half) / (1 + z * z / n), (mid + half) / (1 + z * z / n)

    (l1, u1), (l2, u2) = wil(9, 10), wil(5, 10)
    assert d.diff == pytest.approx(0.4)
    assert d.lo == pytest.approx(0.4 - math.sqrt((0.9 - l1) ** 2 + (u2 - 0.5) ** 2), abs=1e-9)
    assert d.hi == pytest.approx(0.4 + math.sqrt((0.5 - l2) ** 2 + (u1 - 0.9) ** 2), abs=1e-9)
    assert round(d.lo, 4) == -0.0024 and round(d.hi, 4) == 0.6759
    # damage-free: every run of both, no discordant pair
    assert a1.mcnemar["damage_free"].p_value == 1.0 and a1.diff["damage_free"].diff == 0.0
    assert c.unpaired == []


def test_markdown_has_the_line_per_pair_and_the_table(two: tuple[Path, Path]) -> None:
    md = render_markdown(compare_dirs(*two))
    assert ("- sweep@scripted+mistakes vs sweep@scripted, a1 (10 pairs): damage-free 1.00 vs 1.00, difference "
            "+0.00 [-0.28, +0.28], p = 1 (Holm); success 0.90 vs 0.50, difference +0.40 [-0.00, +0.68], "
            "p = 0.125 (Holm)") in md
    assert "| a3t | 10 | 5/10 (0.50) [0.24, 0.76] | 10/10 (1.00) [0.72, 1.00] | 0 | 5 | 0.0625 |" in md
    assert "factor compared: agent (scripted+mistakes vs scripted)" in md


def test_refuses_plans_with_different_scenario_hashes_naming_the_field(tmp_path: Path) -> None:
    a = make_campaign(tmp_path / "a", "sweep", {"a1": A1_A})
    b = make_campaign(tmp_path / "b", "sweep", {"a1": A1_B}, scenario_hash="0c1d" * 16)
    with pytest.raises(CampaignSpecError) as err:
        compare_dirs(a, b)
    assert str(err.value).startswith(
        "plans differ in scenario_hash for 10 runs (a1-onboard-site-s1: f161abbb3a6a vs 0c1d0c1d0c1d)")


def test_the_agent_is_no_excuse_for_another_field_and_factor_names_it(tmp_path: Path) -> None:
    a = make_campaign(tmp_path / "a", "sweep", {"a1": A1_A}, agent={"kind": "scripted"})
    b = make_campaign(tmp_path / "b", "sweep", {"a1": A1_B}, agent={"kind": "scripted", "mistakes": {"rate": 1.0}},
                      budget={"max_steps": 10, "max_tokens": None, "wall_clock_s": 300.0})
    with pytest.raises(CampaignSpecError, match=r"plans differ in budget for 10 runs") as err:
        compare_dirs(a, b)
    assert "in agent" not in str(err.value)  # the agent may differ by default; the budget may not
    with pytest.raises(CampaignSpecError, match=r"^plans differ in agent for 10 runs .*factor compared is budget"):
        compare_dirs(a, b, factor="budget")
    c = make_campaign(tmp_path / "c", "sweep", {"a1": A1_B}, agent={"kind": "scripted"},
                      budget={"max_steps": 10, "max_tokens": None, "wall_clock_s": 300.0})
    cmp = compare_dirs(a, c, factor="budget")
    assert cmp.factor == "budget" and cmp.rows[0].pairs == 10
    with pytest.raises(CampaignSpecError, match="--factor 'seed': not a field"):
        compare_dirs(a, c, factor="seed")


def test_same_plans_compare_on_provenance_and_show_what_differs(tmp_path: Path) -> None:
    env = {"ani_sdk": "0.1.0", "git_commit": "a" * 40, "git_dirty": False, "frr": "8.4.4", "kernel": "6.1.0",
           "python": "3.11.2", "agent": {"kind": "scripted"}}
    a = make_campaign(tmp_path / "a", "sweep", {"a1": A1_A}, provenance=env)
    b = make_campaign(tmp_path / "b", "sweep", {"a1": A1_B}, provenance={**env, "ani_sdk": "0.2.0", "frr": "9.1"})
    c = compare_dirs(a, b)
    assert c.factor == "provenance"
    assert c.provenance_differs == ["ani_sdk", "frr"]
    assert (a.name, b.name) == ("a", "b") and (c.a.label, c.b.label) == ("sweep (a)", "sweep (b)")
    md = render_markdown(c)
    assert "provenance A: ani-sdk 0.1.0 (git aaaaaaaaaaaa), FRR 8.4.4" in md
    assert "provenance B: ani-sdk 0.2.0 (git aaaaaaaaaaaa), FRR 9.1" in md
    assert "provenance differs in: ani_sdk, frr" in md


def test_runs_in_no_pair_are_counted_and_listed(tmp_path: Path) -> None:
    a = make_campaign(tmp_path / "a", "sweep", {"a1": A1_A})
    b = make_campaign(tmp_path / "b", "sweep", {"a1": A1_B}, seeds=9, infra={"a1-onboard-site-s2"})
    (b / "runs.jsonl").write_text("\n".join((b / "runs.jsonl").read_text().splitlines()[:-1]) + "\n")  # s9 not run
    c = compare_dirs(a, b)
    assert sorted(c.unpaired) == [("a1-onboard-site-s10", "planned in A only"),
                                  ("a1-onboard-site-s2", "infra_error in B"),
                                  ("a1-onboard-site-s9", "not recorded in B")]
    assert c.rows[0].pairs == 7
    md = render_markdown(c)
    assert "pairs: 7 (both runs valid); runs in no pair: 3" in md
    assert "- `a1-onboard-site-s10`: planned in A only" in md


def test_no_shared_plan_and_no_plan_file_are_refused(tmp_path: Path) -> None:
    a = make_campaign(tmp_path / "a", "sweep", {"a1": A1_A})
    b = make_campaign(tmp_path / "b", "sweep", {"a3t": A3T_A})
    with pytest.raises(CampaignSpecError, match="share no planned run"):
        compare_dirs(a, b)
    (tmp_path / "empty").mkdir()
    with pytest.raises(CampaignSpecError, match="no plan.jsonl"):
        compare_dirs(a, tmp_path / "empty")


def test_cli_prints_the_statistics_writes_html_and_refuses_with_exit_2(two: tuple[Path, Path], tmp_path: Path) -> None:
    from ani.cli import app

    a, b = two
    page = tmp_path / "cmp.html"
    res = CliRunner().invoke(app, ["campaign", "compare", str(a), str(b), "--html", str(page)])
    assert res.exit_code == 0, res.output
    assert "sweep@scripted+mistakes vs sweep@scripted, a3t (10 pairs): damage-free 1.00 vs 1.00" in res.output
    assert "| a1 | 10 | 9/10 (0.90)" in res.output
    html = page.read_text()
    assert "<table id=\"paired-table\">" in html and "sweep@scripted+mistakes vs sweep@scripted, a1" in html
    assert "<script" not in html
    other = make_campaign(tmp_path / "c", "sweep", {"a1": A1_B}, scenario_hash="0c1d" * 16,
                          agent={"kind": "scripted"})
    res = CliRunner().invoke(app, ["campaign", "compare", str(a), str(other)])
    assert res.exit_code == 2
    assert "plans differ in scenario_hash for 10 runs (a1-onboard-site-s1: f161abbb3a6a vs 0c1d0c1d0c1d)" in res.output
    assert not (tmp_path / "c" / "cmp.html").exists()
    (tmp_path / "page").mkdir()
    res = CliRunner().invoke(app, ["campaign", "compare", str(a), str(b), "--html", str(tmp_path / "page")])
    assert res.exit_code == 2 and "cannot write the page" in res.output
    assert not list(tmp_path.glob(".page*"))  # no temporary file left behind


REAL = Path(__file__).parents[1] / "data" / "campaign-results" / "compare"


def test_real_campaigns_with_and_without_mistakes_pair_on_the_agent() -> None:
    """The shipped one-seed campaigns of real runs: at A1 the mistake broke an invariant (one
    discordant damage-free pair), at A3-T the typed tools refused it."""
    c = compare_dirs(REAL / "mistakes", REAL / "clean")
    assert (c.factor, c.factor_values) == ("agent", ("scripted+mistakes", "scripted"))
    rows = {r.name: r for r in c.rows}
    assert (rows["a1"].mcnemar["damage_free"].b, rows["a1"].mcnemar["damage_free"].c) == (0, 1)
    assert rows["a1"].diff["damage_free"].diff == -1.0
    assert (rows["a3t"].mcnemar["damage_free"].b, rows["a3t"].mcnemar["damage_free"].c) == (0, 0)
    assert c.provenance_differs == ["git_commit"]
    assert c.unpaired == []


def test_real_campaign_on_another_brownfield_is_refused() -> None:
    """``seed8``: the clean campaign at scenario seed 8, a real run on another brownfield."""
    with pytest.raises(CampaignSpecError) as err:
        compare_dirs(REAL / "clean", REAL / "seed8")
    assert str(err.value).startswith(
        "plans differ in scenario_hash for 1 run (a1-onboard-site-s1: f161abbb3a6a vs d3fe54289ae7)")


def test_netconfbench_runs_pair_by_task_file_not_by_seed(tmp_path: Path) -> None:
    """With ``tasks:`` the seed indexes the task files: two campaigns listing them in another
    order pair static-backup with static-backup, not seed 0 with seed 0."""
    def folder(name: str, files: tuple[str, ...], succ: dict[str, bool]) -> Path:
        out = tmp_path / name
        out.mkdir()
        p0, rec0 = _fixture_plan("a1"), _fixture_record()
        scen = p0.scenario.model_copy(update={"tasks": files, "hash": None, "file": None})
        plans, lines = [], []
        for seed, f in enumerate(files):
            stem = Path(f).stem
            plan = p0.model_copy(update={"run_id": f"a1-{stem}-s{seed}", "seed": seed, "task": "netconfbench",
                                         "scenario": scen})
            plans.append(plan)
            s = succ[stem]
            rec = rec0.model_copy(update={"run_id": plan.run_id, "seed": seed, "task": "netconfbench", "success": s,
                                          "label": "clean_success" if s else "clean_failure",
                                          "scenario_hash": HASH})
            lines.append(RunRecord.model_validate(rec.model_dump()).model_dump_json())
        write_plans(out, plans)
        (out / "runs.jsonl").write_text("\n".join(lines) + "\n")
        return out

    a = folder("a", ("/t/static-backup.json", "/t/ospf-cost.json"), {"static-backup": True, "ospf-cost": False})
    b = folder("b", ("/t/ospf-cost.json", "/t/static-backup.json"), {"static-backup": True, "ospf-cost": False})
    c = compare_dirs(a, b)
    # paired by task file: the same verdicts, so no discordant pair (by seed it would be b=1, c=1)
    assert c.unpaired == []
    assert (c.rows[0].mcnemar["success"].b, c.rows[0].mcnemar["success"].c) == (0, 0)
    assert c.rows[0].pairs == 2


def test_the_same_plans_run_twice_by_the_same_environment_are_a_repetition(tmp_path: Path) -> None:
    env = {"ani_sdk": "0.1.0", "git_commit": "a" * 40, "git_dirty": False, "frr": "8.4.4", "kernel": "6.1.0",
           "python": "3.11.2", "agent": {"kind": "scripted"}}
    c = compare_dirs(make_campaign(tmp_path / "a", "sweep", {"a1": A1_A}, provenance=env),
                     make_campaign(tmp_path / "b", "sweep", {"a1": A1_B}, provenance=env))
    assert c.factor == "provenance" and c.provenance_differs == []
    md = render_markdown(c)
    assert "factor compared: none (the same plans, run twice by the same ani-sdk, FRR, kernel, Python and agent" in md
    assert " vs " not in next(ln for ln in md.splitlines() if "factor compared" in ln)
