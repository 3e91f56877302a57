"""Two writers on one lab's source of truth (issue 11, section 2; issue 23, section 5), on a real lab
and real git: two A3-R adapters in one process, an A3-R adapter in another process, two A4
adapters. Each writer's commit holds only its own changes (never the other's uncommitted patch
under its own message). Changes to different files both land (the second rebased onto the first,
validated again, at A4 compiled with the other's services); changes to the same file are refused
as a conflict naming both revisions and the file; after ``sot_discard`` and the patch again, both
changes are on the routers and in one history.

Before issue 11 each adapter had a repository of its own, so the second writer's reconcile undid
the first writer's change on the routers; with one shared working tree one writer's commit took
the other's patch and the other was told "nothing to commit".
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from ani.registry import create_adapter
from ani.sot.patch import pointer

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "scenarios" / "brownfield-small.yaml", "sotw"  # conftest's module_lab


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def ok(res: Any) -> dict:
    assert res.ok, res.text
    return res.data


def head(a: Any) -> str:
    return ok(a.call("sot_list", {}))["revision"]


def route(p: str) -> list[dict]:
    return [{"op": "add", "path": pointer("static_routes", p), "value": {"next_hop": "Null0"}}]


def files_of(a: Any, rev: str) -> list[str]:
    return next(e["files"] for e in ok(a.call("sot_log", {"n": 20}))["log"] if e["revision"] == rev)


def test_two_a3r_adapters_in_one_process(lab, open_adapter):
    a = open_adapter(create_adapter("a3r", lab))
    b = open_adapter(create_adapter("a3r", lab))
    assert a.shared_path == b.shared_path and a.repo_path != b.repo_path
    h0 = head(a)
    assert head(b) == h0
    ok(a.call("sot_patch", {"path": "devices/e1.json", "patch": route("203.0.113.1/32"), "base_revision": h0}))
    ok(b.call("sot_patch", {"path": "devices/e2.json", "patch": route("203.0.113.2/32"), "base_revision": h0}))
    assert [f["path"] for f in ok(a.call("sot_diff", {}))["files"]] == ["devices/e1.json"]
    res = a.call("sot_commit", {"message": "a: e1 route"})
    ra = ok(res)["revision"]
    assert res.data["reconcile"]["applied"] == ["e1"] and files_of(a, ra) == ["devices/e1.json"]
    assert "203.0.113.1/32" in lab.running_config("e1") and "203.0.113.2/32" not in lab.running_config("e2")

    # b's change is based on h0, HEAD moved, but a changed another router's file: it lands on ra
    res = b.call("sot_commit", {"message": "b: e2 route"})
    rb = ok(res)["revision"]
    assert res.data["reconcile"]["applied"] == ["e2"] and files_of(b, rb) == ["devices/e2.json"]
    assert "203.0.113.1/32" in lab.running_config("e1") and "203.0.113.2/32" in lab.running_config("e2")
    assert [e["message"] for e in ok(a.call("sot_log", {"n": 2}))["log"]] == ["b: e2 route", "a: e1 route"]
    assert ok(a.call("drift", {}))["drift"] == {}  # a follows HEAD: nothing to undo

    # both change e1: the second is refused naming both revisions and the file, nothing applied
    h1 = head(a)
    ok(a.call("sot_patch", {"path": "devices/e1.json", "patch": route("203.0.113.5/32"), "base_revision": h1}))
    ok(b.call("sot_patch", {"path": "devices/e1.json", "patch": route("203.0.113.6/32"), "base_revision": h1}))
    ra2 = ok(a.call("sot_commit", {"message": "a: e1 second route"}))["revision"]
    before_e1 = lab.running_config("e1")
    res = b.call("sot_commit", {"message": "b: e1 route"})
    assert res.error.code.value == "conflict" and res.error.retriable, res.text
    assert res.data == {"expected": h1, "actual": ra2, "paths": ["devices/e1.json"]}
    assert h1 in res.error.message and ra2 in res.error.message and "devices/e1.json" in res.error.message
    assert not res.changed and lab.running_config("e1") == before_e1
    assert [f["path"] for f in ok(b.call("sot_diff", {}))["files"]] == ["devices/e1.json"]  # kept
    ok(b.call("sot_discard", {}))
    ok(b.call("sot_patch", {"path": "devices/e1.json", "patch": route("203.0.113.6/32"), "base_revision": head(b)}))
    rb2 = ok(b.call("sot_commit", {"message": "b: e1 route"}))["revision"]
    assert files_of(b, rb2) == ["devices/e1.json"]
    assert "203.0.113.5/32" in lab.running_config("e1") and "203.0.113.6/32" in lab.running_config("e1")


def test_two_a3r_adapters_committing_at_the_same_moment_both_land(lab, open_adapter):
    """Issue 23's probe: two agents change different routers' files at the same moment."""
    a = open_adapter(create_adapter("a3r", lab))
    b = open_adapter(create_adapter("a3r", lab))
    h0 = head(a)
    ok(a.call("sot_patch", {"path": "devices/e1.json", "patch": route("203.0.113.21/32"), "base_revision": h0}))
    ok(b.call("sot_patch", {"path": "devices/e2.json", "patch": route("203.0.113.22/32"), "base_revision": h0}))
    barrier = threading.Barrier(2)
    results: dict[str, Any] = {}

    def go(name: str, adapter: Any, message: str) -> None:
        barrier.wait()
        results[name] = adapter.call("sot_commit", {"message": message})

    threads = [threading.Thread(target=go, args=("a", a, "a: e1 at once")),
               threading.Thread(target=go, args=("b", b, "b: e2 at once"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    ra, rb = ok(results["a"])["revision"], ok(results["b"])["revision"]
    assert files_of(a, ra) == ["devices/e1.json"] and files_of(a, rb) == ["devices/e2.json"]
    log = [e["revision"] for e in ok(a.call("sot_log", {"n": 3}))["log"]]
    assert sorted(log[:2]) == sorted([ra, rb]) and log[2] == h0  # one after the other, on h0
    assert "203.0.113.21/32" in lab.running_config("e1") and "203.0.113.22/32" in lab.running_config("e2")
    assert ok(a.call("drift", {}))["drift"] == {}


OTHER = textwrap.dedent("""
    import json, sys
    from ani.lab import Lab
    from ani.registry import create_adapter
    from ani.sot.patch import pointer
    a = create_adapter("a3r", Lab.attach(sys.argv[1]))
    a.open()
    h = a.call("sot_list", {}).data["revision"]
    ops = [{"op": "add", "path": pointer("static_routes", "203.0.113.4/32"), "value": {"next_hop": "Null0"}}]
    assert a.call("sot_patch", {"path": "devices/e4.json", "patch": ops, "base_revision": h}).ok
    res = a.call("sot_commit", {"message": "other process: e4 route"})
    print(json.dumps({"ok": res.ok, "revision": (res.data or {}).get("revision"), "text": res.text}))
    a.close()
