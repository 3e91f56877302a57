"""ani.adapters.a3r without a lab: options, tool list, the SotError -> ErrorCode mapping, the
repository's place and removal, and the repository tools on a fake lab whose routers are
read from memory (the real-FRR side is tests/integration/test_a3r_reconcile.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import ani.device.apply as device_apply
from ani.adapters.a3r import A3RAdapter
from ani.adapters.error_map import error_result
from ani.device.model import DeviceConfig, StaticRoute
from ani.errors import ConfigError
from ani.protocol import Level
from ani.sot.errors import Conflict, DocError, PatchError, SotArgError, SotBusy, SotError, SotPathError, UnknownRevision
from ani.sot.patch import pointer

TOOLS = {"get_topology", "sot_list", "sot_read", "sot_patch", "sot_diff", "sot_discard", "sot_commit", "sot_log",
         "sot_revert", "drift", "reconcile_status", "reconcile"}


def _lab(tmp_path: Path) -> SimpleNamespace:
    return SimpleNamespace(dir=tmp_path / "lab", topology=SimpleNamespace(routers=["r1", "r2"]))


@pytest.fixture
def running(monkeypatch: pytest.MonkeyPatch) -> dict[str, DeviceConfig]:
    """The fake routers' configurations; ani.device.apply.read / apply act on them."""
    cfgs = {r: DeviceConfig(hostname=r, static_routes=[StaticRoute(prefix="192.0.2.0/24", nexthop="Null0")])
            for r in ("r1", "r2")}

    def apply_(lab, router, cfg, **kw):  # type: ignore[no-untyped-def]
        changed = cfgs[router] != cfg.canonical()
        cfgs[router] = cfg.canonical()
        return device_apply.ApplyReport(changed=changed, diff=[], seconds=0.0)

    monkeypatch.setattr(device_apply, "read", lambda lab, r, *a, **kw: cfgs[r])
    monkeypatch.setattr(device_apply, "apply", apply_)
    return cfgs


@pytest.fixture
def adapter(tmp_path: Path, running):  # type: ignore[no-untyped-def]
    (tmp_path / "lab").mkdir()
    a = A3RAdapter(_lab(tmp_path))
    a.open()
    yield a
    a.close()


def test_level_and_tools(tmp_path: Path) -> None:
    a = A3RAdapter(_lab(tmp_path))
    assert a.level is Level.A3R
    specs = {t.name: t for t in a.tools()}
    assert set(specs) == TOOLS
    assert {n for n, t in specs.items() if t.read_only} == {"get_topology", "sot_list", "sot_read", "sot_diff",
                                                           "sot_log", "drift", "reconcile_status"}
    assert specs["sot_patch"].input_schema["required"] == ["path", "patch", "base_revision"]


@pytest.mark.parametrize("options,words", [
    ({"bogus": 1}, "a3r options: bogus: unknown option (known: busy_timeout_s, keep_repo, max_tries)"),
    ({"max_tries": "2"}, "max_tries: Input should be a valid integer"),
    ({"max_tries": True}, "max_tries: Input should be a valid integer"),
    ({"max_tries": 0}, "max_tries: Input should be greater than or equal to 1"),
    ({"keep_repo": 1}, "keep_repo: Input should be a valid boolean"),
])
def test_options_checked(tmp_path: Path, options: dict, words: str) -> None:
    with pytest.raises(ConfigError, match=None) as e:
        A3RAdapter(_lab(tmp_path), options=options)
    assert words in str(e.value)


def test_options_defaults(tmp_path: Path) -> None:
    a = A3RAdapter(_lab(tmp_path), options={"max_tries": 1})
    assert (a.max_tries, a.keep_repo) == (1, False)


