"""Several writers on one source of truth (issue 11, section 2; issue 23, section 5), on real git
repositories: each writer has its own worktree, so one writer's commit holds only its own
changes; a commit based on a HEAD another writer moved lands, rebased, when the other's commits
changed other files (each commit's git diff holds only its own paths, also for threads committing
at the same moment), and is refused as a conflict naming both revisions and the overlapping paths
(its changes kept) when they changed the same file; a clean writer follows HEAD; the last writer to leave removes the shared repository; a
second process is a writer like any other. Also the reverts a retry cannot fix (a merge commit,
a revert that does not apply), which must not look like a retriable conflict."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import git
import pytest

from ani.device.model import DeviceConfig, StaticRoute
from ani.sot.errors import Conflict, SotBusy, SotError
from ani.sot.patch import pointer
from ani.sot.repo import SotRepo

ROOT = Path(__file__).resolve().parents[2]


def _devices() -> dict[str, DeviceConfig]:
    return {r: DeviceConfig(hostname=r, static_routes=[StaticRoute(prefix="192.0.2.0/24", nexthop="Null0")])
            for r in ("r1", "r2")}


def _distance(value: int) -> list[dict]:
    return [{"op": "replace", "path": pointer("static_routes", "192.0.2.0/24", "distance"), "value": value}]


def _files_of(repo: SotRepo, rev: str) -> list[str]:
    return sorted(repo.repo.git.show("--name-only", "--format=", rev).split())


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    return tmp_path / "lab" / "sot-a3r.git"


@pytest.fixture
def two(shared: Path):  # type: ignore[no-untyped-def]
    made: list[int] = []

    def initial() -> dict[str, DeviceConfig]:
        made.append(1)
        return _devices()

    w1 = SotRepo.writer(shared, shared.parent / "sot-a3r-w1", initial)
    w2 = SotRepo.writer(shared, shared.parent / "sot-a3r-w2", initial)
    assert made == [1]  # the second writer joined the repository the first made
    yield w1, w2
    w1.close()
    w2.close()


def _diff_paths(repo: SotRepo, rev: str) -> list[str]:
    """The paths of ``rev``'s diff against its first parent, as git reports them."""
    return sorted(repo.repo.git.diff_tree("--no-commit-id", "--name-only", "-r", f"{rev}^", rev).split())


def test_each_writers_commit_holds_only_its_own_changes(two) -> None:  # type: ignore[no-untyped-def]
    w1, w2 = two
    t0 = w1.head()
    assert w2.head() == t0 and w1.path != w2.path
    w1.patch("devices/r1.json", _distance(200), t0)
    w2.patch("devices/r2.json", _distance(50), t0)
    assert [f["path"] for f in w1.diff()["files"]] == ["devices/r1.json"]  # w2's patch is not seen
    assert [f["path"] for f in w2.diff()["files"]] == ["devices/r2.json"]
    t1 = w1.commit("w1: r1 distance 200")
    assert _files_of(w1, t1) == ["devices/r1.json"] and w1.log(1)[0]["message"] == "w1: r1 distance 200"
    assert w1.head() == w2.head() == t1
    # w2's changes are based on t0 and HEAD moved, but w1 changed another file: rebased, it lands
    assert [f["path"] for f in w2.diff()["files"]] == ["devices/r2.json"] and w2.base() == t1
    t2 = w2.commit("w2: r2 distance 50")
    assert w2.commit_of(t2).parents[0].hexsha == t1 and _diff_paths(w2, t2) == ["devices/r2.json"]
    assert w2.desired("r1").static_routes[0].distance == 200 and w2.desired("r2").static_routes[0].distance == 50
    # w1 had nothing uncommitted: it follows HEAD by itself
    assert w1.read("devices/r2.json")["static_routes"]["192.0.2.0/24"]["distance"] == 50
    assert w1.base() == t2 and [x["message"] for x in w1.log(3)] == [
        "w2: r2 distance 50", "w1: r1 distance 200", "init: desired state from the brownfield"]


