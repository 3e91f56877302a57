"""Mistake kinds on real FRR at A1: the mistaken configurations pushed the way the agent pushes
them (``ani.agents.scripted_push`` through an A1 adapter) break exactly the baseline invariants
the kind expects (``expected_breaks``), as the observer sees them, and are on the routers
(``reached``).

The riskiest claim is ``adjacent-prefix``'s: a more specific half of another tenant's site,
announced from the new site's edge, draws that site's traffic away (its host's reaches fail)
while its own route and every isolation still hold. The other kinds run on the same lab (the
default brownfield, scenario seed 7, the onboard-site variant 1's topology); after each, the
configurations read before are pushed back. Grading waits what the campaign runner waits after
the agent's last change (``settle_seconds``: the route-map delay timer plus propagation), else
a route about to be withdrawn still passes."""

from __future__ import annotations

import random
import time

import pytest

pytestmark = pytest.mark.integration

SCENARIO_SEED, TASK, VARIANT = 7, "onboard-site", 1
#: the kinds whose damage is to baseline invariants (near-miss-device's and scope-too-wide's
#: onboard breaks none: measured once by hand with this test, 0 expected and 0 failed each;
#: left out to keep the module within a minute)
KINDS = ["adjacent-prefix", "delete-recreate", "speculative-leftover"]


@pytest.fixture(scope="module")
def world():
    from tests.conftest import _owned_labs
    from tests.mistake_cases import brownfield

    from ani.scenario.tasks import get_task_class

    s, _configs = brownfield(SCENARIO_SEED)
    v = get_task_class(TASK).variant(s, VARIANT)
    with _owned_labs() as factory:
        yield s, v, factory(v.lab_topology(s), netconf=False)


def _mistaken(kind, ctx):
    """The kind's mistaken intended configs as a device level carries them out (an intent-layer
    kind's device form where it has one, else its typed changes compiled)."""
    from ani.agents.mistakes import MistakeKind
    from ani.intents import compile_changes

    if type(kind).mistaken_configs is not MistakeKind.mistaken_configs:
        return kind.mistaken_configs(ctx)
    changes, made = kind.mistaken_changes(ctx)
    return compile_changes(changes, ctx.before).configs, made


@pytest.mark.parametrize("name", KINDS)
def test_the_kind_breaks_exactly_what_it_expects_at_a1(world, name):
    from ani.agents.base import Budget, StepCounter
    from ani.agents.mistakes import MistakeContext, footprint, get_mistake, reached
    from ani.agents.scripted_push import push_configs, read_configs
    from ani.agents.scripted_tasks import changes_for
    from ani.device.apply import read
    from ani.intents import compile_changes
    from ani.observer import Observer, summarize
    from ani.campaign.runner import settle_seconds
    from ani.registry import create_adapter

    s, v, lab = world
    graded = [c for c in s.invariants if c.name not in set(v.superseded)]
    adapter = create_adapter("a1", lab)
    adapter.open()
    try:
        steps = StepCounter(adapter, Budget(max_steps=400, wall_clock_s=240))
        tools = {t.name for t in adapter.tools()}
        before = read_configs(steps, tools, sorted(lab.topology.routers))
        task = v.agent_view()
        changes = changes_for(task, before)
        after = compile_changes(changes, before).configs
        ctx = MistakeContext(task=task, level="a1", changes=changes, before=before, after=after, rng=random.Random(1))
        kind = get_mistake(name)
        assert kind.applicable(ctx)
        configs, made = _mistaken(kind, ctx)
        fp = footprint(before, after, configs)
        push_configs(steps, tools, {r: before[r] for r in configs}, configs)
        try:
            assert reached(fp, {r: read(lab, r) for r in fp}) is True  # the mistake is on the routers
            time.sleep(settle_seconds(s))  # as the runner waits after the agent's last change
            expected = kind.expected_breaks(made, graded, before)
            results = Observer(lab).evaluate(graded, bound_s=8.0)
            failed = [r.name for r in results if not r.passed]
            print(f"{name}: {made.note}: expected {expected}, failed {failed}")
            assert failed == expected, summarize(results)
        finally:
            push_configs(steps, tools, {r: read(lab, r) for r in configs}, {r: before[r] for r in configs})
            time.sleep(settle_seconds(s))
    finally:
        adapter.close()
