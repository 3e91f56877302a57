"""benchmarks/known_answer_kinds.py when a campaign it starts fails: e.g. run a second time into
the same --out, where every ``ani campaign run`` refuses (exit 2, the folder already holds runs).
Before, it measured the earlier folders as if they were this run's and exited 0."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("known_answer_kinds", ROOT / "benchmarks" / "known_answer_kinds.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_refused_campaign_fails_the_benchmark_and_its_old_folder_is_not_measured(tmp_path, monkeypatch, capsys):
    bench = _bench()
    measured = []
    monkeypatch.setattr(bench, "run_one", lambda name, spec, out: {"rc": 2, "seconds": 1.0})
    monkeypatch.setattr(bench, "measure", lambda name, folder: measured.append(name) or {"kind": name})
    monkeypatch.setattr(bench, "pooled", lambda done: None)
    (tmp_path / "speculative-leftover").mkdir()
    (tmp_path / "speculative-leftover" / "runs.jsonl").write_text("{}\n")  # an earlier run's
    monkeypatch.setattr(sys, "argv", ["known_answer_kinds.py", "--kinds", "speculative-leftover",
                                      "--variants", "1", "--no-free", "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as exc:
        bench.main()
    assert exc.value.code == 1
    assert measured == []
    err = capsys.readouterr().err
    assert "ani campaign run failed: speculative-leftover (exit 2, log " in err
