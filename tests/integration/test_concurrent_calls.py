"""Eight threads on ONE adapter of each level (a0, a1, a2, a3t, a3r, a4, and the blocklist wrapper)
on a real lab (issue 11, section 2): agent frameworks run a turn's tool calls in parallel threads.

Each thread makes its own mix of read and write calls on two routers (e1, e2: four threads each,
so calls on one router wait for each other and the two routers run side by side). Every result
must be correct for what that thread asked (no false ``device_unreachable``, a write's measured
``changed`` and diff only its own), no call may raise, every call ends within its bound, and the
routers hold exactly the level's writes afterwards (read out of band) with routing still converged.

Then: a call that cannot get its router within its bound answers ``timeout`` (retriable) naming
what it waited for, within that bound, and nothing of it reaches the router; and an MCP server
runs a client's concurrent calls in parallel.

One lab of scenarios/brownfield-small.yaml (with NETCONF) for the module; each level writes static
routes of its own range (198.51.100.<base + i>/32 to Null0), so the levels do not see each other's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from ani.adapters.blocklist import BlocklistAdapter
from ani.registry import create_adapter

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parent.parent.parent
LAB_TOPOLOGY, LAB_PREFIX = ROOT / "scenarios" / "brownfield-small.yaml", "conc"  # conftest's module_lab
NS = "urn:ani:yang:ani-frr"
THREADS = 8
ROUTERS = ("e1", "e2")
BASE = {"a0": 0, "a1": 20, "a2": 40, "a3t": 60, "a3r": 80, "a4": 100, "blocklist": 120}
#: slack on top of a call's bound for what it does after waiting (A0's state captures, a rollback), seconds
SLACK_S = 12.0


@pytest.fixture(scope="module")
def lab(module_lab):
    return module_lab


def prefix(level: str, i: int) -> str:
    return f"198.51.100.{BASE[level] + i}/32"


def route_line(level: str, i: int) -> str:
    return f"ip route {prefix(level, i)} Null0"


def router_of(i: int) -> str:
    return ROUTERS[i % 2]


def level_routes(lab: Any, level: str) -> dict[str, set[str]]:
    """Per router, the static routes of ``level``'s range it runs (FRR, read out of band)."""
    lo, hi = BASE[level], BASE[level] + 20
    out = {}
    for r in lab.routers:
        lines = [ln.strip() for ln in lab.running_config(r).splitlines()]
        out[r] = {ln for ln in lines if ln.startswith("ip route 198.51.100.")
                  and lo <= int(ln.split()[2].split(".")[3].split("/")[0]) < hi}
    return out