def test_error_mapping() -> None:
    assert error_result(Conflict("aaa", "bbb")).error.code.value == "conflict"
    assert error_result(Conflict("aaa", "bbb")).data == {"expected": "aaa", "actual": "bbb"}
    r = error_result(PatchError(1, {"op": "test"}, "/a", "not equal"))
    assert (r.error.code.value, r.data["index"], r.data["path"]) == ("invalid_intent", 1, "/a")
    assert error_result(DocError("/x", "bad")).data["pointer"] == "/x"
    assert error_result(SotPathError("no such file")).error.code.value == "not_found"
    assert error_result(SotError("unknown revision 'x'")).error.code.value == "not_found"
    assert error_result(UnknownRevision("unknown revision 'abcd'")).error.code.value == "not_found"
    r = error_result(SotArgError("invalid revision 'HEAD:x'"))
    assert (r.error.code.value, r.error.retriable) == ("invalid_arguments", False)
    r = error_result(Conflict("aaa", "bbb", paths=["devices/r1.json"]))
    assert r.data == {"expected": "aaa", "actual": "bbb", "paths": ["devices/r1.json"]} and r.error.retriable
    # a revert that cannot apply, or of a merge commit, is no conflict to retry: a retry cannot succeed
    for why in ("revert of abc does not apply cleanly: the same lines in devices/r1.json were changed later",
                "cannot revert abc: it is a merge commit (2 parents: a, b), so which side to undo is not defined"):
        r = error_result(SotError(why))
        assert (r.error.code.value, r.error.retriable) == ("invalid_arguments", False)
    assert error_result(Conflict("aaa", "bbb")).error.retriable is True
    r = error_result(SotBusy("another writer's reconcile of lab x", 5))
    assert (r.error.code.value, r.error.retriable) == ("timeout", True) and "another writer" in r.error.message
    assert error_result(SotError("nothing to commit (patch first)")).error.code.value == "invalid_arguments"


def test_repo_in_lab_dir_removed_at_close(tmp_path: Path, running) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "lab").mkdir()
    a = A3RAdapter(_lab(tmp_path))
    a.open()
    path = a.repo_path
    assert path is not None and path.parent == tmp_path / "lab" and path.name.startswith("sot-a3r-")
    assert sorted(a.repo.list()) == ["devices/r1.json", "devices/r2.json"]
    a.open()  # idempotent
    assert a.repo_path == path
    a.close()
    assert not path.exists() and list((tmp_path / "lab").iterdir()) == []
    a.close()  # idempotent
    kept = A3RAdapter(_lab(tmp_path), options={"keep_repo": True})
    kept.open()
    kept.close()
    assert kept.repo_path is not None and (kept.repo_path / ".git").is_file()  # a worktree of the lab's repository
    assert (kept.shared_path / "HEAD").is_file() and kept.shared_path.parent == tmp_path / "lab"


def test_patch_commit_reconcile_on_fake_routers(adapter: A3RAdapter, running) -> None:  # type: ignore[no-untyped-def]
    base = adapter.call("sot_list", {}).data["revision"]
    ops = [{"op": "replace", "path": pointer("static_routes", "192.0.2.0/24", "distance"), "value": 200}]
    res = adapter.call("sot_patch", {"path": "devices/r2.json", "patch": ops, "base_revision": base[:10]})
    assert res.ok and res.data["changed"] and not res.changed
    assert adapter.call("sot_list", {}).data["uncommitted"] == ["devices/r2.json"]
    assert adapter.call("sot_diff", {}).data["files"][0]["patch"] == ops
    res = adapter.call("sot_commit", {"message": "r2: distance 200"})
    assert res.ok and res.changed and res.data["reconcile"]["applied"] == ["r2"], res.text
    assert running["r2"].static_routes[0].distance == 200 and running["r1"].static_routes[0].distance == 1
    again = adapter.call("reconcile", {})
    assert again.ok and not again.changed and again.data["reconcile"]["tries"] == 0
    # the old base is stale now
    res = adapter.call("sot_patch", {"path": "devices/r2.json", "patch": ops, "base_revision": base})
    assert res.error.code.value == "conflict"
    # an out-of-band change, seen and reverted
    running["r1"] = DeviceConfig(hostname="r1")
    d = adapter.call("drift", {})
    assert list(d.data["drift"]) == ["r1"] and d.data["lines"]["r1"] == ["+ ip route 192.0.2.0/24 Null0"]
    assert adapter.call("reconcile", {}).data["reconcile"]["applied"] == ["r1"]
    assert adapter.call("drift", {}).data["drift"] == {}
    rev = adapter.call("sot_log", {"n": 1}).data["log"][0]["revision"]
    res = adapter.call("sot_revert", {"revision": rev})
    assert res.ok and res.data["reconcile"]["applied"] == ["r2"] and running["r2"].static_routes[0].distance == 1


