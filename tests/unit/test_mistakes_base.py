"""The mistake-kind registry, ``Made``, footprints and ``carry_out`` (ani.agents.mistakes.base),
on the generated default brownfield (scenario seed 7)."""

from __future__ import annotations

import random
from ipaddress import IPv4Network

import pytest
from pydantic import ValidationError

from ani.agents.mistakes import (
    LEVELS,
    Made,
    MistakeContext,
    MistakeKind,
    carry_out,
    config_lines,
    footprint,
    get_mistake,
    mistake_kinds,
    reached,
    register_mistake,
    unregister_mistake,
)
from ani.device.model import PrefixListEntry
from ani.errors import ConfigError


@pytest.fixture(scope="module")
def brownfield():
    from ani.intents.inventory import network_configs
    from ani.scenario.generate import generate_scenario

    s = generate_scenario("scenarios/default.yaml", seed=7)
    return s, network_configs(s)


@pytest.fixture(scope="module")
def onboard(brownfield):
    """(task, correct changes, correct intended configs) of onboard-site variant 1."""
    from ani.agents.scripted_tasks import changes_for
    from ani.intents import compile_changes
    from ani.scenario import get_task_class

    s, configs = brownfield
    task = get_task_class("onboard-site").variant(s, 1).agent_view()
    changes = changes_for(task, configs)
    return task, changes, compile_changes(changes, configs).configs


def _ctx(brownfield, onboard, level="a1"):
    task, changes, after = onboard
    return MistakeContext(task=task, level=level, changes=changes, before=brownfield[1], after=after,
                          rng=random.Random(1))


class _Extra(MistakeKind):
    """A device-layer test kind: one extra prefix-list entry on the first changed router."""

    name = "test-extra-entry"
    layer = "device"
    levels = frozenset({"a0", "a1"})
    summary = "an extra entry"

    def mistaken_configs(self, ctx):
        r = sorted(ctx.after)[0]
        cfg = ctx.after[r].model_copy(deep=True)
        cfg.prefix_lists["PL-TENANTS"].entries.append(
            PrefixListEntry(seq=9999, action="permit", prefix=IPv4Network("203.0.113.0/24")))
        return {**ctx.after, r: cfg}, Made(kind=self.name, expressed=True, note="extra entry", target={"router": r})


class _Twice(MistakeKind):
    """An intent-layer test kind: the first change only."""

    name = "test-first-only"
    layer = "intent"
    summary = "first change only"

    def mistaken_changes(self, ctx):
        return ctx.changes[:1], Made(kind=self.name, expressed=True, note="first only")


@pytest.fixture
def test_kinds():
    register_mistake(_Extra)
    register_mistake(_Twice)
    yield
    unregister_mistake(_Extra.name)
    unregister_mistake(_Twice.name)


def test_registry_sorted_and_lookup(test_kinds):
    names = [k.name for k in mistake_kinds()]
    assert names == sorted(names) and {"test-extra-entry", "test-first-only"} <= set(names)
    assert isinstance(get_mistake("test-extra-entry"), _Extra)


def test_unknown_kind_is_a_config_error_listing_the_known(test_kinds):
    with pytest.raises(ConfigError, match=r"unknown mistake kind 'nope'; known: .*test-extra-entry"):
        get_mistake("nope")


def test_register_refuses_duplicates_bad_layer_and_levels(test_kinds):
    class Dup(_Extra):
        pass

    with pytest.raises(ValueError, match="registered twice"):
        register_mistake(Dup)

    class BadLevel(_Extra):
        name = "test-bad-level"
        levels = frozenset({"a5"})

    with pytest.raises(ValueError, match="unknown levels"):
        register_mistake(BadLevel)

    class BadLayer(_Extra):
        name = "test-bad-layer"
        layer = "wire"  # type: ignore[assignment]

    with pytest.raises(ValueError, match="layer"):
        register_mistake(BadLayer)
    assert "test-bad-level" not in [k.name for k in mistake_kinds()]


