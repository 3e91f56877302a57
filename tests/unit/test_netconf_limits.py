"""The NETCONF server's bounds (ani.netconf.limits, issue 23 section 1: "unbounded work behind a
bounded call"): an edit-config or a commit larger than the bound is refused with ``too-big``
before anything is set or applied; a commit whose apply passes the commit bound is stopped and
leaves running as it was (RFC 6241: a failed commit leaves running unchanged), nothing pending.

The Device runs with the real ani-frr codec over the in-memory backend of
tests/unit/test_netconf_datastore.py; the same bounds against the lab's real server and FRR:
tests/integration/test_netconf_bounds.py.
"""

from __future__ import annotations

import time

import pytest

from ani.device.model import DeviceConfig
from ani.errors import ConfigError
from ani.netconf.backend import ApplyError
from ani.netconf.datastore import Device
from ani.netconf.errors import RpcError
from ani.netconf.limits import ENV, Limits
from tests.unit.test_netconf_datastore import A, V1, FakeBackend, as_config, config, routes_xml, timers  # noqa: F401


def prefixes(n: int) -> list[str]:
    return [f"10.{i >> 8 & 255}.{i & 255}.0/24" for i in range(n)]


def bounded(timers, limits: Limits) -> tuple[Device, FakeBackend]:  # noqa: F811
    be = FakeBackend(V1.model_copy(deep=True))
    return Device("r1", be, "r1", timer=timers, limits=limits), be


def test_limits_from_env_reads_each_variable_and_names_a_bad_one():
    got = Limits.from_env({ENV["edit_elements"]: "50", ENV["commit_lines"]: "7", ENV["commit_bound_s"]: "2.5"})
    assert got == Limits(edit_elements=50, commit_lines=7, commit_bound_s=2.5)
    assert Limits.from_env({}) == Limits()
    with pytest.raises(ConfigError, match="ANI_NETCONF_MAX_COMMIT_LINES='lots': not a number"):
        Limits.from_env({ENV["commit_lines"]: "lots"})
    with pytest.raises(ConfigError, match="ANI_NETCONF_COMMIT_BOUND_S='0': must be above 0"):
        Limits.from_env({ENV["commit_bound_s"]: "0"})


def test_an_edit_over_the_element_bound_is_too_big_and_sets_nothing(timers):  # noqa: F811
    dev, be = bounded(timers, Limits(edit_elements=30))
    # 10 static routes = 10 * (static-route, prefix, next-hop) + <frr> = 31 elements
    with pytest.raises(RpcError) as ei:
        dev.edit_config(A, "candidate", config(routes_xml(*prefixes(10))))
    err = ei.value
    assert (err.tag, err.app_tag, err.type) == ("too-big", "edit-too-large", "application")
    assert "holds 31 elements" in err.message and "at most 30" in err.message
    assert as_config(dev, "candidate") == V1  # nothing set
    dev.edit_config(A, "candidate", config(routes_xml(*prefixes(9))))  # 28 elements: taken
    assert len(as_config(dev, "candidate").static_routes) == 10


def test_a_commit_over_the_line_bound_is_too_big_applies_nothing_and_keeps_the_candidate(timers):  # noqa: F811
    dev, be = bounded(timers, Limits(commit_lines=5))
    dev.edit_config(A, "candidate", config(routes_xml(*prefixes(6))))  # 6 lines added
    with pytest.raises(RpcError) as ei:
        dev.commit(A, confirmed=True, confirm_timeout="60")
    err = ei.value
    assert (err.tag, err.app_tag) == ("too-big", "commit-too-large")
    assert "would change 6 configuration lines" in err.message and "at most 5" in err.message
    assert "apply" not in be.calls and be.cfg == V1  # nothing applied
    assert timers.live() == []  # no confirmed commit pending
    assert len(as_config(dev, "candidate").static_routes) == 7  # the candidate keeps its edits
    dev.discard_changes(A)
    dev.edit_config(A, "candidate", config(routes_xml(*prefixes(5))))
    dev.commit(A)  # 5 lines: within the bound
    assert len(be.cfg.static_routes) == 6


