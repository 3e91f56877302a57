"""The scripted agent's ``mistakes`` option (ani.agents.scripted_mistakes): its checks, the draw
from the variant only (the same mistake at every level), and what the run reports."""

from __future__ import annotations

import pytest

from ani.agents import AgentTask, Budget, create_agent
from ani.agents.mistakes import LEVELS, mistake_kinds
from ani.agents.scripted_mistakes import MISTAKE_EVENT, MistakeMaker, check_mistakes, variant_rng
from ani.errors import ConfigError

MINE = ("double-application", "near-miss-object", "partial-application", "shared-entry-collision")


@pytest.fixture(scope="module")
def brownfield():
    from ani.intents.inventory import network_configs
    from ani.scenario.generate import generate_scenario

    s = generate_scenario("scenarios/default.yaml", seed=7)
    return s, network_configs(s)


def test_defaults_every_registered_kind_sorted():
    rate, kinds = check_mistakes({})
    assert rate == 0.5 and kinds == tuple(sorted(k.name for k in mistake_kinds())) and set(MINE) <= set(kinds)
    assert check_mistakes({"rate": 1, "kinds": ["partial-application", "near-miss-object", "near-miss-object"]}) == (
        1.0, ("near-miss-object", "partial-application"))


@pytest.mark.parametrize("spec,message", [
    ({"rate": 1.5}, r"^agent\.mistakes\.rate: a number from 0 to 1 is required, got 1\.5$"),
    ({"rate": True}, r"^agent\.mistakes\.rate: "),
    ({"rate": float("nan")}, r"^agent\.mistakes\.rate: "),
    ({"kinds": []}, r"^agent\.mistakes\.kinds: a non-empty list of kind names is required; known: .*double-application"),
    ({"kinds": ["near-miss-objet"]}, r"^agent\.mistakes\.kinds: unknown mistake kind 'near-miss-objet'; known: .*near-miss-object"),
    ({"often": 1}, r"^agent\.mistakes\.often: unknown option; known: kinds, rate$"),
    ([1], r"^agent\.mistakes: a mapping \{rate, kinds\} is required, got list$"),
])
def test_bad_mistakes_are_config_errors_naming_the_field(spec, message):
    with pytest.raises(ConfigError, match=message):
        create_agent({"kind": "scripted", "mistakes": spec})


def test_the_draw_depends_on_the_variant_rate_and_kinds_only():
    a = variant_rng("onboard-site-s1", 0.5, MINE).random()
    assert a == variant_rng("onboard-site-s1", 0.5, tuple(reversed(MINE))).random()
    assert a != variant_rng("onboard-site-s2", 0.5, MINE).random()
    assert a != variant_rng("onboard-site-s1", 0.4, MINE).random()


def _maker(brownfield, task_class, seed, level, rate=1.0, kinds=MINE):
    from ani.agents.scripted_tasks import changes_for
    from ani.intents import compile_changes
    from ani.scenario import get_task_class

    s, before = brownfield
    task = get_task_class(task_class).variant(s, seed).agent_view()
    changes = changes_for(task, before)
    maker = MistakeMaker(task, rate, kinds)
    carry = maker(level, changes, before, compile_changes(changes, before).configs)
    return maker, carry


@pytest.mark.parametrize("task_class", ["onboard-site", "change-set", "decommission"])
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_same_variant_carries_the_same_mistake_at_every_level(brownfield, task_class, seed):
    """The kind and what it hits are the level's business only through ``expressed``: at A1
    and A3-T (and every other level) the same kind is drawn; where both express it, the same
    target and footprint."""
    made = {lv: _maker(brownfield, task_class, seed, lv)[0].made for lv in LEVELS}
    assert len({m["kind"] for m in made.values()}) == 1, made
    expressed = [m for m in made.values() if m["expressed"]]
    assert expressed and all((m["target"], m["footprint"]) == (expressed[0]["target"], expressed[0]["footprint"])
                             for m in expressed)
    if made["a1"]["kind"] in ("near-miss-object", "shared-entry-collision"):
        assert made["a1"]["expressed"] and not made["a3t"]["expressed"] and made["a3t"]["footprint"] == {}


def test_a_device_kind_at_a1_carries_configs_and_the_correct_change_at_a3t(brownfield):
    maker, carry = _maker(brownfield, "onboard-site", 1, "a1", kinds=("shared-entry-collision",))
    assert carry.by_configs and carry.times == 1 and maker.made["expressed"]
    maker, carry = _maker(brownfield, "onboard-site", 1, "a3t", kinds=("shared-entry-collision",))
    assert not carry.by_configs and not maker.made["expressed"] and "a3t" in maker.made["note"]


def test_rate_zero_draws_no_mistake_and_none_applicable_says_so(brownfield):
    maker, carry = _maker(brownfield, "onboard-site", 1, "a1", rate=0.0)
    assert maker.made is None and maker.note == "no mistake drawn for this variant" and carry.times == 1
    maker, _carry = _maker(brownfield, "onboard-site", 1, "a1", kinds=("partial-application",))
    assert maker.made is None and "no kind of partial-application applies" in maker.note


def test_the_rate_is_the_share_of_variants_drawn():
    drawn = sum(variant_rng(f"change-set-s{i}", 0.5, MINE).random() < 0.5 for i in range(1, 201))
    assert 80 <= drawn <= 120  # sha256 of 200 variant ids: 200 draws of a fair coin


class _Refusing:
    """An A3-T tool list whose every call fails: the agent stops at its first call."""

    def __init__(self):
        from ani.trajectory import Trajectory

        self.trajectory = Trajectory(level="a3t")

    def tools(self):
        from ani.protocol import ToolSpec

        return [ToolSpec(name=n, description=n) for n in ("get_topology", "get_state", "plan", "apply")]

    def call(self, name, arguments):
        from ani.errors import ErrorCode
        from ani.protocol import ToolResult

        res = ToolResult.failure(ErrorCode.UNKNOWN_TOOL, name)
        self.trajectory.log_call(name, arguments, res)
        return res


def test_a_failed_run_still_reports_the_draw_in_the_trajectory(brownfield):
    s, _before = brownfield
    from ani.scenario import get_task_class

    task = get_task_class("onboard-site").variant(s, 1).agent_view()
    adapter = _Refusing()
    run = create_agent({"kind": "scripted", "mistakes": {"rate": 1.0}}).run(task, adapter, Budget())
    assert run.stop_reason == "error" and run.mistake is None
    events = [e for e in adapter.trajectory.events if e["event"] == MISTAKE_EVENT]
    assert len(events) == 1 and events[0]["mistake"] is None and "stopped before" in events[0]["note"]
    # without the option: no such event, and onboard-site's site.yaml keeps its own script
    adapter = _Refusing()
    assert create_agent({"kind": "scripted"}).run(task, adapter, Budget()).mistake is None
    assert not [e for e in adapter.trajectory.events if e["event"] == MISTAKE_EVENT]


def test_unknown_task_class_is_refused_before_any_call():
    adapter = _Refusing()
    task = AgentTask(task_class="move-site", variant_id="x", request="r")
    run = create_agent({"kind": "scripted", "mistakes": {"rate": 1.0}}).run(task, adapter, Budget())
    assert run.stop_reason == "error" and "move-site" in run.error and adapter.trajectory.calls == []
