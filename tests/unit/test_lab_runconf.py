"""ani.lab.runconf.RunningConfigs' decisions (its sources read on real sockets in
tests/integration/test_running_config_cache.py): when the kept text answers, when vtysh runs,
and when vtysh's text is kept."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ani.host.proc import ExecResult
from ani.host import vtysh_cache
from ani.lab import runconf, vty

TEXT = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nhostname r1\n!\nend\n"


@pytest.fixture(autouse=True)
def _nothing_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """No directory shared between labs unless a test names one (the suite sets one for the
    session: tests/conftest.py)."""
    monkeypatch.delenv(vtysh_cache.ENV, raising=False)


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
A = (b"", (("zebra", "frr version 8.4.4\nhostname r1\n!\n"),))  # TEXT is made of A's lines
B = (b"", (("zebra", "hostname r1\n!\ninterface lo\n description B\nexit\n"),))


def test_same_sources_answer_the_kept_text(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(monkeypatch, [A, A, A])
    run = _vtysh([OK])
    first, second = cache.read("r1", 5.0, run), cache.read("r1", 5.0, run)
    assert len(run.calls) == 1 and 4.0 < run.calls[0] <= 5.0
    assert (second.rc, second.stdout, second.stderr, second.timed_out) == (0, TEXT, "", False)
    assert (first.rc, first.stdout) == (0, TEXT) and second.elapsed_s < 0.04


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
    assert cache.read("r1", 5.0, run).stdout == TEXT  # not answered from a kept `res`
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


def test_a_change_made_and_undone_during_the_run_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # A before and after, but vtysh ran while the config was briefly B: its text has B's line
    during_b = ExecResult(rc=0, stdout=TEXT.replace("hostname r1\n", "hostname r1\ninterface lo\n description B\n"),
                          stderr="", timed_out=False, elapsed_s=0.04)
    cache = _cache(monkeypatch, [A, A, A, A])
    run = _vtysh([during_b, OK])
    assert cache.read("r1", 5.0, run).stdout == during_b.stdout  # what vtysh printed, as ever
    assert cache.read("r1", 5.0, run).stdout == TEXT  # not B's text from the kept answer
    assert len(run.calls) == 2


@pytest.mark.parametrize(("text", "src", "want"), [
    (TEXT, A, True),
    (TEXT, (b"service integrated-vtysh-config\n", A[1]), True),            # vtysh.conf's lines may be extra
    (TEXT + "service integrated-vtysh-config\n", A, False),               # ... only those
    (TEXT.replace("hostname r1\n", ""), A, False),                        # a daemon's line missing
    (TEXT, (b"", (("zebra", "hostname r1\n"), ("bgpd", "router bgp 1\n"))), False),
])
def test_consistent(text: str, src: Any, want: bool) -> None:
    assert runconf.consistent(text, src) is want


def test_the_read_after_vtysh_is_bounded_by_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    deadlines: list[float] = []
    monkeypatch.delenv(vty.FAST_ENV, raising=False)

    def sources(run_dir: Path, conf: Path, deadline: float) -> Any:
        deadlines.append(deadline)
        return A

    monkeypatch.setattr(runconf, "sources", sources)
    cache = runconf.RunningConfigs(lambda r: Path("/x"), lambda r: Path("/y"))
    t0 = time.monotonic()
    res = cache.read("r1", 2.0, _vtysh([OK]))
    assert len(deadlines) == 2 and deadlines[0] == deadlines[1] and t0 + 2.0 <= deadlines[1] <= time.monotonic() + 2.0
    assert res.elapsed_s < 1.0  # the whole call's time, not vtysh's 0.04 s alone
    assert res.elapsed_s != OK.elapsed_s


# -- kept by sources, and shared through the lab's store -------------------------------------------

def _lo(description: str) -> tuple[Any, ExecResult]:
    """Sources whose zebra has ``interface lo`` with ``description``, and vtysh's text of them."""
    lines = f"hostname r1\n!\ninterface lo\n description {description}\nexit\n"
    src = (b"", (("zebra", f"frr version 8.4.4\n{lines}"),))
    return src, ExecResult(rc=0, stdout=TEXT.replace("hostname r1\n", lines), stderr="", timed_out=False,
                           elapsed_s=0.04)


