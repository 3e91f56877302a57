"""``ani run`` counts in the number they ask for (issue 5, new-user pass: ``1 steps``, ``1 tool
calls``): the live lines and the verdict line, through the real command line with
run_single replaced by one returning a record (no lab)."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.text import Text
from typer.testing import CliRunner

from ani.campaign.live import count, event_line
from ani.campaign.results import CheckOutcome, RunRecord
from ani.cli import app


def plain(ev) -> str:
    return Text.from_markup(event_line(ev)).plain


def test_count():
    assert [count(0, "step"), count(1, "step"), count(2, "step"), count("?", "step")] == \
        ["0 steps", "1 step", "2 steps", "? steps"]
    assert count(1, "repeat", "repeats") == "1 repeat" and count(True, "step") == "True steps"


def test_live_lines_singular_and_plural():
    assert plain({"event": "agent_stop", "stop_reason": "submitted", "steps": 1, "null_actions": 1,
                  "prompt_tokens": 5, "completion_tokens": 1}) == \
        "  agent stop: submitted; 1 step, 1 null action, 5+1 tokens"
    assert plain({"event": "agent_stop", "stop_reason": "max_steps", "steps": 2, "null_actions": 0}) == \
        "  agent stop: max_steps; 2 steps, 0 null actions, ? tokens"
    # an endpoint that never answered: no usage at all is '0 tokens', not a total-only count
    assert plain({"event": "agent_stop", "stop_reason": "error", "steps": 0, "null_actions": 0,
                  "prompt_tokens": None, "completion_tokens": None, "total_tokens": 0}) == \
        "  agent stop: error; 0 steps, 0 null actions, 0 tokens"
    assert plain({"event": "agent_stop", "stop_reason": "submitted", "steps": 1, "null_actions": 0,
                  "prompt_tokens": None, "completion_tokens": None, "total_tokens": 40}) == \
        "  agent stop: submitted; 1 step, 0 null actions, 40 tokens (total only)"
    assert plain({"event": "agent_turn", "turn": 1, "content": "a\nb", "tool_calls": []}).endswith('"a (+1 line)"')
    assert plain({"event": "agent_turn", "turn": 1, "plan": True, "content": "p",
                  "tool_calls": [{"name": "x"}]}).startswith("  turn 1 (plan): ? tokens -> plan text (1 tool call ignored)")
    assert plain({"event": "agent_start", "agent": "llm", "tools": [{}]}) == "  agent llm: 1 tool"


def test_the_verdict_line_says_1_tool_call_1_error(tmp_path, monkeypatch):

    now = datetime.now(UTC)

    def run_single(spec, out, **k):
        return RunRecord(run_id="a1-onboard-site-s1", campaign="run", cell="a1", level="a1",
                         task="onboard-site", seed=1, label="clean_failure", success=False,
                         damage_free=True, tests=[CheckOutcome(name="t", passed=False)],
                         tool_calls=1, tool_errors=1, started=now, ended=now, wall_s=1.0)

    monkeypatch.setattr("ani.campaign.single.run_single", run_single)
    res = CliRunner().invoke(app, ["run", "--out", str(tmp_path / "o")])
    assert res.exit_code == 1, res.output
    assert "verdict: clean_failure; 1 tool call, 1 error, 1.0s" in res.stdout