def test_overlapping_changes_are_refused_naming_both_revisions_and_the_paths(two) -> None:  # type: ignore[no-untyped-def]
    w1, w2 = two
    t0 = w1.head()
    w1.patch("devices/r1.json", _distance(200), t0)
    w2.patch("devices/r1.json", [{"op": "add", "path": "/ip_forwarding", "value": False}], t0)  # same file
    w2.patch("devices/r2.json", _distance(50), t0)
    t1 = w1.commit("w1: r1 distance 200")
    with pytest.raises(Conflict) as e:
        w2.commit("w2: r1 and r2")
    assert (e.value.expected, e.value.actual, e.value.paths) == (t0, t1, ["devices/r1.json"])
    msg = str(e.value)
    assert t0 in msg and t1 in msg and "devices/r1.json" in msg and "w1: r1 distance 200" in msg
    assert "devices/r2.json" not in msg and "sot_discard" in msg
    assert w1.head() == t1 and w2.base() == t0  # nothing committed, nothing rebased
    assert [f["path"] for f in w2.diff()["files"]] == ["devices/r1.json", "devices/r2.json"]  # kept
    with pytest.raises(Conflict) as e:  # a patch on the new HEAD too: the tree's changes overlap
        w2.patch("devices/r2.json", _distance(60), t1)
    assert e.value.paths == ["devices/r1.json"]
    w2.discard()  # back to HEAD (t1), then redo
    assert w2.desired("r1").static_routes[0].distance == 200 and w2.diff()["files"] == []
    w2.patch("devices/r2.json", _distance(50), t1)
    t2 = w2.commit("w2: r2 distance 50")
    assert _diff_paths(w2, t2) == ["devices/r2.json"] and w2.commit_of(t2).parents[0].hexsha == t1


def test_a_patch_on_an_older_base_is_refused_only_when_its_file_changed_since(two) -> None:  # type: ignore[no-untyped-def]
    w1, w2 = two
    t0 = w1.head()
    w1.patch("devices/r1.json", _distance(200), t0)
    t1 = w1.commit("w1: r1")
    res = w2.patch("devices/r2.json", _distance(50), t0)  # r2 unchanged since t0: its read still holds
    assert res == {"path": "devices/r2.json", "base_revision": t1, "changed": True}
    with pytest.raises(Conflict) as e:  # r1 changed since t0: the agent's read of it is stale
        w2.patch("devices/r1.json", _distance(7), t0)
    assert (e.value.expected, e.value.actual, e.value.paths) == (t0, t1, ["devices/r1.json"])
    assert [f["path"] for f in w2.diff()["files"]] == ["devices/r2.json"]