""")


def test_an_a3r_writer_in_another_process(lab, open_adapter):
    a = open_adapter(create_adapter("a3r", lab))
    h0 = head(a)
    ok(a.call("sot_patch", {"path": "devices/e3.json", "patch": route("203.0.113.3/32"), "base_revision": h0}))
    out = subprocess.run([sys.executable, "-c", OTHER, lab.id], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    import json

    theirs = json.loads(out.stdout.strip().splitlines()[-1])
    assert theirs["ok"], theirs["text"]
    assert "203.0.113.4/32" in lab.running_config("e4")
    assert files_of(a, theirs["revision"]) == ["devices/e4.json"]  # not a's uncommitted e3 patch
    res = a.call("sot_commit", {"message": "a: e3 route"})  # another file: rebased onto theirs, it lands
    assert ok(res)["reconcile"]["applied"] == ["e3"] and files_of(a, res.data["revision"]) == ["devices/e3.json"]
    assert "203.0.113.4/32" in lab.running_config("e4") and "203.0.113.3/32" in lab.running_config("e3")


def service(router: str, p: str) -> list[dict]:
    change = {"type": "static-route", "action": "add", "router": router, "prefix": p, "next_hop": "Null0"}
    return [{"op": "add", "path": f"/{k}", "value": v} for k, v in change.items()]


def test_two_a4_adapters(lab, open_adapter):
    a = open_adapter(create_adapter("a4", lab, options={"check_bound_s": 10}))
    b = open_adapter(create_adapter("a4", lab, options={"check_bound_s": 10}))
    assert a.shared_path.name == "sot-a4.git" and a.shared_path == b.shared_path
    h0 = head(a)
    ok(a.call("sot_patch", {"path": "services/sr-a.json", "patch": service("e1", "203.0.113.11/32"), "base_revision": h0}))
    ok(b.call("sot_patch", {"path": "services/sr-b.json", "patch": service("e2", "203.0.113.12/32"), "base_revision": h0}))
    ra = ok(a.call("sot_commit", {"message": "a: service sr-a"}))["revision"]
    assert files_of(a, ra) == ["services/sr-a.json"]
    res = b.call("sot_commit", {"message": "b: service sr-b"})  # compiled with sr-a, then lands
    rb = ok(res)["revision"]
    assert files_of(b, rb) == ["services/sr-b.json"] and b.repo.commit_of(rb).parents[0].hexsha == ra
    ids = [s["id"] for s in ok(b.call("list_services", {"type": "static-route"}))["services"]]
    assert {"static-route/e1/203.0.113.11/32/Null0", "static-route/e2/203.0.113.12/32/Null0"} <= set(ids)
    assert "203.0.113.11/32" in lab.running_config("e1") and "203.0.113.12/32" in lab.running_config("e2")
