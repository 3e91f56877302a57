"""A campaign cell's ``options:`` reach its adapter (e.g. A1's ``apply_config_shape:
netconfarena``), are recorded in the run record, are checked against the level's options model
before any lab starts, and count as a setting the cells must agree on unless the level is the
factor. Fakes only (tests/unit/test_campaign_runner.py's world)."""

from __future__ import annotations

import pytest
from test_campaign_runner import FakeAdapter, Setup, World

from ani.campaign.runner import RunnerDeps, _real_create_adapter, run_one, validate
from ani.campaign.spec import parse_spec
from ani.errors import ConfigError


def _spec(tmp_path, cells, factor="level"):
    (tmp_path / "scen.yaml").write_text("fake: true\n")
    return parse_spec({"name": "t", "scenario": "scen.yaml", "task": "onboard-site", "variants": 1, "seed": 1,
                       "factor": factor, "cells": cells}, "test", tmp_path)


ARENA = {"apply_config_shape": "netconfarena"}


def test_the_cells_options_reach_its_adapter_and_the_record(tmp_path):
    spec = _spec(tmp_path, [{"name": "a1", "level": "a1"}, {"name": "a1-arena", "level": "a1", "options": ARENA}])
    s = Setup(World())
    seen: list[dict] = []
    plain = s.deps()

    def create_adapter(level, lab, blocklist=False, trajectory=None, **kw):
        seen.append(kw)
        a = FakeAdapter(level, lab, blocklist, trajectory)
        s.adapters.append(a)
        return a

    deps = RunnerDeps(make_lab=plain.make_lab, load_scenario=plain.load_scenario, get_task_class=plain.get_task_class,
                      make_observer=plain.make_observer, create_adapter=create_adapter, create_agent=plain.create_agent)
    rec = run_one(spec, "a1-arena", 1, tmp_path / "o1", deps=deps)
    assert seen == [{"options": ARENA}] and rec.adapter_options == ARENA
    rec = run_one(spec, "a1", 1, tmp_path / "o2", deps=deps)
    assert seen[-1] == {} and rec.adapter_options == {}  # no options: the call the fakes always got


def test_bad_options_are_refused_naming_the_cell_before_any_lab(tmp_path):
    spec = _spec(tmp_path, [{"name": "a1", "level": "a1"},
                            {"name": "a1-x", "level": "a1", "options": {"apply_config_shape": "arena"}}])
    s = Setup(World())
    plain = s.deps()
    deps = RunnerDeps(make_lab=plain.make_lab, load_scenario=plain.load_scenario, get_task_class=plain.get_task_class,
                      make_observer=plain.make_observer, create_adapter=_real_create_adapter,
                      create_agent=plain.create_agent)
    with pytest.raises(ConfigError) as exc:
        validate(spec, deps)
    assert str(exc.value).startswith("cells[1](a1-x).options: a1 options: apply_config_shape: ")
    assert s.world.labs == []


def test_options_may_differ_only_when_the_level_is_the_factor(tmp_path):
    cells = [{"name": "a1", "level": "a1"}, {"name": "a1-arena", "level": "a1", "options": ARENA}]
    assert [c.options for c in _spec(tmp_path, cells).cells] == [{}, ARENA]
    bl = [{"name": "a1", "level": "a1"}, {"name": "a1+bl", "level": "a1", "blocklist": True, "options": ARENA}]
    with pytest.raises(ConfigError, match=r"cells\[1\]\(a1\+bl\)\.options: differs from cell 'a1'"):
        _spec(tmp_path, bl, factor="blocklist")
    same = [{"name": "x", "level": "a1", "options": ARENA}, {"name": "y", "level": "a1", "options": dict(ARENA)}]
    with pytest.raises(ConfigError, match="two cells have the same"):
        _spec(tmp_path, same)
