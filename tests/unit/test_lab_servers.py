"""Which servers a campaign run's lab starts (ani.campaign.execute.lab_servers / lab_options):
the level's adapter class and the plan's fault kinds declare what they need."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ani.adapters.base import BaseAdapter
from ani.campaign.execute import lab_options, lab_servers
from ani.campaign.runner import RunnerDeps, real_make_lab
from ani.faults.base import FaultSpec
from ani.lab.protocol import LocalFrr, NetconfCapable, NetconfLocks, NetconfServer, SshCapable, servers_for
from ani.testing import FakeLab

NONE = {"netconf": False, "ssh": False}
NETCONF = {"netconf": True, "ssh": False}
SSH = {"netconf": False, "ssh": True}
EVERY = {"netconf": True, "ssh": True}


def ctx(level: str, options: dict[str, Any] | None = None, faults: list[dict[str, Any]] | None = None,
        prefix: str | None = None, **deps: Any) -> Any:
    specs = [FaultSpec.from_dict({"at_step": 1, "duration_s": 5, "target": {"router": "r1"}, **f}) for f in faults or []]
    plan = SimpleNamespace(adapter_options=options or {}, lab_prefix=prefix, fault_schedule=lambda: specs)
    return SimpleNamespace(level=level, plan=plan, deps=RunnerDeps(**deps))


@pytest.mark.parametrize(("level", "options", "want"), [
    ("a0", {}, NONE), ("a1", {}, NONE), ("a1", {"transport": "auto"}, NONE), ("a1", {"transport": "local"}, NONE),
    ("a1", {"transport": "ssh"}, SSH), ("a2", {}, NETCONF), ("a3r", {}, NONE), ("a3t", {}, NETCONF), ("a4", {}, NETCONF),
])
def test_the_level_s_adapter_decides(level: str, options: dict[str, Any], want: dict[str, bool]) -> None:
    assert lab_servers(ctx(level, options)) == want


@pytest.mark.parametrize(("faults", "want"), [
    ([{"kind": "held_lock"}], NETCONF),
    ([{"kind": "frozen_router", "params": {"management": True}}], NETCONF),
    ([{"kind": "frozen_router"}], NETCONF),  # management defaults to true
    ([{"kind": "frozen_router", "params": {"management": False}}], NONE),
    ([{"kind": "daemon_restart", "params": {"daemon": "bgpd"}}, {"kind": "link_down"}], NONE),
])
def test_the_plan_s_fault_kinds_add_theirs(faults: list[dict[str, Any]], want: dict[str, bool]) -> None:
    assert lab_servers(ctx("a0", faults=faults)) == want
    assert lab_servers(ctx("a1", {"transport": "ssh"}, faults=faults)) == {**want, "ssh": True}


def test_every_server_when_it_cannot_be_told() -> None:
    assert lab_servers(ctx("a0", create_adapter=lambda *a, **k: None)) == EVERY  # another adapter factory
    assert lab_servers(ctx("a0", faults=[{"kind": "no_such_kind"}])) == EVERY
    assert lab_servers(ctx("no-such-level")) == EVERY
    assert BaseAdapter.lab_needs({}) is None  # a plug-in adapter that does not declare: every server


def test_servers_for_maps_capabilities() -> None:
    assert servers_for([]) == NONE
    assert servers_for([LocalFrr]) == NONE
    for cap in (NetconfCapable, NetconfLocks, NetconfServer):
        assert servers_for([cap]) == NETCONF
    assert servers_for([SshCapable, NetconfServer]) == EVERY


def test_options_go_only_to_a_factory_that_names_them() -> None:
    assert lab_options(ctx("a2", prefix="camp")) == {"prefix": "camp", "netconf": True, "ssh": False}
    assert real_make_lab is RunnerDeps().make_lab
    assert lab_options(ctx("a2", prefix="camp", make_lab=lambda topology: None)) == {}
    assert lab_options(ctx("a2", prefix="camp", make_lab=lambda topology, **kw: None)) == {}
    assert lab_options(ctx("a2", make_lab=FakeLab)) == {"netconf": True}  # FakeLab names netconf only
    assert lab_options(ctx("a0", make_lab=FakeLab)) == {"netconf": False}


def test_the_factory_s_lab_starts_those_servers() -> None:
    opts = lab_options(ctx("a1", {"transport": "ssh"}, prefix="camp"))
    lab = real_make_lab(_topology(), **opts)  # not started: its fields only
    assert (lab.netconf, lab.ssh, lab.prefix) == (False, True, "camp")


def _topology() -> Any:
    from ani.lab.topology import parse_topology
    from ani.testing.fake_lab import DEFAULT_TOPOLOGY

    return parse_topology(DEFAULT_TOPOLOGY, source="test")
