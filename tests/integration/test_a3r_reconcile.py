"""A3-R on real FRR and a real git repository (issue 4, cases 3, 4, 6, 8; the out-of-band change
through A0 shows in drift() and is reverted by reconcile; conflicts on a stale base_revision).

One brownfield-small lab for the module (conftest's ``module_lab``: routers c1, c2 (route
reflectors), e1..e4 (edges, peer-group RR, PL-TENANTS, nftables sets tenant_blue / tenant_red)).
Each test opens a fresh A3RAdapter (its source of truth starts from what the routers run) and
the ``a3r`` fixture puts every router back to the configuration read at the start (checked).
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

import pytest

import ani.device.apply as device_apply
import ani.device.state as device_state
from ani.device.apply import apply, read
from ani.registry import create_adapter
from ani.sot.patch import pointer

pytestmark = pytest.mark.integration

SCENARIO = Path(__file__).parent.parent.parent / "scenarios" / "brownfield-small.yaml"
LAB_TOPOLOGY, LAB_PREFIX, LAB_NETCONF = SCENARIO, "h2r", False  # conftest's module_lab
E1 = "devices/e1.json"
E1_LO = "100.64.255.11"  # e1's loopback: its iBGP sessions to c1 / c2 run from it


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


@pytest.fixture
def a3r(lab, open_adapter):
    """An opened A3RAdapter; afterwards every router is put back as it was (and checked)."""
    base = {r: read(lab, r) for r in lab.routers}
    assert all(not c.unmodelled for c in base.values())
    adapter = open_adapter(create_adapter("a3r", lab))
    yield adapter
    for r, cfg in base.items():
        if read(lab, r) != cfg:
            apply(lab, r, cfg)
        assert read(lab, r) == cfg, r


def ok(res: Any) -> dict:
    assert res.ok, res.text
    return res.data or {}


def head(adapter: Any) -> str:
    return ok(adapter.call("sot_list", {}))["revision"]


def commit(adapter: Any, path: str, ops: list[dict], message: str) -> Any:
    ok(adapter.call("sot_patch", {"path": path, "patch": ops, "base_revision": head(adapter)}))
    return adapter.call("sot_commit", {"message": message})


def repo_state(adapter: Any) -> tuple:
    """Bytes of every file outside .git, HEAD, the number of commits, git status."""
    root = adapter.repo_path
    files = {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.relative_to(root).parts}
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=root,
                            capture_output=True, text=True, check=True).stdout
    count = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True, text=True,
                           check=True).stdout.strip()
    return files, head(adapter), count, status


def session(lab: Any, router: str, peer: str) -> tuple:
    """(state, established count, dropped count, established since epoch) of a BGP session."""
    p = lab.vtysh_json(router, "show bgp summary json")["ipv4Unicast"]["peers"][peer]
    return p["state"], p["connectionsEstablished"], p["connectionsDropped"], p.get("peerUptimeEstablishedEpoch")


class Recorder:
    """Wraps ani.device.apply.apply, ani.device.state's frr_reload and the lab's vtysh / exec:
    what a reconcile sent."""

    def __init__(self, lab: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.applies: list[str] = []
        self.reloads: list[str] = []
        self.commands: list[tuple[str, str]] = []
        real_apply, real_reload = device_apply.apply, device_state.frr_reload
        real_vtysh, real_exec = lab.vtysh, lab.exec

        def apply_(lab_: Any, router: str, *a: Any, **kw: Any) -> Any:
            self.applies.append(router)
            return real_apply(lab_, router, *a, **kw)

        def reload_(lab_: Any, router: str, *a: Any, **kw: Any) -> Any:
            self.reloads.append(router)
            return real_reload(lab_, router, *a, **kw)

        def vtysh_(router: str, commands: Any, *a: Any, **kw: Any) -> Any:
            for c in [commands] if isinstance(commands, str) else commands:
                self.commands.append((router, f"vtysh {c}"))
            return real_vtysh(router, commands, *a, **kw)

        def exec_(node: str, argv: list[str], *a: Any, **kw: Any) -> Any:
            if not str(argv[0]).endswith("/bin/vtysh"):  # lab.vtysh runs through here: counted above
                self.commands.append((node, " ".join(argv)))
            return real_exec(node, argv, *a, **kw)

        monkeypatch.setattr(device_apply, "apply", apply_)
        monkeypatch.setattr(device_state, "frr_reload", reload_)
        monkeypatch.setattr(lab, "vtysh", vtysh_)
        monkeypatch.setattr(lab, "exec", exec_)

    def clear(self) -> None:
        self.applies.clear()
        self.reloads.clear()
        self.commands.clear()

    def writes(self) -> list[tuple[str, str]]:
        """Every command that is not one of the two reads of ani.device.apply.read."""
        reads = {"vtysh show running-config", "nft -j list ruleset"}
        return [(n, c) for n, c in self.commands if c not in reads]


# -- case 3: FRR's own rendering is not drift ---------------------------------------------------


def test_case3_route_map_set_lines_reordered_by_frr(a3r, lab):
    """Set lines entered metric, local-preference, community (communities 65000:2 65000:1); FRR
    prints community (sorted), local-preference, metric. No drift right after the apply."""
    entry = {"set_metric": 5, "set_local_preference": 200, "set_community": ["65000:2", "65000:1"], "action": "permit"}
    res = commit(a3r, E1, [{"op": "add", "path": pointer("route_maps", "RM-CASE3"), "value": {"entries": {"10": entry}}}],
                 "e1: RM-CASE3")
    st = ok(res)["reconcile"]
    assert (st["status"], st["tries"], st["applied"]) == ("converged", 1, ["e1"]), res.text
    running = lab.running_config("e1")
    block = running[running.index("route-map RM-CASE3 permit 10"):].split("exit")[0].splitlines()
    assert block[1:] == [" set community 65000:1 65000:2", " set local-preference 200", " set metric 5"]
    d = ok(a3r.call("drift", {}))
    assert d["drift"] == {} and d["checked"] == sorted(lab.routers)


def test_case3_explicit_defaults_omitted_by_frr(a3r, lab):
    """An explicit default (static route distance 1, route-map delay-timer 5, a neighbor's
    shutdown false) is not printed by FRR; no drift right after the apply."""
    assert "bgp route-map delay-timer 1" in lab.running_config("e1")  # the brownfield's value
    ops = [{"op": "add", "path": pointer("static_routes", "192.0.2.0/24"), "value": {"next_hop": "Null0", "distance": 1}},
           {"op": "add", "path": "/bgp_route_map_delay_timer", "value": 5},
           {"op": "add", "path": pointer("bgp", "neighbors", "100.64.255.1", "shutdown"), "value": False}]
    res = commit(a3r, E1, ops, "e1: explicit defaults")
    st = ok(res)["reconcile"]
    assert (st["status"], st["tries"], st["applied"]) == ("converged", 1, ["e1"]), res.text
    lines = lab.running_config("e1").splitlines()
    assert "ip route 192.0.2.0/24 Null0" in lines and not any(ln.startswith("ip route 192.0.2.0/24 Null0 ") for ln in lines)
    assert not any("delay-timer" in ln or "shutdown" in ln for ln in lines)
    assert ok(a3r.call("drift", {}))["drift"] == {}


def test_case3_peer_group_member_remote_as_dropped_by_frr(a3r, lab):
    """A new member of peer-group RR (remote-as 64500) with its own remote-as 64500: the source
    of truth keeps what was written, FRR keeps only the membership; no drift."""
    new = "100.64.255.99"
    res = commit(a3r, E1, [{"op": "add", "path": pointer("bgp", "neighbors", new),
                            "value": {"peer_group": "RR", "remote_as": 64500}}], "e1: member with its own remote-as")
    st = ok(res)["reconcile"]
    assert (st["status"], st["tries"], st["applied"]) == ("converged", 1, ["e1"]), res.text
    running = lab.running_config("e1")
    assert f" neighbor {new} peer-group RR" in running and f"neighbor {new} remote-as" not in running
    assert ok(a3r.call("sot_read", {"path": E1}))["document"]["bgp"]["neighbors"][new] == {"peer_group": "RR", "remote_as": 64500}
    assert ok(a3r.call("drift", {"devices": ["e1"]}))["drift"] == {}


# -- case 4: reconcile is idempotent; non-convergence is reported ----------------------------


def test_case4_second_and_third_reconcile_send_nothing(a3r, lab, monkeypatch):
    rec = Recorder(lab, monkeypatch)
    res = commit(a3r, E1, [{"op": "add", "path": pointer("static_routes", "192.0.2.0/24"),
                            "value": {"next_hop": "Null0", "distance": 200}}], "e1: discard route")
    st = ok(res)["reconcile"]
    assert (st["status"], st["tries"], st["applied"]) == ("converged", 1, ["e1"]) and res.changed
    assert rec.applies == ["e1"] and rec.reloads == ["e1"] and rec.writes() != []  # the 1st one did send
    assert "ip route 192.0.2.0/24 Null0 200" in lab.running_config("e1")

    before = {(r, p): session(lab, r, p) for r, p in (("c1", E1_LO), ("c2", E1_LO), ("e1", "100.64.255.1"))}
    assert all(s[0] == "Established" for s in before.values()), before
    rec.clear()
    for _ in range(2):
        res = a3r.call("reconcile", {})
        st = ok(res)["reconcile"]
        assert (st["status"], st["tries"], st["applied"]) == ("converged", 0, []) and not res.changed
    # nothing sent: no apply, no frr-reload, and only the two reads per router
    assert rec.applies == [] and rec.reloads == []
    assert rec.writes() == [], rec.writes()
    assert {n for n, _ in rec.commands} == set(lab.routers)
    after = {(r, p): session(lab, r, p) for r, p in before}
    # no session reset: same counts, same established-since time (FRR derives that epoch from
    # the wall clock minus the uptime: it may read 1 s off between two reads)
    assert {k: v[:3] for k, v in after.items()} == {k: v[:3] for k, v in before.items()}
    assert all(abs(after[k][3] - before[k][3]) <= 1 for k in before), (before, after)
    assert ok(a3r.call("reconcile_status", {}))["reconcile"]["tries"] == 0


def test_case4_never_converging_input_is_non_convergent(a3r, lab, monkeypatch):
    """A real input that can never converge on FRR 8.4.4: a BGP neighbor whose address is the
    router's own loopback. The device model (and the source of truth) accept it; bgpd refuses it
    ("% Can not configure the local system as neighbor"), so after the apply (which puts the
    prior configuration back) the drift is the same as before it: ``non-convergent`` after one
    try (at most 2), naming the line involved; the commit stays, the router is unchanged; a
    revert of it converges without sending anything."""
    rec = Recorder(lab, monkeypatch)
    base_running = lab.running_config("e1")
    res = commit(a3r, E1, [{"op": "add", "path": pointer("bgp", "neighbors", E1_LO), "value": {"remote_as": 64501}}],
                 "e1: peer with itself")
    assert not res.ok and res.error.code.value == "non_convergent", res.text
    st = res.data["reconcile"]
    assert st["status"] == "non-convergent" and 1 <= st["tries"] <= 2 and len(rec.applies) == st["tries"]
    assert st["applied"] == [] and not res.changed
    assert [(i["pointer"], i["kind"]) for i in st["drift"]["e1"]] == [(pointer("bgp", "neighbors", E1_LO), "missing")]
    assert st["lines"]["e1"] == [f"+ router bgp 64500 / neighbor {E1_LO} remote-as 64501"]
    assert "Can not configure the local system as neighbor" in st["reason"]
    assert f"neighbor {E1_LO} remote-as 64501" in res.text  # the agent reads the line
    assert lab.running_config("e1") == base_running
    assert ok(a3r.call("reconcile_status", {}))["reconcile"] == st
    rev = res.data["revision"]
    assert ok(a3r.call("sot_log", {"n": 1}))["log"][0]["revision"] == rev  # the commit stays

    rec.clear()
    res = a3r.call("sot_revert", {"revision": rev})
    st = ok(res)["reconcile"]
    assert (st["status"], st["tries"], st["applied"]) == ("converged", 0, []) and rec.applies == []


# -- the out-of-band change through A0 ------------------------------------------------------------


def test_out_of_band_change_through_a0_shows_in_drift_and_reconcile_reverts_it(a3r, lab, open_adapter):
    a0 = open_adapter(create_adapter("a0", lab))
    res = a0.call("shell", {"device": "e1", "command":
                            "vtysh -c 'configure terminal' -c 'ip prefix-list PL-TENANTS seq 99 permit 192.0.2.0/24' "
                            "&& nft add element inet fw tenant_red '{ 192.0.2.0/24 }'"})
    assert res.ok and res.changed and set(res.data["changed_parts"]) == {"frr", "nft"}, res.text

    d = ok(a3r.call("drift", {}))
    assert list(d["drift"]) == ["e1"]
    items = {i["pointer"]: i for i in d["drift"]["e1"]}
    assert items[pointer("prefix_lists", "PL-TENANTS", "entries", "99")]["kind"] == "unexpected"
    reds = items[pointer("firewall", "sets", "tenant_red", "elements")]
    assert reds["kind"] == "changed" and "192.0.2.0/24" in reds["actual"] and "192.0.2.0/24" not in reds["desired"]
    assert "- ip prefix-list PL-TENANTS seq 99 permit 192.0.2.0/24" in d["lines"]["e1"]
    res = a3r.call("drift", {"devices": ["e1"]})
    assert res.ok and "drift against HEAD" in res.text and "PL-TENANTS seq 99" in res.text
    assert ok(a3r.call("drift", {"devices": ["e2", "c1"]}))["drift"] == {}

    res = a3r.call("reconcile", {})
    st = ok(res)["reconcile"]
    assert (st["status"], st["tries"], st["applied"]) == ("converged", 1, ["e1"]) and res.changed
    assert "seq 99" not in lab.running_config("e1")
    assert "192.0.2.0" not in lab.exec("e1", ["nft", "list", "set", "inet", "fw", "tenant_red"]).stdout
    assert ok(a3r.call("drift", {}))["drift"] == {}


# -- cases 6 and 8, conflicts, not found: structured errors, nothing changed ------------------


@pytest.mark.parametrize("ops,index,words", [
    ([{"op": "add", "path": "/bgp/neighbors/100.64.255.1/timers/keepalive", "value": 10}], 0,
     "missing parent: /bgp/neighbors/100.64.255.1/timers does not exist"),
    ([{"op": "add", "path": "/interfaces/lo/addresses/01", "value": "100.64.255.111/32"}], 0, "/interfaces/lo/addresses/01"),
    ([{"op": "remove", "path": "/bgp/neighbors/~2"}], 0, "~2"),
    ([{"op": "add", "path": "/bgp/coalesce_time", "value": 2}, {"op": "test", "path": "/bgp/asn", "value": 99}], 1, "test"),
    ([{"op": "add", "path": "/bgp/coalesce_time", "value": 1}, {"op": "test", "path": "/bgp/coalesce_time", "value": True}],
     1, "test"),
    ([{"op": "add", "path": "/bgp/coalesce_time", "value": 0}, {"op": "test", "path": "/bgp/coalesce_time", "value": False}],
     1, "test"),
], ids=["case6-missing-parent", "leading-zero-index", "bad-escape", "case8-second-op-fails", "case5-true-is-not-1",
        "case5-false-is-not-0"])
def test_case6_case8_refused_patch_changes_nothing(a3r, lab, ops, index, words):
    before = repo_state(a3r)
    running = lab.running_config("e1")
    res = a3r.call("sot_patch", {"path": E1, "patch": ops, "base_revision": before[1]})
    assert not res.ok and res.error.code.value == "invalid_intent", res.text
    assert res.data["index"] == index and res.data["path"] == ops[index]["path"]
    assert words in res.error.message and "nothing changed" in res.error.message
    assert repo_state(a3r) == before  # file and working tree byte-identical, no commit
    assert before[3] == ""
    assert ok(a3r.call("sot_diff", {}))["files"] == []
    res = a3r.call("sot_commit", {"message": "nothing to commit"})
    assert not res.ok and res.error.code.value == "invalid_arguments" and "nothing to commit" in res.error.message
    assert repo_state(a3r) == before and lab.running_config("e1") == running


def test_case7_static_route_keyed_by_prefix(a3r, lab):
    """Issue 4 case 7 through the tools: the route is keyed by its prefix; the escaped path
    replaces its next hop (committed and reconciled onto e1), the unescaped one is refused with a
    hint, and pointer() escapes '~' before '/'."""
    key = pointer("static_routes", "192.0.2.0/24")
    assert key == "/static_routes/192.0.2.0~124"
    assert pointer("a~/b") == "/a~0~1b"  # '~' first, else '~1' would become '~01'
    res = commit(a3r, E1, [{"op": "add", "path": key, "value": {"next_hop": "Null0"}}], "e1: 192.0.2.0/24 to Null0")
    assert res.ok and res.data["reconcile"]["status"] == "converged", res.text
    assert "ip route 192.0.2.0/24 Null0" in lab.running_config("e1")

    before = repo_state(a3r)
    res = a3r.call("sot_patch", {"path": E1, "base_revision": before[1], "patch": [
        {"op": "replace", "path": "/static_routes/192.0.2.0/24/next_hop", "value": "blackhole"}]})
    assert not res.ok and res.error.code.value == "invalid_intent", res.text
    assert "escape '/' in a key as ~1" in res.error.message
    assert repo_state(a3r) == before

    res = commit(a3r, E1, [{"op": "replace", "path": "/static_routes/192.0.2.0~124/next_hop", "value": "blackhole"}],
                 "e1: 192.0.2.0/24 to blackhole")
    assert res.ok and res.data["reconcile"]["status"] == "converged", res.text
    routes = [ln for ln in lab.running_config("e1").splitlines() if ln.startswith("ip route 192.0.2.0/24")]
    assert routes == ["ip route 192.0.2.0/24 blackhole"]


def test_invalid_document_is_invalid_intent_naming_the_pointer(a3r):
    before = repo_state(a3r)
    res = a3r.call("sot_patch", {"path": E1, "base_revision": before[1], "patch": [
        {"op": "add", "path": pointer("static_routes", "192.0.2.0/24"), "value": {"next_hop": "Null0", "distance": "200"}}]})
    assert not res.ok and res.error.code.value == "invalid_intent", res.text
    assert res.data["pointer"] == "/static_routes/192.0.2.0~124/distance"
    assert repo_state(a3r) == before


def test_stale_base_revision_is_a_conflict(a3r, lab):
    old = head(a3r)
    ok(commit(a3r, E1, [{"op": "add", "path": pointer("prefix_lists", "PL-TENANTS", "entries", "99"),
                         "value": {"action": "permit", "prefix": "192.0.2.0/24"}}], "e1: PL-TENANTS 99"))
    new = head(a3r)
    assert new != old
    before = repo_state(a3r)
    res = a3r.call("sot_patch", {"path": E1, "base_revision": old,
                                 "patch": [{"op": "remove", "path": pointer("prefix_lists", "PL-TENANTS", "entries", "99")}]})
    assert not res.ok and res.error.code.value == "conflict" and res.error.retriable, res.text
    assert res.data == {"expected": old, "actual": new, "paths": [E1]}  # E1 changed since old
    assert old in res.error.message and new in res.error.message and E1 in res.error.message
    assert repo_state(a3r) == before
    # a patch of a file that did not change since old is not stale (issue 23: only overlaps conflict)
    res = a3r.call("sot_patch", {"path": "devices/e2.json", "base_revision": old,
                                 "patch": [{"op": "add", "path": "/ip_forwarding", "value": True}]})
    assert ok(res)["base_revision"] == new
    ok(a3r.call("sot_discard", {}))
    # re-read and retry: accepted, and the commit removes the entry from e1 again
    assert ok(a3r.call("sot_read", {"path": E1}))["head"] == new
    res = commit(a3r, E1, [{"op": "remove", "path": pointer("prefix_lists", "PL-TENANTS", "entries", "99")}], "e1: undo")
    assert ok(res)["reconcile"]["applied"] == ["e1"] and "seq 99" not in lab.running_config("e1")


def test_not_found_and_history(a3r):
    res = a3r.call("sot_read", {"path": "devices/nope.json"})
    assert not res.ok and res.error.code.value == "not_found"
    res = a3r.call("sot_read", {"path": "../etc/passwd"})
    assert not res.ok and res.error.code.value == "not_found"
    res = a3r.call("sot_revert", {"revision": "0123456789abcdef"})
    assert not res.ok and res.error.code.value == "not_found", res.text
    res = a3r.call("sot_read", {"path": E1, "revision": "0123456789abcdef"})
    assert not res.ok and res.error.code.value == "not_found", res.text
    res = a3r.call("drift", {"devices": ["nope"]})
    assert not res.ok and res.error.code.value == "unknown_device"
    first = ok(a3r.call("sot_log", {}))["log"]
    assert len(first) == 1 and first[0]["committer"] == "ani-sot <sot@ani.invalid>"
    doc = ok(a3r.call("sot_read", {"path": E1, "revision": first[0]["revision"][:12]}))["document"]
    assert doc == ok(a3r.call("sot_read", {"path": E1}))["document"] and doc["hostname"] == "e1"


def test_out_of_band_unmodelled_line_is_drift_but_not_reverted(a3r, lab, open_adapter, monkeypatch):
    """The documented limit: a line the device model cannot express shows in drift() (under
    /unmodelled) and the reconcile fails with phase ``refused`` naming it, sending nothing (the
    device layer will not delete what it cannot model); removed out of band, drift is empty."""
    a0 = open_adapter(create_adapter("a0", lab))
    line = "bgp community-list standard CL-OOB seq 5 permit 65000:1"
    assert a0.call("shell", {"device": "e1", "command": f"vtysh -c 'configure terminal' -c '{line}'"}).ok
    d = ok(a3r.call("drift", {}))
    assert d["drift"] == {"e1": [{"pointer": "/unmodelled", "kind": "unexpected", "desired": None, "actual": [line]}]}
    assert d["lines"]["e1"] == [f"- {line}"]
    rec = Recorder(lab, monkeypatch)
    res = a3r.call("reconcile", {})
    assert not res.ok and res.error.code.value == "command_failed" and not res.changed, res.text
    st = res.data["reconcile"]
    assert (st["status"], st["phase"], st["tries"], st["applied"]) == ("failed", "refused", 1, [])
    assert line in st["error"] and rec.applies == ["e1"] and rec.reloads == [] and rec.writes() == []
    assert line in lab.running_config("e1")
    assert a0.call("shell", {"device": "e1", "command": f"vtysh -c 'configure terminal' -c 'no {line}'"}).ok
    assert ok(a3r.call("drift", {}))["drift"] == {}


def test_case4_competing_writer_is_non_convergent(a3r, lab, monkeypatch):
    """The other path to non-convergence: each apply succeeds (verified by the device layer) but
    a competing writer puts the old value back right after it (here: vtysh run out of band after
    every apply of e1). The drift after the apply equals the drift before it: ``non-convergent``
    after one apply, nothing retried in a loop."""
    real_apply = device_apply.apply
    applies: list[str] = []

    def apply_then_undo(lab_: Any, router: str, *a: Any, **kw: Any) -> Any:
        applies.append(router)
        report = real_apply(lab_, router, *a, **kw)
        lab_.vtysh(router, ["configure terminal", "no ip route 192.0.2.0/24 Null0 200"])  # the other writer
        return report

    monkeypatch.setattr(device_apply, "apply", apply_then_undo)
    res = commit(a3r, E1, [{"op": "add", "path": pointer("static_routes", "192.0.2.0/24"),
                            "value": {"next_hop": "Null0", "distance": 200}}], "e1: discard route")
    assert not res.ok and res.error.code.value == "non_convergent", res.text
    st = res.data["reconcile"]
    assert (st["status"], st["tries"], st["applied"]) == ("non-convergent", 1, ["e1"]) and applies == ["e1"]
    assert res.changed  # a change was sent (and undone by the other writer)
    assert "same as before the first apply" in st["reason"]
    assert st["lines"] == {"e1": ["+ ip route 192.0.2.0/24 Null0 200"]}
    assert "192.0.2.0/24" not in lab.running_config("e1")


def test_killed_bgpd_is_device_unreachable_not_drift(make_lab, open_adapter):
    """vtysh leaves a stopped daemon's part out of the running config (exit 0): a router whose
    bgpd died must not read as 'no BGP configured' (drift /bgp missing, reconcile non-convergent)."""
    import os
    import signal
    import time

    from ani.lab import frr

    tri = make_lab(Path(__file__).parent.parent / "data" / "tri-ospf-ibgp.yaml", netconf=False)
    adapter = open_adapter(create_adapter("a3r", tri))
    assert ok(adapter.call("drift", {}))["drift"] == {} and tri.dead_daemons("r2") == []
    before = repo_state(adapter)
    pid = tri._state.pids["r2"]["bgpd"]
    assert frr.owns(pid, tri.pathspace("r2"))  # this lab's bgpd of r2, nothing else
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while frr.owns(pid, tri.pathspace("r2")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert tri.dead_daemons("r2") == ["bgpd"]
    for name in ("drift", "reconcile"):
        res = adapter.call(name, {})
        assert (res.ok, res.error.code.value) == (False, "device_unreachable"), res.text
        assert "r2: FRR daemon bgpd is not running" in res.error.message and res.error.retriable
    assert ok(adapter.call("drift", {"devices": ["r1", "r3"]}))["drift"] == {}
    assert repo_state(adapter) == before
