"""``ani run`` with bad agent files and odd trajectory events (adversarial pass of issue 5):
through the real command line (typer's runner on ``ani.cli.app``); no lab is started (the run is
stopped at ``validate``, the last step before a lab, if it ever gets there).
"""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from ani.campaign.live import event_line
from ani.cli import app


LLM = "kind: llm\nmodel: m\napi_key_env: null\n"


@pytest.mark.parametrize("text, says", [
    ("kind: [llm]\n", "agent.kind: must be a name, got list"),
    ("agent:\n  kind: {a: 1}\n", "agent.kind: must be a name, got dict"),
    (LLM + "base_url: localhost:8000/v1\n", "agent.base_url"),
    (LLM + "base_url: http://127.0.0.1:8000/v1\nwait_max_s: .inf\n", "agent.wait_max_s"),
    (LLM + "base_url: http://127.0.0.1:8000/v1\nrequest_timeout_s: .nan\n", "agent.request_timeout_s"),
])
def test_bad_agent_values_exit_2_naming_them_before_any_lab(tmp_path, stop_before_lab, text, says):
    """A list as the kind used to crash ani run with a TypeError traceback (exit 1); a base_url
    without a scheme, or an infinite wait/timeout, went on to start a lab."""
    f = tmp_path / "agent.yaml"
    f.write_text(text)
    res = CliRunner().invoke(app, ["run", "--agent-config", str(f)])
    assert res.exit_code == 2, res.output
    assert says in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert stop_before_lab == []  # refused before validate, so before any lab


@pytest.mark.parametrize("ev", [
    {"event": "agent_turn", "turn": 1, "attempts": "x", "tool_calls": 5},
    {"event": "llm_retry", "attempt": 1, "error": "e", "backoff_s": "soon", "retry_after_s": [1]},
])
def test_an_event_with_odd_field_types_still_prints_a_line(ev):
    """These used to raise (TypeError / ValueError); the runner's hook guard then dropped the
    line silently, so the live trajectory missed the event."""
    line = event_line(ev)
    assert line is not None and line.startswith("  " + ev["event"] + ":")


def test_an_infinite_wall_clock_is_refused_before_any_lab(stop_before_lab):
    """--wall-clock inf (or .inf in a campaign's budget) was accepted: an unbounded run, and a
    record whose budget serialises as null."""
    res = CliRunner().invoke(app, ["run", "--wall-clock", "inf"])
    assert res.exit_code == 2 and "--wall-clock inf: " in res.stderr and "finite" in res.stderr
    assert stop_before_lab == []


def test_a_failed_tool_call_line_names_the_code_once():
    ev = {"event": "tool_call", "tool": "get_running_config", "arguments": {"device": "zz"}, "ok": False,
          "error_code": "unknown_device", "summary": "error [unknown_device]: unknown device 'zz'; devices are: r1"}
    line = event_line(ev)
    assert line.count("unknown_device") == 1 and "unknown device 'zz'" in line


def test_an_out_folder_that_cannot_be_written_exits_2_before_any_lab(tmp_path, monkeypatch):
    """--out naming a file (or a place that cannot be created) used to start the lab and then
    crash with a NotADirectoryError traceback (exit 1)."""
    import ani.campaign.runner as runner

    started: list[Any] = []
    monkeypatch.setattr(runner, "validate", lambda spec, deps: None)
    monkeypatch.setattr("ani.campaign.single.run_single", lambda *a, **k: started.append(a))
    afile = tmp_path / "afile"
    afile.write_text("x")
    res = CliRunner().invoke(app, ["run", "--out", str(afile)])
    assert res.exit_code == 2 and f"--out {afile}: is a file, not a folder" in res.stderr
    res = CliRunner().invoke(app, ["run", "--out", str(afile / "sub")])
    assert res.exit_code == 2 and "cannot write there" in res.stderr
    assert started == [] and afile.read_text() == "x"