def test_the_commit_bound_is_the_deadline_given_to_the_backend(timers):  # noqa: F811
    dev, be = bounded(timers, Limits(commit_bound_s=7.0))
    seen: list[float | None] = []
    plain = FakeBackend.apply

    def apply(intended: DeviceConfig, deadline: float | None = None):  # type: ignore[no-untyped-def]
        seen.append(deadline)
        return plain(be, intended)

    be.apply = apply  # type: ignore[method-assign]
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    t0 = time.monotonic()
    dev.commit(A)
    assert seen[0] is not None and t0 + 6.0 < seen[0] <= time.monotonic() + 7.0


def test_a_commit_stopped_by_its_bound_leaves_running_and_nothing_pending(timers):  # noqa: F811
    """The backend stops at the deadline and restores running (ApplyError.bound_passed): the
    reply says so (operation-failed, app-tag commit-bound, the bound named), running is what it
    was, no confirmed commit is pending, and the router answers the next call."""
    dev, be = bounded(timers, Limits(commit_bound_s=3.0))

    def apply(intended: DeviceConfig, deadline: float | None = None):  # type: ignore[no-untyped-def]
        be.calls.append("apply")
        raise ApplyError("r1: stopped before the running configuration reached the intended one",
                         restored=True, bound_passed=True)

    be.apply = apply  # type: ignore[method-assign]
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    with pytest.raises(RpcError) as ei:
        dev.commit(A, confirmed=True, confirm_timeout="60")
    err = ei.value
    assert (err.tag, err.app_tag) == ("operation-failed", "commit-bound")
    assert "bound of 3 s" in err.message and "running was restored" in err.message
    assert timers.live() == [] and dev._pending is None  # noqa: SLF001 - nothing pending
    assert as_config(dev, "running") == V1
    assert len(as_config(dev, "candidate").static_routes) == 2  # the candidate keeps its edits


def test_a_refusal_names_at_most_twenty_of_its_lines(timers):  # noqa: F811
    dev, be = bounded(timers, Limits())

    def apply(intended: DeviceConfig, deadline: float | None = None):  # type: ignore[no-untyped-def]
        raise ApplyError("r1: refused", restored=True, lines=[f"+ line {i}" for i in range(500)])

    be.apply = apply  # type: ignore[method-assign]
    dev.edit_config(A, "candidate", config(routes_xml("198.51.100.0/24")))
    with pytest.raises(RpcError) as ei:
        dev.commit(A)
    assert "+ line 19; ..." in ei.value.message and "+ line 20" not in ei.value.message


def test_the_server_announces_its_commit_bound_and_a2_waits_past_it_for_a_commit():
    """issue 23 (outside check): a client whose rpc_timeout_s was below the server's commit bound
    was told ``timeout`` while its commit landed later. The bound is in the hello; A2 waits for a
    commit's reply past it, and only for a commit; a server without the capability: None."""
    from types import SimpleNamespace

    from ani.adapters.a2 import COMMIT_REPLY_SLACK_S, A2Adapter
    from ani.netconf.hello import ServerHello
    from ani.netconf.rpc import COMMIT_BOUND_CAPABILITY, server_capabilities

    caps = server_capabilities({}, 89.2)
    assert f"{COMMIT_BOUND_CAPABILITY}?seconds=90" in caps
    assert not any(c.startswith(COMMIT_BOUND_CAPABILITY) for c in server_capabilities({}))
    hello = ServerHello.parse(caps)
    assert hello.commit_bound_s == 90.0
    assert ServerHello.parse([f"{COMMIT_BOUND_CAPABILITY}?seconds=x"]).commit_bound_s is None
    s = SimpleNamespace(hello=hello)
    assert A2Adapter._commit_wait_s(s, "commit") == 90.0 + COMMIT_REPLY_SLACK_S
    assert A2Adapter._commit_wait_s(s, "get_config") is None
    assert A2Adapter._commit_wait_s(SimpleNamespace(hello=ServerHello.parse(server_capabilities({}))), "commit") is None
