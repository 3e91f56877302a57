"""The five kinds near-miss-device, adjacent-prefix, scope-too-wide, delete-recreate and
speculative-leftover through the agent's draw (ani.agents.scripted_mistakes.MistakeMaker) on
the generated default brownfield: the same variant carries the same mistake at every level,
and a level that cannot express a device-layer kind gets the correct change."""

from __future__ import annotations

import pytest

from ani.agents.mistakes import LEVELS, get_mistake, mistake_kinds
from ani.agents.scripted_mistakes import MistakeMaker
from tests.mistake_cases import Case

#: kinds a variant's draw below picks among (the comment under them says which it drew)
CARRIED = ("delete-recreate", "near-miss-device", "speculative-leftover")
#: intent-layer kinds whose typed changes the intents compiler refuses on purpose
REFUSED = ("adjacent-prefix", "scope-too-wide")


def _made(case, level, kinds):
    maker = MistakeMaker(case.ctx.task, 1.0, tuple(sorted(kinds)))
    carry = maker(level, case.ctx.changes, case.ctx.before, case.ctx.after)
    return maker.made, carry


# the draws: delete-recreate, near-miss-device, speculative-leftover, speculative-leftover
@pytest.mark.parametrize(("task", "seed"), [("onboard-site", 1), ("onboard-site", 2), ("onboard-site", 3),
                                             ("change-set", 2)])
def test_the_same_variant_carries_the_same_mistake_at_every_level(task, seed):
    case = Case.of(7, task, seed)
    made = {lv: _made(case, lv, CARRIED)[0] for lv in LEVELS}
    assert len({m["kind"] for m in made.values()}) == 1, made
    expressed = [m for m in made.values() if m["expressed"]]
    assert expressed and all((m["target"], m["footprint"]) == (expressed[0]["target"], expressed[0]["footprint"])
                             for m in expressed)
    if made["a1"]["kind"] in ("delete-recreate", "speculative-leftover"):
        assert not made["a3t"]["expressed"] and made["a3t"]["footprint"] == {}
        assert all(made[lv]["expressed"] for lv in LEVELS if lv != "a3t")
    else:
        assert all(m["expressed"] for m in made.values())


@pytest.mark.parametrize("kind", REFUSED)
def test_a_refused_intent_kind_is_carried_out_by_its_device_form_at_a1_and_sent_typed_at_a3t(kind):
    """The compiler refuses the kind's typed changes (what typed validation is for): at a level
    that takes configurations the kind's ``mistaken_configs`` is sent (``by_configs``); at A3-T
    the typed changes go to the level as they are, for its plan / apply to refuse (before, the
    agent's own compile refused them at every level: AgentFailed and no Made recorded)."""
    case = Case.of(7, "onboard-site", 1)
    made, carry = _made(case, "a1", (kind,))
    assert made["expressed"] and made["footprint"] and carry.by_configs
    typed, sent = _made(case, "a3t", (kind,))
    assert typed["expressed"] and not sent.by_configs and sent.changes == typed["changes"]
    assert typed["footprint"] == made["footprint"]  # the same mistake, what it would have done


@pytest.mark.parametrize(("task", "seed"), [("onboard-site", 1), ("onboard-site", 2), ("change-set", 1),
                                             ("change-set", 3)])
def test_with_every_kind_the_same_variant_carries_the_same_mistake_at_every_level(task, seed):
    """Every registered kind in the draw: one kind for the variant at all six levels, expressed
    exactly where the kind says it can be, with one target and one footprint wherever it is."""
    case = Case.of(7, task, seed)
    names = tuple(sorted(k.name for k in mistake_kinds()))
    made = {lv: _made(case, lv, names)[0] for lv in LEVELS}
    kinds = {m["kind"] for m in made.values() if m is not None}
    assert len(kinds) == 1 and all(m is not None for m in made.values()), made
    kind = get_mistake(kinds.pop())
    assert {lv for lv, m in made.items() if m["expressed"]} == {lv for lv in LEVELS if kind.expressible(lv)}
    shown = {(repr(m["target"]), repr(m["footprint"])) for m in made.values() if m["expressed"]}
    assert len(shown) == 1
