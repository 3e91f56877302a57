"""ani.lab.runconf.RunningConfigs' decisions (its sources read on real sockets in
tests/integration/test_running_config_cache.py): when the kept text answers, when vtysh runs,
and when vtysh's text is kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ani.host.proc import ExecResult
from ani.lab import runconf, vty

TEXT = "Building configuration...\n\nCurrent configuration:\n!\nhostname r1\n!\nend\n"


def _cache(monkeypatch: pytest.MonkeyPatch, reads: list[Any]) -> runconf.RunningConfigs:
    """A cache whose sources() answers ``reads`` in turn."""
    monkeypatch.delenv(vty.FAST_ENV, raising=False)

    def sources(run_dir: Path, conf: Path, deadline: float) -> Any:
        return reads.pop(0)

    monkeypatch.setattr(runconf, "sources", sources)
    return runconf.RunningConfigs(lambda r: Path("/nonexistent") / r, lambda r: Path("/nonexistent") / r)


def _vtysh(results: list[ExecResult]) -> Any:
    calls: list[float] = []

    def run(left: float) -> ExecResult:
        calls.append(left)
        return results[len(calls) - 1]

    run.calls = calls  # type: ignore[attr-defined]
    return run


OK = ExecResult(rc=0, stdout=TEXT, stderr="", timed_out=False, elapsed_s=0.04)
A, B = (b"", (("zebra", "a"),)), (b"", (("zebra", "b"),))


def test_same_sources_answer_the_kept_text(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(monkeypatch, [A, A, A])
    run = _vtysh([OK])
    first, second = cache.read("r1", 5.0, run), cache.read("r1", 5.0, run)
    assert len(run.calls) == 1 and 4.0 < run.calls[0] <= 5.0
    assert (second.rc, second.stdout, second.stderr, second.timed_out) == (0, TEXT, "", False)
    assert first is OK and second.elapsed_s < 0.04


def test_other_sources_or_another_router_run_vtysh(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(monkeypatch, [A, A, B, B, A, A])
    run = _vtysh([OK, OK, OK])
    cache.read("r1", 5.0, run)
    cache.read("r1", 5.0, run)  # B: changed
    cache.read("r2", 5.0, run)  # A, but r2 has nothing kept
    assert len(run.calls) == 3


def test_a_change_during_the_vtysh_run_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(monkeypatch, [A, B, A, A, A])
    run = _vtysh([OK, OK])
    cache.read("r1", 5.0, run)  # A before, B after: vtysh's text may be either's
    cache.read("r1", 5.0, run)  # so this one runs vtysh again, and keeps it
    cache.read("r1", 5.0, run)
    assert len(run.calls) == 2


@pytest.mark.parametrize("res", [
    ExecResult(rc=1, stdout=TEXT, stderr="", timed_out=False, elapsed_s=0.1),
    ExecResult(rc=0, stdout=TEXT, stderr="Exiting: failed to connect to any daemons.\n", timed_out=False, elapsed_s=0.1),
    ExecResult(rc=0, stdout="% Unknown command\n", stderr="", timed_out=False, elapsed_s=0.1),
    ExecResult(rc=-9, stdout="", stderr="", timed_out=True, elapsed_s=5.0),
])
def test_an_unclean_vtysh_answer_is_returned_and_not_kept(monkeypatch: pytest.MonkeyPatch, res: ExecResult) -> None:
    cache = _cache(monkeypatch, [A, A, A])
    run = _vtysh([res, OK])
    assert cache.read("r1", 5.0, run) is res
    assert cache.read("r1", 5.0, run) is OK  # not answered from a kept `res`
    assert len(run.calls) == 2


def test_unreadable_sources_always_run_vtysh(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(monkeypatch, [None, None])
    run = _vtysh([OK, OK])
    cache.read("r1", 5.0, run)
    cache.read("r1", 5.0, run)
    assert len(run.calls) == 2


def test_a_deadline_passed_on_the_sockets_is_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(monkeypatch, [runconf.TIMED_OUT])
    run = _vtysh([OK])
    res = cache.read("r1", 1.5, run)
    assert (res.rc, res.stdout, res.stderr, res.timed_out) == (-9, "", "", True) and run.calls == []


def test_turned_off_reads_no_source(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(monkeypatch, [A, A])
    run = _vtysh([OK, OK, OK])
    cache.read("r1", 5.0, run)
    monkeypatch.setenv(vty.FAST_ENV, "0")
    cache.read("r1", 5.0, run)  # off: vtysh runs although the sources are unchanged
    cache.read("r1", 5.0, run)
    assert len(run.calls) == 3
