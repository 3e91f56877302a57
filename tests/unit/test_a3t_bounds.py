"""A3-T's (and A4's) bounds on one change set (issue 23 §1: "2,000 prefix-list entries on 4 routers
in one change set: plan took 175 to 831 s, apply timed out or rolled back after 435 s"), without
a lab: more changes than ``max_changes``, or more changed lines on a router than
``max_router_lines``, are refused (``invalid_intent``, code ``too-large``, the bound named) before
anything is sent; compiling past ``plan_bound_s`` stops with ``timeout``; the compiler's one
canonical pass gives what the per-change pass gave, and still names the change that made a
configuration invalid. The transaction's own bound: tests/integration/test_a3t_bounds.py.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import pytest

from ani.errors import ErrorCode
from ani.testing import FakeLab
from ani.intents import IntentError, compile_changes
from ani.intents.compile import _compile
from ani.intents.services import ServiceClass
from ani.intents.services.common import Intent, RouterName
from ani.device.model import StaticRoute
from tests.unit.test_a3t_adapter_logic import CONFIGS, make
from tests.unit.test_service_registry import registered

ROUTERS = ["c1", "c2", "e1", "e2"]


def entries(n: int, routers: list[str] = ROUTERS) -> list[dict[str, Any]]:
    return [{"type": "prefix-list-entry", "action": "add", "routers": routers, "name": "PL-BIG",
             "prefix": f"10.{i >> 8 & 255}.{i & 255}.0/24"} for i in range(n)]


def test_more_changes_than_the_bound_are_refused_before_anything_is_read():
    a = make(max_changes=5)
    read: list[int] = []
    a._service_configs = lambda: read.append(1) or CONFIGS  # type: ignore[method-assign]
    for tool in ("plan", "apply"):
        res = a.call(tool, {"changes": entries(6)})
        assert res.error is not None and res.error.code == ErrorCode.INVALID_INTENT, res.text
        assert "too-large" in res.text and "6 changes in one call; at most 5 (option max_changes)" in res.text
        assert res.data["errors"][0]["code"] == "too-large"
    assert read == []  # refused from the arguments alone
    assert make(max_changes=5).call("plan", {"changes": entries(5)}).ok


def test_more_changed_lines_on_a_router_than_the_bound_are_refused():
    a = make(max_router_lines=3)
    res = a.call("plan", {"changes": entries(4)})  # 4 new prefix-list lines on each router
    assert res.error is not None and res.error.code == ErrorCode.INVALID_INTENT, res.text
    assert "c1: the change set would change 4 configuration lines; at most 3 per router" in res.text
    assert make(max_router_lines=3).call("plan", {"changes": entries(3)}).ok


def test_compiling_past_the_plan_bound_stops_with_timeout():
    res = make(plan_bound_s=1e-6).call("plan", {"changes": entries(50)})
    assert res.error is not None and res.error.code == ErrorCode.TIMEOUT, res.text
    assert "nothing was sent to any router" in res.text and "of 50" in res.text


def test_one_canonical_pass_compiles_what_the_per_change_pass_did():
    changes = entries(30) + [
        {"type": "prefix-list-entry", "action": "remove", "routers": ROUTERS, "name": "PL-BIG", "prefix": "10.0.3.0/24"},
        {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24", "next_hop": "blackhole"},
    ]
    fast = _compile(changes, CONFIGS, None, eager=False, deadline=None)
    slow = _compile(changes, CONFIGS, None, eager=True, deadline=None)
    assert fast.configs == slow.configs and fast.allocations == slow.allocations
    assert sorted(fast.configs) == ROUTERS and len(fast.configs["e1"].prefix_lists["PL-BIG"].entries) == 29


# -- a change that makes a configuration invalid is still named ---------------------------------


class _Dup(Intent):
    type: Literal["dup-route"] = "dup-route"
    action: Literal["add"] = "add"
    router: RouterName

    def service_id(self) -> str:
        return f"dup-route/{self.router}"


class DupRoute(ServiceClass):
    """Appends the same static route twice, in place (no validation): canonical form refuses it."""

    name = "dup-route"
    changes = (_Dup,)

    def check(self, ch: Any, path: str, state: dict) -> None:
        pass

    def apply(self, ch: Any, path: str, state: dict, pools: Any, alloc: dict) -> None:
        from ipaddress import IPv4Network

        route = StaticRoute(prefix=IPv4Network("192.0.2.0/24"), nexthop="blackhole")
        state[ch.router].static_routes.extend([route, route])

    def discover(self, configs: dict) -> list:
        return []


def test_an_invalid_configuration_is_blamed_on_the_change_that_made_it():
    with registered(DupRoute):
        with pytest.raises(IntentError) as ei:
            compile_changes([*entries(2), {"type": "dup-route", "action": "add", "router": "e2"},
                             {"type": "static-route", "action": "add", "router": "e1", "prefix": "192.0.2.0/24",
                              "next_hop": "blackhole"}], CONFIGS)
    assert ei.value.path == "changes.2" and "duplicate static route" in ei.value.message


# -- the transaction's bound (ani.intents.transaction.run_transaction(bound_s=...)) ----------------


class FakeManager:
    """An ncclient-like manager whose every operation answers <ok/> (``slow``: seconds an
    operation of that name takes); ``log`` collects (router, operation)."""

    OK = '<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" message-id="1"><ok/></rpc-reply>'

    def __init__(self, router: str, log: list[tuple[str, str]], slow: dict[str, float]) -> None:
        self.router, self.log, self.slow = router, log, slow
        self.connected = True
        self.session_id = "1"
        self.server_capabilities: list[str] = []

    def __getattr__(self, op: str):  # type: ignore[no-untyped-def]
        import time

        def call(**kw: Any) -> str:
            self.log.append((self.router, op))
            time.sleep(self.slow.get(f"{self.router}:{op}", 0.0))
            return self.OK

        return call


#: the routers of the transaction, each with a NETCONF server
EDGES = {"name": "edges", "routers": {"e1": {}, "e2": {}}}


def transaction(bound_s: float, slow: dict[str, float]) -> tuple[Any, list[tuple[str, str]]]:
    from ani.intents.transaction import run_transaction

    log: list[tuple[str, str]] = []
    lab = FakeLab(EDGES, netconf=True)

    def connect(ep: Any, **kw: Any) -> FakeManager:
        return FakeManager(lab.router_at_port(ep.port), log, slow)

    res = run_transaction(lab, {r: CONFIGS[r] for r in ("e1", "e2")}, confirm_timeout_s=60,
                          connect=connect, bound_s=bound_s)
    return res, log


def test_a_transaction_past_its_bound_starts_no_further_step_and_cancels_what_it_committed():
    res, log = transaction(0.5, {"e1:commit": 0.6})  # e1's commit ends past the bound
    assert not res.ok and res.phase == "commit"
    assert "e2: commit: not started, the transaction's bound of 0.5 s ran out" in res.error
    assert ("e2", "commit") not in log and ("e1", "cancel_commit") in log  # e1 rolled back
    assert ("e1", "unlock") in log and ("e2", "unlock") in log and ("e2", "discard_changes") in log


def test_a_transaction_within_its_bound_is_unchanged():
    res, log = transaction(30.0, {})
    assert res.ok and [op for r, op in log if r == "e1"] == [
        "lock", "edit_config", "validate", "commit", "commit", "unlock", "close_session"]


def test_a_long_list_in_one_change_is_refused_by_its_schema_before_compiling():
    """Outside check of issue 23: one ebgp-peering change announcing 16,000 prefixes compiled for
    81 s (100,000: no answer in 900 s) before the size bound refused it; plan_bound_s and
    max_changes did not bound one change. Every list of a service's model holds at most
    MAX_LIST_ITEMS (its JSON Schema's maxItems), refused as invalid_arguments at once."""
    from ani.intents.services.common import MAX_LIST_ITEMS

    announce = [f"198.18.{i // 256}.{i % 256}/32" for i in range(MAX_LIST_ITEMS + 1)]
    change = {"type": "ebgp-peering", "action": "add", "edge": "e3", "neighbor": "192.0.2.2",
              "interface": "to-x1", "local_address": "192.0.2.1/30", "remote_as": 65099,
              "accept": ["203.0.113.0/24"], "announce": announce}
    t0 = time.monotonic()
    res = make().call("plan", {"changes": [change]})
    assert res.error is not None and res.error.code.value in ("invalid_arguments", "invalid_intent"), res.text
    assert str(MAX_LIST_ITEMS) in res.error.message and time.monotonic() - t0 < 30
    from ani.intents.models import type_schema

    assert type_schema("ebgp-peering")["$defs"]["EbgpPeeringAdd"]["properties"]["announce"]["maxItems"] == MAX_LIST_ITEMS
