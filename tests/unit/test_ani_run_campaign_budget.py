"""``ani run --agent-config <campaign file>`` takes the campaign's ``budget:`` block (issue 5,
new-user pass: the defaults 40 steps / 300 s / no token cap used to apply), with --max-steps,
--max-tokens and --wall-clock overriding, and prints the budget in effect; through the real
command line, stopped at ani.campaign.single.run_single (no lab)."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from ani.cli import app
from ani.errors import AniError

AGENT = "agent: {kind: llm, base_url: 'http://127.0.0.1:9/v1', model: m, api_key_env: null}\n"
CAMPAIGN = "name: x\nscenario: scenarios/brownfield-small.yaml\ntask: onboard-site\n" + AGENT


class _Stop(AniError):
    pass


@pytest.fixture
def ran(monkeypatch) -> list[Any]:
    import ani.campaign.runner as runner

    got: list[Any] = []

    def run_single(spec, *a, **k):
        got.append(spec)
        raise _Stop("stopped before the lab (test)")

    monkeypatch.setattr("ani.campaign.single.run_single", run_single)
    monkeypatch.setattr(runner, "preflight", lambda spec, deps: [])
    return got


def run(tmp_path, *args: str) -> Any:
    return CliRunner().invoke(app, ["run", "--out", str(tmp_path / "out"), *args])


def test_the_campaign_budget_is_the_default(tmp_path, ran):
    f = tmp_path / "c.yaml"
    f.write_text(CAMPAIGN + "budget: {max_steps: 7, max_tokens: 1234, wall_clock_s: 90}\n")
    res = run(tmp_path, "--agent-config", str(f))
    assert "stopped before the lab (test)" in res.stderr, res.output
    b = ran[-1].budget
    assert (b.max_steps, b.max_tokens, b.wall_clock_s) == (7, 1234, 90.0)
    assert f"budget: 7 steps, 90 s wall clock, 1234 tokens (from --agent-config {f})" in res.stdout
    res = run(tmp_path, "--agent-config", str(f), "--max-steps", "1", "--wall-clock", "30")
    b = ran[-1].budget
    assert (b.max_steps, b.max_tokens, b.wall_clock_s) == (1, 1234, 30.0)
    assert (f"budget: 1 step, 30 s wall clock, 1234 tokens (from --agent-config {f}; "
            "--max-steps, --wall-clock given)") in res.stdout


def test_a_campaign_without_budget_and_a_bare_block_use_the_defaults(tmp_path, ran):
    f = tmp_path / "c.yaml"
    f.write_text(CAMPAIGN)
    res = run(tmp_path, "--agent-config", str(f), "--max-tokens", "500")
    b = ran[-1].budget
    assert (b.max_steps, b.max_tokens, b.wall_clock_s) == (40, 500, 300.0)
    assert "budget: 40 steps, 300 s wall clock, 500 tokens" in res.stdout
    bare = tmp_path / "a.yaml"
    bare.write_text("kind: llm\nbase_url: 'http://127.0.0.1:9/v1'\nmodel: m\napi_key_env: null\n")
    res = run(tmp_path, "--agent-config", str(bare))
    b = ran[-1].budget
    assert (b.max_steps, b.max_tokens, b.wall_clock_s) == (40, None, 300.0)
    assert "budget: 40 steps, 300 s wall clock, no token cap (defaults)" in res.stdout


def test_a_bad_campaign_budget_exits_2_naming_it(tmp_path, ran):
    f = tmp_path / "c.yaml"
    f.write_text(CAMPAIGN + "budget: {max_steps: 0, wall_clok_s: 5}\n")
    res = run(tmp_path, "--agent-config", str(f))
    assert res.exit_code == 2 and ran == []
    line = res.stderr.strip()
    assert len(line.splitlines()) == 1
    assert f"--agent-config {f}: budget.max_steps: Input should be greater than or equal to 1" in line
    assert "budget.wall_clok_s" in line
