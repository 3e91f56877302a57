"""ani.sot.repo: the git-backed source of truth on a real git repository (case 8, git hygiene)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import git
import pytest

from ani.device.model import DeviceConfig, StaticRoute
from ani.device.parse import parse
from ani.sot.errors import Conflict, DocError, PatchError, SotArgError, SotError, SotPathError, UnknownRevision
from ani.sot.patch import pointer
from ani.sot.repo import SotRepo

DATA = Path(__file__).parent.parent / "data" / "device"


def _devices() -> dict[str, DeviceConfig]:
    r1 = DeviceConfig(hostname="r1", static_routes=[StaticRoute(prefix="192.0.2.0/24", nexthop="198.51.100.1")],
                      bgp={"asn": 65000, "neighbors": {"198.51.100.2": {"remote_as": 65001}}})
    c1 = parse((DATA / "frr844-running-c1.txt").read_text()).model_copy(update={"hostname": "c1"})
    return {"r1": r1, "c1": c1}


@pytest.fixture
def sot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    # a machine identity that must never appear in a commit
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Machine User\n\temail = machine@example.com\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(var, raising=False)
    repo = SotRepo.init(tmp_path / "sot", _devices())
    yield repo
    repo.close()


def _snapshot(repo: SotRepo) -> tuple:
    """Every file's bytes (outside .git), HEAD, the index's content and the status."""
    files = {str(p.relative_to(repo.path)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(repo.path.rglob("*")) if p.is_file() and ".git" not in p.relative_to(repo.path).parts}
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo.path, capture_output=True, text=True).stdout
    return files, repo.head(), status, repo.repo.git.diff("--cached")


def _no_lock(repo: SotRepo) -> bool:
    return not (repo.path / ".git" / "index.lock").exists()


def test_init_layout_and_identity(sot: SotRepo) -> None:
    assert sot.list() == ["devices/c1.json", "devices/r1.json"]
    assert (sot.path / "services").is_dir() and (sot.path / "README.md").is_file()
    log = sot.log()
    assert len(log) == 1 and log[0]["author"] == log[0]["committer"] == "ani-sot <sot@ani.invalid>"
    assert sot.desired("c1") == _devices()["c1"]
    assert sot.desired("r1") == _devices()["r1"].canonical()
    assert sot.diff()["files"] == [] and _no_lock(sot)


def test_patch_diff_commit_log_revert(sot: SotRepo) -> None:
    base = sot.head()
    path = pointer("static_routes", "192.0.2.0/24", "distance")
    out = sot.patch("devices/r1.json", [{"op": "replace", "path": path, "value": 200}], base)
    assert out["changed"] and sot.head() == base  # working tree only
    assert sot.desired("r1").static_routes[0].distance == 1  # HEAD unchanged
    d = sot.diff()
    assert [f["path"] for f in d["files"]] == ["devices/r1.json"]
    assert d["files"][0]["patch"] == [{"op": "replace", "path": path, "value": 200}]
    assert '-      "distance": 1,' in d["text"] and '+      "distance": 200,' in d["text"]
    rev = sot.commit("r1: distance 200 for 192.0.2.0/24")
    assert sot.head() == rev and sot.diff()["files"] == []
    assert sot.desired("r1").static_routes[0].distance == 200
    entry = sot.log(1)[0]
    assert entry["revision"] == rev and entry["files"] == ["devices/r1.json"]
    assert entry["author"] == entry["committer"] == "ani-sot <sot@ani.invalid>"
    back = sot.revert(rev)
    assert sot.desired("r1").static_routes[0].distance == 1 and len(sot.log()) == 3
    assert sot.log(1)[0]["revision"] == back and sot.log(1)[0]["committer"] == "ani-sot <sot@ani.invalid>"
    assert sot.read("devices/r1.json", rev)["static_routes"]["192.0.2.0/24"]["distance"] == 200
    assert _no_lock(sot) and sot.diff()["files"] == []


def test_case8_atomic_patch(sot: SotRepo) -> None:
    before = _snapshot(sot)
    with pytest.raises(PatchError) as e:
        sot.patch("devices/r1.json", [{"op": "add", "path": "/b", "value": 2},
                                      {"op": "test", "path": "/a", "value": 99}], sot.head())
    assert e.value.index == 1
    assert _snapshot(sot) == before and len(sot.log()) == 1 and _no_lock(sot)


@pytest.mark.parametrize(("ops", "err"), [
    ([{"op": "add", "path": "/bgp/neighbors/198.51.100.2/timers/keepalive", "value": 3}], PatchError),  # case 6
    ([{"op": "replace", "path": "/static_routes/192.0.2.0/24/next_hop", "value": "198.51.100.9"}], PatchError),  # case 7
    ([{"op": "add", "path": "/bgp/neighbors/198.51.100.2/remote_as", "value": "bogus"}], DocError),
    ([{"op": "add", "path": "/colour", "value": "red"}], DocError),
])
def test_failed_patches_change_nothing(sot: SotRepo, ops: list, err: type) -> None:
    before = _snapshot(sot)
    with pytest.raises(err):
        sot.patch("devices/r1.json", ops, sot.head())
    assert _snapshot(sot) == before and _no_lock(sot)


def test_device_files_are_written_canonical(sot: SotRepo) -> None:
    before = _snapshot(sot)
    out = sot.patch("devices/r1.json", [{"op": "add", "path": "/bgp/neighbors/198.51.100.2/shutdown", "value": False}],
                    sot.head())
    assert not out["changed"] and _snapshot(sot) == before  # false is the default: nothing to store
    with pytest.raises(DocError) as e:
        sot.patch("devices/r1.json", [{"op": "replace", "path": "/bgp/neighbors/198.51.100.2/remote_as",
                                       "value": "65001"}], sot.head())
    assert e.value.pointer == "/bgp/neighbors/198.51.100.2/remote_as" and _snapshot(sot) == before


def test_schema_error_names_pointer(sot: SotRepo) -> None:
    with pytest.raises(DocError) as e:
        sot.patch("devices/r1.json", [{"op": "add", "path": "/bgp/neighbors/198.51.100.2/timers",
                                       "value": {"connect": 0}}], sot.head())
    assert e.value.pointer == "/bgp/neighbors/198.51.100.2/timers/connect"


def test_case7_escaped_path_works(sot: SotRepo) -> None:
    sot.patch("devices/r1.json", [{"op": "replace", "path": "/static_routes/192.0.2.0~124/next_hop",
                                   "value": "198.51.100.9"}], sot.head())
    assert sot.read("devices/r1.json")["static_routes"]["192.0.2.0/24"]["next_hop"] == "198.51.100.9"


def test_stale_base_revision_conflict(sot: SotRepo) -> None:
    old = sot.head()
    sot.patch("devices/r1.json", [{"op": "add", "path": "/bgp/router_id", "value": "10.0.0.1"}], old)
    new = sot.commit("router id")
    before = _snapshot(sot)
    with pytest.raises(Conflict) as e:
        sot.patch("devices/r1.json", [{"op": "remove", "path": "/bgp/router_id"}], old)
    assert e.value.expected == old and e.value.actual == new
    assert old in str(e.value) and new in str(e.value)
    assert _snapshot(sot) == before
    sot.patch("devices/r1.json", [{"op": "remove", "path": "/bgp/router_id"}], new[:12])  # abbreviated works


def test_failed_commit_leaves_no_lock_and_no_commit(sot: SotRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    sot.patch("devices/r1.json", [{"op": "add", "path": "/bgp/router_id", "value": "10.0.0.1"}], sot.head())
    before = _snapshot(sot)

    def boom(*a: object, **k: object) -> None:
        (sot.path / ".git" / "index.lock").write_text("")  # as if git died holding the lock
        raise RuntimeError("killed mid-commit")

    monkeypatch.setattr(SotRepo, "_write_commit", boom)
    with pytest.raises(RuntimeError):
        sot.commit("will fail")
    monkeypatch.undo()
    assert _no_lock(sot) and _snapshot(sot) == before  # the edit is still there, unstaged, no commit
    assert sot.commit("now") != before[1]


def test_nothing_to_commit_and_bad_inputs(sot: SotRepo) -> None:
    with pytest.raises(SotError, match="nothing to commit"):
        sot.commit("empty")
    with pytest.raises(SotError):
        sot.commit("  ")
    for bad in ("../x.json", "/etc/passwd", "devices/r1.txt", "devices/sub/r1.json", "r1.json"):
        with pytest.raises(SotPathError):
            sot.read(bad)
    with pytest.raises(SotPathError):
        sot.patch("devices/r9.json", [], sot.head())
    with pytest.raises(SotError):
        sot.revert("0" * 40)
    with pytest.raises(SotError):
        sot.revert(sot.head())  # the initial commit
    assert _no_lock(sot)


def test_revert_refused_on_dirty_tree_and_on_conflict(sot: SotRepo) -> None:
    p = pointer("static_routes", "192.0.2.0/24", "distance")
    sot.patch("devices/r1.json", [{"op": "replace", "path": p, "value": 200}], sot.head())
    first = sot.commit("200")
    sot.patch("devices/r1.json", [{"op": "replace", "path": p, "value": 50}], sot.head())
    with pytest.raises(SotError, match="uncommitted"):
        sot.revert(first)
    sot.commit("50")
    before = _snapshot(sot)
    with pytest.raises(SotError, match="cleanly"):
        sot.revert(first)  # the same line changed since
    assert _snapshot(sot) == before and _no_lock(sot)
    assert not (sot.path / ".git" / "REVERT_HEAD").exists()


def test_services_files_and_discard(sot: SotRepo) -> None:
    sot.patch("services/tenant-a.json", [{"op": "add", "path": "/type", "value": "tenant_site"}], sot.head())
    assert "services/tenant-a.json" in sot.list()
    assert sot.diff()["files"][0]["status"] == "added"
    sot.discard()
    assert "services/tenant-a.json" not in sot.list() and sot.diff()["files"] == []


def test_init_refuses_non_empty(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "f").write_text("")
    with pytest.raises(SotError):
        SotRepo.init(tmp_path / "x", {})


def test_identity_ignores_git_environment(sot: SotRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(var, "Env User")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(var, "env@example.com")
    sot.patch("devices/r1.json", [{"op": "add", "path": "/bgp/router_id", "value": "10.0.0.1"}], sot.head())
    rev = sot.commit("with env identity set")
    sot.revert(rev)
    for entry in sot.log(2):
        assert entry["author"] == entry["committer"] == "ani-sot <sot@ani.invalid>"


def test_configurable_identity(tmp_path: Path) -> None:
    with SotRepo.init(tmp_path / "s", {"r1": DeviceConfig(hostname="r1")}, author=("bot", "bot@lab.invalid")) as s:
        assert s.log(1)[0]["committer"] == "bot <bot@lab.invalid>"


def test_failed_revert_mid_operation_restores_everything(sot: SotRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    sot.patch("devices/r1.json", [{"op": "add", "path": "/bgp/router_id", "value": "10.0.0.1"}], sot.head())
    rev = sot.commit("router id")
    before = _snapshot(sot)

    def boom(*a: object, **k: object) -> None:
        (sot.path / ".git" / "index.lock").write_text("")
        raise RuntimeError("killed mid-revert")

    monkeypatch.setattr(SotRepo, "_write_commit", boom)
    with pytest.raises(RuntimeError):
        sot.revert(rev)
    monkeypatch.undo()
    assert _snapshot(sot) == before and _no_lock(sot)
    assert not (sot.path / ".git" / "REVERT_HEAD").exists()
    sot.revert(rev)
    assert sot.desired("r1").bgp.router_id is None


def test_delete_a_service_file(sot: SotRepo) -> None:
    base = sot.head()
    sot.patch("services/s1.json", [{"op": "add", "path": "/type", "value": "static-route"}], base)
    sot.commit("add s1")
    head = sot.head()
    with pytest.raises(Conflict):
        sot.delete("services/s1.json", base)                  # HEAD moved since base
    with pytest.raises(SotError, match="only service files"):
        sot.delete("devices/r1.json", head)
    with pytest.raises(SotPathError, match="no such file"):
        sot.delete("services/nope.json", head)
    before = _snapshot(sot)

    def refuse() -> None:
        assert not (sot.path / "services/s1.json").exists()   # the check sees the tree without it
        raise DocError("", "another service needs s1")

    with pytest.raises(DocError, match="needs s1"):
        sot.delete("services/s1.json", head, check=refuse)
    assert _snapshot(sot) == before                            # put back byte-identical
    assert sot.delete("services/s1.json", head[:7]) == {"path": "services/s1.json", "base_revision": head, "changed": True}
    assert sot.list() == ["devices/c1.json", "devices/r1.json"]
    assert [f["status"] for f in sot.diff()["files"]] == ["deleted"]


@pytest.mark.parametrize("revision", [
    "@{-1}", "HEAD@{1}", "HEAD@{yesterday}",  # reflog syntax: GitPython raised IndexError / NotImplementedError
    "HEAD:../../etc/passwd", "HEAD:devices/r1.json", ":/init",  # a path, a message search (issue 23: internal)
    "--all", "-h", "HEAD..HEAD~1", "HEAD^{tree}", "HEAD^!", "main", "", "a\x00b", "0" * 41, "x" * 100_000,
])
def test_a_revision_names_a_commit_never_a_path(sot: SotRepo, revision: str) -> None:
    before = _snapshot(sot)
    for call in (lambda: sot.read("devices/r1.json", revision), lambda: sot.revert(revision)):
        with pytest.raises(SotArgError) as e:
            call()
        assert "a revision names a commit" in str(e.value) and len(str(e.value)) < 400
    assert _snapshot(sot) == before and _no_lock(sot)


def test_revisions_of_the_documented_forms(sot: SotRepo) -> None:
    p = pointer("static_routes", "192.0.2.0/24", "distance")
    first = sot.head()
    sot.patch("devices/r1.json", [{"op": "replace", "path": p, "value": 200}], first)
    second = sot.commit("200")
    for rev in ("HEAD~1", "HEAD^", "HEAD^1", first, first[:7].upper(), second[:7] + "~1", "HEAD~0^"):
        assert sot.commit_of(rev).hexsha == first, rev
    assert sot.commit_of("HEAD").hexsha == sot.commit_of("HEAD~0").hexsha == second
    for rev in ("0" * 40, "HEAD~5", "abcd"):  # well-formed, no such commit: not_found, not invalid
        with pytest.raises(UnknownRevision, match="unknown revision"):
            sot.read("devices/r1.json", rev)


def test_too_long_file_name_is_a_path_error(sot: SotRepo) -> None:
    before = _snapshot(sot)
    for path in ("devices/" + "r" * 300 + ".json", "services/" + "s" * 300 + ".json"):
        with pytest.raises(SotPathError, match="too long"):
            sot.read(path)
    with pytest.raises(SotPathError, match="too long"):
        sot.patch("services/" + "s" * 300 + ".json", [{"op": "add", "path": "/type", "value": "x"}], sot.head())
    assert _snapshot(sot) == before


def test_reverting_the_same_commit_twice_is_refused(sot: SotRepo) -> None:
    p = pointer("static_routes", "192.0.2.0/24", "distance")
    sot.patch("devices/r1.json", [{"op": "replace", "path": p, "value": 200}], sot.head())
    first = sot.commit("200")
    sot.revert(first)
    before = _snapshot(sot)
    with pytest.raises(SotError, match="nothing to revert"):
        sot.revert(first)  # already undone: no empty commit
    assert _snapshot(sot) == before and _no_lock(sot) and len(sot.log()) == 3


@pytest.mark.parametrize("name", ["a\x00b", "a\nb", "a\tb", "a\x7fb"])
def test_control_characters_in_a_file_name_are_a_path_error(sot: SotRepo, name: str) -> None:
    # a NUL made os.replace raise ValueError; a newline or tab made a file git shows quoted
    before = _snapshot(sot)
    with pytest.raises(SotPathError, match="invalid file name"):
        sot.patch(f"services/{name}.json", [{"op": "add", "path": "/type", "value": "x"}], sot.head())
    with pytest.raises(SotPathError, match="invalid file name"):
        sot.read(f"services/{name}.json")
    assert _snapshot(sot) == before
