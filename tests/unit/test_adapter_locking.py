"""ani.adapters.locking and BaseAdapter.call under several threads (issue 11, section 2): a call
waits for what it needs at most its own bound and then answers ``timeout`` naming the call that
holds it; different routers do not wait for each other; the whole adapter waits for everything.

No timings are asserted: a thread holds a key until the test releases it (an Event), and a
waiter with a deadline already passed (or a tiny one) must give up while the key is held."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import pytest

from ani.adapters.base import Args, BaseAdapter, DeviceArgs, NoArgs, tool
from ani.adapters.locking import WHOLE, Busy, CallLocks
from ani.protocol import Level, ToolResult


class Holding:
    """A thread holding ``keys`` of ``locks`` as call ``call`` until :meth:`release`."""

    def __init__(self, locks: CallLocks, keys: list[str], call: str = "update_config") -> None:
        self.got = threading.Event()
        self.done = threading.Event()

        def run() -> None:
            with locks.hold(keys, deadline=time.monotonic() + 30, call=call):
                self.got.set()
                self.done.wait(30)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        assert self.got.wait(10)

    def release(self) -> None:
        self.done.set()
        self.thread.join(10)


def test_a_held_key_makes_another_thread_give_up_at_its_deadline_naming_the_holder() -> None:
    locks = CallLocks()
    h = Holding(locks, ["r1"])
    try:
        with pytest.raises(Busy) as e:
            with locks.hold(["r1"], deadline=time.monotonic() + 0.05, call="get_running_config"):
                pass
        assert e.value.keys == ["r1"] and [(k, x.call) for k, x in e.value.holders] == [("r1", "update_config")]
        assert e.value.describe().startswith("r1 (held by update_config for ")
        # another router is free at once, even with a deadline already passed
        with locks.hold(["r2"], deadline=time.monotonic() - 1, call="get_running_config"):
            assert set(locks.held()) == {"r1", "r2"}
    finally:
        h.release()
    with locks.hold(["r1"], deadline=time.monotonic() - 1, call="x"):  # free again
        pass
    assert locks.held() == {}


@pytest.mark.parametrize(("held", "wanted"), [([WHOLE], ["r1"]), (["r2"], [WHOLE]), ([WHOLE], [WHOLE])])
def test_the_whole_adapter_conflicts_with_every_key(held: list[str], wanted: list[str]) -> None:
    locks = CallLocks()
    h = Holding(locks, held, call="apply")
    try:
        with pytest.raises(Busy) as e:
            with locks.hold(wanted, deadline=time.monotonic(), call="plan"):
                pass
        assert "held by apply" in e.value.describe()
        if held == [WHOLE]:
            assert e.value.describe().startswith("the adapter (held by apply")
    finally:
        h.release()


def test_a_waiter_gets_the_key_when_the_holder_releases_it() -> None:
    locks = CallLocks()
    h = Holding(locks, ["r1"])
    got: list[str] = []

    def wait() -> None:
        with locks.hold(["r1"], deadline=time.monotonic() + 30, call="snapshot"):
            got.append("r1")

    t = threading.Thread(target=wait)
    t.start()
    assert got == []
    h.release()
    t.join(10)
    assert got == ["r1"]


def test_reentrant_in_one_thread_and_several_keys_all_or_none() -> None:
    locks = CallLocks()
    with locks.hold(["r1"], deadline=time.monotonic(), call="outer"):
        with locks.hold(["r1", WHOLE], deadline=time.monotonic(), call="inner"):  # ours: no wait
            assert set(locks.held()) == {"r1", WHOLE}
        assert set(locks.held()) == {"r1"} and locks.held()["r1"].call == "outer"
    h = Holding(locks, ["r2"])
    try:
        with pytest.raises(Busy):
            with locks.hold(["r1", "r2"], deadline=time.monotonic(), call="commit"):
                pass
        assert set(locks.held()) == {"r2"}  # r1 was not taken half-way
    finally:
        h.release()


def test_drain_yields_the_keys_of_calls_still_running() -> None:
    locks = CallLocks()
    h = Holding(locks, ["r1"])
    try:
        with locks.drain(deadline=time.monotonic(), call="close") as busy:
            assert busy == {"r1"} and WHOLE not in locks.held()
    finally:
        h.release()
    with locks.drain(deadline=time.monotonic(), call="close") as busy:
        assert busy == set() and locks.held()[WHOLE].call == "close"
    assert locks.held() == {}


# -- BaseAdapter.call from several threads ------------------------------------------------------


class WaitArgs(DeviceArgs):
    pass


class Blocking(BaseAdapter):
    """``hold(device)`` blocks until the test releases it; per-router keys like A1's."""

    level = Level.A1

    def __init__(self, lab: Any, bound_s: float) -> None:
        super().__init__(lab)
        self.bound_s = bound_s
        self.entered = threading.Event()
        self.release = threading.Event()

    def call_keys(self, name: str, args: Args) -> list[str]:
        return self._devices_named(args) or super().call_keys(name, args)

    def call_bound_s(self, name: str, args: Args) -> float:
        return self.bound_s

    @tool(args=WaitArgs, description="hold a router")
    def hold(self, args: WaitArgs) -> ToolResult:
        self.entered.set()
        self.release.wait(30)
        return ToolResult.success(f"held {args.device}")

    @tool(args=WaitArgs, read_only=True, description="read a router")
    def peek(self, args: WaitArgs) -> ToolResult:
        left = self.remaining_s()
        return ToolResult.success("peek", {"left": left})

    @tool(args=NoArgs, description="the whole adapter")
    def everything(self, args: NoArgs) -> ToolResult:
        return ToolResult.success("all")


def _lab() -> SimpleNamespace:
    return SimpleNamespace(topology=SimpleNamespace(routers=["r1", "r2"], nodes=["r1", "r2"], links=[],
                                                    is_router=lambda n: True))


def test_a_call_waiting_for_its_router_answers_timeout_naming_the_holder() -> None:
    a = Blocking(_lab(), bound_s=0.05)
    t = threading.Thread(target=a.call, args=("hold", {"device": "r1"}))
    t.start()
    try:
        assert a.entered.wait(10)
        res = a.call("peek", {"device": "r1"})
        assert not res.ok and res.error.code.value == "timeout" and res.error.retriable
        assert "waiting for r1 (held by hold for" in res.error.message and "nothing was done" in res.error.message
        assert res.data == {"waited_for": ["r1"], "busy_with": ["hold"]}
        other = a.call("peek", {"device": "r2"})  # another router does not wait
        assert other.ok and 0 < other.data["left"] <= 0.05
        whole = a.call("everything", {})  # the whole adapter waits for r1
        assert whole.error.code.value == "timeout" and "r1 (held by hold" in whole.error.message
        assert a.call("get_topology", {}).ok  # takes nothing
    finally:
        a.release.set()
        t.join(10)
    assert a.call("peek", {"device": "r1"}).ok
    assert [e["error_code"] for e in a.trajectory.calls] == [
        "timeout", None, "timeout", None, None, None]  # every call logged once (hold last: it ended last)
    assert a.remaining_s() is None  # outside a call