def test_two_threads_committing_to_different_routers_both_land(tmp_path: Path) -> None:
    """The issue's probe: two writers change different routers' files at the same moment."""
    shared = tmp_path / "lab" / "sot.git"
    routers = [f"r{i}" for i in range(1, 5)]

    def initial() -> dict[str, DeviceConfig]:
        return {r: DeviceConfig(hostname=r, static_routes=[StaticRoute(prefix="192.0.2.0/24", nexthop="Null0")])
                for r in routers}

    writers = [SotRepo.writer(shared, tmp_path / "lab" / f"w{i}", initial) for i in range(len(routers))]
    t0 = writers[0].head()
    for w, r in zip(writers, routers):
        w.patch(f"devices/{r}.json", _distance(100 + int(r[1:])), t0)
    barrier = threading.Barrier(len(writers))
    results: dict[str, str | BaseException] = {}

    def go(w: SotRepo, r: str) -> None:
        barrier.wait()
        try:
            results[r] = w.commit(f"{r}: distance")
        except BaseException as exc:  # noqa: BLE001 (reported below)
            results[r] = exc

    threads = [threading.Thread(target=go, args=(w, r)) for w, r in zip(writers, routers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(isinstance(v, str) for v in results.values()), results
    g = writers[0].repo.git
    history = g.rev_list("--first-parent", f"{t0}..{writers[0].head()}").split()
    assert sorted(history) == sorted(results.values())  # every commit landed, one after the other
    for r, rev in results.items():  # each commit's diff (git's) holds only its own router's file
        assert g.diff_tree("--no-commit-id", "--name-only", "-r", f"{rev}^", rev).split() == [f"devices/{r}.json"]
        assert g.log("-1", "--format=%s", rev) == f"{r}: distance"
    tip = writers[0].head()
    for r in routers:
        assert writers[0].commit_of(tip).tree[f"devices/{r}.json"].data_stream.read()
        assert writers[0].desired(r).static_routes[0].distance == 100 + int(r[1:])
    for w in writers:
        assert w.diff()["files"] == [] and w.base() == tip
        w.close()


def test_two_threads_changing_the_same_file_one_is_refused_naming_it(tmp_path: Path) -> None:
    shared = tmp_path / "lab" / "sot.git"
    w1, w2 = (SotRepo.writer(shared, tmp_path / "lab" / n, _devices) for n in ("a", "b"))
    t0 = w1.head()
    w1.patch("devices/r1.json", _distance(200), t0)
    w2.patch("devices/r1.json", [{"op": "add", "path": "/ip_forwarding", "value": False}], t0)
    barrier = threading.Barrier(2)
    results: dict[str, str | BaseException] = {}

    def go(name: str, w: SotRepo) -> None:
        barrier.wait()
        try:
            results[name] = w.commit(name)
        except BaseException as exc:  # noqa: BLE001
            results[name] = exc

    threads = [threading.Thread(target=go, args=a) for a in (("a", w1), ("b", w2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    landed = [n for n, v in results.items() if isinstance(v, str)]
    refused = [v for v in results.values() if isinstance(v, Conflict)]
    assert len(landed) == 1 and len(refused) == 1, results
    assert refused[0].paths == ["devices/r1.json"] and refused[0].actual == results[landed[0]]
    assert refused[0].expected == t0 and "devices/r1.json" in str(refused[0])
    w1.close()
    w2.close()


def test_a_writer_that_moves_head_during_a_commit_is_rebased_onto_it(two, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    w1, w2 = two
    t0 = w1.head()
    w1.patch("devices/r1.json", _distance(200), t0)
    w2.patch("devices/r2.json", _distance(50), t0)
    real = SotRepo._write_commit
    moved: list[str] = []

    def racing(self: SotRepo, message: str, parent: str | None) -> str:
        obj = real(self, message, parent)
        if self is w1 and not moved:  # w2 commits between w1's commit object and its ref update
            moved.append(w2.commit("w2 first"))
        return obj

    monkeypatch.setattr(SotRepo, "_write_commit", racing)
    mine = w1.commit("w1 second")  # the compare-and-swap failed once; rebased onto w2's commit
    assert w1.commit_of(mine).parents[0].hexsha == moved[0] and w1.head() == mine
    assert _diff_paths(w1, mine) == ["devices/r1.json"] and _diff_paths(w1, moved[0]) == ["devices/r2.json"]
    assert w1.diff()["files"] == [] and not w1.repo.git.diff("--cached")


def test_a_race_on_the_same_file_during_a_commit_is_a_conflict(two, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    w1, w2 = two
    t0 = w1.head()
    w1.patch("devices/r1.json", _distance(200), t0)
    w2.patch("devices/r1.json", [{"op": "add", "path": "/ip_forwarding", "value": False}], t0)
    real = SotRepo._write_commit
    moved: list[str] = []

    def racing(self: SotRepo, message: str, parent: str | None) -> str:
        obj = real(self, message, parent)
        if self is w1 and not moved:
            moved.append(w2.commit("w2 first"))
        return obj

    monkeypatch.setattr(SotRepo, "_write_commit", racing)
    with pytest.raises(Conflict) as e:
        w1.commit("w1 second")
    assert (e.value.expected, e.value.actual, e.value.paths) == (t0, moved[0], ["devices/r1.json"])
    assert w1.head() == moved[0] and [f["path"] for f in w1.diff()["files"]] == ["devices/r1.json"]
    assert not w1.repo.git.diff("--cached")  # nothing lost, nothing staged


def test_a_rebased_commit_is_validated_again_and_refused_by_check(two) -> None:  # type: ignore[no-untyped-def]
    w1, w2 = two
    t0 = w1.head()
    w1.patch("devices/r1.json", _distance(200), t0)
    t1 = w1.commit("w1")
    w2.patch("devices/r2.json", _distance(50), t0)
    seen: list[int] = []

    def check() -> None:  # sees the combined tree: w1's r1 and w2's r2
        seen.append(w2.read("devices/r1.json")["static_routes"]["192.0.2.0/24"]["distance"])
        raise SotError("refused by check")

    with pytest.raises(SotError, match="refused by check"):
        w2.commit("w2", check=check)
    assert seen == [200] and w2.head() == t1 and [f["path"] for f in w2.diff()["files"]] == ["devices/r2.json"]


def test_the_last_writer_to_leave_removes_the_repository(shared: Path) -> None:
    w1 = SotRepo.writer(shared, shared.parent / "a", _devices)
    w2 = SotRepo.writer(shared, shared.parent / "b", _devices)
    w1.leave()
    assert not w1.path.exists() and shared.is_dir() and w2.head()
    w2.leave()
    assert not w2.path.exists() and not shared.exists() and list(shared.parent.iterdir()) == []
    kept = SotRepo.writer(shared, shared.parent / "c", _devices)  # a new repository
    assert len(kept.log()) == 1
    kept.leave(keep=True)
    assert (kept.path / ".git").is_file() and (shared / "HEAD").is_file()


def test_exclusive_is_shared_by_every_writer(two) -> None:  # type: ignore[no-untyped-def]
    w1, w2 = two
    with w1.exclusive(1, "a reconcile"):
        with pytest.raises(SotBusy, match="waiting for another writer's reconcile"):
            with w2.exclusive(0.05, "another writer's reconcile"):
                pass
    with w2.exclusive(0, "x"):
        pass


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from ani.sot.patch import pointer
    from ani.sot.repo import SotRepo
    shared, path, base = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    w = SotRepo.writer(shared, path, lambda: {})
    ops = [{"op": "replace", "path": pointer("static_routes", "192.0.2.0/24", "distance"), "value": 7}]
    w.patch("devices/r2.json", ops, base)
    print(w.commit("from another process"))
    w.leave()
""")


def test_a_writer_in_another_process(two, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    w1, _ = two
    t0 = w1.head()
    w1.patch("devices/r1.json", _distance(200), t0)
    out = subprocess.run([sys.executable, "-c", WRITER, str(w1.common_dir), str(tmp_path / "lab" / "sot-a3r-p"), t0],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    theirs = out.stdout.strip()
    assert w1.head() == theirs and _files_of(w1, theirs) == ["devices/r2.json"]
    mine = w1.commit("mine")  # another file: rebased onto the other process's commit
    assert w1.commit_of(mine).parents[0].hexsha == theirs and _diff_paths(w1, mine) == ["devices/r1.json"]
    assert not (tmp_path / "lab" / "sot-a3r-p").exists()  # it left; the repository stays for w1 and w2


def test_reverting_a_merge_commit_is_refused_naming_its_parents(two) -> None:  # type: ignore[no-untyped-def]
    w1, w2 = two
    t0 = w1.head()
    w1.patch("devices/r1.json", _distance(200), t0)
    a = w1.commit("a")
    # a merge commit of a and a side commit on t0, made out of band (as a person merging a branch)
    g = git.Git()
    side_tree = w1.commit_of(t0).tree.hexsha
    side = g.execute(["git", "--git-dir", str(w1.common_dir), "commit-tree", side_tree, "-p", t0, "-m", "side"],
                     env={"GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x",
                          "GIT_COMMITTER_EMAIL": "x@x"}).strip()
    merge = g.execute(["git", "--git-dir", str(w1.common_dir), "commit-tree", w1.commit_of(a).tree.hexsha,
                       "-p", a, "-p", side, "-m", "merge side"],
                      env={"GIT_AUTHOR_NAME": "x", "GIT_AUTHOR_EMAIL": "x@x", "GIT_COMMITTER_NAME": "x",
                           "GIT_COMMITTER_EMAIL": "x@x"}).strip()
    g.execute(["git", "--git-dir", str(w1.common_dir), "update-ref", "refs/heads/main", merge, a])
    with pytest.raises(SotError) as e:
        w2.revert(merge[:10])
    assert not isinstance(e.value, Conflict)
    msg = str(e.value)
    assert "merge commit (2 parents" in msg and a[:12] in msg and side[:12] in msg and "error:" not in msg
    assert w2.head() == merge and w2.diff()["files"] == []  # nothing changed


def test_a_revert_that_does_not_apply_names_the_later_commit_not_gits_output(two) -> None:  # type: ignore[no-untyped-def]
    w1, _ = two
    first = (w1.patch("devices/r1.json", _distance(200), w1.head()), w1.commit("200"))[1]
    later = (w1.patch("devices/r1.json", _distance(50), w1.head()), w1.commit("50 now"))[1]
    with pytest.raises(SotError) as e:
        w1.revert(first)
    msg = str(e.value)
    assert not isinstance(e.value, Conflict)
    assert "devices/r1.json" in msg and later[:7] in msg and "50 now" in msg and "CONFLICT" not in msg
    assert w1.head() == later and w1.diff()["files"] == [] and not (Path(w1.repo.git_dir) / "REVERT_HEAD").exists()