def test_discard(adapter: A3RAdapter) -> None:
    base = adapter.call("sot_list", {}).data["revision"]
    adapter.call("sot_patch", {"path": "devices/r1.json", "base_revision": base,
                               "patch": [{"op": "remove", "path": "/static_routes"}]})
    assert adapter.call("sot_diff", {}).data["files"]
    assert adapter.call("sot_discard", {}).ok
    assert adapter.call("sot_diff", {}).data["files"] == []


def test_odd_revisions_and_names_are_tool_errors(adapter: A3RAdapter) -> None:
    head = adapter.call("sot_list", {}).data["revision"]
    for rev in ("@{-1}", "HEAD@{1}", "HEAD@{yesterday}"):  # reflog syntax is no commit's name
        for name, args in (("sot_read", {"path": "devices/r1.json", "revision": rev}), ("sot_revert", {"revision": rev})):
            res = adapter.call(name, args)
            assert (res.ok, res.error.code.value) == (False, "invalid_arguments") and "a revision names a commit" in \
                res.error.message
    for rev in ("0" * 40, "HEAD~9"):  # well-formed, no such commit
        res = adapter.call("sot_read", {"path": "devices/r1.json", "revision": rev})
        assert (res.ok, res.error.code.value) == (False, "not_found") and "unknown revision" in res.error.message
    res = adapter.call("sot_patch", {"path": "services/" + "x" * 230 + ".json", "base_revision": head,
                                     "patch": [{"op": "add", "path": "/a", "value": 1}]})
    assert not res.ok and "too long" in res.error.message
    res = adapter.call("sot_patch", {"path": "services/" + "x" * 300 + ".json", "base_revision": head,
                                     "patch": [{"op": "add", "path": "/a", "value": 1}]})
    assert res.error.code.value == "invalid_arguments" and "at most 256 characters" in res.error.message
    assert adapter.call("sot_list", {}).data == {"files": ["devices/r1.json", "devices/r2.json"], "revision": head,
                                                 "uncommitted": []}


def test_second_revert_of_a_commit_is_refused(adapter: A3RAdapter, running) -> None:  # type: ignore[no-untyped-def]
    ops = [{"op": "replace", "path": pointer("static_routes", "192.0.2.0/24", "distance"), "value": 200}]
    adapter.call("sot_patch", {"path": "devices/r1.json", "patch": ops,
                               "base_revision": adapter.call("sot_list", {}).data["revision"]})
    rev = adapter.call("sot_commit", {"message": "200"}).data["revision"]
    assert adapter.call("sot_revert", {"revision": rev}).ok
    head = adapter.call("sot_list", {}).data["revision"]
    res = adapter.call("sot_revert", {"revision": rev})
    assert (res.ok, res.error.code.value) == (False, "invalid_arguments") and "already undone" in res.error.message
    assert adapter.call("sot_list", {}).data["revision"] == head and running["r1"].static_routes[0].distance == 1


def test_a_tool_after_close_does_not_start_a_new_history(tmp_path: Path, running) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "lab").mkdir()
    a = A3RAdapter(_lab(tmp_path))
    assert a.call("sot_list", {}).ok                 # opened on first use
    base = a.repo.head()
    assert a.call("sot_patch", {"path": "devices/r1.json", "base_revision": base,
                                "patch": [{"op": "add", "path": "/ip_forwarding", "value": False}]}).ok
    assert a.call("sot_commit", {"message": "r1: no forwarding"}).ok
    a.close()
    r = a.call("sot_log", {})  # call never raises: a harness fault is an internal result + an event
    assert not r.ok and r.error.code.value == "internal" and "closed" in r.error.message
    assert [(e["tool"], e["kind"]) for e in a.trajectory.events if e["event"] == "harness_fault"] == [
        ("sot_log", "harness")]
    a.open()                                          # explicitly: a new repository
    assert len(a.call("sot_log", {}).data["log"]) == 1
    a.close()


@pytest.mark.parametrize("n", [True, "5", 2.5])
def test_tool_arguments_are_strict_json_types(adapter, n) -> None:  # type: ignore[no-untyped-def]
    r = adapter.call("sot_log", {"n": n})
    assert not r.ok and r.error.code.value == "invalid_arguments"
    assert "sot_log: n: Input should be a valid integer" in r.error.message
    assert adapter.call("sot_log", {"n": 1}).data["log"][0]["message"].startswith("init")
