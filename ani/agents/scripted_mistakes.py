"""The scripted agent with a known error profile (issue 25): ``agent: {kind: scripted,
mistakes: {rate: 0.5, kinds: [near-miss-object, ...]}}``.

Per variant, the draw depends on the variant only (:func:`variant_rng`: the sha256 of
``"<variant_id>|<rate>|<sorted kinds>"``), so the same variant carries the same mistake at every
level (a paired design, as with faults):

1. ``rng.random() < rate``: whether the agent makes a mistake in this variant;
2. the kind: ``rng.choice`` among the listed kinds (sorted) that are ``applicable`` to the
   variant (judged on the configs read and the correct change, which are the same at every
   level); none applicable: no mistake (the trajectory says so);
3. the kind's own choices use the same ``rng`` (:class:`ani.agents.mistakes.MistakeContext`).

The mistake is carried out through the level's tools by the baseline's own code path for typed
changes (:func:`ani.agents.scripted_levels.solve` with a ``transform``; every task class goes
that way for this agent, ``onboard-site``'s ``site.yaml`` included): an intent-layer kind sends
its mistaken typed changes, a device-layer kind its mistaken intended configurations; a level
that cannot express the kind (``kind.levels``) gets the correct change, ``expressed=False``
(:func:`ani.agents.mistakes.carry_out`). What was made (:class:`ani.agents.mistakes.Made`) is
``AgentRun.mistake`` and one ``agent_mistake`` event of the trajectory.
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Any

from ani.agents.base import AgentTask
from ani.agents.scripted_levels import Carry
from ani.device.model import DeviceConfig
from ani.errors import ConfigError

#: the trajectory event that says which mistake the agent made (or that it drew none)
MISTAKE_EVENT = "agent_mistake"


def check_mistakes(spec: Any) -> tuple[float, tuple[str, ...]]:
    """``(rate, kinds)`` of an ``agent.mistakes`` mapping (``rate`` in [0, 1], default 0.5;
    ``kinds``: registered kind names, default every registered kind), kinds sorted and unique.
    Raises ConfigError naming the field (``agent.mistakes.<key>``) and the known kinds."""
    from ani.agents.mistakes import get_mistake, mistake_kinds

    if not isinstance(spec, dict):
        raise ConfigError(f"agent.mistakes: a mapping {{rate, kinds}} is required, got {type(spec).__name__}")
    unknown = sorted(str(k) for k in spec if k not in ("rate", "kinds"))
    if unknown:
        raise ConfigError(f"agent.mistakes.{unknown[0]}: unknown option; known: kinds, rate")
    rate = spec.get("rate", 0.5)
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or not 0 <= rate <= 1:
        raise ConfigError(f"agent.mistakes.rate: a number from 0 to 1 is required, got {rate!r}")
    kinds = spec.get("kinds")
    if kinds is None:
        names = [k.name for k in mistake_kinds()]
    elif not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) for k in kinds):
        raise ConfigError("agent.mistakes.kinds: a non-empty list of kind names is required; known: "
                          + ", ".join(k.name for k in mistake_kinds()))
    else:
        for k in kinds:
            try:
                get_mistake(k)
            except ConfigError as exc:
                raise ConfigError(f"agent.mistakes.kinds: {exc}") from None
        names = kinds
    return float(rate), tuple(sorted(set(names)))


def variant_rng(variant_id: str, rate: float, kinds: tuple[str, ...]) -> random.Random:
    """The variant's generator: seeded with the sha256 of ``"<variant_id>|<rate>|<kinds>"``
    (kinds sorted), nothing of the level."""
    key = f"{variant_id}|{rate!r}|{','.join(sorted(kinds))}".encode()
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


class MistakeMaker:
    """The ``transform`` of :func:`ani.agents.scripted_levels.solve` for one run: draws and
    carries out the variant's mistake; ``made`` (a dict, or None) and ``note`` say what it did.

    Args:
        task: the run's task (its ``variant_id`` seeds the draw).
        rate / kinds: :func:`check_mistakes`'s.
    """

    def __init__(self, task: AgentTask, rate: float, kinds: tuple[str, ...]) -> None:
        self.task, self.rate, self.kinds = task, rate, kinds
        self.made: dict[str, Any] | None = None
        self.note = "no change was planned: the agent stopped before it could make one"
        self.carry: Carry | None = None

    def __call__(self, level: str, changes: list[dict[str, Any]], before: dict[str, DeviceConfig],
                 after: dict[str, DeviceConfig]) -> Carry:
        from ani.agents.mistakes import MistakeContext, carry_out, get_mistake

        rng = variant_rng(self.task.variant_id, self.rate, self.kinds)
        if rng.random() >= self.rate:
            self.note = "no mistake drawn for this variant"
            return Carry(changes, after)
        ctx = MistakeContext(task=self.task, level=level, changes=changes, before=before, after=after, rng=rng)
        candidates = [k for k in self.kinds if get_mistake(k).applicable(ctx)]
        if not candidates:
            self.note = f"a mistake was drawn, but no kind of {', '.join(self.kinds)} applies to this variant"
            return Carry(changes, after)
        kind = get_mistake(rng.choice(candidates))
        out = _carry_out(carry_out, kind, ctx)
        self.made = out.made.model_dump(mode="json")
        self.note = out.made.note
        self.carry = Carry(out.changes, out.configs, out.by_configs, out.times)
        return self.carry

    def event(self) -> dict[str, Any]:
        """The fields of the trajectory's ``agent_mistake`` event: ``mistake`` (the Made dict,
        or None), ``note``, and ``repeat_error`` when a repetition was refused."""
        out: dict[str, Any] = {"mistake": self.made, "note": self.note}
        if self.carry is not None and self.carry.repeat_error:
            out["repeat_error"] = self.carry.repeat_error
        return out


def _carry_out(carry_out: Any, kind: Any, ctx: Any) -> Any:
    """``carry_out(kind, ctx)``; the agent's own compile refusing an intent-layer kind's
    changes is the agent's failure (AgentFailed), as for the baseline."""
    from ani.agents.scripted import AgentFailed
    from ani.intents import IntentError

    try:
        return carry_out(kind, ctx)
    except IntentError as exc:
        raise AgentFailed(f"the mistaken changes ({kind.name}) do not compile: {exc}") from None