def run_threads(work: Callable[[int], list[tuple[str, Any, float]]]) -> list[list[tuple[str, Any, float]]]:
    """``work(i)`` in THREADS threads started together; each returns ``[(what, ToolResult,
    bound_s)]``. Returns them by thread; an exception in a thread fails the test, naming it."""
    start = threading.Barrier(THREADS)
    out: list[Any] = [None] * THREADS
    errors: list[str] = []

    def run(i: int) -> None:
        start.wait()
        try:
            out[i] = work(i)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(f"thread {i}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    assert not errors, errors
    assert all(not t.is_alive() for t in threads), "a call hung"
    return out


def check_all(results: list[list[tuple[str, Any, float]]]) -> None:
    for i, calls in enumerate(results):
        for what, res, bound in calls:
            assert res.ok, f"thread {i} {what}: {res.text[:500]}"
            assert res.elapsed_s <= bound + SLACK_S, f"thread {i} {what}: {res.elapsed_s:.1f} s > {bound} s"


def call(adapter: Any, bound: float, what: str, name: str, args: dict[str, Any]) -> tuple[str, Any, float]:
    return what, adapter.call(name, args), bound


# -- the levels ---------------------------------------------------------------------------------


def test_a0_eight_threads(lab, open_adapter):
    a = open_adapter(create_adapter("a0", lab))

    def work(i: int) -> list[tuple[str, Any, float]]:
        r = router_of(i)
        conf = f"vtysh -c 'configure terminal' -c '{route_line('a0', i)}'"
        w = call(a, a.timeout_s, "write", "shell", {"device": r, "command": conf})
        rd = call(a, a.timeout_s, "read", "shell", {"device": r, "command": "vtysh -c 'show running-config'"})
        return [w, rd]

    results = run_threads(work)
    check_all(results)
    for i, (w, rd) in enumerate(results):
        assert w[1].changed and "frr" in w[1].data["changed_parts"], w[1].data
        # the read saw no change: no other thread's write fell between its before and after
        assert rd[1].changed is False and rd[1].data["changed_parts"] == [], (i, rd[1].data["changed_parts"])
        assert route_line("a0", i) in rd[1].data["stdout"]
    assert level_routes(lab, "a0") == {r: {route_line("a0", i) for i in range(THREADS) if router_of(i) == r}
                                       for r in lab.routers}


def _a1_work(a: Any, level: str) -> Callable[[int], list[tuple[str, Any, float]]]:
    def work(i: int) -> list[tuple[str, Any, float]]:
        r = router_of(i)
        out = [call(a, a.call_timeout_s, "update", "update_config", {"device": r, "commands": [route_line(level, i)]}),
               call(a, a.command_timeout_s, "running", "get_running_config", {"device": r}),
               call(a, a.command_timeout_s, "show", "execute_validation",
                    {"device": r, "command": f"show ip route {prefix(level, i)}"})]
        if i % 4 == 0:
            out.append(call(a, a.command_timeout_s, "snapshot", "snapshot", {"device": r}))
        return out

    return work


def _check_a1(lab: Any, results: list[Any], level: str) -> None:
    check_all(results)
    for i, calls in enumerate(results):
        upd, running, show = calls[0][1], calls[1][1], calls[2][1]
        assert upd.changed
        added = [ln for ln in upd.data["diff"].splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        assert added == [f"+{route_line(level, i)}"], (i, upd.data["diff"])  # only its own line
        assert route_line(level, i) in running.data["running_config"]
        assert prefix(level, i) in show.data["output"]
    assert level_routes(lab, level) == {r: {route_line(level, i) for i in range(THREADS) if router_of(i) == r}
                                        for r in lab.routers}


def test_a1_eight_threads(lab, open_adapter):
    a = open_adapter(create_adapter("a1", lab, options={"command_timeout_s": 20}))
    results = run_threads(_a1_work(a, "a1"))
    _check_a1(lab, results, "a1")
    assert len(a.call("list_snapshots", {"device": "e1"}).data["snapshots"]) == 4 + 2  # 4 auto + 2 taken


def test_blocklist_over_a1_eight_threads(lab, open_adapter):
    inner = open_adapter(create_adapter("a1", lab, options={"command_timeout_s": 20}))
    a = BlocklistAdapter(inner)
    before = {r: lab.running_config(r) for r in ROUTERS}
    work = _a1_work(a, "blocklist")

    def mixed(i: int) -> list[tuple[str, Any, float]]:
        blocked = a.call("update_config", {"device": router_of(i), "commands": ["no router bgp 64500"]})
        assert blocked.error is not None and blocked.error.code.value == "blocked", blocked.text
        return work(i)

    results = run_threads(mixed)
    _check_a1(lab, results, "blocklist")
    assert a.blocked_calls == THREADS
    for r in ROUTERS:  # the blocked removal never ran: bgp is there, only the new routes differ
        assert "router bgp 64500" in lab.running_config(r)
        assert set(lab.running_config(r).splitlines()) - set(before[r].splitlines()) == level_routes(lab, "blocklist")[r]


def _static_xml(level: str, i: int) -> str:
    return (f'<frr xmlns="{NS}"><static-route><prefix>{prefix(level, i)}</prefix>'
            "<next-hop>Null0</next-hop></static-route></frr>")


def test_a2_eight_threads(lab, open_adapter):
    a = open_adapter(create_adapter("a2", lab))

    def work(i: int) -> list[tuple[str, Any, float]]:
        r = router_of(i)
        b = a.rpc_timeout_s
        return [call(a, b, "edit", "edit_config", {"device": r, "config": _static_xml("a2", i)}),
                call(a, b, "commit", "commit", {"devices": [r], "confirmed": False}),
                call(a, b, "running", "get_config", {"device": r}),
                call(a, b, "state", "get_state", {"device": r})]

    results = run_threads(work)
    check_all(results)
    for i, calls in enumerate(results):
        # one candidate per router: another thread's commit may have taken this thread's edit, but
        # the edit is in running once this thread's own commit returned
        assert prefix("a2", i) in calls[2][1].data["xml"], i
    assert level_routes(lab, "a2") == {r: {route_line("a2", i) for i in range(THREADS) if router_of(i) == r}
                                       for r in lab.routers}
    for r in ROUTERS:
        assert a.call("compare", {"device": r}).data["changes"] == 0  # nothing left in a candidate


def _static_change(level: str, i: int) -> dict[str, Any]:
    return {"type": "static-route", "action": "add", "router": router_of(i), "prefix": prefix(level, i),
            "next_hop": "Null0"}


def test_a3t_eight_threads(lab, open_adapter):
    a = open_adapter(create_adapter("a3t", lab, options={"check_bound_s": 10}))
    b = a.busy_timeout_s

    def work(i: int) -> list[tuple[str, Any, float]]:
        if i < 4:  # writers
            return [call(a, b, "apply", "apply", {"changes": [_static_change("a3t", i)]}),
                    call(a, b, "get", "get_service", {"id": f"static-route/{router_of(i)}/{prefix('a3t', i)}/Null0"})]
        return [call(a, b, "plan", "plan", {"changes": [_static_change("a3t", i)]}),
                call(a, b, "list", "list_services", {"type": "static-route"}),
                call(a, b, "state", "get_state", {"device": router_of(i), "what": "routes"})]

    results = run_threads(work)
    check_all(results)
    for i in range(4):
        assert results[i][0][1].changed and results[i][0][1].data["routers"] == [router_of(i)]
        assert results[i][1][1].data["service"]["spec"]["prefix"] == prefix("a3t", i)
    for i in range(4, THREADS):
        assert results[i][0][1].data["routers"] == [router_of(i)] and not results[i][0][1].changed  # a dry run
    assert level_routes(lab, "a3t") == {r: {route_line("a3t", i) for i in range(4) if router_of(i) == r}
                                        for r in lab.routers}


def _add_route_ops(level: str, i: int) -> list[dict[str, Any]]:
    from ani.sot.patch import pointer

    return [{"op": "add", "path": pointer("static_routes", prefix(level, i)), "value": {"next_hop": "Null0"}}]


def test_a3r_eight_threads(lab, open_adapter):
    a = open_adapter(create_adapter("a3r", lab))
    b = a.busy_timeout_s
    head0 = a.call("sot_list", {}).data["revision"]

    def work(i: int) -> list[tuple[str, Any, float]]:
        r = router_of(i)
        if i < 6:  # six writers patch the one working tree of this writer
            return [call(a, b, "patch", "sot_patch", {"path": f"devices/{r}.json", "patch": _add_route_ops("a3r", i),
                                                      "base_revision": head0}),
                    call(a, b, "read", "sot_read", {"path": f"devices/{r}.json"})]
        return [call(a, b, "drift", "drift", {"devices": [r]}), call(a, b, "log", "sot_log", {"n": 3}),
                call(a, b, "diff", "sot_diff", {}), call(a, b, "list", "sot_list", {})]

    results = run_threads(work)
    check_all(results)
    for i in range(6):
        assert results[i][0][1].data["changed"] is True
        assert prefix("a3r", i) in results[i][1][1].data["document"]["static_routes"]
    for i in range(6, THREADS):
        assert results[i][0][1].data["drift"] == {}  # nothing committed yet: the routers match HEAD
    assert level_routes(lab, "a3r") == {r: set() for r in lab.routers}
    res = a.call("sot_commit", {"message": "six routes"})
    assert res.ok and res.data["reconcile"]["status"] == "converged" and res.data["reconcile"]["applied"] == ["e1", "e2"]
    assert level_routes(lab, "a3r") == {r: {route_line("a3r", i) for i in range(6) if router_of(i) == r}
                                        for r in lab.routers}
    assert a.call("drift", {}).data["drift"] == {}


def test_a4_eight_threads(lab, open_adapter):
    a = open_adapter(create_adapter("a4", lab, options={"check_bound_s": 10}))
    b = a.busy_timeout_s
    head0 = a.call("sot_list", {}).data["revision"]

    def work(i: int) -> list[tuple[str, Any, float]]:
        if i < 4:
            ops = [{"op": "add", "path": f"/{k}", "value": v} for k, v in _static_change("a4", i).items()]
            return [call(a, b, "patch", "sot_patch", {"path": f"services/sr-{i}.json", "patch": ops,
                                                      "base_revision": head0}),
                    call(a, b, "plan", "plan", {"changes": [_static_change("a4", i + 10)]})]
        return [call(a, b, "list", "list_services", {}), call(a, b, "state", "get_state",
                                                             {"device": router_of(i), "what": "routes"}),
                call(a, b, "sot", "sot_list", {})]

    results = run_threads(work)
    check_all(results)
    assert sorted(f["path"] for f in a.call("sot_diff", {}).data["files"]) == [f"services/sr-{i}.json" for i in range(4)]
    res = a.call("sot_commit", {"message": "four routes"})
    assert res.ok and res.data["reconcile"]["status"] == "converged", res.text
    assert level_routes(lab, "a4") == {r: {route_line("a4", i) for i in range(4) if router_of(i) == r}
                                       for r in lab.routers}


def test_routing_still_converged(lab):
    lab.wait_converged(timeout_s=30)


# -- a call that cannot get its router in time ---------------------------------------------------


def test_a0_call_waiting_past_its_bound_is_a_timeout_naming_the_call_it_waited_for(lab, open_adapter):
    a = open_adapter(create_adapter("a0", lab, options={"timeout_s": 4}))
    first: list[Any] = []
    t = threading.Thread(target=lambda: first.append(a.call("shell", {"device": "e3", "command": "sleep 2.5"})))
    t.start()
    time.sleep(0.5)  # the first call holds e3
    before = lab.running_config("e3")
    res = a.call("shell", {"device": "e3", "command": "sleep 3; vtysh -c 'configure terminal' -c 'ip route 198.51.100.200/32 Null0'"})
    t.join(30)
    assert first[0].ok, first[0].text
    assert res.error.code.value == "timeout" and res.error.retriable, res.text
    assert "waiting for other calls on e3" in res.error.message
    assert res.elapsed_s <= 4 + SLACK_S
    assert lab.running_config("e3") == before  # killed before it configured anything


HOLD = {  # level -> (options with a bound of 1 s, the call, the key it needs)
    "a1": ({"command_timeout_s": 1}, ("get_running_config", {"device": "e3"}), "e3"),
    "a2": ({"rpc_timeout_s": 1}, ("get_config", {"device": "e3"}), "e3"),
    "a3t": ({"busy_timeout_s": 1}, ("list_services", {}), "*"),
    "a3r": ({"busy_timeout_s": 1}, ("sot_list", {}), "*"),
    "a4": ({"busy_timeout_s": 1}, ("sot_list", {}), "*"),
}


@pytest.mark.parametrize("level", sorted(HOLD))
def test_a_call_waiting_past_its_bound_is_a_timeout_naming_what_holds_it(lab, open_adapter, level):
    options, (tool, args), key = HOLD[level]
    a = open_adapter(create_adapter(level, lab, options=options))
    held, release = threading.Event(), threading.Event()

    def holder() -> None:  # stands for a long call in flight (e.g. an update_config, a transaction)
        with a._calls.hold([key], deadline=time.monotonic() + 30, call="update_config"):
            held.set()
            release.wait(30)

    t = threading.Thread(target=holder)
    t.start()
    assert held.wait(10)
    try:
        res = a.call(tool, args)
    finally:
        release.set()
        t.join(10)
    assert res.error.code.value == "timeout" and res.error.retriable, res.text
    assert "timeout after 1 s waiting for" in res.error.message and "held by update_config for" in res.error.message
    assert 1.0 <= res.elapsed_s <= 3.0
    assert _free_again(a, tool, args)


def _free_again(adapter: Any, tool: str, args: dict[str, Any], tries: int = 3) -> bool:
    """The released key lets the call through: no try waits for it, and one succeeds (a try may
    still run out of the 1 s bound on the device itself, e.g. a get-config under a full suite's
    load: that is not the hold, so it is tried again)."""
    for _ in range(tries):
        again = adapter.call(tool, args)
        assert "waiting for" not in again.text, again.text
        if again.ok:
            return True
    return False


def test_a3r_commit_whose_reconcile_waits_for_another_writer_stays_committed(lab, open_adapter):
    a = open_adapter(create_adapter("a3r", lab, options={"busy_timeout_s": 1}))
    other = open_adapter(create_adapter("a3r", lab))
    head = a.call("sot_list", {}).data["revision"]
    assert a.call("sot_patch", {"path": "devices/e4.json", "patch": _add_route_ops("a3r", 19),
                                "base_revision": head}).ok
    before = lab.running_config("e4")
    with other.repo.exclusive(5, "test"):  # another writer's reconcile of the lab in flight
        res = a.call("sot_commit", {"message": "e4 route"})
    assert res.error.code.value == "timeout" and res.error.retriable, res.text
    assert "not reconciled" in res.error.message and "another writer's reconcile of lab" in res.error.message
    assert "it stays committed: call reconcile" in res.error.message and res.data["reconciled"] is False
    assert lab.running_config("e4") == before and not res.changed
    assert a.call("sot_log", {"n": 1}).data["log"][0]["message"] == "e4 route"
    done = a.call("reconcile", {})
    assert done.ok and done.data["reconcile"]["applied"] == ["e4"], done.text
    assert route_line("a3r", 19) in lab.running_config("e4")


# -- MCP ----------------------------------------------------------------------------------------


def test_mcp_server_runs_concurrent_calls_in_parallel(lab, open_adapter):
    from mcp import Client

    from ani.mcp.server import build_server

    a = open_adapter(create_adapter("a1", lab, options={"command_timeout_s": 30}))
    held, release = threading.Event(), threading.Event()
    order: list[str] = []

    def holder() -> None:  # e1 is busy with a long call
        with a._calls.hold(["e1"], deadline=time.monotonic() + 60, call="update_config"):
            held.set()
            release.wait(60)

    t = threading.Thread(target=holder)
    t.start()
    assert held.wait(10)

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(build_server(a), mode="legacy") as client:
            async def slow() -> None:
                out["e1"] = await client.call_tool("get_running_config", {"device": "e1"})
                order.append("e1")

            async def fast() -> None:
                out["e2"] = await client.call_tool("get_running_config", {"device": "e2"})
                order.append("e2")
                release.set()  # only now may the e1 call get its router

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                await anyio.sleep(0.2)
                tg.start_soon(fast)
        return out

    try:
        out = anyio.run(main)
    finally:
        release.set()
        t.join(10)
    assert order == ["e2", "e1"]  # the e2 call did not queue behind the e1 call
    assert out["e1"].is_error is False and out["e2"].is_error is False
    assert "router bgp" in out["e1"].content[0].text
