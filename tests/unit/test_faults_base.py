"""ani.faults base (issue 14, §1): FaultSpec round trip and validation, the kind registry, the
error classes, and the schedule: deterministic from seed + rate, never from the level, rate 0
empty, another seed another schedule, a Poisson process in agent steps."""

from __future__ import annotations

import random
import statistics

import pytest

from ani.errors import AniError, ConfigError, FaultError, FaultUnavailable
from ani.faults import base
from ani.faults.base import FaultKind, FaultSpec, get_fault_kind, register, target_label
from ani.faults.schedule import draw_schedule, fault_points


class _Links(FaultKind):
    name = "t_links"

    def draw(self, rng, scenario, variant):
        links = scenario["links"]
        return {"link": list(links[rng.randrange(len(links))])}, {}


class _Routers(FaultKind):
    name = "t_routers"

    def draw(self, rng, scenario, variant):
        routers = scenario["routers"]
        if not routers:
            return None
        return {"router": rng.choice(routers)}, {"loss_pct": rng.randint(10, 50)}


@pytest.fixture
def kinds():
    with base.FAULT_KINDS.isolated():
        register(_Links)
        register(_Routers)
        yield ["t_links", "t_routers"]


SCEN = {"links": [("e1", "c1"), ("e2", "c1"), ("c1", "c2")], "routers": ["e1", "e2", "c1", "c2"]}


def test_errors_are_in_the_tree():
    assert issubclass(FaultUnavailable, FaultError) and issubclass(FaultError, AniError)


def test_spec_round_trip_and_bad_fields():
    s = FaultSpec(kind="link_down", at_step=3, duration_s=4.5, target={"link": ["e1", "c1"]}, params={"ends": "both"})
    assert FaultSpec.from_dict(s.to_dict()) == s
    assert FaultSpec.from_dict({"kind": "x", "at_step": "2"}).at_step == 2
    with pytest.raises(ConfigError, match="missing field 'at_step'"):
        FaultSpec.from_dict({"kind": "x"})
    with pytest.raises(ConfigError, match="at_step must be >= 0"):
        FaultSpec.from_dict({"kind": "x", "at_step": -1})
    with pytest.raises(ConfigError, match="duration_s must be > 0"):
        FaultSpec.from_dict({"kind": "x", "at_step": 1, "duration_s": 0})
    assert target_label({"link": ["e1", "c1"]}) == "e1-c1" and target_label({"router": "e1"}) == "e1"


def test_unknown_kind_lists_the_known(kinds):
    with pytest.raises(ConfigError) as e:
        get_fault_kind("link_dwn")
    assert "unknown fault kind 'link_dwn'" in str(e.value) and "t_links" in str(e.value)
    assert isinstance(get_fault_kind("t_links"), _Links)


def test_schedule_is_deterministic_for_seed_and_rate(kinds):
    a = draw_schedule(seed=7, rate=0.3, scenario=SCEN, variant=None, kinds=kinds)
    b = draw_schedule(seed=7, rate=0.3, scenario=SCEN, variant=None, kinds=list(reversed(kinds)))
    assert a == b and a  # order of the kinds list does not matter
    assert [f.at_step for f in a] == sorted(f.at_step for f in a)
    assert all(0 <= f.at_step < 20 and 3.0 <= f.duration_s <= 8.0 for f in a)


def test_schedule_does_not_take_the_level(kinds):
    import inspect

    params = inspect.signature(draw_schedule).parameters
    assert not {"level", "cell", "adapter"} & set(params)


def test_rate_zero_is_empty(kinds):
    assert draw_schedule(seed=7, rate=0, scenario=SCEN, variant=None, kinds=kinds) == []


def test_another_seed_another_schedule(kinds):
    schedules = {tuple((f.at_step, f.kind, str(f.target)) for f in
                       draw_schedule(seed=s, rate=0.3, scenario=SCEN, variant=None, kinds=kinds))
                 for s in range(10)}
    assert len(schedules) == 10


def test_kind_without_target_is_skipped(kinds):
    sched = draw_schedule(seed=3, rate=0.5, scenario={**SCEN, "routers": []}, variant=None, kinds=kinds)
    assert sched and {f.kind for f in sched} == {"t_links"}


def test_points_are_a_poisson_process_in_steps():
    # mean number of points below the horizon is rate * horizon (Poisson counts)
    counts = [len(fault_points(random.Random(i), 0.3, 20)) for i in range(2000)]
    assert abs(statistics.mean(counts) - 6.0) < 0.25
    assert abs(statistics.variance(counts) - 6.0) < 0.8


def test_bad_rate_and_range(kinds):
    with pytest.raises(ConfigError, match="fault_rate"):
        draw_schedule(seed=1, rate=-0.1, scenario=SCEN, variant=None, kinds=kinds)
    with pytest.raises(ConfigError, match="duration_s"):
        draw_schedule(seed=1, rate=0.1, scenario=SCEN, variant=None, kinds=kinds, duration_s=(5, 2))
    with pytest.raises(ConfigError, match="unknown fault kind"):
        draw_schedule(seed=1, rate=0.1, scenario=SCEN, variant=None, kinds=["nope"])
