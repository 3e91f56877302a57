"""The terminal process table's modes cell ``early/limit/ok/err +N``: the +N (runs that ended with
an agent error or without a submission) is explained in the table's caption (issue 5 pass)."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.console import Console

from ani.campaign.metrics import ProcessMetrics
from ani.campaign.report import summarize, summary_tables
from ani.campaign.results import RunRecord, label_for

T0 = datetime(2026, 11, 30, tzinfo=UTC)


def _record(process: ProcessMetrics, seed: int) -> RunRecord:
    return RunRecord(run_id=f"a1-t-s{seed}", campaign="c", cell="a1", level="a1", task="t", seed=seed,
                     label=label_for(False, True), success=False, damage_free=True, started=T0, ended=T0,
                     process=process)



def _terminal(records) -> str:
    console = Console(record=True, width=80)
    for t in summary_tables(summarize(records, {"cells": [{"name": "a1", "level": "a1"}]})):
        console.print(t)
    return console.export_text()


def test_plus_n_after_the_modes_is_explained_in_the_terminal_table():
    crashed = ProcessMetrics(completion_mode="agent_error")
    silent = ProcessMetrics(turns=1, actions=1, completion_mode="no_submission")
    ok = ProcessMetrics(turns=1, actions=1, completion_mode="correct_submission")
    out = _terminal([_record(crashed, 1), _record(silent, 2), _record(ok, 3)])
    assert "0/0/1/0 +2" in out
    assert "modes +N: N runs ended by an agent error or without a submission" in " ".join(out.split())
    assert max(len(line) for line in out.splitlines()) <= 80
    out = _terminal([_record(ok, 3)])  # no +N shown: no caption either
    assert "0/0/1/0" in out and "+N" not in out
