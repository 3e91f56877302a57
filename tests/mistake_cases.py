"""Shared cases of the mistake-kind unit tests: the generated default brownfield, a real
variant's task, its correct changes and a :class:`ani.agents.mistakes.MistakeContext`.

    s, configs = brownfield(7)                          # Scenario, {router: DeviceConfig}
    case = Case.of(7, "onboard-site", 1, level="a1")    # .scenario .configs .variant .ctx
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "scenarios" / "default.yaml"


@lru_cache(maxsize=4)
def _scenario(seed: int) -> Any:
    from ani.scenario.generate import generate_scenario

    return generate_scenario(DEFAULT, seed=seed)


def brownfield(seed: int) -> tuple[Any, dict[str, Any]]:
    """The default brownfield of scenario seed ``seed`` and a fresh copy of its configs."""
    from ani.intents.inventory import network_configs

    s = _scenario(seed)
    return s, network_configs(s)


@dataclass
class Case:
    """One variant of a task class on the default brownfield, as the mistake agent sees it."""

    scenario: Any
    configs: dict[str, Any]
    variant: Any
    ctx: Any

    @classmethod
    def of(cls, scenario_seed: int, task_class: str, variant_seed: int, *, level: str = "a1", rng_seed: int = 1) -> Case:
        from ani.agents.mistakes import MistakeContext
        from ani.agents.scripted_tasks import changes_for
        from ani.intents import compile_changes
        from ani.scenario.tasks import get_task_class

        s, configs = brownfield(scenario_seed)
        v = get_task_class(task_class).variant(s, variant_seed)
        task = v.agent_view()
        changes = changes_for(task, configs)
        after = compile_changes(changes, configs).configs
        ctx = MistakeContext(task=task, level=level, changes=changes, before=configs, after=after,
                             rng=random.Random(rng_seed))
        return cls(s, configs, v, ctx)

    def again(self, *, level: str | None = None, rng_seed: int = 1) -> Any:
        """The same context with a fresh rng (and another level)."""
        from ani.agents.mistakes import MistakeContext

        c = self.ctx
        return MistakeContext(task=c.task, level=level or c.level, changes=c.changes, before=c.before, after=c.after,
                              rng=random.Random(rng_seed))

    @property
    def names(self) -> set[str]:
        return {c.name for c in self.scenario.invariants}

    def tenant_checks(self, tenant: str) -> set[str]:
        """Names of the invariants that protect only ``tenant`` (service ``tenant:<t>``)."""
        return {c.name for c in self.scenario.invariants if c.service == f"tenant:{tenant}"}
