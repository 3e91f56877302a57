"""Bounds of the source of truth (issue 23, section 1): an agent's own bad input is answered with a
stable error code (never ``internal``, which the runner turns into ``infra_error``), quotes no
file's contents and no long value whole, and changes nothing; what one call can create is
bounded (the JSON Patch of 20 ``copy`` operations that made a 199 MB file and 1.3 GB of harness
memory, a 40 MB file). On real git repositories; the A3-R tools through a fake lab whose routers
are read from memory (as tests/unit/test_a3r_adapter.py)."""

from __future__ import annotations

import copy
import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import ani.device.apply as device_apply
from ani.testing import FakeLab
from ani.adapters.a3r import A3RAdapter
from ani.device.model import DeviceConfig, StaticRoute
from ani.sot.bounds import MAX_FILE_BYTES, MAX_MESSAGE_BYTES, MAX_OPS, check_message, check_revision
from ani.sot.errors import DocError, PatchError, SotArgError
from ani.sot.patch import apply_patch, json_size
from ani.sot.repo import SotRepo

PASSWD_LINE = "root:x:0:0:"  # what a read of /etc/passwd would leak


def _doubling(n: int = 20) -> list[dict]:
    """The issue's probe: a small patch whose every ``copy`` doubles the document."""
    return [{"op": "add", "path": "/seed", "value": "x" * 40}] + [
        {"op": "copy", "from": "", "path": f"/c{i}"} for i in range(n)]


def test_the_doubling_patch_is_refused_at_the_operation_that_crosses_the_bound() -> None:
    with pytest.raises(PatchError) as e:
        apply_patch({}, _doubling(), max_bytes=4096)
    # {"seed": 40 x}: 51 characters; each copy a little more than doubles it: the 7th (index 7) passes 4096
    assert e.value.index == 7 and "over the bound of 4096" in e.value.message
    assert e.value.op == {"op": "copy", "from": "", "path": "/c6"}
    assert json_size(apply_patch({}, _doubling(6), max_bytes=4096)) <= 4096  # one fewer fits


def test_the_doubling_patch_at_full_size_stays_within_memory() -> None:
    """At the real bound (1 MiB) the probe's 20 copies are refused in bounded memory (it took
    1.3 GB before): a few times the bound, not 2^20 times the seed."""
    tracemalloc.start()
    try:
        with pytest.raises(PatchError) as e:
            apply_patch({}, _doubling())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert e.value.index is not None and e.value.index < 20 and f"bound of {MAX_FILE_BYTES}" in e.value.message
    assert peak < 40 * MAX_FILE_BYTES, peak


def test_a_value_larger_than_the_bound_is_refused_before_it_is_copied() -> None:
    big = "y" * (MAX_FILE_BYTES + 1)
    with pytest.raises(PatchError) as e:
        apply_patch({}, [{"op": "add", "path": "/big", "value": big}])
    assert e.value.index == 0 and "at least" in e.value.message and big[:100] not in str(e.value)
    assert e.value.op == {"op": "add", "path": "/big"}  # never the value


def test_more_operations_than_the_bound_are_refused() -> None:
    ops = [{"op": "test", "path": "", "value": {}}] * (MAX_OPS + 1)
    with pytest.raises(PatchError, match=f"at most {MAX_OPS}"):
        apply_patch({}, ops)
    assert apply_patch({}, ops[:MAX_OPS]) == {}


def test_a_removal_makes_room_again() -> None:
    """The bound is on the document, not on what the patch moved through it."""
    half = "z" * 3000
    ops = [{"op": "add", "path": "/a", "value": half}, {"op": "remove", "path": "/a"}] * 5
    assert apply_patch({}, ops, max_bytes=4096) == {}


def test_messages_quote_no_long_value() -> None:
    long_path = "/" + "k" * 100_000
    for ops in ([{"op": "remove", "path": long_path}], [{"op": "test", "path": "", "value": "v" * 100_000}],
                [{"op": "copy", "from": long_path, "path": "/x"}], [{"op": "o" * 100_000, "path": "/x"}]):
        with pytest.raises(PatchError) as e:
            apply_patch({"a": "w" * 100_000}, ops)
        assert len(str(e.value)) < 1500 and len(json.dumps(e.value.op)) < 600


