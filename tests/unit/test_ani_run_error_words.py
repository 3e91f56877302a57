"""``ani run`` errors name its options, not the fields of the one-cell campaign it builds
(new-user trial: ``error: command line: cells[0](a3t).level: 'a3t': ...`` and ``error: command
line: invalid campaign: seed: Input should be greater than or equal to 0``). Real command line
(typer's runner on ``ani.cli.app``); nothing gets as far as a lab."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from ani.campaign.cli import run_option_error
from ani.cli import app

TASK = "intents/netconfbench/static-backup.json"
CAMPAIGN_WORDS = ("command line", "invalid campaign", "cells[", "budget.", "Input should be greater")


@pytest.fixture
def no_lab(monkeypatch) -> list[Any]:
    """The real checks run (parse_spec, validate); the run stops at check_host, before any lab."""
    import ani.campaign.runner as runner
    from ani.errors import AniError

    got: list[Any] = []

    def check_host(spec: Any, deps: Any) -> None:
        got.append(spec)
        raise AniError("stopped before the lab (test)")

    monkeypatch.setattr(runner, "check_host", check_host)
    return got


def err_of(*argv: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["run", *argv], env={"COLUMNS": "300"})
    return res.exit_code, res.stderr.strip()


@pytest.mark.parametrize("argv, said", [
    (("--task-file", TASK, "--level", "a3t"),
     "error: --level a3t: a NetConfBench task runs at the device levels a0, a1, a2 (its intents"),
    (("--seed", "-1"), "error: --seed -1: must be 0 or more"),
    (("--wall-clock", "0"), "error: --wall-clock 0: must be more than 0"),
    (("--seed", "-2", "--wall-clock", "-1.5"), "error: --seed -2: must be 0 or more; --wall-clock -1.5: must be more than 0"),
    (("--task", "nosuch"), "error: --task nosuch: unknown task class 'nosuch'; known: onboard-site"),
    (("--reasoning-summary", "foo"), "error: --reasoning-summary foo: "),
])
def test_an_error_names_the_option_and_its_value(no_lab, argv, said):
    code, err = err_of(*argv)
    assert code == 2
    assert err.startswith(said), err
    assert len(err.splitlines()) == 1
    assert not any(w in err for w in CAMPAIGN_WORDS), err
    assert no_lab == []


def test_a_budget_key_from_the_agent_config_file_names_the_file(tmp_path, no_lab):
    f = tmp_path / "c.yaml"
    f.write_text("agent: {kind: scripted}\nbudget: {wall_clock_s: 0}\n")
    code, err = err_of("--agent-config", str(f))
    assert code == 2
    if "--agent-config" not in err or "wall_clock_s" not in err:  # refused by the file's own check
        pytest.fail(err)
    assert "command line" not in err and "invalid campaign" not in err
    assert no_lab == []


def test_other_messages_pass_unchanged():
    fields = {"seed": ("--seed 1", 1)}
    assert run_option_error("lab x failed: seed: 3", fields) == "lab x failed: seed: 3"
    # a field name inside a message is not a field: only at the start or after "; "
    assert run_option_error("command line: task: unknown; reseed: x", fields) == "task: unknown; reseed: x"


def test_a_valid_run_reaches_the_host_check(no_lab):
    code, err = err_of("--seed", "0", "--level", "a1")
    assert code == 2 and err == "error: stopped before the lab (test)"
    assert len(no_lab) == 1 and no_lab[0].seed == 0