def test_every_registered_kind_states_its_data():
    for k in mistake_kinds():
        assert k.layer in ("intent", "device") and k.summary and k.levels <= set(LEVELS)
        if k.layer == "device":
            assert "a3t" not in k.levels


def test_made_is_frozen_and_strict():
    m = Made(kind="k", expressed=False, note="n")
    assert m.footprint == {} and m.changes == [] and m.target == {}
    with pytest.raises(ValidationError):
        Made(kind="k", expressed=True, note="n", extra=1)
    with pytest.raises(ValidationError):
        m.kind = "other"  # type: ignore[misc]


def test_footprint_of_the_correct_change_against_before(brownfield, onboard):
    """The onboard's own lines: its prefix-list entry and gateway on the edge, its set element
    on every router with the tenant's set; nothing removed."""
    _task, changes, after = onboard
    before = brownfield[1]
    fp = footprint(before, before, after)
    prefix, edge = changes[0]["prefix"], changes[0]["edge"]
    assert set(fp) == set(after)
    assert any(ln.startswith("+ ip prefix-list PL-TENANTS seq ") and ln.endswith(f"permit {prefix}") for ln in fp[edge])
    assert f"+ interface to-nsite / ip address {changes[0]['gateway']}/24" in fp[edge]
    assert all(f"+ nft / table inet fw / set tenant_red / element {prefix}" in fp[r] for r in fp)
    assert not any(ln.startswith("- ") for lines in fp.values() for ln in lines)


def test_footprint_equal_configs_is_empty(brownfield, onboard):
    assert footprint(brownfield[1], onboard[2], onboard[2]) == {}


def test_config_lines_and_reached(brownfield, onboard):
    before, after = brownfield[1], onboard[2]
    fp = footprint(before, before, after)
    edge = onboard[1][0]["edge"]
    lines = config_lines(before["e1"])
    assert "route-map RM-POLICY-OUT permit 10 / match ip address prefix-list PL-POL-green-10" in lines
    assert "nft / table inet fw / set tenant_red / element 198.18.119.0/24" in lines
    assert reached(fp, {**before, **after}) is True
    assert reached(fp, before) is False  # the + lines are not there
    assert reached(fp, {r: c for r, c in after.items() if r != edge}) is None  # a router not read
    assert reached({}, after) is None


def test_carry_out_device_kind(brownfield, onboard, test_kinds):
    ctx = _ctx(brownfield, onboard, "a1")
    m = carry_out(get_mistake("test-extra-entry"), ctx)
    r = sorted(ctx.after)[0]
    assert m.changes == ctx.changes and m.made.changes == []
    assert m.made.expressed and m.made.footprint == {r: ["+ ip prefix-list PL-TENANTS seq 9999 permit 203.0.113.0/24"]}


def test_carry_out_unexpressible_level_makes_the_correct_change(brownfield, onboard, test_kinds):
    ctx = _ctx(brownfield, onboard, "a3t")
    m = carry_out(get_mistake("test-extra-entry"), ctx)
    assert not m.made.expressed and m.made.footprint == {} and "a3t" in m.made.note
    assert m.configs == ctx.after and m.changes == ctx.changes


def test_carry_out_intent_kind_compiles_its_changes(brownfield, onboard, test_kinds):
    ctx = _ctx(brownfield, onboard, "a3t")
    m = carry_out(get_mistake("test-first-only"), ctx)
    assert m.made.expressed and m.made.changes == ctx.changes[:1] and m.changes == ctx.changes[:1]
    assert m.made.footprint == {}  # one change: the first only is the whole change


def test_every_registered_kind_is_in_the_docs_table():
    """docs/campaigns.md's kinds table has one row per registered kind, with its layer and levels."""
    from pathlib import Path

    text = Path("docs/campaigns.md").read_text(encoding="utf-8")
    for k in mistake_kinds():
        levels = "all" if k.levels == set(LEVELS) else " ".join(lv for lv in LEVELS if lv in k.levels)
        assert f"| `{k.name}` | {k.layer} | {levels} | " in text, k.name