B2, B_OK = _lo("B")
B_TEXT = B_OK.stdout


def _stored(monkeypatch: pytest.MonkeyPatch, reads: list[Any], store: Path) -> runconf.RunningConfigs:
    """A cache like :func:`_cache` sharing ``store`` (one directory per router under it)."""
    cache = _cache(monkeypatch, reads)
    cache._store = lambda r: store / r  # noqa: SLF001 - the store a Lab gives: <lab dir>/<router>/runconf
    return cache


def test_sources_seen_before_answer_their_own_text(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = _cache(monkeypatch, [A, A, B2, B2, A, B2])
    run = _vtysh([OK, B_OK])
    assert [cache.read("r1", 5.0, run).stdout for _ in range(4)] == [TEXT, B_TEXT, TEXT, B_TEXT]
    assert len(run.calls) == 2  # back to A (a rollback), then B again: both kept


def test_another_reader_of_the_lab_takes_the_stored_text(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    reads = [A, A, A, B2, B2, B2]
    first, second = _stored(monkeypatch, reads, tmp_path), runconf.RunningConfigs(
        lambda r: Path("/x"), lambda r: Path("/y"), lambda r: tmp_path / r)
    run = _vtysh([OK, B_OK])
    assert first.read("r1", 5.0, run).stdout == TEXT  # vtysh, kept in memory and in the store
    assert second.read("r1", 5.0, run).stdout == TEXT  # another object (process): from the store
    assert len(run.calls) == 1
    assert second.read("r1", 5.0, run).stdout == B_TEXT and first.read("r1", 5.0, run).stdout == B_TEXT
    assert len(run.calls) == 2
    assert sorted(p.name for p in (tmp_path / "r1").iterdir()) == sorted([runconf._key(A), runconf._key(B2)])  # noqa: SLF001
    assert (tmp_path / "r1").stat().st_mode & 0o777 == 0o700


def test_a_stored_text_not_made_of_the_sources_is_not_taken(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / runconf._key(A)).write_text(B_TEXT)  # noqa: SLF001 - B's lines under A's name
    cache = _stored(monkeypatch, [A, A, A], tmp_path)
    run = _vtysh([OK])
    assert cache.read("r1", 5.0, run).stdout == TEXT and len(run.calls) == 1
    assert (tmp_path / "r1" / runconf._key(A)).read_text() == TEXT  # noqa: SLF001 - vtysh's text replaced it


def test_each_router_keeps_the_last_texts_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    srcs, texts = zip(*(_lo(str(i)) for i in range(runconf.KEEP + 3)), strict=True)
    cache = _stored(monkeypatch, [s for s in srcs for _ in (0, 1)] + [srcs[0], srcs[0], srcs[-1]], tmp_path)
    run = _vtysh([*texts, texts[0]])
    for _ in srcs:
        cache.read("r1", 5.0, run)
    assert len(list((tmp_path / "r1").iterdir())) == runconf.KEEP
    cache.read("r1", 5.0, run)  # the first sources again: dropped, so vtysh runs
    cache.read("r1", 5.0, run)  # the last: kept
    assert len(run.calls) == len(srcs) + 1


def test_a_store_that_cannot_be_written_costs_nothing_but_the_saving(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    (tmp_path / "r1").write_text("a file where the directory would be")
    cache = _stored(monkeypatch, [A, A, A], tmp_path)
    run = _vtysh([OK])
    assert cache.read("r1", 5.0, run).stdout == TEXT and cache.read("r1", 5.0, run).stdout == TEXT
    assert len(run.calls) == 1  # kept in memory all the same


# -- shared between labs (ANI_VTYSH_CACHE) ------------------------------------------------------

def _lab_cache(monkeypatch: pytest.MonkeyPatch, reads: list[Any], store: Path) -> runconf.RunningConfigs:
    """Another lab's cache: its own store, ``sources()`` answering ``reads`` in turn (the list is
    shared with the other caches of the test, so they read in the order the test calls them)."""
    def sources(run_dir: Path, conf: Path, deadline: float) -> Any:
        return reads.pop(0)

    monkeypatch.setattr(runconf, "sources", sources)
    store.mkdir()  # the lab's dir (its routers' node dirs hold their stores)
    return runconf.RunningConfigs(lambda r: Path("/x"), lambda r: Path("/y"), lambda r: store / r)


def test_a_router_of_another_lab_with_the_same_name_and_sources_takes_the_shared_text(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(vtysh_cache.ENV, str(tmp_path))
    reads = [A, A, A, A, A, B2, B2]  # a kept text: one read of the sources; vtysh: one before, one after
    one, two, three = (_lab_cache(monkeypatch, reads, tmp_path / f"lab{i}") for i in (1, 2, 3))
    run = _vtysh([OK, OK, B_OK])
    assert one.read("r1", 5.0, run).stdout == TEXT  # vtysh; kept in lab1's store and the shared one
    assert two.read("r1", 5.0, run).stdout == TEXT  # lab2, same router name and sources: shared
    assert len(run.calls) == 1 and (tmp_path / "lab1" / "r1").is_dir() and not (tmp_path / "lab2" / "r1").exists()
    assert three.read("r2", 5.0, run).stdout == TEXT  # another name (vtysh prints the hostname): vtysh
    assert three.read("r1", 5.0, run).stdout == B_TEXT  # other sources: vtysh
    assert len(run.calls) == 3
    shared = runconf.shared_dir()
    assert shared.parent == tmp_path and shared.name.startswith("runconf-")
    assert len(list(shared.iterdir())) == 3 and shared.stat().st_mode & 0o777 == 0o700


def test_nothing_is_shared_without_the_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    reads = [A, A, A, A]
    one, two = (_lab_cache(monkeypatch, reads, tmp_path / f"lab{i}") for i in (1, 2))
    run = _vtysh([OK, OK])
    one.read("r1", 5.0, run)
    two.read("r1", 5.0, run)
    assert len(run.calls) == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["lab1", "lab2"]  # nothing shared
    assert (tmp_path / "lab1" / "r1").is_dir() and (tmp_path / "lab2" / "r1").is_dir()


def test_a_shared_text_not_made_of_the_sources_is_not_taken(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(vtysh_cache.ENV, str(tmp_path))
    shared = runconf.shared_dir()
    shared.mkdir()
    (shared / runconf.shared_key("r1", runconf._key(A))).write_text(B_TEXT)  # noqa: SLF001
    cache = _lab_cache(monkeypatch, [A, A, A], tmp_path / "lab")
    run = _vtysh([OK])
    assert cache.read("r1", 5.0, run).stdout == TEXT and len(run.calls) == 1
    assert (shared / runconf.shared_key("r1", runconf._key(A))).read_text() == TEXT  # noqa: SLF001


def test_the_shared_directory_keeps_the_newest_texts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(vtysh_cache.ENV, str(tmp_path))
    shared = runconf.shared_dir()
    monkeypatch.setattr(runconf, "SHARED_KEEP", 8)
    srcs, texts = zip(*(_lo(str(i)) for i in range(9)), strict=True)
    cache = _lab_cache(monkeypatch, [s for s in srcs for _ in (0, 1)], tmp_path / "lab")
    run = _vtysh(list(texts))
    for i in range(9):
        cache.read("r1", 5.0, run)
        time.sleep(0.01)  # distinct modification times
    names = {p.name for p in shared.iterdir()}
    assert len(names) == 8 - 8 // 4  # the ninth made 9: down to 6, the newest kept
    assert runconf.shared_key("r1", runconf._key(srcs[-1])) in names  # noqa: SLF001 - the newest stays
    assert runconf.shared_key("r1", runconf._key(srcs[0])) not in names  # noqa: SLF001 - the oldest went