@pytest.fixture
def sot(tmp_path: Path):  # type: ignore[no-untyped-def]
    repo = SotRepo.init(tmp_path / "sot", {"r1": DeviceConfig(hostname="r1")})
    yield repo
    repo.close()


def test_a_whole_file_over_the_bound_is_refused(sot: SotRepo) -> None:
    """Compact JSON within the bound whose file (2-space indent, one element a line) is not:
    refused before anything is written; the 40 MB file of the probe cannot be made either."""
    ints = [1] * 200_000  # 400 kB compact, about 1.4 MB as written
    with pytest.raises(DocError) as e:
        sot.patch("services/big.json", [{"op": "add", "path": "/a", "value": ints}], sot.head())
    assert f"over the bound of {MAX_FILE_BYTES}" in str(e.value)
    with pytest.raises(PatchError):
        sot.patch("services/big.json", [{"op": "add", "path": "/a", "value": "q" * 40_000_000}], sot.head())
    assert not (sot.path / "services" / "big.json").exists() and sot.diff()["files"] == []
    sot.patch("services/ok.json", [{"op": "add", "path": "/a", "value": ints[:50_000]}], sot.head())
    assert (sot.path / "services" / "ok.json").stat().st_size < MAX_FILE_BYTES


@pytest.mark.parametrize("message,why", [
    ("a\x00b", "control character (U+0000"), ("ok\x1b[31mred", "control character (U+001B"),
    ("x" * (10 * 1024 * 1024), "bytes, at most"), ("é" * (MAX_MESSAGE_BYTES // 2 + 1), "bytes, at most"),
    ("bad \ud800", "lone surrogate"), (" \n\t", "needs a message"),
])
def test_bad_commit_messages_are_argument_errors_and_commit_nothing(sot: SotRepo, message: str, why: str) -> None:
    head = sot.head()
    sot.patch("devices/r1.json", [{"op": "add", "path": "/ip_forwarding", "value": False}], head)
    with pytest.raises(SotArgError, match=re.escape(why)) as e:
        sot.commit(message)
    assert len(str(e.value)) < 300 and sot.head() == head and [f["path"] for f in sot.diff()["files"]] == [
        "devices/r1.json"]
    rev = sot.commit("r1: no forwarding\n\n\tbody line")  # newline and tab are text
    assert sot.log(1)[0]["message"] == "r1: no forwarding\n\n\tbody line" and rev == sot.head()


def test_the_checks_themselves() -> None:
    assert check_revision("HEAD~2") == "HEAD~2" and check_message("m") == "m"
    for bad in (None, 5, "HEAD:x", "../x", "-n", "a" * 65):
        with pytest.raises(SotArgError):
            check_revision(bad)


# -- every A3-R tool, every argument that reaches git or the file system ---------------------------


def _lab(tmp_path: Path) -> FakeLab:
    lab = FakeLab()  # routers r1, r2; A3-R keeps its repository in the lab's dir (LabFiles)
    lab.dir = tmp_path / "lab"
    return lab


@pytest.fixture
def adapter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    cfgs = {r: DeviceConfig(hostname=r, static_routes=[StaticRoute(prefix="192.0.2.0/24", nexthop="Null0")])
            for r in ("r1", "r2")}

    def apply_(lab, router, cfg, **kw):  # type: ignore[no-untyped-def]
        cfgs[router] = cfg.canonical()
        return device_apply.ApplyReport(changed=True, diff=[], seconds=0.0)

    monkeypatch.setattr(device_apply, "read", lambda lab, r, *a, **kw: cfgs[r])
    monkeypatch.setattr(device_apply, "apply", apply_)
    (tmp_path / "lab").mkdir()
    a = A3RAdapter(_lab(tmp_path))
    a.open()
    yield a
    a.close()


HOSTILE = ["", "\x00", "a\x00b", "\ud800", "\x1b[2J", "x" * 100_000, "-h", "--output=/tmp/ani-x",
           "../../etc/passwd", "HEAD:../../etc/passwd", ":/init", "/etc/passwd", "devices/../../../etc/passwd",
           "devices/r1.json\x00", "devices/\ud800.json", "services/-x.json", "services/.json", "HEAD..HEAD",
           "@{-1}", "HEAD^{tree}", "~", "/", "devices/r1.json/x"]


def _valid(adapter: A3RAdapter) -> dict[str, dict[str, Any]]:
    head = adapter.call("sot_list", {}).data["revision"]
    op = {"op": "add", "path": "/ip_forwarding", "value": False}
    return {"sot_read": {"path": "devices/r1.json", "revision": head},
            "sot_patch": {"path": "devices/r1.json", "base_revision": head, "patch": [op]},
            "sot_commit": {"message": "m"}, "sot_revert": {"revision": head},
            "sot_log": {"n": 1}, "drift": {"devices": ["r1"]}}


def _variants(args: dict[str, Any]) -> list[dict[str, Any]]:
    """``args`` with each string in it (top level, in a list, in a patch operation) replaced by each
    hostile value."""
    out = []
    for key, val in args.items():
        for bad in HOSTILE:
            if isinstance(val, str):
                out.append({**args, key: bad})
            elif isinstance(val, list) and val and isinstance(val[0], str):
                out.append({**args, key: [bad]})
            elif key == "patch":
                for field in ("op", "path", "from", "value"):
                    op = {**copy.deepcopy(val[0]), field: bad if field != "path" else "/" + bad}
                    out.append({**args, key: [op]})
                out.append({**args, key: [{"op": "add", "path": "/" + bad, "value": {bad: bad}}]})
    return out


def test_no_argument_of_any_a3r_tool_is_a_harness_fault(adapter: A3RAdapter) -> None:
    """Walks every tool's arguments with hostile strings (paths, NUL, lone surrogates, options,
    ``..``, git path and range syntax, 100 kB): each result is ok or a stable non-internal code,
    its message is short and quotes no host file, and the repository's history is unchanged by
    every refusal."""
    valid = _valid(adapter)
    # every A3-R tool with arguments (get_topology is every level's: its names never reach git)
    assert {t.name for t in adapter.tools()} - {"sot_list", "sot_diff", "sot_discard", "reconcile_status",
                                                "reconcile", "get_topology"} == set(valid)
    seen = 0
    for name, args in valid.items():
        for variant in _variants(args):
            head = adapter.call("sot_list", {}).data["revision"]
            if name == "sot_commit":  # something to commit, so the message reaches git
                adapter.call("sot_patch", valid["sot_patch"] | {"base_revision": head})
            res = adapter.call(name, variant)
            seen += 1
            where = f"{name} {json.dumps(variant)[:120]}"
            if not res.ok:
                assert res.error.code.value != "internal", f"{where}: {res.error.message}"
                assert len(res.error.message) < 2000 and PASSWD_LINE not in res.error.message, where
                assert PASSWD_LINE not in json.dumps(res.data), where
                if name in ("sot_commit", "sot_revert"):
                    assert adapter.call("sot_list", {}).data["revision"] == head, where
            adapter.call("sot_discard", {})
    assert seen > 250


def test_the_issues_probes_through_the_tools(adapter: A3RAdapter) -> None:
    head = adapter.call("sot_list", {}).data["revision"]
    for name, args in (("sot_read", {"path": "devices/r1.json", "revision": "HEAD:../../etc/passwd"}),
                       ("sot_revert", {"revision": "HEAD:../../etc/passwd"})):
        res = adapter.call(name, args)
        assert (res.error.code.value, res.error.retriable) == ("invalid_arguments", False), res.text
        assert "a revision names a commit" in res.error.message
    adapter.call("sot_patch", {"path": "devices/r1.json", "base_revision": head,
                               "patch": [{"op": "add", "path": "/ip_forwarding", "value": False}]})
    for message in ("x" * (10 * 1024 * 1024), "with a NUL \x00 in it"):
        res = adapter.call("sot_commit", {"message": message})
        assert res.error.code.value == "invalid_arguments" and len(res.error.message) < 300, res.error.message
    res = adapter.call("sot_patch", {"path": "services/s.json", "base_revision": head, "patch": _doubling()})
    assert res.error.code.value == "invalid_intent" and "over the bound of 1048576" in res.error.message
    assert res.data["index"] < 20 and not (adapter.repo.path / "services" / "s.json").exists()
    assert adapter.call("sot_list", {}).data["revision"] == head
    assert adapter.call("sot_commit", {"message": "r1: no forwarding"}).ok
