"""The five kinds near-miss-device, adjacent-prefix, scope-too-wide, delete-recreate and
speculative-leftover through the agent's draw (ani.agents.scripted_mistakes.MistakeMaker) on
the generated default brownfield: the same variant carries the same mistake at every level,
and a level that cannot express a device-layer kind gets the correct change."""

from __future__ import annotations

import pytest

from ani.agents.mistakes import LEVELS
from ani.agents.scripted import AgentFailed
from ani.agents.scripted_mistakes import MistakeMaker
from tests.mistake_cases import Case

#: the kinds carry_out can carry out at every level today
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
def test_a_refused_intent_kind_at_a1_is_carried_out_by_its_device_form(kind):
    """At a level that takes configurations the kind's ``mistaken_configs`` is what a device
    level can do; ``carry_out`` (base.py, i25-core) compiles the typed changes at every level,
    so the agent's local compile refuses it (AgentFailed, no Made recorded): the gap is
    reported to the lead; this test passes once carry_out uses the device form there."""
    case = Case.of(7, "onboard-site", 1)
    try:
        made, carry = _made(case, "a1", (kind,))
    except AgentFailed:
        pytest.xfail("carry_out compiles an intent-layer kind's refused changes at A1 (the agent's own compile "
                     "refuses them); see the report of i25-kinds")
    assert made["expressed"] and made["footprint"] and carry.by_configs
